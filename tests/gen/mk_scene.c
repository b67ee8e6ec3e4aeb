/* Planning the scene from the seed. Each feature draws from its own
 * random stream, so turning one feature off leaves the others (and the
 * tissue) exactly where they were: slides that differ only in --features
 * can be compared pixel for pixel. */
#include "tests/gen/mk_scene.h"
#include "tests/gen/mk_texture.h"
#include "tests/gen/mk_util.h"

#include <math.h>
#include <string.h>

enum {
    STREAM_BLOB = 1, STREAM_PEN, STREAM_BLUR, STREAM_FOLD, STREAM_BUBBLE,
    STREAM_EDGE, STREAM_GLASS, STREAM_FOCUS, STREAM_PALE
};

static const char *pen_names[] = { "green", "blue", "black", "red" };
/* Per-channel transmittance of each marker ink, chosen so that ink on
 * glass looks like scanned marker colours. */
static const double pen_trans[4][3] = {
    { 0.30, 0.62, 0.42 },
    { 0.28, 0.38, 0.80 },
    { 0.16, 0.16, 0.20 },
    { 0.85, 0.22, 0.32 },
};

const char *
mk_pen_color_name (int color)
{
    return color >= 0 && color < 4 ? pen_names[color] : "?";
}

const char *
mk_edge_side_name (int side)
{
    static const char *names[] = { "left", "right", "top", "bottom" };
    return side >= 0 && side < 4 ? names[side] : "?";
}

/* Random outline: harmonics 2..7 give the lobes, 8..20 a little
 * raggedness. Dips deeper than 0.45 of the mean radius are pulled back so
 * that the shape stays one piece. */
typedef struct {
    double amp[20], phase[20];
    double squeeze;
} harmonics_t;

static double
outline_at (const harmonics_t *h, double th)
{
    double v = 1;
    for (int k = 2; k < 20; k++)
        v += h->amp[k] * cos (k * th + h->phase[k]);
    return 1 + (v - 1) * h->squeeze;
}

/* Draws the coefficients and returns the outline's largest radius,
 * estimated on 64 angles plus a margin for the peaks between them; cheap
 * enough to try many placements. */
static double
draw_harmonics (harmonics_t *h, mk_rng_t *r)
{
    for (int k = 2; k < 20; k++) {
        h->amp[k] = k < 8 ? mk_rng_range (r, 0, 0.30) / k
                          : mk_rng_range (r, 0, 0.025);
        h->phase[k] = mk_rng_range (r, 0, 2 * M_PI);
    }
    h->squeeze = 1;
    double lo = 1e9, hi = -1e9;
    for (int i = 0; i < 64; i++) {
        double v = outline_at (h, 2 * M_PI * i / 64);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    h->squeeze = lo < 0.45 ? (1 - 0.45) / (1 - lo) : 1;
    return (1 + (hi - 1) * h->squeeze) * 1.05;
}

/* Tabulates the outline; returns its exact largest radius. */
static double
make_outline (mk_blob_t *b, const harmonics_t *h)
{
    double hi = 0;
    for (int i = 0; i <= MK_RTAB; i++) {
        double v = outline_at (h, 2 * M_PI * i / MK_RTAB);
        v = v < 0.3 ? 0.3 : v;     /* the 64-angle squeeze can miss a dip */
        b->rtab[i] = (float) v;
        hi = v > hi ? v : hi;
    }
    return hi;
}

static int
blob_fits (const mk_scene_t *s, const mk_blob_t *b, double gap)
{
    for (int i = 0; i < s->nblobs; i++) {
        double dx = s->blob[i].cx - b->cx, dy = s->blob[i].cy - b->cy;
        if (sqrt (dx * dx + dy * dy) < s->blob[i].rmax + b->rmax + gap)
            return 0;
    }
    return 1;
}

/* Blobs keep inside the middle 80% of the slide so that the coverslip
 * edge, drawn within the outer 9%, never crosses tissue. */
static void
plan_blobs (mk_scene_t *s, int ntex)
{
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_BLOB);
    double small = s->w < s->h ? s->w : s->h;
    double big = s->w > s->h ? s->w : s->h;
    int want = 2 + mk_rng_int (&r, 5);
    for (int n = 0; n < want && s->nblobs < MK_MAX_BLOBS; n++) {
        for (int attempt = 0; attempt < 300; attempt++) {
            mk_blob_t b;
            memset (&b, 0, sizeof b);
            double shrink = attempt < 100 ? 1 : attempt < 200 ? 0.7 : 0.45;
            /* Sizes give tissue on roughly 20-40% of the slide, as on a
             * typical scan. */
            double size = n == 0 ? mk_rng_range (&r, 0.24, 0.32)
                                 : mk_rng_range (&r, 0.12, 0.24);
            b.R = size * small * shrink;
            if (b.R < 2)
                b.R = 2;
            b.ax = exp (mk_rng_range (&r, -0.35, 0.35));
            b.ay = 1 / b.ax;
            double rot = mk_rng_range (&r, 0, 2 * M_PI);
            b.cs = cos (rot);
            b.sn = sin (rot);
            harmonics_t harm;
            double axis = b.ax > b.ay ? b.ax : b.ay;
            b.rmax = b.R * axis * draw_harmonics (&harm, &r);
            double x0 = 0.1 * s->w + b.rmax, x1 = 0.9 * s->w - b.rmax;
            double y0 = 0.1 * s->h + b.rmax, y1 = 0.9 * s->h - b.rmax;
            if (x0 > x1 || y0 > y1)
                continue;
            b.cx = mk_rng_range (&r, x0, x1);
            b.cy = mk_rng_range (&r, y0, y1);
            if (!blob_fits (s, &b, 0.02 * big))
                continue;
            double peak = make_outline (&b, &harm) * b.R * axis;
            b.rmax = peak > b.rmax ? peak : b.rmax;
            b.tex = mk_rng_int (&r, ntex);
            b.key = (uint32_t) mk_rng_next (&r);
            double overall = mk_rng_range (&r, 0.9, 1.1);
            for (int c = 0; c < 3; c++)
                b.stain[c] = overall * mk_rng_range (&r, 0.92, 1.08);
            s->blob[s->nblobs++] = b;
            break;
        }
    }
}

