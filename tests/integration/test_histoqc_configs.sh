#!/bin/bash
# HistoQC's six bundled configs (../shared/reference/histoqc/configs, read
# in place, unchanged) run through qc-submit's one-process mode on the real
# slides, with HistoQC's data folder given (--histoqc-data) for the files
# they name (./pen/..., ./models/..., ./templates/...). For each config:
#  - 4 slides pass and TCGA-CR-7395-01A-01-TS1.svs (no magnification in
#    its metadata) fails with a reason, as with HistoQC;
#  - results.tsv's columns are HistoQC's: for config.ini those of HistoQC's
#    own results.tsv (../shared/reference/histoqc); for the others, the
#    names each HistoQC module's addToPrintList writes, in pipeline order
#    (built below from HistoQC's module source, one function a module);
#    every row fills every column; the texture of an empty mask holds
#    -100 in each (HistoQC's warning; HistoQC writes no cells there);
#  - each slide's folder holds exactly the files HistoQC writes for that
#    config (file names from its modules' io.imsave calls), _macro.png
#    when the slide has a macro image, and the project's _causes.png; for
#    config.ini on the TCGA slide, exactly the files of HistoQC's own
#    output folder and _causes.png;
#  - config.ini's _causes.png: kept tissue as the thumbnail, each pixel
#    taken out in its first step's colour, the legend the causes present;
#  - config_clinical's GeoJSON files are valid polygons for GEOS (the C++
#    JTS that QuPath uses; tests/integration/histoqc_geojson.py) and draw
#    back, pixel for pixel, to the masks saved beside them;
#  - _equalized_thumb.png is 8-bit gray at the thumbnail's size, and its
#    pixels are those of skimage 0.19's functions as HistoQC calls them,
#    written out with numpy (tests/integration/histoqc_equalise.py);
#  - config_first (relative2mask in [BaseImage.BaseImage], no
#    finalComputations section) gets HistoQC's relative2mask warning.
# Also: a misspelt section name in config.ini is refused (exit 2, the
# section and its line named, nothing written).
. "$(dirname "$0")/lib.sh"

