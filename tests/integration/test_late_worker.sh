#!/bin/bash
# A worker declared dead of silence whose messages still come: on a slow
# link (an outside pass put a 200 KB/s proxy between worker and broker)
# a slide's RESULT, its images, takes longer than the heartbeat interval
# x liveness to cross, the heartbeats queued behind it, so the broker
# declared a live worker dead ("missed its heartbeats"), gave its tasks
# to others (run twice) and said nothing more when its RESULT arrived a
# moment later. Now the first message from a worker declared dead of
# silence in the last 10 minutes is told: it was not dead, its messages
# were held up, and what to raise. Here the worker is paused (SIGSTOP,
# one process: --no-supervise) past the broker's liveness and let go on,
# its socket unchanged (its own --liveness is long), so its next
# heartbeat comes from the routing id the broker declared dead.
. "$(dirname "$0")/lib.sh"

port=$(free_port)
start_broker "$port" --state none --liveness 3
start_worker "$port" slowlink --slots 1 --no-supervise --heartbeat-ms 200 --liveness 50
w=$WORKER_PID
wait_for "the worker joined" 10 "grep -q 'worker slowlink joined' '$T/broker.log'" "$T/broker.log"
kill -STOP "$w"
wait_for "the worker declared dead" 10 "grep -q 'worker slowlink .*declared dead' '$T/broker.log'" \
    "$T/broker.log"
sleep 0.3
kill -CONT "$w"
wait_for "its late message told" 10 "grep -q 'worker slowlink, declared dead .* still sends' '$T/broker.log'" \
    "$T/broker.log"
line=$(grep 'worker slowlink, declared dead' "$T/broker.log")
echo "$line" | grep -q -- "--liveness (now 3)" || fail "no advice: $line"
[ "$(grep -c 'worker slowlink, declared dead' "$T/broker.log")" -eq 1 ] || fail "said more than once"
wait_for "the worker back" 10 "[ \$(grep -c 'worker slowlink joined' '$T/broker.log') -ge 2 ]" \
    "$T/broker.log"
sleep 1
[ "$(grep -c 'worker slowlink, declared dead' "$T/broker.log")" -eq 1 ] || fail "said again"
pass "a worker declared dead that still sends: told once, with what to raise; it joins again"
