#!/bin/bash
# The broker's speed rule (broker/sched.h, Speed) with real programs: a
# CPU worker whose slots take ~15 s a slide (--task-delay-ms) beside a
# simulated GPU lane that takes well under 1 s. The first cohort teaches
# the broker both speeds (its first slides go to both); in the second,
# small one the CPU slots take none: the lane finishes them all before
# one slot would finish one, and qc-status says so; its slides are right.
. "$(dirname "$0")/lib.sh"

make_cohort "$T/first" 4 >/dev/null
mkdir -p "$T/second"
for i in 1 2 3 4 5; do
    ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/second/s$i.svs"
done
cheap_config "$T/cheap.ini"
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port slowcpu --slots 2 --prefetch 0 --task-delay-ms 15000 --heartbeat-ms 200
start_worker $port fastgpu --slots 0 --simulate-gpus 1 --heartbeat-ms 200
wait_for "both workers registered" 10 "workers_registered $port 2"

timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/cheap.ini" -o "$T/out1" \
    --list "$T/first/list" >"$T/submit1.log" 2>&1
[ $? -le 1 ] || fail "the first cohort: $(tail -3 "$T/submit1.log")"
n_cpu=$(grep -c '(slowcpu)' "$T/submit1.log"); n_gpu=$(grep -c '(fastgpu)' "$T/submit1.log")
[ "$n_cpu" -ge 1 ] && [ "$n_gpu" -ge 1 ] \
    || fail "the first cohort, before any speed is known, should go to both: cpu $n_cpu, gpu $n_gpu"
pass "speeds unknown: the first cohort's slides went to both ($n_cpu on the CPU slots, $n_gpu on the GPU)"

"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/cheap.ini" -o "$T/out2" "$T/second" \
    >"$T/submit2.log" 2>&1 &
submit=$!
PIDS+=($submit)
said=0
for _ in $(seq 1 100); do
    kill -0 $submit 2>/dev/null || break
    "$BIN/qc-status" --broker tcp://127.0.0.1:$port --timeout 2 >"$T/status.log" 2>&1
    grep -q "slowcpu: its free CPU slots leave the [0-9]* queued slides to the GPUs" \
        "$T/status.log" && said=1
    sleep 0.1
done
wait $submit || fail "the second cohort: $(tail -3 "$T/submit2.log")"
n_cpu=$(grep -c '(slowcpu)' "$T/submit2.log"); n_gpu=$(grep -c '(fastgpu)' "$T/submit2.log")
[ "$n_cpu" -eq 0 ] && [ "$n_gpu" -eq 5 ] \
    || fail "5 slides the lane finishes sooner: cpu $n_cpu, gpu $n_gpu: $(cat "$T/submit2.log")"
[ "$(grep -vc '^#' "$T/out2/results.tsv")" -eq 5 ] || fail "not 5 rows: $(cat "$T/out2/results.tsv")"
[ $said = 1 ] || fail "qc-status never said why the CPU slots wait: $(cat "$T/status.log")"
pass "speeds known: a small cohort's 5 slides all went to the faster GPU lane, and qc-status said why the CPU slots waited"
