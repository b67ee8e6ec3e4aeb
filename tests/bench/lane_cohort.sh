#!/bin/bash
# One GPU lane's cohort throughput, with and without read-ahead (issue 4:
# a GPU worker reads the next slide on the CPU while its GPU computes).
# Runs a real qc-broker and one qc-worker with no CPU slot and one GPU
# lane on loopback: --gpu 0 when this machine has a usable GPU, else
# --simulate-gpus 1 (the lane's steps then run on the CPU backend, so the
# figure shows the overlap of reading with computing, not a GPU's speed).
# Called by bench_pipeline; prints one line per mode, best of REPEAT runs.
#   tests/bench/lane_cohort.sh LIST [REPEAT]
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/bench/lib.sh
list=$1 repeat=${2:-3}
[ -s "$list" ] || { echo "lane_cohort: no slide list $list" >&2; exit 2; }
n=$(wc -l <"$list")
T=$(mktemp -d /tmp/qc-lane.XXXXXX) || exit 2
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

if bin/qc-worker --connect tcp://127.0.0.1:1 --gpu 0 --timeout 1 >/dev/null 2>&1 \
    || [ $? -ne 2 ]; then
    lane="--gpu 0"; what="GPU 0"
else
    lane="--simulate-gpus 1"; what="simulated GPU (steps on the CPU: no GPU here)"
fi
port=$(bench_free_port lane_cohort) || exit 2
bench_broker "$port" "$T/broker.log"

# run_mode NAME [worker args]: prints the best time of REPEAT cohort runs
run_mode() {
    local name=$1; shift
    # shellcheck disable=SC2086
    bin/qc-worker --connect tcp://127.0.0.1:$port --name "$name" --slots 0 $lane "$@" \
        >"$T/worker-$name.log" 2>&1 &
    local w=$!
    pids+=($w)
    # the first slide trains the classifiers (once per worker): not timed
    head -1 "$list" >"$T/warm.list"
    bin/qc-submit -q --broker tcp://127.0.0.1:$port -o "$T/warm" --list "$T/warm.list" \
        --timeout 600 >/dev/null 2>&1
    local best=
    for _ in $(seq 1 "$repeat"); do
        rm -rf "$T/out"
        local t0 t1
        t0=$(date +%s.%N)
        bin/qc-submit -q --broker tcp://127.0.0.1:$port -o "$T/out" --list "$list" \
            --timeout 600 >/dev/null 2>&1
        local rc=$?
        t1=$(date +%s.%N)
        [ $rc -le 1 ] || { echo "lane_cohort: qc-submit exit $rc" >&2; exit 1; }
        local t
        t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
        if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then
            best=$t
        fi
    done
    kill -TERM $w; wait $w 2>/dev/null
    awk -v name="$name" -v t="$best" -v n="$n" \
        'BEGIN { printf "  %-14s %6.2f s, %5.2f slides/s\n", name, t, n / t }'
}
echo "one GPU lane ($what), $n slides, best of $repeat:"
run_mode read-ahead
run_mode no-read-ahead --no-read-ahead
