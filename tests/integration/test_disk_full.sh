#!/bin/bash
# The broker's state folder cannot be written (a file-size limit set with
# ulimit -f refuses writes with EFBIG, as a full disk does with ENOSPC):
# a new SUBMIT is refused with that reason, the job already accepted goes
# on to the end, each slide exactly once. Then retention: results of a
# finished job whose client stays away are deleted after --retention,
# and a client that comes back later is told so.
. "$(dirname "$0")/lib.sh"

bad=$(make_cohort "$T/cohort" 40)

# A broker on PORT whose files may take 3 MB each (ulimit -f, soft: a
# prlimit can lift it): the journal fits, a job's result file (images)
# does not. Then worker NAME. Logs into LOG.
limited_broker() {   # limited_broker PORT STATE LOG WORKER [broker args...]
    local port=$1 state=$2 log=$3 worker=$4; shift 4
    ( ulimit -S -f 3000; exec "$BIN/qc-broker" --bind tcp://127.0.0.1:$port --state "$state" \
          --heartbeat-ms 200 "$@" ) >>"$log" 2>&1 &
    BROKER_PID=$!
    PIDS+=($BROKER_PID)
    wait_for "broker listening" 10 "grep -q 'listening on' '$log'"
    start_worker $port "$worker" --slots 2 --heartbeat-ms 200 --task-delay-ms 50
    wait_for "worker registered" 10 "workers_registered $port 1"
}

port=$(free_port)
limited_broker $port "$T/state" "$T/broker.log" w1

"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/cohort/list" \
    >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
wait_for "the disk refusing writes" 60 "grep -q 'new jobs are refused' '$T/broker.log'"
grep -q "File too large" "$T/broker.log" || fail "the reason is not logged"
pass "the broker saw its state folder refuse a write, and said so"

"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/refused" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/refused.log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "a new job on a full disk: exit $rc, expected 2"
grep -q "cannot store a new job: its state folder .* cannot be written (File too large); accepted jobs go on" \
    "$T/refused.log" || fail "no clear reason: $(cat "$T/refused.log")"
pass "a new SUBMIT is refused with the reason"

# qc-status says so, first, and a readiness probe sees it in the exit
# code (before: a green table of workers over a broker refusing jobs)
"$BIN/qc-status" --broker tcp://127.0.0.1:$port >"$T/full.status" 2>&1
rc=$?
[ $rc -eq 7 ] && grep -q "^TROUBLE state-unwritable: its state folder $T/state cannot be written (File too large), for [0-9]* s: new jobs are refused" \
    "$T/full.status" || fail "qc-status on a full state folder: exit $rc: $(cat "$T/full.status")"
"$BIN/qc-status" --broker tcp://127.0.0.1:$port --tsv >"$T/full.tsv" 2>&1
awk -F'\t' '$1 == "broker" && $5 == "state-unwritable" {b = 1}
             $1 == "trouble" && $2 == "state-unwritable" && $3 ~ /^its state folder/ {t = 1}
             END {exit !(b && t)}' "$T/full.tsv" || fail "qc-status --tsv: $(cat "$T/full.tsv")"
pass "qc-status shows the state folder that cannot be written, and exits 7"

for i in $(seq 1 600); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "the accepted job did not finish in 60 s"
wait $submit; rc=$?
[ $rc -eq 1 ] || fail "accepted job: exit $rc, expected 1: $(tail -3 "$T/submit.log")"
check_exactly_once "$T/out" "$T/cohort/list"
pass "the job accepted before the disk filled went on: 40 slides, each once"
# delivered, that job goes at once, not after --linger (600 s): its
# result file was the room the next job waited for
job1=$(awk '/^job /{print $2; exit}' "$T/out/.qc-job")
wait_for "the delivered job forgotten" 10 "grep -q 'job $job1: delivered: forgotten now, not after --linger, as the state folder is full' '$T/broker.log'"
wait_for "new jobs accepted again" 10 "grep -q 'can be written again: new jobs are accepted' '$T/broker.log'"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/next" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/next.log" 2>&1 \
    || fail "a new job once the delivered one went: $(tail -3 "$T/next.log")"
