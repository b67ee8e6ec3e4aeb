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

# rogue IDX OUT [ROGUE OPTIONS]: qc-submit (memory capped at 300 MB but
# under AddressSanitizer, which reserves terabytes) against a rogue broker
# that sends a result for IDX; sets RC
cap=300000
ldd "$BIN/qc-submit" 2>/dev/null | grep -q libasan && cap=unlimited
rogue() {
    local idx=$1 out=$2 port
    shift 2
    port=$(free_port)
    "$TOOLS/qc_rogue_broker" --bind "tcp://127.0.0.1:$port" --idx "$idx" "$@" \
        --wait-ms 3000 >"$T/$out.rogue" 2>&1 &
    local rpid=$!
    PIDS+=($rpid)
    (ulimit -v $cap; exec timeout 30 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" \
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

rogue 4000000000 lie --total 4000000001
[ $RC = 5 ] || fail "a result for slide 4000000001 of a 1-slide job: exit $RC: $(cat "$T/lie.log")"
grep -q "the broker sent a result for slide 4000000001 of job 7, which has 1 slide" "$T/lie.log" \
    || fail "no reason given: $(cat "$T/lie.log")"
if grep -v '^#' "$T/lie/results.tsv" 2>/dev/null | grep -q rogue; then
    fail "the lie was written: $(cat "$T/lie/results.tsv")"
fi
pass "a result for slide 4,000,000,001 of a 1-slide job: refused with the reason, nothing written"

# the same lie with ACCEPTED and DONE claiming the job is that large: a
# job qc-submit submitted has the slides it sent
rogue 4000000000 claim --total 4000000001 --claim 4000000001
[ $RC = 5 ] && grep -q "the broker sent a result for slide 4000000001 of job 7, which has 1 slide" \
    "$T/claim.log" || fail "a lie backed by ACCEPTED's total: exit $RC: $(cat "$T/claim.log")"
if grep -v '^#' "$T/claim/results.tsv" 2>/dev/null | grep -q rogue; then
    fail "the lie was written: $(cat "$T/claim/results.tsv")"
fi
grep -q "no longer holds job" "$T/claim.log" && fail "a lying broker's job is not 'no longer held'"
pass "backed by a claimed total of 4,000,000,001 in ACCEPTED and DONE: refused all the same"

# an attach, told the job has 4,000,000,001 slides: not believed
port=$(free_port)
"$TOOLS/qc_rogue_broker" --bind "tcp://127.0.0.1:$port" --idx 3999999999 --claim 4000000001 \
    --wait-ms 3000 >"$T/attach.rogue" 2>&1 &
PIDS+=($!)
(ulimit -v $cap; exec timeout 30 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" --attach 7 \
    -o "$T/honest") >"$T/attach.log" 2>&1
RC=$?
[ $RC = 5 ] && grep -q "the broker says job 7 has 4000000001 slides, more than any job can" \
    "$T/attach.log" || fail "an attach told of 4e9 slides: exit $RC: $(cat "$T/attach.log")"
[ "$(grep -vc '^#' "$T/honest/results.tsv")" = 1 ] || fail "the folder changed: $(cat "$T/honest/results.tsv")"
pass "an attach told the job has 4,000,000,001 slides: refused, the folder as it was"
