#!/bin/bash
# The broker's state folder cannot be written (a file-size limit set with
# ulimit -f refuses writes with EFBIG, as a full disk does with ENOSPC):
# a new SUBMIT is refused with that reason, the job already accepted goes
# on to the end, each slide exactly once. Then retention: results of a
# finished job whose client stays away are deleted after --retention,
# and a client that comes back later is told so.
. "$(dirname "$0")/lib.sh"

bad=$(make_cohort "$T/cohort" 40)
port=$(free_port)
# 3 MB per file: the journal fits, a job's result file (images) does not
( ulimit -f 3000; exec "$BIN/qc-broker" --bind tcp://127.0.0.1:$port --state "$T/state" \
      --heartbeat-ms 200 ) >>"$T/broker.log" 2>&1 &
BROKER_PID=$!
PIDS+=($BROKER_PID)
wait_for "broker listening" 10 "grep -q 'listening on' '$T/broker.log'"
start_worker $port w1 --slots 2 --heartbeat-ms 200 --task-delay-ms 50
wait_for "worker registered" 10 "workers_registered $port 1"

"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/cohort/list" \
    >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
wait_for "the disk refusing writes" 60 "grep -q 'new jobs are refused' '$T/broker.log'"
grep -q "File too large" "$T/broker.log" || fail "the reason is not logged"
pass "the broker saw its state folder refuse a write, and said so"

"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/refused" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/refused.log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "a new job on a full disk: exit $rc, expected 2"
grep -q "cannot store a new job: its state folder .* cannot be written (File too large); accepted jobs go on" \
    "$T/refused.log" || fail "no clear reason: $(cat "$T/refused.log")"
pass "a new SUBMIT is refused with the reason"

for i in $(seq 1 600); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "the accepted job did not finish in 60 s"
wait $submit; rc=$?
[ $rc -eq 1 ] || fail "accepted job: exit $rc, expected 1: $(tail -3 "$T/submit.log")"
check_exactly_once "$T/out" "$T/cohort/list"
pass "the job accepted before the disk filled went on: 40 slides, each once"
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null

# retention: a job whose client went away finishes; its results wait 2 s
port=$(free_port)
start_broker $port --heartbeat-ms 200 --retention 2
start_worker $port w2 --slots 2 --heartbeat-ms 200
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/late" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" \
    >"$T/late.log" 2>&1 &
submit=$!
wait_for "job accepted" 10 "grep -q '^job' '$T/late/.qc-job' 2>/dev/null"
kill -9 $submit
wait $submit 2>/dev/null
job=$(awk '/^job /{print $2; exit}' "$T/late/.qc-job")
wait_for "results deleted after --retention" 30 "grep -q 'job $job: .* results waited 2 s' '$T/broker.log'"
[ ! -e "$T/state-$port/results/$job.qcr" ] || fail "the result file is still there"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$job" -o "$T/late" >"$T/attach.log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "attach after retention: exit $rc, expected 2"
grep -q "waited 2 s for a client that did not come; they were deleted at .* (qc-broker --retention)" \
    "$T/attach.log" || fail "no clear message: $(cat "$T/attach.log")"
pass "results kept past --retention are deleted; a late client is told"

# and a restart keeps that answer (the journal remembers forgotten jobs)
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
start_broker $port --heartbeat-ms 200 --retention 2
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$job" -o "$T/late" >"$T/attach2.log" 2>&1
grep -q "waited 2 s for a client" "$T/attach2.log" || fail "after a restart: $(cat "$T/attach2.log")"
pass "a restart keeps what a late client is told"
