/* Sampling the scene onto the field grid. Each shape touches only the
 * cells of its own bounding box, so building the grid costs about as
 * much as the shapes' area in cells, not cells times shapes. */
#include "tests/gen/mk_field.h"
#include "tests/gen/mk_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FAR 1e7f

static uint32_t
noise_key (uint64_t seed, uint32_t salt)
{
    return (uint32_t) mk_mix64 (seed ^ ((uint64_t) salt << 40));
}

/* Cell index range [*a, *b] whose centres lie within [lo, hi]. */
static int
cell_range (double lo, double hi, double cell, int n, int *a, int *b)
{
    double fa = ceil (lo / cell - 0.5), fb = floor (hi / cell - 0.5);
    if (fa < 0)
        fa = 0;
    if (fb > n - 1)
        fb = n - 1;
    if (fa > fb)
        return 0;
    *a = (int) fa;
    *b = (int) fb;
    return 1;
}

static void
add_blob (mk_field_t *f, const mk_blob_t *b, int index, double margin)
{
    int x0, x1, y0, y1;
    double reach = b->rmax + margin;
    if (!cell_range (b->cx - reach, b->cx + reach, f->cell, f->gw, &x0, &x1)
        || !cell_range (b->cy - reach, b->cy + reach, f->cell, f->gh, &y0, &y1))
        return;
    double scale = b->ax < b->ay ? b->ax : b->ay;
    for (int j = y0; j <= y1; j++)
        for (int i = x0; i <= x1; i++) {
            double dx = (i + 0.5) * f->cell - b->cx;
            double dy = (j + 0.5) * f->cell - b->cy;
            /* Into the blob's frame: unrotate, then undo the ellipse. */
            double qx = (dx * b->cs + dy * b->sn) / b->ax;
            double qy = (-dx * b->sn + dy * b->cs) / b->ay;
            double rho = sqrt (qx * qx + qy * qy);
            double turns = atan2 (qy, qx) / (2 * M_PI);
            if (turns < 0)
                turns += 1;
            /* Radial gap times the smaller axis scale: a distance that
             * never overstates the true one, so outlines stay sharp. */
            float d = (float) ((rho - mk_blob_radius (b, turns)) * scale);
            size_t k = (size_t) j * f->gw + i;
            if (d < f->cells[k].tissue) {
                f->cells[k].tissue = d;
                f->owner[k] = (uint8_t) index;
            }
        }
}

static double
seg_distance (double px, double py, double ax, double ay, double bx,
              double by)
{
    double vx = bx - ax, vy = by - ay, wx = px - ax, wy = py - ay;
    double len2 = vx * vx + vy * vy;
    double t = len2 > 0 ? (wx * vx + wy * vy) / len2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double dx = wx - t * vx, dy = wy - t * vy;
    return sqrt (dx * dx + dy * dy);
}

/* Distance from each cell of the path's bounding box (grown by reach) to
 * the path, segment by segment. Returns a malloc'd bw*bh buffer and the
 * box, or NULL when the path misses the grid or memory runs out (*oom). */
static float *
path_distances (const mk_field_t *f, const mk_path_t *p, double reach,
                int box[4], int *oom)
{
    double lx = 1e300, hx = -1e300, ly = 1e300, hy = -1e300;
    for (int i = 0; i < p->n; i++) {
        lx = fmin (lx, p->x[i]);
        hx = fmax (hx, p->x[i]);
        ly = fmin (ly, p->y[i]);
        hy = fmax (hy, p->y[i]);
    }
    *oom = 0;
    if (!cell_range (lx - reach, hx + reach, f->cell, f->gw, &box[0], &box[2])
        || !cell_range (ly - reach, hy + reach, f->cell, f->gh, &box[1], &box[3]))
        return NULL;
    int bw = box[2] - box[0] + 1, bh = box[3] - box[1] + 1;
    float *dist = malloc ((size_t) bw * bh * sizeof *dist);
    if (!dist) {
        *oom = 1;
        return NULL;
    }
    for (size_t k = 0; k < (size_t) bw * bh; k++)
        dist[k] = FAR;
    for (int s = 0; s + 1 < p->n; s++) {
        int x0, x1, y0, y1;
        if (!cell_range (fmin (p->x[s], p->x[s + 1]) - reach,
                         fmax (p->x[s], p->x[s + 1]) + reach, f->cell, f->gw,
                         &x0, &x1)
            || !cell_range (fmin (p->y[s], p->y[s + 1]) - reach,
                            fmax (p->y[s], p->y[s + 1]) + reach, f->cell,
                            f->gh, &y0, &y1))
            continue;
        for (int j = y0; j <= y1; j++)
            for (int i = x0; i <= x1; i++) {
                float d = (float) seg_distance ((i + 0.5) * f->cell,
                                                (j + 0.5) * f->cell, p->x[s],
                                                p->y[s], p->x[s + 1],
                                                p->y[s + 1]);
                float *slot = &dist[(size_t) (j - box[1]) * bw + (i - box[0])];
                if (d < *slot)
                    *slot = d;
            }
    }
    return dist;
}

