#!/bin/bash
# A client that goes away does not cancel its job: the broker keeps the
# results, and qc-submit --attach fetches the rest into the same folder,
# each slide exactly once. Then --cancel on another job drops its queue.
. "$(dirname "$0")/lib.sh"

make_cohort "$T/cohort" 60 >/dev/null
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 2 --heartbeat-ms 200 --task-delay-ms 60
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/cohort/list" \
    >"$T/submit.log" 2>&1 &
submit=$!
wait_for "some results" 20 "[ \$(grep -c '^ok\|^FAILED' '$T/submit.log') -ge 10 ]"
kill -9 $submit
wait $submit 2>/dev/null
job=$(awk '/^job /{print $2; exit}' "$T/out/.qc-job")
[ -n "$job" ] || fail "no job id in .qc-job"
written=$(grep -c '^done' "$T/out/.qc-job")
[ "$written" -lt 60 ] || fail "the job finished before the client was killed"
pass "client killed after $written of 60 results (job $job)"
# the job ends while no client listens: every record after the broker saw
# the client gone waits for the reattach
wait_for "the job finished with no client" 60 \
    "\"\$BIN/qc-status\" --broker tcp://127.0.0.1:$port 2>/dev/null | awk '\$1 == $job && \$2 + \$3 == 60 {f = 1} END {exit !f}'"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$job" -o "$T/out" \
    >"$T/attach.log" 2>&1
rc=$?
[ $rc -le 1 ] || fail "attach exit $rc: $(cat "$T/attach.log")"
check_exactly_once "$T/out" "$T/cohort/list"
# what it says counts the whole cohort: the folder's results and the rest
rows=$(grep -vc '^#' "$T/out/results.tsv")
errs=$(grep -c . "$T/out/error.log" 2>/dev/null || true)
grep -q "^job $job on tcp://127.0.0.1:$port: 60 slides, $written of them already in $T/out" \
    "$T/attach.log" || fail "attach's first line: $(head -3 "$T/attach.log")"
grep -q "^60 slides: $rows passed, ${errs:-0} failed" "$T/attach.log" \
    || fail "attach's summary ($rows rows, ${errs:-0} errors): $(tail -2 "$T/attach.log")"
grep -q "^ok 60/60 \|^FAILED 60/60 " "$T/attach.log" || fail "attach's count does not reach 60/60"
wait_for "the client's leave said" 5 "grep -q 'job $job: every result delivered; the client left' '$T/broker.log'"
pass "reattached: all 60 slides reported exactly once, counted from the folder's $written; the broker saw the client leave"
# the log records of slides run while no client listened waited in the
# broker and came with the reattach, those sent to the killed client
# before the broker found it gone too (all were lost before when the job
# ended within those seconds), the broker saying it sent them again
last=$(grep -E '^(ok|FAILED) ' "$T/attach.log" | tail -1 | awk '{print $3}')
grep -q "	w1	$last	worker	build " "$T/out/qc.log" \
    || fail "the log records kept for the reattach did not come ($last): $(tail -3 "$T/out/qc.log")"
[ "$(awk -F'\t' '$5 == "worker" && $6 ~ /^build / {print $4}' "$T/out/qc.log" | sort -u | wc -l)" -eq 60 ] \
    || fail "not every slide's log records are in qc.log"
grep -q "	broker		broker	[0-9]* log records sent in the seconds before the broker found the client gone are sent again: some may be in qc.log twice$" "$T/out/qc.log" \
    || fail "the broker did not say it sent records again"
pass "log records of slides run while the client was away came with the reattach (every slide's), and those sent to the killed client"

# --attach checks the job id against the folder's own (.qc-job) first
before=$(md5sum "$T/out/results.tsv" "$T/out/.qc-job")
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach $((job + 1)) -o "$T/out" >"$T/bad.log" 2>&1
[ $? -eq 2 ] || fail "attach with another job's id should exit 2"
grep -q "holds the results of job $job, not of job $((job + 1))" "$T/bad.log" \
    || fail "no clear message for a job id that is not the folder's: $(cat "$T/bad.log")"
[ "$(md5sum "$T/out/results.tsv" "$T/out/.qc-job")" = "$before" ] || fail "the folder changed"
pass "attach with another job's id: refused (exit 2), the folder untouched"

