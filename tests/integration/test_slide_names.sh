#!/bin/bash
# Every slide, whatever its name, ends as one row or one error line and
# the run goes on (issues 12 and 13): two slides of one file name in two
# folders get two folders and two `filename` values that lead HistoQC's
# UI to their own images, as does a third that differs only in case (one
# folder on SMB, exFAT and macOS); names of 250 bytes, with tabs, line feeds,
# carriage returns, backslashes and bytes that are not UTF-8 keep every
# file one record a line (escaped in results.tsv, its header lines,
# error.log and qc.log); output names stay short and safe. One-process
# mode and a real broker with a worker.
. "$(dirname "$0")/lib.sh"

R=$SHARED/slides/real
C=$T/cohort
mkdir -p "$C/a" "$C/b" "$C/c"
# two different slides, one file name
ln -s "$R/CMU-1-Small-Region.svs" "$C/a/slide.svs"
ln -s "$R/CMU-1-Small-Region-pyramid.svs" "$C/b/slide.svs"
ln -s "$R/CMU-1-Small-Region-pyramid.svs" "$C/c/SLIDE.svs"
long=$(printf 'L%.0s' $(seq 1 246)).svs           # 250 bytes
ln -s "$R/CMU-1-Small-Region.svs" "$C/$long"
ln -s "$R/CMU-1-Small-Region.svs" "$C/$(printf 'tab\there.svs')"
ln -s "$R/CMU-1-Small-Region.svs" "$C/$(printf 'new\nline.svs')"
ln -s "$R/CMU-1-Small-Region.svs" "$C/$(printf 'carriage\rreturn.svs')"
ln -s "$R/CMU-1-Small-Region.svs" "$C/$(printf 'latin1-\351t\351.svs')"
ln -s "$R/CMU-1-Small-Region.svs" "$C/back\\slash.svs"
ln -s "$R/CMU-1-Small-Region.svs" "$C/\"quoted.svs"
# a leading '"' too: CSV readers would take its error.log reason for a
# quoted field that swallows the lines after it
ln -s "$SHARED/slides/odd/not-a-slide.svs" "$C/$(printf '"bad\tname\n.svs')"
N=11

