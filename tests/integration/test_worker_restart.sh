#!/bin/bash
# A supervised worker whose process died while it ran no slide (a kill -9,
# the OOM killer between slides) or that restarted to free stuck slots
# sent no crash report, so the broker kept the dead process's
# registration until its heartbeats were missed: qc-status counted two
# workers, and the broker warned of two workers of one name ("give each
# qc-worker its own --name") after every such restart. The new process's
# READY now names the one it replaces (succeeds), whose registration goes
# at once. Two workers that share a name, each with its own supervisor,
# are still two, and still warned of.
. "$(dirname "$0")/lib.sh"

port=$(free_port)
start_broker "$port"
start_worker "$port" w1 --slots 1
sup=$WORKER_PID
wait_for "the worker joined" 10 "grep -q 'worker w1 joined' '$T/broker.log'" "$T/broker.log"

count_workers() {
    "$BIN/qc-status" --broker "tcp://127.0.0.1:$port" --timeout 5 2>/dev/null \
        | sed -n 's/^broker .*: \([0-9]*\) workers\{0,1\}, .*/\1/p'
}

for round in 1 2; do
    child=$(pgrep -P "$sup")
    [ "$(echo "$child" | grep -c .)" -eq 1 ] || fail "round $round: the supervisor's child: '$child'"
    kill -9 "$child"
    wait_for "round $round: the restart" 10 \
        "[ \$(grep -c 'worker w1 (.*) restarted (its old process ended)' '$T/broker.log') -ge $round ]" \
        "$T/broker.log"
    wait_for "round $round: the new process joined" 10 \
        "[ \$(grep -c 'worker w1 joined' '$T/broker.log') -gt $round ]" "$T/broker.log"
    n=$(count_workers)
    [ "$n" = 1 ] || fail "round $round: qc-status counts '$n' workers after the restart"
done
grep -q "while another worker of that name runs" "$T/broker.log" \
    && fail "a restart was warned of as two workers: $(grep 'of that name' "$T/broker.log")"
grep -q "missed its heartbeats\|did not come back" "$T/broker.log" \
    && fail "a replaced process was declared dead later: $(grep 'declared dead' "$T/broker.log")"
pass "a worker process killed while idle: its registration went at its successor's READY, twice; one worker counted, no warning"

# another qc-worker of the same name (its own supervisor, its first
# process: it succeeds no one): two workers, warned of, neither retired
start_worker "$port" w1 --slots 1
twin=$WORKER_PID
wait_for "the twin warned of" 10 "grep -q 'while another worker of that name runs' '$T/broker.log'" \
    "$T/broker.log"
sleep 1
n=$(count_workers)
[ "$n" = 2 ] || fail "two workers of one name: qc-status counts '$n'"
[ "$(grep -c 'restarted (its old process ended)' "$T/broker.log")" -eq 2 ] \
    || fail "the twin retired a registration: $(grep restarted "$T/broker.log")"
kill -0 "$twin" && kill -0 "$sup" || fail "a worker ended"
pass "two qc-workers of one name stay two, warned of"
