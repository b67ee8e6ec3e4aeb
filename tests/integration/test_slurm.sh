#!/bin/bash
# deploy/slurm/qc-cohort.sbatch on a real one-node Slurm cluster that this
# test starts on this machine (munged, slurmctld, slurmd with a private
# slurm.conf for localhost; stopped by PID at the end):
#  - a cohort through the script: broker on the first node, workers on
#    every node, qc-submit, then nothing of the job left running;
#  - a worker killed mid-run: the cohort still ends, every slide once,
#    and the teardown stops the rest;
#  - a broker that cannot start (its port taken): exit 4, nothing left;
#  - --gres=gpu: the node's GPU goes to its first worker, and a CPU
#    worker takes its place when it is refused (no GPU here).
. "$(dirname "$0")/lib.sh"
for d in munged slurmctld slurmd sbatch squeue scontrol; do
    PATH=$PATH:/usr/sbin command -v $d >/dev/null || fail "$d not installed (tests/install-deps.sh installs slurm-wlm and munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start job steps; run make test as root"
PATH=$PATH:/usr/sbin

# --- a one-node cluster -------------------------------------------------
S=$T/slurm
mkdir -p "$S/munge" "$S/ctld" "$S/spool"
chmod 700 "$S/munge"
head -c 1024 /dev/urandom >"$S/munge/munge.key"; chmod 600 "$S/munge/munge.key"
munged --socket="$S/munge/sock" --key-file="$S/munge/munge.key" --pid-file="$S/munge/pid" \
    --log-file="$S/munge/log" --seed-file="$S/munge/seed" --force || fail "munged did not start"
wait_for "munged" 10 "[ -s '$S/munge/pid' ]"
PIDS+=($(cat "$S/munge/pid"))
ctld_port=$(free_port); d_port=$(free_port)
cat >"$S/slurm.conf" <<CONF
ClusterName=qctest$$
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$S/munge/sock
CredType=cred/munge
StateSaveLocation=$S/ctld
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=qc Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
# two GPUs Slurm may hand out; this machine has none, so regular files
# stand in for the device files (nothing opens them)
mkdir -p "$S/dev"; mknod "$S/dev/nvidia0" c 1 3; mknod "$S/dev/nvidia1" c 1 3
echo "NodeName=localhost Name=gpu File=$S/dev/nvidia[0-1]" >"$S/gres.conf"
export SLURM_CONF=$S/slurm.conf
slurmctld -i || fail "slurmctld did not start: $(tail -3 "$S/slurmctld.log")"
wait_for "slurmctld" 10 "[ -s '$S/slurmctld.pid' ]"
PIDS+=($(cat "$S/slurmctld.pid"))
slurmd -N localhost || fail "slurmd did not start: $(tail -3 "$S/slurmd.log")"
wait_for "slurmd" 10 "[ -s '$S/slurmd.pid' ]"
PIDS+=($(cat "$S/slurmd.pid"))
wait_for "node idle" 30 "sinfo -h -o %T 2>/dev/null | grep -q idle"
pass "one-node Slurm cluster up ($(sinfo -h -o '%P %D %T'))"

