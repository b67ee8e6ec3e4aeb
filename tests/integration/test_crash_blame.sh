#!/bin/bash
# Blame is for a slide's own executions: a slide that crashes its worker
# process is reported by the worker's supervisor, which restarts the
# worker; with --max-deaths 1 it is failed at its first crash, while the
# slide that ran beside it in the same process is not blamed. Workers
# killed with -9 around the other slides blame nothing: every other
# slide passes. A worker process that dies of SIGKILL (the OOM killer)
# with several slides names no culprit: they run again, each alone. A
# restarted worker process that cannot start is started again; one that
# crashes after sending results is restarted without a growing delay.
. "$(dirname "$0")/lib.sh"

# new_broker [HEARTBEAT_MS]: the part before's broker stopped and a new
# one on a new port (port set), so that each part's blame starts anew
new_broker() {
    kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
    port=$(free_port)
    start_broker $port --heartbeat-ms "${1:-200}" --max-deaths 1
}

# submit_failing WHAT N [LOG]: qc-submit of $T/listN into $T/outN (its
# output in $T/submitN.log), which must exit 1 (a slide failed) with each
# slide once; a failure shows the end of LOG too
submit_failing() {
    local what=$1 n=$2 log=${3:-} rc
    timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out$n" --list "$T/list$n" \
        >"$T/submit$n.log" 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "$what: qc-submit exit $rc, expected 1: $(tail -3 "$T/submit$n.log"
        [ -n "$log" ] && grep -v DEBUG "$log" | tail -5)"
    check_exactly_once "$T/out$n" "$T/list$n"
}

make_cohort "$T/cohort" 40 >/dev/null
# only slides that pass: a failure would not tell blame from a bad slide
grep -E 'gen-|CMU|pyramid|ndpi|small.svs' "$T/cohort/list" | head -19 >"$T/list"
ln -s "$(readlink -f "$(head -1 "$T/list")")" "$T/cohort/POISON.svs"
echo "$T/cohort/POISON.svs" >>"$T/list"
port=$(free_port)
start_broker $port --heartbeat-ms 200 --max-deaths 1
start_worker $port w1 --slots 2 --heartbeat-ms 200 --task-delay-ms 150 --test-crash-on POISON
w1=$WORKER_PID
start_worker $port w2 --slots 2 --heartbeat-ms 200 --task-delay-ms 150 --test-crash-on POISON
w2=$WORKER_PID
wait_for "2 workers registered" 10 "workers_registered $port 2"

"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/list" \
    >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
# kill both workers (their supervisors, by PID) while slides run; restart them
for k in 1 2; do
    wait_for "results before kill $k" 30 "[ \$(grep -c '^ok' '$T/submit.log') -ge $((k * 4)) ]"
    victim=$([ $k = 1 ] && echo $w1 || echo $w2)
    kill -9 $victim
    start_worker $port w$k-again --slots 2 --heartbeat-ms 200 --task-delay-ms 150 \
        --test-crash-on POISON
done
for i in $(seq 1 600); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "qc-submit did not finish in 60 s"
wait $submit; rc=$?
[ $rc -eq 1 ] || fail "qc-submit exit $rc, expected 1: $(tail -3 "$T/submit.log")"
check_exactly_once "$T/out" "$T/list"
[ "$(wc -l <"$T/out/error.log")" -eq 1 ] || fail "only the poison slide may fail: $(cat "$T/out/error.log")"
grep -q "POISON.svs.*slide ran 1 time without a result (crashed.*crashed while running it: signal 6 (Aborted)); not retried$" \
    "$T/out/error.log" || fail "the poison slide's reason: $(cat "$T/out/error.log")"
cat "$T"/worker-*.log | grep -q "the worker process died of signal 6 (Aborted) while running 1 task" \
    || fail "the supervisor did not report the crash with its one culprit"
cat "$T"/worker-*.log | grep -q "restarting the worker process" || fail "no restart"
grep -q "declared dead" "$T/broker.log" || fail "the killed workers were not declared dead"
pass "the crashing slide alone was blamed; killed workers blamed nothing (19 passed)"

# with heartbeats slower than a restart (the default, 1 s), the crashed
# process's registration goes when its successor says READY, with the
# crash report: not after its heartbeats, which read as if the new
# process had died
new_broker 3000
start_worker $port wc --slots 1 --heartbeat-ms 3000 --test-crash-on POISON
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out2" "$T/cohort/POISON.svs" \
    "$(head -1 "$T/list")" >"$T/submit2.log" 2>&1
grep -q "worker wc (.*) restarted after a crash: its old process's [0-9]* other task" "$T/broker.log" \
    || fail "the crashed process's registration not retired: $(grep ' wc ' "$T/broker.log")"
grep -q "worker wc .*declared dead" "$T/broker.log" && fail "the restarted worker was declared dead"
pass "a supervised worker's crashed process is retired when its successor joins, not declared dead later"

