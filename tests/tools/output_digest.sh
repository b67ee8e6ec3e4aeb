#!/bin/sh
# Digest of what the QC pipeline writes, to show that a change that should
# not change behaviour (a move, a rename, a new seam) changed nothing.
#
#     sh tests/tools/output_digest.sh [WORKDIR]     (from the repository root,
#                                                   after `make`)
#
# Runs bin/qc-submit in one-process mode (no --broker) over the real slides
# (../shared/slides/real), the odd ones (../shared/slides/odd) and a few
# generated slides (bin/qc-mkslide, several seeds, sizes and features),
# under several configs derived from the built-in one, each both with the
# direct TIFF reader and with QC_DIRECT_READ=0 (everything through
# OpenSlide). For each run it lists:
#   - results.tsv's #dataset: line and its rows, sorted (the other header
#     lines carry the time and the command line);
#   - the SHA-256 of every PNG's bytes (stricter than the decoded pixels:
#     the encoder is deterministic, so equal pixels give equal bytes);
#   - error.log's lines, sorted, with the repository's path replaced.
# The listing goes to WORKDIR/digest.txt (default build/digest) and its
# SHA-256 is printed last: two commits behave the same on this machine
# when the two listings are the same (diff them to see where not).
# Generated slides are kept in WORKDIR/slides and reused (qc-mkslide is
# deterministic: same options, same bytes). Only meaningful between runs
# on one machine (OpenSlide, libjpeg and libpng versions take part).
set -eu

ROOT=$(pwd)
[ -x bin/qc-submit ] && [ -x bin/qc-mkslide ] || {
    echo "output_digest: run from the repository root after make" >&2
    exit 2
}
WORK=${1:-build/digest}
SHARED=${QC_SHARED_DIR:-../shared}
mkdir -p "$WORK/slides"
WORK=$(cd "$WORK" && pwd)
SLIDES=$WORK/slides

# seed width height extra options
gen() {
    out=$SLIDES/gen-$1-$2x$3$4.svs
    out=$(echo "$out" | tr ' ,' '_+')
    if [ ! -s "$out" ]; then
        # shellcheck disable=SC2086
        bin/qc-mkslide -o "$out.tmp" --seed "$1" --width "$2" --height "$3" \
            --threads 2 $4 >/dev/null && mv "$out.tmp" "$out"
    fi
    echo "$out"
}
GEN="$(gen 3 16000 12000 '--blur-sigma 60')
$(gen 7 8000 6000 '--features all,-pen')
$(gen 11 12000 9000 '--blur-sigma 60 --features tissue,pen,bubble')
$(gen 5 6000 4500 '--features none')
$(gen 13 40000 30000 '')"

CONFIGS=$WORK/configs
mkdir -p "$WORK/out"
mkdir -p "$CONFIGS"
bin/qc-submit --write-default-config "$CONFIGS/default.ini"
# PIL's thumbnail shrink instead of the area average, and a base
# magnification for the slides that have none (boxes.tiff then reaches
# its unreliable levels)
sed -e '/^image_resample = area$/d' -e 's/^#base_mag = 40$/base_mag = 20/' \
    "$CONFIGS/default.ini" > "$CONFIGS/pil_basemag.ini"
# every step at a level (2) and at a longer side in pixels (1000)
sed -e 's/^image_work_size = .*/image_work_size = 2/' \
    "$CONFIGS/default.ini" > "$CONFIGS/level2.ini"
sed -e 's/^image_work_size = .*/image_work_size = 1000/' \
    -e '/^image_resample = area$/d' \
    "$CONFIGS/default.ini" > "$CONFIGS/dim1000.ini"
# a 10x read of the 40,000 x 30,000 slide is larger than one
# openslide_read_region takes (2^26 pixels): the band reader
cat > "$CONFIGS/bands10x.ini" <<'EOF'
[pipeline]
steps = BasicModule.getBasicStats
  LightDarkModule.getIntensityThresholdPercent:tissue
  SaveModule.saveFinalMask
[BaseImage.BaseImage]
image_work_size = 10x
image_resample = area
[BasicModule.getBasicStats]
image_work_size = 10x
[LightDarkModule.getIntensityThresholdPercent:tissue]
name: bright
upper_threshold: .9
lower_std: 10
[SaveModule.saveFinalMask]
use_mask: True
EOF

# run NAME CONFIG SLIDE...: one qc-submit run, its listing on stdout
run() {
    name=$1 config=$2
    shift 2
    out=$WORK/out/$name
    rm -rf "$out"
    bin/qc-submit -q --workers 2 -c "$config" -o "$out" "$@" \
        >"$WORK/$name.stdout" 2>&1 || true
    echo "== $name"
    grep -v '^#' "$out/results.tsv" | LC_ALL=C sort
    grep '^#dataset:' "$out/results.tsv" || true
    (cd "$out" && find . -name '*.png' | LC_ALL=C sort | xargs -r sha256sum)
    if [ -f "$out/error.log" ]; then
        sed "s#$ROOT/##g; s#$WORK/##g" "$out/error.log" | LC_ALL=C sort
    fi
}

REAL="$SHARED/slides/real"
ODD="$SHARED/slides/odd"
BIG=$(echo "$GEN" | tail -n 1)
SMALLGEN=$(echo "$GEN" | head -n 4)
{
    for direct in 1 0; do
        export QC_DIRECT_READ=$direct
        # shellcheck disable=SC2086
        run "default-direct$direct" "$CONFIGS/default.ini" "$REAL" "$ODD" $SMALLGEN
        run "pil_basemag-direct$direct" "$CONFIGS/pil_basemag.ini" "$REAL" "$ODD" $SMALLGEN
        run "level2-direct$direct" "$CONFIGS/level2.ini" "$REAL" "$ODD"
        run "dim1000-direct$direct" "$CONFIGS/dim1000.ini" "$REAL" "$ODD"
        run "bands10x-direct$direct" "$CONFIGS/bands10x.ini" "$BIG"
    done
} > "$WORK/digest.txt"
echo "$(wc -l < "$WORK/digest.txt") lines in $WORK/digest.txt"
sha256sum "$WORK/digest.txt" | cut -d' ' -f1
