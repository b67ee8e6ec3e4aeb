#!/bin/bash
# A GPU-only job waits while only CPU workers are there, then runs on the
# worker that advertises a GPU when it joins. --gpu without a usable GPU
# fails at start with exit code 2.
. "$(dirname "$0")/lib.sh"

probe_gpu
if [ $GPU_PROBE_RC -eq 3 ]; then
    echo "note: this machine has a usable GPU; the no-GPU refusal is not checked here"
else
    [ $GPU_PROBE_RC -eq 2 ] || fail "qc-worker --gpu 0 without a GPU exit $GPU_PROBE_RC, expected 2"
    grep -q "no usable GPU" "$T/gpu-probe.log" || fail "no clear message: $(cat "$T/gpu-probe.log")"
    pass "--gpu without a usable GPU: exit 2, clear message"
fi

make_cohort "$T/cohort" 20 >/dev/null
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port cpuonly --slots 2 --heartbeat-ms 200
wait_for "cpu worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --gpu-only \
    --list "$T/cohort/list" >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
sleep 2
grep -q '^ok\|^FAILED' "$T/submit.log" && fail "a GPU-only task ran on a CPU-only worker"
"$BIN/qc-status" --broker tcp://127.0.0.1:$port | grep -Eq '^1 +0 +0 +20 +20' \
    || fail "job should be queued with 20 tasks: $("$BIN/qc-status" --broker tcp://127.0.0.1:$port)"
pass "GPU-only tasks wait while no GPU is advertised"

start_worker $port gpuworker --slots 1 --simulate-gpus 1 --heartbeat-ms 200
for i in $(seq 1 300); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "GPU-only job did not finish after a GPU worker joined"
n_gpu=$(grep -c '(gpuworker)' "$T/submit.log")
n_cpu=$(grep -c '(cpuonly)' "$T/submit.log")
[ "$n_gpu" -eq 20 ] && [ "$n_cpu" -eq 0 ] || fail "gpu worker ran $n_gpu, cpu worker ran $n_cpu"
check_exactly_once "$T/out" "$T/cohort/list"
pass "GPU-only tasks ran on the GPU worker when it joined"
