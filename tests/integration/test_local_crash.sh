#!/bin/bash
# The one-process mode (qc-submit without --broker) runs its slides in a
# supervised worker process of its own (client/local_worker.h): a slide
# that crashes it (a library's abort) is failed as a qc-worker's crash
# is, after its runs alone, and the rest of the cohort passes in the same
# run; a slide whose worker process is killed (SIGKILL, as the OOM killer
# does) fails marked as likely the machine's memory, and the next run
# tries it again. A slide that never finishes runs again past
# --task-timeout on a new worker process (its stuck thread goes with the
# old one), failed after 3 such runs. qc-submit killed with -9 takes its worker processes
# with it; Ctrl-C stops them too. Each run leaves no socket folder. Stop
# signals sent to the worker processes themselves are ignored; the
# supervisor killed ends the run, said (exit 5).
. "$(dirname "$0")/lib.sh"

make_cohort "$T/cohort" 12 >/dev/null
# only slides that pass: a failure would not tell a crash from a bad slide
grep -E 'gen-|CMU|pyramid|ndpi|small.svs' "$T/cohort/list" | head -7 >"$T/list"
ln -s "$(readlink -f "$(head -1 "$T/list")")" "$T/cohort/POISON.svs"
echo "$T/cohort/POISON.svs" >>"$T/list"
export TMPDIR=$T/tmp        # where qc-submit's private socket folder goes
mkdir -p "$TMPDIR"
unset XDG_RUNTIME_DIR

# children (and their children) of PID, now
descendants() {
    local k
    for k in $(pgrep -P "$1"); do echo "$k"; descendants "$k"; done
}

# poisoned NAME REASON QC-SUBMIT-ARGS...: a run of the list that must end
# with exit 1, each slide once, the poison slide alone failed with REASON
# (a regular expression; the end of its error.log line)
poisoned() {
    local name=$1 reason=$2 rc
    shift 2
    timeout 120 "$BIN/qc-submit" -o "$T/$name" --list "$T/list" "$@" >"$T/$name.log" 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "$name: exit $rc, expected 1: $(tail -3 "$T/$name.log")"
    check_exactly_once "$T/$name" "$T/list"
    [ "$(wc -l <"$T/$name/error.log")" -eq 1 ] \
        || fail "$name: only the poison slide may fail: $(cat "$T/$name/error.log")"
    grep -q "POISON.svs.*$reason\$" "$T/$name/error.log" \
        || fail "$name: the poison slide's reason: $(cat "$T/$name/error.log")"
}

# 1. a slide that crashes the worker process: failed, the others pass
poisoned crash "slide ran 3 times without a result (crashed.*crashed while running it: signal 6 (Aborted)); not retried" \
    -w 2 --test-crash-on POISON
grep -q "local: the worker process died of signal 6 (Aborted) while running 1 task" "$T/crash.log" \
    || fail "the crash was not said: $(cat "$T/crash.log")"
grep -q "^8 slides: 7 passed, 1 failed" "$T/crash.log" || fail "crash: the summary: $(tail -3 "$T/crash.log")"
# the failure is the local worker's on the progress line: a one-process
# user started no broker
grep -q "^FAILED [0-9]*/8 POISON.svs (local): " "$T/crash.log" \
    || fail "crash: the progress line: $(grep POISON "$T/crash.log" | grep -v WARNING)"
# each crash named its slide: the worker process started again after 1 s
# each time, not after a delay doubling to a minute (9 crashing slides of
# 12 took 25 minutes)
delays=$(grep -o 'restarting the worker process in [0-9]* s' "$T/crash.log" | grep -o '[0-9]* s$' | sort -u | tr '\n' ' ')
[ "$delays" = "1 s " ] || fail "crash: restart delays '$delays', expected 1 s each"
[ -z "$(ls -A "$TMPDIR")" ] || fail "a socket folder was left: $(ls -A "$TMPDIR")"
pass "a slide that crashes the one-process mode's worker failed after its runs; 7 others passed in the same run"

# 2. a slide whose worker process is killed (the OOM killer's way): failed
#    as likely this machine's memory; the next run tries it again
poisoned kill "signal 9 (Killed)); not retried in this job (killed as the kernel's OOM killer does.*a rerun tries again)" \
    -w 2 --test-kill-on POISON
