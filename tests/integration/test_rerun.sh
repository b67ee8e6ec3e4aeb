#!/bin/bash
# A rerun into an existing output folder resumes it (issue 12): slides it
# has a row or an error line for are skipped and said so, -f runs them
# again (the old files kept as .N), a run that cannot start changes
# nothing, a second qc-submit into a busy folder is refused, a slide that
# could not be read runs once it can, and results.tsv stays one header
# and one row per slide (what HistoQC's UI reads). One-process mode and
# a real broker with a worker.
. "$(dirname "$0")/lib.sh"

R=$SHARED/slides/real
mkdir -p "$T/c"
ln -s "$R/CMU-1-Small-Region.svs" "$T/c/one.svs"
ln -s "$R/CMU-1-Small-Region-pyramid.svs" "$T/c/two.svs"
ln -s "$SHARED/slides/odd/not-a-slide.svs" "$T/c/bad.svs"
printf '%s\n' "$T/c/one.svs" "$T/c/two.svs" "$T/c/bad.svs" "$T/c/later.svs" >"$T/list"

# results.tsv as HistoQC's UI reads it: the part after the one
# "#dataset:" line is a table, every row as wide as the header
ui_table_ok() {   # ui_table_ok OUTDIR NROWS
    local f=$1/results.tsv
    [ "$(grep -c '^#dataset:' "$f")" -eq 1 ] || fail "$f: not one #dataset: line"
    awk '/^#dataset:/{h=1; next} h && /^#/{exit 1}' "$f" || fail "$f: a # line after #dataset:"
    local w
    w=$(awk -F'\t' '/^#dataset:/{print NF}' "$f")
    awk -F'\t' -v w="$w" '!/^#/ && NF != w {exit 1}' "$f" || fail "$f: a row of other width"
    [ "$(grep -vc '^#' "$f")" -eq "$2" ] || fail "$f: $(grep -vc '^#' "$f") rows, expected $2"
}

"$BIN/qc-submit" -o "$T/out" --list "$T/list" >"$T/run1.log" 2>&1
[ $? -eq 1 ] || fail "first run: exit 1 expected (one bad, one missing): $(cat "$T/run1.log")"
grep -q "1 slide cannot be read here and is not sent" "$T/run1.log" || fail "missing slide not listed before the job"
grep -q "later.svs: No such file or directory" "$T/run1.log" || fail "missing slide not named"
grep -q "^also counted (exit 1): 1 not readable here ($T/out/error.log)" "$T/run1.log" \
    || fail "the summary does not count the missing slide: $(tail -2 "$T/run1.log")"
ui_table_ok "$T/out" 2
[ "$(wc -l <"$T/out/error.log")" -eq 2 ] || fail "error.log: $(cat "$T/out/error.log")"
grep -q "^$T/c/later.svs	not read by qc-submit: No such file" "$T/out/error.log" \
    || fail "the missing slide's error line"
awk -F'\t' '/^#dataset:/{print $NF}' "$T/out/results.tsv" | grep -qx original_path \
    || fail "original_path is not the last column"
grep -q "	$T/c/one.svs\$" "$T/out/results.tsv" || fail "original path not kept"
cp "$T/out/results.tsv" "$T/r1.tsv"; cp "$T/out/error.log" "$T/e1.log"
pass "first run: 2 rows, 2 error lines, the missing slide named before the job"

# the same command again: everything skipped, nothing rewritten
"$BIN/qc-submit" -o "$T/out" --list "$T/list" >"$T/run2.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "rerun: exit $rc, expected 1 (the cohort has failed slides)"
grep -q "already has 4 of these 4 slides (2 passed, 2 failed): skipped" "$T/run2.log" \
    || fail "skip not said: $(cat "$T/run2.log")"
grep -q "nothing to run" "$T/run2.log" || fail "nothing-to-run not said"
cmp -s "$T/r1.tsv" "$T/out/results.tsv" || fail "results.tsv changed by a rerun that ran nothing"
cmp -s "$T/e1.log" "$T/out/error.log" || fail "error.log changed by a rerun that ran nothing"
pass "rerun: all 4 skipped and said so, files unchanged"

# the missing slide appears: only it runs, its old error line goes
ln -s "$R/CMU-1-Small-Region.svs" "$T/c/later.svs"
"$BIN/qc-submit" -o "$T/out" --list "$T/list" >"$T/run3.log" 2>&1
grep -q "^1 slide runs again: it failed before for a cause that may have passed" "$T/run3.log" || fail "retry not said: $(cat "$T/run3.log")"
grep -q "^ok 1/1 later.svs" "$T/run3.log" || fail "only the new slide ran: $(cat "$T/run3.log")"
ui_table_ok "$T/out" 3
grep -q "later.svs" "$T/out/error.log" && fail "the stale error line stayed"
check_exactly_once "$T/out" "$T/list"
pass "a slide that could not be read runs once it can; each slide once"