REF=$SHARED/reference/histoqc
[ -d "$REF/configs" ] && [ -d "$REF/data" ] || fail "HistoQC's configs not found in $REF"
PY=/usr/bin/python3     # Debian's, where python3-shapely installs
$PY -c 'import shapely, numpy' 2>/dev/null || fail "python3-shapely or python3-numpy missing: run tests/install-deps.sh"
SLIDES=("$SHARED"/slides/real/*)

# ---- HistoQC's columns, module by module (names from its source) -------
base()      { echo "filename comments image_bounding_box base_mag"; }
stats()     { echo "type levels height width mpp_x mpp_y comment"; }
regions()   { echo "$1_num_regions $1_mean_area $1_max_area $1_percent"; }
templates() { echo "template1_MSE_hist template2_MSE_hist template3_MSE_hist template4_MSE_hist"; }
contrast()  { echo "${1}tenenGrad_contrast ${1}michelson_contrast ${1}rms_contrast"; }
gray()      { echo "${1}grayscale_brightness ${1}grayscale_brightness_std"; }
chans()     { local c; for c in 1 2 3; do echo -n "${1}chan${c}_brightness${2:-} ${1}chan${c}_brightness_std${2:-} "; done; }
texture()   { local f; for f in contrast dissimilarity homogeneity ASM energy correlation; do echo -n "$1$f $1${f}_std "; done; }
# HistoQC writes the header from the first slide it finishes; its
# separateStains adds std before mean for an empty mask, mean before std
# otherwise. Its own results.tsv (first slide: no tissue) has std first;
# this project writes mean first, always, as HistoQC does for a cohort
# whose first slide has tissue.
deconv()    { echo "deconv_c0_mean deconv_c0_std deconv_c1_mean deconv_c1_std deconv_c2_mean deconv_c2_std"; }
bc()        { echo "$(contrast "$1") $(gray "$1") $(chans "$1")"; }

columns_of() {
    case $1 in
    # HistoQC's own header, deconv mean before std (see deconv above)
    config) sed -n 's/^#dataset://p' "$REF/results.tsv" | tr '\t' ' ' \
        | sed 's/\(deconv_c[0-2]\)_std \(deconv_c[0-2]\)_mean/\1_mean \2_std/g' ;;
    config_light) echo "$(base) $(stats) nonwhite flat_areas dark $(regions small_tissue_filled)" \
        "$(regions small_tissue_removed) $(regions blurry_removed) spur_pixels areaThresh" \
        "pixels_to_use warnings" ;;
    config_first) echo "$(base) $(stats) nonwhite $(bc background_) $(templates) $(bc '')" \
        "$(chans '' _YUV) pixels_to_use warnings" ;;
    config_clinical) echo "$(base) $(stats) coverslip_edge nonwhite dark flat_areas" \
        "$(regions fatlike_tissue_removed) $(regions small_tissue_filled)" \
        "$(regions small_tissue_removed) $(regions blurry_removed) spur_pixels areaThresh" \
        "$(templates) $(bc '') $(chans '' _YUV) $(deconv) pixels_to_use warnings" ;;
    config_ihc) echo "$(base) $(stats) brightestPixels $(regions small_tissue_filled)" \
        "$(regions small_tissue_removed) $(texture background_) $(bc background_)" \
        "pen_markings coverslip_edge $(texture final_) $(bc '') $(chans '' _YUV) $(deconv)" \
        "pixels_to_use warnings" ;;
    config_v2.1) echo "$(base) $(stats) brightestPixels dark flat_areas" \
        "$(regions fatlike_tissue_removed) $(regions small_tissue_filled)" \
        "$(regions small_tissue_removed) $(texture background_) $(bc background_)" \
        "$(regions blurry_removed) spur_pixels areaThresh $(templates) $(texture final_)" \
        "$(bc '') $(chans '' _YUV) $(deconv) #pieces_of_tissue pixels_to_use warnings" ;;
    esac | tr -s ' \n' '\n' | grep -v '^$'
}

# ---- HistoQC's files, besides _macro.png ---------------------------------
# and the one file the project adds: _causes.png (saveFinalMask's review
# image: tissue taken out coloured by why)
files_of() {
    local save="_mask_use.png _fuse.png _thumb.png _thumb_small.png _causes.png"
    local deconv="_deconv_c0.png _deconv_c1.png _deconv_c2.png"
    case $1 in
    config) echo "_pen_markings.png _coverslip_edge.png _bright.png _dark.png _flat.png" \
        "_fatlike.png _small_fill.png _small_remove.png _blurry.png _spur.png" \
        "_areathresh.png _hist.png $deconv $save" ;;
    config_light) echo "_nonwhite.png _flat.png _dark.png _small_fill.png _small_remove.png" \
        "_blurry.png _spur.png _areathresh.png $save" ;;
    config_first) echo "_nonwhite.png _hist.png $save" ;;
    config_clinical) echo "_coverslip_edge.png _nonwhite.png _dark.png _flat.png _first.png" \
        "_geo_first.geojson _fatlike.png _small_fill.png _small_remove.png _second.png" \
        "_geo_second.geojson _blurry.png _spur.png _areathresh.png _hist.png _third.png" \
        "_geo_third.geojson $deconv $save" ;;
    config_ihc) echo "_equalized_thumb.png _bright.png _small_fill.png _small_remove.png" \
        "_pen_markings.png _coverslip_edge.png _hist.png $deconv $save" ;;
    config_v2.1) echo "_equalized_thumb.png _bright.png _dark.png _flat.png _fatlike.png" \
        "_small_fill.png _small_remove.png _blurry.png _spur.png _areathresh.png _hist.png" \
        "$deconv $save" ;;
    esac | tr -s ' \n' '\n' | grep -v '^$' | sort
}

png_info() {   # "W H COLOURTYPE" of a PNG
    od -An -tu1 -j16 -N10 "$1" | awk '{print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8, $10}'
}

cell() {       # cell TSV SLIDE COLUMN: the value of COLUMN in SLIDE's row
    awk -F'\t' -v s="$2" -v c="$3" '/^#dataset:/ { sub(/^#dataset:/, ""); for (i = 1; i <= NF; i++) if ($i == c) k = i }
        !/^#/ && $1 == s { print $k }' "$1"
}

for cfg in config config_light config_first config_clinical config_ihc config_v2.1; do
    out=$T/$cfg
    "$BIN/qc-submit" -c "$REF/configs/$cfg.ini" --histoqc-data "$REF/data" -o "$out" --workers 2 \
        "${SLIDES[@]}" >"$T/$cfg.log" 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "$cfg: exit $rc (want 1: one slide has no magnification): $(tail -3 "$T/$cfg.log")"
    grep -q "slides: 4 passed, 1 failed" "$T/$cfg.log" || fail "$cfg: $(tail -1 "$T/$cfg.log")"
    grep -q "TCGA-CR-7395-01A-01-TS1.svs.*magnification" "$out/error.log" \
        || fail "$cfg: error.log: $(cat "$out/error.log")"

    # HistoQC's columns, in its order, then the slide's original path (a
    # column of ours, last, so HistoQC's UI reads the rest as its own)
    diff <(columns_of $cfg; echo original_path) <(sed -n 's/^#dataset://p' "$out/results.tsv" | tr '\t' '\n') \
        >"$T/$cfg.cols" || fail "$cfg: columns differ from HistoQC's (< HistoQC, > ours): $(tr '\n' ' ' <"$T/$cfg.cols")"
    ncol=$(( $(columns_of $cfg | wc -l) + 1 ))
    # No cell empty but the warnings (next to last) where there are none.
    # The texture of an empty mask (its warning names the prefix) holds
    # -100 in each of its columns, HistoQC's value for what cannot be
    # computed (HistoQC leaves them out of that row, shifting the rest;
    # empty cells hid them in HistoQC's UI when such a row came first).
    awk -F'\t' -v n=$ncol '/^#dataset:/ { sub(/^#dataset:/, ""); for (i = 1; i <= NF; i++) col[i] = $i; next }
        !/^#/ { rows++; if (NF != n) bad = bad " " $1 " has " NF " fields"
            m = split($(NF - 1), w, "|"); none = ""
            for (j = 1; j <= m; j++) if (w[j] ~ /estimateGreyComatrixFeatures:.* Can not estimate/) {
                p = w[j]; sub(/.*estimateGreyComatrixFeatures:/, "", p); sub(/ Can not.*/, "", p)
                none = none "|" p; empties++ }
            if ($NF == "") bad = bad " " $1 " has no original_path"
            for (i = 1; i < n - 1; i++) {
                if ($i == "") bad = bad " " $1 " empty " col[i]
                c = col[i]; k = index(c, "_")
                if (k && index(none "|", "|" substr(c, 1, k) "|") && $i != "-100" &&
                    substr(c, k + 1) ~ /^(contrast|dissimilarity|homogeneity|ASM|energy|correlation)(_std)?$/)
                    bad = bad " " $1 " " c "=" $i " (texture of an empty mask: -100)" } }
        END { if (rows != 4) bad = bad " " rows " rows"; if (bad) { print bad; exit 1 }
              print empties + 0 }' \
        "$out/results.tsv" >"$T/$cfg.rows" || fail "$cfg: rows:$(cat "$T/$cfg.rows")"

    for s in "${SLIDES[@]}"; do
        name=$(basename "$s")
        [ "$name" = TCGA-CR-7395-01A-01-TS1.svs ] && continue
        want=$(files_of $cfg)
        cell "$out/results.tsv" "$name" warnings | grep -q "Can't Read 'macro'" \
            || want=$(printf '%s\n_macro.png\n' "$want" | sort)
        got=$(ls "$out/$name" | sed "s/^$name//" | sort)
        [ "$got" = "$want" ] || fail "$cfg $name: files differ from HistoQC's (< HistoQC, > ours): $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
    done
    pass "$cfg: 4 passed, 1 failed with a reason; HistoQC's $ncol columns, every row full ($(cat "$T/$cfg.rows") texture steps on an empty mask); HistoQC's files for each slide"