/* A path from a Bezier-like curve through p0, p1 (control), p2. */
static void
quad_path (mk_path_t *p, double x0, double y0, double x1, double y1,
           double x2, double y2)
{
    p->n = MK_PATH_N;
    for (int i = 0; i < p->n; i++) {
        double t = (double) i / (p->n - 1), u = 1 - t;
        p->x[i] = u * u * x0 + 2 * u * t * x1 + t * t * x2;
        p->y[i] = u * u * y0 + 2 * u * t * y1 + t * t * y2;
    }
}

/* Pen strokes: either an arc partly circling a piece of tissue (how a
 * pathologist marks a region) or a wavy free-hand line. */
static void
plan_pen (mk_scene_t *s)
{
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_PEN);
    double big = s->w > s->h ? s->w : s->h;
    int n = 1 + mk_rng_int (&r, MK_MAX_PEN);
    for (int i = 0; i < n; i++) {
        mk_path_t *p = &s->pen[s->npen++];
        p->color = mk_rng_int (&r, 4);
        for (int c = 0; c < 3; c++)
            p->trans[c] = pen_trans[p->color][c];
        p->alpha = mk_rng_range (&r, 0.78, 0.92);
        p->half_width = mk_rng_range (&r, 0.006, 0.012) * big;
        if (p->half_width < 1.5)
            p->half_width = 1.5;
        p->n = MK_PATH_N;
        if (s->nblobs > 0 && mk_rng_unit (&r) < 0.5) {
            const mk_blob_t *b = &s->blob[mk_rng_int (&r, s->nblobs)];
            double rad = b->rmax * mk_rng_range (&r, 0.95, 1.15);
            double a0 = mk_rng_range (&r, 0, 2 * M_PI);
            double span = mk_rng_range (&r, 1.7, 4.2);
            double ph = mk_rng_range (&r, 0, 2 * M_PI);
            for (int k = 0; k < p->n; k++) {
                double a = a0 + span * k / (p->n - 1);
                double rr = rad * (1 + 0.05 * sin (3 * a + ph));
                p->x[k] = b->cx + rr * cos (a);
                p->y[k] = b->cy + rr * sin (a);
            }
        } else {
            double x0 = mk_rng_range (&r, 0.05, 0.95) * s->w;
            double y0 = mk_rng_range (&r, 0.05, 0.95) * s->h;
            double dir = mk_rng_range (&r, 0, 2 * M_PI);
            double len = mk_rng_range (&r, 0.2, 0.45) * big;
            double amp = mk_rng_range (&r, 0.005, 0.03) * big;
            double cycles = mk_rng_range (&r, 0.5, 2.5);
            double ph = mk_rng_range (&r, 0, 2 * M_PI);
            for (int k = 0; k < p->n; k++) {
                double t = (double) k / (p->n - 1);
                double off = amp * sin (2 * M_PI * cycles * t + ph);
                p->x[k] = x0 + cos (dir) * len * t - sin (dir) * off;
                p->y[k] = y0 + sin (dir) * len * t + cos (dir) * off;
            }
        }
    }
}