static int
add_fold (mk_field_t *f, const mk_path_t *p)
{
    int box[4], oom;
    float *dist = path_distances (f, p, p->half_width + 2 * f->cell, box, &oom);
    if (!dist)
        return oom ? -1 : 0;
    int bw = box[2] - box[0] + 1;
    for (int j = box[1]; j <= box[3]; j++)
        for (int i = box[0]; i <= box[2]; i++) {
            double d = dist[(size_t) (j - box[1]) * bw + (i - box[0])];
            /* A fold is a band with a soft shoulder: full at the core. */
            float w = (float) mk_smoothstep (p->half_width,
                                             0.6 * p->half_width, d);
            mk_cell_t *c = &f->cells[(size_t) j * f->gw + i];
            if (w > c->fold)
                c->fold = w;
        }
    free (dist);
    return 0;
}

static int
add_pen (mk_field_t *f, const mk_path_t *p, uint32_t key)
{
    int box[4], oom;
    float *dist = path_distances (f, p, p->half_width + 2 * f->cell, box, &oom);
    if (!dist)
        return oom ? -1 : 0;
    int bw = box[2] - box[0] + 1;
    double streak = 4 * p->half_width;
    for (int j = box[1]; j <= box[3]; j++)
        for (int i = box[0]; i <= box[2]; i++) {
            double d = dist[(size_t) (j - box[1]) * bw + (i - box[0])];
            if (d >= p->half_width)
                continue;
            double x = (i + 0.5) * f->cell, y = (j + 0.5) * f->cell;
            /* Marker ink is uneven: thinner streaks along the stroke. */
            double even = 1 - 0.2 * (0.5 + 0.5 * mk_fbm (key, x / streak,
                                                          y / streak, 2));
            double a = p->alpha * even
                       * mk_smoothstep (p->half_width, 0.8 * p->half_width, d);
            mk_cell_t *c = &f->cells[(size_t) j * f->gw + i];
            for (int ch = 0; ch < 3; ch++)
                c->pen_t[ch] *= (float) (1 - a * (1 - p->trans[ch]));
            if (a > c->pen_a)
                c->pen_a = (float) a;
        }
    free (dist);
    return 0;
}

/* An ellipse's weight, 1 inside and a ramp over its outer quarter, into
 * the member at offset `member` of each cell (blur, focus or pale). */
static void
add_ellipse (mk_field_t *f, const mk_ellipse_t *e, size_t member)
{
    int x0, x1, y0, y1;
    double reach = (e->rx > e->ry ? e->rx : e->ry) + 2 * f->cell;
    if (!cell_range (e->cx - reach, e->cx + reach, f->cell, f->gw, &x0, &x1)
        || !cell_range (e->cy - reach, e->cy + reach, f->cell, f->gh, &y0, &y1))
        return;
    for (int j = y0; j <= y1; j++)
        for (int i = x0; i <= x1; i++) {
            double dx = (i + 0.5) * f->cell - e->cx;
            double dy = (j + 0.5) * f->cell - e->cy;
            double qx = (dx * e->cs + dy * e->sn) / e->rx;
            double qy = (-dx * e->sn + dy * e->cs) / e->ry;
            /* Focus drifts gradually, and so does staining: the outer
             * quarter is a ramp. */
            float w = (float) mk_smoothstep (1.0, 0.75, sqrt (qx * qx + qy * qy));
            float *v = (float *) ((char *) &f->cells[(size_t) j * f->gw + i]
                                  + member);
            if (w > *v)
                *v = w;
        }
}

/* Density varies slowly across tissue (section thickness, staining) and
 * folds double it and more: two layers of tissue absorb twice. */
