/* Writing the pyramid: one tiled, JPEG-compressed TIFF directory per
 * level. Worker threads paint and encode tiles in parallel; the calling
 * thread writes the finished tiles in order with TIFFWriteRawTile, so the
 * file is byte-identical whatever the thread count or timing. */
#ifndef MK_TIFF_H
#define MK_TIFF_H

#include <stddef.h>

#include "tests/gen/mk_paint.h"

#define MK_MAX_LEVELS 16

typedef struct {
    int n;
    int w[MK_MAX_LEVELS], h[MK_MAX_LEVELS];
} mk_levels_t;

/* Level 0 is w x h; each next level is 4x smaller (rounded up) until the
 * longer side is at most 1024 pixels. */
void mk_levels_compute (mk_levels_t *lv, int w, int h);

typedef struct {
    const char *path;
    const mk_painter_t *painter;
    const mk_levels_t *levels;
    int quality;
    int threads;
    int bigtiff;                        /* 1: BigTIFF, 0: classic TIFF */
    const char *desc[MK_MAX_LEVELS];    /* ImageDescription per level (NULL: none) */
    int subifds;                        /* 1: levels past 0 are level 0's SubIFDs
                                           (an OME-TIFF's pyramid), marked reduced */
} mk_pyramid_job_t;

/* Writes the whole file to job->path (through a temporary name, renamed
 * on success, so a failed run never leaves a half file under the real
 * name). 0, or -1 with err. */
int mk_pyramid_write (const mk_pyramid_job_t *job, char *err, size_t errlen);

#endif
