#!/bin/bash
# The files a config names travel with the job (issue 12): HistoQC's six
# configs, with HistoQC's data folder read in place (--histoqc-data), an
# installed histoqc's found by python3, or copies beside a config in
# /tmp, run through a broker on a worker whose working folder holds
# nothing (workers never read config files from their own disk), and in
# the one-process mode. A file found nowhere is refused before the job,
# naming where it was looked for.
. "$(dirname "$0")/lib.sh"

CFG=$SHARED/reference/histoqc/configs
DATA=$SHARED/reference/histoqc/data
SLIDE=$SHARED/slides/real/CMU-1-Small-Region.svs
export PYTHONPATH=/nonexistent      # no installed histoqc unless a test says so

port=$(free_port)
start_broker $port --heartbeat-ms 200
mkdir -p "$T/empty"
(cd "$T/empty" && exec "$BIN/qc-worker" --connect tcp://127.0.0.1:$port --name bare \
    --slots 2 --heartbeat-ms 200 --log-level debug) >>"$T/worker.log" 2>&1 &
PIDS+=($!)
wait_for "worker registered" 10 "workers_registered $port 1"

# how many files each config's steps name (HistoQC's configs as shipped)
declare -A files=([config.ini]=8 [config_light.ini]=0 [config_clinical.ini]=6
                  [config_first.ini]=4 [config_ihc.ini]=8 [config_v2.1.ini]=4)
ran=0
for c in config.ini config_light.ini config_clinical.ini config_first.ini \
         config_ihc.ini config_v2.1.ini; do
    out=$T/out-$c
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$CFG/$c" --histoqc-data "$DATA" \
        -o "$out" "$SLIDE" >"$T/$c.log" 2>&1
    rc=$?
    if [ "${files[$c]}" -gt 0 ]; then
        grep -q "config files: ${files[$c]} named" "$T/$c.log" \
            || fail "$c: expected ${files[$c]} files resolved: $(head -3 "$T/$c.log")"
        grep -q "from HistoQC's data folder $DATA (--histoqc-data)" "$T/$c.log" \
            || fail "$c: the source of the files is not said"
    else
        grep -q "config files:" "$T/$c.log" && fail "$c names no file its steps read"
    fi
    [ $rc -eq 0 ] || fail "$c: exit $rc: $(tail -3 "$T/$c.log")"
    [ "$(grep -vc '^#' "$out/results.tsv")" -eq 1 ] || fail "$c: no row"
    ran=$((ran + 1))
done
[ $ran -eq 6 ] || fail "only $ran of HistoQC's six configs ran"
grep -q "config files received" "$T/worker.log" || fail "the worker never received the files"
pass "HistoQC's configs with --histoqc-data on a bare worker: files resolved and sent; $ran of 6 ran"

# copies beside a config in /tmp: HistoQC's config.ini (its examples and
# templates) without its mask_statistics line, so that it runs here
mkdir -p "$T/cfgcopy"
cp -r "$DATA"/. "$T/cfgcopy/"
grep -v '^mask_statistics' "$CFG/config.ini" >"$T/cfgcopy/config.ini"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/cfgcopy/config.ini" -o "$T/copy-broker" \
    "$SLIDE" "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" >"$T/copy.log" 2>&1
[ $? -eq 0 ] || fail "config.ini beside its data: $(tail -3 "$T/copy.log")"
grep -q "8 beside the config $T/cfgcopy" "$T/copy.log" || fail "source not said: $(head -3 "$T/copy.log")"
[ "$(grep -vc '^#' "$T/copy-broker/results.tsv")" -eq 2 ] || fail "rows missing"
col=$(awk -F'\t' '/^#dataset:/{for (i = 1; i <= NF; i++) if ($i == "pen_markings") print i}' \
    "$T/copy-broker/results.tsv")
[ -n "$col" ] || fail "no pen_markings column"
awk -F'\t' -v c="$col" '!/^#/ && $c !~ /^[0-9.e-]+$/ {exit 1}' "$T/copy-broker/results.tsv" \
    || fail "pen_markings not computed (the examples did not reach the worker)"
# the one-process mode gives the same rows
"$BIN/qc-submit" -c "$T/cfgcopy/config.ini" -o "$T/copy-local" \
    "$SLIDE" "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs" >"$T/copy-local.log" 2>&1
[ $? -eq 0 ] || fail "one-process run: $(tail -3 "$T/copy-local.log")"
diff <(rows "$T/copy-broker") <(rows "$T/copy-local") >/dev/null \
    || fail "broker and one-process rows differ"
pass "config.ini beside copies of its data (in /tmp): classifier trained on the bare worker, rows as in one process"

# an installed histoqc's data folder, found by python3
mkdir -p "$T/py/histoqc"
: >"$T/py/histoqc/__init__.py"
ln -s "$DATA" "$T/py/histoqc/data"
PYTHONPATH=$T/py "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$CFG/config_first.ini" \
    -o "$T/installed" "$SLIDE" >"$T/installed.log" 2>&1
[ $? -eq 0 ] || fail "installed histoqc: $(tail -3 "$T/installed.log")"
grep -q "4 from HistoQC's data folder $T/py/histoqc/data (the installed histoqc's)" \
    "$T/installed.log" || fail "installed histoqc not said: $(head -3 "$T/installed.log")"
pass "an installed histoqc's data folder is found and said"

