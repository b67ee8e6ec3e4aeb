#!/bin/bash
# Chaos: 1,000 slides through a broker with a state folder and 4 workers,
# while every second a random worker is killed with -9 (and a new one
# started), the broker is killed with -9 once and started again on the
# same --state, and the client is killed once and resumed with --attach.
# At the end every slide is reported exactly once, and the rows and
# errors equal those of a run without faults (the one-process mode).
# A cheap real pipeline (two steps) keeps this within a minute or two;
# every loop is bounded by count and time.
. "$(dirname "$0")/lib.sh"

N=1000
bad=$(make_cohort "$T/cohort" $N)
cheap_config "$T/cheap.ini"
start=$SECONDS

# the reference: no faults
"$BIN/qc-submit" -c "$T/cheap.ini" -o "$T/ref" --list "$T/cohort/list" -q >"$T/ref.log" 2>&1
[ $? -le 1 ] || fail "reference run failed: $(tail -3 "$T/ref.log")"
check_exactly_once "$T/ref" "$T/cohort/list"
pass "reference run without faults ($((SECONDS - start)) s)"

port=$(free_port)
state=$T/state
start_broker $port --heartbeat-ms 200 --state "$state"
declare -a wpid
nworkers=0
new_worker() {        # new_worker SLOT: a fresh worker in slot SLOT
    nworkers=$((nworkers + 1))
    start_worker $port "w$nworkers" --slots 2 --heartbeat-ms 200 --task-delay-ms 150
    wpid[$1]=$WORKER_PID
}
for i in 0 1 2 3; do new_worker $i; done
wait_for "4 workers registered" 15 "workers_registered $port 4"

run_client() {        # run_client ARGS...: qc-submit in the background
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" -q "$@" >>"$T/submit.log" 2>&1 &
    submit=$!
    PIDS+=($submit)
}
run_client -c "$T/cheap.ini" --list "$T/cohort/list"
wait_for "job accepted" 20 "grep -q '^job' '$T/out/.qc-job' 2>/dev/null"
job=$(awk '/^job /{print $2; exit}' "$T/out/.qc-job")

done_count() { grep -c '^done' "$T/out/.qc-job" 2>/dev/null || echo 0; }
kills=0 broker_killed=0 client_killed=0
t0=$SECONDS
while [ $((SECONDS - t0)) -lt 240 ]; do
    if ! kill -0 $submit 2>/dev/null; then
        wait $submit; rc=$?
        [ $client_killed = 1 ] && [ $broker_killed = 1 ] && break
        fail "qc-submit ended (exit $rc) before both faults: $(tail -3 "$T/submit.log")"
    fi
    sleep 1
    # a random worker, killed with -9 and replaced
    v=$((RANDOM % 4))
    kill -9 ${wpid[$v]} 2>/dev/null && kills=$((kills + 1))
    new_worker $v
    n=$(done_count)
    if [ $broker_killed = 0 ] && [ "$n" -ge $((N / 4)) ]; then
        kill -9 $BROKER_PID
        wait $BROKER_PID 2>/dev/null
        start_broker $port --heartbeat-ms 200 --state "$state"
        broker_killed=1
        echo "broker killed at $n results"
    elif [ $broker_killed = 1 ] && [ $client_killed = 0 ] && [ "$n" -ge $((N * 3 / 5)) ]; then
        kill -9 $submit
        wait $submit 2>/dev/null
        client_killed=1
        echo "client killed at $n results"
        run_client --attach "$job"
    fi
done
kill -0 $submit 2>/dev/null && fail "the job did not end in 240 s ($(done_count) of $N written)"
[ $broker_killed = 1 ] && [ $client_killed = 1 ] || fail "the job ended before the faults"
[ $kills -ge 10 ] || fail "only $kills workers killed"
[ $rc -le 1 ] || fail "qc-submit --attach exit $rc: $(tail -3 "$T/submit.log")"
pass "$N slides under chaos: $kills workers killed, the broker once, the client once ($((SECONDS - t0)) s)"

check_exactly_once "$T/out" "$T/cohort/list"
diff <(rows "$T/out") <(rows "$T/ref") >/dev/null || fail "rows differ from the run without faults"
diff <(errors "$T/out") <(errors "$T/ref") >/dev/null || fail "errors differ from the run without faults"
[ "$(wc -l <"$T/out/error.log")" -eq "$bad" ] || fail "expected $bad failed slides"
! grep -q "without a result\|vanished" "$T/out/error.log" || fail "a slide was blamed for killed workers"
pass "every slide exactly once, rows and errors equal to the run without faults"
