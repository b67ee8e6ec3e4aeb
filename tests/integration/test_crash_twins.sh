#!/bin/bash
# Two workers under one name (containers that share a hostname, a
# --name fixed in a deployment's template): when one crashes, its
# successor's crash report retires the crashed process's registration,
# never its live twin's (that sent the twin's running slide to run
# again, and made the twin register anew as an unknown peer).
. "$(dirname "$0")/lib.sh"

port=$(free_port)
start_broker $port
# the healthy twin, on a slow slide
start_worker $port twin --slots 1 --prefetch 0 --task-delay-ms 6000
healthy=$WORKER_PID
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --detach -o "$T/out1" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/submit1.log" 2>&1 \
    || fail "qc-submit --detach: $(tail -3 "$T/submit1.log")"
wait_for "the healthy twin runs its slide" 10 "grep -q 'worker: build' '$T/worker-twin.log'"
# the other twin: the same name and host, crashes on its slide
"$BIN/qc-worker" --connect tcp://127.0.0.1:$port --name twin --slots 1 --prefetch 0 \
    --test-crash-on pyramid >"$T/worker-crashing.log" 2>&1 &
PIDS+=($!)
wait_for "second worker registered" 10 "workers_registered $port 2"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out2" \
    "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" >"$T/submit2.log" 2>&1
wait_for "a crash report" 20 "grep -q 'crashed (signal' '$T/broker.log'" "$T/broker.log"
sleep 1
grep -q 'unknown peer' "$T/worker-twin.log" \
    && fail "the healthy twin was retired by the other's crash: $(grep -i 'twin.*restarted' "$T/broker.log")"
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out1" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/submit3.log" 2>&1 \
    || fail "fetching the healthy twin's job: exit $? $(tail -3 "$T/submit3.log")"
[ "$(grep -c 'CMU-1-Small-Region.svs\] worker: build' "$T/worker-twin.log")" -eq 1 ] \
    || fail "the healthy twin's slide ran more than once: $(grep 'worker: build' "$T/worker-twin.log")"
pass "a crash retires the crashed process's registration, not its twin's"
