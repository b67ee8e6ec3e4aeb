/* Texture patches: how a blob's tissue samples its H&E image.
 *
 * Mirrored tiling of one image shows as kaleidoscope symmetry, so tissue
 * is instead laid as square patches of up to MK_PATCH_TEXELS texels, each
 * cut from a random place of the image in one of its 8 orientations
 * (a hash of the patch position picks them, so any tile can work out any
 * patch on its own). The field's warp bends the seams between patches
 * into irregular curves, and a narrow cross-fade softens them, so they
 * read as borders between tissue regions rather than as a grid. Past the
 * image's edge a patch folds back (mirrors) instead of ending. */
#ifndef MK_PATCH_H
#define MK_PATCH_H

#include <math.h>
#include <stdint.h>

#include "tests/gen/mk_scene.h"
#include "tests/gen/mk_texture.h"
#include "tests/gen/mk_util.h"

/* Patches are at most this many texels of the source image. */
#define MK_PATCH_TEXELS 250.0
/* Cross-fade width, as a fraction of the patch side, on each side of a
 * seam. */
#define MK_PATCH_FADE 0.07f
/* The seam-bending warp is a periodic table: MK_WARP_N x MK_WARP_N samples
 * of two smooth noise fields over MK_WARP_PERIOD x MK_WARP_PERIOD patches
 * (a period far longer than any pattern the eye would follow through
 * patches whose content is chosen at random). In patch units, so seams
 * bend the same at every pyramid level and slide size. */
#define MK_WARP_N 128
#define MK_WARP_PERIOD 16

/* Fills warp (2 * MK_WARP_N^2 floats, x and y interleaved) from seed. */
void mk_warp_build (float *warp, uint64_t seed);

typedef struct {
    int pi, pj, valid;
    int turn, flipu, flipv;  /* orientation */
    int du, dv;              /* texel offsets to add to the tables */
} mk_patch_t;

typedef struct {
    const uint8_t *sharp, *blurred, *soft;  /* the mip this level samples */
    const uint8_t *sharp_t, *blurred_t, *soft_t;  /* its transposed copies */
    int wm, hm;              /* its size */
    double rw, rh;           /* mip-0 texels per texel, along w and h */
    double side;             /* patch side, mip-0 texels */
    float inv_px;            /* 1 / patch side, level-0 px */
    const float *warp;       /* mk_warp_build's table */
    float blur_fade;         /* seam fade where the tissue is blurred */
    float focus_fade;        /* and where it is out of focus */
    int marginw, marginh;    /* patch offsets start here */
    int spanw, spanh;        /* and range this far */
    uint32_t key;
    /* Recently used patches, by the parity of (pi, pj): the up to four
     * patches around a pixel never collide. */
    mk_patch_t cache[4];
} mk_patchmap_t;

/* Up to four texels (where to read them) and their weights. */
typedef struct {
    int n;
    const uint8_t *sharp[4], *blurred[4], *soft[4];
    float w[4];
} mk_texsample_t;

/* Sets pm up to paint blob b at downsample d (level-0 px per pixel)
 * with textures scaled by tex_scale (mip-0 texels per level-0 px),
 * blurred regions blurred by blur_sigma and focus faults by focus_sigma
 * (level-0 px), and
 * fills the per-column tables cu/cv (texel index of column i along the
 * image's width/height) and per-row tables ru/rv, for the n centres X[]
 * and Y[] of the tile's columns and rows. */
void mk_patchmap_setup (mk_patchmap_t *pm, const mk_texture_t *t,
                        const mk_blob_t *b, const float *warp,
                        double tex_scale, double blur_sigma,
                        double focus_sigma, double d,
                        const double *X, const double *Y, int n,
                        int32_t *cu, int32_t *cv, int32_t *ru, int32_t *rv);

/* The patch (pi, pj): orientation and offsets, from the cache or the
 * hash. */
const mk_patch_t *mk_patch_get (mk_patchmap_t *pm, int pi, int pj);

static inline int
mk_patch_fold (int x, int n)
{
    if (x < 0)
        x = -1 - x;
    if (x >= n)
        x = 2 * n - 1 - x;
    return x < 0 ? 0 : x >= n ? n - 1 : x;
}

/* Texel (u, v) of the image for patch p at the pixel, as sharp and
 * blurred pointers. A turned patch reads the transposed copy, where
 * (u, v) lies at row u, column v: along a row of pixels v changes, so
 * memory is still read in order. */
