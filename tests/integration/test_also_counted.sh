#!/bin/bash
# "also counted (exit 1): ..." says what else the exit code counts (slides
# failed in an earlier run into the folder, slides not readable here). It
# belongs under a run that ends 0 or 1 only: a run interrupted (130) or
# left (--give-up: 3) exits otherwise, and a line saying "exit 1" there
# misleads the script or person reading it.
. "$(dirname "$0")/lib.sh"

R=$SHARED/slides/real
mkdir -p "$T/c"
ln -s "$R/CMU-1-Small-Region.svs" "$T/c/one.svs"
ln -s "$SHARED/slides/odd/not-a-slide.svs" "$T/c/bad.svs"

port=$(free_port)
EP=tcp://127.0.0.1:$port
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 1 --heartbeat-ms 200
wait_for "worker registered" 10 "workers_registered $port 1"
timeout 120 "$BIN/qc-submit" --broker "$EP" -o "$T/out" "$T/c" >"$T/run1.log" 2>&1
[ $? -eq 1 ] || fail "first run: exit 1 expected (bad.svs fails): $(tail -3 "$T/run1.log")"
kill -TERM $WORKER_PID; wait_exit $WORKER_PID 20 >/dev/null
pass "first run: one slide failed, in error.log"

# the cohort grows; no worker now, so the new slide's job waits
ln -s "$R/CMU-1-Small-Region-pyramid.svs" "$T/c/two.svs"

# interrupted: exit 130, and no line that speaks of exit 1
"$BIN/qc-submit" --broker "$EP" -o "$T/out" "$T/c" --wait-warn 0 >"$T/int.log" 2>&1 &
pid=$!
PIDS+=($pid)
wait_for "job accepted" 10 "grep -q '^job [0-9]* on' '$T/int.log'"
kill -TERM $pid
wait_exit $pid 20
rc=$?
[ $rc -eq 130 ] || fail "interrupted: exit $rc, expected 130: $(tail -3 "$T/int.log")"
grep -q "interrupted" "$T/int.log" || fail "interruption not said: $(cat "$T/int.log")"
! grep -q "also counted (exit 1)" "$T/int.log" \
    || fail "an interrupted run (exit 130) says 'also counted (exit 1)': $(tail -2 "$T/int.log")"
pass "interrupted (exit 130): no 'also counted (exit 1)' line"

# left by --give-up (the broker stopped answering): exit 3, no such line
"$BIN/qc-submit" --broker "$EP" -o "$T/out" "$T/c" --wait-warn 0 --give-up 2 >"$T/gu.log" 2>&1 &
pid=$!
PIDS+=($pid)
wait_for "reattached" 10 "grep -q 'job [0-9]* on' '$T/gu.log'"
kill -STOP $BROKER_PID
wait_exit $pid 20
rc=$?
kill -CONT $BROKER_PID
[ $rc -eq 3 ] || fail "--give-up: exit $rc, expected 3: $(tail -3 "$T/gu.log")"
! grep -q "also counted (exit 1)" "$T/gu.log" \
    || fail "a run left by --give-up (exit 3) says 'also counted (exit 1)': $(tail -2 "$T/gu.log")"
pass "--give-up (exit 3): no 'also counted (exit 1)' line"

# a run that ends (job 2 fetched first, then a new slide run): exit 1,
# and the line is there
ln -s "$R/CMU-1-Small-Region.svs" "$T/c/three.svs"
start_worker $port w2 --slots 1 --heartbeat-ms 200
timeout 120 "$BIN/qc-submit" --broker "$EP" -o "$T/out" "$T/c" >"$T/end.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "the last run: exit $rc, expected 1: $(tail -3 "$T/end.log")"
grep -q "^also counted (exit 1): 1 failed before ($T/out/error.log)" "$T/end.log" \
    || fail "the finished run does not say what else it counts: $(tail -3 "$T/end.log")"
pass "a finished run (exit 1): 'also counted (exit 1): 1 failed before'"
