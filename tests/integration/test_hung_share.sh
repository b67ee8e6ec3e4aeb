#!/bin/bash
# A slide folder on a share that does not answer (a hard-mounted NFS
# share whose server went away: stat and readdir wait for as long as it
# is gone). qc-submit sat silent while it listed the cohort; now it says,
# after --wait-warn seconds, which path it waits on and why. The share is
# a real mount: tests/fs/hung_fs.py speaks FUSE on /dev/fuse and answers
# nothing but INIT. Needs root (mount) and /dev/fuse.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root, to mount a file system"
[ -c /dev/fuse ] || skip "no /dev/fuse here"
M=$T/share
mkdir "$M"
exec 3<>/dev/fuse || skip "cannot open /dev/fuse"
mount -t fuse -o fd=3,rootmode=40000,user_id=0,group_id=0,allow_other hung "$M" 2>"$T/mount.log" \
    || skip "cannot mount a FUSE file system here: $(cat "$T/mount.log")"
python3 "$ROOT/tests/fs/hung_fs.py" 3 &
server=$!
exec 3<&-
# unmounted (lazily: what waits on it is told ENOTCONN) before lib.sh's
# cleanup removes $T, which would otherwise wait on the share too
unmount() { umount -l "$M" 2>/dev/null; kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; }
trap 'unmount; cleanup' EXIT

"$BIN/qc-submit" --wait-warn 2 -o "$T/out" "$SHARED/slides/real/CMU-1-Small-Region.svs" \
    "$M/slides" >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
wait_for "qc-submit says what it waits on" 20 \
    "grep -q 'waiting 2 s so far for $M/slides to answer: a network share (NFS, SMB) whose server does not answer' '$T/submit.log'" \
    "$T/submit.log"
kill -0 $submit 2>/dev/null || fail "qc-submit ended: $(cat "$T/submit.log")"
pass "a share that does not answer: qc-submit says which path it waits on, after --wait-warn"

# the share gone for good (unmounted): qc-submit goes on, and says so
unmount
for _ in $(seq 1 100); do kill -0 $submit 2>/dev/null || break; sleep 0.2; done
kill -0 $submit 2>/dev/null && fail "qc-submit still waits after the share went: $(cat "$T/submit.log")"
wait $submit
rc=$?
[ $rc -ne 0 ] && grep -q "$M/slides" "$T/submit.log" \
    || fail "after the share went: exit $rc: $(tail -3 "$T/submit.log")"
pass "the share unmounted: qc-submit ends (exit $rc), naming the entry"
