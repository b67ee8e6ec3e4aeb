#!/bin/bash
# The broker raises its open-file limit, says how many peers it holds,
# and refuses the next one with a reason (not accept() failures that
# spin): a worker over the limit says it was refused and tries again
# later, and gets in once a place is free; a client over it is refused.
. "$(dirname "$0")/lib.sh"

port=$(free_port)
# a low soft limit: the broker raises it to the hard limit
( ulimit -Sn 64; exec "$BIN/qc-broker" --bind tcp://127.0.0.1:$port --state none \
      --heartbeat-ms 200 ) >"$T/raised.log" 2>&1 &
pid=$!
PIDS+=($pid)
wait_for "broker listening" 10 "grep -q 'listening on' '$T/raised.log'"
n=$(sed -n 's/.*can hold \([0-9]*\) peers.*/\1/p' "$T/raised.log")
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "${n:-0}" -gt 64 ] || [ "$hard" -le 64 ] \
    || fail "the broker did not raise its open-file limit: holds ${n:-?} peers (hard limit $hard)"
kill -TERM $pid; wait $pid 2>/dev/null
pass "the open-file limit was raised: the broker holds $n peers"

start_broker $port --heartbeat-ms 200 --max-peers 2
grep -q "can hold 2 peers" "$T/broker.log" || fail "the broker did not say how many peers it holds"
start_worker $port w1 --slots 1 --heartbeat-ms 200
start_worker $port w2 --slots 1 --heartbeat-ms 200
w2=$WORKER_PID
wait_for "2 workers registered" 10 "workers_registered $port 2"
start_worker $port w3 --slots 1 --heartbeat-ms 200
wait_for "w3 refused" 10 "grep -q 'broker is full: it holds 2 workers' '$T/worker-w3.log'"
grep -q "refused worker w3: broker is full (2 workers; qc-broker --max-peers allows 2 peers): raise --max-peers" \
    "$T/broker.log" || fail "the broker's log does not say it refused w3"
grep -q "w3 registered with broker" "$T/worker-w3.log" && fail "w3 said it registered before it was refused"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" -q \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/submit.log" 2>&1
rc=$?
# 5, not 2: full for now, which a workflow manager may retry (it never
# retries a 2: a soak's review); the broker's log says so too
[ $rc -eq 5 ] || fail "a client over the limit: exit $rc, expected 5"
grep -q "broker is full" "$T/submit.log" || fail "no reason given to the client: $(cat "$T/submit.log")"
grep -q "client refused: broker is full: it holds" "$T/broker.log" \
    || fail "the broker's log does not say it refused a client: $(grep -i full "$T/broker.log")"
pass "the next worker and client are refused with a reason"

kill -TERM $w2
wait_for "w3 gets in when w2 left" 30 "grep -q 'worker w3 joined' '$T/broker.log'"
pass "the refused worker got in once a place was free"

# jobs whose clients went away keep their result files open until they
# are delivered: those count against the limit, so a new job is refused
# (saying so) before the broker runs out of descriptors, and a client of
# a job held can still come back for it
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
p2=$(free_port)
start_broker $p2 --heartbeat-ms 200 --max-peers 3 --state "$T/st-files"
for i in 1 2 3; do
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$p2 -o "$T/held$i" \
        "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/held$i.log" 2>&1 &
    sub=$!
    PIDS+=($sub)
    wait_for "job $i accepted" 10 "grep -q '^job ' '$T/held$i/.qc-job' 2>/dev/null"
    kill -INT $sub; wait $sub 2>/dev/null        # it says it leaves: detached at once
done
"$BIN/qc-submit" --broker tcp://127.0.0.1:$p2 -o "$T/held4" -q \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/held4.log" 2>&1
rc=$?
[ $rc -eq 5 ] && grep -q "3 jobs whose results are not all fetched yet, each keeping a file open (qc-broker --max-peers allows 3); fetch those jobs' results" \
    "$T/held4.log" || fail "a 4th job with 3 held: exit $rc: $(cat "$T/held4.log")"
start_worker $p2 wf --slots 1 --heartbeat-ms 200
timeout 60 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p2 --attach 1 -o "$T/held1" >"$T/held1b.log" 2>&1 \
    || fail "the client of a held job could not fetch it: $(tail -3 "$T/held1b.log")"
pass "result files of undelivered jobs count against the limit: a new job refused saying so; a held job's client fetches it"

# a delivered job's file is closed (nothing is read from it again): jobs
# run one after another are not refused for the files of those done
# before (they were, within --linger: 600 s), nor said to be unfetched.
# The two other held jobs are fetched first.
for i in 2 3; do
    timeout 60 "$BIN/qc-submit" -q --broker tcp://127.0.0.1:$p2 --attach $i -o "$T/held$i" >"$T/held${i}b.log" 2>&1 \
        || fail "fetching held job $i: $(tail -3 "$T/held${i}b.log")"
done
for i in 1 2 3 4; do
    timeout 60 "$BIN/qc-submit" -q --broker tcp://127.0.0.1:$p2 -o "$T/seq$i" \
        "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/seq$i.log" 2>&1 \
        || fail "job $i of 4 in a row, under --max-peers 3 with a worker: exit $?: $(tail -3 "$T/seq$i.log")"
done
pass "delivered jobs' result files are closed: 4 jobs in a row under --max-peers 3 (one worker) all run"

