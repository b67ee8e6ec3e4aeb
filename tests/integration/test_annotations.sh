#!/bin/bash
# AnnotationModule.saveAnnotationMask end to end: each slide's annotation
# (Aperio ImageScope XML, or QuPath's GeoJSON) lies beside it, as
# HistoQC expects, and the worker that runs the slide reads it:
#  1. one process (qc-submit's default): the left half of the slide
#     annotated, the tissue kept is that half (getAnnotationMask about
#     0.5, _mask_use.png empty on the right);
#  2. a broker and a worker confined to a folder (--slides-root): the
#     same rows as one process; a file_path outside that folder fails
#     the slide with the refusal, never read, in the same words whether
#     or not the file is there;
#  3. slides by URL from Debian's nginx on 127.0.0.1: the annotation is
#     fetched from beside the slide on the server (the same rows); one
#     that is not there gets HistoQC's warning and the slide is QC'd
#     whole; the URL's query (a presigned URL's signature) is written
#     nowhere; a slide whose name is encoded in its URL ("c%20d%25.svs")
#     has its annotation found by the same name encoded; a server that announced a smaller file than it then
#     sends fails the slide with that reason (a buffer of the first size
#     announced once took the whole body); one from a server that
#     takes no Range is read whole;
#  4. reruns into the one-process folder: a slide whose annotation was
#     redrawn, removed or drawn since its row runs again (its old row
#     kept in results.tsv.N), the others are skipped; a folder an older
#     build wrote (no annotation stamps) runs nothing, and is stamped so
#     that the next change is told; the cohort given through a linked
#     folder is the same files; an annotation turned into a folder runs
#     its slide again;
#  5. reruns of section 3's slides by URL: the worker says which version
#     of each annotation it read, or that none was there, and a rerun
#     asks the server: a slide whose annotation was redrawn, drawn where
#     there was none, or removed runs again alone, saying why in qc.log;
#     an unchanged one is skipped, and so is one its server lost along
#     with its annotation (not run to fail); local slides whose
#     file_path is a URL likewise; an annotation too large to read fails
#     its slide, and the slide runs again once the file is replaced;
#  6. annotations that cross themselves, drawn as shapely's buffer(0)
#     makes them, checked against shapely;
#  7. a file_path folder only the workers have (a worker in a mount
#     namespace of its own): the worker says which version it read, or
#     that none was there; a rerun that cannot see them says so and skips
#     the slides, one that sees the file compares it with the worker's.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/slides" "$T/elsewhere" "$T/www"
cp "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/slides/a.svs"
cp "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/slides/b.svs"
# a: the left half (2220 x 2967 at level 0), as ImageScope writes it
cat >"$T/slides/a.xml" <<'XEOF'
<?xml version="1.0" encoding="UTF-8"?>
<Annotations MicronsPerPixel="0.499">
  <Annotation Id="1" Name="region" LineColor="65280">
    <Attributes><Attribute Name="Description" Value=""/></Attributes>
    <Regions>
      <RegionAttributeHeaders/>
      <Region Id="1" Type="0">
        <Vertices>
          <Vertex X="0" Y="0" Z="0"/>
          <Vertex X="1110.25" Y="0" Z="0"/>
          <Vertex X="1110.25" Y="2967" Z="0"/>
          <Vertex X="0" Y="2967" Z="0"/>
        </Vertices>
      </Region>
    </Regions>
  </Annotation>
</Annotations>
XEOF
# b: the same half, written tersely (its copy on the server has none)
cat >"$T/slides/b.xml" <<'XEOF'
<Annotations><Annotation><Regions><Region><Vertices>
<Vertex X="0" Y="0"/><Vertex X="1110.25" Y="0"/><Vertex X="1110.25" Y="2967"/><Vertex X="0" Y="2967"/>
</Vertices></Region></Regions></Annotation></Annotations>
XEOF
cp "$T/slides/a.xml" "$T/elsewhere/a.xml"
cp "$T/slides/a.svs" "$T/slides/a.xml" "$T/slides/b.svs" "$T/www/"
cp "$T/slides/a.svs" "$T/www/c d%.svs"
cp "$T/slides/a.xml" "$T/www/c d%.xml"

