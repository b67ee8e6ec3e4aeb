#!/bin/sh
# Rebuilds the project's classifier examples: paints them with
# mkexamples.c over the H&E images of TEXTURES (default ../shared/textures)
# into kernels/examples/ (the build embeds them in the library, see the
# Makefile, so that workers without these files can still train). Run from the
# repository root after `make` has built the libraries:
#     sh kernels/examples/regen.sh [TEXTURES] [BUILD]
set -e
TEX=${1:-../shared/textures}
B=${2:-build}
PKGS="libzmq libczmq msgpack openslide libcurl libpng libtiff-4"
mkdir -p "$B/examples"
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I. \
    $(pkg-config --cflags $PKGS) kernels/examples/mkexamples.c \
    "$B/libqckernels.a" "$B/libqc.a" $(pkg-config --libs $PKGS) -ljpeg -lm -pthread \
    -o "$B/examples/mkexamples"
"$B/examples/mkexamples" "$TEX" kernels/examples
ls -l kernels/examples/*.png | awk '{ s += $5 } END { print s " bytes of examples" }'