pass "a delivered job on a full state folder went at once; the next job was accepted"
"$BIN/qc-status" --broker tcp://127.0.0.1:$port --tsv >"$T/clear.tsv" 2>&1
rc=$?
[ $rc -eq 0 ] && ! grep -q "^trouble" "$T/clear.tsv" \
    && awk -F'\t' '$1 == "broker" {exit !($5 == "ok")}' "$T/clear.tsv" \
    || fail "qc-status once the folder takes writes again: exit $rc: $(cat "$T/clear.tsv")"
pass "the folder written again, qc-status is clear (exit 0, state ok)"
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null

# the results waiting for the disk are bounded (--max-mb-unwritten, here
# 1 MB): over it no task goes out, whatever frees credit, until the disk
# takes them; then the job goes on. Before, the bound was never applied
# and the broker's memory grew by each result until the OOM killer came.
port=$(free_port)
limited_broker $port "$T/state2" "$T/broker2.log" w3 --max-mb-unwritten 1
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/held" --list "$T/cohort/list" \
    >"$T/held.log" 2>&1 &
submit=$!
PIDS+=($submit)
wait_for "dispatch held" 60 "grep -q 'MB of results wait for the disk: no new tasks are dispatched until they are written' '$T/broker2.log'"
# held: nothing runs for 2 s while slides wait in the queue
sleep 1
"$BIN/qc-status" --broker tcp://127.0.0.1:$port >"$T/held1.status" 2>&1
[ $? -eq 7 ] && grep -q "^TROUBLE results-held: [0-9]* MB of results wait in memory for the state folder: no new task is dispatched" \
    "$T/held1.status" || fail "qc-status while dispatch is held: $(cat "$T/held1.status")"
sleep 2
"$BIN/qc-status" --broker tcp://127.0.0.1:$port >"$T/held2.status" 2>&1
for f in "$T/held1.status" "$T/held2.status"; do
    awk '$1 ~ /^[0-9]+$/ && NF >= 6 { if ($5 > 0 && $6 == 0) ok = 1 } END { exit !ok }' "$f" \
        || fail "dispatch not held: $(cat "$f")"
done
[ "$(awk '$1 ~ /^[0-9]+$/ {print $2 + $3}' "$T/held1.status")" = "$(awk '$1 ~ /^[0-9]+$/ {print $2 + $3}' "$T/held2.status")" ] \
    || fail "slides ran while dispatch was held: $(cat "$T/held1.status" "$T/held2.status")"
pass "over --max-mb-unwritten of results waiting for the disk, no task went out"
prlimit --pid $BROKER_PID --fsize=unlimited: 2>"$T/prlimit.err" || fail "prlimit: $(cat "$T/prlimit.err")"
wait_for "dispatch again" 30 "grep -q 'results no longer wait for the disk: tasks are dispatched again' '$T/broker2.log'"
for i in $(seq 1 900); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "the held job did not finish in 90 s once the disk took writes"
wait $submit; rc=$?
[ $rc -eq 1 ] || fail "held job: exit $rc, expected 1: $(tail -3 "$T/held.log")"
check_exactly_once "$T/held" "$T/cohort/list"
pass "once the disk took the results, the job went on: 40 slides, each once"
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null

# retention: a job whose client went away finishes; its results wait 2 s
port=$(free_port)
start_broker $port --heartbeat-ms 200 --retention 2
start_worker $port w2 --slots 2 --heartbeat-ms 200
w2=$WORKER_PID
wait_for "worker registered" 10 "workers_registered $port 1"
gone_client $port "$T/late" "$T/late.log" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs"
job=$JOB
wait_for "results deleted after --retention" 30 "grep -q 'job $job: .* results waited [0-9]* s for a client after the job finished: deleted (--retention 2 s)' '$T/broker.log'"
[ ! -e "$T/state-$port/results/$job.qcr" ] || fail "the result file is still there"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$job" -o "$T/late" >"$T/attach.log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "attach after retention: exit $rc, expected 2"
grep -q "waited 2 s for a client that did not come; they were deleted at .* (qc-broker --retention)" \
    "$T/attach.log" || fail "no clear message: $(cat "$T/attach.log")"
pass "results kept past --retention are deleted; a late client is told"

# and a restart keeps that answer (the journal remembers forgotten jobs)
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
start_broker $port --heartbeat-ms 200 --retention 2
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$job" -o "$T/late" >"$T/attach2.log" 2>&1
grep -q "waited 2 s for a client" "$T/attach2.log" || fail "after a restart: $(cat "$T/attach2.log")"
pass "a restart keeps what a late client is told"

