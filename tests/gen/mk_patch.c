/* Per-tile set-up of a blob's texture patches, and choosing a patch. */
#include "tests/gen/mk_patch.h"

#include <math.h>

/* Smooth value noise that repeats every n lattice cells. */
static double
periodic_noise (uint32_t key, double x, double y, int n)
{
    double fx = floor (x), fy = floor (y);
    int ix = (int) fx, iy = (int) fy;
    double tx = x - fx, ty = y - fy;
    tx = tx * tx * tx * (tx * (tx * 6 - 15) + 10);
    ty = ty * ty * ty * (ty * (ty * 6 - 15) + 10);
    double v[4];
    for (int k = 0; k < 4; k++) {
        uint32_t lx = (uint32_t) (((ix + (k & 1)) % n + n) % n);
        uint32_t ly = (uint32_t) (((iy + (k >> 1)) % n + n) % n);
        v[k] = mk_hash2 (lx, ly, key) * (2.0 / 4294967295.0) - 1.0;
    }
    double top = v[0] + (v[1] - v[0]) * tx, bot = v[2] + (v[3] - v[2]) * tx;
    return top + (bot - top) * ty;
}

void
mk_warp_build (float *warp, uint64_t seed)
{
    /* Lattice of 20 cells per 16 patches: bends about 0.8 patch long,
     * plus an octave at half that. */
    const int lat = 20;
    for (int y = 0; y < MK_WARP_N; y++)
        for (int x = 0; x < MK_WARP_N; x++)
            for (int k = 0; k < 2; k++) {
                uint32_t key = (uint32_t) mk_mix64 (seed * 2 + (uint64_t) k + 77);
                double u = (double) x * lat / MK_WARP_N;
                double v = (double) y * lat / MK_WARP_N;
                double n = (periodic_noise (key, u, v, lat)
                            + 0.5 * periodic_noise (key + 1, 2 * u, 2 * v,
                                                    2 * lat)) / 1.5;
                warp[2 * (y * MK_WARP_N + x) + k] = (float) (0.8 * n);
            }
}

void
mk_patchmap_setup (mk_patchmap_t *pm, const mk_texture_t *t,
                   const mk_blob_t *b, const float *warp, double tex_scale,
                   double blur_sigma, double focus_sigma, double d,
                   const double *X, const double *Y, int n, int32_t *cu,
                   int32_t *cv, int32_t *ru, int32_t *rv)
{
    int m = mk_mip_for (d, tex_scale);
    if (m >= t->nmips)
        m = t->nmips - 1;
    const mk_mip_t *mp = &t->mip[m];
    int w0 = t->mip[0].w, h0 = t->mip[0].h;
    pm->sharp = mp->sharp;
    pm->blurred = mp->blurred ? mp->blurred : mp->sharp;
    pm->sharp_t = mp->sharp_t;
    pm->blurred_t = mp->blurred_t ? mp->blurred_t : mp->sharp_t;
    pm->soft = mp->soft ? mp->soft : mp->sharp;
    pm->soft_t = mp->soft_t ? mp->soft_t : mp->sharp_t;
    pm->wm = mp->w;
    pm->hm = mp->h;
    pm->rw = (double) w0 / mp->w;
    pm->rh = (double) h0 / mp->h;
    /* A quarter of the image's shorter side at most, so that a patch
     * with the reach of its bent and faded seams (below) fits inside the
     * image with room to move. */
    double side = 0.25 * (w0 < h0 ? w0 : h0);
    pm->side = side < MK_PATCH_TEXELS ? side : MK_PATCH_TEXELS;
    double side_px = pm->side / tex_scale;
    pm->inv_px = (float) (1.0 / side_px);
    pm->warp = warp;
    double fade = 2.5 * blur_sigma / side_px;
    pm->blur_fade = (float) (fade < MK_PATCH_FADE ? MK_PATCH_FADE
                             : fade > 0.35 ? 0.35 : fade);
    fade = 2.5 * focus_sigma / side_px;
    pm->focus_fade = (float) (fade < MK_PATCH_FADE ? MK_PATCH_FADE
                              : fade > 0.35 ? 0.35 : fade);
    /* A patch is sampled up to 0.5 (warp) + 0.35 (widest fade) of a side
     * beyond its own square: offsets keep that much clear of the image's
     * edges, so patches do not fold back into mirror images, whose
     * creases would show as sharp lines in blurred tissue. */
    double reach = 0.85 * pm->side;
    pm->marginw = (int) (reach / pm->rw);
    pm->marginh = (int) (reach / pm->rh);
    pm->spanw = mp->w - (int) ((pm->side + 2 * reach) / pm->rw);
    pm->spanh = mp->h - (int) ((pm->side + 2 * reach) / pm->rh);
    if (pm->spanw < 1)
        pm->spanw = 1;
    if (pm->spanh < 1)
        pm->spanh = 1;
    pm->key = b->key;
    for (int k = 0; k < 4; k++)
        pm->cache[k].valid = 0;
    for (int i = 0; i < n; i++) {
        cu[i] = (int32_t) floor (X[i] * tex_scale / pm->rw);
        cv[i] = (int32_t) floor (X[i] * tex_scale / pm->rh);
        ru[i] = (int32_t) floor (Y[i] * tex_scale / pm->rw);
        rv[i] = (int32_t) floor (Y[i] * tex_scale / pm->rh);
    }
}

const mk_patch_t *
mk_patch_get (mk_patchmap_t *pm, int pi, int pj)
{
    mk_patch_t *p = &pm->cache[(pi & 1) | (pj & 1) << 1];
    if (p->valid && p->pi == pi && p->pj == pj)
        return p;
    uint32_t h = mk_hash2 ((uint32_t) pi, (uint32_t) pj, pm->key);
    p->pi = pi;
    p->pj = pj;
    p->valid = 1;
    p->turn = h & 1u;
    p->flipu = h >> 1 & 1u;
    p->flipv = h >> 2 & 1u;
    int ou = pm->marginw
             + (int) (((h >> 3) & 0x3fffu) * (uint32_t) pm->spanw >> 14);
    int ov = pm->marginh
             + (int) (((h >> 17) & 0x3fffu) * (uint32_t) pm->spanh >> 14);
    /* Texel index = table value - patch origin + offset. A turned patch
     * runs the image's width along Y and its height along X. */
    int ax = p->turn ? pj : pi, ay = p->turn ? pi : pj;
    p->du = ou - (int) floor (ax * pm->side / pm->rw);
    p->dv = ov - (int) floor (ay * pm->side / pm->rh);
    return p;
}
