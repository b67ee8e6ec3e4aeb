#!/bin/bash
# A connection cut on the way mid-handshake, as the broker with CurveZMQ
# sees it: a firewall or NAT that dropped a peer's connection, or a
# partition that healed and delivered a handshake the peer had already
# given up on (its socket closed), arrives as a greeting begun and the
# connection closed. The broker logged that as "a peer without a
# certificate, or one that does not know this broker's public key" and
# nothing else: after every partition of a hospital network, its log
# reported a stranger where there was only its own worker (found by an
# outside pass through a fault proxy: tests/unit/test_handshake_cut.c is
# the worker's and client's side). The refusal is still logged, with the
# network between named as a cause too.
. "$(dirname "$0")/lib.sh"

K=$T/keys
mkdir -p "$K/allowed"
"$BIN/qc-keygen" --role broker -o "$K" broker >/dev/null || fail "qc-keygen broker"
"$BIN/qc-keygen" --role worker -o "$K" w1 >/dev/null || fail "qc-keygen w1"
cp "$K/w1.cert" "$K/allowed/"
port=$(free_port)
start_broker "$port" --state none --cert "$K/broker.cert_secret" --allow "$K/allowed"

# a ZMTP greeting begun (its signature), then the connection closed
exec 3<>"/dev/tcp/127.0.0.1/$port" || fail "cannot connect to the broker"
printf '\xff\0\0\0\0\0\0\0\0\x7f' >&3
sleep 0.2
exec 3>&-
wait_for "the refusal logged" 10 "grep -q 'refused a connection from' '$T/broker.log'" \
    "$T/broker.log"
line=$(grep 'refused a connection from' "$T/broker.log" | head -1)
echo "$line" | grep -q "its handshake failed" || fail "not told as a failed handshake: $line"
echo "$line" | grep -q "firewall" || fail "the network between is not named: $line"
pass "a handshake cut mid-greeting: refused and logged, the network between named as a cause"

# the broker still takes its worker
start_worker "$port" w1 --slots 1 --cert "$K/w1.cert_secret" --server-key "$K/broker.cert" \
    --timeout 10
wait_for "the worker registered" 10 "grep -q 'worker w1 joined' '$T/broker.log'" "$T/broker.log"
pass "the broker still takes its worker"