# a folder whose job the broker does not know
mkdir -p "$T/other"
cp "$T/out/results.tsv" "$T/other/"
echo "job 999 tcp://127.0.0.1:$port key=0000000000000abc" >"$T/other/.qc-job"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach 999 -o "$T/other" >"$T/bad.log" 2>&1
[ $? -eq 2 ] || fail "attach to an unknown job should exit 2"
grep -q "no such job: job 999 was never submitted here" "$T/bad.log" \
    || fail "no clear message for an unknown job: $(cat "$T/bad.log")"
pass "attach to an unknown job: exit 2 with a clear message"

# the folder's job id with another identity (a broker that lost its
# state numbers its jobs from 1 again): refused, not merged
echo "job $job tcp://127.0.0.1:$port key=00000000deadbeef" >"$T/other/.qc-job"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach $job -o "$T/other" >"$T/bad.log" 2>&1
[ $? -eq 2 ] || fail "attach with another identity should exit 2"
grep -q "is not the job of your output folder" "$T/bad.log" \
    || fail "no clear message for another job's identity: $(cat "$T/bad.log")"
pass "attach to a job id with another identity: refused (exit 2)"

# into a new folder: said where a job is fetched to, nothing made
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach $job -o "$T/fresh" >"$T/bad.log" 2>&1
[ $? -eq 2 ] && grep -q "fetches a job into the folder it was submitted into (give -o that folder)" \
    "$T/bad.log" && [ ! -e "$T/fresh" ] || fail "attach into a new folder: $(cat "$T/bad.log")"
pass "attach into a new folder: exit 2, says to give the job's own folder"
# into a folder of the lab's own that holds no results: refused, and left
# as it was (a .qc-lock was left in it)
mkdir -p "$T/papers" && echo "a lab's notes" >"$T/papers/notes.txt"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach $job -o "$T/papers" >"$T/bad.log" 2>&1
[ $? -eq 2 ] && [ "$(ls -A "$T/papers")" = notes.txt ] \
    || fail "attach into a folder without results: $(cat "$T/bad.log"); left: $(ls -A "$T/papers")"
pass "attach into a folder that holds no results: exit 2, the folder left as it was"

"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out2" --list "$T/cohort/list" \
    >"$T/submit2.log" 2>&1 &
submit=$!
PIDS+=($submit)
wait_for "second job accepted" 10 "grep -q '^job' '$T/out2/.qc-job' 2>/dev/null"
job2=$(awk '/^job /{print $2; exit}' "$T/out2/.qc-job")
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --cancel "$job2" >/dev/null 2>&1 \
    || fail "cancel failed"
for i in $(seq 1 200); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "cancelled job did not end"
grep -q "cancelled" "$T/out2/error.log" || fail "cancelled slides not reported"
check_exactly_once "$T/out2" "$T/cohort/list"
# the summary counts the cancelled slides apart from those that failed
n_cancelled=$(grep -c "	cancelled by the client$" "$T/out2/error.log")
n_failed=$(( $(grep -vc '^#' "$T/out2/error.log") - n_cancelled ))
grep -q "^[0-9]* slides: [0-9]* passed, $n_failed failed, $n_cancelled cancelled (a rerun runs them)$" \
    "$T/submit2.log" || fail "the summary: $(tail -2 "$T/submit2.log"); $n_cancelled cancelled, $n_failed failed in error.log"
# the broker's log says the cancel came from elsewhere than the job's client
grep -q "job $job2 cancelled by a qc-submit --cancel, not the job's client (no certificates in use)" \
    "$T/broker.log" || fail "who cancelled is not said: $(grep cancelled "$T/broker.log")"
pass "cancel: queued slides reported failed as cancelled, each once; whence, said"
# attached again, the folder's cancelled slides are counted as such (they
# were counted failed: error.log's reasons were not read for the count)
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$job2" -o "$T/out2" >"$T/attach-again.log" 2>&1
grep -q "^job $job2 on .*, 60 of them already in $T/out2 ([0-9]* passed, $n_failed failed, $n_cancelled cancelled)$" \
    "$T/attach-again.log" \
    && grep -q "^60 slides: [0-9]* passed, $n_failed failed, $n_cancelled cancelled (a rerun runs them)$" \
    "$T/attach-again.log" || fail "attached again: $(cat "$T/attach-again.log"); $n_cancelled cancelled, $n_failed failed in error.log"
pass "attached again, the cancelled slides the folder has are counted apart"

