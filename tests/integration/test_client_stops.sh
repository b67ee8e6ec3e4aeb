#!/bin/bash
# A client through a broker that stops before its job is whole: its disk
# refuses a write (a file-size limit, as a full disk), or it is stopped
# (SIGHUP: the ssh session closed). The result it could not write is
# not acknowledged, so the broker keeps it; the same command run again
# fetches the job's results first (no second job runs its slides
# again), then runs what is left: every slide exactly once.
. "$(dirname "$0")/lib.sh"

make_cohort "$T/cohort" 40 >/dev/null
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 2 --heartbeat-ms 200 --task-delay-ms 100
wait_for "worker registered" 10 "workers_registered $port 1"

# 1. 200 KB per file: the generated slides' images fit, a real slide's
#    thumbnail (about 290 KB) does not
( ulimit -f 200; exec timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" \
      --list "$T/cohort/list" ) >"$T/full.log" 2>&1
rc=$?
[ $rc -eq 5 ] || fail "a refused write: exit $rc, expected 5 (stopped short): $(tail -3 "$T/full.log")"
grep -q "^qc-submit: cannot write .*: File too large" "$T/full.log" || fail "no reason: $(tail -5 "$T/full.log")"
grep -q "run the same qc-submit command again (it fetches the job's results first)" "$T/full.log" \
    && grep -q -- "--attach [0-9]* -o $T/out\$" "$T/full.log" || fail "advice: $(tail -4 "$T/full.log")"
job=$(awk '/^job /{print $2; exit}' "$T/out/.qc-job")
had=$(grep -c '^done' "$T/out/.qc-job")
[ "$had" -lt 40 ] || fail "every result was written: the limit refused nothing"
pass "a write refused (EFBIG) after $had results: exit 1, the reason and how to go on said"

# the same command again, no limit: the job's results first, then nothing left
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/cohort/list" \
    >"$T/again.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "rerun: exit $rc (1: the cohort has failed slides): $(tail -3 "$T/again.log")"
grep -q "holds job $job, and $((40 - had)) of its [0-9]* slides have no result there yet: fetching them first" \
    "$T/again.log" || fail "the attach first not said: $(head -3 "$T/again.log")"
grep -q "nothing to run: every slide of the cohort is accounted for" "$T/again.log" \
    || fail "a new job was made: $(cat "$T/again.log")"
# the fetched results are said to be fetched, not "skipped" (which reads
# as if they never ran)
grep -q "has 40 of these 40 slides (.*), $((40 - had)) of them fetched from job $job just now: not run again" \
    "$T/again.log" && ! grep -q "skipped" "$T/again.log" \
    || fail "what was fetched not said: $(grep -E 'has|skipped' "$T/again.log")"
[ "$(grep -c 'submitted' "$T/broker.log")" = 1 ] || fail "submitted twice: $(grep submitted "$T/broker.log")"
check_exactly_once "$T/out" "$T/cohort/list"
pass "the same command again fetched job $job's other results (the refused one too): one job, every slide once"

# 1b. the same in one process: the refused write is said with how to go
#     on (run it again; without -f when the run had it), and the same
#     command again without the limit finishes the cohort
( ulimit -f 200; exec timeout 120 "$BIN/qc-submit" -n 1 -f -o "$T/lfull" "$SHARED/slides/real/CMU-1-Small-Region.svs" \
      ) >"$T/lfull.log" 2>&1
rc=$?
[ $rc -eq 5 ] && grep -q "^qc-submit: cannot write .*: File too large" "$T/lfull.log" \
    && grep -q "once the cause is mended, run the same qc-submit command again without -f: the slides already in $T/lfull are skipped" \
        "$T/lfull.log" || fail "one process, a refused write: exit $rc: $(tail -3 "$T/lfull.log")"
timeout 120 "$BIN/qc-submit" -n 1 -o "$T/lfull" "$SHARED/slides/real/CMU-1-Small-Region.svs" \
    >"$T/lfull2.log" 2>&1 || fail "one process, again: $(tail -3 "$T/lfull2.log")"
[ "$(grep -vc '^#' "$T/lfull/results.tsv")" -eq 1 ] || fail "one process, again: not one row"
pass "one process: a refused write says to run the command again (without -f), which finishes"

# 1c. one process stopped by a crash signal inside a library (GLib stops
#     a process with SIGTRAP when an allocation fails): it dies of that
#     signal, saying what it most often means and how to go on; the same
#     command again finishes the cohort, each slide once
head -12 "$T/cohort/list" >"$T/list12"
"$BIN/qc-submit" -w 1 -o "$T/trap" --list "$T/list12" >"$T/trap.log" 2>&1 &
trapped=$!
PIDS+=($trapped)
wait_for "a first result" 60 "grep -q '^ok' '$T/trap.log'"
kill -TRAP $trapped
wait $trapped; rc=$?
[ $rc -eq 133 ] || fail "SIGTRAP: exit $rc, expected 133 (died of it): $(tail -3 "$T/trap.log")"
grep -q "^qc-submit: stopped by SIGTRAP (how GLib, inside OpenSlide, stops a process whose allocation failed: memory ran out?). What it wrote is kept: run the same command again to go on" \
    "$T/trap.log" || fail "SIGTRAP not said: $(tail -3 "$T/trap.log")"
timeout 120 "$BIN/qc-submit" -w 1 -o "$T/trap" --list "$T/list12" >"$T/trap2.log" 2>&1
check_exactly_once "$T/trap" "$T/list12"
pass "one process stopped by SIGTRAP: it said why and how to go on; the same command finished, each slide once"

# 2. SIGHUP mid-job (the terminal closed): exit 130, the job goes on; the
#    same command again fetches it, while a -f run would start afresh
start_worker $port w2 --slots 1 --heartbeat-ms 200 --task-delay-ms 400
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/hup" --list "$T/cohort/list" >"$T/hup.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "some results" 30 "[ \$(cat '$T/hup/.qc-job' 2>/dev/null | grep -c '^done') -ge 5 ]"
kill -HUP $sub
wait $sub; rc=$?
[ $rc -eq 130 ] || fail "SIGHUP: exit $rc, expected 130"
grep -q "Job [0-9]* goes on at the broker. To go on, run the same qc-submit command again" "$T/hup.log" \
    || fail "SIGHUP: $(tail -4 "$T/hup.log")"
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/hup" --list "$T/cohort/list" \
    >"$T/hup2.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "after SIGHUP, the same command: exit $rc: $(tail -3 "$T/hup2.log")"
[ "$(grep -c 'submitted' "$T/broker.log")" = 2 ] || fail "the rerun submitted again: $(grep submitted "$T/broker.log")"
check_exactly_once "$T/hup" "$T/cohort/list"
pass "SIGHUP: exit 130, the job went on, the same command fetched it: every slide once, no second job"

# 2b. killed between writing .qc-slides and .qc-job as it started a job
#     (made here by giving .qc-slides another job's line): the folder's
#     job cannot be told whole, so the same command again fetches what the
#     broker holds of it first, rather than running its slides again
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/torn" --list "$T/cohort/list" >"$T/torn.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "some results" 30 "[ \$(cat '$T/torn/.qc-job' 2>/dev/null | grep -c '^done') -ge 3 ]"
kill -9 $sub; wait $sub 2>/dev/null
job=$(awk '/^job /{print $2; exit}' "$T/torn/.qc-job")
sed -i "1s/.*/job $((job + 1000))/" "$T/torn/.qc-slides"
before=$(grep -c 'submitted' "$T/broker.log")
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/torn" --list "$T/cohort/list" \
    >"$T/torn2.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "slide list torn, the same command: exit $rc: $(tail -3 "$T/torn2.log")"
grep -q "holds job $job, but not its slide list (.qc-slides is another job's or gone).*fetching what the broker holds of it first" \
    "$T/torn2.log" || fail "the attach first not said: $(head -3 "$T/torn2.log")"
[ "$(grep -c 'submitted' "$T/broker.log")" = "$before" ] \
    || fail "slide list torn: the rerun submitted again: $(grep submitted "$T/broker.log")"
check_exactly_once "$T/torn" "$T/cohort/list"
pass "a .qc-slides of another job without its key (an older folder): the same command fetched job $job, no second job, every slide once"

# 2c. killed between writing .qc-slides and .qc-job as it started job N2
#     (.qc-slides names N2 with its key, .qc-job still the job before):
#     the same command again takes N2 as the folder's job and fetches it,
#     instead of leaving it running unseen and running its slides in N3.
#     The state is made with two real jobs on a broker with no worker yet:
#     N1 into the folder, N2 of the same cohort into another, whose
#     .qc-slides is then copied over
p5=$(free_port)
"$BIN/qc-broker" --bind tcp://127.0.0.1:$p5 --state "$T/st5" --heartbeat-ms 200 >"$T/b5.log" 2>&1 &
b5=$!
PIDS+=($b5)
wait_for "broker 5 listening" 10 "grep -q 'listening on' '$T/b5.log'"
for d in n1 n2; do
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$p5 -o "$T/$d" --list "$T/cohort/list" >"$T/$d.log" 2>&1 &
    sub=$!
    PIDS+=($sub)
    wait_for "job of $d accepted" 20 "grep -q '^job ' '$T/$d/.qc-job' 2>/dev/null"
    kill -9 $sub; wait $sub 2>/dev/null
done
n2=$(awk '/^job /{print $2; exit}' "$T/n2/.qc-job")
cp "$T/n2/.qc-slides" "$T/n1/.qc-slides"
start_worker $p5 w5 --slots 2 --heartbeat-ms 200
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p5 -o "$T/n1" --list "$T/cohort/list" \
    >"$T/n1b.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "torn start, the same command: exit $rc: $(tail -3 "$T/n1b.log")"
grep -q "last run was stopped as it started job $n2 .*taking job $n2 as the folder's" "$T/n1b.log" \
    || fail "job $n2 not taken: $(head -3 "$T/n1b.log")"
[ "$(grep -c 'job [0-9]* submitted' "$T/b5.log")" = 2 ] || fail "a third job: $(grep submitted "$T/b5.log")"
check_exactly_once "$T/n1" "$T/cohort/list"
kill -TERM $b5; wait $b5 2>/dev/null
pass "killed as it started job $n2 (.qc-slides written, .qc-job not): the same command took job $n2 and fetched it, no third job, every slide once"

# 3. the folder's job is on a broker that is gone: the same command again
#    says so after --timeout (exit 3), it does not wait for ever; with its
#    results.tsv deleted, the rerun does not fetch the job into it (no
#    header to write under): it says so and runs the slides in a new job
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/gone" --list "$T/cohort/list" >"$T/gone.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "some results" 30 "[ \$(cat '$T/gone/.qc-job' 2>/dev/null | grep -c '^done') -ge 2 ]"
kill -9 $sub; wait $sub 2>/dev/null
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port --timeout 3 -o "$T/gone" \
    --list "$T/cohort/list" >"$T/gone2.log" 2>&1
rc=$?
[ $rc -eq 3 ] && grep -q "no answer from broker tcp://127.0.0.1:$port in 3 s" "$T/gone2.log" \
    || fail "the folder's broker gone: exit $rc: $(tail -3 "$T/gone2.log")"
start_broker $port --heartbeat-ms 200
rm "$T/gone/results.tsv"
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/gone" --list "$T/cohort/list" \
    >"$T/gone3.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "note: $T/gone's job [0-9]* is not fetched first (its results.tsv is gone)" "$T/gone3.log" \
    || fail "results.tsv deleted: exit $rc: $(head -3 "$T/gone3.log")"
pass "the folder's broker gone: exit 3 after --timeout; results.tsv deleted: said, the slides run in a new job"

# 4. started with nohup (SIGHUP ignored, to outlive the terminal): a
#    SIGHUP changes nothing; without nohup a broker stops as on SIGTERM
p2=$(free_port)
nohup "$BIN/qc-broker" --bind tcp://127.0.0.1:$p2 --state none >"$T/nohup.log" 2>&1 &
nb=$!
PIDS+=($nb)
wait_for "broker listening" 10 "grep -q 'listening on' '$T/nohup.log'"
kill -HUP $nb; sleep 0.5
kill -0 $nb 2>/dev/null || fail "a broker started with nohup stopped on SIGHUP"
kill -TERM $nb; wait $nb 2>/dev/null
p3=$(free_port)
"$BIN/qc-broker" --bind tcp://127.0.0.1:$p3 --state none >"$T/hup-broker.log" 2>&1 &
hb=$!
PIDS+=($hb)
wait_for "broker listening" 10 "grep -q 'listening on' '$T/hup-broker.log'"
kill -HUP $hb
for i in $(seq 1 50); do kill -0 $hb 2>/dev/null || break; sleep 0.1; done
kill -0 $hb 2>/dev/null && fail "a broker did not stop on SIGHUP"
wait $hb; rc=$?
[ $rc -eq 0 ] || fail "a broker stopped by SIGHUP: exit $rc (0: stopped as on SIGTERM)"
pass "SIGHUP: ignored under nohup, else a clean stop (exit 0)"

# a script's background job starts with SIGINT ignored: it stops all
# the same, cleanly (scripts stop their programs with kill -INT)
pi=$(free_port)
"$BIN/qc-broker" --bind tcp://127.0.0.1:$pi --state none >"$T/int-ign.log" 2>&1 &
ib=$!
PIDS+=($ib)
wait_for "broker listening" 10 "grep -q 'listening on' '$T/int-ign.log'"
kill -INT $ib
for _ in $(seq 1 50); do kill -0 $ib 2>/dev/null || break; sleep 0.1; done
kill -0 $ib 2>/dev/null && fail "a broker started with SIGINT ignored did not stop on SIGINT"
wait $ib; rc=$?
[ $rc -eq 0 ] || fail "a broker stopped by SIGINT: exit $rc"
pass "SIGINT: a clean stop, even of a script's background job (SIGINT ignored)"

# 5. a supervised worker (the default) whose terminal closes: the
#    terminal signals both its processes; it drains as on SIGTERM (its
#    running task finished and delivered, exit 0), not killed with the
#    supervisor (exit 129, "declared dead", the task run again)
p4=$(free_port)
start_broker $p4 --heartbeat-ms 200
start_worker $p4 hw --slots 1 --heartbeat-ms 200 --task-delay-ms 3000
sup=$WORKER_PID
wait_for "worker registered" 10 "workers_registered $p4 1"
child=$(pgrep -P $sup | head -1)
[ -n "$child" ] || fail "the worker's supervised process not found"
head -1 "$T/cohort/list" >"$T/one.list"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p4 -o "$T/hupw" --list "$T/one.list" \
    >"$T/hupw.log" 2>&1 &
sub=$!
PIDS+=($sub)
# the task is running (its 3 s of delay before its work): the broker
# counts it running, and the worker has had it for a moment
wait_for "the task running" 20 "\"\$BIN/qc-status\" --broker tcp://127.0.0.1:$p4 --timeout 3 | awk '\$1 ~ /^[0-9]+$/ && \$6 == 1' | grep -q ."
sleep 0.5
kill -HUP $sup $child
wait $sup; rc=$?
[ $rc -eq 0 ] || fail "a supervised worker's SIGHUP: exit $rc (0: drained as on SIGTERM): $(tail -3 "$T/worker-hw.log")"
grep -q "leaving: finishing running tasks" "$T/worker-hw.log" || fail "no drain: $(tail -3 "$T/worker-hw.log")"
wait $sub; rc=$?
[ $rc -eq 0 ] || fail "the drained worker's task: client exit $rc: $(tail -3 "$T/hupw.log")"
grep -q "worker hw .*declared dead" "$T/broker.log" && fail "the worker was declared dead"
check_exactly_once "$T/hupw" "$T/one.list"
pass "a supervised worker's terminal closed: drained (its running task delivered), exit 0"

# 5. --give-up S: a broker that stops answering mid-job (here stopped
#    with SIGSTOP, as a hung or partitioned host) ends an unattended
#    client after S seconds with exit 3 and how to go on, instead of
#    waiting for ever
p5=$(free_port)
"$BIN/qc-broker" --bind tcp://127.0.0.1:$p5 --state none >"$T/broker-gu.log" 2>&1 &
gb=$!
PIDS+=($gb)
wait_for "the give-up broker" 10 "grep -q 'listening on' '$T/broker-gu.log'"
start_worker $p5 gu --slots 1 --task-delay-ms 2000
gw=$WORKER_PID
head -3 "$T/cohort/list" >"$T/three.list"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$p5 --give-up 2 -o "$T/giveup" --list "$T/three.list" \
    >"$T/giveup.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "the job accepted" 20 "grep -q '^job ' '$T/giveup/.qc-job' 2>/dev/null" "$T/giveup.log"
kill -STOP $gb
for _ in $(seq 1 300); do kill -0 $sub 2>/dev/null || break; sleep 0.1; done
kill -0 $sub 2>/dev/null && { kill -CONT $gb; fail "--give-up 2: still waiting after 30 s: $(tail -3 "$T/giveup.log")"; }
wait $sub; rc=$?
kill -CONT $gb
[ $rc -eq 3 ] && grep -q "silent for [0-9]* s: giving up (--give-up 2)" "$T/giveup.log" \
    && grep -q -- "--attach [0-9]* -o $T/giveup" "$T/giveup.log" \
    || fail "--give-up 2: exit $rc: $(tail -4 "$T/giveup.log")"
kill -TERM $gw $gb; wait $gw $gb 2>/dev/null
pass "--give-up: a broker silent mid-job ends the client (exit 3), saying how to go on"


# 6. interrupted after its first SUBMIT, before the broker's ACCEPTED:
#    the broker held still by gdb in the fdatasync that puts the job on
#    disk (after taking the SUBMIT, before answering it), the client is
#    sent SIGINT; it cancels the job the broker took, by its key and then
#    by its id, and says so. Without it the job ran for no one.
command -v gdb >/dev/null || fail "gdb is not installed (run tests/install-deps.sh)"
p6=$(free_port)
"$BIN/qc-broker" --bind tcp://127.0.0.1:$p6 --state "$T/state-ck" >"$T/broker-ck.log" 2>&1 &
cb=$!
PIDS+=($cb)
wait_for "the cancel-by-key broker" 10 "grep -q 'listening on' '$T/broker-ck.log'"
gdb -p $cb -batch -ex 'break fdatasync' -ex 'continue' \
    -ex "shell kill -INT \$(cat '$T/ck.pid'); sleep 1" -ex 'delete' -ex 'detach' >"$T/gdb.log" 2>&1 &
gp=$!
PIDS+=($gp)
wait_for "gdb attached" 20 "grep -q 'Breakpoint 1 at\\|ptrace' '$T/gdb.log'" "$T/gdb.log"
if ! grep -q 'Breakpoint 1 at' "$T/gdb.log"; then
    echo "note: gdb cannot attach to a process here ($(grep -m1 ptrace "$T/gdb.log")): the interrupt before ACCEPTED not checked"
    kill $gp 2>/dev/null
else
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$p6 -o "$T/ck" --list "$T/three.list" \
        >"$T/ck.log" 2>&1 &
    sub=$!
    echo $sub >"$T/ck.pid"
    PIDS+=($sub)
    for _ in $(seq 1 300); do kill -0 $sub 2>/dev/null || break; sleep 0.1; done
    wait $sub; rc=$?
    wait $gp 2>/dev/null
    [ $rc -eq 130 ] && grep -q "interrupted before the broker accepted the job: nothing was written; job 1, which the broker had taken, is cancelled" "$T/ck.log" \
        || fail "interrupted before ACCEPTED: exit $rc: $(cat "$T/ck.log") / $(tail -3 "$T/gdb.log")"
    grep -q "job 1 cancelled by its own client" "$T/broker-ck.log" || fail "the broker did not cancel job 1"
    kill -TERM $cb; wait $cb 2>/dev/null
    pass "interrupted before the broker's ACCEPTED: the job it took is cancelled, and said"
fi
