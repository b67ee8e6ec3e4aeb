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
bad=$WORKER_PID
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
[ $took -ge 8 ] || grep -q "^bad: takes no new slide for [0-9]* s more: its machine failed slides (memory or file descriptors short, or its cache disk full), which run again elsewhere or after the pause$" \
    "$T/status.log" || fail "qc-status did not say why bad takes nothing: $(cat "$T/status.log")"
pass "slides failed by a worker's machine ran again on the other worker; that worker was paused, and qc-status said why"

# with no other worker, the slides wait for the machine: a worker whose
# machine fails every slide for a while (memory another program held,
# here while a file exists) takes them again after its pause, and the
# cohort passes once the machine is well (before: every slide failed in
# seconds). A machine that stays short is given up on after 5 minutes:
# test_sched_trouble.
kill -TERM $good $bad
wait $good $bad 2>/dev/null
wait_for "both workers gone" 10 "! workers_registered $port 1"
: >"$T/short"
start_worker $port lone --slots 2 --heartbeat-ms 200 --test-trouble-while "$T/short"
wait_for "the lone worker registered" 10 "grep -q 'worker lone joined' '$T/broker.log'"
timeout 160 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out2" --list "$T/list" \
    >"$T/submit2.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "the lone worker paused" 20 \
    "grep -q 'worker lone failed .* for its machine, not the slide: .*; the slide runs again on lone once its pause ends (time 1; no other worker can take it: it waits for this machine, 300 s at most), and lone takes no new slide for 10 s' '$T/broker.log'"
"$BIN/qc-status" --broker tcp://127.0.0.1:$port >"$T/status2.log" 2>&1
grep -q "^lone: takes no new slide for [0-9]* s more: its machine failed slides" "$T/status2.log" \
    || fail "qc-status did not say why lone takes nothing: $(cat "$T/status2.log")"
# the same for scripts: the worker's state word ends its --tsv line,
# and the note names its worker in a field of its own
"$BIN/qc-status" --broker tcp://127.0.0.1:$port --tsv >"$T/status2.tsv" 2>&1
awk -F'\t' '$1 == "worker" && $2 == "lone" && $12 == "paused" { w = 1 }
            $1 == "note" && $2 == "lone" && $3 ~ /^lone: takes no new slide/ { n = 1 }
            END { exit !(w && n) }' "$T/status2.tsv" \
    || fail "qc-status --tsv does not give lone's state: $(cat "$T/status2.tsv")"
# short for longer than 2 sendings back (30 s): they counted here once,
# and failed the slides then (an operator's review)
wait_for "the third sending back" 60 "grep -q 'runs again on lone once its pause ends (time 3;' '$T/broker.log'"
rm -f "$T/short"                       # the machine is well again
wait_exit $sub 80; rc=$?
[ $rc -eq 0 ] || fail "one worker short of memory for a while: exit $rc, expected 0: $(tail -3 "$T/submit2.log"; cat "$T/out2/error.log" 2>/dev/null)"
check_exactly_once "$T/out2" "$T/list"
[ "$(grep -c '(lone)$' "$T/submit2.log")" -eq 8 ] \
    || fail "not every slide ran on lone: $(grep -E '^(ok|FAILED)' "$T/submit2.log")"
grep -q "that failure stands" "$T/broker.log" && fail "a failure stood: $(grep 'that failure stands' "$T/broker.log" | head -2)"
pass "with no other worker the slides wait for the machine whose memory was short (over 30 s), and pass once it is well"

# a machine that stays short: waited for --trouble-wait (here 3 s; 300
# by default), then given up on: its failures stand at once, marked, the
# broker and qc-status say so; well again, the same command runs them
tport=$(free_port)
start_broker $tport --heartbeat-ms 200 --trouble-wait 3
: >"$T/short3"
start_worker $tport stuck --slots 2 --heartbeat-ms 200 --test-trouble-while "$T/short3"
wait_for "the stuck worker registered" 10 "workers_registered $tport 1"
head -4 "$T/list" >"$T/list-stuck"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$tport -o "$T/out-stuck" --list "$T/list-stuck" \
    >"$T/submit-stuck1.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "a machine that stays short: exit $rc, expected 1: $(tail -3 "$T/submit-stuck1.log")"