timeout 120 "$BIN/qc-submit" -w 2 -o "$T/kill" --list "$T/list" >"$T/kill2.log" 2>&1 \
    || fail "kill: the rerun: $(tail -3 "$T/kill2.log")"
check_exactly_once "$T/kill" "$T/list"
[ -s "$T/kill/error.log" ] && fail "the rerun left a failure: $(cat "$T/kill/error.log")"
grep -q "POISON.svs" "$T/kill/results.tsv" || fail "the killed slide has no row after the rerun"
pass "a slide whose worker process was killed failed for the machine's memory; the rerun passed it"

# 3. qc-submit killed with -9: its worker processes go with it; the same
#    command again finishes the cohort, each slide once
for i in $(seq 1 30); do
    ln -s "$(readlink -f "$(head -1 "$T/list")")" "$T/cohort/many-$i.svs"
    echo "$T/cohort/many-$i.svs"
done >"$T/many"
"$BIN/qc-submit" -w 1 -o "$T/k9" --list "$T/many" >"$T/k9.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "a first result" 60 "grep -q '^ok' '$T/k9.log'"
kids=$(descendants $sub)
[ "$(echo "$kids" | grep -c .)" -ge 2 ] || fail "expected a supervisor and a worker process under qc-submit: '$kids'"
kill -9 $sub
wait $sub 2>/dev/null
for i in $(seq 1 50); do
    alive=$(for k in $kids; do kill -0 "$k" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$k/status" 2>/dev/null && echo "$k"; done)
    [ -z "$alive" ] && break
    sleep 0.1
done
[ -z "$alive" ] || fail "worker processes outlived qc-submit's kill -9: $alive"
# the kill -9 left its socket folder (nothing could remove it); the next
# run removes it, once its socket is a few seconds old (made so here), as
# it removes an empty one over an hour old, and nothing else
left=$(ls -A "$TMPDIR")
[ "$(echo "$left" | grep -c '^qc-submit-')" -eq 1 ] || fail "after kill -9: '$left'"
touch -h -d '1 minute ago' "$TMPDIR/$left/broker" "$TMPDIR/$left"
mkdir -m 700 "$TMPDIR/qc-submit-Old0ne" "$TMPDIR/qc-submit-young1" "$TMPDIR/qc-submit-x"
mkdir -m 755 "$TMPDIR/qc-submit-open01"
touch -d '2 hours ago' "$TMPDIR/qc-submit-Old0ne" "$TMPDIR/qc-submit-open01"
timeout 120 "$BIN/qc-submit" -w 1 -o "$T/k9" --list "$T/many" >"$T/k9b.log" 2>&1 \
    || fail "k9: the rerun: $(tail -3 "$T/k9b.log")"
check_exactly_once "$T/k9" "$T/many"
[ "$(ls -A "$TMPDIR" | sort | tr '\n' ' ')" = "qc-submit-open01 qc-submit-x qc-submit-young1 " ] \
    || fail "the folders left after the rerun: $(ls -A "$TMPDIR" | tr '\n' ' ') (the killed run's was $left)"
rmdir "$TMPDIR"/qc-submit-*
pass "kill -9 of qc-submit took its worker processes with it; the same command finished, each slide once; its socket folder was removed by the next run"

# 4. Ctrl-C: exit 130, its worker processes end with it, and its socket
#    folder; a run beside it leaves that folder alone (its socket answers)
for i in $(seq 1 300); do      # more than a run beside it lets it finish
    ln -s "$(readlink -f "$(head -1 "$T/list")")" "$T/cohort/more-$i.svs"
    echo "$T/cohort/more-$i.svs"
done >"$T/more"
"$BIN/qc-submit" -w 1 -f -o "$T/int" --list "$T/more" >"$T/int.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "a first result" 60 "grep -q '^ok' '$T/int.log'"
kids=$(descendants $sub)
running=$(ls -A "$TMPDIR")
touch -h -d '1 minute ago' "$TMPDIR/$running/broker"
timeout 120 "$BIN/qc-submit" -w 1 -o "$T/beside" "$(head -1 "$T/many")" >"$T/beside.log" 2>&1 \
    || fail "a run beside another: $(tail -3 "$T/beside.log")"
[ "$(ls -A "$TMPDIR")" = "$running" ] && [ -S "$TMPDIR/$running/broker" ] \
    || fail "a run beside another touched its socket folder: '$(ls -A "$TMPDIR")', was '$running'"
grep -q '^ok' "$T/int.log" && kill -0 $sub || fail "the run beside ended this one"
kill -INT $sub
wait_exit $sub 30; rc=$?
[ $rc -eq 130 ] || fail "Ctrl-C: exit $rc, expected 130: $(tail -3 "$T/int.log")"
for k in $kids; do
    kill -0 "$k" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$k/status" 2>/dev/null \
        && fail "worker process $k outlived qc-submit's Ctrl-C"
done
[ -z "$(ls -A "$TMPDIR")" ] || fail "Ctrl-C left a socket folder: $(ls -A "$TMPDIR")"
pass "Ctrl-C: exit 130, the worker processes ended; a run beside it left its socket folder alone"

# 5. a slide that never finishes, one slot: past --task-timeout it runs
#    again, on a new worker process once it ran as long again (the
#    stuck one cannot be stopped otherwise), and fails after 3 such runs;
#    the others pass
cheap_config "$T/cheap.ini"     # slides of milliseconds: none slow on a busy machine
poisoned hang "slide ran 3 times without a result (crashed, or past the task timeout; last: it ran past the 3 s task timeout); not retried" \
    -w 1 -c "$T/cheap.ini" --task-timeout 3 --test-hang-on POISON
grep -q "local: starting a new worker process (the old one's slots were stuck on slides past the task timeout)" \
    "$T/hang.log" || fail "hang: no new worker process said: $(cat "$T/hang.log")"
pass "a slide that never finishes, one slot: run again on a new worker process, failed after 3 deadlines; 7 others passed"

# 6. a stop signal sent to the worker process itself is ignored (qc-submit
#    decides when it ends: CZMQ's handler spun it at full CPU, and the run
#    waited for ever); the supervisor killed: qc-submit says so and stops
#    (exit 5) instead of waiting for a worker that cannot come; the same
#    command goes on
"$BIN/qc-submit" -w 1 -o "$T/term" --list "$T/many" >"$T/term.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "a first result" 60 "grep -q '^ok' '$T/term.log'"
sup=$(pgrep -P $sub | head -1)
wk=$(pgrep -P "$sup" | head -1)
[ -n "$sup" ] && [ -n "$wk" ] || fail "term: no supervisor or worker under qc-submit"
kill -TERM "$wk"; kill -INT "$wk"; kill -HUP "$sup"
wait_exit $sub 120; rc=$?
[ $rc -eq 0 ] || fail "term: exit $rc, expected 0 (the signals ignored): $(tail -3 "$T/term.log")"
check_exactly_once "$T/term" "$T/many"
"$BIN/qc-submit" -w 1 -o "$T/sk" --list "$T/many" >"$T/sk.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "a first result" 60 "grep -q '^ok' '$T/sk.log'"
sup=$(pgrep -P $sub | head -1)
kill -9 "$sup"
wait_exit $sub 30; rc=$?
[ $rc -eq 5 ] || fail "supervisor killed: exit $rc, expected 5: $(tail -3 "$T/sk.log")"
grep -q "^qc-submit: the process running the slides ($sup) was killed by signal 9 (Killed): no slide can run, stopping" \
    "$T/sk.log" || fail "supervisor killed: not said: $(tail -3 "$T/sk.log")"
grep -q "^qc-submit: what it wrote is kept in $T/sk: run the same qc-submit command again to go on" \
    "$T/sk.log" || fail "supervisor killed: how to go on not said: $(tail -3 "$T/sk.log")"
timeout 120 "$BIN/qc-submit" -w 1 -o "$T/sk" --list "$T/many" >"$T/sk2.log" 2>&1 \
    || fail "supervisor killed: the rerun: $(tail -3 "$T/sk2.log")"
check_exactly_once "$T/sk" "$T/many"
pass "stop signals to the worker processes ignored; its supervisor killed: said, exit 5, the rerun finished"
