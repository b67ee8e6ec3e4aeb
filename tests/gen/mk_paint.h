/* Painting one tile of one pyramid level, straight from the scene: every
 * level is painted at its own scale (textures from the matching mip,
 * outlines anti-aliased over the level's pixel footprint), so no level is
 * ever held whole and levels can be painted in any order or thread. */
#ifndef MK_PAINT_H
#define MK_PAINT_H

#include <stdint.h>

#include "tests/gen/mk_field.h"
#include "tests/gen/mk_scene.h"
#include "tests/gen/mk_texture.h"

typedef struct {
    const mk_scene_t *scene;
    const mk_field_t *field;
    const mk_texset_t *tex;
    int tile;
    /* Per blob, per density level (the pale rows below level 0 first,
     * mk_field.h), per channel: texture value -> painted value. Stain
     * changes are products in optical density, which these tables turn
     * into one lookup per channel. */
    uint8_t *lut;
    float *warp;     /* seam-bending table of the texture patches */
} mk_painter_t;

/* Per-thread working memory for mk_paint_tile. */
typedef struct mk_scratch mk_scratch_t;

/* 0, or -1 when memory runs out. The painter keeps pointers to scene,
 * field and tex, which must outlive it. */
int mk_painter_init (mk_painter_t *p, const mk_scene_t *scene,
                     const mk_field_t *field, const mk_texset_t *tex, int tile);
void mk_painter_free (mk_painter_t *p);

mk_scratch_t *mk_scratch_new (int tile);
void mk_scratch_destroy (mk_scratch_t **self_p);

/* Paints tile (tx, ty) of pyramid level `level` (downsample 4^level) as
 * tile*tile packed RGB into rgb. Pixels past the image edge are painted
 * like any others (TIFF tiles are always whole). Thread-safe for distinct
 * scratch and rgb buffers. */
void mk_paint_tile (const mk_painter_t *p, int level, int tx, int ty,
                    uint8_t *rgb, mk_scratch_t *scratch);

#endif
