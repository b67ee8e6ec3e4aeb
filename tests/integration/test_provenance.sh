#!/bin/bash
# What an auditor can tell from an output folder alone (a lab validating
# its QC, CAP/CLIA or ISO 15189, must trace any row later): qc.log's line
# for each run of qc-submit into the folder names qc-submit's build and
# the config's identity (the sha256 .qc-config records, with its text),
# so that rows of runs made with other builds or, after -f, another
# config, are told apart. One-process mode.
. "$(dirname "$0")/lib.sh"

R=$SHARED/slides/real
mkdir -p "$T/c"
ln -s "$R/CMU-1-Small-Region.svs" "$T/c/one.svs"
ln -s "$R/CMU-1-Small-Region-pyramid.svs" "$T/c/two.svs"
build=$("$BIN/qc-submit" --version | awk '{print $2}')
[ -n "$build" ] || fail "qc-submit --version: no build"

"$BIN/qc-submit" -q -w 1 -o "$T/out" "$T/c/one.svs" >"$T/r1.log" 2>&1 || fail "first run: $(cat "$T/r1.log")"
id1=$(sed -n '1s/^sha256 //p' "$T/out/.qc-config")
[ ${#id1} -eq 64 ] || fail ".qc-config: no sha256: $(head -2 "$T/out/.qc-config")"
grep -q "	qc-submit started: job 1, 1 slide to send, 0 not readable here (build $build; times local, UTC[-+][0-9]\{4\}; config default, sha256 $id1; command line: " "$T/out/qc.log" \
    || fail "qc.log's start line names no build or config: $(grep started "$T/out/qc.log")"
pass "qc.log's start line names qc-submit's build ($build) and the config's sha256"

# a rerun with another config (-f): its start line names the new config
"$BIN/qc-submit" --write-default-config "$T/d.ini" || fail "--write-default-config"
sed 's/^upper_threshold: \.9$/upper_threshold: .8/' "$T/d.ini" >"$T/d2.ini"
cmp -s "$T/d.ini" "$T/d2.ini" && fail "the test's config edit changed nothing"
"$BIN/qc-submit" -q -w 1 -f -c "$T/d2.ini" -o "$T/out" "$T/c/one.svs" "$T/c/two.svs" >"$T/r2.log" 2>&1 \
    || fail "-f with another config: $(cat "$T/r2.log")"
id2=$(sed -n '1s/^sha256 //p' "$T/out/.qc-config")
[ ${#id2} -eq 64 ] && [ "$id2" != "$id1" ] || fail ".qc-config after -f: $id2 (was $id1)"
[ "$(grep -c '	qc-submit started: ' "$T/out/qc.log")" -eq 2 ] || fail "qc.log: not two start lines"
grep '	qc-submit started: ' "$T/out/qc.log" | tail -1 \
    | grep -q "(build $build; times local, UTC[-+][0-9]\{4\}; config $T/d2.ini, sha256 $id2; command line: " \
    || fail "the -f run's start line: $(grep started "$T/out/qc.log" | tail -1)"
pass "after -f with another config, qc.log's new start line names that config's sha256"

# -f with another config keeps the old results.tsv as .1: the config its
# rows were made with is kept beside it as .qc-config.1, whole
[ -f "$T/out/results.tsv.1" ] || fail "the first config's results.tsv not kept as .1"
[ -f "$T/out/.qc-config.1" ] || fail "the first config's .qc-config not kept as .qc-config.1: $(ls -a "$T/out")"
[ "$(sed -n '1s/^sha256 //p' "$T/out/.qc-config.1")" = "$id1" ] \
    || fail ".qc-config.1 is not the first config's: $(head -2 "$T/out/.qc-config.1")"
grep -q '^config_file default$' "$T/out/.qc-config.1" || fail ".qc-config.1: $(head -2 "$T/out/.qc-config.1")"
grep -q '^upper_threshold: \.9$' "$T/out/.qc-config.1" || fail ".qc-config.1 lacks the first config's text"
grep -q '^upper_threshold: \.8$' "$T/out/.qc-config" || fail ".qc-config lacks the new config's text"
# and once more: results.tsv.2 beside .qc-config.2 (the second config's)
"$BIN/qc-submit" -q -w 1 -f -c "$T/d.ini" -o "$T/out" "$T/c/one.svs" >"$T/r3.log" 2>&1 \
    || fail "-f back to the first config: $(cat "$T/r3.log")"
[ -f "$T/out/results.tsv.2" ] && [ "$(sed -n '1s/^sha256 //p' "$T/out/.qc-config.2")" = "$id2" ] \
    || fail "results.tsv.2's config not kept as .qc-config.2: $(ls -a "$T/out")"
[ "$(sed -n '1s/^sha256 //p' "$T/out/.qc-config.1")" = "$id1" ] || fail ".qc-config.1 changed"
# a rerun of the same config that only drops rows (-f) keeps no config
"$BIN/qc-submit" -q -w 1 -f -c "$T/d.ini" -o "$T/out" "$T/c/one.svs" >"$T/r4.log" 2>&1 \
    || fail "-f, same config: $(cat "$T/r4.log")"
[ -f "$T/out/results.tsv.3" ] && [ ! -e "$T/out/.qc-config.3" ] \
    || fail "-f with the same config: $(ls -a "$T/out")"
pass "-f with another config keeps the old config as .qc-config.N beside results.tsv.N"

# the focus step's numbers depend on how its blocks were measured (JPEG
# coefficients by the direct reader, or decoded pixels: QC_DIRECT_READ=0,
# OpenSlide's formats, a tile the direct reader gave up on): close, not
# equal, so the same slide's blurry_* columns may differ; qc.log says which
for e in 1 0; do
    QC_DIRECT_READ=$e "$BIN/qc-submit" -q -w 1 -o "$T/dr$e" "$T/c/two.svs" >"$T/dr$e.log" 2>&1 \
        || fail "QC_DIRECT_READ=$e: $(cat "$T/dr$e.log")"
done
grep -q "	two.svs	BlurDetectionModule.identifyFocusFaults	the tissue's median detail: .*(level 1, 10x, band 5; measured from JPEG coefficients (direct TIFF))" "$T/dr1/qc.log" \
    || fail "the focus line does not say it measured JPEG coefficients: $(grep 'median detail' "$T/dr1/qc.log")"
grep -q "	two.svs	BlurDetectionModule.identifyFocusFaults	the tissue's median detail: .*(level 1, 10x, band 5; measured from pixels)" "$T/dr0/qc.log" \
    || fail "the focus line does not say it measured pixels: $(grep 'median detail' "$T/dr0/qc.log")"
pass "qc.log's focus line says how the blocks were measured (coefficients, or pixels with QC_DIRECT_READ=0)"

# the times in qc.log and #start_time are local: the start line says the
# offset from UTC they are in
TZ=EST5 "$BIN/qc-submit" -q -w 1 -o "$T/tz" "$T/c/one.svs" >"$T/tz.log" 2>&1 || fail "TZ=EST5: $(cat "$T/tz.log")"
grep -q "	qc-submit started: .*; times local, UTC-0500; " "$T/tz/qc.log" \
    || fail "the start line does not say the time zone: $(grep started "$T/tz/qc.log")"
pass "qc.log's start line says the offset from UTC of the folder's times"