# -f: all run again, the old files kept
"$BIN/qc-submit" -f -o "$T/out" --list "$T/list" >"$T/run4.log" 2>&1
grep -q "^-f: 4 slides" "$T/run4.log" || fail "-f not said: $(cat "$T/run4.log")"
[ "$(grep -c '^ok\|^FAILED' "$T/run4.log")" -eq 4 ] || fail "-f did not run all 4"
[ -f "$T/out/results.tsv.1" ] && [ -f "$T/out/error.log.1" ] || fail "old files not kept as .1"
ui_table_ok "$T/out" 3
check_exactly_once "$T/out" "$T/list"
pass "-f runs every slide again, each once, the old files kept as .1"

# another config (other columns): refused without -f, nothing touched
cp "$T/out/results.tsv" "$T/r4.tsv"
printf '[pipeline]\nsteps = BasicModule.getBasicStats\n' >"$T/small.ini"
"$BIN/qc-submit" -c "$T/small.ini" -o "$T/out" "$T/c/one.svs" >"$T/cols.log" 2>&1
[ $? -eq 2 ] || fail "other columns without -f: exit 2 expected"
grep -q "other columns" "$T/cols.log" || fail "no clear message: $(cat "$T/cols.log")"
grep -q "It differs in: \[pipeline\] steps: leaves out 'ClassificationModule.byExampleWithFeatures:pen_markings' and [0-9]* more; .*; and [0-9]* more\. Write" \
    "$T/cols.log" || fail "what differs is not said: $(cat "$T/cols.log")"
cmp -s "$T/r4.tsv" "$T/out/results.tsv" || fail "results.tsv touched"
pass "a config of other columns is refused (exit 2) and changes nothing"

# -f after a config change: the slide's images the new run does not
# write go (HistoQC's --force removes the slide's folder first), so the
# UI shows no image of the old config beside the new row; a file of
# another name in the folder stays
"$BIN/qc-submit" -o "$T/fo" "$T/c/one.svs" >"$T/fo1.log" 2>&1 || fail "first run: $(tail -2 "$T/fo1.log")"
n1=$(ls "$T/fo/one.svs" | grep -c '^one\.svs_')
[ -f "$T/fo/one.svs/one.svs_blurry.png" ] && [ "$n1" -ge 10 ] || fail "the first run's images: $n1"
echo "the lab's own" >"$T/fo/one.svs/notes.txt"
"$BIN/qc-submit" -f -c "$T/small.ini" -o "$T/fo" "$T/c/one.svs" >"$T/fo2.log" 2>&1 \
    || fail "-f with another config: $(tail -2 "$T/fo2.log")"
left=$(ls "$T/fo/one.svs" | grep '^one\.svs_' | tr '\n' ' ')
[ -z "$left" ] || fail "-f kept the earlier run's images: $left"
[ -f "$T/fo/one.svs/notes.txt" ] || fail "-f removed a file that is not the slide's image"
grep -q "one.svs: $n1 images of the earlier run removed (it ran again" "$T/fo/qc.log" \
    || fail "the removal not said in qc.log: $(grep -i removed "$T/fo/qc.log")"
pass "-f with another config removes the $n1 images of the earlier run it did not write again"

# a run that cannot start (no broker) truncates and removes nothing
port=$(free_port)
ls -A "$T/out" | sort >"$T/before.ls"
md5sum "$T/out"/results.tsv "$T/out"/error.log "$T/out"/qc.log "$T/out"/.qc-job >"$T/before.md5"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --timeout 1 -f -o "$T/out" --list "$T/list" \
    >"$T/nob.log" 2>&1
[ $? -eq 3 ] || fail "no broker: exit 3 expected"
md5sum -c --quiet "$T/before.md5" || fail "files changed by a run that never started"
ls -A "$T/out" | sort | diff - "$T/before.ls" >/dev/null || fail "folder entries changed"
pass "a run that cannot reach its broker changes nothing (even with -f)"

