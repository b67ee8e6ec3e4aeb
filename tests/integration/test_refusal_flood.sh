#!/bin/bash
# A stranger who makes a new key for each try (the broker's public key
# is no secret: every worker and client holds it) is one peer to the
# broker's log: its refusals at the handshake are counted by address,
# the first 5 in 10 s naming their key and a later line how many more
# came, not a WARNING line per key (which filled the log, and under journald's
# rate limit pushed the broker's other lines out). A key once admitted
# is still named each time it is refused (per 10 s). The stranger is
# tests/tools/qc_stranger.c; the broker is real.
. "$(dirname "$0")/lib.sh"

STRANGER=$TOOLS/qc_stranger
[ -x "$STRANGER" ] || fail "$STRANGER not built (make test builds it)"
K=$T/keys
mkdir -p "$K/allowed"
for r in broker:broker client:alice; do
    "$BIN/qc-keygen" --role "${r%%:*}" --name "${r#*:}" -o "$K" "${r#*:}" >/dev/null \
        || fail "qc-keygen ${r#*:}"
done
port=$(free_port)
EP=tcp://127.0.0.1:$port
LOG=$T/broker.log
start_broker $port --state none --cert "$K/broker.cert_secret" --allow "$K/allowed"

n=30
for i in $(seq 1 $n); do
    timeout 10 "$STRANGER" --connect "$EP" --ephemeral --server-key "$K/broker.cert" \
        --wait-ms 100 status >>"$T/strangers.log" 2>&1
done
[ "$(grep -c '^key ' "$T/strangers.log")" -eq $n ] || fail "strangers: $(tail -3 "$T/strangers.log")"
# 5 a 10 s window (REFUSE_GROUP_BURST): the tries may span two
got=$(grep -c "refused a connection from 127.0.0.1 (key .*unknown key" "$LOG")
[ "$got" -ge 1 ] && [ "$got" -le 10 ] \
    || fail "$n strangers' keys: $got refusal lines, not 1 to 10: $(grep -a refused "$LOG" | tail -3)"
wait_for "the refusals not logged counted" 15 \
    "grep -q 'refused a connection from 127.0.0.1: unknown key.*more times in the last' '$LOG'" "$LOG"
pass "$n tries with $n new keys from one address: $got refusal lines with a key, then a count"

# a key the broker admitted once, then revoked: named when refused
cp "$K/alice.cert" "$K/allowed/"
wait_for "alice admitted" 10 "grep -q 'admitted certificate alice' '$LOG'" "$LOG"
rm "$K/allowed/alice.cert"
wait_for "alice revoked" 10 "grep -q 'revoked certificate alice' '$LOG'" "$LOG"
timeout 10 "$STRANGER" --connect "$EP" --cert "$K/alice.cert_secret" --server-key "$K/broker.cert" \
    --wait-ms 200 status >/dev/null 2>&1
grep -q "refused a connection from 127.0.0.1 (key .*certificate alice was revoked" "$LOG" \
    || fail "a revoked key not named: $(grep -a refused "$LOG" | tail -3)"
pass "a revoked certificate refused at the handshake is named, its key with it"
