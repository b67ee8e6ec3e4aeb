#!/bin/bash
# A real GPU worker (qc-worker --gpu 0, no CPU slot) gives the answers a
# CPU worker gives, through a real broker on loopback: the same slides
# pass and fail, every numeric column within 1e-4 relative, every other
# column equal, and the same image files. Its tasks run on the GPU lane
# (it has no CPU slot, and its log shows the CUDA backend starting).
# Needs a usable CUDA device: without one it says SKIPPED and passes
# (test_gpu_wait checks the refusal then; test_kernel_math
# checks the shared math).
. "$(dirname "$0")/lib.sh"

probe_gpu
if [ $GPU_PROBE_RC -eq 2 ]; then
    echo "SKIPPED: no usable GPU here ($(head -1 "$T/gpu-probe.log"))"
    exit 0
fi
[ $GPU_PROBE_RC -eq 3 ] || fail "qc-worker --gpu 0 probe: exit $GPU_PROBE_RC, expected 3 (no broker): $(cat "$T/gpu-probe.log")"

bad=$(make_cohort "$T/cohort" 16)
port=$(free_port)
start_broker $port --heartbeat-ms 200

run_alone $port cpu "$T/cohort/list" --slots 2
run_alone $port gpu "$T/cohort/list" --slots 0 --gpu 0
grep -q "CUDA backend ready" "$T/worker-gpu.log" || fail "the GPU worker's log never shows the CUDA backend starting"
[ "$(wc -l <"$T/out-gpu/error.log")" -eq "$bad" ] \
    || fail "GPU worker: $(wc -l <"$T/out-gpu/error.log") failures, expected $bad"
diff <(errors "$T/out-cpu" | cut -f1) <(errors "$T/out-gpu" | cut -f1) >/dev/null \
    || fail "the failed slides differ between CPU and GPU"

# Column by column: numbers within 1e-4 relative, text equal.
results_close "$T/out-cpu" "$T/out-gpu" 1e-4 \
    || fail "GPU results differ from the CPU's: $(head -5 "$T/diffs")"
diff <(cd "$T/out-cpu" && find . -name '*.png' | sort) <(cd "$T/out-gpu" && find . -name '*.png' | sort) \
    >/dev/null || fail "the GPU worker wrote other image files than the CPU worker"
pass "GPU worker: $(rows "$T/out-gpu" | wc -l) slides agree with the CPU worker's, $bad fail alike"
