/* The per-pixel painter. Work is decided per tile first (which blobs,
 * bubbles, ink, blur, focus faults, pale patches and edge can reach it,
 * read from the grid cells under the tile), so that glass-only tiles
 * cost a noise hash per pixel and only tiles that need a feature pay for
 * it. */
#include "tests/gen/mk_paint.h"
#include "tests/gen/mk_patch.h"
#include "tests/gen/mk_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bubble and coverslip colours (what scanned slides show). */
static const float rim_rgb[3] = { 78, 78, 88 };
static const float edge_rgb[3] = { 52, 52, 58 };
/* Inside a bubble tissue is out of focus and pale: this many density
 * levels lighter (about 0.6x density). */
#define BUBBLE_PALE 15.0f

struct mk_scratch {
    int tile;
    double *X, *Y;         /* level-0 centre of each column / row */
    int *ix, *iy;          /* lower grid cell */
    float *fx, *fy;        /* blend towards the next cell */
    int *nx, *ny;          /* nearest grid cell */
    /* Per blob: texel index of each column / row (mk_patch.h). */
    int32_t *cu[MK_MAX_BLOBS], *cv[MK_MAX_BLOBS];
    int32_t *ru[MK_MAX_BLOBS], *rv[MK_MAX_BLOBS];
};

mk_scratch_t *
mk_scratch_new (int tile)
{
    mk_scratch_t *s = calloc (1, sizeof *s);
    if (!s)
        return NULL;
    size_t n = (size_t) tile;
    s->tile = tile;
    s->X = malloc (n * sizeof *s->X);
    s->Y = malloc (n * sizeof *s->Y);
    s->ix = malloc (n * sizeof *s->ix);
    s->iy = malloc (n * sizeof *s->iy);
    s->fx = malloc (n * sizeof *s->fx);
    s->fy = malloc (n * sizeof *s->fy);
    s->nx = malloc (n * sizeof *s->nx);
    s->ny = malloc (n * sizeof *s->ny);
    int ok = s->X && s->Y && s->ix && s->iy && s->fx && s->fy && s->nx && s->ny;
    for (int b = 0; b < MK_MAX_BLOBS; b++) {
        s->cu[b] = malloc (n * sizeof *s->cu[b]);
        s->cv[b] = malloc (n * sizeof *s->cv[b]);
        s->ru[b] = malloc (n * sizeof *s->ru[b]);
        s->rv[b] = malloc (n * sizeof *s->rv[b]);
        ok = ok && s->cu[b] && s->cv[b] && s->ru[b] && s->rv[b];
    }
    if (!ok)
        mk_scratch_destroy (&s);
    return s;
}

void
mk_scratch_destroy (mk_scratch_t **self_p)
{
    mk_scratch_t *s = *self_p;
    if (!s)
        return;
    free (s->X);
    free (s->Y);
    free (s->ix);
    free (s->iy);
    free (s->fx);
    free (s->fy);
    free (s->nx);
    free (s->ny);
    for (int b = 0; b < MK_MAX_BLOBS; b++) {
        free (s->cu[b]);
        free (s->cv[b]);
        free (s->ru[b]);
        free (s->rv[b]);
    }
    free (s);
    *self_p = NULL;
}

/* Rows per blob: the pale rows (levels -MK_DENS_PALE_ROWS..-1), then
 * levels 0..63. */
#define LUT_ROWS (MK_DENS_PALE_ROWS + MK_DENS_LEVELS)
#define LUT_SIZE ((size_t) LUT_ROWS * 3 * 256)