cfg() {   # cfg FILE [file_path]
    {
        printf '[pipeline]\nsteps = AnnotationModule.saveAnnotationMask\n'
        printf '    SaveModule.saveFinalMask\n'
        printf '[AnnotationModule.saveAnnotationMask]\nformat: xml\n'
        [ -n "${2:-}" ] && printf 'file_path: %s\n' "$2"
        printf '[SaveModule.saveFinalMask]\nuse_mask: False\n'
    } >"$1"
}
column() {   # column OUT SLIDE NAME
    awk -F'\t' -v s="$2" -v c="$3" '
        /^#dataset:/ { sub(/^#dataset:/, ""); for (i = 1; i <= NF; i++) col[$i] = i; next }
        /^#/ { next }
        $1 == s { print $(col[c]); found = 1 }
        END { exit !found }' "$1/results.tsv"
}
right_half_empty() {   # right_half_empty PNG: no pixel set right of 52% of its width
    python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
from png_read import png_read
w, h, rows = png_read(sys.argv[2], 1)
sys.exit(any(r[x] for r in rows for x in range(int(w * 0.52), w)))' "$ROOT/tests/integration" "$1"
}

# 1. one process
cfg "$T/beside.ini"
"$BIN/qc-submit" -c "$T/beside.ini" -o "$T/local" "$T/slides/a.svs" "$T/slides/b.svs" \
    >"$T/local.log" 2>&1 || fail "one process: $(tail -3 "$T/local.log")"
for s in a.svs b.svs; do
    v=$(column "$T/local" $s getAnnotationMask)
    awk -v v="$v" 'BEGIN { exit !(v > 0.45 && v < 0.55) }' \
        || fail "$s: getAnnotationMask '$v', about 0.5 expected (the left half kept)"
    [ -s "$T/local/$s/${s}_annot_xml.png" ] || fail "$s: no _annot_xml.png"
    right_half_empty "$T/local/$s/${s}_mask_use.png" || fail "$s: tissue kept right of the annotation"
done
pass "one process: the annotation beside each slide keeps its left half (getAnnotationMask $(column "$T/local" a.svs getAnnotationMask))"

# 2. a broker and a worker confined to $T/slides
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port confined --slots 2 --heartbeat-ms 200 --slides-root "$T/slides"
wait_for "worker registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/beside.ini" -o "$T/broker" \
    "$T/slides/a.svs" "$T/slides/b.svs" >"$T/broker.out" 2>&1 \
    || fail "through the broker: $(tail -3 "$T/broker.out")"
diff <(rows "$T/local") <(rows "$T/broker") >/dev/null \
    || fail "broker rows differ from one process's: $(diff <(rows "$T/local") <(rows "$T/broker") | head -5)"
cfg "$T/outside.ini" "$T/elsewhere"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/outside.ini" -o "$T/outside" \
    "$T/slides/a.svs" "$T/slides/b.svs" >"$T/outside.out" 2>&1
[ $? -eq 1 ] || fail "file_path outside --slides-root: exit 1 expected: $(tail -3 "$T/outside.out")"
grep -q "$T/elsewhere/a.xml" "$T/outside/error.log" && grep -qi "slides-root" "$T/outside/error.log" \
    || fail "the refusal is not the slide's reason: $(cat "$T/outside/error.log")"
# b.xml is not in $T/elsewhere: refused the same way, not "does not exist"
# (which would tell a config's author what exists outside the root)
[ "$(sed "s/a\.xml/b.xml/; s/a\.svs/b.svs/g" <(grep '^[^	]*a.svs	' "$T/outside/error.log"))" \
  = "$(grep '^[^	]*b.svs	' "$T/outside/error.log")" ] \
    || fail "a missing file outside the root answered apart from one there: $(cat "$T/outside/error.log")"
pass "a confined worker reads the annotation beside its slide (rows as in one process) and refuses one outside its --slides-root"

# 3. by URL
nginx_start "$T/www" 1m
url() { echo "http://127.0.0.1:$NGINX_PORT/$1"; }
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/beside.ini" -o "$T/url" \
    "$(url a.svs)?X-Amz-Signature=SIGQQ7731" "$(url b.svs)" >"$T/url.out" 2>&1
[ $? -eq 0 ] || fail "by URL: $(tail -3 "$T/url.out")"
v=$(column "$T/url" a.svs getAnnotationMask)
[ "$v" = "$(column "$T/local" a.svs getAnnotationMask)" ] \
    || fail "a.svs by URL: getAnnotationMask '$v', as by path expected"