/* A point inside blob b (well inside its outline): the centre moved by
 * up to frac of its mean radius. */
static void
inner_point (const mk_blob_t *b, mk_rng_t *r, double frac, double *x,
             double *y)
{
    double a = mk_rng_range (r, 0, 2 * M_PI), d = mk_rng_range (r, 0, frac);
    *x = b->cx + cos (a) * d * b->R;
    *y = b->cy + sin (a) * d * b->R;
}

static void
plan_blur (mk_scene_t *s)
{
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_BLUR);
    if (s->nblobs == 0)
        return;
    int n = s->nblobs > 1 && mk_rng_unit (&r) < 0.35 ? 2 : 1;
    for (int i = 0; i < n; i++) {
        const mk_blob_t *b = &s->blob[i % s->nblobs];
        mk_ellipse_t *e = &s->blur[s->nblur++];
        inner_point (b, &r, 0.3, &e->cx, &e->cy);
        e->rx = b->R * mk_rng_range (&r, 0.45, 0.7);
        e->ry = e->rx * mk_rng_range (&r, 0.6, 1.0);
        double rot = mk_rng_range (&r, 0, M_PI);
        e->cs = cos (rot);
        e->sn = sin (rot);
    }
}

/* Folds go where blur is not, so that the two truths barely overlap:
 * into the largest other blob that is at least half the first one's
 * size, else into the first blob at the point farthest from its blur. */
static void
plan_folds (mk_scene_t *s)
{
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_FOLD);
    if (s->nblobs == 0)
        return;
    int n = mk_rng_unit (&r) < 0.4 ? 2 : 1;
    int host = 0;
    for (int b = 1; b < s->nblobs; b++)
        if (s->blob[b].R >= 0.5 * s->blob[0].R
            && (host == 0 || s->blob[b].R > s->blob[host].R))
            host = b;
    for (int i = 0; i < n; i++) {
        const mk_blob_t *b = &s->blob[host];
        double cx = b->cx, cy = b->cy, best = -1;
        for (int k = 0; k < 8; k++) {
            double x, y;
            inner_point (b, &r, 0.45, &x, &y);
            double d = 1e300;
            for (int e = 0; e < s->nblur; e++)
                d = fmin (d, hypot (x - s->blur[e].cx, y - s->blur[e].cy));
            for (int f = 0; f < s->nfold; f++)
                d = fmin (d, hypot (x - s->fold[f].x[MK_PATH_N / 2],
                                    y - s->fold[f].y[MK_PATH_N / 2]));
            if (d > best) {
                best = d;
                cx = x;
                cy = y;
            }
        }
        mk_path_t *p = &s->fold[s->nfold++];
        double a = mk_rng_range (&r, 0, M_PI), ux = cos (a), uy = sin (a);
        double half = b->R * mk_rng_range (&r, 0.25, 0.45);
        double bend = mk_rng_range (&r, -0.3, 0.3) * b->R;
        quad_path (p, cx - ux * half, cy - uy * half, cx - uy * bend,
                   cy + ux * bend, cx + ux * half, cy + uy * half);
        p->half_width = b->R * mk_rng_range (&r, 0.08, 0.14);
        if (p->half_width < 1.5)
            p->half_width = 1.5;
    }
}

/* Distance from (x, y) to the nearest fold path point or blur region
 * (taken as its bounding circle). */
