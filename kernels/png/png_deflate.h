/* A deflate encoder for image rows: what zlib does with the Z_RLE
 * strategy (copies at distance 1 only: runs of one byte value), with
 * deflate's dynamic Huffman codes, in one pass over the data.
 *
 * Why: the default pipeline writes two 1875 x 1407 RGB PNGs and three
 * gray ones per slide at 1.25x, and zlib was a visible share of a
 * slide's time, though already at its fastest setting (Z_RLE, level 1;
 * Huffman-only, the default strategy and libdeflate were all slower).
 * zlib's RLE looks at every byte through its general match machinery;
 * this one finds runs with a plain scan, writes each block's codes once,
 * two literals a write, and sums the Adler-32 32 bytes a step: a few
 * times faster, the same pixels, about the same size (the figures:
 * tests/bench/README.md, "Figures behind the code"). */
#ifndef QC_PNG_DEFLATE_H
#define QC_PNG_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/png/png_bits.h"

/* Appends the zlib stream (header, deflate blocks, Adler-32) of
 * src[0..n) to z. 0, or -1 when memory ran out (z->failed set). */
int qc_deflate_rle (const uint8_t *src, size_t n, qc_bitw_t *z);

#endif
