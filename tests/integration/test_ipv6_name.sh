#!/bin/bash
# A broker named by a host name with only IPv6 addresses (an IPv6-only
# lab network) was never reached: the programs set IPv6 only for literal
# addresses (tcp://[::1]:P), libzmq then looked the name up for IPv4
# alone, found nothing and retried unseen, and the user read "no answer
# from broker". Such a name now gets IPv6; a name that does not resolve
# at all is said. Each program runs in a mount namespace of its own whose
# /etc/hosts names qc-v6only (::1 only) and qc-both (127.0.0.1 and ::1),
# and whose resolv.conf asks 127.0.0.1 (no DNS traffic leaves the
# machine). As root, where unshare and IPv6 loopback work.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "a mount namespace with its own /etc/hosts needs root"
command -v unshare >/dev/null || skip "unshare not installed"
printf '127.0.0.1 localhost\n::1 qc-v6only\n127.0.0.1 qc-both\n::1 qc-both\n' >"$T/hosts"
printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$T/resolv.conf"
# exec_in_ns CMD...: becomes CMD with that /etc/hosts and resolv.conf
# (unshare and sh exec it); in_ns CMD...: the same in a subshell, the
# caller going on. A program run in the background goes as
# "( exec_in_ns CMD ) &": the PID $! gives, and the one stopped at the
# end, is the program's (a function run with & is a subshell, which alone
# was stopped: the worker was left running, found by its CI runs)
exec_in_ns() {
    exec unshare -m sh -c 'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@"' \
        sh "$T/hosts" "$T/resolv.conf" "$@"
}
in_ns() { ( exec_in_ns "$@" ); }
in_ns getent ahosts qc-v6only >"$T/getent.log" 2>&1 \
    || skip "a mount namespace with its own /etc/hosts cannot be made here: $(cat "$T/getent.log")"
grep -q '^::1 ' "$T/getent.log" && ! grep -q '^127\.' "$T/getent.log" \
    || fail "qc-v6only does not resolve to ::1 alone in the namespace: $(cat "$T/getent.log")"

port=$(free_port)
"$BIN/qc-broker" --bind "tcp://[::1]:$port" --state none >"$T/broker.log" 2>&1 &
PIDS+=($!)
wait_for "broker on [::1]" 10 "grep -q 'listening on' '$T/broker.log'" "$T/broker.log"
grep -q "cannot bind\|Cannot assign" "$T/broker.log" && skip "no IPv6 loopback here: $(cat "$T/broker.log")"

( exec_in_ns "$BIN/qc-worker" --connect "tcp://qc-v6only:$port" --name v6 --slots 1 \
      --no-supervise ) >"$T/worker.log" 2>&1 &
PIDS+=($!)
wait_for "the worker by an IPv6-only name registers" 15 "grep -q 'v6 registered with broker' '$T/worker.log'" \
    "$T/worker.log"
in_ns "$BIN/qc-submit" --broker "tcp://qc-v6only:$port" -o "$T/out" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" --timeout 60 >"$T/submit.log" 2>&1 \
    || fail "qc-submit by the IPv6-only name: $(tail -3 "$T/submit.log")"
grep -q 'ok 1/1 CMU-1-Small-Region.svs (v6)' "$T/submit.log" || fail "the slide: $(cat "$T/submit.log")"
in_ns "$BIN/qc-status" --broker "tcp://qc-v6only:$port" --timeout 5 >"$T/status.log" 2>&1 \
    || fail "qc-status by the IPv6-only name: $(cat "$T/status.log")"
grep -q '^v6 ' "$T/status.log" || fail "qc-status does not list the worker: $(cat "$T/status.log")"
pass "a broker named by an IPv6-only host name: worker, qc-submit and qc-status reach it"

# a name with both kinds keeps IPv4 (a broker on 127.0.0.1 alone)
port4=$(free_port)
start_broker "$port4" --state none
in_ns "$BIN/qc-status" --broker "tcp://qc-both:$port4" --timeout 5 >"$T/both.log" 2>&1 \
    || fail "qc-status by a name with both kinds, broker on 127.0.0.1: $(cat "$T/both.log")"
pass "a name with an IPv4 address too still reaches a broker on 127.0.0.1"

# a name that does not resolve: said, by each program
in_ns "$BIN/qc-status" --broker "tcp://qc-nowhere:$port" --timeout 2 >"$T/none.log" 2>&1
[ $? -eq 3 ] || fail "qc-status, a name that does not resolve: exit not 3: $(cat "$T/none.log")"
grep -q "no answer from broker tcp://qc-nowhere:$port in 2 s: the name 'qc-nowhere' does not resolve on this machine" \
    "$T/none.log" || fail "qc-status does not say the name: $(cat "$T/none.log")"
in_ns "$BIN/qc-submit" --broker "tcp://qc-nowhere:$port" -o "$T/none-out" --timeout 2 \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/none-submit.log" 2>&1
[ $? -eq 3 ] && grep -q "the name 'qc-nowhere' does not resolve on this machine" "$T/none-submit.log" \
    || fail "qc-submit, a name that does not resolve: $(cat "$T/none-submit.log")"
in_ns "$BIN/qc-worker" --connect "tcp://qc-nowhere:$port" --timeout 2 --no-supervise \
    >"$T/none-worker.log" 2>&1
[ $? -eq 3 ] && grep -q "the name 'qc-nowhere' does not resolve on this machine" "$T/none-worker.log" \
    || fail "qc-worker, a name that does not resolve: $(cat "$T/none-worker.log")"
pass "a name that does not resolve is said by qc-status, qc-submit and qc-worker (exit 3)"
