#!/bin/bash
# A slide's microns per pixel as its metadata gives them: a plausible
# value is recorded without a word; one no scanner makes (9e+299 µm, a
# damaged or hand-edited tag) is recorded as HistoQC does, with a warning
# that says so; one that is no number (1e9999 overflows) is NA, warned as
# unknown; one that is there but no finite number (inf) is NA, said once.
# Each slide passes: its size is judged by its magnification.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN/qc-mkslide" ] || fail "bin/qc-mkslide not built"
"$BIN/qc-mkslide" -o "$T/base.svs" --width 1200 --height 900 --mpp 0.25 >/dev/null 2>&1 \
    || fail "qc-mkslide"
python3 - "$T" <<'PY' || fail "patching the slides' MPP"
import sys
t = sys.argv[1]
d = open(t + "/base.svs", "rb").read()
assert d.count(b"MPP = 0.2500") >= 1, "no MPP = 0.2500 in the description"
for name, val in (("huge", b"9e+299"), ("overflow", b"1e9999"), ("infinite", b"   inf")):
    open("%s/%s.svs" % (t, name), "wb").write(d.replace(b"MPP = 0.2500", b"MPP = " + val))
PY
"$BIN/qc-submit" -w 1 -o "$T/out" "$T/base.svs" "$T/huge.svs" "$T/overflow.svs" "$T/infinite.svs" \
    >"$T/run.log" 2>&1 \
    || fail "exit $?: $(tail -3 "$T/run.log")"
col() {  # col SLIDE NAME: the value of column NAME in SLIDE's row
    awk -F'\t' -v s="$1" -v c="$2" '
        /^#dataset:/ { sub(/^#dataset:/, ""); for (i = 1; i <= NF; i++) n[$i] = i; next }
        $1 == s { print $(n[c]) }' "$T/out/results.tsv"
}
[ "$(col base.svs mpp_x)" = "0.25" ] || fail "base.svs mpp_x: '$(col base.svs mpp_x)'"
[ "$(col huge.svs mpp_x)" = "9e+299" ] && [ "$(col huge.svs mpp_y)" = "9e+299" ] \
    || fail "huge.svs mpp: '$(col huge.svs mpp_x)' '$(col huge.svs mpp_y)'"
[ "$(col overflow.svs mpp_x)" = "NA" ] || fail "overflow.svs mpp_x: '$(col overflow.svs mpp_x)'"
grep -q "\[huge.svs\] BasicModule.getBasicStats: microns per pixel 9e+299 x 9e+299 (openslide.mpp-x, mpp-y) is no scan's pixel size (0.01 to 100 µm): recorded as the slide says; its metadata is likely damaged" \
    "$T/run.log" || fail "the implausible MPP was not said: $(cat "$T/run.log")"
grep -q "\[overflow.svs\] BasicModule.getBasicStats: Unknown microns per pixel" "$T/run.log" \
    || fail "the overflowing MPP was not said unknown: $(cat "$T/run.log")"
grep "\[base.svs\]" "$T/run.log" | grep -qi "microns per pixel" && fail "base.svs warned: $(cat "$T/run.log")"
# a value there but no number: said so, once, not also "unknown"
grep -q "\[infinite.svs\] BasicModule.getBasicStats: openslide.mpp-x '.*inf' is not a positive number; recorded as NA" \
    "$T/run.log" || fail "the infinite MPP was not said: $(cat "$T/run.log")"
grep "\[infinite.svs\]" "$T/run.log" | grep -q "Unknown microns" && fail "infinite.svs said unknown too"
[ "$(col infinite.svs mpp_x)" = "NA" ] || fail "infinite.svs mpp_x: '$(col infinite.svs mpp_x)'"
pass "microns per pixel: a plausible one recorded, 9e+299 recorded and warned, an overflow NA, inf NA said once"