# found nowhere: refused before the job, naming where it looked
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$CFG/config.ini" -o "$T/none" \
    "$SLIDE" >"$T/none.log" 2>&1
[ $? -eq 2 ] || fail "files found nowhere: exit 2 expected"
grep -q "cannot find './pen/1k_version/pen_green.png': not in the working directory ($(cd "$ROOT" && pwd -P)), not beside the config ($CFG), not in a HistoQC data folder" \
    "$T/none.log" || fail "message: $(cat "$T/none.log")"
# every file found nowhere is named in the same run, not one a run
grep -q "Not found either ([0-9]* more): \[ClassificationModule.byExampleWithFeatures:pen_markings\] examples: './pen/1k_version/pen_green_mask.png', .*\[HistogramModule.compareToTemplates\] templates: './templates/template4.png'" \
    "$T/none.log" || fail "the other files found nowhere not named: $(cat "$T/none.log")"
[ ! -e "$T/none/results.tsv" ] || fail "output written for a refused config"
# ... even where the project has its own file of that name (another
# image than HistoQC's: other numbers under the same columns, which a
# run took silently before); the message names it, and a config that
# names it so runs without HistoQC's data
printf '[pipeline]\nsteps = HistogramModule.compareToTemplates\n[HistogramModule.compareToTemplates]\ntemplates = ./templates/template1.png\n    ./templates/template3.png\n' \
    >"$T/tmpl.ini"
"$BIN/qc-submit" -c "$T/tmpl.ini" -o "$T/tmpl" "$SLIDE" >"$T/tmpl.log" 2>&1
[ $? -eq 2 ] && grep -q "cannot find './templates/template1.png'.*write builtin:template1 for the project's own file" "$T/tmpl.log" \
    && [ ! -e "$T/tmpl/results.tsv" ] || fail "a template found nowhere: $(cat "$T/tmpl.log")"
sed -i 's#\./templates/template\([13]\)\.png#builtin:template\1#' "$T/tmpl.ini"
"$BIN/qc-submit" -c "$T/tmpl.ini" -o "$T/tmpl" "$SLIDE" >"$T/tmpl.log" 2>&1
[ $? -eq 0 ] || fail "the project's templates, named so: $(tail -3 "$T/tmpl.log")"
grep -q "template1_MSE_hist	template3_MSE_hist" "$T/tmpl/results.tsv" || fail "template columns"
pass "a file found nowhere is refused (exit 2, places named, every other such file named in the same run, the project's own of its name too); builtin:NAME runs"

# ClassificationModule.pixelWise's table (tsv_file: HistoQC's he.tsv,
# found in its data folder) travels with the job too, and the bare
# worker fits the model from it: the same rows as one process; a table
# that is not one (3 values a row) is refused before the job, naming
# its line
printf '[pipeline]\nsteps = ClassificationModule.pixelWise:pen_markings\n    SaveModule.saveFinalMask\n[ClassificationModule.pixelWise:pen_markings]\nname: pen_markings\ntsv_file: ./models/pen_markings_he/he.tsv\nthreshold: .5\n' \
    >"$T/pw.ini"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/pw.ini" --histoqc-data "$DATA" \
    -o "$T/pw-broker" "$SLIDE" >"$T/pw.log" 2>&1
[ $? -eq 0 ] || fail "pixelWise through the broker: $(tail -3 "$T/pw.log")"
grep -q "config files: 1 named, 1 sent with the job" "$T/pw.log" || fail "tsv_file not sent: $(head -3 "$T/pw.log")"
col=$(awk -F'\t' '/^#dataset:/{for (i = 1; i <= NF; i++) if ($i == "pen_markings") print i}' \
    "$T/pw-broker/results.tsv")
[ -n "$col" ] && awk -F'\t' -v c="$col" '!/^#/ && !($c > 0 && $c < 1) {exit 1}' "$T/pw-broker/results.tsv" \
    || fail "pen_markings of pixelWise not in (0, 1): $(cat "$T/pw-broker/results.tsv")"
[ -s "$T/pw-broker/CMU-1-Small-Region.svs/CMU-1-Small-Region.svs_pen_markings.png" ] \
    || fail "no _pen_markings.png"
"$BIN/qc-submit" -c "$T/pw.ini" --histoqc-data "$DATA" -o "$T/pw-local" "$SLIDE" >"$T/pw-local.log" 2>&1
[ $? -eq 0 ] && diff <(rows "$T/pw-broker") <(rows "$T/pw-local") >/dev/null \
    || fail "pixelWise: broker and one-process rows differ"
printf 'Class\tR\tG\tB\n1\t31\t140\t115\n0\t245\t245\n' >"$T/bad.tsv"
sed "s#tsv_file: .*#tsv_file: $T/bad.tsv#" "$T/pw.ini" >"$T/pw-bad.ini"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/pw-bad.ini" -o "$T/pw-bad" "$SLIDE" \
    >"$T/pw-bad.log" 2>&1
[ $? -eq 2 ] && grep -q "tsv_file (line 6) .*bad.tsv' line 3: 3 values; each row is a class and R, G, B" "$T/pw-bad.log" \
    && [ ! -e "$T/pw-bad/results.tsv" ] || fail "a broken table: $(cat "$T/pw-bad.log")"
pass "pixelWise's tsv_file goes with the job (the bare worker fits he.tsv; rows as in one process); a broken table is refused before the job with its line"
