#!/bin/bash
# Cohorts given the ways HistoQC takes them (issue 12): a folder of
# sub-folders, quoted patterns with "**" (expanded by qc-submit) and -p,
# HistoQC's own results.tsv with -p as the base path, the project's
# results.tsv (its original_path column), and --list files whose lines
# carry more columns. One-process mode and a broker.
. "$(dirname "$0")/lib.sh"

R=$SHARED/slides/real
printf '[pipeline]\nsteps = BasicModule.getBasicStats\n' >"$T/quick.ini"
mkdir -p "$T/tree/x/y" "$T/tree/z" "$T/tree/.snap"
ln -s "$R/CMU-1-Small-Region.svs" "$T/tree/x/y/s1.svs"
ln -s "$R/CMU-1-Small-Region-pyramid.svs" "$T/tree/z/s2.svs"
ln -s "$R/CMU-1-Small-Region.svs" "$T/tree/.snap/hidden.svs"
ln -s "$T/tree" "$T/tree/z/loop"
echo "not a slide" >"$T/tree/x/notes.txt"

names() { awk -F'\t' '!/^#/{print $1}' "$1/results.tsv" | sort | tr '\n' ' '; }

"$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-folder" "$T/tree" >"$T/folder.log" 2>&1
[ $? -eq 0 ] || fail "folder of folders: $(tail -3 "$T/folder.log")"
[ "$(names "$T/o-folder")" = "s1.svs s2.svs " ] || fail "folder: $(names "$T/o-folder")"
pass "a folder of sub-folders is searched (hidden folders and a link loop skipped)"

(cd "$T" && "$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-glob" -p "$T/tree" '**/*.svs') \
    >"$T/glob.log" 2>&1
[ $? -eq 0 ] || fail "quoted **/*.svs with -p: $(tail -3 "$T/glob.log")"
[ "$(names "$T/o-glob")" = "s1.svs s2.svs " ] || fail "glob: $(names "$T/o-glob")"
"$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-none" "$T/tree/*.ndpi" >"$T/none.log" 2>&1
[ $? -eq 2 ] || fail "a pattern matching nothing: exit 2 expected"
grep -q "no slide matches '$T/tree/\*.ndpi'" "$T/none.log" || fail "message: $(cat "$T/none.log")"
pass "quoted patterns with ** (and -p) are expanded; one that matches nothing is refused"

# several slides named with -p: HistoQC ignores -p then (they are
# relative to the working directory); one found there is taken from
# there, one that is not from -p, and a -p folder that is not there is
# no error (HistoQC runs)
mkdir -p "$T/here" "$T/base"
ln -s "$R/CMU-1-Small-Region.svs" "$T/here/a.svs"
ln -s "$R/CMU-1-Small-Region.svs" "$T/base/a.svs"
ln -s "$R/CMU-1-Small-Region-pyramid.svs" "$T/base/b.svs"
(cd "$T/here" && "$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-several" -p "$T/base" a.svs b.svs) \
    >"$T/several.log" 2>&1 || fail "several slides with -p: $(tail -3 "$T/several.log")"
paths=$(awk -F'\t' '!/^#/{print $NF}' "$T/o-several/results.tsv" | sort | tr '\n' ' ')
[ "$paths" = "$T/base/b.svs $T/here/a.svs " ] || fail "several slides with -p took: $paths"
grep -q "note: -p $T/base: 1 of the 2 slides named was found in the working directory and taken from there, as HistoQC ignores -p with more than one input" \
    "$T/several.log" || fail "not said: $(cat "$T/several.log")"
(cd "$T/here" && "$BIN/qc-submit" -q -c "$T/quick.ini" -o "$T/o-several-gone" -p "$T/nowhere" a.svs a.svs) \
    >"$T/several-gone.log" 2>&1 || fail "several slides, -p not there: $(tail -3 "$T/several-gone.log")"
"$BIN/qc-submit" -q -c "$T/quick.ini" -o "$T/o-one-gone" -p "$T/nowhere" a.svs >"$T/one-gone.log" 2>&1
[ $? -eq 2 ] && grep -q "p $T/nowhere: not a folder" "$T/one-gone.log" || fail "one slide, -p not there: $(cat "$T/one-gone.log")"
pass "several slides named with -p: one in the working directory is taken from there (said), as HistoQC ignores -p; the others from -p"

# HistoQC's results.tsv: the first column, with -p where the slides are
"$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-histoqc" -p "$R" \
    "$SHARED/reference/histoqc/results.tsv" >"$T/hq.log" 2>&1
[ $? -eq 0 ] || fail "HistoQC's results.tsv: $(tail -3 "$T/hq.log")"
want=$(awk -F'\t' '!/^#/{print $1}' "$SHARED/reference/histoqc/results.tsv" | sort | tr '\n' ' ')
[ "$(names "$T/o-histoqc")" = "$want" ] || fail "got $(names "$T/o-histoqc"), want $want"
pass "HistoQC's results.tsv with -p lists the slides: $want"