# a job no worker can run (--gpu-only, a CPU worker only) whose client
# went away: after --retention with neither a result nor its client it is
# cancelled, its slides failed marked for a rerun (it stayed queued for
# ever, its queue in qc-status and its journal kept). With no worker at
# all (an outage) it waits.
kill -TERM $w2
wait $w2 2>/dev/null
wait_for "no worker left" 10 "! workers_registered $port 1"
gone_client $port "$T/stalled" "$T/stalled.log" --gpu-only \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs"
sjob=$JOB
sleep 4                             # no worker: an outage, not a stall
grep -q "job $sjob: no slide of it ran" "$T/broker.log" && fail "a job was cancelled while no worker was there"
start_worker $port w4 --slots 1 --heartbeat-ms 200
wait_for "a CPU worker registered" 10 "workers_registered $port 1"
wait_for "the stalled job cancelled" 30 "grep -q 'job $sjob: no slide of it ran for [0-9]* s while its client was away: cancelled (--retention 2 s; 2 slides were queued: no worker could run them)' '$T/broker.log'"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$sjob" -o "$T/stalled" >"$T/stalled2.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "attach to the cancelled job: exit $rc, expected 1: $(cat "$T/stalled2.log")"
[ "$(grep -c 'not run: no slide of the job ran for qc-broker --retention while its client was away (no worker could run them: do they need a GPU?; a rerun tries again)$' "$T/stalled/error.log")" -eq 2 ] \
    || fail "the stalled job's slides: $(cat "$T/stalled/error.log")"
pass "a job no worker could run, its client away: cancelled after --retention, its slides marked for a rerun"

# the wall clock stepped 10 days forward while results wait (NTP after a
# bad RTC): --retention counts on the monotonic clock, nothing is deleted
# and the late client still gets every result
ft=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -1)
[ -n "$ft" ] || fail "libfaketime not installed (tests/install-deps.sh installs faketime)"
port=$(free_port)
echo "+0" >"$T/clock"
# a broker whose wall clock is $T/clock's (libfaketime), on one state
# folder, --retention 3600; sets jb
start_clocked_broker() {
    LD_PRELOAD=$ft FAKETIME_TIMESTAMP_FILE="$T/clock" FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \
        "$BIN/qc-broker" --bind tcp://127.0.0.1:$port --state "$T/state-jump" --heartbeat-ms 200 \
        --retention 3600 >>"$T/jump.log" 2>&1 &
    jb=$!
    PIDS+=($jb)
}
start_clocked_broker
wait_for "broker listening" 10 "grep -q 'listening on' '$T/jump.log'" "$T/jump.log"
start_worker $port w3 --slots 2 --heartbeat-ms 200
gone_client $port "$T/jump" "$T/jump1.log" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs"
job=$JOB
wait_for "job finished" 60 "\"\$BIN/qc-status\" --broker tcp://127.0.0.1:$port --timeout 3 | awk '\$1 == $job && \$2 + \$3 == \$4' | grep -q ." "$T/jump.log"
echo "+10d" >"$T/clock"
sleep 3
grep -q "job $job: .*deleted (--retention" "$T/jump.log" && fail "a clock step deleted the results: $(grep deleted "$T/jump.log")"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$job" -o "$T/jump" >"$T/jump2.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "attach after the clock step: exit $rc: $(tail -3 "$T/jump2.log")"
[ "$(grep -vc '^#' "$T/jump/results.tsv")" -eq 2 ] || fail "not both results after the clock step"
pass "the wall clock stepped 10 days forward: --retention 3600 deleted nothing, the late client got every result"

# ...and across a restart the wall clock still counts: a job that
# finished two days before the broker comes back (the machine rebooted
# meanwhile: its monotonic clock started again) is past --retention 3600
gone_client $port "$T/jump2" "$T/jump3.log" "$SHARED/slides/real/CMU-1-Small-Region.svs"
job=$JOB
wait_for "job finished" 60 "\"\$BIN/qc-status\" --broker tcp://127.0.0.1:$port --timeout 3 | awk '\$1 == $job && \$2 + \$3 == \$4' | grep -q ." "$T/jump.log"
kill -TERM $jb; wait $jb 2>/dev/null
echo "+12d" >"$T/clock"
start_clocked_broker
wait_for "results past --retention deleted after the restart" 10 \
    "grep -q 'job $job: 1 results waited 1[67][0-9][0-9][0-9][0-9] s for a client after the job finished: deleted' '$T/jump.log'" "$T/jump.log"
