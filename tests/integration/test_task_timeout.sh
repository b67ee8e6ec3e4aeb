#!/bin/bash
# A task past the broker's --task-timeout is taken back and requeued, and
# its worker is told; a slide that outruns the deadline max-deaths times
# is failed with that reason, while the rest of the cohort runs on the
# slots left free. qc-submit, without a result for a while, says what the
# job waits for instead of going silent.
. "$(dirname "$0")/lib.sh"

make_cohort "$T/cohort" 12 >/dev/null
hang=$(sed -n 5p "$T/cohort/list")
ln -s "$(readlink -f "$hang")" "$T/cohort/HANG-slide.svs"
sed -i "5s|.*|$T/cohort/HANG-slide.svs|" "$T/cohort/list"
cheap_config "$T/cheap.ini"
port=$(free_port)
start_broker $port --heartbeat-ms 200 --task-timeout 2
start_worker $port w1 --slots 2 --heartbeat-ms 200 --test-hang-on HANG
start_worker $port w2 --slots 2 --heartbeat-ms 200 --test-hang-on HANG
wait_for "2 workers registered" 10 "workers_registered $port 2"

"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --wait-warn 3 -o "$T/out" -c "$T/cheap.ini" \
    --list "$T/cohort/list" >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
for i in $(seq 1 400); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "qc-submit did not finish in 40 s"
wait $submit; rc=$?
[ $rc -eq 1 ] || fail "qc-submit exit $rc, expected 1: $(tail -3 "$T/submit.log")"
check_exactly_once "$T/out" "$T/cohort/list"
grep -q "HANG-slide.svs.*ran past the 2 s task timeout" "$T/out/error.log" \
    || fail "the hanging slide's reason: $(grep HANG "$T/out/error.log")"
[ "$(grep -c 'ran past the task timeout on worker' "$T/broker.log")" -eq 3 ] \
    || fail "expected 3 deadlines in the broker log"
grep -q "broker took back job 1 task 4 while it runs (ran past the task timeout)" \
    "$T/worker-w1.log" "$T/worker-w2.log" || fail "no worker was told"
pass "a slide past the task deadline was taken back 3 times, told, then failed"

grep -q "waiting [0-9]* s: job 1 has 0 slides queued and 1 running on 2 workers" \
    "$T/submit.log" || fail "qc-submit did not say what it waits for: $(tail -5 "$T/submit.log")"
pass "qc-submit said what the job waited for"

# a worker of one slot alone, its slot stuck past the deadline: before,
# nothing else could run there and the job waited for ever; the worker
# process is replaced (its supervisor starts a new one) once nothing else
# runs, and the cohort finishes
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
head -4 "$T/cohort/list" >"$T/one.list"
echo "$T/cohort/HANG-slide.svs" >>"$T/one.list"
port=$(free_port)
start_broker $port --heartbeat-ms 200 --task-timeout 2
start_worker $port solo --slots 1 --heartbeat-ms 200 --test-hang-on HANG
wait_for "the worker registered" 10 "workers_registered $port 1"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/solo" -c "$T/cheap.ini" \
    --list "$T/one.list" >"$T/solo.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "one slot: qc-submit exit $rc, expected 1: $(tail -3 "$T/solo.log")"
check_exactly_once "$T/solo" "$T/one.list"
grep -q "HANG-slide.svs.*ran past the 2 s task timeout" "$T/solo/error.log" \
    || fail "one slot: the hanging slide's reason: $(cat "$T/solo/error.log")"
[ "$(wc -l <"$T/solo/error.log")" -eq 1 ] || fail "one slot: others failed: $(cat "$T/solo/error.log")"
grep -q "1 slot stuck on slides past the task timeout, nothing else running: replacing this worker process to free it" \
    "$T/worker-solo.log" || fail "one slot: the worker did not say it is replaced"
grep -q "starting a new worker process (the old one's slots were stuck on slides past the task timeout)" \
    "$T/worker-solo.log" || fail "one slot: the supervisor did not start a new process"
pass "a one-slot worker whose slot was stuck past the deadline was replaced; the cohort finished"