# the project's own results.tsv names whole paths: no -p needed
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 2 --heartbeat-ms 200
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/quick.ini" -o "$T/o-ours" \
    "$T/o-folder/results.tsv" >"$T/ours.log" 2>&1
[ $? -eq 0 ] || fail "our results.tsv: $(tail -3 "$T/ours.log")"
diff <(awk -F'\t' '!/^#/{print $NF}' "$T/o-folder/results.tsv" | sort) \
     <(awk -F'\t' '!/^#/{print $NF}' "$T/o-ours/results.tsv" | sort) >/dev/null \
    || fail "the same original paths expected"
# a --list whose lines have more columns: the first one is the slide
printf 'filename\tsite\n%s\tA\n%s\tB\n' "$T/tree/x/y/s1.svs" "$T/tree/z/s2.svs" >"$T/sites.tsv"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/quick.ini" -o "$T/o-list" \
    --list "$T/sites.tsv" >"$T/list.log" 2>&1
[ $? -eq 0 ] || fail "--list with columns: $(tail -3 "$T/list.log")"
[ "$(names "$T/o-list")" = "s1.svs s2.svs " ] || fail "list: $(names "$T/o-list")"
pass "through a broker: our results.tsv (original_path) and a --list with columns"

# lists saved on Windows: a UTF-8 byte order mark, CRLF line ends and
# blanks after a name (a spreadsheet's padding); our results.tsv saved so
# too keeps its header lines header lines
printf '\xef\xbb\xbffilename\tsite\r\n%s  \tA\r\n%s \r\n' "$T/tree/x/y/s1.svs" "$T/tree/z/s2.svs" >"$T/win.tsv"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/quick.ini" -o "$T/o-win" \
    --list "$T/win.tsv" >"$T/win.log" 2>&1
[ $? -eq 0 ] || fail "a Windows list: $(tail -3 "$T/win.log")"
[ "$(names "$T/o-win")" = "s1.svs s2.svs " ] || fail "Windows list: $(names "$T/o-win")"
{ printf '\xef\xbb\xbf'; sed 's/$/\r/' "$T/o-folder/results.tsv"; } >"$T/win-results.tsv"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/quick.ini" -o "$T/o-winres" \
    "$T/win-results.tsv" >"$T/winres.log" 2>&1
[ $? -eq 0 ] || fail "a results.tsv with a BOM: $(tail -3 "$T/winres.log")"
[ "$(grep -vc '^#' "$T/o-winres/results.tsv")" -eq "$(grep -vc '^#' "$T/o-folder/results.tsv")" ] \
    || fail "a results.tsv with a BOM: rows differ"
pass "a list and a results.tsv saved on Windows (BOM, CRLF, trailing blanks): the same slides"

# the same list saved as Excel's "Unicode Text" (UTF-16 with its byte
# order mark) or without the mark: refused with what to do, nothing
# written; it was one path of garbage, its slides lost
iconv -f UTF-8 -t UTF-16 "$T/win.tsv" >"$T/u16.tsv" && iconv -f UTF-8 -t UTF-16LE "$T/win.tsv" >"$T/u16le.tsv" \
    || fail "iconv"
for l in u16 u16le; do
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/quick.ini" -o "$T/o-$l" \
        --list "$T/$l.tsv" >"$T/$l.log" 2>&1
    rc=$?
    [ $rc = 2 ] && grep -q "$T/$l.tsv is UTF-16 text (Excel's \"Unicode Text\", Notepad's \"Unicode\").*save the list as UTF-8" "$T/$l.log" \
        && [ ! -e "$T/o-$l" ] || fail "a UTF-16 list ($l): exit $rc: $(cat "$T/$l.log")"
done
pass "a UTF-16 list (Excel's Unicode Text; with or without its byte order mark): refused, exit 2, saying to save it as UTF-8"

# a spreadsheet's list (.csv, .CSV): the first cell of each line, quoted
# as spreadsheets quote (a comma or a quote in a name), a header row
# skipped; each whole line was taken for a path
mkdir -p "$T/sheet"
ln -s "$R/CMU-1-Small-Region.svs" "$T/sheet/plain.svs"
ln -s "$R/CMU-1-Small-Region.svs" "$T/sheet/with, comma.svs"
ln -s "$R/CMU-1-Small-Region.svs" "$T/sheet/say \"hi\".svs"
printf 'filename,stain,note\r\n%s,H&E,first\r\n"%s",H&E,"quoted, with comma"\r\n"%s",IHC,\r\n' \
    "$T/sheet/plain.svs" "$T/sheet/with, comma.svs" "$T/sheet/say \"\"hi\"\".svs" >"$T/sheet/lims.CSV"