pass "across a restart two days later, --retention 3600 deleted the results (their age from the wall clock)"

# a run whose disk is full from the start (its .qc-config refused):
# exit 5 with the reason, and the folder it made goes again, not left
# with empty results.tsv, error.log and qc.log
mkdir "$T/start-full"
( ulimit -S -f 4; exec "$BIN/qc-submit" -q -o "$T/start-full/out" \
      "$SHARED/slides/real/CMU-1-Small-Region.svs" ) >"$T/start-full.log" 2>&1
rc=$?
[ $rc -eq 5 ] && grep -q "cannot write $T/start-full/out/.qc-config: File too large" "$T/start-full.log" \
    || fail "a full disk from the start: exit $rc: $(cat "$T/start-full.log")"
[ -e "$T/start-full/out" ] && fail "the folder made for the run stayed: $(ls -A "$T/start-full/out")"
pass "a full disk from the start: exit 5, the reason, and no folder left behind"

# a slide's folder that cannot be made (a file of its name in the way):
# refused before the job, exit 2, nothing written (it once stopped the
# run at the first result, exit 5; before that, 40 "ok" rows went out
# with 20 slides' images, found by an operator's review; a folder moved
# away mid-run still stops it so, no row without its images); the way
# cleared, the same command writes it whole
mkdir -p "$T/inway/out" "$T/inway/cohort"
ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/inway/cohort/a.svs"
echo "not a folder" >"$T/inway/out/a.svs"
"$BIN/qc-submit" -q -o "$T/inway/out" "$T/inway/cohort" >"$T/inway.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "qc-submit: -o $T/inway/out holds a file of the name of slide $T/inway/cohort/a.svs" "$T/inway.log" \
    || fail "a file in a slide folder's way: exit $rc: $(cat "$T/inway.log")"
[ "$(ls -A "$T/inway/out")" = "a.svs" ] || fail "the refused run wrote: $(ls -A "$T/inway/out")"
rm "$T/inway/out/a.svs"
"$BIN/qc-submit" -q -o "$T/inway/out" "$T/inway/cohort" >"$T/inway2.log" 2>&1 \
    || fail "the way cleared: exit $?: $(cat "$T/inway2.log")"
[ "$(grep -vc '^#' "$T/inway/out/results.tsv")" = 1 ] && [ -s "$T/inway/out/a.svs/a.svs_thumb.png" ] \
    || fail "the way cleared: not written whole: $(ls -R "$T/inway/out" | head)"
pass "a slide's folder that cannot be made: refused before the job, exit 2, nothing written; the same command then writes it whole"

# a broker started on a state folder it cannot write (a full disk): exit
# 5, which its systemd unit restarts (RestartPreventExitStatus=2: it
# exited 2 and stayed down for the night, found by an operator's review)
# (its words through a pipe: the limit would stop them in a file too)
fport=$(free_port)
( ulimit -S -f 0; exec timeout 20 "$BIN/qc-broker" --bind tcp://127.0.0.1:$fport \
      --state "$T/full-start" ) 2>&1 | cat >"$T/full-start.log"
rc=${PIPESTATUS[0]}
[ $rc -eq 5 ] && grep -q "the state folder refused a write: cannot write $T/full-start/journal: File too large" "$T/full-start.log" \
    && ! grep -q "accepted jobs go on" "$T/full-start.log" \
    || fail "a broker started on a full disk: exit $rc: $(cat "$T/full-start.log")"
grep -q "^RestartPreventExitStatus=2$" deploy/ansible/roles/qc_broker/templates/qc-broker.service.j2 \
    || fail "the broker's unit no longer keeps 2 from a restart: check this test's premise"
pass "a broker started on a full disk: exit 5 (restarted by its unit), the reason, no word of jobs going on"

# the output folder deleted while a broker's job runs: exit 5, and the
# job is cancelled, since no folder names it (its key went with it): the
# same command started a second job beside the first, all its slides
# running twice (an operator's review). The folder put back, the same
# command fetches what the job ran and runs the rest, each slide once.
gport=$(free_port)
start_broker $gport --heartbeat-ms 200
start_worker $gport gw --slots 1 --heartbeat-ms 200 --task-delay-ms 1500
wait_for "gw registered" 10 "workers_registered $gport 1"
mkdir -p "$T/gone/cohort"
for i in 1 2 3 4; do ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/gone/cohort/g$i.svs"; done
"$BIN/qc-submit" --broker tcp://127.0.0.1:$gport -o "$T/gone/out" "$T/gone/cohort" \
    >"$T/gone1.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "a first result" 30 "grep -q '^ok ' '$T/gone1.log'"
