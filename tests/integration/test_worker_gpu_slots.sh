#!/bin/bash
# A worker with a GPU lane and no --slots ran a CPU slot on every core
# beside the lane, whose host work (the next slide's read, focus tiles,
# PNGs) shares those cores: on a 16-core H200 machine the lane alone was
# as fast or faster at 1.25x (0.072-0.084 s a slide against 0.080-0.093
# s with 16 slots), and at 10x it did 16 slides in 9.2 s while a worker
# with 8 slots beside it had not finished them in 110 s (a slot's slide
# takes ~20 lanes' times; tests/bench/README.md). By default a GPU worker
# now runs its lanes alone, and says so; --slots adds slots,
# --leave-cores keeps cores for other work (a CPU worker beside GPU
# workers on one host), and deploy/ansible gives a GPU host's CPU
# instance --leave-cores 8 per GPU. Real workers (simulated GPU lanes:
# the slot count is the CPU side's) on a real broker, held to 2 cores
# with taskset; the ansible role's instance list rendered by a real
# ansible-playbook.
. "$(dirname "$0")/lib.sh"

command -v taskset >/dev/null || skip "taskset not installed"
taskset -c 0,1 true 2>/dev/null || skip "this machine has no cores 0 and 1 to hold a worker to"

port=$(free_port)
start_broker "$port" --state none
# two_cores NAME [args...]: a worker held to cores 0 and 1 (exec keeps
# the PID, so the PID stopped is the worker's)
two_cores() {
    local name=$1; shift
    taskset -c 0,1 "$BIN/qc-worker" --connect "tcp://127.0.0.1:$port" --name "$name" \
        --no-supervise "$@" >>"$T/worker-$name.log" 2>&1 &
    PIDS+=($!)
    wait_for "$name's start" 10 "grep -q 'connecting to' '$T/worker-$name.log'" "$T/worker-$name.log"
}
two_cores lane --simulate-gpus 1
grep -q "with 0 slots, 1 GPU" "$T/worker-lane.log" \
    || fail "a GPU worker without --slots: not 0 slots: $(grep connecting "$T/worker-lane.log")"
grep -q "no CPU slot by default beside 1 GPU lane (the lane alone was the fastest: tests/bench/README.md); --slots N adds them" \
    "$T/worker-lane.log" || fail "why no slot is not said: $(cat "$T/worker-lane.log")"
two_cores lane-leave --simulate-gpus 1 --leave-cores 1
grep -q "with 1 slot, 1 GPU" "$T/worker-lane-leave.log" \
    || fail "a GPU worker with --leave-cores 1 on 2 cores: $(grep connecting "$T/worker-lane-leave.log")"
pass "a GPU worker runs its lane alone by default, and says so; --leave-cores gives it slots"

two_cores asked --slots 2 --simulate-gpus 1
grep -q "with 2 slots, 1 GPU" "$T/worker-asked.log" && ! grep -q "by default" "$T/worker-asked.log" \
    || fail "--slots 2 beside a lane: $(cat "$T/worker-asked.log")"
two_cores plain
grep -q "with 2 slots, 0 GPUs" "$T/worker-plain.log" && ! grep -q "by default" "$T/worker-plain.log" \
    || fail "a CPU worker on 2 cores: $(cat "$T/worker-plain.log")"
two_cores beside --leave-cores 1
grep -q "with 1 slot, 0 GPUs" "$T/worker-beside.log" \
    && grep -q "1 CPU slot by default: 2 cores less 1 left (--leave-cores)" "$T/worker-beside.log" \
    || fail "--leave-cores 1 on 2 cores: $(cat "$T/worker-beside.log")"
pass "--slots wins, a CPU worker still takes every core, --leave-cores keeps what it names"

# the slides go where there is room: the lanes and the slots all take
# part (every slide once, none lost)
for i in 1 2 3 4 5 6; do ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/s$i.svs"; done
ls "$T"/s*.svs >"$T/list"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -o "$T/out" --list "$T/list" --timeout 120 \
    >"$T/submit.log" 2>&1 || fail "the cohort: $(tail -3 "$T/submit.log")"
[ "$(grep -vc '^#' "$T/out/results.tsv")" -eq 6 ] || fail "not 6 result rows: $(cat "$T/submit.log")"
# each worker's log names the job beside the slide ("[job 1: s1.svs]"):
# its lines are read beside the broker's, which names jobs
for i in 1 2 3 4 5 6; do
    [ "$(cat "$T"/worker-*.log | grep -c "\[job 1: s$i.svs\] worker: build ")" -eq 1 ] \
        || fail "s$i.svs: not one '[job 1: s$i.svs] worker: build' line in the workers' logs"
done
pass "six slides through those workers, one row each, each worker's log naming the job"

# deploy/ansible: the CPU instance of a GPU host keeps 8 cores per GPU,
# unless qc_cpu_slots is given
command -v ansible-playbook >/dev/null || skip "ansible-playbook not installed (the worker checks passed)"
R=$ROOT/deploy/ansible/roles/qc_worker
cat >"$T/play.yml" <<PLAY
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - ansible.builtin.include_vars: $R/defaults/main.yml
    - ansible.builtin.include_vars: $R/vars/main.yml
    - ansible.builtin.copy:
        dest: "$T/instances.json"
        content: "{{ qc_worker_instances | to_json }}"
PLAY
instances() {   # instances EXTRA_VARS_JSON: the role's instance list, as JSON
    rm -f "$T/instances.json"
    timeout 120 ansible-playbook -i localhost, "$T/play.yml" -e "$1" >"$T/play.log" 2>&1 \
        || fail "ansible-playbook with $1: $(tail -5 "$T/play.log")"
    cat "$T/instances.json"
}
got=$(instances '{"qc_gpus": [0, 1]}')
[ "$got" = '[{"name": "cpu", "args": "--leave-cores 16"}, {"name": "gpu0", "args": "--gpu 0 --slots 0"}, {"name": "gpu1", "args": "--gpu 1 --slots 0"}]' ] \
    || fail "two GPUs: $got"
got=$(instances '{"qc_gpus": []}')
[ "$got" = '[{"name": "cpu", "args": ""}]' ] || fail "no GPU: $got"
got=$(instances '{"qc_gpus": [0], "qc_cpu_slots": 4}')
[ "$got" = '[{"name": "cpu", "args": "--slots 4"}, {"name": "gpu0", "args": "--gpu 0 --slots 0"}]' ] \
    || fail "a GPU and qc_cpu_slots 4: $got"
# what the role writes for one GPU, run by a real worker on 2 cores
args=$(instances '{"qc_gpus": [0]}' | sed -n 's/.*"name": "cpu", "args": "\([^"]*\)".*/\1/p')
[ "$args" = "--leave-cores 8" ] || fail "one GPU: the CPU instance's args are '$args'"
# shellcheck disable=SC2086
two_cores cpu-instance $args
grep -q "with 1 slot, 0 GPUs" "$T/worker-cpu-instance.log" \
    && grep -q "but at least one on a worker without a GPU" "$T/worker-cpu-instance.log" \
    || fail "the CPU instance ($args) on 2 cores: $(cat "$T/worker-cpu-instance.log")"
pass "deploy/ansible: a GPU host's CPU instance keeps 8 cores per GPU; qc_cpu_slots still wins"
