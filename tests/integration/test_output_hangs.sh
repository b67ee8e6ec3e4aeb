#!/bin/bash
# The output folder's disk stops answering mid-job (a hard-mounted share
# whose server went away, a disk that hangs): a write or a sync there
# blocks qc-submit for as long as it lasts. It sat silent; now, after
# --wait-warn seconds, it says which folder it waits on and why, and once
# the disk answers again it goes on: every slide's result written once.
# The hang is real: the output folder is an ext4 file system of its own
# (a loop device, in a mount namespace), frozen with fsfreeze, which
# blocks every write and sync on it until it is thawed.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "not root: no file system of its own can be mounted"
[ -e /dev/loop-control ] || skip "no loop devices here (/dev/loop-control)"
unshare -m --propagation=private true 2>/dev/null \
    || fail "no mount namespace can be made here, as root: $(unshare -m --propagation=private true 2>&1)"
truncate -s 64M "$T/out.img" && mkfs.ext4 -q -F "$T/out.img" >/dev/null 2>&1 \
    || fail "mkfs.ext4 on $T/out.img"
LOOP=$(losetup -f --show "$T/out.img") || skip "no loop device could be set up here"
submit=
thaw() { [ -n "$submit" ] && nsenter --mount="/proc/$submit/ns/mnt" fsfreeze -u "$T/mnt" 2>/dev/null; }
trap 'thaw; losetup -d "$LOOP" 2>/dev/null; cleanup' EXIT
mkdir -p "$T/mnt"

bad=$(make_cohort "$T/cohort" 12)
n=$(grep -c . "$T/cohort/list")
port=$(free_port)
start_broker $port --heartbeat-ms 200 --state "$T/state"
start_worker $port w1 --slots 1 --heartbeat-ms 200 --task-delay-ms 700
wait_for "worker registered" 10 "workers_registered $port 1"
unshare -m --propagation=private sh -c 'mount "$1" "$2" && shift 2 && exec "$@"' \
    sh "$LOOP" "$T/mnt" "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -o "$T/mnt/out" \
    --wait-warn 2 --list "$T/cohort/list" >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
# (the folder is in the namespace: read through the process)
done_lines() { cat "/proc/$submit/root$T/mnt/out/.qc-job" 2>/dev/null | grep -c '^done'; }
wait_for "some results written" 60 "[ \"\$(done_lines)\" -ge 2 ]" "$T/submit.log"
nsenter --mount="/proc/$submit/ns/mnt" fsfreeze -f "$T/mnt" \
    || skip "this kernel cannot freeze an ext4 file system here (fsfreeze -f failed)"
wait_for "qc-submit says what it waits on" 30 \
    "grep -q 'waiting 2 s so far for $T/mnt/out to answer: the output folder is on a network share (NFS, SMB) whose server does not answer, or a disk that hangs?' '$T/submit.log'" \
    "$T/submit.log"
kill -0 $submit 2>/dev/null || fail "qc-submit ended while its disk hung: $(tail -3 "$T/submit.log")"
pass "the output folder's disk hangs mid-job: qc-submit says, after --wait-warn, which folder it waits on and why"

thaw
wait_exit $submit 90
rc=$?
[ $rc = 124 ] && fail "qc-submit still runs 90 s after its disk came back: $(tail -3 "$T/submit.log")"
[ $rc = 1 ] || fail "exit $rc after the disk came back (1: some slides fail): $(tail -5 "$T/submit.log")"
grep -q "^$n slides: $((n - bad)) passed, $bad failed" "$T/submit.log" \
    || fail "not every slide's result: $(tail -3 "$T/submit.log")"
pass "the disk back, qc-submit goes on: all $n slides' results ($((n - bad)) passed, $bad failed)"
