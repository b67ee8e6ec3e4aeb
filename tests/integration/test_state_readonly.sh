#!/bin/bash
# A state folder whose file system remounts itself read-only (ext4's
# errors=remount-ro, Debian's default, after a disk error) while the
# broker is idle: said in its log within 10 s and by qc-status at once
# (TROUBLE state-unwritable, exit 7), where before it was seen only at
# the broker's next write, maybe hours later, qc-status saying ok; a
# new job is refused with the reason; the broker still stops on
# SIGTERM. Each broker has its own ext4 file system (a 192 MB sparse image on a
# loop device), mounted in a mount namespace of its own, and the error
# is raised by ext4's own trigger_fs_error, as a failing disk would.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "not root: no file system of its own can be mounted"
[ -e /dev/loop-control ] || skip "no loop devices here (/dev/loop-control)"
unshare -m --propagation=private true 2>/dev/null \
    || fail "no mount namespace can be made here, as root: $(unshare -m --propagation=private true 2>&1)"
truncate -s 192M "$T/probe.img" && mkfs.ext4 -q -F "$T/probe.img" || fail "mkfs.ext4 on $T/probe.img"
mkdir -p "$T/probe"
unshare -m --propagation=private mount -o loop "$T/probe.img" "$T/probe" 2>"$T/probe.err" \
    || skip "no loop device can be mounted here: $(head -1 "$T/probe.err")"
rm -f "$T/probe.img"

# readonly_broker NAME: a broker whose state folder is on a new ext4
# file system; sets PORT, BPID, DEV (its loop device's name)
readonly_broker() {
    local name=$1
    truncate -s 192M "$T/$name.img" && mkfs.ext4 -q -F "$T/$name.img" \
        || fail "mkfs.ext4 on $T/$name.img"
    mkdir -p "$T/$name"
    PORT=$(free_port)
    unshare -m --propagation=private sh -c \
        'mount -o loop,errors=remount-ro "$1" "$2" && shift 2 && exec "$@"' \
        sh "$T/$name.img" "$T/$name" "$BIN/qc-broker" --bind "tcp://127.0.0.1:$PORT" \
        --heartbeat-ms 200 --state "$T/$name/state" >"$T/$name.log" 2>&1 &
    BPID=$!
    PIDS+=($BPID)
    wait_for "broker $name listening" 10 "grep -q 'listening on' '$T/$name.log'" "$T/$name.log"
    DEV=$(nsenter -t $BPID -m findmnt -n -o SOURCE "$T/$name")
    DEV=${DEV#/dev/}
    [ -w "/sys/fs/ext4/$DEV/trigger_fs_error" ] \
        || skip "this kernel's ext4 has no trigger_fs_error for $DEV"
    "$BIN/qc-status" --broker "tcp://127.0.0.1:$PORT" >"$T/$name.status0" 2>&1 \
        || fail "qc-status before the error: exit $?: $(cat "$T/$name.status0")"
}
# stopped PID LOG: SIGTERM stops it within 10 s
stopped() {
    kill -TERM "$1"
    wait_for "the broker stopped on SIGTERM" 10 "! kill -0 $1 2>/dev/null" "$2"
    wait "$1" 2>/dev/null
}

# the idle broker's own look (every 10 s): no qc-status asks
readonly_broker idle
echo 1 >"/sys/fs/ext4/$DEV/trigger_fs_error"
wait_for "the log says the state folder refuses writes" 15 \
    "grep -q 'ERROR.*cannot write $T/idle/state: Read-only file system; new jobs are refused' '$T/idle.log'" \
    "$T/idle.log"
"$BIN/qc-status" --broker "tcp://127.0.0.1:$PORT" >"$T/idle.status" 2>&1
rc=$?
[ $rc = 7 ] && grep -q "^TROUBLE state-unwritable: its state folder $T/idle/state cannot be written (Read-only file system), for [0-9]* s: new jobs are refused" \
    "$T/idle.status" || fail "qc-status after the remount: exit $rc: $(cat "$T/idle.status")"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$PORT" --detach -o "$T/out" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/submit.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q 'Read-only file system' "$T/submit.log" \
    || fail "a job on the read-only state folder: exit $rc: $(tail -3 "$T/submit.log")"
stopped $BPID "$T/idle.log"
pass "an idle broker's state folder remounted read-only: its log says so within 10 s, qc-status (exit 7) names it, a new job is refused with the reason, SIGTERM stops it"

# qc-status right after the error: it asks the file system itself (at
# most once a second: readonly_broker's own qc-status just asked)
readonly_broker asked
sleep 1.2
echo 1 >"/sys/fs/ext4/$DEV/trigger_fs_error"
"$BIN/qc-status" --broker "tcp://127.0.0.1:$PORT" >"$T/asked.status" 2>&1
rc=$?
[ $rc = 7 ] && grep -q "^TROUBLE state-unwritable: .*(Read-only file system)" "$T/asked.status" \
    || fail "qc-status at once after the remount: exit $rc: $(cat "$T/asked.status")"
stopped $BPID "$T/asked.log"
pass "qc-status just after the remount says it (it does not wait for the broker's 10 s look)"

# a lock file whose times cannot be set for another reason than a
# refused write (immutable: chattr +i; a FUSE file system without
# times): the folder is not taken for unwritable, said once
readonly_broker locked
nsenter -t $BPID -m chattr +i "$T/locked/state/lock" || fail "chattr +i"
sleep 1.2
"$BIN/qc-status" --broker "tcp://127.0.0.1:$PORT" >"$T/locked.status" 2>&1
rc=$?
nsenter -t $BPID -m chattr -i "$T/locked/state/lock"
[ $rc = 0 ] && ! grep -q TROUBLE "$T/locked.status" \
    || fail "an immutable lock file taken for an unwritable folder: exit $rc: $(cat "$T/locked.status")"
grep -q "WARNING.*cannot set the times of $T/locked/state/lock (Operation not permitted): a file system remounted read-only is then found only at the broker's next write" \
    "$T/locked.log" || fail "not said: $(tail -3 "$T/locked.log")"
stopped $BPID "$T/locked.log"
pass "a lock file whose times cannot be set (immutable): said once, the folder still taken as writable"

