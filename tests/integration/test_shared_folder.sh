#!/bin/bash
# An output folder that two users share (a group's folder, umask 002):
# its journal .qc-job is private to the user who ran qc-submit into it
# (mode 0600: it holds the job's key). Another user's run into it is
# refused before anything in the folder changes (exit 2, saying whose
# folder it is), not after its slides ran (exit 5, with .qc-slides and
# error.log already rewritten). Needs root, to run as a second user.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root, to run qc-submit as a second user"
AS_OTHER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
"${AS_OTHER[@]}" true 2>/dev/null || skip "setpriv cannot switch to uid 65534 here"
chmod 755 "$T"
"${AS_OTHER[@]}" test -x "$BIN/qc-submit" || skip "$BIN/qc-submit cannot be run by uid 65534"
R=$SHARED/slides/real
"${AS_OTHER[@]}" test -r "$R/CMU-1-Small-Region.svs" || skip "the test slides cannot be read by uid 65534"

# the first user: a folder everyone may write into, as a group's is
(umask 000; "$BIN/qc-submit" --workers 1 -o "$T/out" "$R/CMU-1-Small-Region.svs") \
    >"$T/run1.log" 2>&1 || fail "first run: $(cat "$T/run1.log")"
[ "$(stat -c %a "$T/out/.qc-job")" = 600 ] || fail ".qc-job is not mode 0600"
mkdir "$T/before"
cp -a "$T/out/.qc-slides" "$T/out/.qc-config" "$T/out/.qc-job" "$T/out/results.tsv" \
    "$T/out/error.log" "$T/before/"
pass "first user's run: .qc-job mode 0600 in a folder all may write"

# the second user, into the same folder, with a slide more
"${AS_OTHER[@]}" "$BIN/qc-submit" --workers 1 -o "$T/out" "$R/CMU-1-Small-Region.svs" \
    "$R/CMU-1-Small-Region-pyramid.svs" >"$T/run2.log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "second user: exit $rc, expected 2: $(cat "$T/run2.log")"
grep -q "cannot use $T/out/.qc-job: Permission denied (the folder's journal, private to the user who ran qc-submit into it, root" "$T/run2.log" \
    || fail "the refusal does not say why or whose: $(cat "$T/run2.log")"
grep -q "^ok " "$T/run2.log" && fail "slides ran before the refusal: $(cat "$T/run2.log")"
for f in .qc-slides .qc-config .qc-job results.tsv error.log; do
    cmp -s "$T/before/$f" "$T/out/$f" || fail "$f changed by the refused run"
done
pass "second user refused before the job (exit 2, whose folder said), the folder unchanged"

# ...but asking whether the folder is done (nothing to run) is no job:
# answered, as before the refusal came (a cron job's check)
"${AS_OTHER[@]}" "$BIN/qc-submit" --workers 1 -o "$T/out" "$R/CMU-1-Small-Region.svs" \
    >"$T/run2b.log" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "nothing to run: every slide of the cohort is accounted for" "$T/run2b.log" \
    || fail "second user, nothing to run: exit $rc: $(cat "$T/run2b.log")"
pass "second user, nothing to run: exit 0, as before"

# the first user goes on with it as before
"$BIN/qc-submit" --workers 1 -o "$T/out" "$R/CMU-1-Small-Region.svs" \
    "$R/CMU-1-Small-Region-pyramid.svs" >"$T/run3.log" 2>&1 || fail "first user again: $(cat "$T/run3.log")"
[ "$(grep -vc '^#' "$T/out/results.tsv")" -eq 2 ] || fail "first user again: not 2 rows"
pass "the first user goes on with the folder"

# a folder archived read-only (mode 555, its owner's) with nothing left
# to run: said so, exit 0, its files as they were but for qc.log's line
# (its .qc-config was rewritten with the same bytes, and the run failed
# with exit 5)
mkdir "$T/arch" && chown 65534:65534 "$T/arch"
"${AS_OTHER[@]}" "$BIN/qc-submit" --workers 1 -o "$T/arch/out" "$R/CMU-1-Small-Region.svs" \
    >"$T/arch1.log" 2>&1 || fail "the archive's first run: $(cat "$T/arch1.log")"
chmod 555 "$T/arch/out"
before=$(stat -c '%n %s %y' "$T/arch/out"/.qc-config "$T/arch/out"/.qc-job "$T/arch/out"/.qc-slides "$T/arch/out"/results.tsv "$T/arch/out"/error.log)
"${AS_OTHER[@]}" "$BIN/qc-submit" --workers 1 -o "$T/arch/out" "$R/CMU-1-Small-Region.svs" \
    >"$T/arch2.log" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "nothing to run: every slide of the cohort is accounted for" "$T/arch2.log" \
    || fail "a read-only archive with nothing to run: exit $rc: $(cat "$T/arch2.log")"
