#!/bin/bash
# A worker in a container or a systemd unit with a CPU quota and a
# memory limit (a control group: docker --cpus, Kubernetes limits,
# CPUQuota=/MemoryMax=) sees every host core and all its memory through
# sysconf; it ran a slot per host core and kept an eighth of the host's
# memory in image buffers. Here a real worker starts inside a real group
# with half a core and 768 MB: it runs 1 slot and says why, says the
# memory limit and the image buffers it keeps under it, and QCs a slide.
# As root only, on a machine whose cgroup hierarchy can be written.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "making a control group needs root"
cores=$(nproc)
[ "$cores" -ge 2 ] || skip "one core here: a half-core quota would not cut the slots"

# the group: v1 (separate cpu and memory hierarchies) or v2 (one)
GROUPS_MADE=()
make_group() {        # make_group BASE FILE VALUE...: a new group with those limits
    local base=$1 dir; shift
    [ -f "$base/cgroup.procs" ] || return 1
    dir=$base/qc-it-$$
    mkdir "$dir" 2>/dev/null || return 1
    GROUPS_MADE+=("$dir")
    while [ $# -ge 2 ]; do echo "$2" >"$dir/$1" 2>/dev/null || return 1; shift 2; done
}
drop_groups() {
    local d _
    for d in "${GROUPS_MADE[@]}"; do
        for _ in $(seq 1 50); do rmdir "$d" 2>/dev/null && break; sleep 0.1; done
    done
}
trap 'cleanup; drop_groups' EXIT

if make_group /sys/fs/cgroup/cpu cpu.cfs_quota_us 50000 \
    && make_group /sys/fs/cgroup/memory memory.limit_in_bytes $((768 << 20)); then
    :
elif make_group /sys/fs/cgroup cpu.max "50000 100000" memory.max $((768 << 20)); then
    :
else
    skip "no writable cgroup hierarchy with cpu and memory controllers here"
fi

port=$(free_port)
start_broker "$port"
# start_capped NAME [args...]: a worker whose shell joins the groups,
# then becomes the worker (exec keeps its PID, so the PID stopped is the
# worker's)
start_capped() {
    local name=$1; shift
    QC_IT_GROUPS="${GROUPS_MADE[*]}" sh -c \
        'for d in $QC_IT_GROUPS; do echo $$ >"$d/cgroup.procs" || exit 99; done; exec "$@"' \
        sh "$BIN/qc-worker" --connect "tcp://127.0.0.1:$port" --name "$name" --no-supervise \
        "$@" >>"$T/worker-$name.log" 2>&1 &
    PIDS+=($!)
}
start_capped capped
wait_for "the capped worker's start" 10 "grep -q 'connecting to' '$T/worker-capped.log'" \
    "$T/worker-capped.log"
grep -q "connecting to tcp://127.0.0.1:$port with 1 slot," "$T/worker-capped.log" \
    || fail "a half-core quota: not 1 slot: $(grep 'connecting' "$T/worker-capped.log")"
grep -q "a CPU quota of 0.50 cores (control group) on $cores cores: 1 slot by default" \
    "$T/worker-capped.log" || fail "the quota is not said: $(cat "$T/worker-capped.log")"
grep -q "a memory limit of 768 MB (control group): image buffers kept at most 96 MB" \
    "$T/worker-capped.log" || fail "the memory limit is not said: $(cat "$T/worker-capped.log")"
pass "a worker in a group of half a core and 768 MB: 1 slot, 96 MB of image buffers, said"

"$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -o "$T/out" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/submit.log" 2>&1 \
    || fail "a slide through the capped worker: $(tail -3 "$T/submit.log")"
grep -q 'ok 1/1 CMU-1-Small-Region.svs (capped)' "$T/submit.log" \
    || fail "the slide did not run on the capped worker: $(cat "$T/submit.log")"
pass "the capped worker QCs a slide"

# --slots given: the number asked for is run, and no quota is said
start_capped asked --slots 2
wait_for "the second worker's start" 10 "grep -q 'connecting to' '$T/worker-asked.log'" \
    "$T/worker-asked.log"
grep -q 'with 2 slots' "$T/worker-asked.log" && ! grep -q 'CPU quota' "$T/worker-asked.log" \
    || fail "--slots 2 in the group: $(cat "$T/worker-asked.log")"
grep -q 'a memory limit of 768 MB' "$T/worker-asked.log" \
    || fail "--slots 2 in the group: the memory limit not said: $(cat "$T/worker-asked.log")"
pass "a worker in the group with --slots 2: 2 slots, no quota said"
