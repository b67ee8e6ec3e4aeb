#!/bin/bash
# With CurveZMQ a RESULT counts only from the certificate its attempt
# went to. The broker journals whom each attempt went to, so the RESULT
# of a slide running when the broker is killed and restarted is taken
# from its worker; before, it was refused and the slide's second attempt
# (the restart queues it again) had to run to the end. A real broker
# (state folder, keys), a real worker whose slide takes 4 s, kill -9
# mid-slide, a restart on the same folder; then the same across a
# restart whose journal is rewritten (--state-recover after a damaged
# record), which must keep whom the running attempt went to.
source "$(dirname "$0")/lib.sh"

make_keys client:c1 worker:w1 worker:w2
port=$(free_port)
EP=tcp://127.0.0.1:$port
KEYS=(--cert "$K/broker.cert_secret" --allow "$K/allowed" --heartbeat-ms 200)
start_broker $port "${KEYS[@]}"
start_worker $port w1 --slots 1 --heartbeat-ms 200 --task-delay-ms 4000 \
    --cert "$K/w1.cert_secret" --server-key "$K/broker.cert"
wait_for "w1 registered" 10 "grep -q 'worker w1 joined' '$T/broker.log'"
# restart_and_finish PID LOG WHAT: the broker killed (-9) and started
# again; the qc-submit PID (output in LOG) ends within 60 s, exit 0, its
# worker's RESULT taken (not refused as dispatched before the restart)
restart_and_finish() {
    kill -9 $BROKER_PID
    wait $BROKER_PID 2>/dev/null
    start_broker $port "${KEYS[@]}"
    wait_exit "$1" 60
    local rc=$?
    [ $rc = 124 ] && fail "$3 did not finish in 60 s: $(tail -3 "$2")"
    [ $rc = 0 ] || fail "$3: exit $rc: $(tail -3 "$2")"
    grep -q "dispatched before this broker started" "$T/broker.log" \
        && fail "$3: its RESULT was not taken: $(grep 'dispatched before' "$T/broker.log" | head -2)"
}
slide=$SHARED/slides/real/CMU-1-Small-Region.svs
"$BIN/qc-submit" --broker "$EP" --cert "$K/c1.cert_secret" --server-key "$K/broker.cert" \
    -o "$T/out" --timeout 60 "$slide" >"$T/submit.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "the slide started" 20 "grep -q 'CMU-1-Small-Region.svs	worker	build\|CMU-1-Small-Region.svs\] worker: build' '$T/worker-w1.log'"
restart_and_finish $sub "$T/submit.log" "qc-submit"
# the restart queued the slide again; the worker's second attempt, if it
# began, is taken back because the first finished first
runs=$(grep -c 'build .* on ' "$T/worker-w1.log")
[ "$runs" = 1 ] || grep -q "another attempt of this task finished first" "$T/worker-w1.log" \
    || fail "the slide ran $runs times, the second not taken back: $(grep 'build\|took back' "$T/worker-w1.log" | head -5)"
[ "$(grep -c '^CMU-1-Small-Region.svs' "$T/out/results.tsv")" = 1 ] || fail "not one result row"
pass "a slide running at a kill -9 of a keyed broker: its worker's RESULT is taken after the restart (a second attempt, if begun, is taken back)"

# a compaction keeps it: w2's slide (10 s) runs; kill -9; job 1's
# dispatch record (the journal's first copy of w1's key) is damaged, so
# the restart (--state-recover) drops it and rewrites the journal; kill
# -9 again once it did, and restart: w2's RESULT still counts
kill -TERM $WORKER_PID; wait $WORKER_PID 2>/dev/null
start_worker $port w2 --slots 1 --heartbeat-ms 200 --task-delay-ms 10000 \
    --cert "$K/w2.cert_secret" --server-key "$K/broker.cert"
wait_for "w2 registered" 10 "grep -q 'worker w2 joined' '$T/broker.log'"
"$BIN/qc-submit" --broker "$EP" --cert "$K/c1.cert_secret" --server-key "$K/broker.cert" \
    -o "$T/out2" --timeout 60 "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" \
    >"$T/submit2.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "w2's slide started" 20 "grep -q 'build .* on ' '$T/worker-w2.log'"
kill -9 $BROKER_PID
wait $BROKER_PID 2>/dev/null
w1key=$(sed -n 's/^ *public-key = "\(.*\)"$/\1/p' "$K/w1.cert")
journal=$T/state-$port/journal
at=$(grep -obUaF -- "$w1key" "$journal" | head -1 | cut -d: -f1)
[ -n "$at" ] || fail "no dispatch record of w1 in the journal"
damage_byte "$journal" "$at"
compacted=$(grep -c 'journal compacted' "$T/broker.log")
start_broker $port "${KEYS[@]}" --state-recover
wait_for "the journal rewritten" 10 "[ \$(grep -c 'journal compacted' '$T/broker.log') -gt $compacted ]" "$T/broker.log"
restart_and_finish $sub "$T/submit2.log" "after the compaction, the second qc-submit"
[ "$(grep -c '^CMU-1-Small-Region-pyramid.svs' "$T/out2/results.tsv")" = 1 ] \
    || fail "not one result row"
pass "after a restart that rewrote the journal, and another, the running attempt's RESULT is still taken from its worker"

# the keyed broker's state folder, started without keys (a rollback, a
# unit file mistyped): refused, saying why, before any peer is heard;
# it went on, and any local user could fetch or cancel c1's jobs with a
# made-up job key
kill -TERM $BROKER_PID
wait $BROKER_PID 2>/dev/null
"$BIN/qc-broker" --bind "tcp://127.0.0.1:$port" --state "$T/state-$port" >"$T/keyless.log" 2>&1 &
kpid=$!
PIDS+=($kpid)
wait_exit $kpid 10
rc=$?
[ $rc = 2 ] && grep -q "the state folder $T/state-$port holds [0-9]* jobs\? submitted with a certificate (its broker ran with --cert): without --cert, anyone who can reach this broker could fetch or cancel" \
    "$T/keyless.log" || fail "a keyed state folder without --cert: exit $rc: $(cat "$T/keyless.log")"
start_broker $port "${KEYS[@]}"
pass "a state folder with jobs of certificates, started without --cert: refused (exit 2), saying why; with its keys it starts"
# the job's key is this user's alone in the output folder: .qc-job and
# .qc-slides (it was 0644 there, and another user copied it)
for f in .qc-job .qc-slides; do
    [ "$(stat -c %a "$T/out/$f")" = 600 ] || fail "$T/out/$f is $(stat -c %a "$T/out/$f"), not 600"
done
pass "the job's key (.qc-job, .qc-slides) is readable by its user alone"
