#!/bin/bash
# A worker whose connection was cut (a firewall's reset, a NAT that
# dropped it) or that heard nothing for a while connects again on a new
# socket, while the broker still holds its old registration. It was
# registered anew, and the old registration, declared dead later, sent
# the slides the same process was still running back to the queue: each
# ran twice. The READY's instance says it is the same process: the
# registration moves to the new socket with its running slides.
. "$(dirname "$0")/lib.sh"

port=$(free_port)
# the broker waits 20 beats before it declares a worker dead, the
# worker 3 before it connects again: the old registration stands when
# the new socket says READY
start_broker $port --heartbeat-ms 200 --liveness 20 --state none
bp=$BROKER_PID
start_worker $port cut --slots 1 --prefetch 1 --heartbeat-ms 200 --task-delay-ms 6000
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" \
    "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" >"$T/submit.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "the first slide started" 10 "grep -q 'STARTED\|worker: build' '$T/worker-cut.log'" \
    "$T/worker-cut.log"
# the broker silent for 1.5 s: the worker leaves its socket for a new one
kill -STOP $bp; sleep 1.5; kill -CONT $bp
wait_for "the worker back on a new socket" 10 \
    "grep -q 'worker cut (.*) is back on a new connection' '$T/broker.log'" "$T/broker.log"
grep -q "worker cut (.*) is back on a new connection (the old one was cut or went silent): of its tasks, 1 running stay with it and 1 not started go back to the queue" \
    "$T/broker.log" || fail "the handover said otherwise: $(grep 'back on a new' "$T/broker.log")"
wait_exit $sub 60; rc=$?
[ $rc -eq 0 ] || fail "qc-submit: exit $rc: $(tail -3 "$T/submit.log")"
grep -q "declared dead" "$T/broker.log" && fail "the old registration was declared dead"
[ "$(grep -c 'worker: build' "$T/worker-cut.log")" -eq 2 ] \
    || fail "2 slides, $(grep -c 'worker: build' "$T/worker-cut.log") runs: $(grep 'worker: build' "$T/worker-cut.log")"
[ "$(grep -vc '^#' "$T/out/results.tsv")" -eq 2 ] || fail "expected 2 result rows"
pass "a worker back on a new socket keeps its running slide: each slide ran once"