# a worker process killed with SIGKILL (as the kernel's OOM killer does)
# while it runs several slides names no culprit: none is blamed (here
# --max-deaths 1 would fail them all); each runs alone, where the slide
# that kills its worker does so alone and is failed; every other passes
ln -s "$(readlink -f "$(sed -n 2p "$T/list")")" "$T/cohort/KILLER.svs"
{ echo "$T/cohort/KILLER.svs"; sed -n 2,9p "$T/list"; } >"$T/list3"
new_broker
start_worker $port wk --slots 3 --heartbeat-ms 200 --task-delay-ms 400 --test-kill-on KILLER
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out3" --list "$T/list3" \
    >"$T/submit3.log" 2>&1 &
submit=$!
PIDS+=($submit)
for i in $(seq 1 900); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "qc-submit did not finish in 90 s: $(tail -3 "$T/submit3.log")"
wait $submit; rc=$?
[ $rc -eq 1 ] || fail "qc-submit exit $rc, expected 1: $(tail -3 "$T/submit3.log")"
check_exactly_once "$T/out3" "$T/list3"
[ "$(wc -l <"$T/out3/error.log")" -eq 1 ] \
    || fail "only the killing slide may fail: $(cat "$T/out3/error.log")"
grep -q "KILLER.svs.*slide ran 1 time without a result (crashed.*crashed while running it: signal 9 (Killed)); not retried in this job (killed as the kernel's OOM killer does.*; a rerun tries again)$" \
    "$T/out3/error.log" || fail "the killing slide's reason: $(cat "$T/out3/error.log")"
grep -q "the worker process died of signal 9 (Killed) (SIGKILL.*) while running [23] task" \
    "$T/worker-wk.log" || fail "no SIGKILL with several slides running: $(grep died "$T/worker-wk.log")"
# the kernel's count of OOM kills says whose SIGKILL it was (the test's
# own kill -9; it said "the OOM killer, or kill -9")
if grep -q '^oom_kill ' /proc/vmstat; then
    grep -q "(SIGKILL, and the kernel's OOM killer killed nothing meanwhile: a kill -9 from outside" \
        "$T/worker-wk.log" || fail "a kill -9 not told from the OOM killer: $(grep died "$T/worker-wk.log")"
fi
shared=$(grep -c "while running [23] slides at once, which names none of them.*runs alone" \
    "$T/broker.log")
[ "$shared" -ge 2 ] || fail "the shared crash's slides were not sent to run alone: $shared"
grep -q "the worker process died of signal 9 (Killed) (SIGKILL.*) while running 1 task" "$T/worker-wk.log" \
    || fail "the killing slide never ran alone: $(grep died "$T/worker-wk.log")"
grep -q "worker wk.*crashed (signal 9 (Killed)) while running .*KILLER.svs.*blame 1 of 1" \
    "$T/broker.log" || fail "the killing slide was not blamed alone: $(grep KILLER "$T/broker.log")"
pass "a SIGKILL with several slides running blamed none; alone, the killing slide was failed, the other 8 passed"

# a death by SIGKILL is likely memory (the OOM killer): the same command
# again runs the killed slide again (and only it); a segfault's or an
# abort's slide is not (part 1's POISON stays failed on a rerun)
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out3" --list "$T/list3" \
    >"$T/submit3b.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "rerun: exit $rc, expected 1: $(tail -3 "$T/submit3b.log")"
grep -q "^1 slide runs again: it failed before" "$T/submit3b.log" && grep -q "running 1 of 9 slides" \
    "$T/submit3b.log" || fail "the killed slide not run again: $(head -5 "$T/submit3b.log")"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/list" >"$T/submit1b.log" 2>&1
grep -q "nothing to run" "$T/submit1b.log" || fail "the aborting slide ran again: $(head -5 "$T/submit1b.log")"
pass "a rerun tries the slide a SIGKILL failed again, not the one an abort failed"

# a crash while memory ran short (a library aborts when its allocation
# fails: GLib, libzmq) names no culprit either: beside others the slides
# run alone; alone, the slide is failed marked for a rerun, not for good
ln -s "$(readlink -f "$(sed -n 3p "$T/list")")" "$T/cohort/HOG.svs"
{ echo "$T/cohort/HOG.svs"; sed -n 4,6p "$T/list"; } >"$T/list5"
new_broker
( ulimit -v 2000000; exec "$BIN/qc-worker" --connect tcp://127.0.0.1:$port --name wm --slots 2 \
      --heartbeat-ms 200 --task-delay-ms 400 --test-exhaust-on HOG >>"$T/worker-wm.log" 2>&1 ) &
PIDS+=($!)
wait_for "worker registered" 10 "workers_registered $port 1"
submit_failing "memory crash" 5
[ "$(wc -l <"$T/out5/error.log")" -eq 1 ] || fail "memory crash: $(cat "$T/out5/error.log")"
grep -q "HOG.svs.*crashed while running it: signal 6 (Aborted) while memory ran short); not retried in this job (.*; a rerun tries again)$" \
    "$T/out5/error.log" || fail "memory crash, the reason: $(cat "$T/out5/error.log")"
