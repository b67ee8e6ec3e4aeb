#!/bin/bash
# A cluster's worker with neither --slides-root nor --slides-url opens
# any path and fetches any URL any client with a certificate sends: it
# says so at start (it said nothing, while one with only one of the two
# warned of the other kind). A worker of one machine's broker without
# keys (the user's own) and one with both options are quiet about it.
. "$(dirname "$0")/lib.sh"

K=$T/keys
mkdir -p "$K/allowed"
for r in broker:broker worker:w1 worker:w2; do
    "$BIN/qc-keygen" --role "${r%%:*}" --name "${r#*:}" -o "$K" "${r#*:}" >/dev/null \
        || fail "qc-keygen ${r#*:}"
done
cp "$K/w1.cert" "$K/w2.cert" "$K/allowed/"
WARN="no --slides-root or --slides-url: this worker opens any slide path and fetches any http(s) URL"
port=$(free_port)
start_broker $port --state none --cert "$K/broker.cert_secret" --allow "$K/allowed"
start_worker $port w1 --cert "$K/w1.cert_secret" --server-key "$K/broker.cert" --slots 1 \
    --cache "$T/cache-w1"
wait_for "w1 registered" 10 "grep -q 'registered with broker' '$T/worker-w1.log'" "$T/worker-w1.log"
grep -q "$WARN" "$T/worker-w1.log" || fail "no warning: $(head -5 "$T/worker-w1.log")"
start_worker $port w2 --cert "$K/w2.cert_secret" --server-key "$K/broker.cert" --slots 1 \
    --cache "$T/cache-w2" \
    --slides-root "$SHARED/slides/real" --slides-url http://127.0.0.1:9/slides/
wait_for "w2 registered" 10 "grep -q 'registered with broker' '$T/worker-w2.log'" "$T/worker-w2.log"
! grep -q "$WARN\|confines .* only" "$T/worker-w2.log" || fail "w2 warned: $(head -5 "$T/worker-w2.log")"
pass "a worker with keys and neither option warns that it opens any path and URL; with both, quiet"

port2=$(free_port)
"$BIN/qc-broker" --bind "tcp://127.0.0.1:$port2" --state none >"$T/local-broker.log" 2>&1 &
PIDS+=($!)
wait_for "the keyless broker" 10 "grep -q 'listening on' '$T/local-broker.log'" "$T/local-broker.log"
start_worker $port2 w3 --slots 1 --cache "$T/cache-w3"
wait_for "w3 registered" 10 "grep -q 'registered with broker' '$T/worker-w3.log'" "$T/worker-w3.log"
! grep -q "$WARN" "$T/worker-w3.log" || fail "w3 warned: $(head -5 "$T/worker-w3.log")"
pass "a worker of a broker on this machine without keys does not"
