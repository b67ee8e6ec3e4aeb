#!/bin/bash
# Issue 18's 1.25x goal as a lab sees it, measured end to end: a cohort
# of N copies (links) of the full-size slide through a real qc-broker on
# loopback and one qc-worker of each shape below, the default config,
# best of REPEAT runs of qc-submit, wall time over N:
#   gpu-lane   --slots 0 --gpu 0: one GPU lane, its read-ahead on
#   cpu-all    --slots $(nproc): every core, no GPU
#   both       --slots $(nproc) --gpu 0: a CPU slot on every core too
#   default    --gpu 0: the slots qc-worker picks (none since call 5 of
#              tests/bench/README.md's H200 runs; 8 of 16 before)
# bench_gpu's "with read-ahead" figure is the larger of a lane's read and
# its steps, computed from one slide; this one is measured, with the
# broker, the result transfer and the client's writing in it for all
# shapes alike. Needs a GPU (the device tool); without one it says so.
# QC_COHORT_CONFIG=FILE runs that config instead of the default (qc-submit
# -c); QC_COHORT_SHAPES picks shapes ("gpu-lane default" at 10x, where
# 16 CPU slots would not fit the memory).
#   tests/bench/gpu_cohort.sh SLIDE [N [REPEAT]]      (defaults 32, 2)
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/bench/lib.sh
slide=${1:?usage: gpu_cohort.sh SLIDE [N [REPEAT]]} n=${2:-32} repeat=${3:-2}
[ -s "$slide" ] || { echo "gpu_cohort: no slide $slide" >&2; exit 2; }
# QC_COHORT_LANE="--simulate-gpus 1" tries the script on a machine with
# no GPU (the lane's steps then run on the CPU: no GPU figure)
lane=${QC_COHORT_LANE:---gpu 0}
# shellcheck disable=SC2086
if ! bin/qc-worker --connect tcp://127.0.0.1:1 $lane --timeout 1 >/dev/null 2>&1 \
    && [ $? -eq 2 ]; then
    echo "gpu_cohort: no usable GPU 0 here (qc-worker --gpu 0 refuses)" >&2
    exit 2
fi
T=$(mktemp -d /tmp/qc-gpu-cohort.XXXXXX) || exit 2
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
[ -n "${KEEP:-}" ] && cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; echo "kept $T" >&2; }
trap cleanup EXIT
abs=$(readlink -f "$slide")
for i in $(seq -w 1 "$n"); do
    ln -s "$abs" "$T/cohort-$i.svs"
    echo "$T/cohort-$i.svs"
done >"$T/all.list"
cores=$(nproc)
config_arg=
if [ -n "${QC_COHORT_CONFIG:-}" ]; then
    [ -s "$QC_COHORT_CONFIG" ] || { echo "gpu_cohort: no config $QC_COHORT_CONFIG" >&2; exit 2; }
    config_arg="-c $QC_COHORT_CONFIG"
fi
shapes=" ${QC_COHORT_SHAPES:-gpu-lane cpu-all both default} "
head -"$cores" "$T/all.list" >"$T/warm.list"

port=$(bench_free_port gpu_cohort) || exit 2
bench_broker "$port" "$T/broker.log" --state none

# submit LIST OUT: one cohort run; prints its wall seconds
submit() {
    local t0 t1 rc TIMEFORMAT="%U %S"
    rm -rf "$2"
    t0=$(date +%s.%N)
    # the client's own CPU seconds (user, system) to $2.cpu: whether it
    # is what bounds a shape
    # shellcheck disable=SC2086
    { time bin/qc-submit -q --broker tcp://127.0.0.1:$port -o "$2" --list "$1" --timeout 600 \
        $config_arg >"$2.log" 2>&1; } 2>"$2.cpu"
    rc=$?
    t1=$(date +%s.%N)
    [ $rc -le 1 ] || { echo "gpu_cohort: qc-submit exit $rc (log $2.log):" >&2; tail -5 "$2.log" >&2; return 1; }
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

# shape NAME [worker args]: one worker of that shape, warmed on $cores
# slides (classifier training, CUDA context), then REPEAT timed runs
shape() {
    local name=$1; shift
    case $shapes in *" $name "*) ;; *) return 0 ;; esac
    bin/qc-worker --connect tcp://127.0.0.1:$port --name "$name" "$@" \
        >"$T/worker-$name.log" 2>&1 &
    local w=$! best= t
    pids+=($w)
    submit "$T/warm.list" "$T/warm-$name" >/dev/null || { kill -TERM $w; return 1; }
    for _ in $(seq 1 "$repeat"); do
        t=$(submit "$T/all.list" "$T/out-$name") || break
        if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then
            best=$t
        fi
    done
    kill -TERM $w
    wait $w 2>/dev/null
    [ -n "$best" ] || { echo "  $name: no complete run (worker log below)"; tail -5 "$T/worker-$name.log"; return 1; }
    local rows on_gpu on_cpu
    rows=$(grep -vc '^#' "$T/out-$name/results.tsv")
    # where the worker ran them, over all its runs (warm-up included)
    on_gpu=$(grep -c '\] worker: build .*, GPU ' "$T/worker-$name.log")
    on_cpu=$(grep -c '\] worker: build .*, a CPU slot' "$T/worker-$name.log")
    awk -v name="$name" -v t="$best" -v n="$n" -v rows="$rows" -v args="$*" \
        -v g="$on_gpu" -v c="$on_cpu" -v cpu="$(cat "$T/out-$name.cpu")" \
        'BEGIN { split(cpu, u, " ");
                 printf "  %-9s %7.3f s per slide (%d slides in %.2f s; %d result rows; qc-worker %s)\n",
                 name, t / n, n, t, rows, args;
                 printf "            all runs: %d slides on the GPU, %d on CPU slots; qc-submit used %.2f s user + %.2f s system (last run)\n",
                 g, c, u[1], u[2] }'
    [ -z "${OUT:-}" ] || cp "$T/worker-$name.log" "$OUT/cohort-worker-$name.log"
}
echo "cohort of $n links to $slide, ${QC_COHORT_CONFIG:-default config}, best of $repeat, $cores cores:"
# shellcheck disable=SC2086
shape gpu-lane --slots 0 $lane
shape cpu-all --slots "$cores"
# shellcheck disable=SC2086
shape both --slots "$cores" $lane
# shellcheck disable=SC2086
shape default $lane