w=$(column "$T/url" b.svs warnings)
case "$w" in
    *"Annotation file http://127.0.0.1:$NGINX_PORT/b.xml does not exist. Skipping..."*) ;;
    *) fail "b.svs by URL (no b.xml on the server): warnings '$w'" ;;
esac
[ -z "$(column "$T/url" b.svs getAnnotationMask)" ] || fail "b.svs: a column without an annotation"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/beside.ini" -o "$T/url-named" \
    "$(url 'c%20d%25.svs')" >"$T/url-named.out" 2>&1 || fail "c d%.svs by URL: $(tail -3 "$T/url-named.out")"
[ "$(column "$T/url-named" 'c d%.svs' getAnnotationMask)" = "$(column "$T/local" a.svs getAnnotationMask)" ] \
    || fail "c d%.svs by URL: its annotation 'c d%.xml' not read: $(cat "$T/url-named/results.tsv" | tail -1)"
grep -q "SIGQQ7731" "$T/url/results.tsv" "$T/url/qc.log" && fail "the URL's query was written out"
pass "by URL: the annotation is fetched from beside the slide (same value), one not on the server is HistoQC's warning"
python3 "$ROOT/tests/http/fault_server.py" --root "$T/www" --port-file "$T/fault.port" \
    >"$T/fault.log" 2>&1 &
PIDS+=($!)
wait_for "the fault server" 10 "[ -s '$T/fault.port' ]" "$T/fault.log"
cfg "$T/growing.ini" "http://127.0.0.1:$(cat "$T/fault.port")/growing/"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/growing.ini" -o "$T/growing" \
    "$T/slides/a.svs" >"$T/growing.out" 2>&1
[ $? -eq 1 ] || fail "an annotation that grew between requests: exit 1 expected: $(tail -3 "$T/growing.out")"
grep -q "growing/a.xml: .*changed .*while .*read.*a rerun tries again)$" "$T/growing/error.log" \
    || fail "an annotation that grew: not the slide's reason: $(cat "$T/growing/error.log")"
cfg "$T/norange.ini" "http://127.0.0.1:$(cat "$T/fault.port")/norange/"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/norange.ini" -o "$T/norange" \
    "$T/slides/a.svs" >"$T/norange.out" 2>&1 || fail "a server without Range: $(tail -3 "$T/norange.out")"
[ "$(column "$T/norange" a.svs getAnnotationMask)" = "$(column "$T/local" a.svs getAnnotationMask)" ] \
    || fail "an annotation from a server without Range: getAnnotationMask differs"
pass "an annotation from a server that takes no Range is read whole (the same value); one whose server announced 10 bytes and sent $(wc -c <"$T/www/a.xml") fails its slide with that reason"

# 4. reruns
rerun() {   # rerun WHAT [FOLDER]: one rerun of section 1's cohort into its folder
    local in=${2:-$T/slides}
    "$BIN/qc-submit" -c "$T/beside.ini" -o "$T/local" "$in/a.svs" "$in/b.svs" \
        >"$T/rerun.out" 2>&1 || fail "rerun ($1): $(tail -3 "$T/rerun.out")"
}
runs_only() {   # runs_only SLIDE WHAT: the rerun ran SLIDE alone (named as
                #   through a linked folder, or not), and said why
    grep -q "^running 1 of 2 slides" "$T/rerun.out" && grep -q "^ok 1/1 \(.*__\)\?$1 " "$T/rerun.out" \
        && grep -q "^1 slide whose annotation .* was drawn, changed or removed" "$T/rerun.out" \
        || fail "$2: $1 alone expected to run again: $(cat "$T/rerun.out")"
}
rerun "nothing changed"
grep -q "^nothing to run" "$T/rerun.out" || fail "an unchanged rerun ran: $(cat "$T/rerun.out")"
cat >"$T/slides/b.xml" <<'XEOF2'
<Annotations><Annotation><Regions><Region><Vertices>
<Vertex X="0" Y="0"/><Vertex X="2220" Y="0"/><Vertex X="2220" Y="2967"/><Vertex X="0" Y="2967"/>
</Vertices></Region></Regions></Annotation></Annotations>
XEOF2
rerun "b.xml redrawn"
runs_only b.svs "b.xml redrawn over the whole slide"
v=$(column "$T/local" b.svs getAnnotationMask)
awk -v v="$v" 'BEGIN { exit !(v < 0.05) }' \
    || fail "b.svs after its redrawing: getAnnotationMask '$v' (the tissue it removes), about 0 expected"
