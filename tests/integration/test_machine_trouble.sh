#!/bin/bash
# A worker whose machine fails slides (memory short, no descriptor, a
# share gone: failures marked as the machine's, not the slide's) does not
# fail the cohort: the broker sends each such slide back to run elsewhere
# and pauses that worker, so it does not take the queue while a healthy
# worker could run it. Here worker "bad" fails every slide so
# (--test-trouble-on /); every slide passes on "good".
. "$(dirname "$0")/lib.sh"

make_cohort "$T/cohort" 40 >/dev/null
grep -E 'gen-|CMU|pyramid|small.svs' "$T/cohort/list" | head -8 >"$T/list"
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port bad --slots 2 --heartbeat-ms 200 --test-trouble-on /
wait_for "the bad worker registered" 10 "workers_registered $port 1"
start_worker $port good --slots 2 --heartbeat-ms 200 --task-delay-ms 200
good=$WORKER_PID
wait_for "both workers registered" 10 "workers_registered $port 2"
t0=$SECONDS
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/list" \
    >"$T/submit.log" 2>&1
rc=$?
"$BIN/qc-status" --broker tcp://127.0.0.1:$port >"$T/status.log" 2>&1
took=$((SECONDS - t0))
[ $rc -eq 0 ] || fail "qc-submit exit $rc, expected 0: $(tail -3 "$T/submit.log"; cat "$T/out/error.log" 2>/dev/null)"
check_exactly_once "$T/out" "$T/list"
[ "$(grep -c '(good)$' "$T/submit.log")" -eq 8 ] \
    || fail "not every slide ran on the good worker: $(grep -E '^(ok|FAILED)' "$T/submit.log")"
grep -q "worker bad failed .* for its machine, not the slide: --test-trouble-on: .*; the slide runs again (1 of 2), and bad takes no new slide for 10 s" \
    "$T/broker.log" || fail "the broker did not say why: $(grep 'worker bad' "$T/broker.log" | head -3)"
# qc-status says why the paused worker takes nothing (within its 10 s)
[ $took -ge 8 ] || grep -q "^bad: takes no new slide for [0-9]* s more: its machine failed slides (memory or file descriptors short), which run elsewhere$" \
    "$T/status.log" || fail "qc-status did not say why bad takes nothing: $(cat "$T/status.log")"
pass "slides failed by a worker's machine ran again on the other worker; that worker was paused, and qc-status said why"

# with no other worker, nothing is gained by waiting on the same machine:
# the failures stand at once (marked, a rerun tries them again), no pause
kill -TERM $good
wait $good 2>/dev/null
wait_for "the good worker gone" 10 "! workers_registered $port 2"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out2" --list "$T/list" \
    >"$T/submit2.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "one troubled worker: exit $rc, expected 1: $(tail -3 "$T/submit2.log")"
job2=$(awk '/^job /{print $2; exit}' "$T/out2/.qc-job")
! grep -q "(job $job2) for its machine" "$T/broker.log" \
    || fail "one troubled worker: slides sent out again: $(grep "(job $job2)" "$T/broker.log" | head -3)"
[ "$(grep -c 'memory ran out on this machine.*a rerun tries again)$' "$T/out2/error.log")" -eq 8 ] \
    || fail "one troubled worker: $(cat "$T/out2/error.log")"
pass "with no other worker the machine's failures stand at once, marked for a rerun"