# run_job NAME [sbatch env...] -- [script args...]: submits, waits
# (bounded), sets JOB_RC to the job's exit code
run_job() {
    local name=$1 id state; shift
    local envs=() ; while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    id=$(env "${envs[@]}" QC_BIN="$BIN" QC_BIND_HOST=127.0.0.1 \
        sbatch --parsable --export=ALL -o "$T/$name.out" "$ROOT/deploy/slurm/qc-cohort.sbatch" "$@") \
        || fail "$name: sbatch refused the job"
    JOB_ID=$id
    for _ in $(seq 1 600); do
        state=$(squeue -h -j "$id" -o %T 2>/dev/null)
        [ -z "$state" ] && break
        [ -n "${ON_RUNNING:-}" ] && [ "$state" = RUNNING ] && { eval "$ON_RUNNING"; ON_RUNNING=; }
        sleep 0.2
    done
    [ -z "$state" ] || fail "$name: job $id still $state after 120 s: $(scontrol show job "$id" 2>/dev/null | grep -oE "(Reason|BeginTime|Restarts)=[^ ]*" | paste -sd" ")"
    JOB_RC=$(scontrol show job "$id" 2>/dev/null | sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p')
}
# job_pids JOBID [NAME]: the qc-broker and qc-worker processes of that
# Slurm job (NAME: only workers with that name), told by the job id in
# their environment: a pattern on command lines also caught other tests'
# brokers and workers on this machine
job_pids() {
    local pid
    for pid in $(pgrep -f 'qc-(broker|worker)'); do
        tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -qx "SLURM_JOB_ID=$1" || continue
        [ -z "${2:-}" ] || tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q -- "--name $2 " \
            || continue
        echo "$pid"
    done
}
no_job_processes() {  # no_job_processes JOBID: nothing of the job is left
    local left pids
    for _ in $(seq 1 50); do
        pids=$(job_pids "$1")
        [ -z "$pids" ] && return 0
        sleep 0.2
    done
    left=$(for p in $pids; do tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline"; echo; done)
    fail "job $1 left processes running: $left"
}

logs_of() { sed -n 's/^qc-cohort: .*logs in //p' "$T/$1.out" | tail -1; }
cohort=$T/cohort; mkdir -p "$cohort"
for s in CMU-1-Small-Region.svs CMU-1-Small-Region-pyramid.svs TCGA-CR-7395-pyramid.svs; do
    ln -s "$SHARED/slides/real/$s" "$cohort/$s"
done
for g in 1 2 3; do
    "$BIN/qc-mkslide" -o "$cohort/gen-$g.svs" --width 2000 --height 1500 --seed $g >/dev/null || fail "qc-mkslide"
done
n=$(ls "$cohort" | wc -l)

run_job plain QC_WORKERS_PER_NODE=2 -- -o "$T/out1" "$cohort"
[ "$JOB_RC" = 0 ] || { cat "$T/plain.out"; fail "job exit $JOB_RC"; }
[ "$(grep -vc '^#' "$T/out1/results.tsv")" = "$n" ] || fail "expected $n rows in results.tsv"
no_job_processes "$JOB_ID"
priv=$(sed -n 's/^qc-cohort: .*logs in //p' "$T/plain.out" | tail -1)
[ -f "$priv/broker.log" ] && [ ! -e "$priv/keys" ] && [ ! -e "$priv/state" ] \
    || fail "a finished job's keys or journal left in $priv: $(ls -A "$priv")"
# the workers share the job's CPUs on the node (one here, Slurm's
# default): with TaskPlugin=task/none nothing confines a task, and each
# worker took every core of the node (a user's review)
grep -q "connecting to .* with 1 slot, 0 GPUs" "$priv/workers.log" \
    && ! grep -q "with 2 slots" "$priv/workers.log" \
    || fail "the workers did not share the job's one CPU: $(grep connecting "$priv/workers.log")"
pass "sbatch qc-cohort.sbatch: $n slides passed, broker and workers gone after the job, its keys and journal too"

# a worker dies while tasks run: the other takes over; teardown still
# stops the rest
ON_RUNNING='for _ in $(seq 1 100); do w=$(job_pids "$JOB_ID" "[^ ]*-$JOB_ID-1" | head -1); [ -n "$w" ] && grep -q "^ok" "$T/killed.out" 2>/dev/null && break; sleep 0.1; done; [ -n "$w" ] && kill -9 $w && echo killed >"$T/killed"'
run_job killed QC_WORKERS_PER_NODE=2 QC_WORKER_ARGS="--task-delay-ms 300 --slots 1" -- -o "$T/out2" "$cohort"
[ -f "$T/killed" ] || fail "the test did not get to kill a worker"
[ "$JOB_RC" = 0 ] || { cat "$T/killed.out"; fail "job with a killed worker exit $JOB_RC"; }
printf '%s\n' "$cohort"/* >"$T/list"
check_exactly_once "$T/out2" "$T/list"
no_job_processes "$JOB_ID"
pass "a worker killed mid-run: every slide once, nothing left running"

# Slurm requeues the job mid-cohort (a node failed): the new run's
# broker restores the job from its journal and qc-submit attaches to it,
# so no slide runs twice (Slurm holds a requeued job a while: its start
# time is brought forward)
ON_RUNNING='for _ in $(seq 1 200); do grep -q "^ok" "$T/requeue.out" 2>/dev/null && break; sleep 0.1; done; scontrol requeue "$JOB_ID" && echo requeued >"$T/requeued"; for _ in $(seq 1 150); do [ "$(squeue -h -j "$JOB_ID" -o %T)" = PENDING ] && scontrol update JobId="$JOB_ID" StartTime=now 2>/dev/null; [ "$(squeue -h -j "$JOB_ID" -o %T)" = RUNNING ] && break; sleep 0.2; done'
run_job requeue QC_WORKER_ARGS="--task-delay-ms 400 --slots 1" -- -o "$T/out5" "$cohort"
[ -f "$T/requeued" ] || fail "the test did not get to requeue the job"
[ "$JOB_RC" = 0 ] || { cat "$T/requeue.out"; fail "requeued job exit $JOB_RC"; }
check_exactly_once "$T/out5" "$T/list"
rlog=$(sed -n 's/^qc-cohort: .*logs in //p' "$T/requeue.out" | tail -1)/broker.log
grep -q "attaching to job" "$T/requeue.out" || fail "the requeued run did not attach: $(cat "$T/requeue.out")"
[ "$(grep -c 'submitted' "$rlog")" = 1 ] || fail "the cohort was submitted again: $(grep submitted "$rlog")"
no_job_processes "$JOB_ID"
pass "a requeued job attaches to the job its broker's journal kept: every slide once, one submission"

# the job's broker dies mid-run (killed: out of memory, say): the job
# stops (exit 4) instead of waiting for its time limit, and the same
# sbatch takes over its journal and keys and fetches what that broker
# held: every slide once, nothing left behind. -oDIR, as qc-submit takes it.
ON_RUNNING='for _ in $(seq 1 200); do b=$(job_pids "$JOB_ID" | while read -r p; do tr "\0" " " <"/proc/$p/cmdline" 2>/dev/null | grep -q qc-broker && echo $p; done | head -1); [ -n "$b" ] && grep -q "^ok" "$T/brokerdied.out" 2>/dev/null && break; sleep 0.1; done; [ -n "$b" ] && kill -9 $b && echo killed >"$T/brokerkilled"'
t0=$SECONDS
run_job brokerdied QC_WORKER_ARGS="--task-delay-ms 400 --slots 1" -- "-o$T/out6" "$cohort"
[ -f "$T/brokerkilled" ] || fail "the test did not get to kill the broker"
[ "$JOB_RC" = 4 ] && [ $((SECONDS - t0)) -lt 60 ] && grep -q "this job's broker stopped" "$T/brokerdied.out" \
    || fail "broker killed: exit $JOB_RC after $((SECONDS - t0)) s: $(tail -5 "$T/brokerdied.out")"
no_job_processes "$JOB_ID"
dead=$JOB_ID
run_job takeover -- -o "$T/out6" "$cohort"
[ "$JOB_RC" = 0 ] || { cat "$T/takeover.out"; fail "the job after the broker died: exit $JOB_RC"; }
grep -q "taking over the journal of job $dead" "$T/takeover.out" \
    && grep -q "attaching to job" "$T/takeover.out" \
    || fail "the journal was not taken over: $(head -5 "$T/takeover.out")"
check_exactly_once "$T/out6" "$T/list"
[ -z "$(ls -A "$T/out6/.qc-slurm-$dead/" | grep -e keys -e state)" ] && [ ! -e "$(logs_of takeover)/keys" ] \
    || fail "keys or journal left: $(ls -A "$T/out6/.qc-slurm-$dead/" "$(logs_of takeover)")"
no_job_processes "$JOB_ID"
pass "the broker killed mid-run: the job stopped (exit 4), and the same sbatch took over its journal: every slide once, no keys left"

# no worker can run (a QC_WORKER_ARGS qc-worker refuses): exit 4, said,
# not a wait for the time limit
t0=$SECONDS
run_job noworker QC_WORKER_ARGS="--bogus-opt" -- -o "$T/out7" "$cohort"
[ "$JOB_RC" = 4 ] && [ $((SECONDS - t0)) -lt 60 ] && grep -q "every worker of this job stopped" "$T/noworker.out" \
    || fail "no worker: exit $JOB_RC after $((SECONDS - t0)) s: $(tail -5 "$T/noworker.out")"
no_job_processes "$JOB_ID"
pass "every worker refused its options: the job stopped at once (exit 4), said why"

# the broker's port is taken: exit 4, no worker started, nothing left
busy=$(free_port)
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(60)' "$busy" &
PIDS+=($!)
wait_for "the port taken" 20 "(echo >/dev/tcp/127.0.0.1/$busy) 2>/dev/null"
run_job nobroker QC_PORT=$busy QC_STARTUP_S=5 -- -o "$T/out3" "$cohort"
[ "$JOB_RC" = 4 ] || { cat "$T/nobroker.out"; fail "expected exit 4 when the broker cannot start, got $JOB_RC"; }
grep -q 'did not start' "$T/nobroker.out" || fail "no word on why"
no_job_processes "$JOB_ID"
pass "a broker that cannot bind: exit 4 with the reason, nothing left running"

# --gres=gpu: the GPUs Slurm gives a node go to its first worker (--gpu
# all). This machine has no GPU (device nodes that are /dev/null stand in
# for Slurm), so that worker is refused (exit 2, the reason in
# workers.log) and the script starts a CPU worker in its place, which runs
# the cohort; a job without --gres starts no GPU worker.
run_job gres SBATCH_GRES=gpu:1 -- -o "$T/out4" "$cohort"
[ "$JOB_RC" = 0 ] || { cat "$T/gres.out"; fail "job with --gres=gpu:1 exit $JOB_RC"; }
[ "$(grep -vc '^#' "$T/out4/results.tsv")" = "$n" ] || fail "--gres job: expected $n rows"
wlog=$(logs_of gres)/workers.log
[ -f "$wlog" ] || fail "--gres job: no workers.log (logs: $(logs_of gres))"
grep -q -- '--gpu all: no usable GPU' "$wlog" \
    || fail "--gres job: the first worker did not ask for the node's GPUs: $(head -5 "$wlog")"
grep -q 'starting a CPU worker in its place' "$wlog" \
    || fail "--gres job: no CPU worker in the refused GPU worker's place: $(head -5 "$wlog")"
[ "$(grep -c -- '--gpu' "$wlog")" = 1 ] || fail "--gres job: more than one GPU worker: $(grep -- '--gpu' "$wlog")"
plain_log=$(logs_of plain)/workers.log
[ -f "$plain_log" ] && ! grep -q -e '--gpu' -e 'GPU worker' "$plain_log" \
    || fail "the job without --gres started a GPU worker: $(grep -- '--gpu' "$plain_log" 2>/dev/null)"
no_job_processes "$JOB_ID"
pass "--gres=gpu:1: the node's GPU went to its first worker (refused here: no GPU), a CPU worker took its place and ran all $n slides"