# a real broker and worker: a resumed job sends only what is missing
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 1 --heartbeat-ms 200 --task-delay-ms 1500
wait_for "worker registered" 10 "workers_registered $port 1"
ln -s "$R/CMU-1-Small-Region.svs" "$T/c/five.svs"
echo "$T/c/five.svs" >>"$T/list"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/list" >"$T/b1.log" 2>&1 &
first=$!
PIDS+=($first)
wait_for "job accepted" 10 "grep -q '^job' '$T/b1.log'"
grep -q "on tcp://127.0.0.1:$port: 1 slide$" "$T/b1.log" || fail "resumed job not of 1 slide: $(cat "$T/b1.log")"
# a second qc-submit into the same folder meanwhile: refused
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/list" >"$T/b2.log" 2>&1
rc=$?
[ $rc -eq 6 ] || fail "a second qc-submit into a busy folder: exit $rc, 6 expected"
grep -q "in use by another qc-submit (pid $first)" "$T/b2.log" || fail "lock message: $(cat "$T/b2.log")"
# (the folder's job has slides without a result: said refused before
# any "fetching them first", which would not happen)
grep -q "fetching them first" "$T/b2.log" && fail "a busy folder said it fetches: $(cat "$T/b2.log")"
wait $first; rc=$?
[ $rc -eq 1 ] || fail "resumed broker run: exit $rc"
ui_table_ok "$T/out" 4
check_exactly_once "$T/out" "$T/list"
pass "through a broker: only the missing slide is sent; a concurrent run is refused"

# another config of the same columns: one results.tsv must not hold rows
# of two configs (OUTDIR/.qc-config keeps the config's identity)
"$BIN/qc-submit" -q -o "$T/cfg" "$T/c/one.svs" >"$T/k1.log" 2>&1 || fail "default run: $(cat "$T/k1.log")"
grep -q '^config_file default$' "$T/cfg/.qc-config" || fail ".qc-config: $(head -2 "$T/cfg/.qc-config")"
"$BIN/qc-submit" -o "$T/cfg" "$T/c/one.svs" >"$T/k1b.log" 2>&1 || fail "one slide again: $(cat "$T/k1b.log")"
grep -q "already has this slide (passed): skipped (-f runs it again)" "$T/k1b.log" \
    || fail "one slide again: $(cat "$T/k1b.log")"
"$BIN/qc-submit" --write-default-config "$T/d.ini" || fail "--write-default-config"
"$BIN/qc-submit" -q -c "$T/d.ini" -o "$T/cfg" "$T/c/two.svs" >"$T/k2.log" 2>&1 \
    || fail "the built-in config written out was taken for another: $(cat "$T/k2.log")"
ui_table_ok "$T/cfg" 2
sed 's/^upper_threshold: \.9$/upper_threshold: .8/' "$T/d.ini" >"$T/d2.ini"
cmp -s "$T/d.ini" "$T/d2.ini" && fail "the test's config edit changed nothing"
cp "$T/cfg/results.tsv" "$T/k.tsv"
"$BIN/qc-submit" -q -c "$T/d2.ini" -o "$T/cfg" "$T/c/one.svs" "$T/c/bad.svs" >"$T/k3.log" 2>&1
[ $? -eq 2 ] || fail "another config into the folder: exit 2 expected: $(cat "$T/k3.log")"
# (the folder's record stays the built-in config its first results were
# made with: d.ini, the same values, did not replace it)
grep -q "has results of another config (default; its text is in $T/cfg/.qc-config)" "$T/k3.log" || fail "no clear message: $(cat "$T/k3.log")"
cmp -s "$T/k.tsv" "$T/cfg/results.tsv" || fail "results.tsv touched by a refused run"
{ printf '; saved on another machine\r\n'; sed 's/$/\r/' "$T/d.ini"; } >"$T/d3.ini"
"$BIN/qc-submit" -c "$T/d3.ini" -o "$T/cfg" "$T/c/one.svs" >"$T/k4.log" 2>&1 \
    || fail "the same config with CRLF and a comment was refused: $(cat "$T/k4.log")"
grep -q "skipped" "$T/k4.log" || fail "the same config did not skip its slide: $(cat "$T/k4.log")"
"$BIN/qc-submit" -q -f -c "$T/d2.ini" -o "$T/cfg" "$T/c/one.svs" >"$T/k5.log" 2>&1 \
    || fail "-f with another config: $(cat "$T/k5.log")"
ui_table_ok "$T/cfg" 1
cmp -s "$T/k.tsv" "$T/cfg/results.tsv.1" || fail "the first config's results.tsv not kept as .1"
grep -q "^config_file $T/d2.ini\$" "$T/cfg/.qc-config" || fail ".qc-config not the new config's"
pass "another config of the same columns is refused (exit 2), its copies are not; -f starts afresh"

