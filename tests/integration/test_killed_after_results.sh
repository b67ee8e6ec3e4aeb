#!/bin/bash
# A qc-submit killed after it wrote its job's last result and before it
# told the broker (its ACK): the broker kept the job "waiting" for a
# client until --retention (7 days), with its results on the broker's
# disk and a place among the jobs a client may hold, and the same
# command run again found nothing to run and never told it (a soak
# found 10 of 10 such kills left so). Now a run that ends whole writes
# "delivered" in .qc-job, and a rerun into a folder that has every
# result but no such line tells the broker (an ATTACH that holds them
# all), says so, and runs nothing. Real broker and worker on loopback.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/c"
ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/c/a.svs"
ln -s "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" "$T/c/b.svs"
printf '[pipeline]\nsteps = BasicModule.getBasicStats\n' >"$T/quick.ini"
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 2 --heartbeat-ms 200
wait_for "worker registered" 10 "workers_registered $port 1"
state_of() {   # state_of JOB: its state in qc-status
    "$BIN/qc-status" --broker "tcp://127.0.0.1:$port" --tsv 2>/dev/null \
        | awk -F'\t' -v j="$1" '$1 == "job" && $2 == j {print $10}'
}

# a run that ends whole says so in .qc-job; its rerun asks the broker nothing
"$BIN/qc-submit" -q --broker "tcp://127.0.0.1:$port" -c "$T/quick.ini" -o "$T/whole" "$T/c" \
    >"$T/whole.log" 2>&1 || fail "a whole run: $(tail -3 "$T/whole.log")"
[ "$(tail -1 "$T/whole/.qc-job")" = delivered ] || fail "no delivered line: $(cat "$T/whole/.qc-job")"
job=$(awk '/^job /{print $2}' "$T/whole/.qc-job")
[ "$(state_of "$job")" = delivered ] || fail "job $job: $(state_of "$job")"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -c "$T/quick.ini" -o "$T/whole" "$T/c" \
    >"$T/whole2.log" 2>&1 || fail "its rerun: $(tail -3 "$T/whole2.log")"
grep -q "told now" "$T/whole2.log" && fail "a whole run's rerun told the broker: $(cat "$T/whole2.log")"
grep -q "nothing to run" "$T/whole2.log" || fail "its rerun: $(cat "$T/whole2.log")"
pass "a run that ends whole writes 'delivered' in .qc-job; its rerun asks the broker nothing"

# killed after its second (last) result was written, before the ACK
"$BIN/qc-submit" -q --broker "tcp://127.0.0.1:$port" -c "$T/quick.ini" -o "$T/killed" "$T/c" \
    --test-kill-after 2 >"$T/killed.log" 2>&1
rc=$?
[ $rc = 137 ] || fail "the killed run: exit $rc: $(tail -3 "$T/killed.log")"
[ "$(grep -c '^done' "$T/killed/.qc-job")" = 2 ] && ! grep -q '^delivered' "$T/killed/.qc-job" \
    || fail "the killed run's .qc-job: $(cat "$T/killed/.qc-job")"
kjob=$(awk '/^job /{print $2}' "$T/killed/.qc-job")
wait_for "the broker found the client gone" 10 "[ \"\$(state_of $kjob)\" = waiting ]" "$T/broker.log"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -c "$T/quick.ini" -o "$T/killed" "$T/c" \
    >"$T/killed2.log" 2>&1 || fail "the rerun: exit $?: $(tail -3 "$T/killed2.log")"
grep -q "note: $T/killed has every result of job $kjob, and its .qc-job does not say the broker was told (a run stopped before its last ACK, or an older qc-submit's): told now" \
    "$T/killed2.log" || fail "not said: $(cat "$T/killed2.log")"
grep -q "nothing to run" "$T/killed2.log" || fail "the rerun ran something: $(cat "$T/killed2.log")"
wait_for "the job delivered" 10 "[ \"\$(state_of $kjob)\" = delivered ]" "$T/broker.log"
[ "$(grep -vc '^#' "$T/killed/results.tsv")" = 2 ] || fail "rows: $(cat "$T/killed/results.tsv")"
pass "killed between its last result and the ACK: the rerun tells the broker (job $kjob: waiting -> delivered), says so, runs nothing"