# a finished job has nothing to cancel: said, and it is not marked cancelled
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --cancel "$job" >"$T/cancel-done.log" 2>&1
[ $? -eq 2 ] && grep -q "job $job has finished ([0-9]* of 60 slides failed): nothing to cancel" \
    "$T/cancel-done.log" || fail "cancel of a finished job: $(cat "$T/cancel-done.log")"
"$BIN/qc-status" --broker tcp://127.0.0.1:$port | grep -E "^$job " | grep -q cancelled \
    && fail "the finished job is shown cancelled"
pass "cancel of a finished job: exit 2, 'nothing to cancel'"

"$BIN/qc-status" --broker tcp://127.0.0.1:$port >"$T/status.log" || fail "qc-status: $(cat "$T/status.log")"
ids=$(awk '/^JOB /{t=1; next} t && NF {print $1}' "$T/status.log")
[ "$(echo "$ids" | grep -c .)" -ge 2 ] && [ "$ids" = "$(echo "$ids" | sort -n)" ] \
    || fail "qc-status jobs not in id order: $ids"
pass "qc-status lists the jobs in id order"

# a job that finishes while its client is away: the attach reads ACCEPTED,
# every result and DONE in one burst, and must still acknowledge them, or
# the broker keeps them until --retention instead of --linger. The job
# waits for a GPU no worker has, and is cancelled: finished, one result.
head -1 "$T/cohort/list" >"$T/one"
gone_client $port "$T/out3" "$T/submit3.log" --gpu-only --list "$T/one"
job3=$JOB
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --cancel "$job3" >/dev/null 2>&1 \
    || fail "cancel of job $job3 failed"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$job3" -o "$T/out3" \
    >"$T/attach3.log" 2>&1
[ $? = 1 ] || fail "attach to cancelled job $job3: $(cat "$T/attach3.log")"
check_exactly_once "$T/out3" "$T/one"
wait_for "the broker saw every result of job $job3 delivered" 10 \
    "grep -q 'job $job3: every result delivered; the client left' '$T/broker.log'" "$T/broker.log"
pass "attach to a job that ended while its client was away: its result acknowledged"

# another connection that sends the job's first SUBMIT again (its
# client's socket after a reconnect; or its ACK: no ATTACH comes) takes
# it over: the log records sent to the old one since its heartbeat before
# last go to it at once, after the broker's note (they waited for an
# ATTACH that never came)
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out4" --list "$T/cohort/list" \
    >"$T/submit4.log" 2>&1 &
submit=$!
PIDS+=($submit)
wait_for "some results of the fourth job" 20 "[ \$(grep -c '^ok\|^FAILED' '$T/submit4.log') -ge 3 ]"
job4=$(awk '/^job /{print $2; exit}' "$T/out4/.qc-job")
key4=$(sed -n '1s/.*key=\([0-9a-f]*\).*/\1/p' "$T/out4/.qc-job")
"$TOOLS/qc_stranger" --connect tcp://127.0.0.1:$port --wait-ms 800 --key "$key4" \
    submit "$(head -1 "$T/cohort/list")" >"$T/stranger.log" 2>&1
kill -9 $submit
wait $submit 2>/dev/null
grep -q "^message [0-9]* log records sent in the seconds before the broker found the client gone are sent again: some may be in qc.log twice$" \
    "$T/stranger.log" || fail "the records sent to the old connection did not go to the new one: $(head -5 "$T/stranger.log")"
grep -q "^got ACCEPTED job=$job4 " "$T/stranger.log" || fail "the repeated SUBMIT was not the job's: $(head -3 "$T/stranger.log")"
pass "a new connection that sends the job's SUBMIT again gets the records its old one may have lost, at once"

# a rerun without --broker into a folder whose job ran on a broker and
# has slides with no result here: said (it ran them locally in silence)
"$BIN/qc-submit" -o "$T/out4" --workers 1 "$(head -1 "$T/cohort/list")" >"$T/local.log" 2>&1
grep -q "note: $T/out4's job $job4 ran on tcp://127.0.0.1:$port and has slides with no result here; without --broker they run in this process, and that job is not asked (--broker tcp://127.0.0.1:$port fetches it first; --broker tcp://127.0.0.1:$port --cancel $job4 drops what it still has queued)" \
    "$T/local.log" || fail "no note of the folder's broker job: $(head -3 "$T/local.log")"
pass "a run without --broker into a folder of a broker's unfinished job says so"