[ "$(grep -c '^a.svs' "$T/local/results.tsv")" = 1 ] || fail "a.svs's row not kept once"
grep -q '^b.svs' "$T/local/results.tsv.1" || fail "b.svs's old row not kept in results.tsv.1"
mv "$T/slides/a.xml" "$T/a.xml.away"
rerun "a.xml removed"
runs_only a.svs "a.xml removed"
case "$(column "$T/local" a.svs warnings)" in
    *"a.xml does not exist. Skipping..."*) ;;
    *) fail "a.svs without its annotation: warnings '$(column "$T/local" a.svs warnings)'" ;;
esac
grep -q "beside $T/slides/a.svs (its annotation) was drawn, changed or removed" \
    "$T/local/qc.log" || fail "qc.log does not name the slide run again"
rerun "nothing changed since"
grep -q "^nothing to run" "$T/rerun.out" || fail "a rerun after the rerun ran: $(cat "$T/rerun.out")"
# a folder an older build wrote: no annotation lines in .qc-stamps
grep -v "$(printf '\ti\t')" "$T/local/.qc-stamps" >"$T/stamps" && cp "$T/stamps" "$T/local/.qc-stamps"
mv "$T/a.xml.away" "$T/slides/a.xml"
rerun "an older folder"
grep -q "^nothing to run" "$T/rerun.out" || fail "a folder with no annotation stamps ran: $(cat "$T/rerun.out")"
grep -q "$(printf '\ti\t')$T/slides/a.xml" "$T/local/.qc-stamps" \
    || fail "the annotation of a skipped slide was not stamped"
echo >>"$T/slides/a.xml"
rerun "a.xml drawn again"
runs_only a.svs "a.xml changed after the older folder was stamped"
# the same slides through a linked folder: the same files, spelled apart
ln -s "$T/slides" "$T/linked"
echo >>"$T/slides/b.xml"
rerun "b.xml changed, through a link" "$T/linked"
runs_only b.svs "b.xml changed, the cohort given through a linked folder"
rerun "through a link" "$T/linked"
grep -q "^nothing to run" "$T/rerun.out" || fail "the cohort through a linked folder ran: $(cat "$T/rerun.out")"
# an annotation that became a folder: no file a worker reads, so run again
mv "$T/slides/a.xml" "$T/a.xml.away" && mkdir "$T/slides/a.xml"
"$BIN/qc-submit" -c "$T/beside.ini" -o "$T/local" "$T/slides/a.svs" "$T/slides/b.svs" \
    >"$T/rerun.out" 2>&1
grep -q "^1 slide whose annotation .* was drawn, changed or removed" "$T/rerun.out" \
    && grep -q "a.xml.*not a regular file" "$T/local/error.log" \
    || fail "a.xml replaced by a folder: a.svs expected to run again and fail: $(cat "$T/rerun.out")"
pass "reruns: a slide whose annotation was redrawn or removed runs again alone (old row kept as results.tsv.1), an unchanged one is skipped; an older folder is stamped, then a change is told; a linked folder's spelling changes nothing; an annotation turned into a folder runs its slide again"

# 5. reruns by URL: the worker says which version of each annotation it
# read, or that none was there; a rerun asks the server
urlrun() {   # urlrun WHAT: one rerun of section 3's cohort into its folder
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/beside.ini" -o "$T/url" \
        "$(url a.svs)?X-Amz-Signature=SIGQQ7731" "$(url b.svs)" >"$T/urlrun.out" 2>&1 \
        || fail "rerun by URL ($1): $(tail -3 "$T/urlrun.out")"
}
url_runs_only() {   # url_runs_only SLIDE WHAT WHY: the rerun ran SLIDE alone, and
                    #   qc.log says why (WHY, a pattern)
    grep -q "^running 1 of 2 slides" "$T/urlrun.out" \
        && grep -q "^1 slide by URL changed on its server .*or its annotation redrawn" "$T/urlrun.out" \
        && [ "$(grep -c "^$1	" "$T/url/results.tsv")" = 1 ] \
        && grep -q "changed on its server since its record was made, run again: $3" "$T/url/qc.log" \
        || fail "$2: $1 alone expected to run again: $(cat "$T/urlrun.out"; grep changed "$T/url/qc.log")"
}
grep -q "$(printf '\tu\t')http://127.0.0.1:$NGINX_PORT/a.xml$(printf '\t')$(wc -c <"$T/www/a.xml")$(printf '\t')\"" "$T/url/.qc-stamps" \
    && grep -q "$(printf '\tu\t')http://127.0.0.1:$NGINX_PORT/b.xml$(printf '\t')-1$(printf '\t\t')$" "$T/url/.qc-stamps" \
    || fail "the annotations by URL were not stamped (a.xml's size and ETag, b.xml not there): $(cat "$T/url/.qc-stamps")"