static double
clear_of_problems (const mk_scene_t *s, double x, double y)
{
    double d = 1e300;
    for (int f = 0; f < s->nfold; f++)
        for (int k = 0; k < s->fold[f].n; k += 4)
            d = fmin (d, hypot (x - s->fold[f].x[k], y - s->fold[f].y[k])
                             - s->fold[f].half_width);
    for (int e = 0; e < s->nblur; e++)
        d = fmin (d, hypot (x - s->blur[e].cx, y - s->blur[e].cy)
                         - fmax (s->blur[e].rx, s->blur[e].ry));
    return d;
}

/* Bubbles mostly over tissue (where they matter to QC), clear of folds,
 * blur and each other, and inside the slide. */
static void
plan_bubbles (mk_scene_t *s)
{
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_BUBBLE);
    double small = s->w < s->h ? s->w : s->h;
    int want = 1 + mk_rng_int (&r, MK_MAX_BUBBLE);
    for (int attempt = 0; attempt < 300 && s->nbubble < want; attempt++) {
        mk_bubble_t b;
        b.r = mk_rng_range (&r, 0.025, 0.055) * small;
        if (b.r < 3)
            b.r = 3;
        b.rim = b.r * 0.05 < 1.2 ? 1.2 : b.r * 0.05;
        /* The first bubble always lies on tissue when there is any. */
        int on_tissue = s->nblobs > 0
                        && (s->nbubble == 0 || mk_rng_unit (&r) < 0.7);
        if (on_tissue) {
            const mk_blob_t *bl = &s->blob[mk_rng_int (&r, s->nblobs)];
            inner_point (bl, &r, 0.7, &b.cx, &b.cy);
        } else {
            b.cx = mk_rng_range (&r, 0, s->w);
            b.cy = mk_rng_range (&r, 0, s->h);
        }
        if (b.cx < b.r || b.cy < b.r || b.cx > s->w - b.r || b.cy > s->h - b.r)
            continue;
        if (attempt < 200 && clear_of_problems (s, b.cx, b.cy) < b.r * 1.2)
            continue;
        int ok = 1;
        for (int i = 0; i < s->nbubble && ok; i++) {
            double dx = s->bubble[i].cx - b.cx, dy = s->bubble[i].cy - b.cy;
            ok = sqrt (dx * dx + dy * dy) > s->bubble[i].r + b.r + 4 * b.rim;
        }
        if (ok)
            s->bubble[s->nbubble++] = b;
    }
}

/* How far a focus fault of radius rad at (x, y) stays from the other
 * problems painted on tissue (blur, folds, bubbles, the first nfocus
 * faults; each taken as its bounding circle): negative when it overlaps
 * one, so that the fine and the coarse truth stay apart and the steps
 * that run before the focus step (pen, folds) leave most of it to be
 * found. */
static double
clearance_of (const mk_scene_t *s, int nfocus, double x, double y, double rad)
{
    double d = clear_of_problems (s, x, y) - rad;
    for (int i = 0; i < s->nbubble; i++)
        d = fmin (d, hypot (x - s->bubble[i].cx, y - s->bubble[i].cy)
                         - s->bubble[i].r - rad);
    for (int i = 0; i < nfocus; i++)
        d = fmin (d, hypot (x - s->focus[i].cx, y - s->focus[i].cy)
                         - fmax (s->focus[i].rx, s->focus[i].ry) - rad);
    return d;
}

static double
focus_clearance (const mk_scene_t *s, int focus_all, double x, double y, double rad)
{
    (void) focus_all;
    return clearance_of (s, s->nfocus, x, y, rad);
}

/* A blob drawn with odds in proportion to its area squared: focus
 * faults land mostly on the large pieces of tissue, where a fault is
 * large enough to matter (and to be scored at 1.25x). */
static const mk_blob_t *
blob_by_area (const mk_scene_t *s, mk_rng_t *r)
{
    double total = 0;
    for (int b = 0; b < s->nblobs; b++)
        total += pow (s->blob[b].R, 4);
    double pick = mk_rng_range (r, 0, total);
    for (int b = 0; b < s->nblobs; b++) {
        pick -= pow (s->blob[b].R, 4);
        if (pick <= 0)
            return &s->blob[b];
    }
    return &s->blob[s->nblobs - 1];
}

/* A point inside blob b's own outline (ellipse and harmonics), at up to
 * frac of the way from its centre to the outline. */