# a folder HistoQC made (no .qc-config): its config cannot be checked, so
# a run into it warns, naming the config its results.tsv's header names
mkdir -p "$T/hq" && cp "$T/cfg/results.tsv" "$T/hq/"
sed -i 's|^#config_file:.*|#config_file:\t/lab/histoqc/config_v2.ini|' "$T/hq/results.tsv"
"$BIN/qc-submit" -q -c "$T/d.ini" -o "$T/hq" "$T/c/one.svs" "$T/c/two.svs" >"$T/hq.log" 2>&1
grep -q "warning: $T/hq holds results whose config it does not record (no .qc-config: made by HistoQC.*its results.tsv names config '/lab/histoqc/config_v2.ini'): they cannot be checked against this config ($T/d.ini). If the two differ, results.tsv will hold rows of both" "$T/hq.log" \
    || fail "a HistoQC folder's unknown config not warned: $(cat "$T/hq.log")"
"$BIN/qc-submit" -q -c "$T/d.ini" -o "$T/hq" "$T/c/one.svs" >"$T/hq2.log" 2>&1
grep -q "holds results whose config" "$T/hq2.log" && fail "warned again once the config is recorded: $(cat "$T/hq2.log")"
pass "a folder HistoQC made: its config (as its header names it) cannot be checked: warned once"

# -f on a folder HistoQC made (its rows name slides by file name alone):
# the slide's row is replaced, under the name HistoQC gave it (its UI and
# the lab's scripts know it by that name), the old results.tsv kept as
# .1. Before: a second row and folder beside HistoQC's, "real__NAME.svs",
# and no copy kept, though the run said one was
HQ=$SHARED/reference/histoqc
if [ -f "$HQ/results.tsv" ] && [ -d "$HQ/TCGA-CR-7395-pyramid.svs" ] && [ -f "$HQ/configs/config.ini" ]; then
    mkdir -p "$T/hqf"
    cp "$HQ/results.tsv" "$T/hqf/" && cp -r "$HQ/TCGA-CR-7395-pyramid.svs" "$T/hqf/" && chmod -R u+w "$T/hqf"
    nrows=$(grep -vc '^#' "$T/hqf/results.tsv")
    for k in 1 2; do
        "$BIN/qc-submit" -q -f -c "$HQ/configs/config.ini" --histoqc-data "$HQ/data" -o "$T/hqf" \
            "$R/TCGA-CR-7395-pyramid.svs" >"$T/hqf$k.log" 2>&1
        rc=$?
        [ $rc -eq 0 ] || fail "-f on HistoQC's folder, run $k: exit $rc: $(cat "$T/hqf$k.log")"
        [ "$(grep -vc '^#' "$T/hqf/results.tsv")" -eq "$nrows" ] \
            && [ "$(awk -F'\t' '!/^#/ && $1 == "TCGA-CR-7395-pyramid.svs"' "$T/hqf/results.tsv" | wc -l)" -eq 1 ] \
            || fail "-f on HistoQC's folder, run $k: rows: $(cut -f1 "$T/hqf/results.tsv" | grep -v '^#')"
        ls "$T/hqf" | grep -q "__TCGA" && fail "run $k: a folder under another name: $(ls "$T/hqf")"
        [ -f "$T/hqf/TCGA-CR-7395-pyramid.svs/TCGA-CR-7395-pyramid.svs_thumb_small.png" ] \
            || fail "run $k: the slide's images are not in its folder"
    done
    cmp -s "$HQ/results.tsv" "$T/hqf/results.tsv.1" || fail "HistoQC's results.tsv not kept as .1"
    [ -f "$T/hqf/results.tsv.2" ] || fail "the second -f kept no copy"
    pass "-f on HistoQC's folder replaces the slide's row under its name; the old results.tsv kept as .1"
    # the folder renamed (archived): a run into it sets its #outdir, by
    # whose last part HistoQC's UI finds the images; nothing else changes
    chmod 664 "$T/hqf/results.tsv"      # a lab's group-writable folder
    mv "$T/hqf" "$T/hqf-2026"
    cp "$T/hqf-2026/results.tsv" "$T/hqf-before.tsv"
    "$BIN/qc-submit" -c "$HQ/configs/config.ini" --histoqc-data "$HQ/data" -o "$T/hqf-2026" \
        "$R/TCGA-CR-7395-pyramid.svs" >"$T/hqf3.log" 2>&1 || fail "run into the renamed folder: $(cat "$T/hqf3.log")"
    real=$(realpath "$T/hqf-2026")
    [ "$(grep '^#outdir:' "$T/hqf-2026/results.tsv")" = "#outdir:	$real" ] \
        || fail "#outdir not set: $(grep '^#outdir' "$T/hqf-2026/results.tsv")"
    diff <(grep -v '^#outdir:' "$T/hqf-before.tsv") <(grep -v '^#outdir:' "$T/hqf-2026/results.tsv") >/dev/null \
        || fail "more than #outdir changed: $(diff "$T/hqf-before.tsv" "$T/hqf-2026/results.tsv")"
    [ "$(stat -c %a "$T/hqf-2026/results.tsv")" = 664 ] \
        || fail "the rewritten results.tsv lost its permissions: $(stat -c %a "$T/hqf-2026/results.tsv")"
    grep -q "results.tsv's #outdir said $(realpath "$T")/hqf, and now $real (the folder was moved or renamed" \
        "$T/hqf-2026/qc.log" || fail "qc.log does not say so: $(tail -3 "$T/hqf-2026/qc.log")"
    cp "$T/hqf-2026/results.tsv" "$T/hqf-after.tsv"
    "$BIN/qc-submit" -q -c "$HQ/configs/config.ini" --histoqc-data "$HQ/data" -o "$T/hqf-2026" \
        "$R/TCGA-CR-7395-pyramid.svs" >"$T/hqf4.log" 2>&1 || fail "run 4: $(cat "$T/hqf4.log")"
    cmp -s "$T/hqf-after.tsv" "$T/hqf-2026/results.tsv" || fail "a run where it is right changed results.tsv"
    pass "a renamed folder's #outdir is set by the next run into it (said in qc.log), the rows as they were"