check_folder() {   # check_folder OUTDIR LOG
    local out=$1 log=$2
    local f=$out/results.tsv
    # one header, rows as wide as it, nothing split
    [ "$(grep -c '^#dataset:' "$f")" -eq 1 ] || fail "$out: #dataset: lines"
    w=$(awk -F'\t' '/^#dataset:/{print NF}' "$f")
    awk -F'\t' -v w="$w" '!/^#/ && NF != w {exit 1}' "$f" || fail "$out: a row of other width"
    [ "$(grep -c '^#command_line_args:' "$f")" -eq 1 ] || fail "#command_line_args split"
    [ "$(grep -vc '^#' "$f")" -eq $((N - 1)) ] || fail "$out: $(grep -vc '^#' "$f") rows"
    [ "$(wc -l <"$out/error.log")" -eq 1 ] || fail "$out: error.log: $(cat -A "$out/error.log")"
    awk -F'\t' 'NF != 2 {exit 1}' "$out/error.log" || fail "error.log line not path TAB reason"
    grep -q 'bad\\tname\\n.svs	' "$out/error.log" || fail "error.log path not escaped"
    awk -F'\t' 'NF != 6 {exit 1}' "$out/qc.log" || fail "qc.log: a record not of 6 fields"
    # as Python's csv module (and pandas) read a TSV: no field quoted
    python3 - "$f" "$out/error.log" <<'PY' || fail "$out: a CSV reader splits a record"
import csv, sys
rows = [r for r in csv.reader((l for l in open(sys.argv[1], encoding="utf-8", errors="replace")
                               if not l.startswith("#") or l.startswith("#dataset:")),
                              delimiter="\t")]
errs = list(csv.reader(open(sys.argv[2], encoding="utf-8", errors="replace"), delimiter="\t"))
ok = len({len(r) for r in rows}) == 1 and all(len(e) == 2 for e in errs) and len(errs) == 1
sys.exit(0 if ok else 1)
PY
    # each row's filename names a folder holding NAME_thumb.png
    local names
    names=$(awk -F'\t' '!/^#/{print $1}' "$f")
    [ "$(echo "$names" | sort -u | wc -l)" -eq $((N - 1)) ] || fail "filename values not unique"
    while IFS= read -r n; do
        [ ${#n} -le 150 ] || fail "name of ${#n} bytes"
        case "$n" in */*|..|.) fail "unsafe name: $n";; esac
        [ -s "$out/$n/${n}_thumb.png" ] || fail "$n: no $n/${n}_thumb.png"
    done <<<"$names"
    # the same file name in two folders: two rows, two different images
    grep -q "^slide.svs	" "$f" && grep -q "^b__slide.svs	" "$f" && grep -q "^c__SLIDE.svs	" "$f" \
        || fail "same-name slides: $(cut -f1 "$f" | grep -i slide)"
    cmp -s "$out/slide.svs/slide.svs_thumb.png" "$out/b__slide.svs/b__slide.svs_thumb.png" \
        && fail "two different slides show the same thumbnail"
    awk -F'\t' '$1=="b__slide.svs"{print $NF}' "$f" | grep -qx "$C/b/slide.svs" \
        || fail "b__slide.svs does not name its original path"
    # ...and qc.log names each by its own name (b's has no macro image)
    grep -q "	b__slide.svs	SaveModule.saveMacro	" "$out/qc.log" \
        && ! grep -q "	slide.svs	SaveModule.saveMacro	" "$out/qc.log" \
        || fail "qc.log does not tell the two slide.svs apart: $(grep saveMacro "$out/qc.log" | cut -f4 | sort | uniq -c)"
    # original paths come back exactly (escaped: \t \n \r \\ \xNN)
    grep -q "tab\\\\there.svs\$" "$f" && grep -q "new\\\\nline.svs\$" "$f" \
        && grep -q "carriage\\\\rreturn.svs\$" "$f" && grep -q 'latin1-\\xe9t\\xe9.svs$' "$f" \
        && grep -q 'back\\\\slash.svs$' "$f" || fail "original paths not escaped as expected"
    grep -q "$long\$" "$f" || fail "the 250-byte name's path"
    # the terminal shows each slide's output name, one line each, and
    # escaped worker text; the run went on
    grep -q "^ok [0-9]*/$N new_line.svs (" "$log" || fail "progress line of new_line.svs"
    grep -q 'bad\\tname\\n.svs' "$log" || fail "progress did not escape the failure"
    grep -q "$N slides: $((N - 1)) passed, 1 failed" "$log" || fail "summary: $(tail -2 "$log")"
}

"$BIN/qc-submit" -o "$T/local" "$C" >"$T/local.log" 2>&1
[ $? -eq 1 ] || fail "local run: exit 1 expected: $(tail -5 "$T/local.log")"
check_folder "$T/local" "$T/local.log"
pass "one-process mode: $N odd names, each one row or one error line, images found by name"

port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 2 --heartbeat-ms 200
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/broker" "$C" >"$T/broker.log" 2>&1
[ $? -eq 1 ] || fail "broker run: exit 1 expected: $(tail -5 "$T/broker.log")"
check_folder "$T/broker" "$T/broker.log"
pass "through a broker: the same"

# a client killed mid-job: --attach names the rest from .qc-slides, as
# the submitting run would have (never from the paths workers send)
kill $WORKER_PID
start_worker $port w2 --slots 1 --heartbeat-ms 200 --task-delay-ms 400
wait_for "slow worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/attach" "$C" >"$T/first.log" 2>&1 &
sub=$!
wait_for "some results" 30 "[ \$(grep -c '^ok\|^FAILED' '$T/first.log') -ge 2 ]"
kill -9 $sub
wait $sub 2>/dev/null
job=$(awk '/^job /{print $2; exit}' "$T/attach/.qc-job")
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$job" -o "$T/attach" >"$T/attach.log" 2>&1
[ $? -le 1 ] || fail "attach: $(tail -3 "$T/attach.log")"
check_folder "$T/attach" "$T/broker.log"
pass "a client killed mid-job, then --attach: the same names and rows"

# the rerun knows every odd name again (path identity survives escaping)
"$BIN/qc-submit" -o "$T/local" "$C" >"$T/again.log" 2>&1
grep -q "already has $N of these $N slides" "$T/again.log" || fail "rerun: $(cat "$T/again.log")"
pass "a rerun recognises every slide by its path, odd bytes included"

# a path longer than the protocol carries (4096 bytes) cannot be sent:
# one error line for it, and the rest runs
printf '%s/%s.svs\n' "$C" "$(printf 'P%.0s' $(seq 1 5000))" >"$T/long.list"
echo "$C/a/slide.svs" >>"$T/long.list"
"$BIN/qc-submit" -o "$T/longpath" --list "$T/long.list" >"$T/longpath.log" 2>&1
[ $? -eq 1 ] || fail "a 5000-byte path: exit 1 expected: $(tail -3 "$T/longpath.log")"
grep -q "path longer than 4096 bytes" "$T/longpath/error.log" || fail "no error line for it"
[ "$(grep -vc '^#' "$T/longpath/results.tsv")" -eq 1 ] || fail "the other slide did not run"
pass "a 5000-byte path: one error line, the run goes on"

# a file name starting with '#' (accession numbers): its row must not
# start with '#', which every reader of results.tsv takes for a comment
# (the slide then ran again on each rerun, one row more each time)
mkdir -p "$T/hash"
ln -s "$R/CMU-1-Small-Region.svs" "$T/hash/#17.svs"
ln -s "$R/CMU-1-Small-Region-pyramid.svs" "$T/hash/a.svs"
for i in 1 2; do
    "$BIN/qc-submit" -w 1 -o "$T/hashout" "$T/hash" >"$T/hash$i.log" 2>&1 \
        || fail "'#' name, run $i: $(tail -3 "$T/hash$i.log")"
done
[ "$(grep -vc '^#' "$T/hashout/results.tsv")" -eq 2 ] && grep -q "^_17.svs	" "$T/hashout/results.tsv" \
    && [ -d "$T/hashout/_17.svs" ] || fail "'#17.svs': $(cut -f1 "$T/hashout/results.tsv")"
grep -q "nothing to run" "$T/hash2.log" || fail "the rerun ran again: $(cat "$T/hash2.log")"
pass "'#17.svs' is named _17.svs: one row, and a rerun finds it"