[ "$(stat -c '%n %s %y' "$T/arch/out"/.qc-config "$T/arch/out"/.qc-job "$T/arch/out"/.qc-slides "$T/arch/out"/results.tsv "$T/arch/out"/error.log)" = "$before" ] \
    || fail "the read-only archive's files changed"
pass "a folder archived read-only with nothing to run: exit 0, the folder unchanged"

# its own journal made read-only by its own user: said as that, not as
# another user's folder
chmod 400 "$T/arch/out/.qc-job"
chmod 755 "$T/arch/out"
"${AS_OTHER[@]}" "$BIN/qc-submit" --workers 1 -o "$T/arch/out" "$R/CMU-1-Small-Region.svs" \
    "$R/CMU-1-Small-Region-pyramid.svs" >"$T/arch3.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "cannot use $T/arch/out/.qc-job: Permission denied (the folder's journal, which this run must write: make it writable again, chmod u+w" \
    "$T/arch3.log" || fail "its own read-only journal: exit $rc: $(cat "$T/arch3.log")"
pass "a journal made read-only by its own user: said so, with what to do"

# another user's folder that others may not write: whose it is, said
mkdir -m 755 "$T/mine"
"$BIN/qc-submit" --workers 1 -o "$T/mine/out" "$R/CMU-1-Small-Region.svs" >"$T/mine1.log" 2>&1 \
    || fail "root's own run: $(cat "$T/mine1.log")"
chmod 755 "$T/mine/out"
"${AS_OTHER[@]}" "$BIN/qc-submit" --workers 1 -o "$T/mine/out" "$R/CMU-1-Small-Region.svs" \
    >"$T/mine2.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "cannot create $T/mine/out/.qc-lock: Permission denied (the folder is root's: write into a folder of your own with -o)" \
    "$T/mine2.log" || fail "another user's folder: exit $rc: $(cat "$T/mine2.log")"
pass "another user's folder: exit 2, whose it is and what to do"

# a broker's state folder of another user's: whose it is, said
mkdir -m 755 "$T/state"
"${AS_OTHER[@]}" timeout 10 "$BIN/qc-broker" --state "$T/state" --bind tcp://127.0.0.1:$(free_port) \
    >"$T/state.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "cannot use the state folder $T/state: Permission denied (it is root's: run the broker as that user, or give --state DIR" \
    "$T/state.log" || fail "another user's state folder: exit $rc: $(cat "$T/state.log")"
pass "another user's state folder: exit 2, whose it is"

# a broker for a lab on a shared machine (README, Securing a cluster):
# an ipc:// socket in a folder of the lab's group (mode 2770); under the
# unit's UMask=0077 the socket was the broker's user's alone, and a lab
# member's qc-status got no answer
install -d -m 2770 -g 65534 "$T/run"
chmod 711 "$T"
( umask 077; exec "$BIN/qc-broker" --bind "ipc://$T/run/broker" --state none ) >"$T/ipc.log" 2>&1 &
ipcb=$!
PIDS+=($ipcb)
wait_for "the ipc broker" 10 "grep -q 'listening on' '$T/ipc.log'" "$T/ipc.log"
"${AS_OTHER[@]}" "$BIN/qc-status" --broker "ipc://$T/run/broker" --timeout 5 >"$T/ipc-status.log" 2>&1 \
    || fail "a lab member's qc-status over ipc://: $(cat "$T/ipc-status.log"); $(ls -la "$T/run")"
kill -TERM $ipcb; wait $ipcb 2>/dev/null
pass "ipc:// in a folder of the lab's group: a member reaches the broker under umask 077"

# one not of that group is kept out, and told why, not "no answer" alone
install -d -m 2770 -g 0 "$T/run0"
"$BIN/qc-broker" --bind "ipc://$T/run0/broker" --state none >"$T/ipc0.log" 2>&1 &
ipcb=$!
PIDS+=($ipcb)
wait_for "the other ipc broker" 10 "grep -q 'listening on' '$T/ipc0.log'" "$T/ipc0.log"
"${AS_OTHER[@]}" "$BIN/qc-status" --broker "ipc://$T/run0/broker" --timeout 2 >"$T/ipc0-status.log" 2>&1
rc=$?
[ $rc -eq 3 ] && grep -q "Permission denied (the socket or its folder is not open to this user" "$T/ipc0-status.log" \
    || fail "a non-member over ipc://: exit $rc: $(cat "$T/ipc0-status.log")"
kill -TERM $ipcb; wait $ipcb 2>/dev/null
pass "ipc:// of another group: kept out, and told why"
