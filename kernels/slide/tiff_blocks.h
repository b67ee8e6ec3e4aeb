/* The direct TIFF reader's block measure (source.h's blocks_* entries):
 * a JPEG-tiled level's 8 x 8 blocks measured (block_measure.h) from each
 * tile's DCT coefficients, which libjpeg's jpeg_read_coefficients gives
 * after entropy decoding alone: no inverse DCT, no upsampling of the
 * chroma, no colour conversion, no pixels.
 *
 * Why by hand beside libtiff's own decoding (TIFFReadEncodedTile, which
 * the direct reader uses for pixels): a focus step needs a tissue
 * tile's sharpness, not its pixels, and the coefficients hold it. On the
 * 60,000 x 45,000 generated slide's 10x level (513 tissue tiles, 8.7 MB
 * of JPEG) libjpeg gave the coefficients in 0.061-0.063 s and the
 * pixels in 0.096 s, and the whole focus step took 0.12 s from
 * coefficients against 0.25-0.27 s from the pixels, which need a forward
 * DCT again (tests/bench/README.md, "The focus step").
 *
 * The raw tiles (TIFFReadRawTile) are abbreviated JPEG streams whose
 * tables are in the directory's JPEGTables (generated slides, Aperio);
 * those are loaded once a session. Tiles in YCbCr give their Y
 * component's coefficients; RGB tiles (Aperio's "JPEG/RGB") the
 * luma-weighted sum of their three. Anything unusual (a libjpeg warning
 * or error, a tile with no bytes, sampling this does not expect) makes
 * the read QC_SLIDE_NEXT_READER, and those blocks come from pixels. A
 * session is one thread's. */
#ifndef QC_TIFF_BLOCKS_H
#define QC_TIFF_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

void *qc_tiff_blocks_open (void *reader, int level, int band, char *why,
                           size_t whylen);
int qc_tiff_blocks_read (void *session, int64_t bx, int64_t by, int nbx,
                         int nby, float *hf, float *mid, float *luma, uint64_t *bytes,
                         char *why, size_t whylen);
void qc_tiff_blocks_tile (const void *session, int *tile_w, int *tile_h);
void qc_tiff_blocks_close (void *session);

#endif
