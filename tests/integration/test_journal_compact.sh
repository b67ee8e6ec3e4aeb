#!/bin/bash
# The broker's journal is rewritten without what forgotten jobs left
# once it is over --journal-compact-mb and 4 times what it keeps; not
# while a live job makes up a quarter of it; and, once that big job is
# forgotten too, the next rewrite comes at the floor again, not at 4
# times the big job (before, the last rewrite's size stood for what is
# live, so a lab's one 100k-slide cohort left a 400 MB ceiling). A
# restart on the rewritten journal has every job and id it should.
# No worker: the jobs are slide lists by URL (never read: --no-check),
# cancelled, and forgotten after --retention 1.
. "$(dirname "$0")/lib.sh"

port=$(free_port)
EP=tcp://127.0.0.1:$port
state=$T/state
# big lists: 3000 slides (~0.48 MB of journal) stays live; 6000 (~0.95 MB)
/usr/bin/python3 - "$T" <<'EOF'
import sys
for name, n in (('live', 3000), ('gone1', 6000), ('gone2', 6000), ('gone3', 6000)):
    with open('%s/%s.list' % (sys.argv[1], name), 'w') as f:
        for i in range(n):
            f.write('http://127.0.0.1:9/%s/%s/slide_%05d.svs\n' % (name, 'x' * 120, i))
EOF
start_broker $port --heartbeat-ms 200 --state "$state" --journal-compact-mb 1 \
    --retention 1 --linger 0
compactions() { grep -c 'journal compacted' "$T/broker.log"; }
size() { stat -c %s "$state/journal"; }
# submit NAME: a detached job of NAME.list; its id in $JOB
submit() {
    JOB=$("$BIN/qc-submit" --broker "$EP" --detach --no-check -o "$T/out-$1" \
        --list "$T/$1.list" 2>"$T/submit-$1.log") || fail "$1 not submitted: $(tail -3 "$T/submit-$1.log")"
}
# gone JOB: cancelled, and forgotten (its results waited --retention)
gone() {
    "$BIN/qc-submit" --broker "$EP" --cancel "$1" >"$T/cancel-$1.log" 2>&1 \
        || fail "job $1 not cancelled: $(cat "$T/cancel-$1.log")"
    wait_for "job $1 forgotten" 15 "grep -q 'job $1: .* deleted (--retention' '$T/broker.log'" \
        "$T/broker.log"
}
submit live
live=$JOB
submit gone1
gone $JOB
# the check runs every second: three of them
sleep 3.5
[ "$(compactions)" = 0 ] || fail "rewritten while a live job is over a quarter of it ($(size) bytes)"
[ "$(size)" -gt 1300000 ] || fail "the journal is $(size) bytes: the test's jobs are too small"
pass "a journal over the floor is not rewritten while the live job is over a quarter of it"

submit gone2
gone $JOB
wait_for "the journal rewritten" 15 "[ \$(compactions) = 1 ]" "$T/broker.log"
kept=$(size)
[ "$kept" -gt 400000 ] && [ "$kept" -lt 600000 ] \
    || fail "the rewrite kept $kept bytes, not the live job's list (~480 KB)"
pass "once forgotten jobs make up over 3/4 of it, it is rewritten to the live job ($kept bytes)"

gone $live
# under the floor (1 MB), however little is live: not rewritten
sleep 2.5
[ "$(compactions)" = 1 ] || fail "rewritten under the floor ($(size) bytes)"
submit gone3
gone $JOB
# 1.4 MB now: over the floor, and the live set is a few hundred bytes
wait_for "the journal rewritten once the big job went" 15 "[ \$(compactions) = 2 ]" \
    "$T/broker.log"
[ "$(size)" -lt 10000 ] || fail "the second rewrite kept $(size) bytes"
pass "after the big job is forgotten, the next rewrite comes at the floor, not 4 times its size"

kill -TERM $BROKER_PID
wait $BROKER_PID 2>/dev/null
start_broker $port --heartbeat-ms 200 --state "$state" --journal-compact-mb 1
grep -q '0 jobs restored' "$T/broker.log" || fail "the restart restored jobs: $(grep restored "$T/broker.log")"
submit live
[ "$JOB" -gt 4 ] || fail "a restart on the rewritten journal gave job id $JOB again"
"$BIN/qc-submit" --broker "$EP" --attach 2 -o "$T/out-gone1" >"$T/attach.log" 2>&1
grep -qi 'forgotten\|deleted\|retention' "$T/attach.log" \
    || fail "a forgotten job's client is not told what became of it: $(tail -3 "$T/attach.log")"
pass "a restart on the rewritten journal: no job back, ids not reused, a forgotten job's client told"
