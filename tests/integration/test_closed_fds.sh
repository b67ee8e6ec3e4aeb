#!/bin/bash
# A program started without stderr (a script's `2>&-`, a scheduler that
# closes descriptors 0-2) must not write its messages into whatever file
# it opens next: qc-submit's first file is OUTDIR/.qc-lock, whose pid a
# second qc-submit into the folder names, and the progress lines went
# there instead (the pid overwritten, the file growing with the cohort).
. "$(dirname "$0")/lib.sh"

ok=$SHARED/slides/real/CMU-1-Small-Region.svs
bad=$SHARED/slides/odd/not-a-slide.svs

"$BIN/qc-submit" -o "$T/o1" "$ok" "$bad" 2>&-; rc=$?
[ $rc -eq 1 ] || fail "qc-submit 2>&-: exit $rc, expected 1 (one slide fails)"
grep -qx '[0-9][0-9]*' "$T/o1/.qc-lock" && [ "$(wc -l <"$T/o1/.qc-lock")" -eq 1 ] \
    || fail "qc-submit 2>&-: .qc-lock holds more than its pid: $(head -c 300 "$T/o1/.qc-lock")"
[ "$(grep -vc '^#' "$T/o1/results.tsv")" -eq 1 ] && [ "$(wc -l <"$T/o1/error.log")" -eq 1 ] \
    || fail "qc-submit 2>&-: results.tsv or error.log wrong"
pass "qc-submit without stderr: .qc-lock holds its pid alone"

"$BIN/qc-submit" -o "$T/o2" "$ok" <&- >&- 2>&-; rc=$?
[ $rc -eq 0 ] && grep -qx '[0-9][0-9]*' "$T/o2/.qc-lock" && [ "$(wc -l <"$T/o2/.qc-lock")" -eq 1 ] \
    || fail "qc-submit <&- >&- 2>&-: exit $rc, .qc-lock: $(head -c 300 "$T/o2/.qc-lock")"
pass "qc-submit without descriptors 0-2"

# the long-running programs: descriptor 2 is /dev/null, not a file or
# one of libzmq's eventfds that the log lines would be written into
# (ipc://: no TCP port needed)
mkdir -p "$T/st"
"$BIN/qc-broker" --bind "ipc://$T/broker" --state "$T/st" 2>&- &
bp=$!; PIDS+=($bp)
"$BIN/qc-worker" --connect "ipc://$T/broker" --slots 1 --no-supervise 2>&- &
wp=$!; PIDS+=($wp)
sleep 1
for p in $bp $wp; do
    kill -0 $p 2>/dev/null || fail "pid $p (broker or worker) did not start without stderr"
    fd2=$(readlink "/proc/$p/fd/2")
    [ "$fd2" = /dev/null ] || fail "pid $p started with 2>&-: its descriptor 2 is $fd2, not /dev/null"
done
pass "qc-broker and qc-worker without stderr: descriptor 2 is /dev/null"