[ "$(grep -c 'memory ran out on this machine.*a rerun tries again)$' "$T/out-stuck/error.log")" -eq 4 ] \
    || fail "a machine that stays short: $(cat "$T/out-stuck/error.log")"
grep -q "worker stuck: its machine has failed slides for [0-9]* s (.*), and no other worker can take them: its failures of that kind stand from now on" \
    "$T/broker.log" || fail "the give-up not logged: $(grep 'worker stuck' "$T/broker.log" | tail -3)"
"$BIN/qc-status" --broker tcp://127.0.0.1:$tport >"$T/status-stuck1.log" 2>&1
grep -q "^stuck: its machine has failed slides (memory or file descriptors short, or its cache disk full) for [0-9]* s with no other worker" \
    "$T/status-stuck1.log" || fail "qc-status did not say stuck was given up on: $(cat "$T/status-stuck1.log")"
"$BIN/qc-status" --broker tcp://127.0.0.1:$tport --tsv >"$T/status-stuck1.tsv" 2>&1
awk -F'\t' '$1 == "worker" && $2 == "stuck" && $12 == "failing" { w = 1 } END { exit !w }' \
    "$T/status-stuck1.tsv" || fail "qc-status --tsv: stuck not failing: $(cat "$T/status-stuck1.tsv")"
rm -f "$T/short3"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$tport -o "$T/out-stuck" --list "$T/list-stuck" \
    >"$T/submit-stuck2.log" 2>&1 || fail "well again: exit $?: $(tail -3 "$T/submit-stuck2.log")"
[ "$(grep -vc '^#' "$T/out-stuck/results.tsv")" -eq 4 ] || fail "well again: $(cat "$T/out-stuck/results.tsv")"
"$BIN/qc-status" --broker tcp://127.0.0.1:$tport >"$T/status-stuck2.log" 2>&1
grep -q "^stuck: its machine has failed" "$T/status-stuck2.log" && fail "still given up on after passes"
"$BIN/qc-status" --broker tcp://127.0.0.1:$tport --tsv >"$T/status-stuck2.tsv" 2>&1
awk -F'\t' '$1 == "worker" && $2 == "stuck" && $12 == "idle" { w = 1 } END { exit !w }' \
    "$T/status-stuck2.tsv" || fail "qc-status --tsv: stuck not idle when well: $(cat "$T/status-stuck2.tsv")"
pass "a machine short for longer than --trouble-wait: given up on (failures marked, said by the broker and qc-status); well again, the same command ran them"

# A worker of an older build refuses a config this build's qc-submit
# checked (a lab that upgraded its clients first: a parameter the old
# build does not know). The broker takes that as the worker's build, not
# the slide's: the slide runs again on a worker of this build, the old
# one is paused, and qc-status says why. With no other worker the
# failures stand, naming the build and marked for a rerun, which runs
# them once a worker of this build is there.
"$BIN/qc-submit" --write-default-config "$T/cfg.ini" >/dev/null 2>&1 || fail "--write-default-config"
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port old --slots 2 --heartbeat-ms 200 --test-old-build
old=$WORKER_PID
wait_for "the old worker registered" 10 "workers_registered $port 1"
start_worker $port new --slots 2 --heartbeat-ms 200 --task-delay-ms 200
new=$WORKER_PID
wait_for "both workers registered" 10 "workers_registered $port 2"
t0=$SECONDS
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/cfg.ini" -o "$T/out3" \
    --list "$T/list" >"$T/submit3.log" 2>&1
rc=$?
took=$((SECONDS - t0))
"$BIN/qc-status" --broker tcp://127.0.0.1:$port >"$T/status3.log" 2>&1
[ $rc -eq 0 ] || fail "an old worker beside a new one: exit $rc, expected 0: $(tail -3 "$T/submit3.log"; cat "$T/out3/error.log" 2>/dev/null)"
check_exactly_once "$T/out3" "$T/list"
[ "$(grep -c '(new)$' "$T/submit3.log")" -eq 8 ] \
    || fail "not every slide ran on the new worker: $(grep -E '^(ok|FAILED)' "$T/submit3.log")"
full=$("$BIN/qc-broker" --version | awk '{print $2}')
grep -q "worker old (qc 0.0.1-test-old-build, this broker qc $full) refused the config of job [0-9]*, which qc-submit checked: .*configuration error: --test-old-build.*; .* runs again (1 of 2), and old takes no new slide for 10 s; upgrade it" \
    "$T/broker.log" || fail "the broker did not say why: $(grep 'worker old' "$T/broker.log" | head -3)"
