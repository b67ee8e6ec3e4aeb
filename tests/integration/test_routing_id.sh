#!/bin/bash
# A routing id is no identity (with CurveZMQ on): any peer may choose its
# ZeroMQ routing id (ZMQ_ROUTING_ID), and that of a connection that closed
# is free again. A client certificate that shows the routing id of
# another certificate's client, once that client left, is not its job's
# client: its HEARTBEATs do not attach the job (no LOG, RESULT or DONE
# of it reach it), they are refused in the broker's log, and the owner
# on that id gets the job as before. A client certificate on a worker's
# routing id neither keeps that worker alive nor speaks for it. The
# peers are tests/tools/qc_stranger.c; broker and worker are real.
. "$(dirname "$0")/lib.sh"

STRANGER=$TOOLS/qc_stranger
[ -x "$STRANGER" ] || fail "$STRANGER not built (make test builds it)"
K=$T/keys
mkdir -p "$K/allowed"
for r in broker:broker worker:w1 client:alice client:bob; do
    "$BIN/qc-keygen" --role "${r%%:*}" --name "${r#*:}@test" -o "$K" "${r#*:}" >/dev/null \
        || fail "qc-keygen ${r#*:}"
done
cp "$K/w1.cert" "$K/alice.cert" "$K/bob.cert" "$K/allowed/"
SK=$K/broker.cert
port=$(free_port)
EP=tcp://127.0.0.1:$port
LOG=$T/broker.log
start_broker $port --cert "$K/broker.cert_secret" --allow "$K/allowed" --heartbeat-ms 500
# a slide takes 3 s: its result comes after its client left
start_worker $port w1 --cert "$K/w1.cert_secret" --server-key "$SK" --slots 1 --prefetch 0 \
    --task-delay-ms 3000 --cache "$T/cache-w1"
wait_for "w1 registered" 10 "grep -q 'registered with broker' '$T/worker-w1.log'"

# the id libzmq would give some connection: 00 and a count
ID=00c0ffee01
as() {      # as CERT LOGNAME ARGS...: qc_stranger with that certificate on ID
    local cert=$1 log=$2; shift 2
    timeout 30 "$STRANGER" --connect "$EP" --cert "$K/$cert.cert_secret" --server-key "$SK" \
        --routing-id $ID "$@" >"$T/$log.log" 2>&1
}
as alice submit --wait-ms 300 submit "$T/nowhere.svs"
grep -q "got ACCEPTED job=1 " "$T/submit.log" || fail "alice's job: $(cat "$T/submit.log")"
wait_for "alice's job detached" 10 "grep -q 'job 1: client went away' '$LOG'" "$LOG"
# bob on alice's routing id while her slide finishes
as bob bob --wait-ms 5000 beat
! grep -q "got LOG\|got RESULT\|got DONE" "$T/bob.log" \
    || fail "bob got alice's job on her routing id: $(cat "$T/bob.log")"
grep -q "refused peer $ID (certificate bob@test.*HEARTBEAT from the routing id of another" "$LOG" \
    || fail "no refusal logged: $(tail -5 "$LOG")"
pass "another certificate on a client's routing id gets none of its job, refused in the log"
as alice alice --wait-ms 3000 beat
grep -q "got RESULT job=1 " "$T/alice.log" && grep -q "got DONE job=1 " "$T/alice.log" \
    || fail "alice did not get her job back on her routing id: $(cat "$T/alice.log")"
pass "its owner on that routing id gets its job's results"

# a worker's routing id: a client certificate there does not keep it alive
ID=00c0ffee02
timeout 30 "$STRANGER" --connect "$EP" --cert "$K/w1.cert_secret" --server-key "$SK" \
    --routing-id $ID --name fake --wait-ms 300 forge 1 1 0 0 >/dev/null 2>&1
grep -q "worker fake joined" "$LOG" || fail "the stranger worker did not join: $(tail -3 "$LOG")"
as bob bob2 --wait-ms 8000 beat &
beater=$!
PIDS+=($beater)
# its own 3 beats of 1 s missed, while bob beats on its id
wait_for "the stranger worker declared dead" 6 \
    "grep -q 'worker fake .*missed its heartbeats' '$LOG'" "$LOG"
wait $beater
pass "a client certificate on a worker's routing id does not keep that worker alive"
