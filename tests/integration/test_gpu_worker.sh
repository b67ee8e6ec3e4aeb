#!/bin/bash
# A real GPU worker (qc-worker --gpu 0, no CPU slot) gives the answers a
# CPU worker gives, through a real broker on loopback: the same slides
# pass and fail, every numeric column within 1e-4 relative, every other
# column equal, and the same image files. Its tasks run on the GPU lane
# (the broker's status shows a GPU, the worker log the CUDA backend).
# Needs a usable CUDA device: without one it says SKIPPED and passes
# (test_gpu_wait checks the refusal then; test_cuda_equiv's CPU part
# checks the shared math).
. "$(dirname "$0")/lib.sh"

"$BIN/qc-worker" --connect tcp://127.0.0.1:1 --gpu 0 --timeout 2 >"$T/probe.log" 2>&1
rc=$?
if [ $rc -eq 2 ]; then
    echo "SKIPPED: no usable GPU here ($(head -1 "$T/probe.log"))"
    exit 0
fi
[ $rc -eq 3 ] || fail "qc-worker --gpu 0 probe: exit $rc, expected 3 (no broker): $(cat "$T/probe.log")"

bad=$(make_cohort "$T/cohort" 16)
port=$(free_port)
start_broker $port --heartbeat-ms 200

# run_on NAME [worker args...]: the cohort through one worker alone
run_on() {
    local name=$1; shift
    start_worker $port "$name" --heartbeat-ms 200 --log-level debug "$@"
    local pid=$WORKER_PID
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out-$name" \
        --list "$T/cohort/list" --timeout 300 >"$T/submit-$name.log" 2>&1
    local rc=$?
    [ $rc -le 1 ] || fail "$name: qc-submit exit $rc: $(tail -3 "$T/submit-$name.log")"
    kill -TERM $pid
    for _ in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
    check_exactly_once "$T/out-$name" "$T/cohort/list"
}

run_on cpu --slots 2
run_on gpu --slots 0 --gpu 0
grep -q "cuda" "$T/worker-gpu.log" || fail "the GPU worker's log never names the CUDA backend"
[ "$(wc -l <"$T/out-gpu/error.log")" -eq "$bad" ] \
    || fail "GPU worker: $(wc -l <"$T/out-gpu/error.log") failures, expected $bad"
diff <(errors "$T/out-cpu" | cut -f1) <(errors "$T/out-gpu" | cut -f1) >/dev/null \
    || fail "the failed slides differ between CPU and GPU"

# Column by column: numbers within 1e-4 relative, text equal.
hdr=$(grep '^#dataset:' "$T/out-cpu/results.tsv")
[ "$hdr" = "$(grep '^#dataset:' "$T/out-gpu/results.tsv")" ] || fail "column headers differ"
join -t $'\t' <(rows "$T/out-cpu") <(rows "$T/out-gpu") >"$T/joined" \
    || fail "cannot join the results"
ncol=$(echo "$hdr" | awk -F'\t' '{print NF}')
[ "$(wc -l <"$T/joined")" -eq "$(rows "$T/out-cpu" | wc -l)" ] || fail "not every slide in both"
awk -F'\t' -v n="$ncol" '
    function num(s) { return s ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ }
    { for (i = 2; i <= n; i++) {
        a = $i; b = $(i + n - 1)
        if (num(a) && num(b)) {
            d = a - b; d = d < 0 ? -d : d
            m = (a < 0 ? -a : a); mb = (b < 0 ? -b : b); if (mb > m) m = mb; if (m < 1e-3) m = 1e-3
            if (d > 1e-4 * m) { print $1 ": column " i ": cpu " a " gpu " b; bad++ }
        } else if (a != b) { print $1 ": column " i ": cpu \"" a "\" gpu \"" b "\""; bad++ }
      } }
    END { exit bad > 0 }' "$T/joined" >"$T/diffs" \
    || fail "GPU results differ from the CPU's: $(head -5 "$T/diffs")"
diff <(cd "$T/out-cpu" && find . -name '*.png' | sort) <(cd "$T/out-gpu" && find . -name '*.png' | sort) \
    >/dev/null || fail "the GPU worker wrote other image files than the CPU worker"
pass "GPU worker: $(rows "$T/out-gpu" | wc -l) slides agree with the CPU worker's, $bad fail alike"