int
mk_painter_init (mk_painter_t *p, const mk_scene_t *scene,
                 const mk_field_t *field, const mk_texset_t *tex, int tile)
{
    memset (p, 0, sizeof *p);
    p->scene = scene;
    p->field = field;
    p->tex = tex;
    p->tile = tile;
    int nb = scene->nblobs > 0 ? scene->nblobs : 1;
    p->lut = malloc ((size_t) nb * LUT_SIZE);
    p->warp = malloc (2 * MK_WARP_N * MK_WARP_N * sizeof *p->warp);
    if (!p->lut || !p->warp) {
        mk_painter_free (p);
        return -1;
    }
    mk_warp_build (p->warp, scene->seed);
    double od[256];
    for (int v = 0; v < 256; v++)
        od[v] = -log ((v + 0.5) / 256.0);
    /* Level k's row is computed from k alone, so levels 0..63 give the
     * same values whether or not the pale rows are there. */
    for (int b = 0; b < scene->nblobs; b++)
        for (int k = -MK_DENS_PALE_ROWS; k < MK_DENS_LEVELS; k++) {
            double dens = MK_DENS_MIN * pow (MK_DENS_MAX / MK_DENS_MIN,
                                             (double) k / (MK_DENS_LEVELS - 1));
            for (int c = 0; c < 3; c++) {
                uint8_t *t = p->lut + (size_t) b * LUT_SIZE
                             + ((size_t) (k + MK_DENS_PALE_ROWS) * 3 + c) * 256;
                double g = dens * scene->blob[b].stain[c];
                for (int v = 0; v < 256; v++)
                    t[v] = (uint8_t) mk_clamp (256.0 * exp (-od[v] * g), 0, 255);
            }
        }
    return 0;
}

void
mk_painter_free (mk_painter_t *p)
{
    free (p->lut);
    free (p->warp);
    p->lut = NULL;
    p->warp = NULL;
}

/* What can reach one tile. */
typedef struct {
    double d;              /* level downsample, level-0 px per pixel */
    int tissue, full, pen, blur, focus, pale;
    unsigned owners;       /* bit per blob present under the tile */
    int nbub;
    const mk_bubble_t *bub[MK_MAX_BUBBLE];
    int edge_near;         /* the edge line or its halo may be here */
    float glass_shift;     /* when not near: outside the coverslip or not */
    mk_patchmap_t patch[MK_MAX_BLOBS];
} tile_plan_t;

static void
plan_tile (const mk_painter_t *p, mk_scratch_t *s, int level, int tx, int ty,
           tile_plan_t *tp)
{
    const mk_scene_t *sc = p->scene;
    const mk_field_t *f = p->field;
    int T = p->tile;
    memset (tp, 0, sizeof *tp);
    tp->d = (double) (1L << (2 * level));
    for (int i = 0; i < T; i++) {
        s->X[i] = ((double) tx * T + i + 0.5) * tp->d;
        mk_field_coord (s->X[i], f->cell, f->gw, &s->ix[i], &s->fx[i]);
        s->nx[i] = s->ix[i] + (s->fx[i] >= 0.5f);
        s->Y[i] = ((double) ty * T + i + 0.5) * tp->d;
        mk_field_coord (s->Y[i], f->cell, f->gh, &s->iy[i], &s->fy[i]);
        s->ny[i] = s->iy[i] + (s->fy[i] >= 0.5f);
    }
    float tmin = 1e30f, tmax = -1e30f, pen = 0, blur = 0, focus = 0, pale = 0;
    for (int j = s->iy[0]; j <= s->iy[T - 1] + 1; j++)
        for (int i = s->ix[0]; i <= s->ix[T - 1] + 1; i++) {
            const mk_cell_t *c = &f->cells[(size_t) j * f->gw + i];
            tmin = c->tissue < tmin ? c->tissue : tmin;
            tmax = c->tissue > tmax ? c->tissue : tmax;
            pen = c->pen_a > pen ? c->pen_a : pen;
            blur = c->blur > blur ? c->blur : blur;
            focus = c->focus > focus ? c->focus : focus;
            pale = c->pale > pale ? c->pale : pale;
            tp->owners |= 1u << f->owner[(size_t) j * f->gw + i];
        }
    double x0 = (double) tx * T * tp->d, x1 = x0 + T * tp->d;
    double y0 = (double) ty * T * tp->d, y1 = y0 + T * tp->d;
    for (int b = 0; b < sc->nbubble; b++) {
        const mk_bubble_t *bb = &sc->bubble[b];
        double dx = fmax (fmax (x0 - bb->cx, bb->cx - x1), 0);
        double dy = fmax (fmax (y0 - bb->cy, bb->cy - y1), 0);
        if (dx * dx + dy * dy < (bb->r + tp->d) * (bb->r + tp->d))
            tp->bub[tp->nbub++] = bb;
    }
    tp->pen = pen > 0;
    tp->blur = blur > 0;
    tp->focus = focus > 0;
    tp->pale = pale > 0;
    double ramp = tp->d;
    if ((tp->blur || tp->nbub) && 2.5 * sc->blur_sigma > ramp)
        ramp = 2.5 * sc->blur_sigma;
    if (tp->focus && 2.5 * sc->focus_sigma > ramp)
        ramp = 2.5 * sc->focus_sigma;
    tp->tissue = sc->nblobs > 0 && tmin < ramp / 2;
    tp->full = tmax < -ramp / 2;
    if (sc->edge.present) {
        const mk_edge_t *e = &sc->edge;
        double lo = 1e300, hi = -1e300;
        for (int k = 0; k < 4; k++) {
            double v = e->nx * (k & 1 ? x1 : x0) + e->ny * (k & 2 ? y1 : y0) - e->c;
            lo = fmin (lo, v);
            hi = fmax (hi, v);
        }
        double reach = 5 * e->half_width + tp->d;
        tp->edge_near = lo < reach && hi > -reach;
        tp->glass_shift = lo > 0 ? 4.0f : 0.0f;
    }
    if (!tp->tissue)
        return;
    for (int b = 0; b < sc->nblobs; b++)
        if (tp->owners >> b & 1u)
            mk_patchmap_setup (&tp->patch[b], &p->tex->tex[sc->blob[b].tex],
                               &sc->blob[b], p->warp, sc->tex_scale,
                               sc->blur_sigma, sc->focus_sigma,
                               tp->d, s->X, s->Y,
                               T, s->cu[b], s->cv[b], s->ru[b], s->rv[b]);
}