else
    echo "note: no HistoQC reference output here: -f on HistoQC's folder not tried"
fi

# a crash between a result's "begin" and "done" lines left half a row: the
# next run, one-process mode too, cuts it away (it is no slide done) and
# runs that slide; the cut is made once
"$BIN/qc-submit" -q -o "$T/torn" "$T/c/one.svs" >"$T/t1.log" 2>&1 || fail "torn: first run: $(cat "$T/t1.log")"
tsv=$(stat -c %s "$T/torn/results.tsv"); errs=$(stat -c %s "$T/torn/error.log")
echo "begin 7 $tsv $errs" >>"$T/torn/.qc-job"
printf 'two.svs\t12' >>"$T/torn/results.tsv"
"$BIN/qc-submit" -o "$T/torn" "$T/c/one.svs" "$T/c/two.svs" >"$T/t2.log" 2>&1 \
    || fail "torn: rerun: $(cat "$T/t2.log")"
grep -q "already has 1 of these 2 slides (1 passed, 0 failed)" "$T/t2.log" \
    || fail "the half row was taken for a slide done: $(cat "$T/t2.log")"
ui_table_ok "$T/torn" 2
grep -q "two.svs	12	\|two.svs	12two" "$T/torn/results.tsv" && fail "the half row is still there"
pass "a half row left by a crash is cut away on the next run (one-process mode), its slide run again"
# ... but not a table edited since: the cut at the old size took the
# rows a lab had sorted or added after the crash (the tail was more
# than the torn row). Said, and nothing of the file lost
"$BIN/qc-submit" -q -o "$T/torn2" "$T/c/one.svs" >"$T/t3.log" 2>&1 || fail "torn2: first run: $(cat "$T/t3.log")"
tsv=$(stat -c %s "$T/torn2/results.tsv"); errs=$(stat -c %s "$T/torn2/error.log")
echo "begin 7 $tsv $errs" >>"$T/torn2/.qc-job"
# a lab's spreadsheet sorted the rows and wrote a second copy of one
# with a note: the bytes past the recorded size are rows, not a torn one
sed -n '/^#dataset:/,$p' "$T/torn2/results.tsv" | tail -1 >"$T/row1"
{ cat "$T/row1"; cat "$T/row1"; } >>"$T/torn2/results.tsv"
cp "$T/torn2/results.tsv" "$T/torn2.edited"
"$BIN/qc-submit" -o "$T/torn2" "$T/c/one.svs" >"$T/t4.log" 2>&1 || fail "torn2: rerun: $(cat "$T/t4.log")"
grep -q "warning: $T/torn2/results.tsv changed since a result was cut off while it was written (edited by hand?): not cut back to its $tsv bytes" \
    "$T/t4.log" || fail "an edited table after a crash is not said: $(cat "$T/t4.log")"
head -c "$(stat -c %s "$T/torn2.edited")" "$T/torn2/results.tsv" | cmp -s - "$T/torn2.edited" \
    || fail "an edited table was cut back after a crash: its rows lost"
grep -q "^abandon 7$" "$T/torn2/.qc-job" || fail "the torn result was not marked abandoned"
pass "a table edited after a crash is not cut back (said): no row lost"

