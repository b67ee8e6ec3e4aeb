/* The focus measure of one 8 x 8 block of a level's pixels, defined once
 * for both ways a block reaches it: as a JPEG tile's DCT coefficients
 * (kernels/slide/tiff_blocks.c, no inverse DCT) or as RGB pixels
 * (slide_blocks.c, any reader).
 *
 *   hf    the RMS, in gray levels, of the block's luma detail at the DCT
 *         frequencies u + v >= band (of 0..14; QC_BLOCK_HF_BAND at the
 *         magnification asked for, lower on a finer level): the
 *         orthonormal 8 x 8 DCT keeps energy (Parseval), so this is the
 *         amplitude of the block's fine detail per pixel. JPEG's DCT is
 *         that orthonormal DCT, so a tile's dequantised coefficients give
 *         it directly; from pixels it is the block's whole energy less
 *         its low frequencies (10 coefficients computed, not 64).
 *   mid   the RMS of its luma detail at the frequencies below the band,
 *         1 <= u + v < band: its structure at coarser scales. A focus
 *         fault takes the band's detail and keeps most of this (at 10x a
 *         1 um fault: the band's median down to 0.23 of sharp tissue's,
 *         this one's to 0.73), while weak staining scales both alike
 *         (tissue at a third of its stain: 0.51 and 0.55), so the ratio
 *         hf / mid tells a focus fault from pale tissue in focus
 *         (kernels/modules/focus_algo.h).
 *   luma  the block's mean luma, 0..255 (JPEG's Y: .299 R + .587 G +
 *         .114 B), for leaving glass and holes out.
 *
 * Why u + v >= 5 at 10x: a Gaussian blur of sigma s pixels keeps exp
 * (-2 pi^2 s^2 f^2) of frequency f; DCT index k is f = k / 16 cycles a
 * pixel. At 10x (1 um a pixel) a 1 um focus fault keeps 15% of the
 * amplitude at k = 5 and 2% at k = 7, while JPEG's quantisation (quality
 * 70-90) still leaves sharp tissue coefficients there. A lower band
 * (4) separated a 1 um fault less from real tissue that is smooth but in
 * focus, a higher one (6) left blocks with no coefficient at all.
 * Figures: blur_focus.c. */
#ifndef QC_BLOCK_MEASURE_H
#define QC_BLOCK_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#define QC_BLOCK_HF_BAND 5
/* Bands run 1..QC_BLOCK_BAND_MAX (others are clamped to it). */
#define QC_BLOCK_BAND_MAX 5

/* One block from its dequantised luma DCT coefficients F (natural order,
 * F[v * 8 + u], JPEG's scale: F[0] = 8 x (mean - 128)). */
void qc_block_from_dct (const float F[64], int band, float *hf, float *mid,
                        float *luma);

/* The same block straight from its quantised coefficients: ncomp (1 or
 * 3) components' blocks coef[c] (natural order, as libjpeg gives them)
 * and their dequantisation tables q[c] (JPEG's quantval times each
 * component's luma weight). F[k] = coef[0][k] q[0][k] (+ coef[1][k]
 * q[1][k] + coef[2][k] q[2][k]), as the caller of qc_block_from_dct
 * would make it, and the same hf and luma bit for bit: the band's sum
 * adds the same squares in the same order, only skipping the zero ones
 * (adding +0 changes no float), which after JPEG's quantisation are most
 * of a block's high frequencies; mid likewise. NULL coef or q, or ncomp
 * other than 1 or 3: hf, mid and luma 0. */
void qc_block_from_coefs (const int16_t *const coef[], const float q[][64],
                          int ncomp, int band, float *hf, float *mid,
                          float *luma);

/* One block from RGB pixels: 8 rows of 8 pixels, row r at rgb + r *
 * stride. */
void qc_block_from_rgb (const uint8_t *rgb, size_t stride, int band,
                        float *hf, float *mid, float *luma);

#endif
