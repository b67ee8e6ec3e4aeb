#!/bin/bash
# A rerun into a folder whose results came from another config is
# refused (one results.tsv must not mix two configs' rows); it said
# "another config" and no more, and a changed example image (its bytes:
# the config file unchanged) left a lab nothing to look for. It now says
# what differs: the values, the steps and the files by name. Nothing in
# the folder is touched. A config of the same values (a comment added,
# spacing, a key's case, indentation, the order of sections) is the same
# config, and the folder keeps its record (.qc-config) of the one its
# results were made with.
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
# refused NAME CONFIG SAYS: a rerun into the folder with CONFIG exits 2
# and says SAYS (a grep pattern); its output in $T/NAME.log
refused() {
    "$BIN/qc-submit" -q -c "$2" -o "$T/out" "$S" >"$T/$1.log" 2>&1
    [ $? -eq 2 ] || fail "$1: exit not 2: $(cat "$T/$1.log")"
    grep -q "$3" "$T/$1.log" || fail "$1: not said as it should be: $(cat "$T/$1.log")"
}
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
refused run3 "$T/cfg/value.ini" \
    "It differs in: \[LightDarkModule.getIntensityThresholdPercent:tissue\] upper_threshold: '.9' -> '.85'\. Write"
sed -e '/^    MorphologyModule.fillSmallHoles$/d' "$T/cfg/value.ini" >"$T/cfg/steps.ini"
refused run4 "$T/cfg/steps.ini" \
    "has other columns (65) than this config gives (61); not this config's: small_tissue_filled_num_regions, .*: it was written with another config\. It differs in: \[pipeline\] steps: leaves out 'MorphologyModule.fillSmallHoles'; \[LightDarkModule.getIntensityThresholdPercent:tissue\] upper_threshold: '.9' -> '.85'\. Write"
pass "a changed value and a step left out are said"
# the same config, its header edited (a column cut out in a
# spreadsheet): said so, not "another config" beside "the same values"
cp "$T/out/results.tsv" "$T/results.keep"
awk -F'\t' -v OFS='\t' '/^#dataset:/ || !/^#/ {$3 = ""; sub(/\t\t/, "\t")} {print}' \
    "$T/results.keep" >"$T/out/results.tsv"
refused run4b "$T/cfg/lab.ini" \
    "results.tsv has other columns (64) than this config gives (65); missing: [a-z_]*, yet the folder records this same config (.qc-config): its header was edited"
cp "$T/results.keep" "$T/out/results.tsv"
pass "a results.tsv whose header lost a column, with the same config: said as an edit, the column named"
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
record_kept() { snapshot | grep '\./\.qc-config$' | cmp -s - <(grep '\./\.qc-config$' "$T/before"); }
record_kept || fail "a rerun of the same config under another name rewrote .qc-config: $(head -2 "$T/out/.qc-config")"
grep -q "^config_file $T/cfg/lab.ini$" "$T/out/.qc-config" \
    || fail ".qc-config no longer names the config the results were made with: $(sed -n 2p "$T/out/.qc-config")"
pass "the folder's record stays the config its results were made with"

# laid out anew: spacing around '=', a key's case, a step indented with
# a tab, [pipeline] moved last: the same values, the same config (it was
# refused, told that the two parse the same)
sed -e 's/^upper_threshold: .9$/UPPER_threshold   =   .9/' \
    -e 's/^    MorphologyModule.fillSmallHoles$/\tMorphologyModule.fillSmallHoles/' \
    "$T/cfg/lab.ini" >"$T/cfg/tidy0.ini"
awk '/^\[/ { sec = $0 } sec == "[pipeline]" { p = p $0 "\n"; next } { print } END { printf "%s", p }' \
    "$T/cfg/tidy0.ini" >"$T/cfg/tidy.ini"
grep -q '^UPPER_threshold   =   .9$' "$T/cfg/tidy.ini" && grep -q "^$(printf '\t')MorphologyModule.fillSmallHoles$" "$T/cfg/tidy.ini" \
    && [ "$(grep '^\[' "$T/cfg/tidy.ini" | tail -1)" = "[pipeline]" ] \
    || fail "the tidied config is not laid out as this test means"
"$BIN/qc-submit" -c "$T/cfg/tidy.ini" -o "$T/out" "$S" >"$T/run6.log" 2>&1 \
    || fail "a config laid out anew was refused: $(cat "$T/run6.log")"
grep -q "already has this slide (passed): skipped" "$T/run6.log" || fail "run 6: $(cat "$T/run6.log")"
grep -q "config $T/cfg/tidy.ini: the values of the config this folder's results were made with ($T/cfg/lab.ini; .*its record, .qc-config, is kept" \
    "$T/out/qc.log" || fail "qc.log does not say the config was taken as the same: $(tail -3 "$T/out/qc.log")"
