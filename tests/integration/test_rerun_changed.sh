#!/bin/bash
# A slide rescanned and written again under the same path kept its old
# row: a rerun skipped it as done, silently. Each run now notes the size
# and modification time of every local slide it sends (.qc-stamps); a
# rerun runs a slide whose file no longer matches again, says how many,
# and keeps the old record in results.tsv.N / error.log.N. An unchanged
# file (a copy that keeps both, cp -p) is not run again; a folder with no
# stamps (an older build's) is judged as before. One-process mode and a
# real broker with a worker.
. "$(dirname "$0")/lib.sh"

R=$SHARED/slides/real
mkdir -p "$T/c"
cp "$R/CMU-1-Small-Region.svs" "$T/c/a.svs"
cp "$R/CMU-1-Small-Region.svs" "$T/c/b.svs"
cp "$SHARED/slides/odd/not-a-slide.svs" "$T/c/c.svs"
printf '%s\n' "$T/c/a.svs" "$T/c/b.svs" "$T/c/c.svs" >"$T/list"

# col OUTDIR FILE NAME: that slide's value of column NAME in results.tsv
col() {
    awk -F'\t' -v f="$2" -v c="$3" '/^#dataset:/ { for (i = 1; i <= NF; i++) { h = $i; sub(/^#dataset:/, "", h); if (h == c) k = i } next }
        !/^#/ && $1 == f { print $k }' "$1/results.tsv"
}
rows_of() { grep -c "^$2	" "$1/results.tsv"; }

"$BIN/qc-submit" -o "$T/out" --list "$T/list" >"$T/run1.log" 2>&1
[ $? -eq 1 ] || fail "run 1: exit not 1 (one slide fails): $(tail -3 "$T/run1.log")"
[ "$(col "$T/out" a.svs levels)" = 1 ] || fail "run 1: a.svs levels $(col "$T/out" a.svs levels)"
[ "$(grep -c . "$T/out/.qc-stamps")" -eq 3 ] || fail "run 1: not 3 stamps: $(cat "$T/out/.qc-stamps")"
grep -q "^$T/c/a.svs	$(stat -c %s "$T/c/a.svs")	$(stat -c %Y "$T/c/a.svs")\.[0-9]\{9\}$" "$T/out/.qc-stamps" \
    || fail "a.svs's stamp is not its size and time: $(cat "$T/out/.qc-stamps")"

"$BIN/qc-submit" -o "$T/out" --list "$T/list" >"$T/run2.log" 2>&1
grep -q "nothing to run: every slide of the cohort is accounted for" "$T/run2.log" \
    || fail "run 2, nothing changed: $(cat "$T/run2.log")"
pass "unchanged slides are skipped as before"

# a rescan: a.svs is now another file (a pyramid: more levels); c.svs,
# which failed, is now a slide; b.svs copied over itself keeping its
# time (cp -p) is the same file
sleep 1.1    # a modification time that differs even on a coarse clock
cp "$R/CMU-1-Small-Region-pyramid.svs" "$T/c/a.svs"
cp "$R/CMU-1-Small-Region.svs" "$T/c/c.svs"
cp -p "$T/c/b.svs" "$T/b.copy" && cp -p "$T/b.copy" "$T/c/b.svs"
"$BIN/qc-submit" -o "$T/out" --list "$T/list" >"$T/run3.log" 2>&1 \
    || fail "run 3: exit $?: $(tail -3 "$T/run3.log")"
grep -q "2 slides changed since their results in $T/out were made (another size or modification time: rescanned?): run again (the old results.tsv and error.log are kept as .N)" \
    "$T/run3.log" || fail "run 3 does not say what changed: $(cat "$T/run3.log")"
grep -q "already has 1 of these 3 slides (1 passed, 0 failed): skipped" "$T/run3.log" \
    || fail "run 3: b.svs not skipped: $(cat "$T/run3.log")"
grep -q "running 2 of 3 slides" "$T/run3.log" || fail "run 3: $(cat "$T/run3.log")"
[ "$(rows_of "$T/out" a.svs)" -eq 1 ] && [ "$(col "$T/out" a.svs levels)" -gt 1 ] \
    || fail "a.svs: not one row of the new file: $(grep '^a.svs' "$T/out/results.tsv" | cut -f1-8)"
[ "$(rows_of "$T/out" c.svs)" -eq 1 ] && ! grep -q "c.svs" "$T/out/error.log" \
    || fail "c.svs, now a slide: $(grep -c '^c.svs' "$T/out/results.tsv") rows; error.log: $(cat "$T/out/error.log")"