a_size=$(wc -c <"$T/www/a.xml")
urlrun "nothing changed"
grep -q "^nothing to run" "$T/urlrun.out" || fail "an unchanged rerun by URL ran: $(cat "$T/urlrun.out")"
cp "$T/slides/b.xml" "$T/www/a.xml"
urlrun "a.xml redrawn on the server"
url_runs_only a.svs "a.xml redrawn on the server" \
    "http://127.0.0.1:$NGINX_PORT/a.xml: $a_size bytes when its record was made, $(wc -c <"$T/www/a.xml") now"
v=$(column "$T/url" a.svs getAnnotationMask)
awk -v v="$v" 'BEGIN { exit !(v < 0.05) }' \
    || fail "a.svs by URL after its redrawing: getAnnotationMask '$v', about 0 expected"
cp "$T/elsewhere/a.xml" "$T/www/b.xml"
urlrun "b.xml drawn on the server"
url_runs_only b.svs "b.xml drawn where there was none" \
    "http://127.0.0.1:$NGINX_PORT/b.xml: not there when its record was made, there now"
rm "$T/www/a.xml"
urlrun "a.xml removed from the server"
url_runs_only a.svs "a.xml removed from the server" \
    "http://127.0.0.1:$NGINX_PORT/a.xml: there when its record was made, not now"
case "$(column "$T/url" a.svs warnings)" in
    *"a.xml does not exist. Skipping..."*) ;;
    *) fail "a.svs by URL without its annotation: warnings '$(column "$T/url" a.svs warnings)'" ;;
esac
urlrun "nothing changed since"
grep -q "^nothing to run" "$T/urlrun.out" || fail "a rerun by URL after the rerun ran: $(cat "$T/urlrun.out")"
grep -q "SIGQQ7731" "$T/url/results.tsv" "$T/url/qc.log" "$T/url/.qc-stamps" && fail "the URL's query was written out"
# the server lost b.svs and b.xml (a share not mounted behind it): b.svs
# cannot be told, and is skipped as done, not run to fail
mv "$T/www/b.svs" "$T/www/b.xml" "$T/"
urlrun "b.svs and b.xml gone from the server"
grep -q "^nothing to run" "$T/urlrun.out" && grep -q "^1 slide by URL could not be checked" "$T/urlrun.out" \
    || fail "a slide and its annotation both gone from their server: b.svs ran: $(cat "$T/urlrun.out")"
mv "$T/b.svs" "$T/b.xml" "$T/www/"
pass "reruns by URL: a slide whose annotation was redrawn, drawn or removed on the server runs again alone, with the reason in qc.log; an unchanged one is skipped; one its server lost with its annotation is skipped as done; the stamps hold no query"

# a local slide whose file_path is a URL: the worker says which version
# it read, and a rerun asks
mkdir -p "$T/www/annot"
cp "$T/elsewhere/a.xml" "$T/www/annot/a.xml"
cfg "$T/annot-url.ini" "http://127.0.0.1:$NGINX_PORT/annot"
pathrun() {   # pathrun WHAT
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/annot-url.ini" -o "$T/lpath" \
        "$T/slides/a.svs" "$T/slides/b.svs" >"$T/pathrun.out" 2>&1 \
        || fail "local slides, file_path a URL ($1): $(tail -3 "$T/pathrun.out")"
}
pathrun "first"
pathrun "nothing changed"
grep -q "^nothing to run" "$T/pathrun.out" || fail "local slides, file_path a URL: an unchanged rerun ran: $(cat "$T/pathrun.out")"
cp "$T/elsewhere/a.xml" "$T/www/annot/b.xml"
echo >>"$T/www/annot/a.xml"
pathrun "a.xml redrawn, b.xml drawn on the server"
grep -q "^ok 2/2 " "$T/pathrun.out" \
    && grep -q "^2 slides whose annotation .* was drawn, changed or removed" "$T/pathrun.out" \
    && grep -q "changed on its server since its record was made, run again: http://127.0.0.1:$NGINX_PORT/annot/a.xml: " "$T/lpath/qc.log" \
    && grep -q "run again: http://127.0.0.1:$NGINX_PORT/annot/b.xml: not there when its record was made, there now" "$T/lpath/qc.log" \
    || fail "local slides, annotations redrawn and drawn at a file_path URL: both expected to run again: $(cat "$T/pathrun.out")"
