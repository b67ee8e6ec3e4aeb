#!/bin/sh
# Checks kernels/'s layering (kernels/README.md): a file includes only
# files of its own folder and of the layers below it, every folder under
# kernels/ has a layer, and each outside library is included by the one
# layer that wraps it. Prints every breach and exits 1 when there is
# one, 0 when there is none.
#
#     sh tests/tools/check_layers.sh [ROOT]     (default: the current folder)
#
# The layers, top to bottom (a higher rank may include a lower one; two
# folders of one rank may not include each other; ops/cuda may include
# ops/cpu, whose functions fill the CUDA table's CPU slots, and so may
# ops/sim, the simulated device that runs them on "device" bytes; tools/ holds
# programs that write the library's data, above everything):
LAYERS='
tools      90
pipeline   70
modules    60
run        50
classify   40
slide      40
annot      40
png        30
ops/sim    23
ops/cuda   22
ops/cpu    21
ops        20
image      10
assets      5
'
# Outside libraries and the folders that may include each (one, but
# libjpeg: the slide reads with it, and ops/cpu's decode_jpeg decodes a
# slide's tiles with it as a device would, for the simulated device and
# as the reference the GPU's nvJPEG is compared with).
OWNERS='
openslide.h slide
tiffio.h    slide
jpeglib.h   slide,ops/cpu
png.h       png
zlib.h      png
'
set -eu
ROOT=${1:-.}
cd "$ROOT"
[ -d kernels ] || { echo "check_layers: no kernels/ in $ROOT" >&2; exit 2; }

# Source folders (those with .c, .h or .cu files), then every include of
# a project file or a listed library, as "F path" and "I path line what"
# lines for one awk pass.
{
    find kernels \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) \
        | sed 's|/[^/]*$||' | LC_ALL=C sort -u | sed 's|^|F |'
    find kernels \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) \
        -exec grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' {} + \
        | sed -n 's|^\([^:]*\):\([0-9]*\):[^"<]*["<]\([^">]*\)[">].*|I \1 \2 \3|p'
} | awk -v layers="$LAYERS" -v owners="$OWNERS" '
function layer (p,    i, best, n) {      # longest listed folder of p
    best = ""
    for (n in rank)
        if ((index (p, n "/") == 1 || p == n) && length (n) > length (best))
            best = n
    return best
}
BEGIN {
    n = split (layers, l, "\n")
    for (i = 1; i <= n; i++) if (split (l[i], f, " ") == 2) rank[f[1]] = f[2]
    n = split (owners, l, "\n")
    for (i = 1; i <= n; i++) if (split (l[i], f, " ") == 2) owner[f[1]] = f[2]
    bad = 0
}
$1 == "F" {
    d = substr ($2, 9)
    if (d != "" && layer (d) == "") {
        print $2 ": a folder with no layer (add it to tests/tools/check_layers.sh and kernels/README.md)"
        bad = 1
    }
    next
}
$1 == "I" {
    file = $2; line = $3; inc = $4
    from = layer (substr (file, 9))
    if (from == "") next                  # its folder is reported above
    if (inc in owner) {
        if (index ("," owner[inc] ",", "," from ",") == 0) {
            who = owner[inc]
            gsub (/,/, "/ and kernels/", who)
            print file ": includes <" inc ">, which only kernels/" who "/ may include"
            bad = 1
        }
        next
    }
    if (index (inc, "kernels/") != 1) next
    to = layer (substr (inc, 9))
    if (to == "") {
        print file ":" line ": includes " inc ", which is in no layer"
        bad = 1
    } else if (to != from && !(from == "ops/cuda" && to == "ops/cpu") \
               && rank[to] + 0 >= rank[from] + 0) {
        print file ":" line ": " from " (layer " rank[from] ") includes " inc \
              " (" to ", layer " rank[to] "): only lower layers may be included"
        bad = 1
    }
}
END {
    if (!bad) print "kernels/: every include goes down a layer"
    exit bad
}'
