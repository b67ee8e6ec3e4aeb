#!/bin/bash
# The broker's state folder on a real file system that fills up while a
# job runs (ENOSPC from ext4 itself; test_disk_full stands a file-size
# limit in for it) and is then given room again, as an operator does:
# the log and qc-status say it (TROUBLE state-unwritable, exit 7), a new
# job is refused with the reason, the running job goes on; once a file
# is deleted the broker writes again by itself (no restart), qc-status
# is clear, the job ends with each slide exactly once; and the broker
# restarted on that file system finds its state whole (the job there,
# nothing torn) and takes a new job. The file system is a 96 MB ext4
# image on a loop device without root's reserved blocks (the broker runs
# as root here: with them, root's writes would still fit), mounted in a
# mount namespace of its own.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "not root: no file system of its own can be mounted"
[ -e /dev/loop-control ] || skip "no loop devices here (/dev/loop-control)"
unshare -m --propagation=private true 2>/dev/null \
    || fail "no mount namespace can be made here, as root: $(unshare -m --propagation=private true 2>&1)"
truncate -s 96M "$T/fs.img" && mkfs.ext4 -q -F -m 0 "$T/fs.img" || fail "mkfs.ext4 on $T/fs.img"
mkdir -p "$T/fs"

# fs_broker LOG: a broker whose state folder is on the image; sets PORT
# (the first time) and BPID
PORT=$(free_port)
fs_broker() {
    unshare -m --propagation=private sh -c \
        'mount -o loop "$1" "$2" && shift 2 && exec "$@"' \
        sh "$T/fs.img" "$T/fs" "$BIN/qc-broker" --bind "tcp://127.0.0.1:$PORT" \
        --heartbeat-ms 200 --state "$T/fs/state" >>"$T/$1" 2>&1 &
    BPID=$!
    PIDS+=($BPID)
    wait_for "the broker listening" 10 "grep -q 'listening on' '$T/$1'" "$T/$1"
}
# in_fs CMD...: runs CMD in the broker's mount namespace (where the
# image is mounted)
in_fs() { nsenter -t "$BPID" -m "$@"; }

fs_broker broker.log
bad=$(make_cohort "$T/cohort" 24)
start_worker $PORT w1 --slots 2 --heartbeat-ms 200 --task-delay-ms 400
wait_for "worker registered" 10 "workers_registered $PORT 1"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$PORT" -o "$T/out" --list "$T/cohort/list" \
    >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
wait_for "some results written" 60 "[ \"\$(grep -c '^done' '$T/out/.qc-job' 2>/dev/null)\" -ge 3 ] 2>/dev/null" \
    "$T/submit.log"

# the disk fills (a filler file up to ENOSPC: ext4's own refusal)
in_fs sh -c 'dd if=/dev/zero of="$1" bs=1M 2>/dev/null; true' sh "$T/fs/filler"
n0=$(grep -c '^done' "$T/out/.qc-job")
[ "$(in_fs df --output=avail -B1 "$T/fs" | tail -1)" -lt 1048576 ] \
    || fail "the file system did not fill: $(in_fs df -h "$T/fs" | tail -1)"
wait_for "the log says the state folder refuses writes" 30 \
    "grep -q 'cannot write $T/fs/state.*No space left on device.*new jobs are refused' '$T/broker.log'" \
    "$T/broker.log"
"$BIN/qc-status" --broker "tcp://127.0.0.1:$PORT" >"$T/full.status" 2>&1
rc=$?
[ $rc = 7 ] && grep -q "^TROUBLE state-unwritable: its state folder $T/fs/state cannot be written (No space left on device)" \
    "$T/full.status" || fail "qc-status on the full disk: exit $rc: $(cat "$T/full.status")"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$PORT" -o "$T/refused" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/refused.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "cannot store a new job: its state folder .* cannot be written (No space left on device); accepted jobs go on" \
    "$T/refused.log" || fail "a new job on the full disk: exit $rc: $(cat "$T/refused.log")"
# results go on reaching the client while the disk is full
wait_for "results while the disk is full" 30 \
    "[ \"\$(grep -c '^done' '$T/out/.qc-job')\" -gt $n0 ] || ! kill -0 $submit 2>/dev/null" "$T/submit.log"
[ "$(grep -c '^done' "$T/out/.qc-job")" -gt "$n0" ] \
    || fail "no result reached the client while the disk was full: $(tail -3 "$T/submit.log")"
in_fs test -e "$T/fs/filler" || fail "the filler went before the check"
pass "a state disk full (ENOSPC) mid-job: said in the log and by qc-status (exit 7); a new job refused with the reason; the job goes on"

# room again: the broker writes by itself, the job ends, each slide once
in_fs rm -f "$T/fs/filler"
wait_for "the broker writes again" 30 "grep -q 'can be written again: new jobs are accepted' '$T/broker.log'" \
    "$T/broker.log"
wait_exit $submit 120
rc=$?
[ "$rc" = 124 ] && fail "the job did not finish within 120 s of the room freed: $(tail -3 "$T/submit.log")"
[ "$rc" -le 1 ] || fail "the job: exit $rc: $(tail -3 "$T/submit.log")"
check_exactly_once "$T/out" "$T/cohort/list"
[ "$(grep -vc '^#' "$T/out/results.tsv")" -eq $((24 - bad)) ] \
    || fail "$(grep -vc '^#' "$T/out/results.tsv") rows, $((24 - bad)) slides that can pass"
"$BIN/qc-status" --broker "tcp://127.0.0.1:$PORT" >"$T/clear.status" 2>&1 \
    || fail "qc-status once there is room: exit $?: $(cat "$T/clear.status")"
grep -q '^TROUBLE' "$T/clear.status" && fail "trouble after the room was freed: $(cat "$T/clear.status")"
pass "room freed: the broker wrote again without a restart, qc-status clear; the job ended, each of its 24 slides once"

# restarted on that file system: its state whole, a new job taken
job=$(awk '/^job /{print $2; exit}' "$T/out/.qc-job")
kill -TERM $BPID
wait_for "the broker stopped" 10 "! kill -0 $BPID 2>/dev/null" "$T/broker.log"
wait $BPID 2>/dev/null
fs_broker broker2.log
grep -qi 'torn\|damaged\|cannot read' "$T/broker2.log" \
    && fail "the restarted broker found its state damaged: $(grep -i 'torn\|damaged\|cannot read' "$T/broker2.log")"
"$BIN/qc-status" --broker "tcp://127.0.0.1:$PORT" --tsv >"$T/after.tsv" 2>&1
awk -F'\t' -v j="$job" '$1 == "job" && $2 == j {found = 1} END {exit !found}' "$T/after.tsv" \
    || fail "the restarted broker lost job $job: $(cat "$T/after.tsv")"
start_worker $PORT w2 --slots 2 --heartbeat-ms 200
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$PORT" -o "$T/next" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" --timeout 20 >"$T/next.log" 2>&1 \
    || fail "a new job after the restart: exit $?: $(tail -3 "$T/next.log")"
pass "restarted on that file system: job $job still there, nothing torn; a new job ran"
