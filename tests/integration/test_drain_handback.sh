#!/bin/bash
# A worker stopped with SIGTERM hands its queued (sent ahead, not
# started) tasks back at once: another worker runs them while the
# draining one finishes its running slide. (The refs it sent lacked the
# attempt and the job's key, so the broker dropped them and the slides
# waited for the draining worker to leave: in a pod, its grace period.)
. "$(dirname "$0")/lib.sh"

port=$(free_port)
start_broker $port --heartbeat-ms 200
# one slot, one task sent ahead: the slow worker holds both slides
start_worker $port slow --slots 1 --prefetch 1 --heartbeat-ms 200 --task-delay-ms 20000
slow=$WORKER_PID
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --detach -o "$T/out" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" \
    "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" >"$T/submit.log" 2>&1 \
    || fail "qc-submit --detach: $(tail -3 "$T/submit.log")"
holds() {   # holds WORKER N: qc-status shows WORKER with N CPU tasks
    "$BIN/qc-status" --broker tcp://127.0.0.1:$port --tsv --timeout 2 2>/dev/null \
        | awk -F'\t' -v w="$1" -v n="$2" '$1 == "worker" && $2 == w && $6 == n { f = 1 }
              END { exit !f }'
}
wait_for "the slow worker holds both slides" 10 "holds slow 2"
start_worker $port quick --slots 1 --heartbeat-ms 200
quick=$WORKER_PID
wait_for "second worker registered" 10 "workers_registered $port 2"

kill -TERM $slow
wait_for "drain seen" 5 "grep -q 'slow is draining: 1 task handed back' '$T/broker.log'"
# the handed-back slide runs on the quick worker now, not in 20 s
wait_for "the handed-back slide runs elsewhere" 8 \
    "grep -q 'worker: build' '$T/worker-quick.log'" "$T/broker.log"
pass "a draining worker's queued task went to another worker at once"
"$BIN/qc-status" --broker tcp://127.0.0.1:$port --timeout 2 >"$T/status-drain.txt" 2>&1
grep -q "slow: leaving (asked to stop): takes no new slide, and goes once its 1 running slide ends" \
    "$T/status-drain.txt" || fail "qc-status has no note for the draining worker: $(cat "$T/status-drain.txt")"
pass "qc-status says why the draining worker takes no slide, and when it goes"

wait_exit $slow 40 || fail "the draining worker did not exit 0 in 40 s"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" \
    "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" >"$T/submit2.log" 2>&1 \
    || fail "fetching the job: exit $? $(tail -3 "$T/submit2.log")"
[ "$(grep -vc '^#' "$T/out/results.tsv")" -eq 2 ] || fail "expected 2 result rows"
grep -q 'quick' "$T/out/qc.log" || fail "no slide ran on the quick worker"
pass "both slides came back once"

# a worker stopped while its broker is away (killed, not yet restarted):
# its running slide finishes, and the worker said nothing of the result
# that never reached a broker, leaving as if all went well. It now says
# so; the broker, back on its journal, runs the slide again, and the
# client gets it once.
port2=$(free_port)
start_broker $port2 --heartbeat-ms 200 --state "$T/st2"
bp=$BROKER_PID
start_worker $port2 lone --slots 1 --heartbeat-ms 200 --task-delay-ms 3000
lone=$WORKER_PID
wait_for "worker registered" 10 "workers_registered $port2 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port2 --detach -o "$T/out2" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/submit3.log" 2>&1 \
    || fail "qc-submit --detach: $(tail -3 "$T/submit3.log")"
wait_for "the slide started" 10 "grep -q 'worker: build' '$T/worker-lone.log'"
kill -9 $bp; wait $bp 2>/dev/null
kill -TERM $lone
wait_exit $lone 30 || fail "the worker did not leave in 30 s with its broker away"
grep -q "leaving while broker tcp://127.0.0.1:$port2 does not answer: the results of 1 slide finished meanwhile may never reach it" \
    "$T/worker-lone.log" || fail "the undelivered result is not said: $(tail -5 "$T/worker-lone.log")"
grep -q "went to the broker" "$T/worker-lone.log" \
    && fail "said its tasks went to a broker that did not answer: $(tail -5 "$T/worker-lone.log")"
grep -q "left: every running task finished, the broker not answering" "$T/worker-lone.log" \
    || fail "how it left is not said: $(tail -5 "$T/worker-lone.log")"
pass "a worker leaving while its broker is away says its result may not reach it"
start_broker $port2 --heartbeat-ms 200 --state "$T/st2"
start_worker $port2 again --slots 1 --heartbeat-ms 200
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port2 -o "$T/out2" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/submit4.log" 2>&1 \
    || fail "fetching the job after the restart: exit $? $(tail -3 "$T/submit4.log")"
[ "$(grep -vc '^#' "$T/out2/results.tsv")" -eq 1 ] || fail "expected 1 result row"
pass "the broker back on its journal ran the slide again; it came back once"
