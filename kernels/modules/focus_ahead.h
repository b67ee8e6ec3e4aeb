/* The focus step's tiles read ahead (BlurDetectionModule.identifyFocusFaults,
 * blur_focus.c): on a GPU lane, the next slide's tissue tiles are
 * entropy-decoded and measured on CPU threads while the GPU runs the
 * steps of the slide before (module.h's prefetch), so that the step
 * itself mostly finds its blocks measured.
 *
 * Why: at 1.25x the step's tile decoding is the largest host work of a
 * GPU lane's slide (37 ms of a 0.128 s slide on 8 threads of an H100
 * machine, issue 18), and nothing can decode JPEG on the GPU here (no
 * nvJPEG). Which tiles the step reads depends on the tissue mask as it
 * is by then, which is not known ahead; the image read ahead gives a
 * good guess: a tile is read ahead when the image shows anything darker
 * than the step's max_gray over it (any colour channel at or under it,
 * which every pixel of luma under it has). The step uses a tile read
 * ahead only when it is one it would read, and reads the others itself;
 * a tile's blocks are the same numbers either way (qc_slide_blocks_read
 * of the same blocks), so the results do not depend on the guess.
 *
 * Memory: three floats a block (hf, mid and luma), 3/16 byte a level pixel, for
 * the guessed tiles only; at most FOCUS_AHEAD_MAX_BYTES, in tile order
 * (the rest are read by the step). */
#ifndef QC_FOCUS_AHEAD_H
#define QC_FOCUS_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/run/run.h"
#include "kernels/slide/slide_blocks.h"

#define FOCUS_AHEAD_MAX_BYTES ((size_t) 128 << 20)

typedef struct qc_focus_ahead qc_focus_ahead_t;

/* The blocks the step reads of tile (tx, ty) of a level of lw x lh
 * pixels in tiles of tw x th (multiples of 8): from block (*bx, *by),
 * *nbx x *nby whole blocks that start inside the level. */
void qc_focus_tile_blocks (int64_t lw, int64_t lh, int tw, int th, int tx,
                           int ty, int64_t *bx, int64_t *by, int *nbx,
                           int *nby);

/* Reads ahead, on run->read_threads threads, the blocks (band) of the
 * level's tiles that the image read ahead (qc_run_image_ahead) shows
 * anything at or under max_luma (0..255) over, and keeps them for the
 * running step (qc_run_keep_ahead). Reports nothing: without an image,
 * a session or memory it keeps nothing, and a tile that fails to read
 * is left to the step (which then says why). */
void qc_focus_read_ahead (qc_run_t *run, int level, int band,
                          float max_luma);

/* What the running step's read ahead kept, when it was for level and
 * band; else NULL. */
const qc_focus_ahead_t *qc_focus_ahead_for (const qc_run_t *run, int level,
                                            int band);

/* Tile t's (raster order) blocks, nbx x nby as qc_focus_tile_blocks
 * gives, in *hf, *mid and *luma: 1, or 0 when t was not read ahead. */
int qc_focus_ahead_tile (const qc_focus_ahead_t *a, size_t t,
                         const float **hf, const float **mid,
                         const float **luma);

/* Tiles read ahead, what reading them took (bytes, blocks: the
 * session's stats) and the seconds the read ahead took. */
void qc_focus_ahead_stats (const qc_focus_ahead_t *a, long *tiles,
                           qc_slide_blocks_stats_t *read, double *seconds);

#endif