static void
point_in_outline (const mk_blob_t *b, mk_rng_t *r, double frac, double *x,
                  double *y)
{
    double turns = mk_rng_range (r, 0, 1), t = mk_rng_range (r, 0, frac);
    double rr = mk_blob_radius (b, turns) * t;
    double qx = cos (2 * M_PI * turns) * rr * b->ax;
    double qy = sin (2 * M_PI * turns) * rr * b->ay;
    *x = b->cx + qx * b->cs - qy * b->sn;
    *y = b->cy + qx * b->sn + qy * b->cs;
}

/* How far a patch of radius rad at (x, y) keeps clear of what it must
 * (negative: it overlaps); focus_all as plan_pale has it. */
typedef double (patch_clearance_fn) (const mk_scene_t *s, int focus_all, double x,
                                     double y, double rad);

/* Where a patch of a focus fault's size goes: of up to 100 draws on the
 * larger pieces of tissue, the first clear of what clear keeps it from,
 * else the clearest (a little overlap is fine: each truth leaves the
 * other out). */
static mk_ellipse_t
place_patch (const mk_scene_t *s, mk_rng_t *r, patch_clearance_fn *clear, int focus_all)
{
    double small = s->w < s->h ? s->w : s->h;
    mk_ellipse_t best = { 0 };
    double best_d = -1e300;
    for (int attempt = 0; attempt < 100 && best_d < 0; attempt++) {
        const mk_blob_t *b = blob_by_area (s, r);
        mk_ellipse_t e;
        point_in_outline (b, r, 0.7, &e.cx, &e.cy);
        /* a scanner's focus points are millimetres apart: a fault is
         * never a speck (at least 6% of the slide's short side) */
        e.rx = fmax (b->R * fmin (b->ax, b->ay) * mk_rng_range (r, 0.3, 0.45),
                     0.06 * small);
        e.ry = e.rx * mk_rng_range (r, 0.6, 1.0);
        double rot = mk_rng_range (r, 0, M_PI);
        e.cs = cos (rot);
        e.sn = sin (rot);
        double d = clear (s, focus_all, e.cx, e.cy, 0.7 * e.rx);
        if (d > best_d) {
            best_d = d;
            best = e;
        }
    }
    return best;
}

/* Focus faults: where a scanner's focus drifted, tissue blurred by a
 * Gaussian of 1-3 um (a fifth of the coarse blur's spread or less), on
 * 1-2 elliptical patches of tissue clear of the other problems where
 * there is room (else the clearest place tried). Planned last, from their own
 * stream, so every other feature lies where it lay before they
 * existed. */
static void
plan_focus (mk_scene_t *s, const mk_opts_t *o)
{
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_FOCUS);
    double um = mk_rng_range (&r, 1.0, 3.0);
    s->focus_sigma = o->focus_sigma > 0 ? o->focus_sigma
                                        : um / (s->tex_scale * MK_TEX_MPP);
    if (s->nblobs == 0)
        return;
    if (o->focus_all) {     /* a scan that lost focus: one patch over it all */
        double reach = 2.0 * (s->w + s->h);
        s->focus[0] = (mk_ellipse_t) { s->w / 2.0, s->h / 2.0, reach, reach, 1, 0 };
        s->nfocus = 1;
        return;
    }
    int n = mk_rng_unit (&r) < 0.5 ? 2 : 1;
    for (int i = 0; i < n; i++)
        s->focus[s->nfocus++] = place_patch (s, &r, focus_clearance, 0);
}

/* How far a pale patch of radius rad at (x, y) stays from what a focus
 * fault keeps clear of (blur, folds, bubbles, focus faults) and from the
 * other pale patches. With --focus-all the one fault covers the whole
 * slide and no place is clear of it, so it is left out: pale patches
 * then lie where they would without it. */
static double
pale_clearance (const mk_scene_t *s, int focus_all, double x, double y,
                double rad)
{
    double d = clearance_of (s, focus_all ? 0 : s->nfocus, x, y, rad);
    for (int i = 0; i < s->npale; i++)
        d = fmin (d, hypot (x - s->pale[i].cx, y - s->pale[i].cy)
                         - fmax (s->pale[i].rx, s->pale[i].ry) - rad);
    return d;
}

