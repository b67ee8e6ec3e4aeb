/* The check of a decode_jpeg batch that every backend makes, and
 * whether a lane decodes at all (ops.h). */
#include "kernels/ops/ops.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int
qc_jpeg_decode_wanted (int by_default)
{
    const char *env = getenv ("QC_GPU_DECODE");
    return env && *env ? strcmp (env, "0") != 0 : by_default != 0;
}

/* JPEG's largest side, and one tile's pixels at most. */
#define MAX_TILE_SIDE 65500
#define MAX_TILE_PIXELS ((size_t) 1 << 26)

int
qc_jpeg_batch_check (const qc_jpeg_batch_t *b)
{
    if (!b || (b->n > 0 && !b->tiles) || b->tile_w < 1 || b->tile_h < 1
        || b->tile_w > MAX_TILE_SIDE || b->tile_h > MAX_TILE_SIDE
        || (size_t) b->tile_w * (size_t) b->tile_h > MAX_TILE_PIXELS)
        return -1;
    for (size_t i = 0; i < b->n; i++) {
        const qc_jpeg_tile_t *t = &b->tiles[i];
        /* libjpeg's memory source takes an unsigned long */
        if (!t->data || t->size < 4 || t->size > (size_t) ULONG_MAX || t->w < 1
            || t->h < 1 || t->w > b->tile_w || t->h > b->tile_h)
            return -1;
    }
    return 0;
}