cp -a "$T/gone/out" "$T/gone/kept"          # what a user moving it away keeps
rm -rf "$T/gone/out"
wait_exit $sub 30; rc=$?
job=$(sed -n 's/^job \([0-9]*\) on .*/\1/p' "$T/gone1.log" | head -1)
[ $rc -eq 5 ] && grep -q "the output folder $T/gone/out is gone" "$T/gone1.log" \
    && grep -q "qc-submit: job $job is cancelled: the folder that named it is gone" "$T/gone1.log" \
    || fail "the folder deleted mid-run: exit $rc: $(tail -4 "$T/gone1.log")"
wait_for "job $job cancelled at the broker" 10 "grep -q 'job $job.*cancel' '$T/broker.log'" "$T/broker.log"
mv "$T/gone/kept" "$T/gone/out"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$gport -o "$T/gone/out" "$T/gone/cohort" \
    >"$T/gone2.log" 2>&1 || fail "the folder put back: exit $?: $(tail -3 "$T/gone2.log")"
ls "$T/gone/cohort"/*.svs >"$T/gone.list"
check_exactly_once "$T/gone/out" "$T/gone.list"
runs=$(grep -c 'build .* on ' "$T/worker-gw.log")
[ "$runs" -le 5 ] || fail "4 slides ran $runs times: $(grep 'build .* on ' "$T/worker-gw.log")"
pass "the output folder deleted mid-run: exit 5, its job cancelled (no second job beside it); put back, the same command fetched it and ran the rest, each slide once"

# a state folder nearly full: qc-status warns before the first refusal
# (a file system of 8 MB, in a mount namespace of the broker's own),
# and is clear once the file system has room
if unshare -m --propagation=private true 2>/dev/null; then
    mkdir -p "$T/small"
    sport=$(free_port)
    unshare -m --propagation=private sh -c 'mount -t tmpfs -o size=8m tmpfs "$1" && shift && exec "$@"' \
        sh "$T/small" "$BIN/qc-broker" --bind tcp://127.0.0.1:$sport --state "$T/small" \
        >"$T/small.log" 2>&1 &
    spid=$!
    PIDS+=($spid)
    wait_for "the small broker listening" 10 "grep -q 'listening on' '$T/small.log'" "$T/small.log"
    "$BIN/qc-status" --broker tcp://127.0.0.1:$sport >"$T/small.status" 2>&1
    rc=$?
    [ $rc -eq 7 ] && grep -q "^TROUBLE state-space-low: [0-7] MB free for the state folder $T/small: once full, new jobs are refused" \
        "$T/small.status" || fail "qc-status on a nearly full state folder: exit $rc: $(cat "$T/small.status")"
    grep -q "WARNING.*[0-7] MB free for the state folder $T/small: once it is full, new jobs are refused; free space there" \
        "$T/small.log" || fail "the broker's log does not say the folder is filling: $(cat "$T/small.log")"
    nsenter -t $spid -m mount -o remount,size=512m "$T/small" 2>"$T/remount.err" \
        || fail "remount: $(cat "$T/remount.err")"
    "$BIN/qc-status" --broker tcp://127.0.0.1:$sport >"$T/small2.status" 2>&1
    rc=$?
    [ $rc -eq 0 ] && ! grep -q TROUBLE "$T/small2.status" \
        || fail "qc-status once there is room: exit $rc: $(cat "$T/small2.status")"
    wait_for "room said in the log" 15 "grep -q 'INFO.* MB free for the state folder $T/small again' '$T/small.log'" "$T/small.log"
    kill -TERM $spid; wait $spid 2>/dev/null
    pass "a state folder with under 64 MB free is said by qc-status (exit 7) and the broker's log; with room, clear"
elif [ "$(id -u)" = 0 ]; then
    fail "no mount namespace can be made here, as root: $(unshare -m --propagation=private true 2>&1)"
else
    echo "note: not root, no mount namespace: the nearly-full state folder is not tried"
fi
