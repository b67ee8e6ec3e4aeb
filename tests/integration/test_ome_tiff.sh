#!/bin/bash
# An OME-TIFF slide (as bfconvert or QuPath writes one: lower levels in
# SubIFDs, magnification and pixel size in OME-XML) is QC'd as the same
# slide written as an Aperio SVS: qc-mkslide writes both from one seed,
# and every column of their results.tsv rows is the same but those that
# name the file or its format; its levels, magnification and pixel size
# are the OME-XML's (OpenSlide alone sees one level and neither). So is
# one whose lower levels are Images of their own in the directory chain
# (bfconvert without -noflat: qc-mkslide --ome-flat). By URL
# (nginx on 127.0.0.1) it is read by range requests, not downloaded
# whole, and gives the same row again.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN/qc-mkslide" ] || fail "bin/qc-mkslide not built"
mkdir -p "$T/www"
for kind in svs ome ome-flat; do
    case $kind in
    svs) out=$T/slide.svs ;;
    ome) out=$T/www/slide.ome.tif ;;
    ome-flat) out=$T/flat.ome.tif ;;
    esac
    "$BIN/qc-mkslide" -o "$out" --width 6000 --height 4500 --seed 11 \
        $([ $kind != svs ] && echo "--$kind") >"$T/mk-$kind.log" 2>&1 \
        || fail "qc-mkslide ($kind): $(cat "$T/mk-$kind.log")"
done
"$BIN/qc-submit" -w 1 -o "$T/out" "$T/slide.svs" "$T/www/slide.ome.tif" "$T/flat.ome.tif" \
    >"$T/run.log" 2>&1 || fail "exit $?: $(tail -3 "$T/run.log")"
grep -q "3 slides: 3 passed, 0 failed" "$T/run.log" || fail "$(cat "$T/run.log")"

# row FOLDER SLIDE: the row's columns as NAME=VALUE lines, those that
# name the file or its format left out
row() {
    awk -F'\t' -v s="$2" '
        /^#dataset:/ { sub(/^#dataset:/, ""); for (i = 1; i <= NF; i++) n[i] = $i; next }
        $1 == s { for (i = 2; i <= NF; i++)
                      if (n[i] !~ /^(type|comment|original_path|warnings)$/) print n[i] "=" $i }' \
        "$1/results.tsv"
}
col() { row "$1" "$2" | sed -n "s/^$3=//p"; }
row "$T/out" slide.svs >"$T/svs.row"
row "$T/out" slide.ome.tif >"$T/ome.row"
[ "$(wc -l <"$T/svs.row")" -gt 40 ] || fail "slide.svs has no full row: $(cat "$T/out/results.tsv")"
diff "$T/svs.row" "$T/ome.row" >"$T/diff" || fail "the OME-TIFF's row differs: $(head -20 "$T/diff")"
awk -F'\t' '$1 == "slide.ome.tif"' "$T/out/results.tsv" | grep -q "	ome-tiff	" \
    || fail "slide.ome.tif's type is not ome-tiff"
[ "$(col "$T/out" slide.ome.tif levels)" = 3 ] && [ "$(col "$T/out" slide.ome.tif base_mag)" = 40.0 ] \
    && [ "$(col "$T/out" slide.ome.tif mpp_x)" = 0.25 ] \
    || fail "levels, base_mag, mpp_x: $(col "$T/out" slide.ome.tif levels)," \
            "$(col "$T/out" slide.ome.tif base_mag), $(col "$T/out" slide.ome.tif mpp_x)"
pass "an OME-TIFF gives the row of the same slide as SVS: 3 levels, 40x, 0.25 µm from its OME-XML"

row "$T/out" flat.ome.tif >"$T/flat.row"
diff "$T/svs.row" "$T/flat.row" >"$T/diff" \
    || fail "the flattened OME-TIFF's row differs: $(head -20 "$T/diff")"
awk -F'\t' '$1 == "flat.ome.tif"' "$T/out/results.tsv" | grep -q "not QC'd" \
    && fail "flat.ome.tif's levels named as images not QC'd"
pass "flattened (bfconvert without -noflat): its lower levels are its levels, the same row"

nginx_start "$T/www" 10m
url=http://127.0.0.1:$NGINX_PORT/slide.ome.tif
"$BIN/qc-submit" -w 1 -o "$T/by-url" "$url" >"$T/url.log" 2>&1 || fail "by URL: exit $?: $(tail -3 "$T/url.log")"
row "$T/by-url" slide.ome.tif >"$T/url.row"
diff "$T/svs.row" "$T/url.row" >"$T/diff" || fail "by URL the row differs: $(head -20 "$T/diff")"
grep -a "fetch	$url: read by range requests" "$T/by-url/qc.log" >/dev/null \
    || fail "by URL not read by range requests: $(grep -a fetch "$T/by-url/qc.log")"
pass "by URL: read by range requests, the same row"
