#!/bin/bash
# A worker started without --name (a container's: its hostname decides)
# keeps one name, HOST-PID of its supervisor, across the processes the
# supervisor restarts after a crash: qc-status shows one worker, and the
# crashed process's registration is retired when its successor joins,
# not declared dead after its heartbeats (the name was made from each
# child's PID, so it changed at every restart).
. "$(dirname "$0")/lib.sh"

port=$(free_port)
start_broker $port --heartbeat-ms 3000
"$BIN/qc-worker" --connect tcp://127.0.0.1:$port --slots 1 --heartbeat-ms 3000 \
    --test-crash-on pyramid >"$T/worker.log" 2>&1 &
sup=$!
PIDS+=($sup)
wait_for "worker registered" 10 "workers_registered $port 1"
name="$(hostname)-$sup"
grep -q "worker $name joined" "$T/broker.log" \
    || fail "the default name is not HOST-PID of the supervisor ($name): $(grep joined "$T/broker.log")"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" \
    "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" >"$T/submit.log" 2>&1
wait_for "a crash report" 20 "grep -q 'crashed (signal' '$T/broker.log'" "$T/broker.log"
wait_for "the restarted process joins" 20 \
    "[ \$(grep -c 'worker $name joined' '$T/broker.log') -ge 2 ]" "$T/broker.log"
grep -q "worker $name (.*) restarted after a crash" "$T/broker.log" \
    || fail "the crashed process's registration was not retired: $(grep -v INFO "$T/broker.log")"
grep -q "declared dead" "$T/broker.log" && fail "a registration was left to be declared dead"
grep 'joined' "$T/broker.log" | grep -v "worker $name joined" \
    && fail "a restarted process joined under another name"
grep -q "^[-0-9]* [0-9:]* [A-Z]* *  worker" "$T/worker.log" \
    && fail "the supervisor's lines carry no name: $(grep '  worker' "$T/worker.log")"
pass "one default name across restarts; the crashed registration retired at once"

# two processes of one name on one host (containers sharing a hostname,
# each worker PID 1): the broker warns, as it does for two hosts; one
# process back on a new socket (its broker was silent for a moment)
# is the same worker, and no warning
grep -q "another worker of that name" "$T/broker.log" \
    && fail "a restarted process was taken for a twin: $(grep 'of that name' "$T/broker.log")"
port2=$(free_port)
# the broker waits 20 beats before it declares a worker dead, the worker
# 3 before it reconnects: the old registration is still there when the
# new socket says READY
start_broker $port2 --heartbeat-ms 200 --liveness 20
bp=$BROKER_PID
start_worker $port2 pod --slots 1 --heartbeat-ms 200
wait_for "worker registered" 10 "workers_registered $port2 1"
kill -STOP $bp; sleep 1.5; kill -CONT $bp
wait_for "the worker back on a new socket" 10 \
    "grep -q 'worker pod (.*) is back on a new connection' '$T/broker.log'" "$T/broker.log"
grep -q "worker pod joined .* while another worker of that name runs" "$T/broker.log" \
    && fail "one worker back on a new socket was taken for a twin"
grep -q "pod .*declared dead" "$T/broker.log" \
    && fail "the old registration was gone before the new socket came (the check did not run)"
pass "one worker back on a new socket: no twin warning"
start_worker $port2 pod --slots 1 --heartbeat-ms 200
wait_for "the twin's warning" 10 "grep -q 'worker pod joined from $(hostname) while another worker of that name runs (from $(hostname), another process; .*give each qc-worker its own --name' '$T/broker.log'" \
    "$T/broker.log"
pass "two processes of one name on one host: warned"