static void
finish_density (mk_field_t *f, const mk_scene_t *s, double reach)
{
    double big = s->w > s->h ? s->w : s->h;
    double wave = 0.06 * big, light = 0.25 * big;
    uint32_t kd = noise_key (s->seed, 11), kg = noise_key (s->seed, 12);
    double span = log (MK_DENS_MAX / MK_DENS_MIN);
    for (int j = 0; j < f->gh; j++)
        for (int i = 0; i < f->gw; i++) {
            mk_cell_t *c = &f->cells[(size_t) j * f->gw + i];
            double x = (i + 0.5) * f->cell, y = (j + 0.5) * f->cell;
            c->glass = (float) (2.0 * mk_fbm (kg, x / light, y / light, 2));
            /* Density is read only where tissue can be painted. */
            if (c->tissue > reach)
                continue;
            double dens = exp (0.45 * mk_fbm (kd, x / wave, y / wave, 3))
                          * (1 + 2.2 * c->fold);
            double k = log (dens / MK_DENS_MIN) / span * (MK_DENS_LEVELS - 1);
            c->dens = (float) mk_clamp (k, 0, MK_DENS_LEVELS - 1);
        }
}

int
mk_field_build (mk_field_t *f, const mk_scene_t *s)
{
    memset (f, 0, sizeof *f);
    int big = s->w > s->h ? s->w : s->h;
    /* About 1024 cells along the long side; never under 4 px, because
     * outlines stay sharp through the distance field anyway and small
     * slides should not pay for a grid finer than their features. */
    f->cell = ceil (big / 1024.0);
    if (f->cell < 4)
        f->cell = 4;
    f->gw = (int) ceil (s->w / f->cell) + 1;
    f->gh = (int) ceil (s->h / f->cell) + 1;
    size_t n = (size_t) f->gw * f->gh;
    f->cells = malloc (n * sizeof *f->cells);
    f->owner = calloc (n, 1);
    if (!f->cells || !f->owner) {
        mk_field_free (f);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        mk_cell_t *c = &f->cells[k];
        memset (c, 0, sizeof *c);
        c->tissue = FAR;
        c->pen_t[0] = c->pen_t[1] = c->pen_t[2] = 1;
    }
    /* Cells this far outside an outline still get true distances, so the
     * widest anti-aliasing or blur ramp never blends with FAR. */
    double wide = s->blur_sigma > s->focus_sigma ? s->blur_sigma
                                                 : s->focus_sigma;
    double margin = 3 * f->cell + 2 * wide + 4;
    for (int b = 0; b < s->nblobs; b++)
        add_blob (f, &s->blob[b], b, margin);
    for (int i = 0; i < s->nfold; i++)
        if (add_fold (f, &s->fold[i]) != 0)
            goto oom;
    for (int i = 0; i < s->nblur; i++)
        add_ellipse (f, &s->blur[i], offsetof (mk_cell_t, blur));
    for (int i = 0; i < s->nfocus; i++)
        add_ellipse (f, &s->focus[i], offsetof (mk_cell_t, focus));
    for (int i = 0; i < s->npale; i++)
        add_ellipse (f, &s->pale[i], offsetof (mk_cell_t, pale));
    for (int i = 0; i < s->npen; i++)
        if (add_pen (f, &s->pen[i], noise_key (s->seed, 20 + (uint32_t) i)) != 0)
            goto oom;
    finish_density (f, s, margin);
    return 0;
oom:
    mk_field_free (f);
    return -1;
}

void
mk_field_free (mk_field_t *f)
{
    free (f->cells);
    free (f->owner);
    f->cells = NULL;
    f->owner = NULL;
}

void
mk_field_sample (const mk_field_t *f, double x, double y, mk_cell_t *out)
{
    int i, j;
    float fx, fy;
    mk_field_coord (x, f->cell, f->gw, &i, &fx);
    mk_field_coord (y, f->cell, f->gh, &j, &fy);
    const mk_cell_t *a = &f->cells[(size_t) j * f->gw + i];
    const mk_cell_t *b = a + 1, *c = a + f->gw, *d = c + 1;
    float wa = (1 - fx) * (1 - fy), wb = fx * (1 - fy);
    float wc = (1 - fx) * fy, wd = fx * fy;
#define MIX(m) (wa * a->m + wb * b->m + wc * c->m + wd * d->m)
    out->tissue = MIX (tissue);
    out->dens = MIX (dens);
    out->fold = MIX (fold);
    out->blur = MIX (blur);
    out->focus = MIX (focus);
    out->pale = MIX (pale);
    out->pen_a = MIX (pen_a);
    for (int k = 0; k < 3; k++)
        out->pen_t[k] = MIX (pen_t[k]);
    out->glass = MIX (glass);
#undef MIX
}
