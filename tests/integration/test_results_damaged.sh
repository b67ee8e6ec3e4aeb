#!/bin/bash
# A results.tsv or error.log a lab's script rewrote without its last line
# break, a row cut short, or two rows run together: a rerun into the
# folder loses and duplicates nothing. Before, the next row was glued
# onto the last line (one row of 129 cells), its slide no longer
# recorded, and each later rerun ran both slides again under new names
# (real__a.svs), exit 0 and no word. Now a file is given its last line
# break before anything is appended, and a row whose cells are not the
# header's columns is no slide's record: said, its slide run again, the
# file as it was kept as results.tsv.N.
. "$(dirname "$0")/lib.sh"

cfg=$T/cheap.ini
cheap_config "$cfg"
mkdir -p "$T/s"
for n in a b c; do ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/s/$n.svs"; done
ln -s "$SHARED/slides/odd/not-a-slide.svs" "$T/s/bad1.svs"
ln -s "$SHARED/slides/odd/unreadable.svs" "$T/s/bad2.svs"
out=$T/out
run() {   # run LOG SLIDE...: qc-submit into $out, one process
    local log=$1; shift
    "$BIN/qc-submit" -c "$cfg" -w 2 -o "$out" "$@" >"$log" 2>&1
}
# each_once NAME...: a row of the header's columns for each, none else
each_once() {
    local cols want
    cols=$(awk -F'\t' '/^#dataset:/{print NF; exit}' "$out/results.tsv")
    awk -F'\t' -v c="$cols" '!/^#/ && NF != c {print "line " NR ": " NF " cells"; bad=1} END {exit bad}' \
        "$out/results.tsv" || fail "rows not of the header's $cols columns: $(awk -F'\t' '!/^#/{print NF}' "$out/results.tsv" | tr '\n' ' ')"
    want=$(printf '%s\n' "$@" | sort)
    [ "$(grep -v '^#' "$out/results.tsv" | cut -f1 | sort)" = "$want" ] \
        || fail "rows: $(grep -v '^#' "$out/results.tsv" | cut -f1 | tr '\n' ' '), not: $*"
    ! ls "$out" | grep -q '__' || fail "a slide took another name: $(ls "$out")"
}
no_final_break() { python3 -c "import sys; p=sys.argv[1]; s=open(p).read(); open(p,'w').write(s.rstrip('\n'))" "$1"; }

run "$T/r1.log" "$T/s/a.svs" || fail "first run: $(tail -3 "$T/r1.log")"
no_final_break "$out/results.tsv"
run "$T/r2.log" "$T/s/a.svs" "$T/s/b.svs" || fail "second run: $(tail -3 "$T/r2.log")"
each_once a.svs b.svs
grep -q 'already has this slide\|already has 1 of these 2' "$T/r2.log" || fail "a.svs not skipped: $(cat "$T/r2.log")"
run "$T/r3.log" "$T/s/a.svs" "$T/s/b.svs" || fail "third run: $(tail -3 "$T/r3.log")"
grep -q 'nothing to run' "$T/r3.log" || fail "the third run ran slides again: $(cat "$T/r3.log")"
each_once a.svs b.svs
pass "results.tsv without its last line break: the next row is not glued onto it; reruns run nothing twice"

# two rows run together by hand: neither is a record; both run again
python3 - "$out/results.tsv" <<'EOF'
import sys
p = sys.argv[1]
lines = open(p).read().split('\n')
rows = [i for i, l in enumerate(lines) if l and not l.startswith('#')]
lines[rows[0]] += lines.pop(rows[1])
open(p, 'w').write('\n'.join(lines))
EOF
kept_before=$(ls "$out" | grep -c '^results\.tsv\.')
run "$T/r4.log" "$T/s/a.svs" "$T/s/b.svs" "$T/s/c.svs" || fail "fourth run: $(tail -3 "$T/r4.log")"
grep -q "qc-submit: $out/results.tsv: 1 row not of the header's [0-9]* columns (line [0-9]* has [0-9]*: edited by hand, cut short, or two rows run together)" \
    "$T/r4.log" || fail "the damaged row is not said: $(cat "$T/r4.log")"
grep -q '^3 slides: 3 passed' "$T/r4.log" || fail "not all three ran: $(cat "$T/r4.log")"
each_once a.svs b.svs c.svs
[ "$(ls "$out" | grep -c '^results\.tsv\.')" = $((kept_before + 1)) ] || fail "the old file not kept: $(ls "$out")"
last=$(ls "$out" | grep '^results\.tsv\.' | sort -t. -k3 -n | tail -1)
awk -F'\t' '/^#dataset:/{c = NF} !/^#/ && NF == 2 * c - 1' "$out/$last" | grep -q . \
    || fail "$last does not hold the two rows run together"
grep -q 'WARNING.*results.tsv: 1 row not of the header' "$out/qc.log" || fail "qc.log does not say it"
pass "two rows run together: said (stderr, qc.log), both slides run again under their own names, the file kept as $last"

# a row cut short (a copy interrupted): its slide runs again
truncate -s -300 "$out/results.tsv"
run "$T/r5.log" "$T/s/a.svs" "$T/s/b.svs" "$T/s/c.svs" || fail "fifth run: $(tail -3 "$T/r5.log")"
grep -q "1 row not of the header's" "$T/r5.log" && grep -q 'running 1 of 3 slides' "$T/r5.log" \
    || fail "the cut row: $(cat "$T/r5.log")"
each_once a.svs b.svs c.svs
pass "a row cut short is no record: its slide alone runs again"

# error.log without its last line break
run "$T/r6.log" "$T/s/bad1.svs"
[ "$(wc -l <"$out/error.log")" = 1 ] || fail "error.log: $(cat "$out/error.log")"
no_final_break "$out/error.log"
run "$T/r7.log" "$T/s/bad1.svs" "$T/s/bad2.svs"
[ "$(wc -l <"$out/error.log")" = 2 ] && [ "$(cut -f1 "$out/error.log" | sort | uniq -d)" = "" ] \
    && [ "$(awk -F'\t' 'NF != 2' "$out/error.log")" = "" ] \
    || fail "error.log after a rerun: $(cat -A "$out/error.log" | cut -c1-200)"
grep -q 'already has 1 of these 2' "$T/r7.log" || fail "bad1 not skipped: $(cat "$T/r7.log")"
pass "error.log without its last line break: the next line is its own, the failed slide not run again"