grep -q "worker wm died (signal 6 (Aborted) while memory ran short) while running 2 slides at once, which names none of them" "$T/broker.log" \
    || fail "memory crash beside another slide: $(grep ' wm ' "$T/broker.log" | tail -3)"
pass "a crash while memory ran short blamed no slide beside it; alone, the slide was failed marked for a rerun"

# a restarted worker process that cannot start (its threads or memory
# short for now: --test-fail-starts 2, tests only, refuses the last
# executor thread of the next two processes) is started again after a
# growing delay instead of ending qc-worker; the crash it was restarted
# for is still reported, and the third process finishes the cohort
ln -s "$(readlink -f "$(sed -n 7p "$T/list")")" "$T/cohort/BOMB.svs"
{ echo "$T/cohort/BOMB.svs"; sed -n 8,10p "$T/list"; } >"$T/list6"
new_broker
start_worker $port ws --slots 1 --heartbeat-ms 200 --test-crash-on BOMB --test-fail-starts 2
wait_for "worker registered" 10 "workers_registered $port 1"
submit_failing "restarts that cannot start" 6 "$T/worker-ws.log"
[ "$(wc -l <"$T/out6/error.log")" -eq 1 ] && grep -q "BOMB.svs.*crashed while running it: signal 6" \
    "$T/out6/error.log" || fail "restarts that cannot start, the failures: $(cat "$T/out6/error.log")"
for k in 1 2; do
    grep -q "the restarted worker process could not start (exit 2; see above): starting it again in [0-9]* s ($k of 9)" \
        "$T/worker-ws.log" || fail "failed start $k not retried: $(grep -v DEBUG "$T/worker-ws.log" | tail -5)"
done
grep -q "could not start 1 executor threads (0 started)" "$T/worker-ws.log" \
    || fail "the refused thread not said: $(grep -v DEBUG "$T/worker-ws.log" | tail -5)"
grep -q "(3 of 9)" "$T/worker-ws.log" && fail "a third start failed: --test-fail-starts 2 ignored"
pass "a restarted worker process that could not start was started again; the third finished the cohort"

# a worker process that sent results before it crashed was making
# progress: it is restarted after 1 s, however many slides crashed
# before (here 3 on one worker with one slot, results between them);
# the growing delay is for a process that crashes before any result
: >"$T/list7"
for k in 1 2 3; do
    ln -s "$(readlink -f "$(sed -n $((10 + k))p "$T/list")")" "$T/cohort/CRASH$k.svs"
    sed -n $((13 + k))p "$T/list" >>"$T/list7"
    echo "$T/cohort/CRASH$k.svs" >>"$T/list7"
done
sed -n 17p "$T/list" >>"$T/list7"
new_broker
start_worker $port wp --slots 1 --prefetch 0 --heartbeat-ms 200 --test-crash-on CRASH
wait_for "worker registered" 10 "workers_registered $port 1"
submit_failing "crashes between results" 7
[ "$(grep -c 'CRASH' "$T/out7/error.log")" -eq 3 ] && [ "$(wc -l <"$T/out7/error.log")" -eq 3 ] \
    || fail "crashes between results, the failures: $(cat "$T/out7/error.log")"
delays=$(grep -o 'restarting the worker process in [0-9]* s' "$T/worker-wp.log" | grep -o '[0-9]* s$' | tr '\n' ' ')
[ "$delays" = "1 s 1 s 1 s " ] || fail "crashes between results: restart delays $delays, expected 1 s each"
pass "a worker process that sent results before each of its 3 crashes was restarted after 1 s each time"

# a worker process that exits mid-slide on its own (a library's exit()
# on an error; a sanitizer's report) is a crash of that slide: reported
# and restarted; before, its supervisor exited with it and the slide was
# given to a worker that never came back
head -5 "$T/list" >"$T/list8"
echo "$T/cohort/POISON.svs" >>"$T/list8"
new_broker
start_worker $port wx --slots 1 --heartbeat-ms 200 --test-exit-on POISON
wx=$WORKER_PID
wait_for "worker registered" 10 "workers_registered $port 1"
submit_failing "exit mid-slide" 8
[ "$(wc -l <"$T/out8/error.log")" -eq 1 ] \
    && grep -q "POISON.svs.*crashed while running it: exit 3 (a library ended the process mid-slide" "$T/out8/error.log" \
    || fail "exit mid-slide, the failures: $(cat "$T/out8/error.log")"
grep -q "the worker process ended with exit 3 (a library ended the process mid-slide.*while running 1 task" \
    "$T/worker-wx.log" || fail "exit mid-slide: the supervisor did not report it"
kill -0 $wx 2>/dev/null || fail "exit mid-slide: the supervisor exited"
pass "a worker process that exited mid-slide was a crash of that slide: reported, restarted, the others passed"
