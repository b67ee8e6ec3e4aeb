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

wait_exit $slow 40 || fail "the draining worker did not exit 0 in 40 s"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" \
    "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" >"$T/submit2.log" 2>&1 \
    || fail "fetching the job: exit $? $(tail -3 "$T/submit2.log")"
[ "$(grep -vc '^#' "$T/out/results.tsv")" -eq 2 ] || fail "expected 2 result rows"
grep -q 'quick' "$T/out/qc.log" || fail "no slide ran on the quick worker"
pass "both slides came back once"