/* Pale patches: tissue that is weakly stained but in focus (thin
 * sections, under-staining, a faded slide), so that a QC step that
 * reads lightness as blur or as missing tissue can be caught. Stain
 * density is the factor (0.33-0.55 of normal) times what it would be.
 * Placed like focus faults (1-2 elliptical patches of their size, on the
 * larger pieces of tissue, clear of the other problems where there is
 * room), and planned after everything else from their own stream, so
 * every other feature lies where it lay before pale existed. */
static void
plan_pale (mk_scene_t *s, const mk_opts_t *o)
{
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_PALE);
    double drawn = mk_rng_range (&r, 0.33, 0.55);
    s->pale_factor = o->pale_factor > 0 ? o->pale_factor : drawn;
    if (s->nblobs == 0)
        return;
    int n = mk_rng_unit (&r) < 0.5 ? 2 : 1;
    for (int i = 0; i < n; i++)
        s->pale[s->npale++] = place_patch (s, &r, pale_clearance, o->focus_all);
}

static void
plan_edge (mk_scene_t *s)
{
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_EDGE);
    mk_edge_t *e = &s->edge;
    double big = s->w > s->h ? s->w : s->h;
    e->present = 1;
    e->side = mk_rng_int (&r, 4);
    double off = mk_rng_range (&r, 0.02, 0.045);
    double t = mk_rng_range (&r, -1, 1) * M_PI / 180, ct = cos (t), st = sin (t);
    double px, py;
    /* n points out of the coverslip, towards the slide's nearest side. */
    switch (e->side) {
    case 0: px = off * s->w; py = s->h / 2.0; e->nx = -ct; e->ny = st; break;
    case 1: px = (1 - off) * s->w; py = s->h / 2.0; e->nx = ct; e->ny = -st; break;
    case 2: px = s->w / 2.0; py = off * s->h; e->nx = st; e->ny = -ct; break;
    default: px = s->w / 2.0; py = (1 - off) * s->h; e->nx = -st; e->ny = ct; break;
    }
    e->c = e->nx * px + e->ny * py;
    e->half_width = 0.0006 * big < 1 ? 1 : 0.0006 * big;
}

void
mk_scene_plan (mk_scene_t *s, const mk_opts_t *o, int ntex)
{
    memset (s, 0, sizeof *s);
    s->w = o->width;
    s->h = o->height;
    s->seed = o->seed;
    s->features = o->features;
    double big = s->w > s->h ? s->w : s->h;
    s->tex_scale = o->mpp / MK_TEX_MPP;
    /* Default blur: 1/1000 of the slide, so that at HistoQC's 1.25x-2.5x
     * working size of a 40x slide (16-32x smaller) it still spans a few
     * pixels; never below 4 px so that small slides blur visibly too. */
    s->blur_sigma = o->blur_sigma > 0 ? o->blur_sigma
                                      : (big / 1000 < 4 ? 4 : big / 1000);
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_GLASS);
    double g = mk_rng_range (&r, 237, 243);
    s->glass[0] = g + mk_rng_range (&r, -2, 1);
    s->glass[1] = g;
    s->glass[2] = g + mk_rng_range (&r, -1, 2);
    /* Everything is planned whatever the features, in a fixed order (folds
     * look at blur, bubbles at both), and only then are the features not
     * asked for dropped: so each feature lands in the same place with or
     * without the others. */
    plan_blobs (s, ntex);
    plan_pen (s);
    plan_blur (s);
    plan_folds (s);
    plan_bubbles (s);
    plan_edge (s);
    plan_focus (s, o);
    plan_pale (s, o);
    if (!(o->features & MK_F_TISSUE))
        s->nblobs = 0;
    if (!(o->features & MK_F_PEN))
        s->npen = 0;
    if (!(o->features & MK_F_BLUR))
        s->nblur = 0;
    if (!(o->features & MK_F_DARK))
        s->nfold = 0;
    if (!(o->features & MK_F_BUBBLE))
        s->nbubble = 0;
    if (!(o->features & MK_F_EDGE))
        s->edge.present = 0;
    if (!(o->features & MK_F_FOCUS))
        s->nfocus = 0;
    if (!(o->features & MK_F_PALE))
        s->npale = 0;
}

unsigned
mk_scene_textures_used (const mk_scene_t *s)
{
    unsigned used = 0;
    for (int i = 0; i < s->nblobs; i++)
        used |= 1u << s->blob[i].tex;
    return used;
}