/* Fraction of a pixel of width d centred at x that lies in [lo, hi]:
 * box-filtered coverage, so thin lines fade instead of vanishing on
 * small levels. (Plain compares: fmaxf is a libm call without
 * -ffinite-math-only.) */
static inline float
band_cover (float lo, float hi, float x, float d)
{
    float a = x - d / 2, b = x + d / 2;
    a = a > lo ? a : lo;
    b = b < hi ? b : hi;
    return b > a ? (b - a) / d : 0.0f;
}

static inline uint8_t
to_byte (float v)
{
    v += 0.5f;
    return (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Sensor noise of +-2.2 grey levels at level 0; lower levels average
 * 4^level pixels, which shrinks the noise by the square root. */
static float
noise_amp (double d)
{
    return (float) (2.2 / sqrt (d) / 127.5);
}

static uint32_t
noise_key (const mk_scene_t *sc, int level)
{
    return (uint32_t) mk_mix64 (sc->seed + (uint64_t) level);
}

static inline uint8_t
clamp_byte (int v)
{
    return (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Most tiles of a slide are bare glass: illumination and noise only. */
static void
paint_glass (const mk_painter_t *p, const mk_scratch_t *s,
             const tile_plan_t *tp, int level, int tx, int ty, uint8_t *rgb)
{
    const mk_scene_t *sc = p->scene;
    const mk_field_t *f = p->field;
    const int T = p->tile, gw = f->gw;
    const float amp = noise_amp (tp->d);
    const uint32_t key = noise_key (sc, level);
    float base[3];
    for (int k = 0; k < 3; k++)
        base[k] = (float) sc->glass[k] + tp->glass_shift + 0.5f;
    for (int j = 0; j < T; j++) {
        const mk_cell_t *ra = &f->cells[(size_t) s->iy[j] * gw];
        const mk_cell_t *rb = ra + gw;
        const float fy = s->fy[j];
        uint8_t *out = rgb + (size_t) j * T * 3;
        for (int i = 0; i < T; i++, out += 3) {
            const int ix = s->ix[i];
            const float fx = s->fx[i];
            float top = ra[ix].glass + (ra[ix + 1].glass - ra[ix].glass) * fx;
            float bot = rb[ix].glass + (rb[ix + 1].glass - rb[ix].glass) * fx;
            uint32_t h = mk_hash2 ((uint32_t) (tx * T + i),
                                   (uint32_t) (ty * T + j), key);
            float g = top + (bot - top) * fy + ((float) (h & 255) - 127.5f) * amp;
            out[0] = clamp_byte ((int) (base[0] + g));
            out[1] = clamp_byte ((int) (base[1] + g));
            out[2] = clamp_byte ((int) (base[2] + g));
        }
    }
}

void
mk_paint_tile (const mk_painter_t *p, int level, int tx, int ty, uint8_t *rgb,
               mk_scratch_t *s)
{
    const mk_scene_t *sc = p->scene;
    const mk_field_t *f = p->field;
    const int T = p->tile, gw = f->gw;
    tile_plan_t tp;
    plan_tile (p, s, level, tx, ty, &tp);
    if (!tp.tissue && !tp.nbub && !tp.pen && !tp.edge_near) {
        paint_glass (p, s, &tp, level, tx, ty, rgb);
        return;
    }
    const float d = (float) tp.d, sigma_ramp = 2.5f * (float) sc->blur_sigma;
    const float focus_ramp = 2.5f * (float) sc->focus_sigma;
    /* Beer-Lambert: optical density is stain density times the texel's
     * own, so a pale patch's factor is a fixed number of density levels
     * down (levels are geometric), scaled by the patch's weight so that
     * its edge fades like a focus fault's. */
    const float pale_levels = tp.pale ? (float) (-log (sc->pale_factor)
                                                 / log (MK_DENS_MAX / MK_DENS_MIN)
                                                 * (MK_DENS_LEVELS - 1))
                                      : 0;
    const float amp = noise_amp (tp.d);
    const uint32_t key = noise_key (sc, level);
    const mk_edge_t *e = &sc->edge;

    for (int j = 0; j < T; j++) {
        const mk_cell_t *ra = &f->cells[(size_t) s->iy[j] * gw];
        const mk_cell_t *rb = ra + gw;
        const uint8_t *own = f->owner + (size_t) s->ny[j] * gw;
        const float fy = s->fy[j];
        const float Y = (float) s->Y[j];
        uint8_t *out = rgb + (size_t) j * T * 3;
        for (int i = 0; i < T; i++, out += 3) {
            const int ix = s->ix[i];
            const float fx = s->fx[i];
            const mk_cell_t *a = ra + ix, *b = a + 1, *c = rb + ix, *dd = c + 1;
            const float wa = (1 - fx) * (1 - fy), wb = fx * (1 - fy);
            const float wc = (1 - fx) * fy, wd = fx * fy;
#define MIX(m) (wa * a->m + wb * b->m + wc * c->m + wd * dd->m)
            uint32_t h = mk_hash2 ((uint32_t) (tx * T + i),
                                   (uint32_t) (ty * T + j), key);
            float g = MIX (glass) + ((float) (h & 255) - 127.5f) * amp;
            float shift = tp.glass_shift, line = 0;
            if (tp.edge_near) {
                float sd = (float) (e->nx * s->X[i] + e->ny * s->Y[j] - e->c);
                float hw = (float) e->half_width;
                shift = sd > hw ? 4.0f : 0.0f;
                line = 0.9f * band_cover (-hw, hw, sd, d);
                float halo = 0.15f * (float) mk_smoothstep (5 * hw, hw, fabsf (sd));
                line = line > halo ? line : halo;
            }
            float base[3], px[3];
            for (int k = 0; k < 3; k++)
                base[k] = px[k] = (float) sc->glass[k] + g + shift;

            float inside = 0, rim = 0, shade = 0;
            for (int k = 0; k < tp.nbub; k++) {
                const mk_bubble_t *bb = tp.bub[k];
                float dx = (float) (s->X[i] - bb->cx), dy = (float) (Y - bb->cy);
                float r2 = dx * dx + dy * dy, R = (float) bb->r;
                if (r2 >= (R + d) * (R + d))
                    continue;
                float r = sqrtf (r2), w = (float) bb->rim;
                inside = (R - w - r) / d + 0.5f;
                inside = inside < 0 ? 0 : inside > 1 ? 1 : inside;
                rim = band_cover (R - w, R, r, d);
                shade = 0.25f * inside
                        * (float) mk_smoothstep (R - 4 * w, R - w, r);
            }

            if (tp.tissue) {
                float wblur = tp.blur ? MIX (blur) : 0;
                wblur = wblur > inside ? wblur : inside;
                float wfocus = tp.focus ? MIX (focus) : 0;
                float ramp = wblur * sigma_ramp > d ? wblur * sigma_ramp : d;
                ramp = wfocus * focus_ramp > ramp ? wfocus * focus_ramp : ramp;
                float alpha = tp.full ? 1 : 0.5f - MIX (tissue) / ramp;
                if (alpha > 0) {
                    alpha = alpha > 1 ? 1 : alpha;
                    int bi = own[s->nx[i]];
                    mk_patchmap_t *pm = &tp.patch[bi];
                    mk_texsample_t ts;
                    mk_patch_sample (pm, (float) s->X[i], Y, wblur, wfocus,
                                     s->cu[bi][i], s->cv[bi][i], s->ru[bi][j],
                                     s->rv[bi][j], &ts);
                    float kd = MIX (dens) - BUBBLE_PALE * inside + 0.5f;
                    int kl = kd < 0 ? 0 : kd > MK_DENS_LEVELS - 1
                                              ? MK_DENS_LEVELS - 1 : (int) kd;
                    float wpale = tp.pale ? MIX (pale) : 0;
                    if (wpale > 0) {
                        /* Below level 0 into the pale rows, so that the
                         * factor holds on the lightest tissue too;
                         * shifted up before truncating, which then
                         * floors. Only the stain changes: the texels
                         * are the ones painted without pale (sharp,
                         * unless a blur or focus fault overlaps). */
                        float kp = kd - pale_levels * wpale;
                        kp = kp < -MK_DENS_PALE_ROWS ? -MK_DENS_PALE_ROWS : kp;
                        kl = (int) (kp + MK_DENS_PALE_ROWS) - MK_DENS_PALE_ROWS;
                        kl = kl > MK_DENS_LEVELS - 1 ? MK_DENS_LEVELS - 1 : kl;
                    }
                    const uint8_t *lut = p->lut + (size_t) bi * LUT_SIZE
                                         + (size_t) (kl + MK_DENS_PALE_ROWS)
                                               * 3 * 256;
                    /* The texel: patch blend, then the focus fault's
                     * blend, then the blur's. */
                    float tex[3] = { 0, 0, 0 };
                    for (int n = 0; n < ts.n; n++) {
                        const uint8_t *sp = ts.sharp[n];
                        float w = ts.w[n], t[3];
                        for (int k = 0; k < 3; k++)
                            t[k] = sp[k];
                        if (wfocus > 0) {
                            const uint8_t *fp = ts.soft[n];
                            for (int k = 0; k < 3; k++)
                                t[k] += (fp[k] - t[k]) * wfocus;
                        }
                        if (wblur > 0) {
                            const uint8_t *bp = ts.blurred[n];
                            for (int k = 0; k < 3; k++)
                                t[k] += (bp[k] - t[k]) * wblur;
                        }
                        for (int k = 0; k < 3; k++)
                            tex[k] += w * t[k];
                    }
                    for (int k = 0; k < 3; k++) {
                        int t = (int) (tex[k] + 0.5f);
                        t = t > 255 ? 255 : t;
                        px[k] += (lut[k * 256 + t] - px[k]) * alpha;
                    }
                }
            }
            if (inside > 0 || rim > 0)
                for (int k = 0; k < 3; k++) {
                    px[k] += (base[k] + 5 - px[k]) * 0.45f * inside;
                    px[k] *= 1 - shade;
                    px[k] += (rim_rgb[k] - px[k]) * rim;
                }
            if (line > 0)
                for (int k = 0; k < 3; k++)
                    px[k] += (edge_rgb[k] - px[k]) * line;
            if (tp.pen)
                for (int k = 0; k < 3; k++)
                    px[k] *= MIX (pen_t[k]);
            out[0] = to_byte (px[0]);
            out[1] = to_byte (px[1]);
            out[2] = to_byte (px[2]);
#undef MIX
        }
    }
}