"$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-csv" --list "$T/sheet/lims.CSV" >"$T/csv.log" 2>&1
[ $? -eq 0 ] || fail "a .CSV list: $(tail -3 "$T/csv.log")"
[ "$(names "$T/o-csv")" = 'plain.svs say "hi".svs with, comma.svs ' ] || fail "csv: $(names "$T/o-csv"); $(cat "$T/csv.log")"
cp "$T/sheet/lims.CSV" "$T/sheet/lims.csv"
"$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-csv2" "$T/sheet/lims.csv" >"$T/csv2.log" 2>&1
[ $? -eq 0 ] && [ "$(names "$T/o-csv2")" = "$(names "$T/o-csv")" ] \
    || fail "a .csv given as an argument: $(names "$T/o-csv2"); $(tail -3 "$T/csv2.log")"
# a LIMS export: the slides' column named in its header ("File Name",
# not first), a note with a stray quote (not a quoted cell: the rest of
# the list must not join its record), one with a line break inside its
# quotes
printf 'ID,File Name,Notes\n7,%s,3" wide\n8,"%s","rescanned:\nblur, top left"\n' \
    "$T/sheet/plain.svs" "$T/sheet/with, comma.svs" >"$T/sheet/lims-export.csv"
"$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-csv3" "$T/sheet/lims-export.csv" >"$T/csv3.log" 2>&1
[ $? -eq 0 ] && [ "$(names "$T/o-csv3")" = 'plain.svs with, comma.svs ' ] && [ ! -s "$T/o-csv3/error.log" ] \
    || fail "a LIMS export: $(names "$T/o-csv3"); $(cat "$T/o-csv3/error.log"); $(tail -3 "$T/csv3.log")"
# a quote never closed: refused, naming its line (its slides were lost
# without a word), nothing made; a data row whose cell says "slide" is no
# header (its slide was dropped, the next rows read from that column)
printf 'a,b\n%s,"open note\n%s,ok\n' "$T/sheet/plain.svs" "$T/sheet/with, comma.svs" >"$T/sheet/open.csv"
"$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-open" "$T/sheet/open.csv" >"$T/open.log" 2>&1
[ $? -eq 2 ] && grep -q "open.csv: the quote that opens a cell on line 2 is not closed by the end of the file" \
    "$T/open.log" && [ ! -e "$T/o-open" ] || fail "an unclosed quote: $(cat "$T/open.log")"
printf '%s\tslide\n%s\tslide\n' "$T/sheet/plain.svs" "$T/sheet/say \"hi\".svs" >"$T/sheet/kinds.tsv"
"$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-kinds" "$T/sheet/kinds.tsv" >"$T/kinds.log" 2>&1
[ $? -eq 0 ] && [ "$(names "$T/o-kinds")" = 'plain.svs say "hi".svs ' ] \
    || fail "a data row taken for a header: $(names "$T/o-kinds"); $(tail -3 "$T/kinds.log")"
pass "a spreadsheet's .csv list (given with --list or as an argument): the first cells, quoted as spreadsheets quote; a LIMS export's named column, a stray quote, a note over two lines; a quote never closed refused; a data row is no header"

# Excel where the comma is the decimal mark saves semicolons (a header
# naming the column, a decimal in a cell, a comma in a quoted name), or
# says so in a "sep=;" line; a data row with no header reads the same.
# Each line was taken whole for a path
printf 'Stain;Filename;Scanned\r\nH&E;%s;1,5\r\nH&E;"%s";2,25\r\n' \
    "$T/sheet/plain.svs" "$T/sheet/with, comma.svs" >"$T/sheet/excel-de.csv"
printf 'sep=;\n%s;x\n"%s";y\n' "$T/sheet/plain.svs" "$T/sheet/say \"\"hi\"\".svs" >"$T/sheet/sep.csv"
printf '%s;1,5\n"%s";2\n' "$T/sheet/plain.svs" "$T/sheet/with, comma.svs" >"$T/sheet/rows.csv"
for f in excel-de sep rows; do
    "$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-$f" "$T/sheet/$f.csv" >"$T/$f.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && [ ! -s "$T/o-$f/error.log" ] || fail "$f.csv: exit $rc: $(cat "$T/o-$f/error.log"); $(tail -3 "$T/$f.log")"
done
[ "$(names "$T/o-excel-de")" = 'plain.svs with, comma.svs ' ] && [ "$(names "$T/o-rows")" = 'plain.svs with, comma.svs ' ] \
    && [ "$(names "$T/o-sep")" = 'plain.svs say "hi".svs ' ] \
    || fail "semicolons: $(names "$T/o-excel-de") / $(names "$T/o-rows") / $(names "$T/o-sep")"
