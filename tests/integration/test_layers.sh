#!/bin/bash
# kernels/ is layered (kernels/README.md): tests/tools/check_layers.sh
# must pass on the tree, and must fail, naming the file, on copies of
# kernels/ broken on purpose: a lower layer including a higher one, two
# folders of one layer including each other, a new folder with no layer,
# and OpenSlide included outside kernels/slide/.
set -u
cd "$(dirname "$0")/../.." || exit 2
check=tests/tools/check_layers.sh
tmp=$(mktemp -d /tmp/test_layers.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$(sh "$check" 2>&1) || fail "the tree breaks its layers: $out"
echo "ok - the tree: $out"

# broken COPYNAME FILE TEXT WANT: a copy of kernels/ with TEXT appended
# to FILE (relative to kernels/) must fail with WANT in the output
broken() {
    local name=$1 file=$2 text=$3 want=$4
    mkdir -p "$tmp/$name"
    cp -r kernels "$tmp/$name/"
    mkdir -p "$(dirname "$tmp/$name/kernels/$file")"
    printf '%s\n' "$text" >> "$tmp/$name/kernels/$file"
    local got
    if got=$(sh "$check" "$tmp/$name" 2>&1); then
        fail "$name: the check passed: $got"
    fi
    grep -q -- "$want" <<<"$got" || fail "$name: '$want' not in: $got"
    echo "ok - $name: $(grep -- "$want" <<<"$got" | head -n 1)"
}

broken up image/image.c '#include "kernels/pipeline/pipeline.h"' \
    "kernels/image/image.c:.*only lower layers"
broken cpu-into-cuda ops/cpu/filter.c '#include "kernels/ops/cuda/cuda_ops.h"' \
    "kernels/ops/cpu/filter.c:.*only lower layers"
broken peers slide/slide.c '#include "kernels/classify/classify_model.h"' \
    "kernels/slide/slide.c:.*only lower layers"
broken new-folder focus/focus.c '#include "kernels/image/image.h"' \
    "kernels/focus: a folder with no layer"
broken openslide modules/save_macro.c '#include <openslide.h>' \
    "kernels/modules/save_macro.c: includes <openslide.h>"
echo "all layer checks passed"
