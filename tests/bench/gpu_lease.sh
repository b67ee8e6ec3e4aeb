#!/bin/bash
# The GPU checks of issue 18, as one call of the device tool (a lent GPU
# machine: CUDA, no network, none of our Debian libraries). Here first:
#     tests/bench/gpu_pack.sh
# then, through the device tool, from the repository root:
#     carry [".devcarry"], command "tests/bench/gpu_lease.sh"
# Stages, in this order, each under its own time limit so that one that
# hangs or crashes leaves the others their time (STAGES picks some:
# STAGES=nvjpeg,equiv,worker,full,memcheck,bench125,bench10x,bench10x4,cohort):
#   equiv     test_cuda_equiv: every op of both CUDA lanes against the CPU,
#             and the default pipeline on real and generated slides
#   worker    tests/integration/test_gpu_worker.sh: a real qc-worker --gpu 0
#             against a CPU worker through a real broker on loopback
#   full      tests/integration/test_gpu_memory_full.sh on GPU 0: slides
#             at 10x past --gpu-mem 64 run again on the copying lane
#   memcheck  compute-sanitizer memcheck (leaks too) on test_cuda_equiv
#             --quick (the ops and the real slides)
#   bench125  bench_gpu at 1.25x: CPU 1 core and all cores, both lanes
#   bench10x  bench_gpu at 10x: CPU on 8 cores (8 slides at once fill
#             ~74 GB; 16 would not fit), the resident lane, and its
#             per-step and per-op times (--gpu-steps)
#   bench10x4 the resident lane at 10x with 4 read threads (8 above)
#   cohort    tests/bench/gpu_cohort.sh: 48 links to the slide through a
#             real broker and a GPU-lane worker, an all-cores CPU worker
#             and one with both, measured end to end
#   cohort10x the same at 10x, 16 links: the lane alone and qc-worker
#             --gpu 0 with its default CPU slots
#   nvjpeg    the machine's nvjpeg.h against our declarations
#             (kernels/ops/cuda/nvjpeg_abi_check.cu, compiled with its
#             nvcc), its libnvjpeg and what that needs (ldd), and
#             test_nvjpeg_load loading it: before equiv, whose
#             op_decode_jpeg calls it (the programs load it at run time,
#             from the toolkit's lib64 when the loader's paths lack it)
#   decode    the resident lane without read ahead (bench_gpu
#             --no-read-ahead: its image read on its own thread, where
#             the tiles are decoded on the GPU),
#             1.25x and 10x, with each nvJPEG backend (QC_NVJPEG_BACKEND)
#             (QC_GPU_DECODE=1) and without (the CPU decodes, the default)
# The default stages' limits add up to 720 s (about 230 s were used on
# an H100 machine and on an H200 one; full's limit is 100 s since its
# slides grew): give the call timeout_s 600 (what comes back under $OUT
# comes back even when it runs out), and run cohort in a call of its own
# (STAGES=bench125,cohort: ~150 s). The full-size slide is generated in
# the background meanwhile. Logs go to $OUT (the device tool's folder that
# comes back), a summary last.
set -u
cd "$(dirname "$0")/../.." || exit 2
out=${OUT:-/tmp/qc-gpu-lease}
mkdir -p "$out" build/bench-data
tar -xJf .devcarry/pack.tar.xz || { echo "no .devcarry/pack.tar.xz: run tests/bench/gpu_pack.sh here and carry .devcarry" >&2; exit 2; }
export LD_LIBRARY_PATH=$PWD/.devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export QC_SHARED_DIR=$PWD/.devdata
sanitizer=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
smi=nvidia-smi
stages=",${STAGES:-nvjpeg,equiv,worker,full,memcheck,bench125,bench10x,bench10x4},"
summary=$out/summary.txt
: >"$summary"

$smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv |& tee -a "$summary"
echo "cpus: $(nproc), $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo)" | tee -a "$summary"

# stage NAME LIMIT_S COMMAND...: runs when STAGES names it; its output to
# $out/NAME.log and the console, its exit status and seconds to the summary
stage () {
    local name=$1 limit=$2
    shift 2
    case $stages in *",$name,"*) ;; *) return 0 ;; esac
    local t0=$SECONDS
    echo "== $name: $*"
    timeout --kill-after=10 "$limit" stdbuf -oL "$@" >"$out/$name.log" 2>&1
    local rc=$?
    tail -n 40 "$out/$name.log"
    echo "$name: exit $rc in $((SECONDS - t0)) s" | tee -a "$summary"
}

slide=build/bench-data/full-60000x45000.svs
gen_pid=
case $stages in
*bench*|*cohort*|*decode*)
    if [ ! -s "$slide" ]; then
        { bin/qc-mkslide -o "$slide.part" --width 60000 --height 45000 --seed 7 --threads 8 \
              >"$out/mkslide.log" 2>&1 && mv "$slide.part" "$slide"; } &
        gen_pid=$!
    fi
    ;;
esac

