#!/bin/bash
# The broker's state folder (--state): kill -9 of the broker mid-run and a
# restart on the same folder lose nothing; the client resumes by itself,
# every slide exactly once, rows equal to a run without faults; job ids
# are never used twice; a torn last journal record is dropped with a
# warning; a damaged one stops the broker with the record named, until
# --state-recover; an emptied journal beside result files stops it too, a
# state folder deleted while it runs is said;
# a second broker on the same folder is refused. The
# result file is rewritten without what the client acknowledged as the
# job goes (--results-compact-mb 1 here), before and after the restart.
. "$(dirname "$0")/lib.sh"

bad=$(make_cohort "$T/cohort" 80)
port=$(free_port)
state=$T/state
# refused_start LOG WHAT: a broker on $state that must not start (WHAT
# it is started on, for the failure); its exit code in $rc, its words in LOG
refused_start() {
    "$BIN/qc-broker" --bind tcp://127.0.0.1:$port --state "$state" >"$1" 2>&1 &
    local pid=$! i
    PIDS+=($pid)
    for i in $(seq 1 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
    kill -0 $pid 2>/dev/null && fail "the broker started on $2"
    wait $pid; rc=$?
}
start_broker $port --heartbeat-ms 200 --state "$state" --results-compact-mb 1
broker1=$BROKER_PID
start_worker $port w1 --slots 2 --heartbeat-ms 200 --task-delay-ms 60
start_worker $port w2 --slots 2 --heartbeat-ms 200 --task-delay-ms 60
wait_for "2 workers registered" 10 "workers_registered $port 2"

"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/cohort/list" \
    >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
wait_for "some results" 30 "[ \$(cat '$T/out/.qc-job' 2>/dev/null | grep -c '^done') -ge 15 ]"
kill -9 $broker1
wait $broker1 2>/dev/null
written=$(grep -c '^done' "$T/out/.qc-job")
[ "$written" -lt 80 ] || fail "the job ended before the broker was killed"
pass "broker killed with -9 after $written of 80 results"

# a second broker on the same folder is refused while one holds it
start_broker $port --heartbeat-ms 200 --state "$state" --results-compact-mb 1
"$BIN/qc-broker" --bind tcp://127.0.0.1:$(free_port) --state "$state" >"$T/second.log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "a second broker on the same state folder: exit $rc, expected 2"
grep -q "in use by another broker" "$T/second.log" || fail "no clear message: $(cat "$T/second.log")"
# the lock file looks like a stale pid file: deleted by hand, the folder
# itself still refuses a second broker
rm "$state/lock"
timeout 10 "$BIN/qc-broker" --bind tcp://127.0.0.1:$(free_port) --state "$state" >"$T/third.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "in use by another broker" "$T/third.log" \
    || fail "a second broker after the lock file was deleted: exit $rc: $(cat "$T/third.log")"
pass "a second broker on the same state folder is refused, also once its lock file is deleted"

# a broker that cannot bind (the port taken) makes no state folder (it
# binds first); one that was there stays
timeout 10 "$BIN/qc-broker" --bind tcp://127.0.0.1:$port --state "$T/made/state" >"$T/taken.log" 2>&1
rc=$?
[ $rc -eq 3 ] && grep -q "cannot bind" "$T/taken.log" || fail "port taken: exit $rc: $(cat "$T/taken.log")"
[ ! -e "$T/made" ] || fail "a broker that could not bind made a state folder: $(ls -R "$T/made")"
mkdir -p "$T/had"
timeout 10 "$BIN/qc-broker" --bind tcp://127.0.0.1:$port --state "$T/had" >"$T/taken2.log" 2>&1
[ -d "$T/had" ] || fail "a state folder that was there was removed"
pass "a broker that cannot bind makes no state folder, and leaves one that was there"

grep -q "1 job restored" "$T/broker.log" || fail "the job was not restored: $(tail -5 "$T/broker.log")"
for i in $(seq 1 600); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "qc-submit did not finish within 60 s of the restart"
wait $submit; rc=$?
[ $rc -eq 1 ] || fail "qc-submit exit $rc, expected 1 (some slides fail): $(tail -5 "$T/submit.log")"
check_exactly_once "$T/out" "$T/cohort/list"
[ "$(wc -l <"$T/out/error.log")" -eq "$bad" ] || fail "expected $bad failed slides"
grep -q "job 1: client attached, resending from result" "$T/broker.log" \
    || fail "the client did not attach to the restarted broker"
pass "the client resumed by itself: 80 slides, each exactly once"

# the same rows as the one-process default (no fault)
"$BIN/qc-submit" -o "$T/local" --list "$T/cohort/list" -q >"$T/local.log" 2>&1
diff <(rows "$T/out") <(rows "$T/local") >/dev/null || fail "rows differ from a run without faults"
diff <(errors "$T/out") <(errors "$T/local") >/dev/null || fail "error.log differs from a run without faults"
pass "rows equal to a run without faults"

grep -q 'job 1: result file rewritten without its' "$T/broker.log" \
    || fail "the result file was not rewritten as results were acknowledged"
total=$(du -sb "$T/out" | cut -f1)
wait_for "the result file to hold at most 2 MB of acknowledged results" 10 \
    "[ \$(stat -c %s '$state/results/1.qcr') -lt 2200000 ]"
pass "the result file was rewritten without acknowledged results ($(grep -c 'result file rewritten' "$T/broker.log") times; the job's output is $((total >> 20)) MB)"

# job ids go on after the restart: never the killed broker's 1 again
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out2" -q \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" || fail "second job failed"
grep -q '^job 2 ' "$T/out2/.qc-job" || fail "second job's id: $(head -1 "$T/out2/.qc-job")"
pass "job ids are not used twice across a restart"

# a result file deleted by hand: its slides run again, and the broker says so
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
[ -e "$state/results/2.qcr" ] || fail "job 2's result file is not there to delete"
rm "$state/results/2.qcr"
start_broker $port --heartbeat-ms 200 --state "$state"
grep -q "job 2: its result file $state/results/2.qcr is missing, though its client acknowledged 1 result: its slides run again" \
    "$T/broker.log" || fail "a missing result file not said: $(tail -3 "$T/broker.log")"
pass "a result file deleted by hand is said when the broker starts"

# a torn last record (the write a crash interrupts) is dropped, with a
# warning, and the broker starts
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
size=$(stat -c %s "$state/journal")
printf '\x40\x00\x00\x00\x12\x34\x56\x78\x03partial' >>"$state/journal"
start_broker $port --heartbeat-ms 200 --state "$state"
grep -q "was torn by a crash: dropped" "$T/broker.log" || fail "no warning for a torn record"
[ "$(stat -c %s "$state/journal")" -gt "$size" ] || true
pass "a torn last record is dropped with a warning"

# a damaged record in the middle: the broker names it and does not start
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
cp "$state/journal" "$T/journal.good"
damage_byte "$state/journal" 100
refused_start "$T/damaged.log" "a damaged journal"
[ $rc -eq 2 ] || fail "damaged journal: exit $rc, expected 2"
grep -q "journal: record [0-9]* at offset [0-9]* is damaged" "$T/damaged.log" \
    || fail "the damaged record is not named: $(cat "$T/damaged.log")"
grep -q -- "--state-recover" "$T/damaged.log" || fail "no advice to use --state-recover"
cmp -s "$state/journal" <({ head -c 100 "$T/journal.good"; printf 'X'; tail -c +102 "$T/journal.good"; }) \
    || fail "the damaged journal was changed"
pass "a damaged journal record is named and the broker does not start"

start_broker $port --heartbeat-ms 200 --state "$state" --state-recover
grep -q "is damaged (.*): .* bytes dropped (--state-recover)" "$T/broker.log" \
    || fail "no warning for the dropped record: $(tail -5 "$T/broker.log")"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out3" -q \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" || fail "a job after --state-recover failed"
job3=$(awk '/^job /{print $2; exit}' "$T/out3/.qc-job")
[ "$job3" -ge 3 ] || fail "after recovery the job id is $job3: ids used twice"
pass "--state-recover starts, says what it dropped, and ids still go on ($job3)"

# an emptied journal (a power cut, on some file systems) beside result
# files: refused, nothing changed (the broker started afresh, deleted
# results no client had fetched and gave their ids again); with
# --state-recover the results are set aside, said, and no id of theirs
# is given again
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
ls "$state/results" | sort >"$T/results.before"
top=$(ls "$state/results" | sed -n 's/^\([0-9]*\)\.qcr$/\1/p' | sort -n | tail -1)
[ -n "$top" ] || fail "no result file to keep: $(cat "$T/results.before")"
: >"$state/journal"
refused_start "$T/emptied.log" "an emptied journal beside result files"
[ $rc -eq 2 ] && grep -q "$state/results holds the results of jobs\? .*, which the journal does not know: .*The result files were left as they are.*--state-recover" \
    "$T/emptied.log" || fail "an emptied journal: exit $rc: $(cat "$T/emptied.log")"
ls "$state/results" | sort | cmp -s - "$T/results.before" \
    || fail "the refused start changed the results: $(ls "$state/results")"
start_broker $port --heartbeat-ms 200 --state "$state" --state-recover
grep -q "$state/results/$top.qcr: the results of job $top, which the journal does not know: set aside as $state/results/$top.qcr.lost (--state-recover)" \
    "$T/broker.log" || fail "the set-aside results not said: $(tail -5 "$T/broker.log")"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out4" -q \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" || fail "a job after the emptied journal failed"
job4=$(awk '/^job /{print $2; exit}' "$T/out4/.qc-job")
[ "$job4" -gt "$top" ] || fail "after an emptied journal the job id is $job4, not after $top: ids used twice"
pass "an emptied journal beside result files: refused, nothing changed; --state-recover sets them aside and ids go on ($job4)"

# a result file with no record past the journal's ids: a submission never
# accepted (its file is made before its job is journalled: a full disk,
# a crash between the two) is no lost job: removed, the broker starts
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
head -c 16 "$state/results/$job4.qcr" >"$state/results/$((job4 + 50)).qcr"
start_broker $port --heartbeat-ms 200 --state "$state"
[ ! -e "$state/results/$((job4 + 50)).qcr" ] || fail "the unaccepted submission's empty result file stayed"
pass "an empty result file of a submission never accepted does not stop the broker"

# --linger counts from the job's finish, across a restart too: a delivered
# job finished 5 s before a restart, with --linger 6, is forgotten about
# 1 s after it (counted from the restart, it would be 6 s)
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
port=$(free_port)
start_broker $port --heartbeat-ms 200 --state "$T/lstate" --linger 6
start_worker $port wl --slots 1 --heartbeat-ms 200
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/linger" -q \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" || fail "linger job failed"
ljob=$(awk '/^job /{print $2; exit}' "$T/linger/.qc-job")
sleep 5
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
grep -q "job $ljob: .*forgotten" "$T/broker.log" && fail "job $ljob forgotten before the restart"
start_broker $port --heartbeat-ms 200 --state "$T/lstate" --linger 6
wait_for "the delivered job forgotten within 4 s of the restart (6 s from it otherwise)" 4 \
    "grep -q 'job $ljob: delivered, and finished over 6 s ago: forgotten (--linger)' '$T/broker.log'"
pass "--linger counts from the finish across a restart, and the forget is logged"

# the state folder deleted while the broker runs: said once, as an error
# (nothing written from then on survives a restart), and new jobs are
# refused with the reason (before: silence, then "cannot create the
# job's result file")
rm -rf "$T/lstate"
wait_for "the deleted state folder said" 5 \
    "grep -q 'ERROR.*the state folder $T/lstate was deleted while the broker ran' '$T/broker.log'"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --timeout 10 -q -o "$T/out5" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/gone.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "the broker cannot store a new job: its state folder $T/lstate was deleted while it ran (restart the broker)" \
    "$T/gone.log" || fail "a job after the state folder was deleted: exit $rc: $(cat "$T/gone.log")"
[ "$(grep -c 'was deleted while the broker ran' "$T/broker.log")" -eq 1 ] || fail "the deletion said more than once"
"$BIN/qc-status" --broker tcp://127.0.0.1:$port --tsv >"$T/gone.tsv" 2>&1
rc=$?
[ $rc -eq 7 ] && grep -q "^trouble	state-gone	the state folder $T/lstate was deleted while the broker ran ([0-9]* s ago): new jobs are refused" \
    "$T/gone.tsv" || fail "qc-status after the state folder was deleted: exit $rc: $(cat "$T/gone.tsv")"
pass "a state folder deleted while the broker runs is said once (and by qc-status, exit 7), and new jobs are refused with the reason"
