#!/bin/bash
# Packs what tests/bench/gpu_lease.sh needs on a lent GPU machine, which
# has CUDA but none of this project's Debian libraries and no network:
# the programs built here (built by it, with nvcc; nvJPEG is
# the GPU machine's own, loaded at run time), the shared
# libraries they load (glibc and the C++ runtime excepted: the GPU
# machine's are newer), the textures qc-mkslide paints with and the real
# slides test_cuda_equiv reads; the broker, worker and client and the odd
# slides for tests/integration/test_gpu_worker.sh. Unpacked in the repository root there, it
# gives build/ and bin/ their programs, .devlib the libraries and
# .devdata the test data (QC_SHARED_DIR). One xz archive, .devcarry/pack.tar.xz,
# because the device tool carries at most 64 MiB and the libraries alone
# are ~50 MB unpacked. .devcarry is git-ignored through .git/info/exclude.
#   tests/bench/gpu_pack.sh        then carry .devcarry (tests/bench/README.md)
set -eu
cd "$(dirname "$0")/../.."
shared=${QC_SHARED_DIR:-../shared}
bins=(build/tests/test_cuda_equiv build/tests/test_nvjpeg_load build/bench/bench_gpu bin/qc-mkslide
      bin/qc-broker bin/qc-worker bin/qc-submit)
# built here, by their own targets (make bench and make test-unit would
# also run the benches and the tests)
make -s -j"$(nproc)" all "${bins[@]}"
for b in "${bins[@]}"; do
    if [ ! -x "$b" ]; then
        echo "gpu_pack: $b was not built" >&2
        exit 1
    fi
done
mkdir -p .git/info
for d in /.devcarry/ /.devlib/ /.devdata/; do
    grep -qxF "$d" .git/info/exclude 2>/dev/null || echo "$d" >>.git/info/exclude
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/.devlib" "$stage/.devdata/slides" "$stage/build/tests" "$stage/build/bench" "$stage/bin"
for b in "${bins[@]}"; do
    cp "$b" "$stage/$b"
done
# the libraries the programs load, by the paths ldd resolves here
ldd "${bins[@]}" | awk '$3 ~ /^\// { print $3 }' | sort -u |
    grep -vE '/(libc|libm|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$stage/.devlib/"; done
cp -r "$shared/textures" "$stage/.devdata/"
cp -r "$shared/slides/real" "$shared/slides/odd" "$stage/.devdata/slides/"
mkdir -p .devcarry
tar -C "$stage" -cJf .devcarry/pack.tar.xz .
du -h .devcarry/pack.tar.xz
