/* The field grid: the scene's slowly varying quantities sampled on a
 * coarse grid (at most ~1024 cells along the long side) and read back
 * with bilinear interpolation. Painting a tile then costs a few loads and
 * multiplies per pixel instead of evaluating every shape, and a 60k x 45k
 * slide needs no full-size buffer. Tissue is stored as a signed distance
 * so that its outline stays sharp at level 0 however coarse the grid. */
#ifndef MK_FIELD_H
#define MK_FIELD_H

#include <stddef.h>
#include <stdint.h>

#include "tests/gen/mk_scene.h"

/* Stain density levels of the per-blob colour tables (mk_paint.c):
 * level k stands for density MK_DENS_MIN * (MK_DENS_MAX/MK_DENS_MIN)^(k/63).
 * The field's density stays in 0..63; only pale patches reach below, to
 * level -MK_DENS_PALE_ROWS (density ~0.07): a 0.33 factor takes ~27
 * levels off, and the lightest tissue sits near level 15. */
#define MK_DENS_LEVELS 64
#define MK_DENS_MIN 0.35
#define MK_DENS_MAX 4.5
#define MK_DENS_PALE_ROWS 40

typedef struct {
    float tissue;    /* signed distance to the tissue outline, level-0 px,
                        negative inside */
    float dens;      /* stain density as a level index, 0..63 */
    float fold;      /* 0..1: how much of a fold is here */
    float blur;      /* 0..1: how blurred (coarse, ~15 um) */
    float focus;     /* 0..1: how far a focus fault (1-3 um) reaches */
    float pale;      /* 0..1: how far a pale (weakly stained) patch reaches */
    float pen_a;     /* 0..1: strongest ink opacity here */
    float pen_t[3];  /* per-channel transmittance of all ink here */
    float glass;     /* illumination offset of the glass, grey levels */
} mk_cell_t;

typedef struct {
    int gw, gh;
    double cell;         /* level-0 pixels per cell */
    mk_cell_t *cells;    /* gw*gh, row-major */
    uint8_t *owner;      /* blob whose outline is nearest, per cell */
} mk_field_t;

/* Samples the scene onto the grid. 0, or -1 when memory runs out. */
int mk_field_build (mk_field_t *f, const mk_scene_t *scene);
void mk_field_free (mk_field_t *f);

/* Grid coordinate of level-0 position x: cell i's centre is at
 * (i + 0.5) * cell. Gives the lower cell (clamped so that i+1 exists)
 * and the blend weight towards i+1. */
static inline void
mk_field_coord (double x, double cell, int n, int *i, float *frac)
{
    double g = x / cell - 0.5;
    if (g <= 0 || n < 2) {
        *i = 0;
        *frac = 0;
        return;
    }
    if (g >= n - 1) {
        *i = n - 2;
        *frac = 1;
        return;
    }
    int k = (int) g;
    *i = k;
    *frac = (float) (g - k);
}

/* Full interpolated cell at a level-0 position (used by the truth masks;
 * the painter inlines only the members it needs). */
void mk_field_sample (const mk_field_t *f, double x, double y, mk_cell_t *out);

#endif