pathrun "nothing changed since"
grep -q "^nothing to run" "$T/pathrun.out" || fail "local slides, file_path a URL: a rerun after the rerun ran: $(cat "$T/pathrun.out")"
pass "local slides whose file_path is a URL: an annotation redrawn or drawn on the server runs its slide again, an unchanged one is skipped"

# an annotation too large to read fails its slide; put right, the slide
# runs again
cp "$T/www/a.svs" "$T/www/z.svs"
truncate -s 300M "$T/www/z.xml"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/beside.ini" -o "$T/big" "$(url z.svs)" \
    >"$T/big.out" 2>&1
[ $? -eq 1 ] && grep -q "z.xml: too large" "$T/big/error.log" \
    || fail "a 300 MB annotation: its slide expected to fail as too large: $(tail -3 "$T/big.out")"
cp "$T/elsewhere/a.xml" "$T/www/z.xml"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -c "$T/beside.ini" -o "$T/big" "$(url z.svs)" \
    >"$T/big.out" 2>&1 || fail "the annotation put right: $(tail -3 "$T/big.out")"
grep -q "^ok 1/1 z.svs" "$T/big.out" && grep -q "z.xml: 314572800 bytes when its record was made, $(wc -c <"$T/elsewhere/a.xml") now" "$T/big.out" && [ -n "$(column "$T/big" z.svs getAnnotationMask)" ] \
    || fail "an annotation too large, then put right: its slide expected to run again: $(cat "$T/big.out")"
pass "an annotation by URL too large to read fails its slide; replaced by one that reads, the slide runs again"

# 6. annotations that cross themselves (a freehand outline closed past
# its start, a region gone round twice), drawn as HistoQC draws them:
# what shapely's buffer(0) makes of each polygon, checked against
# shapely itself pixel by pixel (annot_buffer0.py)
PY=/usr/bin/python3     # Debian's, where python3-shapely installs
mkdir -p "$T/cross"
for i in $(seq 0 11); do
    ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/cross/r$i.svs"
done
$PY "$ROOT/tests/integration/annot_buffer0.py" make "$T/cross" 12 20261202 \
    || fail "annot_buffer0.py make"
printf '[pipeline]\nsteps = AnnotationModule.saveAnnotationMask\n[AnnotationModule.saveAnnotationMask]\nformat: json\n' \
    >"$T/cross.ini"
"$BIN/qc-submit" -c "$T/cross.ini" -o "$T/cross-out" "$T"/cross/r*.svs >"$T/cross.log" 2>&1 \
    || fail "self-crossing annotations: $(tail -3 "$T/cross.log")"
$PY "$ROOT/tests/integration/annot_buffer0.py" check "$T/cross" 12 "$T/cross-out" 2220 \
    >"$T/cross-check.log" 2>&1 || fail "self-crossing annotations drawn otherwise than shapely's buffer(0): $(cat "$T/cross-check.log")"
pass "self-crossing annotations drawn as HistoQC's buffer(0) makes them: $(tail -1 "$T/cross-check.log")"

# 7. a file_path folder only the workers have: a worker in a mount
# namespace of its own, where $T/wroot (empty here) holds $T/wsrc's
# files, and so the folder $T/wroot/annots (not here). Its worker says
# which version of a.xml it read, and that b.xml was not there in a
# folder it has; this machine has no such folder, so a rerun cannot
# tell and says so; once it has the folder, it compares what it sees
# with what the worker read
mkdir -p "$T/wroot" "$T/wsrc/annots"
cp -p "$T/elsewhere/a.xml" "$T/wsrc/annots/a.xml"
# as root, a mount namespace; else in a user namespace of its own too
ns=()
for try in "-m" "-rm"; do
    if unshare $try sh -c 'mount --bind "$1" "$2" && test -f "$2/annots/a.xml"' sh \
            "$T/wsrc" "$T/wroot" >"$T/unshare.log" 2>&1; then
        ns=(unshare $try)
        break
    fi