record_kept || fail "run 6 rewrote .qc-config: $(head -2 "$T/out/.qc-config")"
# the run's line names the sha256 whose text .qc-config holds, as well
# as the tidied one's (whose text is nowhere in the folder)
kept_id=$(sed -n '1s/^sha256 //p' "$T/out/.qc-config")
[ -n "$kept_id" ] || fail "no sha256 in .qc-config: $(head -1 "$T/out/.qc-config")"
grep "qc-submit had nothing to run" "$T/out/qc.log" | tail -1 \
    | grep -q "config $T/cfg/tidy.ini, sha256 [0-9a-f]\{64\}, the same values as .qc-config's, sha256 $kept_id;" \
    || fail "qc.log's line for run 6 does not name the kept record: $(grep 'qc-submit had nothing' "$T/out/qc.log" | tail -1)"
# and a value changed in the tidied one is still another config
sed -e 's/^UPPER_threshold   =   .9$/UPPER_threshold   =   .85/' "$T/cfg/tidy.ini" >"$T/cfg/tidy85.ini"
refused run7 "$T/cfg/tidy85.ini" \
    "It differs in: \[LightDarkModule.getIntensityThresholdPercent:tissue\] upper_threshold: '.9' -> '.85'\. Write"
pass "spacing, a key's case, indentation and the order of sections are not another config; a value is"

# a folder that lost its .qc-config (copied by a shell glob, which
# leaves dot files out) whose results.tsv names the built-in config:
# a config of other values was let in with a warning beside the
# built-in's rows; that config's text is known, so it is refused, and
# the built-in config itself (or a copy of it) goes on
"$BIN/qc-submit" -q -o "$T/lost" "$S" >"$T/lost1.log" 2>&1 || fail "lost run 1: $(cat "$T/lost1.log")"
rm "$T/lost/.qc-config"
sed -e 's/^upper_threshold: .9$/upper_threshold: .85/' "$T/cfg/default.ini" >"$T/cfg/default85.ini"
"$BIN/qc-submit" -q -c "$T/cfg/default85.ini" -o "$T/lost" "$S" >"$T/lost2.log" 2>&1
[ $? -eq 2 ] || fail "a config of other values, into a folder of the built-in config's rows without .qc-config: exit not 2: $(cat "$T/lost2.log")"
grep -q "has no .qc-config (.*but its results.tsv names qc-submit's built-in config, and this config ($T/cfg/default85.ini) differs from it in: \[LightDarkModule.getIntensityThresholdPercent:tissue\] upper_threshold: '.9' -> '.85'\. .*give -f" \
    "$T/lost2.log" || fail "the refusal does not say what differs: $(cat "$T/lost2.log")"
[ ! -e "$T/lost/.qc-config" ] || fail "a refused run wrote .qc-config"
"$BIN/qc-submit" -q -c "$T/cfg/default.ini" -o "$T/lost" "$S" >"$T/lost3.log" 2>&1 \
    || fail "a copy of the built-in config was refused: $(cat "$T/lost3.log")"
grep -q "had no .qc-config .*names the built-in config, whose values this config ($T/cfg/default.ini) gives: recorded again" \
    "$T/lost/qc.log" || fail "qc.log does not say the record was made again: $(tail -2 "$T/lost/qc.log")"
[ -s "$T/lost/.qc-config" ] || fail "the record was not made again"
rm "$T/lost/.qc-config"
"$BIN/qc-submit" -q -f -c "$T/cfg/default85.ini" -o "$T/lost" "$S" >"$T/lost4.log" 2>&1 \
    || fail "-f with another config was refused: $(cat "$T/lost4.log")"
[ -s "$T/lost/results.tsv.1" ] && [ "$(grep -vc '^#' "$T/lost/results.tsv")" = 1 ] \
    || fail "-f did not start results.tsv afresh, keeping the old one: $(ls -a "$T/lost")"
grep -q '^upper_threshold: .85$' "$T/lost/.qc-config" || fail "-f did not record the new config"
pass "a folder that lost .qc-config but names the built-in config is checked against it"

# ... only where its rows are this build's (qc.log names the builds that
# ran into it): an older build's built-in config had other values, so
# its own copy was refused and today's let in as "the same". There the
# warning of a config not known stands, and nothing is claimed
"$BIN/qc-submit" -q -o "$T/older" "$S" >"$T/older1.log" 2>&1 || fail "older run 1: $(cat "$T/older1.log")"
rm "$T/older/.qc-config"
sed -i 's/(build [^;]*;/(build 0.0.9+0123abcd;/' "$T/older/qc.log"
"$BIN/qc-submit" -c "$T/cfg/default85.ini" -o "$T/older" "$S" >"$T/older2.log" 2>&1 \
    || fail "an older build's folder was refused: $(cat "$T/older2.log")"
grep -q "warning: $T/older holds results whose config it does not record" "$T/older2.log" \
    || fail "an older build's folder: no warning: $(cat "$T/older2.log")"
grep -q "recorded again" "$T/older/qc.log" && fail "an older build's rows were said to be of this config"
pass "... not a folder of an older build's rows (its built-in config had other values): warned of, as before"