[ "$(awk -F'\t' '$1 == "a.svs"' "$T/out/results.tsv.1" | wc -l)" -eq 1 ] \
    && grep -q "c.svs" "$T/out/error.log.1" \
    || fail "the old records are not kept: $(ls "$T/out")"
[ "$(grep -vc '^#' "$T/out/results.tsv")" -eq 3 ] || fail "results.tsv: not 3 rows"
pass "a rescanned slide and a failed one replaced run again, said; the old records kept as .N"

# a damaged stamp line is passed over; a folder with no stamps (an older
# build's) skips a changed slide as before, but says that it cannot tell,
# and stamps the files as they are now: a rescan after that is told (it
# was never told, and nothing said so: an upgrade day's review)
printf 'garbage\n\t\t\n%s\tx\t1.5\n' "$T/c/b.svs" >>"$T/out/.qc-stamps"
"$BIN/qc-submit" -o "$T/out" --list "$T/list" >"$T/run4.log" 2>&1 \
    || fail "run 4 with damaged stamp lines: exit $?: $(cat "$T/run4.log")"
grep -q "nothing to run" "$T/run4.log" || fail "run 4: $(cat "$T/run4.log")"
rm "$T/out/.qc-stamps"
sleep 1.1
cp "$R/CMU-1-Small-Region.svs" "$T/c/a.svs"
"$BIN/qc-submit" -o "$T/out" --list "$T/list" >"$T/run5.log" 2>&1
grep -q "nothing to run" "$T/run5.log" \
    && grep -q "^3 of the slides skipped have no record of the size and time of their file (results of an older qc-submit): whether they changed since cannot be told (-f runs them again); their files are noted as they are now, so a later rescan runs them again" "$T/run5.log" \
    || fail "run 5, no stamps: $(cat "$T/run5.log")"
[ "$(grep -c . "$T/out/.qc-stamps")" -eq 3 ] || fail "run 5 did not stamp the 3 files: $(cat "$T/out/.qc-stamps")"
"$BIN/qc-submit" -o "$T/out" --list "$T/list" >"$T/run5b.log" 2>&1
grep -q "nothing to run" "$T/run5b.log" && ! grep -q "no record of the size" "$T/run5b.log" \
    || fail "run 5b: $(cat "$T/run5b.log")"
sleep 1.1
cp "$R/CMU-1-Small-Region-pyramid.svs" "$T/c/a.svs"
"$BIN/qc-submit" -o "$T/out" --list "$T/list" >"$T/run6.log" 2>&1 \
    || fail "run 6: exit $?: $(tail -3 "$T/run6.log")"
grep -q "^1 slide changed since its results in $T/out were made" "$T/run6.log" \
    || fail "run 6: a rescan after the stamps were noted was not told: $(cat "$T/run6.log")"
pass "damaged stamp lines are passed over; without stamps a folder skips as before, says so, and stamps the files for the next run"

# through a real broker and worker: the same
port=$(free_port)
start_broker "$port"
start_worker "$port" w1 --slots 1
mkdir -p "$T/d"
cp "$R/CMU-1-Small-Region.svs" "$T/d/x.svs"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -o "$T/bout" "$T/d/x.svs" >"$T/b1.log" 2>&1 \
    || fail "broker run 1: $(tail -3 "$T/b1.log")"
sleep 1.1
cp "$R/CMU-1-Small-Region-pyramid.svs" "$T/d/x.svs"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -o "$T/bout" "$T/d/x.svs" >"$T/b2.log" 2>&1 \
    || fail "broker run 2: $(tail -3 "$T/b2.log")"
grep -q "1 slide changed since its results in $T/bout were made" "$T/b2.log" \
    || fail "broker run 2 does not say the change: $(cat "$T/b2.log")"
[ "$(rows_of "$T/bout" x.svs)" -eq 1 ] && [ "$(col "$T/bout" x.svs levels)" -gt 1 ] \
    || fail "broker: x.svs not one row of the new file"
pass "through a broker: the rescanned slide runs again"

