/* A slide level's 8 x 8 pixel blocks, measured for focus
 * (kernels/slide/block_measure.h: each block's fine-detail amplitude and
 * mean luma), a region at a time, for a step that reads only some tiles
 * of a large level (the tissue's) and never holds the level.
 *
 * The slide chooses how, as it chooses its readers for pixels: the first
 * of its readers that measures blocks itself (the direct TIFF reader,
 * from JPEG tiles' coefficients: kernels/slide/tiff_blocks.h) and opens
 * a session for the level measures them; where none does (OpenSlide's
 * formats, JPEG 2000, uncompressed tiles), or for a read that reader
 * gives up on (a damaged tile), the blocks are measured from the pixels
 * qc_slide_read_rows gives. Both give the same measure (the pixels' is
 * unquantised: slightly higher on sharp tissue, the same on blurred).
 *
 * Block (bx, by) covers the level's pixels [8 bx, 8 bx + 8) x [8 by,
 * 8 by + 8). A qc_slide_blocks_t is one thread's. */
#ifndef QC_SLIDE_BLOCKS_H
#define QC_SLIDE_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/slide/slide.h"

typedef struct qc_slide_blocks qc_slide_blocks_t;

/* What a session read, for logs, tests and benchmarks. */
typedef struct {
    uint64_t coded_bytes;     /* compressed tile bytes measured as
                                 coefficients */
    uint64_t pixels;          /* pixels decoded and measured as pixels */
    uint64_t blocks;          /* blocks measured, both ways */
    uint64_t coef_reads, pixel_reads;   /* reads each way */
} qc_slide_blocks_stats_t;

/* A session on level, measuring the band u + v >= band
 * (block_measure.h). NULL with err (no such level, out of memory). */
qc_slide_blocks_t *qc_slide_blocks_open (qc_slide_t *slide, int level,
                                         int band, char *err, size_t errlen);
void qc_slide_blocks_close (qc_slide_blocks_t **self_p);

/* The tile size reads are best asked in (multiples of 8): whole tiles of
 * the level decode each tile once. */
void qc_slide_blocks_tile (const qc_slide_blocks_t *self, int *tile_w,
                           int *tile_h);
/* "JPEG coefficients (direct TIFF)" or "pixels": how reads are made
 * (pixels also for any read the first way gave up). */
const char *qc_slide_blocks_way (const qc_slide_blocks_t *self);

/* Blocks [bx, bx + nbx) x [by, by + nby): hf, mid and luma, nbx floats a
 * row.
 * Every block must start inside the level. 0, or -1 with err (the
 * reader's reason: "OpenSlide: ...", out of memory). */
int qc_slide_blocks_read (qc_slide_blocks_t *self, int64_t bx, int64_t by,
                          int nbx, int nby, float *hf, float *mid, float *luma,
                          char *err, size_t errlen);

void qc_slide_blocks_stats (const qc_slide_blocks_t *self,
                            qc_slide_blocks_stats_t *out);
/* to += s, field by field (several sessions' reads in one figure). */
void qc_slide_blocks_stats_add (qc_slide_blocks_stats_t *to,
                                const qc_slide_blocks_stats_t *s);

#endif
