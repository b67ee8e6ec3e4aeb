#!/bin/bash
# A script that submits and leaves (cron, a workflow manager): qc-submit
# --detach exits 0 once the broker holds every slide, with the job's id
# alone on stdout; the job runs on; qc-status --tsv shows it, line by
# line, for the script to poll; the same command without --detach then
# fetches every result, each slide exactly once. --detach without a
# broker is refused.
. "$(dirname "$0")/lib.sh"

make_cohort "$T/cohort" 12 >/dev/null
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 1 --heartbeat-ms 200 --task-delay-ms 300
wait_for "worker registered" 10 "workers_registered $port 1"

"$BIN/qc-submit" --detach -o "$T/out" --list "$T/cohort/list" >"$T/none.out" 2>"$T/none.err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--detach needs --broker" "$T/none.err" && [ ! -e "$T/out" ] \
    || fail "--detach without --broker: exit $rc: $(cat "$T/none.err")"

EP=tcp://127.0.0.1:$port
start=$(date +%s)
timeout 60 "$BIN/qc-submit" --broker "$EP" --detach -o "$T/out" --list "$T/cohort/list" \
    >"$T/detach.out" 2>"$T/detach.err"
rc=$?
[ $rc -eq 0 ] || fail "--detach: exit $rc: $(cat "$T/detach.err")"
job=$(cat "$T/detach.out")
[[ "$job" =~ ^[0-9]+$ ]] || fail "--detach: stdout is not the job's id: '$job'"
grep -q "job $job: the broker holds its 12 slides, and it runs on without this client" "$T/detach.err" \
    && grep -q -- "--attach $job -o $T/out" "$T/detach.err" || fail "--detach: $(cat "$T/detach.err")"
pass "--detach: exit 0 once the broker holds every slide, the job's id ($job) on stdout"

# the same --detach again while the job runs: that job, not a second one
timeout 60 "$BIN/qc-submit" --broker "$EP" --detach -o "$T/out" --list "$T/cohort/list" \
    >"$T/again.out" 2>"$T/again.err"
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$T/again.out")" = "$job" ] \
    && grep -q "job $job of $T/out is still at the broker, where it runs on without this client" "$T/again.err" \
    || fail "--detach again: exit $rc, stdout '$(cat "$T/again.out")': $(cat "$T/again.err")"
[ "$(grep -c 'submitted' "$T/broker.log")" -eq 1 ] || fail "--detach again submitted a second job"
pass "--detach again while the job runs: the same job's id, no second job"

# the script polls: one line per job, its fields tab-separated
row=$("$BIN/qc-status" --broker "$EP" --tsv | awk -F'\t' -v j="$job" '$1 == "job" && $2 == j')
[ -n "$row" ] || fail "qc-status --tsv has no line for job $job: $("$BIN/qc-status" --broker "$EP" --tsv)"
[ "$(echo "$row" | awk -F'\t' '{print NF}')" -eq 11 ] && [ "$(echo "$row" | cut -f5)" = 12 ] \
    && [ "$(echo "$row" | cut -f8)" = no ] && [ "$(echo "$row" | cut -f10)" = running ] \
    && [ "$(echo "$row" | cut -f11)" = "$(id -un)" ] \
    || fail "the job's line: $row"
head -1 < <("$BIN/qc-status" --broker "$EP" --tsv) | grep -q '^#kind	fields: broker endpoint' \
    || fail "qc-status --tsv: no #kind line first"
for _ in $(seq 1 300); do
    row=$("$BIN/qc-status" --broker "$EP" --tsv | awk -F'\t' -v j="$job" '$1 == "job" && $2 == j')
    [ $(($(echo "$row" | cut -f3) + $(echo "$row" | cut -f4))) -eq 12 ] \
        && [ "$(echo "$row" | cut -f10)" = waiting ] && break
    sleep 0.2
done
[ $(($(echo "$row" | cut -f3) + $(echo "$row" | cut -f4))) -eq 12 ] \
    && [ "$(echo "$row" | cut -f10)" = waiting ] \
    || fail "the detached job did not run on, or its results are not said to wait: $row"
"$BIN/qc-status" --broker "$EP" >"$T/status.txt"
grep -q "^jobs: 1 (1 waiting)$" "$T/status.txt" && grep -q "^  waiting: finished; its results wait" "$T/status.txt" \
    || fail "qc-status does not say the job's results wait: $(cat "$T/status.txt")"
pass "qc-status: the detached job's line, its slides done without a client, its results waiting"

# --detach again once the job has finished: its results fetched (a
# script that always passes --detach must not be told, run after run,
# that a finished job "runs on", its results never written)
timeout 60 "$BIN/qc-submit" --broker "$EP" --detach -o "$T/out" --list "$T/cohort/list" \
    >"$T/done.out" 2>"$T/done.err"