# a list on standard input has no name: a spreadsheet's when its first
# record reads as one (a header, or a slide's name in the first cell
# only); a plain list with a comma in a name stays whole lines
"$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-stdin-csv" --list - <"$T/sheet/lims.CSV" >"$T/stdin-csv.log" 2>&1
[ $? -eq 0 ] && [ "$(names "$T/o-stdin-csv")" = "$(names "$T/o-csv")" ] \
    || fail "a .csv on standard input: $(names "$T/o-stdin-csv"); $(tail -3 "$T/stdin-csv.log")"
printf '%s\n%s\n' "$T/sheet/with, comma.svs" "$T/sheet/plain.svs" \
    | "$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-stdin-plain" --list - >"$T/stdin-plain.log" 2>&1
[ $? -eq 0 ] && [ "$(names "$T/o-stdin-plain")" = 'plain.svs with, comma.svs ' ] \
    || fail "a plain list on standard input: $(names "$T/o-stdin-plain"); $(tail -3 "$T/stdin-plain.log")"
# a title row, or Excel's empty row, before the header: no slides, and
# the separator told by the rows after them (they read under none); an
# Excel "sep=|" line; a one-column spreadsheet list on standard input
# (quoted names under a header, no separator anywhere)
printf 'Cohort 2024;;\nStain;Filename;Scanned\nHE;%s;1,5\n' "$T/sheet/plain.svs" >"$T/sheet/title.csv"
printf ';;\nStain;Filename;Scanned\nHE;"%s";2,5\n' "$T/sheet/with, comma.svs" >"$T/sheet/empty-row.csv"
printf 'sep=|\n%s|x\n' "$T/sheet/plain.svs" >"$T/sheet/pipe.csv"
for f in title empty-row pipe; do
    "$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-$f" "$T/sheet/$f.csv" >"$T/$f.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && [ ! -s "$T/o-$f/error.log" ] && [ "$(names "$T/o-$f" | wc -w)" -ge 1 ] \
        || fail "$f.csv: exit $rc: $(cat "$T/o-$f/error.log" 2>/dev/null); $(tail -3 "$T/$f.log")"
done
[ "$(names "$T/o-title")" = 'plain.svs ' ] && [ "$(names "$T/o-pipe")" = 'plain.svs ' ] \
    && [ "$(names "$T/o-empty-row")" = 'with, comma.svs ' ] \
    || fail "title rows: $(names "$T/o-title") / $(names "$T/o-empty-row") / $(names "$T/o-pipe")"
printf '"Filename"\n"%s"\n"%s"\n' "$T/sheet/with, comma.svs" "$T/sheet/plain.svs" \
    | "$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-stdin-one" --list - >"$T/stdin-one.log" 2>&1
[ $? -eq 0 ] && [ "$(names "$T/o-stdin-one")" = 'plain.svs with, comma.svs ' ] \
    || fail "a one-column spreadsheet list on standard input: $(names "$T/o-stdin-one"); $(cat "$T/o-stdin-one/error.log" 2>/dev/null)"
pass "semicolons (Excel where the comma is the decimal mark, or its sep= line), a title row before the header, and a spreadsheet's list on standard input (one column too) are read by their cells; a plain list there by its lines"

# a list line "#12.svs" is a comment (a slide left out is written so),
# but a slide file of that very name beside it was dropped without a
# word: said, with how to run it; written "./#12.svs" it runs
mkdir -p "$T/hash"
cp "$T/sheet/plain.svs" "$T/hash/#12.svs"
cp "$T/sheet/plain.svs" "$T/hash/b.svs"
printf '#12.svs\nb.svs\n#gone.svs\n' >"$T/hash/list.txt"
(cd "$T/hash" && "$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-hash" --list list.txt) >"$T/hash.log" 2>&1 \
    || fail "a list with a comment line: $(tail -3 "$T/hash.log")"
[ "$(names "$T/o-hash")" = 'b.svs ' ] || fail "a comment line ran a slide: $(names "$T/o-hash")"
grep -q "note: list.txt: line 1, '#12.svs', is read as a comment (a slide left out), yet a slide file of that name is there: write it as ./#12.svs" \
    "$T/hash.log" || fail "a comment naming a slide file that is there is not said: $(cat "$T/hash.log")"
grep -q "gone.svs" "$T/hash.log" && fail "a comment naming no file there was said: $(cat "$T/hash.log")"
printf './#12.svs\n' >"$T/hash/list2.txt"
(cd "$T/hash" && "$BIN/qc-submit" -c "$T/quick.ini" -o "$T/o-hash2" --list list2.txt) >"$T/hash2.log" 2>&1 \
    || fail "./#12.svs: $(tail -3 "$T/hash2.log")"
[ "$(names "$T/o-hash2" | wc -w)" = 1 ] || fail "./#12.svs did not run: $(cat "$T/hash2.log")"
pass "a list's comment line that names a slide file there is said, with how to run it"