# a limit too low for its sockets: each program refuses to start and says
# why (czmq would abort: "Assertion `self->handle' failed"), at every
# limit from nearly nothing to where it starts
p3=$(free_port)
for n in 6 9 12 20 40 63 64; do
    ( ulimit -n $n; exec timeout 3 "$BIN/qc-broker" --bind tcp://127.0.0.1:$p3 --state none ) \
        >"$T/low-b.log" 2>&1
    rc=$?
    [ $rc -eq 124 ] && break                 # it started: enough from here on
    [ $rc -lt 128 ] || fail "qc-broker, ulimit -n $n: died (exit $rc): $(tail -2 "$T/low-b.log")"
    grep -q "qc-broker: cannot start: ulimit -n is $n, and it needs at least 64 open files" \
        "$T/low-b.log" || fail "qc-broker, ulimit -n $n: exit $rc without saying why: $(tail -2 "$T/low-b.log")"
    [ $rc -eq 2 ] || fail "qc-broker, ulimit -n $n: exit $rc, not 2"
done
[ $rc -eq 124 ] && [ $n -eq 64 ] || fail "qc-broker at ulimit -n $n: exit $rc: $(tail -2 "$T/low-b.log")"
nb=$n
for n in $(seq 6 1 60); do
    ( ulimit -n $n; exec timeout 3 "$BIN/qc-worker" --connect tcp://127.0.0.1:$p3 --slots 8 ) \
        >"$T/low-w.log" 2>&1
    rc=$?
    [ $rc -eq 124 ] && break
    [ $rc -lt 128 ] || fail "qc-worker, ulimit -n $n: died (exit $rc): $(tail -2 "$T/low-w.log")"
    grep -q "qc-worker: cannot start: this process has no file descriptor left (ulimit -n is $n)" \
        "$T/low-w.log" || fail "qc-worker, ulimit -n $n: exit $rc without saying why: $(tail -2 "$T/low-w.log")"
    [ $rc -eq 2 ] || fail "qc-worker, ulimit -n $n: exit $rc, not 2 (this machine's configuration)"
done
[ $rc -eq 124 ] || fail "qc-worker did not start even at ulimit -n 60: $(tail -2 "$T/low-w.log")"
pass "a limit too low for its sockets: qc-broker (below $nb) and qc-worker (below $n) refuse to start saying why"

# too little address space (ulimit -v) for a slide, or for ZeroMQ's and
# OpenSlide's threads: each refuses to start, saying which limit, where
# libzmq threw std::bad_alloc (an abort) or zactor_new waited for ever on
# a thread that never started. (Far lower, the loader itself refuses.
# Each limit is below the room asked for alone, 128 MB and 64 MB, so
# that no machine's own mappings decide.)
for prog in qc-worker qc-submit qc-broker; do
    said=0
    for v in 60000 90000 120000; do
        case $prog in
        qc-worker) ( ulimit -v $v; exec timeout -k 5 5 "$BIN/qc-worker" --connect tcp://127.0.0.1:$p3 --slots 4 ) ;;
        qc-submit) ( ulimit -v $v; exec timeout -k 5 30 "$BIN/qc-submit" -o "$T/low-v-out" "$SHARED/slides/real/CMU-1-Small-Region.svs" ) ;;
        *) ( ulimit -v $((v / 3)); exec timeout -k 5 5 "$BIN/qc-broker" --bind tcp://127.0.0.1:$p3 --state none ) ;;
        esac >"$T/low-v.log" 2>&1
        rc=$?
        [ $rc -lt 128 ] || fail "$prog, ulimit -v $v: died (exit $rc): $(tail -2 "$T/low-v.log")"
        grep -q "error while loading shared libraries" "$T/low-v.log" && continue
        [ $rc -eq 2 ] && grep -q "$prog: cannot start: ulimit -v is [0-9]* KB, of which this program maps [0-9]* MB as it starts, which leaves less than" "$T/low-v.log" \
            || fail "$prog, ulimit -v $v: exit $rc: $(tail -2 "$T/low-v.log")"
        said=$((said + 1))
    done
    # (the loader refusing them all would check nothing)
    [ $said -ge 1 ] || fail "$prog: the loader refused every limit tried: $(tail -1 "$T/low-v.log")"
done
[ -e "$T/low-v-out/results.tsv" ] && fail "qc-submit refused to start, yet wrote results.tsv"
pass "too little address space: qc-worker, qc-submit (one process) and qc-broker refuse to start saying so"

# a broker whose hard open-file limit is low, its descriptors all held by
# idle TCP connections (a port scanner, a stuck client): libzmq fails
# every accept silently, so the broker says so itself; once they close,
# a peer gets in again
port=$(free_port)
( ulimit -n 64; exec "$BIN/qc-broker" --bind tcp://127.0.0.1:$port --state none \
      --heartbeat-ms 200 ) >"$T/starved.log" 2>&1 &
starved=$!
PIDS+=($starved)
wait_for "starved broker listening" 10 "grep -q 'listening on' '$T/starved.log'"
python3 -c "
import socket, sys, time
held = []
for i in range(80):
    try:
        held.append(socket.create_connection(('127.0.0.1', $port), timeout=2))
    except OSError:
        break
time.sleep(20)" &
holder=$!
PIDS+=($holder)
wait_for "the starved broker says so" 15 \
    "grep -q 'refused new connections: [0-8] file descriptors\? left under the open-file limit.*raise the broker.s limit (ulimit -n' '$T/starved.log'" \
    "$T/starved.log"
kill $holder; wait $holder 2>/dev/null
"$BIN/qc-status" --broker tcp://127.0.0.1:$port --timeout 10 >"$T/starved-status.log" 2>&1 \
    || fail "once the idle connections closed, qc-status got no answer: $(cat "$T/starved-status.log")"
kill -TERM $starved; wait $starved 2>/dev/null
pass "a broker out of descriptors (idle TCP connections, ulimit -n 64) says so; once they close, peers get in"
