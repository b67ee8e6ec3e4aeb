#!/bin/bash
# qc-submit tells the broker it may forget results only once they are on
# the disk (a sync), not in the page cache: here the output folder's disk
# starts failing its writes mid-job (its loop device cut to 1 MB under a
# mounted ext2, so that the kernel's write-back of the results fails with
# EIO, as a dying disk's does). The sync says so: qc-submit stops with
# the reason on stderr (exit 5, incomplete), acknowledges nothing from then on (the
# kernel reports a write-back error once: a second sync "succeeds" over
# the lost pages), and the broker still holds the job's results for an
# attach. The file system is mounted in a mount namespace of its own.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "not root: no file system of its own can be mounted"
[ -e /dev/loop-control ] || skip "no loop devices here (/dev/loop-control)"
unshare -m --propagation=private true 2>/dev/null \
    || fail "no mount namespace can be made here, as root: $(unshare -m --propagation=private true 2>&1)"
truncate -s 64M "$T/out.img" && mkfs.ext2 -q -F "$T/out.img" >/dev/null 2>&1 \
    || fail "mkfs.ext2 on $T/out.img"
LOOP=$(losetup -f --show "$T/out.img") || skip "no loop device could be set up here"
trap 'losetup -d "$LOOP" 2>/dev/null; cleanup' EXIT
mkdir -p "$T/mnt"

bad=$(make_cohort "$T/cohort" 16)
port=$(free_port)
start_broker $port --heartbeat-ms 200 --state "$T/state"
start_worker $port w1 --slots 1 --heartbeat-ms 200 --task-delay-ms 500
wait_for "worker registered" 10 "workers_registered $port 1"
unshare -m --propagation=private sh -c 'mount "$1" "$2" && shift 2 && exec "$@"' \
    sh "$LOOP" "$T/mnt" "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -o "$T/mnt/out" \
    --list "$T/cohort/list" >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
# (the folder is in the namespace: its journal read through the process)
done_lines() { cat "/proc/$submit/root$T/mnt/out/.qc-job" 2>/dev/null | grep -c '^done'; }
wait_for "some results written" 60 "[ \"\$(done_lines)\" -ge 2 ]" "$T/submit.log"
truncate -s 1M "$T/out.img" && losetup -c "$LOOP" || fail "cannot cut the loop device"
wait_exit $submit 60
rc=$?
[ $rc = 124 ] && fail "qc-submit still runs 60 s after its disk failed: $(tail -3 "$T/submit.log")"
[ $rc = 5 ] && grep -q "cannot put the results in $T/mnt/out on the disk (sync: Input/output error): the broker keeps them" \
    "$T/submit.log" || fail "a failing disk: exit $rc: $(tail -5 "$T/submit.log")"
pass "the output folder's disk fails its writes: the sync says so, qc-submit stops (exit 5: incomplete) with the reason and how to go on"

# the broker was never told the lost results were written: it holds
# them (not 'delivered'), for an attach once the disk is right
held() {
    "$BIN/qc-status" --broker "tcp://127.0.0.1:$port" --tsv >"$T/status.tsv" 2>&1
    awk -F'\t' '$1 == "job" && $10 == "waiting" {n++} END {exit !(n == 1)}' "$T/status.tsv"
}
wait_for "the job finished, its results waiting for a client" 60 held "$T/broker.log"
pass "nothing acknowledged after the failed sync: the broker holds the job ($(awk -F'\t' '$1 == "job" {print $10}' "$T/status.tsv"))"