# nvJPEG: its header against ours, its library and what it loads
cuda=${CUDA_HOME:-/usr/local/cuda}
nvjpeg_check () {
    local h lib
    h=$(ls "$cuda"/include/nvjpeg.h "$cuda"/targets/x86_64-linux/include/nvjpeg.h 2>/dev/null | head -n 1)
    lib=$(ls "$cuda"/lib64/libnvjpeg.so.[0-9]* "$cuda"/targets/x86_64-linux/lib/libnvjpeg.so.[0-9]* 2>/dev/null | head -n 1)
    echo "header: ${h:-none}; library: ${lib:-none}"
    [ -n "$lib" ] && ldd "$lib"
    [ -n "$h" ] && "$cuda"/bin/nvcc -std=c++17 -I. -I"$(dirname "$h")" \
        -c kernels/ops/cuda/nvjpeg_abi_check.cu -o /tmp/nvjpeg_abi_check.o \
        && echo "ok - nvjpeg_api.h is $h's"
    build/tests/test_nvjpeg_load
}
export -f nvjpeg_check
export cuda
# a libnvjpeg outside the toolkit's folders (a Python package's, say): the
# programs look only there and in the loader's paths, so name it
if ! ls "$cuda"/lib64/libnvjpeg.so.[0-9]* "$cuda"/targets/x86_64-linux/lib/libnvjpeg.so.[0-9]* \
        >/dev/null 2>&1 && [ -z "${QC_NVJPEG_LIB:-}" ]; then
    other=$(timeout 30 find /usr /opt -name 'libnvjpeg.so.[0-9]*' 2>/dev/null | head -n 1)
    echo "no libnvjpeg in $cuda; elsewhere: ${other:-none}" | tee -a "$summary"
    [ -n "$other" ] && export QC_NVJPEG_LIB=$other
fi
stage nvjpeg 60 bash -c nvjpeg_check
stage equiv 100 build/tests/test_cuda_equiv
stage worker 60 bash tests/integration/test_gpu_worker.sh
stage full 100 env QC_TEST_GPU=0 bash tests/integration/test_gpu_memory_full.sh
stage memcheck 90 "$sanitizer" --tool memcheck --leak-check full --error-exitcode 9 \
    build/tests/test_cuda_equiv --quick
if [ -n "$gen_pid" ]; then
    t0=$SECONDS
    wait "$gen_pid"
    echo "slide: exit $? (waited $((SECONDS - t0)) s)" | tee -a "$summary"
fi
stage bench125 60 build/bench/bench_gpu --sizes 1.25x --repeat 3
stage bench10x 200 build/bench/bench_gpu --sizes 1.25x,10x --cores 8 --no-one-core \
    --lanes resident --repeat 2 --gpu-steps
stage bench10x4 50 build/bench/bench_gpu --sizes 10x --gpu-only --lanes resident \
    --repeat 1 --gpu-read-threads 4
stage cohort 200 bash tests/bench/gpu_cohort.sh "$slide" 48 2
# warnings shown: a backend refused, or tiles the host decoded after all
decode_bench () {
    for b in gpu hardware default; do
        echo "== QC_NVJPEG_BACKEND=$b"
        QC_GPU_DECODE=1 QC_LOG_LEVEL=warning QC_NVJPEG_BACKEND=$b build/bench/bench_gpu --sizes 1.25x,10x \
            --gpu-only --lanes resident --repeat 2 --no-read-ahead \
            || echo "== QC_NVJPEG_BACKEND=$b: exit $?"
    done
    echo "== QC_GPU_DECODE unset (the CPU decodes, on the lane's thread)"
    QC_LOG_LEVEL=warning build/bench/bench_gpu --sizes 1.25x,10x --gpu-only \
        --lanes resident --repeat 2 --no-read-ahead
}
export -f decode_bench      # timeout runs programs, not functions
stage decode 240 bash -c decode_bench
# at 10x (every image_work_size, PNGs at 1.25x): the lane alone and the
# default worker (its CPU slots beside the lane)
case $stages in *,cohort10x,*)
    bin/qc-submit --write-default-config build/bench-data/default-10x.ini >/dev/null 2>&1
    sed -i -e 's/^image_work_size\( *[:=] *\)1.25x$/image_work_size\110x/' \
        -e 's/^#png_work_size = 1.25x$/png_work_size = 1.25x/' build/bench-data/default-10x.ini ;;
esac
stage cohort10x 150 env QC_COHORT_CONFIG=build/bench-data/default-10x.ini \
    QC_COHORT_SHAPES="gpu-lane default" bash tests/bench/gpu_cohort.sh "$slide" 16 1
grep -hE "PASS|FAIL|^ok - |nvJPEG|device memory|^== QC_|are decoded|ERROR SUMMARY|LEAK SUMMARY|per slide|copies per slide|^at |tiles read ahead|image at image_work_size: level|png_queue|^cohort of|^  (gpu-lane|cpu-all|both|default) " \
    "$out"/nvjpeg.log "$out"/equiv.log "$out"/worker.log "$out"/full.log "$out"/memcheck.log "$out"/bench125.log "$out"/bench10x.log "$out"/bench10x4.log \
    "$out"/cohort.log "$out"/cohort10x.log "$out"/decode.log 2>/dev/null \
    >>"$summary"
echo "==== summary"
cat "$summary"
