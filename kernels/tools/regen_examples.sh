#!/bin/sh
# Rebuilds the project's classifier examples: paints them with
# kernels/tools/mkexamples.c over the H&E images of TEXTURES (default
# ../shared/textures) into kernels/classify/examples/ (the build embeds
# them in the library, see the Makefile and embed_examples.sh, so that
# workers without these files can still train). Run from the repository
# root:
#     sh kernels/tools/regen_examples.sh [TEXTURES] [BUILD]
set -e
TEX=${1:-../shared/textures}
B=${2:-build}
make BUILD="$B" "$B/tools/mkexamples"
"$B/tools/mkexamples" "$TEX" kernels/classify/examples
ls -l kernels/classify/examples/*.png | awk '{ s += $5 } END { print s " bytes of examples" }'
