#!/bin/bash
# Workers join and leave live: a worker started mid-job gets work, and a
# worker stopped with SIGTERM drains without losing a slide.
. "$(dirname "$0")/lib.sh"

make_cohort "$T/cohort" 120 >/dev/null
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port early --slots 1 --heartbeat-ms 200 --task-delay-ms 50
early=$WORKER_PID
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/cohort/list" \
    >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
wait_for "first results" 20 "[ \$(grep -c '^ok\|^FAILED' '$T/submit.log') -ge 5 ]"
start_worker $port late --slots 2 --heartbeat-ms 200 --task-delay-ms 50
wait_for "late worker gets work" 20 "grep -q '(late)' '$T/submit.log'"
pass "a worker started mid-job got work"

# SIGTERM the early worker while it is busy: it drains and exits 0
kill -TERM $early
for i in $(seq 1 200); do kill -0 $early 2>/dev/null || break; sleep 0.1; done
kill -0 $early 2>/dev/null && fail "worker did not leave within 20 s of SIGTERM"
wait $early; rc=$?
[ $rc -eq 0 ] || fail "worker exit $rc after SIGTERM, expected 0"
# the broker reads the worker's DISCONNECT (sent as the drain began) in
# its own time: under load, after the worker has exited (a CI run read
# the log first and failed)
wait_for "the broker logs the drain" 10 "grep -q 'early is draining' '$T/broker.log'" "$T/broker.log"
grep -q "declared dead" "$T/broker.log" && fail "a drained worker was declared dead"
pass "SIGTERM: worker drained and left"

for i in $(seq 1 600); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "qc-submit did not finish in 60 s"
wait $submit
check_exactly_once "$T/out" "$T/cohort/list"
pass "every slide reported exactly once"