done
[ ${#ns[@]} -gt 0 ] || skip "section 7: no mount namespace can be made here: $(cat "$T/unshare.log")"
[ ! -e "$T/wroot/annots" ] || fail "the namespace's mount is seen outside it"
wport=$(free_port)
start_broker $wport --heartbeat-ms 200
( exec "${ns[@]}" sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh \
    "$T/wsrc" "$T/wroot" "$BIN/qc-worker" --connect "tcp://127.0.0.1:$wport" --name nsworker \
    --slots 2 --heartbeat-ms 200 >>"$T/worker-nsworker.log" 2>&1 ) &
PIDS+=($!)
wait_for "the worker in its namespace registered" 10 "workers_registered $wport 1" \
    "$T/worker-nsworker.log"
cfg "$T/wonly.ini" "$T/wroot/annots"
wrun() {   # wrun WHAT [qc-submit args...]
    local what=$1; shift
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$wport -c "$T/wonly.ini" -o "$T/wo" "$@" \
        "$T/slides/a.svs" "$T/slides/b.svs" >"$T/wrun.out" 2>&1 \
        || fail "file_path only the worker has ($what): $(tail -3 "$T/wrun.out")"
}
wrun "first"
v=$(column "$T/wo" a.svs getAnnotationMask)
awk -v v="$v" 'BEGIN { exit !(v > 0.45 && v < 0.55) }' \
    || fail "a.svs: getAnnotationMask '$v' with a.xml only the worker sees, about 0.5 expected"
grep -q "^$T/slides/a.svs	w	$T/wroot/annots/a.xml	$(wc -c <"$T/wsrc/annots/a.xml")	$(stat -c %Y "$T/wsrc/annots/a.xml")\." "$T/wo/.qc-stamps" \
    && grep -q "^$T/slides/b.svs	w	$T/wroot/annots/b.xml	-1	" "$T/wo/.qc-stamps" \
    || fail "the worker's versions of a.xml and b.xml not stamped: $(grep "	[iw]	" "$T/wo/.qc-stamps")"
wrun "nothing changed, nothing seen here"
grep -q "^nothing to run" "$T/wrun.out" \
    && grep -q "^2 slides whose annotation only the workers see .* could not be checked" "$T/wrun.out" \
    && grep -q "WARNING.*$T/wroot/annots/a.xml, beside $T/slides/a.svs, is in a folder its worker has (it read the file there, or found none) and this machine does not" "$T/wo/qc.log" \
    && grep -q "WARNING.*$T/wroot/annots/b.xml, beside $T/slides/b.svs, is in a folder" "$T/wo/qc.log" \
    || fail "a rerun that cannot see the annotations: skipped, and said, expected: $(cat "$T/wrun.out")"
# this machine has the folder now, and in it the same a.xml (copied
# with its time) and no b.xml, as the worker had: both the same
mkdir "$T/wroot/annots"
cp -p "$T/wsrc/annots/a.xml" "$T/wroot/annots/a.xml"
wrun "the folder seen here, as the worker had it"
grep -q "^nothing to run" "$T/wrun.out" && ! grep -q "only the workers see" "$T/wrun.out" \
    || fail "the folder seen here as the worker had it: both skipped, told, expected: $(cat "$T/wrun.out")"
# redrawn since: run again; and -f runs both
echo >>"$T/wroot/annots/a.xml"
wrun "a.xml seen here, redrawn"
grep -q "^ok 1/1 a.svs" "$T/wrun.out" && grep -q "^1 slide whose annotation .* was drawn, changed or removed" "$T/wrun.out" \
    || fail "a.xml seen here, redrawn since the worker read it: a.svs expected to run again: $(cat "$T/wrun.out")"
wrun "-f" -f
grep -q "^ok 2/2 " "$T/wrun.out" || fail "-f: both slides expected to run: $(cat "$T/wrun.out")"
pass "a file_path folder only the workers have: each worker says which annotation it read or that none was there; a rerun that cannot see them says it cannot tell and skips, one that sees the file compares it with the worker's"
