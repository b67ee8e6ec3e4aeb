#!/bin/bash
# SIGTERM on the broker tells its peers and exits 0; a worker that was
# connected registers again with the broker that replaces it, and then
# runs a job there.
. "$(dirname "$0")/lib.sh"

port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port survivor --slots 1 --heartbeat-ms 200
wait_for "worker registered" 10 "workers_registered $port 1"
kill -TERM $BROKER_PID
for i in $(seq 1 50); do kill -0 $BROKER_PID 2>/dev/null || break; sleep 0.1; done
kill -0 $BROKER_PID 2>/dev/null && fail "broker did not exit within 5 s of SIGTERM"
wait $BROKER_PID; rc=$?
[ $rc -eq 0 ] || fail "broker exit $rc after SIGTERM"
wait_for "worker told of the shutdown" 5 "grep -q 'broker is shutting down' '$T/worker-survivor.log'"
pass "SIGTERM: broker told its peers and exited 0"

start_broker $port --heartbeat-ms 200
wait_for "worker registered again" 15 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" -q \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" || fail "job on the new broker failed"
grep -q '^CMU-1-Small-Region.svs' "$T/out/results.tsv" || fail "no result row"
pass "worker re-registered with the new broker and ran a job"
