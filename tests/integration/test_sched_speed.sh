#!/bin/bash
# The broker's speed rule (broker/sched.h, Speed) with real programs: a
# CPU worker whose slots take ~15 s a slide (--task-delay-ms) beside a
# simulated GPU lane that takes ~0.4 s. The first cohort teaches
# the broker both speeds (its first slides go to both); in the second,
# small one the CPU slots take none: the lane finishes them all before
# one slot would finish one, and qc-status says so; its slides are right.
# The speeds outlive the broker (its state folder's "speeds", written
# within seconds of a first measure): killed with -9 and started again,
# it gives a third small cohort to the lane alone from its first slide.
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
# the lane's 0.4 s a slide: the second cohort's slides wait in the queue
# for ~2 s, long enough for qc-status to be asked while they do (at
# ~0.02 s a slide the window was missed on a loaded machine)
start_worker $port fastgpu --slots 0 --simulate-gpus 1 --heartbeat-ms 200 --task-delay-ms 400
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

# qc-status shows the speeds the scheduler goes by: --tsv's last two
# fields of a worker (seconds a slide on a CPU slot, on a GPU; - unknown)
speeds_shown() {    # speeds_shown WHEN: slowcpu ~15 s on its slots, fastgpu under 1 s on its GPU
    "$BIN/qc-status" --broker tcp://127.0.0.1:$port --timeout 5 --tsv >"$T/speeds.tsv" 2>&1
    awk -F'\t' '$1 == "worker" && $2 == "slowcpu" && $10 >= 14 && $10 <= 20 && $11 == "-" { a = 1 }
                $1 == "worker" && $2 == "fastgpu" && $10 == "-" && $11 > 0 && $11 < 1 { b = 1 }
                END { exit !(a && b) }' "$T/speeds.tsv" \
        || fail "$1: qc-status --tsv does not show the speeds: $(grep -v '^job' "$T/speeds.tsv")"
    "$BIN/qc-status" --broker tcp://127.0.0.1:$port --timeout 5 >"$T/speeds.txt" 2>&1
    grep -q "CPU S/SL  GPU S/SL  STATE" "$T/speeds.txt" \
        && grep -Eq "^slowcpu .* 1[0-9]\.[0-9] +- +[a-z-]+ *$" "$T/speeds.txt" \
        || fail "$1: qc-status's table does not show the speeds: $(head -5 "$T/speeds.txt")"
}
speeds_shown "speeds measured"
pass "qc-status shows each worker's measured time for a slide on its CPU slots and its GPUs"

# the broker killed outright once its speeds file holds both workers'
# measures; the workers come back to the new one, which starts from them
speeds=$T/state-$port/speeds
measured() {    # measured NAME: NAME's line with a CPU or GPU time above 0
    awk -F'\t' -v n="$1" '$1 == n && ($4 > 0 || $5 > 0) { found = 1 } END { exit !found }' "$speeds" 2>/dev/null
}
wait_for "both speeds written" 20 "measured slowcpu && measured fastgpu" "$T/broker.log"
kill -9 "$BROKER_PID"
wait "$BROKER_PID" 2>/dev/null
start_broker $port --heartbeat-ms 200
wait_for "both workers back" 20 "workers_registered $port 2" "$T/broker.log"
grep -q "worker slowcpu: a slide took 1[0-9.]* s on a CPU slot" "$T/broker.log" \
    || fail "the restarted broker did not start from slowcpu's speed: $(grep -i 'speed\|slowcpu' "$T/broker.log" | tail -5)"
speeds_shown "after the restart"
mkdir -p "$T/third"
for i in 1 2 3; do
    ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/third/t$i.svs"
done
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/cheap.ini" -o "$T/out3" \
    "$T/third" >"$T/submit3.log" 2>&1 || fail "the third cohort: $(tail -3 "$T/submit3.log")"
n_cpu=$(grep -c '(slowcpu)' "$T/submit3.log"); n_gpu=$(grep -c '(fastgpu)' "$T/submit3.log")
[ "$n_cpu" -eq 0 ] && [ "$n_gpu" -eq 3 ] \
    || fail "after a kill -9 and a restart, 3 slides should go to the lane alone: cpu $n_cpu, gpu $n_gpu"
pass "speeds outlive the broker: killed with -9 and restarted, it gave a small cohort's 3 slides to the GPU lane at once"

# a damaged speeds file: its bad lines left out and said, its good ones
# (a name with a tab in it, escaped) taken, the broker up
kill -TERM "$BROKER_PID"
wait "$BROKER_PID" 2>/dev/null
{
    printf 'bad%%G1\thost\t\t100\t0\t1\n'       # a bad escape
    printf 'nul%%00\thost\t\t100\t0\t1\n'       # an escaped NUL
    printf 'short\thost\t100\n'                 # fields missing
    printf 'neg\thost\t\t-5\t0\t1\n'            # a negative time
    printf 'junk\thost\t\t5\t0\t1 trailing\n'   # bytes after the last field
    printf 'a%%09b\thost\t\t4000\t0\t%s\n' "$(date +%s)"   # a<TAB>b
    printf '%%23c\thost\t\t4000\t0\t%s\n' "$(date +%s)"     # #c
} >>"$speeds"
start_broker $port --heartbeat-ms 200
grep -q "speeds: 5 lines that do not parse left out" "$T/broker.log" \
    || fail "the damaged lines were not said: $(grep -i speeds "$T/broker.log" | tail -3)"
grep -q "4 workers' speeds from" "$T/broker.log" \
    || fail "the good lines were not taken: $(grep -i speeds "$T/broker.log" | tail -3)"
pass "a damaged speeds file: 5 bad lines left out and said, 4 good ones (names with a tab, a leading #) taken"