static inline void
mk_patch_texel (const mk_patchmap_t *pm, const mk_patch_t *p, int32_t cu_i,
                int32_t cv_i, int32_t ru_j, int32_t rv_j, mk_texsample_t *ts)
{
    int u = mk_patch_fold ((p->turn ? ru_j : cu_i) + p->du, pm->wm);
    int v = mk_patch_fold ((p->turn ? cv_i : rv_j) + p->dv, pm->hm);
    if (p->flipu)
        u = pm->wm - 1 - u;
    if (p->flipv)
        v = pm->hm - 1 - v;
    if (p->turn) {
        size_t off = ((size_t) u * pm->hm + v) * 3;
        ts->sharp[ts->n] = pm->sharp_t + off;
        ts->blurred[ts->n] = pm->blurred_t + off;
        ts->soft[ts->n] = pm->soft_t + off;
    } else {
        size_t off = ((size_t) v * pm->wm + u) * 3;
        ts->sharp[ts->n] = pm->sharp + off;
        ts->blurred[ts->n] = pm->blurred + off;
        ts->soft[ts->n] = pm->soft + off;
    }
}

/* Weight of the neighbouring patch at fraction f (0..1) across a patch:
 * 0.5 on the seam, 0 from `fade` inwards. *side is -1 or +1 for the
 * neighbour's direction, 0 when out of the fade. */
static inline float
mk_patch_fade (float f, float fade, int *side)
{
    float e = f < 0.5f ? f : 1 - f;
    if (e >= fade) {
        *side = 0;
        return 0;
    }
    *side = f < 0.5f ? -1 : 1;
    float t = e / fade;
    return 0.5f * (1 - t) * (1 - t);
}

/* The warp at (qx, qy) in patch units, bilinear from the periodic
 * table; each component is within about +-0.5 (a seam wanders up to half
 * a patch). */
static inline void
mk_warp_at (const float *warp, float qx, float qy, float *wx, float *wy)
{
    const float per = (float) MK_WARP_N / MK_WARP_PERIOD;
    float tx = qx * per, ty = qy * per;
    float fx = floorf (tx), fy = floorf (ty);
    int x0 = (int) fx & (MK_WARP_N - 1), y0 = (int) fy & (MK_WARP_N - 1);
    int x1 = (x0 + 1) & (MK_WARP_N - 1), y1 = (y0 + 1) & (MK_WARP_N - 1);
    fx = tx - fx;
    fy = ty - fy;
    const float *a = warp + 2 * (y0 * MK_WARP_N + x0);
    const float *b = warp + 2 * (y0 * MK_WARP_N + x1);
    const float *c = warp + 2 * (y1 * MK_WARP_N + x0);
    const float *d = warp + 2 * (y1 * MK_WARP_N + x1);
    float out[2];
    for (int k = 0; k < 2; k++) {
        float top = a[k] + (b[k] - a[k]) * fx, bot = c[k] + (d[k] - c[k]) * fx;
        out[k] = top + (bot - top) * fy;
    }
    *wx = out[0];
    *wy = out[1];
}

/* The texels for the pixel at level-0 centre (x, y), column tables at i
 * and row tables at j, where the tissue is blurred by wblur and out of
 * focus by wfocus (0..1). Blurred tissue fades across more of a patch: a
 * seam narrower than the blur would be a sharp line in it. */
static inline void
mk_patch_sample (mk_patchmap_t *pm, float x, float y, float wblur,
                 float wfocus, int32_t cu_i, int32_t cv_i, int32_t ru_j,
                 int32_t rv_j, mk_texsample_t *ts)
{
    float fade = MK_PATCH_FADE + (pm->blur_fade - MK_PATCH_FADE) * wblur;
    float ffade = MK_PATCH_FADE + (pm->focus_fade - MK_PATCH_FADE) * wfocus;
    fade = ffade > fade ? ffade : fade;
    float qx = x * pm->inv_px, qy = y * pm->inv_px, wx, wy;
    mk_warp_at (pm->warp, qx, qy, &wx, &wy);
    qx += wx;
    qy += wy;
    int pi = (int) floorf (qx), pj = (int) floorf (qy);
    int sx, sy;
    float ax = mk_patch_fade (qx - pi, fade, &sx);
    float ay = mk_patch_fade (qy - pj, fade, &sy);
    ts->n = 0;
    /* Separable weights over the patch and its neighbours across the
     * nearest vertical and horizontal seams. */
    for (int b = 0; b <= (sy != 0); b++)
        for (int a = 0; a <= (sx != 0); a++) {
            float w = (a ? ax : 1 - ax) * (b ? ay : 1 - ay);
            const mk_patch_t *p = mk_patch_get (pm, pi + a * sx, pj + b * sy);
            mk_patch_texel (pm, p, cu_i, cv_i, ru_j, rv_j, ts);
            ts->w[ts->n++] = w;
        }
}

#endif
