#!/bin/bash
# qc-submit against a broker that lies (tests/tools/qc_rogue_broker): a
# result for a slide index the job does not have is refused with the
# reason, writes nothing, and does not make qc-submit allocate for the
# index (4,000,000,000 bits would be 512 MiB; its memory is capped
# under that here). The same rogue broker telling the truth (index 0)
# gets its result written, so the harness itself is shown to work.
source "$(dirname "$0")/lib.sh"

slide=$SHARED/slides/real/CMU-1-Small-Region.svs
[ -x "$TOOLS/qc_rogue_broker" ] || fail "$TOOLS/qc_rogue_broker not built (make)"

# rogue IDX OUT [TOTAL]: qc-submit (memory capped at 300 MB) against a
# rogue broker that sends a result for IDX; sets RC
rogue() {
    local idx=$1 out=$2 port
    port=$(free_port)
    "$TOOLS/qc_rogue_broker" --bind "tcp://127.0.0.1:$port" --idx "$idx" ${3:+--total "$3"} \
        --wait-ms 3000 >"$T/$out.rogue" 2>&1 &
    local rpid=$!
    PIDS+=($rpid)
    (ulimit -v 300000; exec timeout 30 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" \
        -o "$T/$out" "$slide") >"$T/$out.log" 2>&1
    RC=$?
    kill $rpid 2>/dev/null
    wait $rpid 2>/dev/null
}

rogue 0 honest
[ $RC = 0 ] || fail "an honest result: exit $RC: $(cat "$T/honest.log")"
grep -q $'\trogue$\|\trogue\t' "$T/honest/results.tsv" \
    || fail "the honest result was not written: $(cat "$T/honest/results.tsv")"
pass "the rogue broker's true result is written (exit 0)"

rogue 4000000000 lie 4000000001
[ $RC = 1 ] || fail "a result for slide 4000000001 of a 1-slide job: exit $RC: $(cat "$T/lie.log")"
grep -q "the broker sent a result for slide 4000000001 of job 7, which has 1 slide" "$T/lie.log" \
    || fail "no reason given: $(cat "$T/lie.log")"
if grep -v '^#' "$T/lie/results.tsv" 2>/dev/null | grep -q rogue; then
    fail "the lie was written: $(cat "$T/lie/results.tsv")"
fi
pass "a result for slide 4,000,000,001 of a 1-slide job: refused with the reason, nothing written"
