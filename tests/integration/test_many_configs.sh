#!/bin/bash
# A worker keeps the pipelines of the configs it saw, least recently used
# out first: however many distinct configs come (more than the 16 it
# keeps), every task still runs. (It used to fail every task for good
# after 16.)
. "$(dirname "$0")/lib.sh"

port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 1 --heartbeat-ms 200
wait_for "worker registered" 10 "workers_registered $port 1"
slide=$SHARED/slides/real/CMU-1-Small-Region.svs
cheap_config "$T/cheap.ini"
for i in $(seq 1 24); do
    { cat "$T/cheap.ini"; echo "# variant $i"; } >"$T/c$i.ini"
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/c$i.ini" -o "$T/out$i" -q "$slide" \
        >"$T/submit$i.log" 2>&1 || fail "config $i: qc-submit exit $?: $(cat "$T/submit$i.log" "$T/out$i/error.log")"
    grep -q '^CMU-1-Small-Region.svs' "$T/out$i/results.tsv" || fail "config $i: no row"
done
# the first config again, after it was pushed out: built again, runs
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/c1.ini" -o "$T/again" -q "$slide" \
    >"$T/again.log" 2>&1 || fail "the first config again: $(cat "$T/again.log")"
diff <(rows "$T/out1") <(rows "$T/again") >/dev/null || fail "the rebuilt pipeline gave other rows"
pass "25 tasks with 24 distinct configs on one worker: every one ran"
