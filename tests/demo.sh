#!/bin/bash
# The main job on one machine: generate a small cohort of synthetic 40x
# slides (with pen, blur, bubbles, folds and a coverslip edge), add the
# real slides of ../shared/slides/real when they are there, and QC them
# all with qc-submit's one-process default. Output: out/demo/.
set -eu
cd "$(dirname "$0")/.."
cohort=out/demo-cohort
mkdir -p "$cohort"
# --blur-sigma 60 (15 um at 40x): the coarse blur of a full-size slide
# (the generator's default on a slide this small blurs by 2 um); the
# generator's focus faults (1-3 um) are there too, and the default
# config's focus step finds both
for seed in 1 2 3 4 5 6; do
    [ -f "$cohort/synthetic-$seed.svs" ] || \
        bin/qc-mkslide -o "$cohort/synthetic-$seed.svs" --width 8000 --height 6000 \
            --seed $seed --blur-sigma 60
done
real=${QC_SHARED_DIR:-../shared}/slides/real
extra=()
[ -d "$real" ] && extra=("$real")
rc=0
bin/qc-submit -o out/demo "$cohort" "${extra[@]}" || rc=$?
echo "results: out/demo/results.tsv (exit code $rc: 0 all passed, 1 some failed)"
# a failed slide is a finding, not a failure of the demo: among the real
# slides, TCGA-CR-7395-01A-01-TS1.svs records no magnification, so a
# '1.25x' work size cannot be read from it (HistoQC fails it too)
if [ $rc -eq 1 ]; then
    n=$(wc -l <out/demo/error.log)
    echo "the demo ran; $n slide(s) failed QC, each with its reason in out/demo/error.log:"
    cut -f2 out/demo/error.log | cut -c1-400 | sed 's/^/  /'
fi
[ $rc -le 1 ]
