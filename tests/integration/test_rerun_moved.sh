#!/bin/bash
# A folder of slides moved (archived) after its QC: the same command on
# the new place runs nothing, the records standing (the same file name,
# size and modification time as their .qc-stamps lines, the recorded
# files gone); it ran the whole cohort again under new names
# (arch__a.svs), each slide twice in results.tsv. A file of that name
# whose size differs, or a recorded file still there (a copy, not a
# move), is a slide of its own, as before. (A copy of a moved folder
# matches the gone record too: taken as recorded.)
. "$(dirname "$0")/lib.sh"

cfg=$T/cheap.ini
cheap_config "$cfg"
mkdir -p "$T/inc"
for n in a b c; do cp "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/inc/$n.svs"; done
out=$T/out
"$BIN/qc-submit" -c "$cfg" -o "$out" "$T/inc" >"$T/r1.log" 2>&1 || fail "first run: $(tail -3 "$T/r1.log")"
mv "$T/inc" "$T/arch"
# c.svs rescanned in its new place: another file of the same name
printf 'x' >>"$T/arch/c.svs"
"$BIN/qc-submit" -c "$cfg" -o "$out" "$T/arch" >"$T/r2.log" 2>&1 || fail "second run: $(tail -3 "$T/r2.log")"
grep -q "^2 of them were moved from where their records say (the same file name, size and modification time; the recorded file gone): taken as recorded" \
    "$T/r2.log" || fail "the moved slides not said: $(cat "$T/r2.log")"
grep -q "running 1 of 3 slides" "$T/r2.log" || fail "not c.svs alone ran: $(cat "$T/r2.log")"
[ "$(grep -vc '^#' "$out/results.tsv")" = 4 ] || fail "rows: $(grep -v '^#' "$out/results.tsv" | cut -f1)"
grep -q "arch/a.svs: the slide recorded as $T/inc/a.svs, which is gone" "$out/qc.log" \
    || fail "qc.log does not name the move"
pass "slides moved since their QC: the records stand, said; a rescanned one of the same name runs"
"$BIN/qc-submit" -c "$cfg" -o "$out" "$T/arch" >"$T/r3.log" 2>&1 || fail "third run: $(tail -3 "$T/r3.log")"
grep -q "^nothing to run" "$T/r3.log" || fail "the third run ran slides: $(cat "$T/r3.log")"
# a copy, not a move (the recorded files still there): its slides are
# slides of their own
mkdir -p "$T/orig"
cp -p "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/orig/a.svs"
"$BIN/qc-submit" -c "$cfg" -o "$T/out2" "$T/orig" >"$T/r4.log" 2>&1 || fail "orig run: $(tail -3 "$T/r4.log")"
cp -a "$T/orig" "$T/dup"
"$BIN/qc-submit" -c "$cfg" -o "$T/out2" "$T/dup" >"$T/r5.log" 2>&1 || fail "copy run: $(tail -3 "$T/r5.log")"
grep -q "^1 slide: 1 passed" "$T/r5.log" && ! grep -q "moved from" "$T/r5.log" \
    || fail "the copy did not run as a slide of its own: $(cat "$T/r5.log")"
pass "the same again runs nothing; a copy whose original is still there runs as a slide of its own"
# the moved folder and a copy of it, both given: one takes the gone
# record, the other is a slide of its own (both were "already done",
# with one row between them)
mkdir -p "$T/one"
cp -p "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/one/x.svs"
"$BIN/qc-submit" -c "$cfg" -o "$T/out3" "$T/one/x.svs" >"$T/r6.log" 2>&1 || fail "one run: $(tail -3 "$T/r6.log")"
mv "$T/one" "$T/moved"
cp -a "$T/moved" "$T/copy"
"$BIN/qc-submit" -c "$cfg" -o "$T/out3" "$T/moved/x.svs" "$T/copy/x.svs" >"$T/r7.log" 2>&1 \
    || fail "moved and copy: $(tail -3 "$T/r7.log")"
grep -q "^1 of them was moved from where its record says" "$T/r7.log" && grep -q "running 1 of 2 slides" "$T/r7.log" \
    || fail "the moved folder and its copy: $(cat "$T/r7.log")"
[ "$(grep -vc '^#' "$T/out3/results.tsv")" = 2 ] || fail "rows: $(grep -v '^#' "$T/out3/results.tsv" | cut -f1)"
pass "the moved folder and a copy of it: one takes the record, the other runs as a slide of its own"
# -f on the moved folder: each slide runs again under the name its
# record had (it took arch__a.svs, beside the old folder a.svs)
"$BIN/qc-submit" -f -c "$cfg" -o "$out" "$T/arch" >"$T/r6.log" 2>&1 || fail "-f run: $(tail -3 "$T/r6.log")"
grep -q "^3 slides: 3 passed" "$T/r6.log" || fail "-f: $(cat "$T/r6.log")"
# (c.svs: the record of the first c, whose file is gone and not this one)
[ "$(grep -v '^#' "$out/results.tsv" | cut -f1 | sort | tr '\n' ' ')" = "a.svs arch__c.svs b.svs c.svs " ] \
    || fail "-f rows: $(grep -v '^#' "$out/results.tsv" | cut -f1 | tr '\n' ' ')"
! ls "$out" | grep -q '^arch__[ab]' || fail "-f took new names: $(ls "$out")"
pass "-f on the moved folder: the moved slides run again under their records' names"
