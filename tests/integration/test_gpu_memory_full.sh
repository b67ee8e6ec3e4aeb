#!/bin/bash
# A GPU too small for a slide at its working size (issue 18): a resident
# GPU lane holds ~30 bytes a pixel of its working size on the device
# (~63 before 2026-11-30: tests/unit/test_pipeline_memory.c), so
# a 10x run of a large slide can pass a small GPU's memory. Such a slide
# is not lost: the lane runs it again with its images on the host
# (the CUDA copying lane, then the CPU's ops where one op's images do not
# fit either; on a simulated GPU, the C ops), with a warning each time
# that the client sees, and gives the CPU's results; its images then
# count at the worker's memory gate (worker/mem_gate.h). Checked on
# a --simulate-gpus lane whose --gpu-mem is far under what the slides
# need at 10x, against a CPU slot and against a lane with room enough.
# QC_TEST_GPU=I runs the GPU lanes on GPU I instead (the CUDA resident
# lane falling back on the copying one and the CPU;
# tests/bench/gpu_lease.sh does).
. "$(dirname "$0")/lib.sh"

if [ -n "${QC_TEST_GPU:-}" ]; then
    gpu_lane=(--gpu "$QC_TEST_GPU")
else
    gpu_lane=(--simulate-gpus 1)
fi

[ -x "$BIN/qc-mkslide" ] || fail "bin/qc-mkslide not built"
mkdir -p "$T/slides"
: >"$T/list"
for s in 1 2; do
    # 8000 x 6000 at 40x: 2000 x 1500 at 10x, over 64 MB on the device
    # (6000 x 4500 fitted in 64 MB once a slide's images were halved)
    "$BIN/qc-mkslide" -o "$T/slides/full-$s.svs" --width 8000 --height 6000 \
        --seed $s >/dev/null 2>&1 || fail "qc-mkslide seed $s"
    echo "$T/slides/full-$s.svs" >>"$T/list"
done
# a slide that fails for another reason (no magnification, so no 10x):
# failed once, on every lane alike, never run again
nomag=$SHARED/slides/real/TCGA-CR-7395-01A-01-TS1.svs
[ -f "$nomag" ] || fail "$nomag not found"
echo "$nomag" >>"$T/list"
# the built-in config at 10x, its PNGs at 1.25x
"$BIN/qc-submit" --write-default-config - \
    | sed -E 's/^image_work_size( *[=:]).*/image_work_size\1 10x/; s/^#png_work_size/png_work_size/' \
    >"$T/config-10x.ini" || fail "--write-default-config"
grep -q '^image_work_size = 10x' "$T/config-10x.ini" || fail "config at 10x not made"
grep -q '^png_work_size = 1.25x' "$T/config-10x.ini" || fail "png_work_size not set"

port=$(free_port)
start_broker $port --heartbeat-ms 200

# run_lane NAME [worker args...]: the cohort at 10x through one worker
run_lane() {
    local name=$1; shift
    start_worker $port "$name" --heartbeat-ms 200 "$@"
    local pid=$WORKER_PID
    # a worker that cannot start (no such GPU) fails the test at once,
    # not after qc-submit's wait
    for _ in $(seq 1 200); do
        grep -q 'registered with broker' "$T/worker-$name.log" 2>/dev/null && break
        kill -0 $pid 2>/dev/null \
            || fail "$name: the worker exited: $(tail -3 "$T/worker-$name.log")"
        sleep 0.1
    done
    grep -q 'registered with broker' "$T/worker-$name.log" \
        || fail "$name: the worker did not register in 20 s: $(tail -3 "$T/worker-$name.log")"
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/config-10x.ini" \
        -o "$T/out-$name" --list "$T/list" --timeout 300 >"$T/submit-$name.log" 2>&1
    local rc=$?
    kill -TERM $pid
    for _ in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
    [ $rc -eq 1 ] || fail "$name: qc-submit exit $rc, expected 1 (one slide fails): $(tail -3 "$T/submit-$name.log"; cat "$T/out-$name/error.log" 2>/dev/null)"
    [ "$(grep -c . "$T/out-$name/error.log")" -eq 1 ] \
        && grep -q "TCGA-CR-7395-01A-01-TS1.svs.*magnification" "$T/out-$name/error.log" \
        || fail "$name: error.log should hold the slide without a magnification alone: $(cat "$T/out-$name/error.log")"
    check_exactly_once "$T/out-$name" "$T/list"
}