rc=$?
{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && ! grep -q "runs on without this client" "$T/done.err" \
    || fail "--detach after the job finished: exit $rc: $(cat "$T/done.err")"
check_exactly_once "$T/out" "$T/cohort/list"
row=$("$BIN/qc-status" --broker "$EP" --tsv | awk -F'\t' -v j="$job" '$1 == "job" && $2 == j')
[ -z "$row" ] || [ "$(echo "$row" | cut -f10)" = delivered ] \
    || fail "qc-status after the results were fetched: $row"
pass "--detach once the job has finished: its results fetched (the job delivered), not said to run on"

# the same command without --detach: the job's results fetched, nothing run again
timeout 60 "$BIN/qc-submit" --broker "$EP" -o "$T/out" --list "$T/cohort/list" >"$T/fetch.log" 2>&1
rc=$?
[ $rc -eq 1 ] || [ $rc -eq 0 ] || fail "the fetch: exit $rc: $(tail -3 "$T/fetch.log")"
check_exactly_once "$T/out" "$T/cohort/list"
[ "$(grep -c 'submitted' "$T/broker.log")" -eq 1 ] || fail "a second job was submitted: $(grep submitted "$T/broker.log")"
pass "the same command again fetches the detached job's results: each slide once, no second job"

# the folder's job asked of another broker (a new --broker): not there,
# so its slides run in a new job there, and the first broker, where the
# job may run on for no one, is named with how to stop it
timeout 60 "$BIN/qc-submit" --broker "$EP" --detach -o "$T/moved" --list "$T/cohort/list" \
    >"$T/moved1.out" 2>"$T/moved1.err" || fail "detach to move: $(cat "$T/moved1.err")"
first=$(cat "$T/moved1.out")
p2=$(free_port)
"$BIN/qc-broker" --bind tcp://127.0.0.1:$p2 --state none >"$T/broker2.log" 2>&1 &
b2=$!
PIDS+=($b2)
wait_for "the second broker" 10 "grep -q 'listening on' '$T/broker2.log'"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p2 --detach -o "$T/moved" --list "$T/cohort/list" \
    >"$T/moved2.out" 2>"$T/moved2.err"
rc=$?
[ $rc -eq 0 ] && grep -q "job $first may still run on $EP, where it was submitted; qc-submit --broker $EP --cancel $first stops it there" "$T/moved2.err" \
    || fail "another broker: exit $rc: $(cat "$T/moved2.err")"
"$BIN/qc-submit" --broker "$EP" --cancel "$first" >/dev/null 2>&1
kill -TERM $b2; wait $b2 2>/dev/null
pass "the folder's job asked of another broker: the first one named, with how to stop the job there"

# the job's id is what --detach gives a script: stdout full (/dev/full)
# or closed (>&-) is said, not exit 0 with the id lost (a user's
# review); so is qc-status's answer
timeout 60 "$BIN/qc-submit" --broker "$EP" --detach -o "$T/full-out" --list "$T/cohort/list" \
    >/dev/full 2>"$T/full.err"
rc=$?
[ $rc -eq 5 ] && grep -q "cannot write job [0-9]*'s id to standard output (No space left on device): the job runs on at the broker; the same command prints its id again" "$T/full.err" \
    || fail "--detach >/dev/full: exit $rc: $(cat "$T/full.err")"
again=$(timeout 60 "$BIN/qc-submit" --broker "$EP" --detach -o "$T/full-out" --list "$T/cohort/list" 2>/dev/null)
[[ "$again" =~ ^[0-9]+$ ]] || fail "the same --detach did not print the id again: '$again'"
timeout 60 "$BIN/qc-submit" --broker "$EP" --detach -o "$T/closed-out" --list "$T/cohort/list" \
    >&- 2>"$T/closed.err"
rc=$?
[ $rc -eq 2 ] && grep -q "started with it closed" "$T/closed.err" && [ ! -e "$T/closed-out" ] \
    || fail "--detach >&-: exit $rc: $(cat "$T/closed.err")"
"$BIN/qc-status" --broker "$EP" --tsv >/dev/full 2>"$T/status-full.err"
rc=$?
[ $rc -eq 2 ] && grep -q "cannot write to standard output" "$T/status-full.err" \
    || fail "qc-status >/dev/full: exit $rc: $(cat "$T/status-full.err")"
pass "the job's id or qc-status's answer not written (stdout full or closed): said, not exit 0"

# -f on a folder whose detached job still runs: that job is cancelled,
# said (it ran on for no one, its results unfetchable: a user's review),
# and the fresh job is the folder's; stdout holds the new id alone
start_worker $port slow --slots 1 --heartbeat-ms 200 --task-delay-ms 3000
timeout 60 "$BIN/qc-submit" --broker "$EP" --detach -o "$T/forced" --list "$T/cohort/list" \
    >"$T/forced1.out" 2>"$T/forced1.err" || fail "detach before -f: $(cat "$T/forced1.err")"
old=$(cat "$T/forced1.out")
timeout 60 "$BIN/qc-submit" --broker "$EP" --detach -f -o "$T/forced" --list "$T/cohort/list" \
    >"$T/forced2.out" 2>"$T/forced2.err"
rc=$?
new=$(cat "$T/forced2.out")
[ $rc -eq 0 ] && [[ "$new" =~ ^[0-9]+$ ]] && [ "$new" != "$old" ] \
    && grep -q -- "-f: $T/forced's job $old still had slides at the broker: cancelled" "$T/forced2.err" \
    || fail "-f over a running job: exit $rc, stdout '$new': $(cat "$T/forced2.err")"
"$BIN/qc-status" --broker "$EP" --tsv | awk -F'\t' -v j="$old" '$1 == "job" && $2 == j && $9 == "yes" { f = 1 } END { exit !f }' \
    || fail "job $old not cancelled: $("$BIN/qc-status" --broker "$EP" --tsv | grep '^job')"
pass "-f over a folder whose job still runs: that job cancelled and said; the new job's id alone on stdout"

# a slide whose file goes away after --detach, before it runs: the job
# fails it; the same command, whose folder search no longer finds it,
# fetches that failure and says so, exit 1 (it exited 0: the failure
# was of no slide of its cohort)
p3=$(free_port)
start_broker $p3 --heartbeat-ms 200
mkdir -p "$T/gone"
for n in a b c; do cp "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/gone/$n.svs"; done
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p3 --detach -o "$T/gone-out" "$T/gone" \
    >"$T/gone1.out" 2>"$T/gone1.err" || fail "detach (no worker yet): $(cat "$T/gone1.err")"
gjob=$(cat "$T/gone1.out")
rm "$T/gone/b.svs"
start_worker $p3 w3 --slots 1 --heartbeat-ms 200
for _ in $(seq 1 300); do
    row=$("$BIN/qc-status" --broker tcp://127.0.0.1:$p3 --tsv | awk -F'\t' -v j="$gjob" '$1 == "job" && $2 == j')
    [ -n "$row" ] && [ $(($(echo "$row" | cut -f3) + $(echo "$row" | cut -f4))) -eq 3 ] && break
    sleep 0.2
done
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p3 -o "$T/gone-out" "$T/gone" >"$T/gone2.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "1 slide of job $gjob, fetched just now, failed and is no longer in this cohort (its file gone or moved since the job was sent?): counted as failed (exit 1)" "$T/gone2.log" \
    && grep -q "^$T/gone/b.svs	" "$T/gone-out/error.log" \
    || fail "a slide gone after --detach: exit $rc: $(cat "$T/gone2.log"); error.log: $(cat "$T/gone-out/error.log")"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p3 -o "$T/gone-out" "$T/gone" >"$T/gone3.log" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "nothing to run" "$T/gone3.log" \
    || fail "the run after: exit $rc (the failure was said once; the cohort's slides passed): $(cat "$T/gone3.log")"
pass "a slide gone after --detach, before it ran: its failure fetched, said, exit 1; the next run exits 0"

# --cancel takes back the slides sent ahead to a worker and not started,
# as it drops the queued ones (a worker with --prefetch held all three of
# a small job, and all three ran after the cancel: a soak's review)
kill -TERM "$WORKER_PID"; wait "$WORKER_PID" 2>/dev/null
start_worker $p3 ahead --slots 1 --prefetch 2 --heartbeat-ms 200 --task-delay-ms 4000
wait_for "the worker with --prefetch registered" 10 "workers_registered $p3 1"
mkdir -p "$T/ahead"
for n in a b c; do cp "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/ahead/$n.svs"; done
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p3 --detach -o "$T/ahead-out" "$T/ahead" \
    >"$T/ahead1.out" 2>"$T/ahead1.err" || fail "detach (prefetch): $(cat "$T/ahead1.err")"
ajob=$(cat "$T/ahead1.out")
wait_for "the worker holds all 3" 10 "\"$BIN/qc-status\" --broker tcp://127.0.0.1:$p3 --tsv | awk -F'\t' '\$1 == \"worker\" && \$2 == \"ahead\" && \$6 == 3 { f = 1 } END { exit !f }'"
wait_for "one started" 10 "grep -q 'worker: build' '$T/worker-ahead.log'"
timeout 30 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p3 --cancel "$ajob" >"$T/cancel.out" 2>&1
grep -q "job $ajob cancelled: its slides not started dropped (queued, or sent ahead to a worker); those running finish" "$T/cancel.out" \
    || fail "--cancel: $(cat "$T/cancel.out")"
wait_for "two taken back" 10 "[ \$(grep -c 'broker took back job $ajob task [0-9]* before it started: its job was cancelled' '$T/worker-ahead.log') -eq 2 ]" "$T/worker-ahead.log"
# fetched as is (the same command would run the cancelled ones again)
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p3 --attach "$ajob" -o "$T/ahead-out" >"$T/ahead2.log" 2>&1
[ "$(grep -c 'worker: build' "$T/worker-ahead.log")" -eq 1 ] \
    || fail "slides ran after the cancel: $(grep 'worker: build' "$T/worker-ahead.log")"
[ "$(grep -vc '^#' "$T/ahead-out/results.tsv")" -eq 1 ] \
    && [ "$(grep -c 'cancelled by the client' "$T/ahead-out/error.log")" -eq 2 ] \
    || fail "after the cancel: $(grep -vc '^#' "$T/ahead-out/results.tsv") rows; error.log: $(cat "$T/ahead-out/error.log"); $(tail -3 "$T/ahead2.log")"
pass "--cancel takes back the slides sent ahead and not started; the running one finishes"