done
[ "$(cat "$T/config_v2.1.rows")" -gt 0 ] \
    || fail "config_v2.1 ran no texture step on an empty mask: the -100 cells went untested"

# config.ini on TCGA-CR-7395-pyramid.svs: the files of HistoQC's own
# folder, and the project's _causes.png
ref=$( (ls "$REF/TCGA-CR-7395-pyramid.svs"; echo TCGA-CR-7395-pyramid.svs_causes.png) | sort)
got=$(ls "$T/config/TCGA-CR-7395-pyramid.svs" | sort)
[ "$got" = "$ref" ] || fail "config.ini, TCGA: files differ from HistoQC's own folder: $(diff <(echo "$ref") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
pass "config.ini on TCGA-CR-7395-pyramid.svs: the $(echo "$ref" | wc -l) files HistoQC wrote, by name, and _causes.png"

# _causes.png of config.ini: tissue kept is the thumbnail's, each pixel
# taken out its first step's colour (the step masks in pipeline order),
# the legend's swatches the causes present (tests/integration/causes_check.py)
for d in "$T"/config/*/; do
    name=$(basename "$d")
    $PY "$ROOT/tests/integration/causes_check.py" "$d" "$name" pen_markings coverslip_edge \
        bright dark flat fatlike small_remove blurry spur areathresh >"$T/causes.log" 2>&1 \
        || fail "config.ini $name _causes.png: $(cat "$T/causes.log")"
    echo "  $(cat "$T/causes.log")"
done
pass "config.ini: _causes.png colours each pixel taken out by its first step, kept tissue as the thumbnail, legend = causes present"

# config_clinical's GeoJSON: valid for GEOS, the masks beside them drawn back
n=0
for d in "$T"/config_clinical/*/; do
    name=$(basename "$d")
    bbox=$(cell "$T/config_clinical/results.tsv" "$name" image_bounding_box)
    for pair in "geo_first:" "geo_second:small_remove" "geo_third:third"; do
        geo=$d/${name}_${pair%%:*}.geojson mask=${pair#*:}
        $PY "$ROOT/tests/integration/histoqc_geojson.py" "$geo" "$bbox" \
            ${mask:+"$d/${name}_$mask.png"} >"$T/geo.log" 2>&1 \
            || fail "config_clinical $name ${pair%%:*}: $(cat "$T/geo.log")"
        echo "  $name ${pair%%:*}: $(head -1 "$T/geo.log")"
        n=$((n + 1))
    done
done
[ $n -eq 12 ] || fail "$n GeoJSON files checked, want 12"
pass "config_clinical: 12 GeoJSON files valid for GEOS, 8 drawn back to their masks pixel for pixel"

for cfg in config_ihc config_v2.1; do
    for d in "$T"/$cfg/*/; do
        name=$(basename "$d")
        eq=$(png_info "$d/${name}_equalized_thumb.png") th=$(png_info "$d/${name}_thumb.png")
        [ "${eq% *}" = "${th% *}" ] && [ "${eq##* }" = 0 ] \
            || fail "$cfg $name: _equalized_thumb.png is $eq (w h colour type), _thumb.png $th"
        $PY "$ROOT/tests/integration/histoqc_equalise.py" "$d/${name}_thumb.png" \
            "$d/${name}_equalized_thumb.png" >"$T/eq.log" 2>&1 \
            || fail "$cfg $name: $(cat "$T/eq.log")"
    done
done
pass "_equalized_thumb.png: 8-bit gray at the thumbnail's size, skimage 0.19's pixels (numpy, 8 slides)"

w=$(cell "$T/config_first/results.tsv" CMU-1-Small-Region.svs warnings)
[[ $w == *"relative2mask is not supported in BasicModule.finalComputations. Using absolute instead."* ]] \
    || fail "config_first: no relative2mask warning: $w"
pass "config_first: HistoQC's relative2mask warning"

sed 's/^\[BaseImage.BaseImage\]/[BaseImage.BaseImag]/' "$REF/configs/config.ini" >"$T/typo.ini"
line=$(grep -n '^\[BaseImage.BaseImag\]' "$T/typo.ini" | cut -d: -f1)
"$BIN/qc-submit" -c "$T/typo.ini" --histoqc-data "$REF/data" -o "$T/typo" "${SLIDES[0]}" >"$T/typo.log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "misspelt section: exit $rc, want 2"
grep -q "\[BaseImage.BaseImag\] line $line: unknown section" "$T/typo.log" \
    || fail "misspelt section: $(cat "$T/typo.log")"
[ ! -e "$T/typo/results.tsv" ] || fail "misspelt section: output written"
pass "a misspelt section ([BaseImage.BaseImag], line $line) is refused, nothing written"

# An old HistoQC config with several faults: each is told in one run, in
# the order of the file's lines, and nothing is written; once mended,
# what HistoQC passes over is said as a note and what it no longer does
# as a warning, and the run goes on.
awk '{print} /^\[BaseImage.BaseImage\]/{print "bogus_key: 1"}
     /^\[BlurDetectionModule.identifyBlurryRegions\]/{print "blur_treshold: .1"}' \
    "$REF/configs/config.ini" >"$T/many.ini"
l1=$(grep -n '^bogus_key' "$T/many.ini" | cut -d: -f1)
l2=$(grep -n '^blur_treshold' "$T/many.ini" | cut -d: -f1)
"$BIN/qc-submit" -c "$T/many.ini" --histoqc-data "$REF/data" -o "$T/many" "${SLIDES[0]}" >"$T/many.log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "two faults: exit $rc, want 2"
grep -n "unknown parameter" "$T/many.log" >"$T/many.found"
[ "$(wc -l <"$T/many.found")" = 2 ] && [ "$l1" -lt "$l2" ] \
    && head -1 "$T/many.found" | grep -q "line $l1: unknown parameter 'bogus_key'" \
    && tail -1 "$T/many.found" | grep -q "line $l2: unknown parameter 'blur_treshold'.*did you mean 'blur_threshold'" \
    || fail "two faults, lines $l1 and $l2: $(cat "$T/many.log")"
[ ! -e "$T/many/results.tsv" ] || fail "two faults: output written"
sed -e '/^bogus_key/d' -e 's/^blur_treshold: .1/threshold: .1/' -e 's/^\[BaseImage.BaseImage\]/[BaseImage.BaseImage]\nhandles: openslide/' \
    "$T/many.ini" >"$T/mended.ini"
printf '\n[metadata]\nauthor: a lab\n' >>"$T/mended.ini"
"$BIN/qc-submit" -c "$T/mended.ini" --histoqc-data "$REF/data" -o "$T/mended" "${SLIDES[0]}" >"$T/mended.log" 2>&1 \
    || fail "mended config: exit $?: $(cat "$T/mended.log")"
grep -q "mended.ini: note: \[BaseImage.BaseImage\] line [0-9]*: 'handles' is not read" "$T/mended.log" \
    && grep -q "mended.ini: warning: \[BlurDetectionModule.identifyBlurryRegions\] line [0-9]*: 'threshold' .*did you mean 'blur_threshold'" "$T/mended.log" \
    && grep -q "mended.ini: note: \[metadata\] line [0-9]*: no step or module of that name: ignored" "$T/mended.log" \
    || fail "mended config: notes: $(cat "$T/mended.log")"
[ -s "$T/mended/results.tsv" ] || fail "mended config: no results.tsv"
pass "every fault of a config told in one run, in line order; notes and warnings told apart"
