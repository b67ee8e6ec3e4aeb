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

# a worker's slot given a slide there: the slide is in a folder the
# client sees, and while the worker's task waits (--task-delay-ms), the
# folder becomes a link into the share, as a mount gone bad under a
# cohort does. The worker's log says which slot waits on which path,
# where the slot sat silent until --task-timeout.
port=$(free_port)
start_broker $port --heartbeat-ms 200 --state none
start_worker $port hw --slots 1 --heartbeat-ms 200 --task-delay-ms 3000 --test-open-stall-ms 1000
hwp=$WORKER_PID
wait_for "worker registered" 10 "workers_registered $port 1"
mkdir "$T/shadow"
cp "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/shadow/a.svs"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --no-check -o "$T/wout" "$T/shadow/a.svs" \
    >"$T/wsubmit.log" 2>&1 &
wsub=$!
PIDS+=($wsub)
wait_for "the job accepted" 10 "grep -q '^job ' '$T/wout/.qc-job' 2>/dev/null" "$T/wsubmit.log"
mv "$T/shadow" "$T/shadow.was"
ln -s "$M/slides" "$T/shadow"
wait_for "the worker says what its slot waits on" 20 \
    "grep -q 'slot 1 has waited [0-9]* s for $T/shadow/a.svs to answer: a network share (NFS, SMB)' '$T/worker-hw.log'" \
    "$T/worker-hw.log"
pass "a worker's slot waiting on a share that does not answer: its log says which slot and path"

# a rerun into a folder whose records name slides on that share: the
# look for moved slides (client/output_plan.c) stats each recorded slide
# that is not in the cohort, and sat silent on the share; now said
mkdir "$T/mvsrc"
cp "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/mvsrc/a.svs"
cp "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/mvsrc/b.svs"
touch -d '2020-01-01' "$T/mvsrc/b.svs"
"$BIN/qc-submit" -q -o "$T/mvout" "$T/mvsrc/a.svs" >"$T/mv1.log" 2>&1 || fail "mv run 1: $(cat "$T/mv1.log")"
sed -i "s#$T/mvsrc/a.svs#$M/slides/a.svs#g" "$T/mvout/results.tsv" "$T/mvout/.qc-stamps"
grep -q "$M/slides/a.svs" "$T/mvout/.qc-stamps" || fail "the test's edit of .qc-stamps did not take"
"$BIN/qc-submit" --wait-warn 2 -o "$T/mvout" "$T/mvsrc/b.svs" >"$T/mv2.log" 2>&1 &
mv2=$!
PIDS+=($mv2)
wait_for "qc-submit says it waits on a recorded slide's share" 20 \
    "grep -q 'waiting 2 s so far for $M/slides/a.svs to answer' '$T/mv2.log'" "$T/mv2.log"
pass "a rerun whose records name slides on a share that does not answer: said, naming the recorded slide"

# the share gone for good (unmounted): qc-submit goes on, and says so
unmount
for _ in $(seq 1 100); do kill -0 $mv2 2>/dev/null || break; sleep 0.2; done
kill -0 $mv2 2>/dev/null && fail "the rerun still waits after the share went: $(cat "$T/mv2.log")"
wait $mv2 || fail "the rerun, the share gone: exit $?: $(tail -3 "$T/mv2.log")"
for _ in $(seq 1 100); do kill -0 $submit 2>/dev/null || break; sleep 0.2; done
kill -0 $submit 2>/dev/null && fail "qc-submit still waits after the share went: $(cat "$T/submit.log")"
wait $submit
rc=$?
[ $rc -ne 0 ] && grep -q "$M/slides" "$T/submit.log" \
    || fail "after the share went: exit $rc: $(tail -3 "$T/submit.log")"
pass "the share unmounted: qc-submit ends (exit $rc), naming the entry"
# the worker's slot is let go with the share (ENOTCONN): its client ends
for _ in $(seq 1 100); do kill -0 $wsub 2>/dev/null || break; sleep 0.2; done
kill -0 $wsub 2>/dev/null && fail "the worker's client still waits after the share went"
kill -TERM $hwp $BROKER_PID; wait $hwp $BROKER_PID 2>/dev/null