! grep -q "worker old failed .* for its machine" "$T/broker.log" \
    || fail "the old build's refusal was called its machine's"
[ $took -ge 8 ] || grep -q "^old: takes no new slide for [0-9]* s more: it runs qc 0.0.1-test-old-build, this broker qc $full, and refused a config qc-submit had checked; the slides run elsewhere (upgrade it)$" \
    "$T/status3.log" || fail "qc-status did not say why old takes nothing: $(cat "$T/status3.log")"
pass "slides whose config an older worker refused ran again on a worker of this build; the broker said which build refused"

kill -TERM $new
wait $new 2>/dev/null
wait_for "the new worker gone" 10 "! workers_registered $port 2"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/cfg.ini" -o "$T/out4" \
    --list "$T/list" >"$T/submit4.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "only an old worker: exit $rc, expected 1: $(tail -3 "$T/submit4.log")"
[ "$(grep -c "configuration error: --test-old-build.* (worker old runs qc 0.0.1-test-old-build, this broker qc $full: another build, .*; a rerun tries again)$" "$T/out4/error.log")" -eq 8 ] \
    || fail "only an old worker: $(cat "$T/out4/error.log")"
# with no -c the old worker runs its own build's built-in config: its
# rows came unmarked (an upgrade day's review); now said once, and each
# slide named in qc.log with the build that ran it
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out-builtin" \
    --list "$T/list" >"$T/submit-builtin.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "the built-in config on an old worker: exit $rc: $(tail -3 "$T/submit-builtin.log")"
[ "$(grep -c "^qc-submit: note: .* ran on old, a worker of another build (qc 0.0.1-test-old-build; this qc-submit: qc $full): with no -c each worker runs its own build's built-in config, so its numbers may differ from this build's; qc.log names each such slide" "$T/submit-builtin.log")" -eq 1 ] \
    || fail "the other build's rows are not said once: $(cat "$T/submit-builtin.log")"
[ "$(grep -c "WARNING.* ran on old, qc 0.0.1-test-old-build, with its own build's built-in config (this qc-submit: qc $full)" "$T/out-builtin/qc.log")" -eq 8 ] \
    || fail "qc.log does not name each slide of the other build: $(grep -c 'ran on old' "$T/out-builtin/qc.log")"
pass "with no -c, an older worker's rows are said (once), each named in qc.log with its build"
"$BIN/qc-status" --broker tcp://127.0.0.1:$port --tsv >"$T/status-build.tsv" 2>&1
grep -q "^note	old	old: runs qc 0.0.1-test-old-build, this broker qc $full: another build, whose results may differ from this build's workers' (upgrade it)$" \
    "$T/status-build.tsv" || fail "qc-status does not say which worker runs another build: $(cat "$T/status-build.tsv")"
pass "qc-status names a worker of another build (a rolling upgrade's)"
# as an older broker leaves it: the worker's reason alone, no mark
first=$(head -1 "$T/out4/error.log" | cut -f1)
sed -i '1s/\t.*/\tconfiguration error: [X] line 1: unknown parameter '"'"'y'"'"'/' "$T/out4/error.log"
kill -TERM $old
wait $old 2>/dev/null
start_worker $port new2 --slots 2 --heartbeat-ms 200
wait_for "a worker of this build registered" 10 "workers_registered $port 1"
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/cfg.ini" -o "$T/out4" \
    --list "$T/list" >"$T/submit5.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "the rerun after the upgrade: exit $rc, expected 0: $(tail -3 "$T/submit5.log"; cat "$T/out4/error.log")"
check_exactly_once "$T/out4" "$T/list"
[ "$(grep -c '(new2)$' "$T/submit5.log")" -eq 8 ] && [ ! -s "$T/out4/error.log" ] \
    || fail "the rerun did not run the 8 refused slides ($first's reason unmarked): $(grep -E '^(ok|FAILED)' "$T/submit5.log"; cat "$T/out4/error.log")"
pass "with only the old worker the refusals stood, naming its build, marked for a rerun; the rerun after the upgrade ran all 8 (one reason without the mark too)"