# a rescan read while still being copied (cut short) fails: the good
# run's images stay with its row (results.tsv.N) until a run passes it;
# the whole file back, it passes and its images are the new run's
mkdir -p "$T/e"
cp "$R/CMU-1-Small-Region.svs" "$T/e/y.svs"
"$BIN/qc-submit" -q -o "$T/eout" "$T/e/y.svs" >"$T/e1.log" 2>&1 || fail "cut: run 1: $(tail -3 "$T/e1.log")"
n1=$(ls "$T/eout/y.svs" | grep -c '^y\.svs_')
[ "$n1" -ge 10 ] || fail "cut: run 1 wrote $n1 images"
sleep 1.1
head -c 1000000 "$R/CMU-1-Small-Region.svs" >"$T/e/y.svs"
"$BIN/qc-submit" -o "$T/eout" "$T/e/y.svs" >"$T/e2.log" 2>&1
[ $? -eq 1 ] || fail "cut: run 2 should fail the slide: $(tail -3 "$T/e2.log")"
n2=$(ls "$T/eout/y.svs" | grep -c '^y\.svs_')
[ "$n2" -eq "$n1" ] || fail "cut: the failed rerun took the good run's images: $n1 -> $n2"
[ "$(rows_of "$T/eout" y.svs)" -eq 0 ] && grep -q "^y.svs	" "$T/eout/results.tsv.1" \
    || fail "cut: the good row is not in results.tsv.1 alone"
grep -q "y.svs: failed this time; $n1 images of an earlier run left in $T/eout/y.svs with that run's row" \
    "$T/eout/qc.log" || fail "cut: qc.log does not say the images were left: $(tail -3 "$T/eout/qc.log")"
sleep 1.1
cp "$R/CMU-1-Small-Region-pyramid.svs" "$T/e/y.svs"
touch "$T/e/before3"
"$BIN/qc-submit" -o "$T/eout" "$T/e/y.svs" >"$T/e3.log" 2>&1 || fail "cut: run 3: $(tail -3 "$T/e3.log")"
[ "$(rows_of "$T/eout" y.svs)" -eq 1 ] && [ "$(col "$T/eout" y.svs levels)" -gt 1 ] \
    || fail "cut: run 3 is not one row of the whole file"
old=$(find "$T/eout/y.svs" -name 'y.svs_*' ! -newer "$T/e/before3")
[ -z "$old" ] || fail "cut: images older than run 3 are left: $old"
[ "$(ls "$T/eout/y.svs" | grep -c '^y\.svs_')" -ge 10 ] || fail "cut: run 3's images: $(ls "$T/eout/y.svs")"
pass "a rescan still being copied fails without taking the good run's images; once whole, it runs"

# a rescan whose level 0 is damaged but whose macro reads: the failed
# run's macro image is not written beside the good run's masks (neither
# run's set), the good run's four images stay whole
mkdir -p "$T/m"
cp "$R/CMU-1-Small-Region.svs" "$T/m/z.svs"
printf '[pipeline]\nsteps = SaveModule.saveMacro\n    LightDarkModule.getIntensityThresholdPercent:tissue\n    SaveModule.saveThumbnails\n' >"$T/macro.ini"
"$BIN/qc-submit" -q -c "$T/macro.ini" -o "$T/mout" "$T/m/z.svs" >"$T/m1.log" 2>&1 \
    || fail "macro: run 1: $(tail -3 "$T/m1.log")"
[ "$(ls "$T/mout/z.svs" | grep -c '^z\.svs_')" -eq 4 ] || fail "macro: run 1's images: $(ls "$T/mout/z.svs")"
sha_before=$(cd "$T/mout/z.svs" && sha256sum z.svs_* )
sleep 1.1
dd if=/dev/zero of="$T/m/z.svs" bs=1 seek=600000 count=675000 conv=notrunc 2>/dev/null
"$BIN/qc-submit" -c "$T/macro.ini" -o "$T/mout" "$T/m/z.svs" >"$T/m2.log" 2>&1
[ $? -eq 1 ] && grep -q "^FAILED 1/1 z.svs" "$T/m2.log" || fail "macro: run 2 should fail the slide: $(tail -3 "$T/m2.log")"
[ "$(cd "$T/mout/z.svs" && sha256sum z.svs_* )" = "$sha_before" ] \
    || fail "macro: the failed run changed the good run's images"
grep -q "z.svs: failed this time; 4 images of an earlier run left in .*(this run's own images are not written beside them)" \
    "$T/mout/qc.log" || fail "macro: qc.log: $(grep 'failed this time' "$T/mout/qc.log")"
pass "a rescan that fails after its macro was saved leaves the good run's images whole, none of its own beside them"