# an older build named a slide "#x.svs" ("_x.svs" now): a row, as HistoQC's
# UI reads every line after #dataset:, but taken for a comment its slide
# ran again and had two rows. Such a row is the slide's; -f replaces it
mkdir -p "$T/h"
ln -s "$R/CMU-1-Small-Region.svs" "$T/h/#x.svs"
"$BIN/qc-submit" -q -o "$T/hash" "$T/h/#x.svs" >"$T/h1.log" 2>&1 || fail "#x.svs: $(cat "$T/h1.log")"
grep -q "^_x.svs	" "$T/hash/results.tsv" || fail "#x.svs is not named _x.svs: $(cut -f1 "$T/hash/results.tsv")"
sed -i 's/^_x\.svs	/#x.svs	/' "$T/hash/results.tsv"     # as the older build wrote it
"$BIN/qc-submit" -o "$T/hash" "$T/h/#x.svs" >"$T/h2.log" 2>&1 || fail "#x.svs rerun: $(cat "$T/h2.log")"
grep -q "already has this slide (passed): skipped" "$T/h2.log" \
    || fail "the older build's #x.svs row was not taken for the slide: $(cat "$T/h2.log")"
[ "$(grep -c "	$T/h/#x.svs\$" "$T/hash/results.tsv")" -eq 1 ] || fail "#x.svs: two rows"
"$BIN/qc-submit" -q -f -o "$T/hash" "$T/h/#x.svs" >"$T/h3.log" 2>&1 || fail "#x.svs -f: $(cat "$T/h3.log")"
[ "$(grep -c "	$T/h/#x.svs\$" "$T/hash/results.tsv")" -eq 1 ] && grep -q "^_x.svs	" "$T/hash/results.tsv" \
    || fail "-f did not replace the older build's #x.svs row: $(cut -f1 "$T/hash/results.tsv")"
ui_table_ok "$T/hash" 1
pass "an older build's row for a slide named #x.svs is that slide's: skipped on a rerun, replaced by -f"

# out of file descriptors (a low ulimit -n under a batch system), every
# limit from 8 up with 8 slots asked: below what its sockets need it
# refuses to start, saying why (czmq aborted the process there once);
# above, it runs as many slides at once as the limit has room for, says
# so, and runs them all. At the edge between (the machine's own
# descriptors decide where: a CI machine needing one more moved it once)
# slides can still fail for want of descriptors: the machine's trouble,
# marked so a rerun tries them again. A read OpenSlide fails is marked
# when no descriptor is free as it is checked, and another thread may
# have freed one by then, so such a slide can stay failed: counted, not
# run (test_pipeline_slides checks the marks themselves).
mkdir -p "$T/fds"
for i in $(seq -w 1 40); do ln -s "$R/CMU-1-Small-Region.svs" "$T/fds/s$i.svs"; done
nmarked=0 refused=0 fitted=0
for n in $(seq 8 1 80); do
    rm -rf "$T/fdout"
    ( ulimit -n $n; exec "$BIN/qc-submit" -w 8 -o "$T/fdout" "$T/fds" ) >"$T/fd1.log" 2>&1
    rc=$?
    [ $rc -lt 128 ] || fail "ulimit -n $n: qc-submit died (exit $rc): $(tail -3 "$T/fd1.log")"
    if [ ! -s "$T/fdout/error.log" ] && [ $rc -ne 0 ]; then
        grep -q "no file descriptor left (ulimit -n is $n)\|Too many open files" "$T/fd1.log" \
            || fail "ulimit -n $n: it stopped without saying why: $(tail -3 "$T/fd1.log")"
        refused=$((refused + 1))
        continue
    fi
    if [ $rc -eq 0 ]; then
        grep -q "40 slides: 40 passed" "$T/fd1.log" || fail "ulimit -n $n: $(tail -2 "$T/fd1.log")"
        grep -q "qc-submit: ulimit -n $n leaves room for [1-7] slides\? at once: [1-7] of the 8 CPU slots asked run" \
            "$T/fd1.log" || fail "ulimit -n $n: all run without fewer slots said: $(head -3 "$T/fd1.log")"
        fitted=$n
        break
    fi
    if [ "$nmarked" -eq 0 ] && [ -s "$T/fdout/error.log" ] && ! grep -q "cannot write" "$T/fd1.log"; then
        nmarked=$(grep -c 'a rerun tries again)$' "$T/fdout/error.log")
        unmarked=$(grep -vc 'a rerun tries again)$' "$T/fdout/error.log")
        rm -rf "$T/fdmarked"; cp -a "$T/fdout" "$T/fdmarked"
    fi
done
[ "$refused" -ge 1 ] && [ "$fitted" -gt 0 ] \
    || fail "from ulimit -n 8 to 80: $refused refused, all run at ${fitted:-none}: $(tail -2 "$T/fd1.log")"
said="refused to start below ulimit -n $((8 + refused)), saying why; at $fitted ran all 40 with fewer slots, saying so"
if [ "$nmarked" -ge 1 ]; then
    "$BIN/qc-submit" -w 2 -o "$T/fdmarked" "$T/fds" >"$T/fd2.log" 2>&1
    [ "$(grep -vc '^#' "$T/fdmarked/results.tsv")" -eq $((40 - unmarked)) ] \
        || fail "after the rerun: $(grep -vc '^#' "$T/fdmarked/results.tsv") rows, expected $((40 - unmarked))"
    grep -q "Too many open files\|no file descriptor left" "$T/fdmarked/error.log" 2>/dev/null \
        && [ "$unmarked" -eq 0 ] && fail "a marked failure is still in error.log after the rerun"
    said="$said; at the edge $nmarked slides failed marked, and the rerun ran them ($unmarked left failed unmarked)"
else
    said="$said; no limit failed slides at the edge here (the marks: test_pipeline_slides)"
fi
pass "out of file descriptors: $said"

# the same folder reached through a link: the same slides (a file is
# known by what it is, not only by how it was named): nothing runs
# again, and -f replaces their rows instead of adding rows of new names
mkdir -p "$T/viaorig"
ln -s "$R/CMU-1-Small-Region.svs" "$T/viaorig/one.svs"
ln -s "$R/CMU-1-Small-Region-pyramid.svs" "$T/viaorig/two.svs"
ln -s "$T/viaorig" "$T/vialink"
"$BIN/qc-submit" -w 1 -o "$T/via" "$T/viaorig" >"$T/via1.log" 2>&1 || fail "via: $(tail -2 "$T/via1.log")"
"$BIN/qc-submit" -w 1 -o "$T/via" "$T/vialink" >"$T/via2.log" 2>&1
grep -q "already has 2 of these 2 slides" "$T/via2.log" && grep -q "nothing to run" "$T/via2.log" \
    || fail "through the link: $(cat "$T/via2.log")"
"$BIN/qc-submit" -w 1 -f -o "$T/via" "$T/vialink" >"$T/via3.log" 2>&1 || fail "via -f: $(tail -2 "$T/via3.log")"
[ "$(grep -vc '^#' "$T/via/results.tsv")" -eq 2 ] || fail "-f through the link: $(cut -f1 "$T/via/results.tsv")"
pass "the same folder through a link: its slides are known (skipped; -f replaces their rows)"

# an interrupted -f run through a broker, then the same command without
# -f (as the run advises): it fetches the -f job's results, and removes
# the earlier run's images those do not write again, as -f would have
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port wf --slots 1 --heartbeat-ms 200 --task-delay-ms 1500
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" -o "$T/ff" "$T/c/one.svs" >"$T/ff1.log" 2>&1 || fail "ff first run: $(tail -2 "$T/ff1.log")"
[ -f "$T/ff/one.svs/one.svs_blurry.png" ] || fail "ff: no image in the first run"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -f -c "$T/small.ini" -o "$T/ff" "$T/c/one.svs" \
    >"$T/ff2.log" 2>&1 &
ff=$!
PIDS+=($ff)
wait_for "the -f job accepted" 10 "grep -q '^job [0-9]* tcp://127.0.0.1:$port ' '$T/ff/.qc-job' 2>/dev/null" "$T/ff2.log"
kill -INT $ff
wait $ff
grep -q "run the same qc-submit command again without -f" "$T/ff2.log" || fail "ff advice: $(tail -3 "$T/ff2.log")"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/small.ini" -o "$T/ff" "$T/c/one.svs" \
    >"$T/ff3.log" 2>&1 || fail "ff, going on without -f: $(tail -3 "$T/ff3.log")"
grep -q "fetching them first" "$T/ff3.log" || fail "ff: the -f job was not fetched: $(head -3 "$T/ff3.log")"
left=$(ls "$T/ff/one.svs" | grep '^one\.svs_' | tr '\n' ' ')
[ -z "$left" ] || fail "the -f job fetched without -f kept the earlier run's images: $left"
[ "$(grep -vc '^#' "$T/ff/results.tsv")" -eq 1 ] || fail "ff rows: $(cat "$T/ff/results.tsv")"
pass "an interrupted -f run, gone on without -f as advised: the earlier run's images are removed all the same"

# a cohort folder that was not there (a share not mounted) is taken for a
# slide not read; once there, its slides run and that line goes (it
# stayed in error.log for ever: an operator's review), with no
# error.log.N for it (a line a rerun tries again is no result to keep: a
# share mounted late each night left one error.log.N a night)
"$BIN/qc-submit" -w 1 -c "$T/small.ini" -o "$T/late" "$T/late-cohort" >"$T/late1.log" 2>&1
[ $? -eq 1 ] || fail "a folder not there: exit 1 expected: $(tail -2 "$T/late1.log")"
grep -q "^$T/late-cohort	not read by qc-submit: No such file or directory" "$T/late/error.log" \
    || fail "a folder not there: $(cat "$T/late/error.log")"
mkdir "$T/late-cohort" && cp "$T/c/one.svs" "$T/late-cohort/"
"$BIN/qc-submit" -w 1 -c "$T/small.ini" -o "$T/late" "$T/late-cohort" >"$T/late2.log" 2>&1 \
    || fail "the folder there: $(tail -3 "$T/late2.log")"
[ ! -s "$T/late/error.log" ] || fail "the folder's line stayed: $(cat "$T/late/error.log")"
[ ! -e "$T/late/error.log.1" ] || fail "an error.log.N was kept for a line a rerun tries again"
[ "$(grep -vc '^#' "$T/late/results.tsv")" -eq 1 ] || fail "late rows: $(cat "$T/late/results.tsv")"
pass "a cohort folder not there at first: once searched, its 'not read' line leaves error.log"

# a folder an older build wrote with its columns in another order (it
# wrote HistoQC's deconv_c*_std before _mean): a rerun takes it as it is
# and writes each value under its column's name, in the file's order
printf '[pipeline]\nsteps = BasicModule.getBasicStats\n    DeconvolutionModule.separateStains\n[DeconvolutionModule.separateStains]\nstain = hed_from_rgb\nuse_mask = False\n' \
    >"$T/deconv.ini"
"$BIN/qc-submit" -q -w 1 -c "$T/deconv.ini" -o "$T/order" "$T/c/one.svs" >"$T/order1.log" 2>&1 \
    || fail "deconv run: $(tail -3 "$T/order1.log")"
"$BIN/qc-submit" -q -w 1 -c "$T/deconv.ini" -o "$T/order-fresh" "$T/c/two.svs" >"$T/order0.log" 2>&1 \
    || fail "deconv run: $(tail -3 "$T/order0.log")"
col() {   # col FILE NAME: the value under column NAME of the row of two.svs
    awk -F'\t' -v c="$2" '/^#dataset:/{sub(/^#dataset:/, ""); for (i = 1; i <= NF; i++) if ($i == c) k = i; next}
        !/^#/ && $1 == "two.svs" {print $k}' "$1"
}
# the older order: each _std column swapped with its _mean, header and row alike
awk -F'\t' -v OFS='\t' '/^#/ && !/^#dataset:/ {print; next}
    /^#dataset:/ {sub(/^#dataset:/, "")} {
        for (i = 1; i < NF; i++) if (h[i] ~ /^deconv_c[0-2]_mean$/) { t = $i; $i = $(i + 1); $(i + 1) = t; i++ }
        if (!n++) { for (i = 1; i <= NF; i++) h[i] = $i; for (i = 1; i < NF; i++) if ($i ~ /^deconv_c[0-2]_mean$/) { t = $i; $i = $(i + 1); $(i + 1) = t; i++ }; $1 = "#dataset:" $1 }
        print }' "$T/order/results.tsv" >"$T/order.tsv" && mv "$T/order.tsv" "$T/order/results.tsv"
hdr=$(grep '^#dataset:' "$T/order/results.tsv")
case $hdr in *deconv_c0_std*deconv_c0_mean*) ;; *) fail "the test's older header: $hdr" ;; esac
"$BIN/qc-submit" -w 1 -c "$T/deconv.ini" -o "$T/order" "$T/c/one.svs" "$T/c/two.svs" >"$T/order2.log" 2>&1 \
    || fail "a rerun into a folder of the older column order: $(tail -3 "$T/order2.log")"
[ "$(grep '^#dataset:' "$T/order/results.tsv")" = "$hdr" ] || fail "the header changed: $(grep '^#dataset:' "$T/order/results.tsv")"
ui_table_ok "$T/order" 2
for c in deconv_c0_mean deconv_c0_std deconv_c2_mean deconv_c2_std; do
    [ -n "$(col "$T/order-fresh/results.tsv" $c)" ] \
        && [ "$(col "$T/order/results.tsv" $c)" = "$(col "$T/order-fresh/results.tsv" $c)" ] \
        || fail "$c of two.svs: $(col "$T/order/results.tsv" $c), a fresh folder's $(col "$T/order-fresh/results.tsv" $c)"
done
pass "a results.tsv with its columns in an older order (deconv std before mean): a rerun keeps it, each value under its name"
