#!/bin/bash
# A rerun into a folder whose results came from another config is
# refused (one results.tsv must not mix two configs' rows); it said
# "another config" and no more, and a changed example image (its bytes:
# the config file unchanged) left a lab nothing to look for. It now says
# what differs: the values, the steps and the files by name. Nothing in
# the folder is touched.
. "$(dirname "$0")/lib.sh"

S=$SHARED/slides/real/CMU-1-Small-Region.svs
EX=$ROOT/kernels/classify/examples
mkdir -p "$T/cfg"
cp "$EX/pen_markings_1.png" "$T/cfg/pen.png"
cp "$EX/pen_markings_1_mask.png" "$T/cfg/pen_mask.png"
"$BIN/qc-submit" --write-default-config "$T/cfg/default.ini" >/dev/null 2>&1 \
    || fail "--write-default-config"
grep -q '^examples: builtin/pen_markings_1.png:builtin/pen_markings_1_mask.png$' "$T/cfg/default.ini" \
    || fail "the default config's pen examples line is not what this test edits"
sed "s#^examples: builtin/pen_markings_1.png:builtin/pen_markings_1_mask.png\$#examples: $T/cfg/pen.png:$T/cfg/pen_mask.png#" \
    "$T/cfg/default.ini" >"$T/cfg/lab.ini"
"$BIN/qc-submit" -q -c "$T/cfg/lab.ini" -o "$T/out" "$S" >"$T/run1.log" 2>&1 \
    || fail "run 1: $(tail -3 "$T/run1.log")"
snapshot() { (cd "$T/out" && find . -type f ! -name .qc-lock -exec sha256sum {} + | sort); }
snapshot >"$T/before"

# the example image's bytes change (a lab re-drew the pen mask's image)
printf 'another scan' >>"$T/cfg/pen.png"
old=$(sha256sum "$EX/pen_markings_1.png" | cut -c1-8)
new=$(sha256sum "$T/cfg/pen.png" | cut -c1-8)
"$BIN/qc-submit" -q -c "$T/cfg/lab.ini" -o "$T/out" "$S" >"$T/run2.log" 2>&1
[ $? -eq 2 ] || fail "a changed example image: exit not 2: $(cat "$T/run2.log")"
grep -q "has results of another config ($T/cfg/lab.ini; .*It differs in: \[ClassificationModule.byExampleWithFeatures:pen_markings\] examples: pen.png changed (sha256 $old... -> $new...)\. Write into another folder" \
    "$T/run2.log" || fail "the changed file is not named: $(cat "$T/run2.log")"
pass "a changed example image is named, with both hashes"

# a value and a step: the step changes the columns, so that message says it too
cp "$EX/pen_markings_1.png" "$T/cfg/pen.png"
sed -e 's/^upper_threshold: .9$/upper_threshold: .85/' "$T/cfg/lab.ini" >"$T/cfg/value.ini"
grep -q '^upper_threshold: .85$' "$T/cfg/value.ini" || fail "the tissue threshold line is not what this test edits"
"$BIN/qc-submit" -q -c "$T/cfg/value.ini" -o "$T/out" "$S" >"$T/run3.log" 2>&1
[ $? -eq 2 ] || fail "a changed value: exit not 2: $(cat "$T/run3.log")"
grep -q "It differs in: \[LightDarkModule.getIntensityThresholdPercent:tissue\] upper_threshold: '.9' -> '.85'\. Write" \
    "$T/run3.log" || fail "the changed value is not said: $(cat "$T/run3.log")"
sed -e '/^    MorphologyModule.fillSmallHoles$/d' "$T/cfg/value.ini" >"$T/cfg/steps.ini"
"$BIN/qc-submit" -q -c "$T/cfg/steps.ini" -o "$T/out" "$S" >"$T/run4.log" 2>&1
[ $? -eq 2 ] || fail "a step left out: exit not 2: $(cat "$T/run4.log")"
grep -q "has other columns .*It differs in: \[pipeline\] steps: leaves out 'MorphologyModule.fillSmallHoles'; \[LightDarkModule.getIntensityThresholdPercent:tissue\] upper_threshold: '.9' -> '.85'\. Write" \
    "$T/run4.log" || fail "the step and value are not said: $(cat "$T/run4.log")"
pass "a changed value and a step left out are said"
snapshot | grep -v '\./qc\.log$' >"$T/after"
grep -v '\./qc\.log$' "$T/before" | diff - "$T/after" >/dev/null \
    || fail "the refused runs touched the folder: $(grep -v '\./qc\.log$' "$T/before" | diff - "$T/after")"
pass "the refused runs left the folder as it was (qc.log aside)"

# a comment added changes nothing: the same config, nothing to run
{ echo "# a lab's note"; cat "$T/cfg/lab.ini"; } >"$T/cfg/noted.ini"
"$BIN/qc-submit" -c "$T/cfg/noted.ini" -o "$T/out" "$S" >"$T/run5.log" 2>&1 \
    || fail "a comment added: $(cat "$T/run5.log")"
grep -q "already has this slide (passed): skipped" "$T/run5.log" || fail "run 5: $(cat "$T/run5.log")"
pass "a comment is not another config"