again='running the slide again with its images on the host'

run_lane small --slots 0 "${gpu_lane[@]}" --gpu-mem 64
# each generated slide runs again once (a simulated lane: on the CPU);
# on a real GPU twice where one op's images pass 64 MB too (the copying
# lane, then the CPU)
n=$(grep -c "$again" "$T/worker-small.log")
most=2
[ -n "${QC_TEST_GPU:-}" ] && most=4
[ "$n" -ge 2 ] && [ "$n" -le $most ] || fail "64 MB lane: expected the 2 generated slides run again (2 to $most lines), the log says $n: $(grep -i 'memory\|limit' "$T/worker-small.log" | head -5)"
grep -q "limit" "$T/worker-small.log" || fail "64 MB lane: no line says what passed the limit"
# each slide's images on the host count at the worker's memory gate, once
# a slide (the first hop to the host: the copying lane, or the CPU)
gated=$(grep -c "count at the worker's memory gate" "$T/worker-small.log")
[ "$gated" -eq 2 ] || fail "64 MB lane: the 2 slides run on the host should each be counted at the memory gate once; the log says $gated"
[ "$(grep -c "$again" "$T/out-small/qc.log")" -eq "$n" ] \
    || fail "the client's qc.log does not have the worker's $n warnings"
pass "64 MB GPU (${gpu_lane[*]}): both 10x slides ran again on the host, a warning each, the client told"

run_lane roomy --slots 0 "${gpu_lane[@]}" --gpu-mem 4096
grep -q "$again" "$T/worker-roomy.log" && fail "4 GB lane ran a slide again"
pass "4 GB GPU (${gpu_lane[*]}): every slide on the device, none run again"

run_lane cpu --slots 1
# A simulated lane runs the CPU's own ops: byte for byte. A real GPU's
# sums run in another order (kernels/ops/cuda/reduce.cu), so there the
# numbers agree to 1e-4 relative, as in test_gpu_worker.sh, and the
# image files are the same ones.
for m in small roomy; do
    if [ -n "${QC_TEST_GPU:-}" ]; then
        results_close "$T/out-cpu" "$T/out-$m" 1e-4 \
            || fail "$m: results differ from the CPU slot's: $(head -5 "$T/diffs")"
        diff <(cd "$T/out-cpu" && find . -name '*.png' | sort) \
             <(cd "$T/out-$m" && find . -name '*.png' | sort) >/dev/null \
            || fail "$m: other image files than the CPU slot's"
    else
        diff <(rows "$T/out-cpu") <(rows "$T/out-$m") >/dev/null \
            || fail "$m: results differ from the CPU slot's: $(diff <(rows "$T/out-cpu") <(rows "$T/out-$m") | head -5)"
        for f in "$T"/out-cpu/full-1.svs/*.png; do
            cmp -s "$f" "$T/out-$m/full-1.svs/$(basename "$f")" \
                || fail "$m: $(basename "$f") differs from the CPU slot's"
        done
    fi
    diff <(errors "$T/out-cpu" | cut -f1,3-) <(errors "$T/out-$m" | cut -f1,3-) >/dev/null \
        || fail "$m: failures differ from the CPU slot's"
done
if [ -n "${QC_TEST_GPU:-}" ]; then
    pass "the CPU slot's results (numbers to 1e-4), PNG files and failures, on both GPU lanes"
else
    pass "the CPU slot's results, PNGs and failures, byte for byte, on both GPU lanes"
fi