# the same with -f (the folder begun again, its results kept as .N)
"$BIN/qc-submit" -q --broker "tcp://127.0.0.1:$port" -c "$T/quick.ini" -o "$T/killedf" "$T/c" \
    --test-kill-after 2 >"$T/killedf.log" 2>&1
fjob=$(awk '/^job /{print $2}' "$T/killedf/.qc-job")
wait_for "the broker found the client gone" 10 "[ \"\$(state_of $fjob)\" = waiting ]" "$T/broker.log"
"$BIN/qc-submit" -f --broker "tcp://127.0.0.1:$port" -c "$T/quick.ini" -o "$T/killedf" "$T/c" \
    >"$T/killedf2.log" 2>&1 || fail "the -f rerun: exit $?: $(tail -3 "$T/killedf2.log")"
grep -q "has every result of job $fjob, and its .qc-job does not say the broker was told" \
    "$T/killedf2.log" || fail "-f: not said: $(cat "$T/killedf2.log")"
wait_for "the job delivered" 10 "[ \"\$(state_of $fjob)\" = delivered ]" "$T/broker.log"
pass "the same with -f: the old job is told (waiting -> delivered), the folder begun again"

# a finished job whose client will not come (its folder deleted): its
# results waited until --retention, holding a place among the client's
# jobs, and --cancel said "nothing to cancel". Now --cancel deletes them
# and the job is forgotten, said; an attach is told why it is gone.
"$BIN/qc-submit" -q --broker "tcp://127.0.0.1:$port" -c "$T/quick.ini" -o "$T/orphan" "$T/c" \
    --test-kill-after 1 >"$T/orphan.log" 2>&1
ojob=$(awk '/^job /{print $2}' "$T/orphan/.qc-job")
wait_for "the job finished, its results waiting" 30 "[ \"\$(state_of $ojob)\" = waiting ]" "$T/broker.log"
cp -a "$T/orphan" "$T/orphan.kept"
rm -rf "$T/orphan"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" --cancel "$ojob" >"$T/drop.out" 2>"$T/drop.err" \
    || fail "--cancel of a finished job waiting for its client: exit $?: $(cat "$T/drop.err")"
[ "$(cat "$T/drop.out")" = "job $ojob had finished: the 2 results that waited for its client are deleted; the job is forgotten" ] \
    || fail "said: $(cat "$T/drop.out" "$T/drop.err")"
[ -z "$(state_of "$ojob")" ] || fail "job $ojob still listed: $(state_of "$ojob")"
grep -q "job $ojob: the 2 results that waited for its client are deleted; the job is forgotten (a qc-submit --cancel)" \
    "$T/broker.log" || fail "the broker's log: $(grep "job $ojob" "$T/broker.log" | tail -3)"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" --attach "$ojob" -o "$T/orphan.kept" >"$T/drop-attach.log" 2>&1
grep -q "no such job: job $ojob finished, and the results that waited for its client were deleted at .* by a qc-submit --cancel" \
    "$T/drop-attach.log" || fail "the attach after: $(cat "$T/drop-attach.log")"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" --cancel "$job" >"$T/nothing.out" 2>"$T/nothing.err"
[ $? = 2 ] && grep -q "job $job has finished (0 of 2 slides failed): nothing to cancel" "$T/nothing.err" \
    || fail "--cancel of a delivered job: $(cat "$T/nothing.out" "$T/nothing.err")"
pass "--cancel of a finished job whose results wait for no client: deleted, the job forgotten, said (an attach is told why); a delivered one has nothing to cancel"

# a broker that no longer has the job: nothing said, nothing run
sed -i '/^delivered$/d' "$T/whole/.qc-job"
kill "$BROKER_PID"
wait "$BROKER_PID" 2>/dev/null
start_broker $port --heartbeat-ms 200 --state none
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -c "$T/quick.ini" -o "$T/whole" "$T/c" \
    >"$T/whole3.log" 2>&1 || fail "a rerun, the broker without the job: $(tail -3 "$T/whole3.log")"
grep -q "told now\|refused" "$T/whole3.log" && fail "said: $(cat "$T/whole3.log")"
grep -q "nothing to run" "$T/whole3.log" || fail "a rerun, the broker without the job: $(cat "$T/whole3.log")"
pass "a broker that no longer has the job: the rerun says nothing of it and runs nothing"
