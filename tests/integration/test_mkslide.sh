#!/bin/bash
# Sweeps qc-mkslide over seeds, odd sizes and options, and checks each
# slide with OpenSlide's own command-line tools: it must open as vendor
# "aperio" with the expected level count, and its smallest level must
# decode. Catches shapes or sizes that only some seeds produce.
# Runs from the repository root (tests/run.sh does).
set -u
mk=bin/qc-mkslide
shared="${QC_SHARED_DIR:-$(cd .. && pwd)/shared}"
tmp=$(mktemp -d /tmp/test_mkslide_sh.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0; n=0

# Levels as qc-mkslide makes them: /4 (rounded up) while the longer side
# is over 1024.
levels() {
    local w=$1 h=$2 n=1
    while [ $(( w > h ? w : h )) -gt 1024 ]; do
        w=$(( (w + 3) / 4 )); h=$(( (h + 3) / 4 )); n=$((n + 1))
    done
    echo "$n $w $h"
}

check() {
    local name=$1 w=$2 h=$3; shift 3
    n=$((n + 1))
    local out="$tmp/$name.svs"
    if ! "$mk" -o "$out" --width "$w" --height "$h" --textures "$shared/textures" \
            --truth "$tmp" "$@" 2>"$tmp/err"; then
        echo "FAIL $name: qc-mkslide failed: $(cat "$tmp/err")"; fail=$((fail + 1)); return
    fi
    local props; props=$(openslide-show-properties "$out" 2>&1)
    read -r nl lw lh <<<"$(levels "$w" "$h")"
    if ! grep -q "^openslide.vendor: 'aperio'" <<<"$props"; then
        echo "FAIL $name: not read as aperio"; fail=$((fail + 1)); return
    fi
    if ! grep -q "^openslide.level-count: '$nl'" <<<"$props"; then
        echo "FAIL $name: expected $nl levels: $(grep level-count <<<"$props")"
        fail=$((fail + 1)); return
    fi
    if ! openslide-write-png "$out" 0 0 $((nl - 1)) "$lw" "$lh" "$tmp/$name.png" \
            2>"$tmp/err"; then
        echo "FAIL $name: lowest level does not decode: $(cat "$tmp/err")"
        fail=$((fail + 1)); return
    fi
    for f in tissue pen blur dark bubble edge focus pale usable; do
        if [ ! -s "$tmp/${name}_truth_$f.png" ]; then
            echo "FAIL $name: no $f truth mask"; fail=$((fail + 1)); return
        fi
    done
    rm -f "$out" "$tmp/$name.png" "$tmp/${name}"_truth*
}

for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
    check "seed$seed" 1600 1200 --seed "$seed"
done
check tiny 1 1
check small16 16 16
check odd 257 129 --seed 3
check tall 120 5000 --seed 4
check wide 6000 90 --seed 5
check tile240 3000 2000 --tile 240 --quality 30
check nomag 1200 900 --no-mag
check mag20 2500 2500 --mag 20
check bigtiff 900 700 --bigtiff
check glass 800 600 --features none
check notissue 800 600 --features all,-tissue
check onethread 2100 1300 --threads 1 --seed 77
check finefocus 2400 1800 --focus-sigma 4 --seed 9
check nofocus 1600 1200 --features all,-focus
check pale 1600 1200 --features all,pale --seed 6
check paletiny 40 30 --features tissue,pale --pale-factor 0.2
check palewide 6000 90 --features all,pale --seed 5
check palefocusall 1600 1200 --features all,pale --focus-all --seed 2

# an output folder that is not there is said first, before any work
# (its TIFF error came after the plan, easy to miss)
n=$((n + 1))
"$mk" -o "$tmp/none/x.svs" --width 800 --height 600 -v >"$tmp/none.log" 2>&1
rc=$?
if [ $rc -ne 2 ] || ! grep -q "^qc-mkslide: -o $tmp/none/x.svs: no such folder $tmp/none (make it first)$" "$tmp/none.log" \
    || [ "$(wc -l <"$tmp/none.log")" -ne 1 ]; then
    echo "FAIL a missing output folder: exit $rc: $(cat "$tmp/none.log")"; fail=$((fail + 1))
fi

echo "$n slides, $fail failed"
[ "$fail" -eq 0 ]
