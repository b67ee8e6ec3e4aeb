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
    STREAM_EDGE, STREAM_GLASS
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
 * raggedness; the dip is limited so that the shape stays one piece. */
static void
make_outline (mk_blob_t *b, mk_rng_t *r, double *maxr)
{
    double amp[20], phase[20];
    for (int k = 2; k < 20; k++) {
        amp[k] = k < 8 ? mk_rng_range (r, 0, 0.30) / k : mk_rng_range (r, 0, 0.025);
        phase[k] = mk_rng_range (r, 0, 2 * M_PI);
    }
    double lo = 1e9, hi = -1e9;
    for (int i = 0; i <= MK_RTAB; i++) {
        double th = 2 * M_PI * i / MK_RTAB, v = 1;
        for (int k = 2; k < 20; k++)
            v += amp[k] * cos (k * th + phase[k]);
        b->rtab[i] = (float) v;
        lo = v < lo ? v : lo;
    }
    /* Pull deep dips back to 0.45 of the mean radius. */
    double squeeze = lo < 0.45 ? (1 - 0.45) / (1 - lo) : 1;
    for (int i = 0; i <= MK_RTAB; i++) {
        b->rtab[i] = (float) (1 + (b->rtab[i] - 1) * squeeze);
        hi = b->rtab[i] > hi ? b->rtab[i] : hi;
    }
    *maxr = hi;
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
            double size = n == 0 ? mk_rng_range (&r, 0.16, 0.24)
                                 : mk_rng_range (&r, 0.08, 0.18);
            b.R = size * small * shrink;
            if (b.R < 2)
                b.R = 2;
            b.ax = exp (mk_rng_range (&r, -0.35, 0.35));
            b.ay = 1 / b.ax;
            double rot = mk_rng_range (&r, 0, 2 * M_PI);
            b.cs = cos (rot);
            b.sn = sin (rot);
            double maxr;
            make_outline (&b, &r, &maxr);
            b.rmax = b.R * (b.ax > b.ay ? b.ax : b.ay) * maxr;
            double x0 = 0.1 * s->w + b.rmax, x1 = 0.9 * s->w - b.rmax;
            double y0 = 0.1 * s->h + b.rmax, y1 = 0.9 * s->h - b.rmax;
            if (x0 > x1 || y0 > y1)
                continue;
            b.cx = mk_rng_range (&r, x0, x1);
            b.cy = mk_rng_range (&r, y0, y1);
            if (!blob_fits (s, &b, 0.02 * big))
                continue;
            b.tex = mk_rng_int (&r, ntex);
            b.swap = mk_rng_int (&r, 2);
            b.ox = mk_rng_range (&r, 0, 8000);
            b.oy = mk_rng_range (&r, 0, 8000);
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

/* Folds lie in another blob than the first blur region when there is
 * one, so that the two truths overlap as little as possible. */
static void
plan_folds (mk_scene_t *s)
{
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_FOLD);
    if (s->nblobs == 0)
        return;
    int n = mk_rng_unit (&r) < 0.4 ? 2 : 1;
    for (int i = 0; i < n; i++) {
        const mk_blob_t *b = &s->blob[(i + 1) % s->nblobs];
        mk_path_t *p = &s->fold[s->nfold++];
        double a = mk_rng_range (&r, 0, M_PI), ux = cos (a), uy = sin (a);
        double t0 = mk_rng_range (&r, -0.6, -0.2) * b->R;
        double t1 = mk_rng_range (&r, 0.2, 0.6) * b->R;
        double o0 = mk_rng_range (&r, -0.25, 0.25) * b->R;
        double o1 = mk_rng_range (&r, -0.25, 0.25) * b->R;
        double bend = mk_rng_range (&r, -0.3, 0.3) * b->R;
        quad_path (p, b->cx + ux * t0 - uy * o0, b->cy + uy * t0 + ux * o0,
                   b->cx + ux * (t0 + t1) / 2 - uy * bend,
                   b->cy + uy * (t0 + t1) / 2 + ux * bend,
                   b->cx + ux * t1 - uy * o1, b->cy + uy * t1 + ux * o1);
        p->half_width = b->R * mk_rng_range (&r, 0.06, 0.11);
        if (p->half_width < 1.5)
            p->half_width = 1.5;
    }
}

/* Bubbles mostly over tissue (where they matter to QC), never touching
 * each other and never leaving the slide. */
static void
plan_bubbles (mk_scene_t *s)
{
    mk_rng_t r;
    mk_rng_init (&r, s->seed, STREAM_BUBBLE);
    double small = s->w < s->h ? s->w : s->h;
    int want = 1 + mk_rng_int (&r, MK_MAX_BUBBLE);
    for (int attempt = 0; attempt < 200 && s->nbubble < want; attempt++) {
        mk_bubble_t b;
        b.r = mk_rng_range (&r, 0.025, 0.055) * small;
        if (b.r < 3)
            b.r = 3;
        b.rim = b.r * 0.05 < 1.2 ? 1.2 : b.r * 0.05;
        if (s->nblobs > 0 && mk_rng_unit (&r) < 0.75) {
            const mk_blob_t *bl = &s->blob[mk_rng_int (&r, s->nblobs)];
            inner_point (bl, &r, 0.8, &b.cx, &b.cy);
        } else {
            b.cx = mk_rng_range (&r, 0, s->w);
            b.cy = mk_rng_range (&r, 0, s->h);
        }
        if (b.cx < b.r || b.cy < b.r || b.cx > s->w - b.r || b.cy > s->h - b.r)
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
    if (o->features & MK_F_TISSUE)
        plan_blobs (s, ntex);
    if (o->features & MK_F_PEN)
        plan_pen (s);
    if (o->features & MK_F_BLUR)
        plan_blur (s);
    if (o->features & MK_F_DARK)
        plan_folds (s);
    if (o->features & MK_F_BUBBLE)
        plan_bubbles (s);
    if (o->features & MK_F_EDGE)
        plan_edge (s);
}

unsigned
mk_scene_textures_used (const mk_scene_t *s)
{
    unsigned used = 0;
    for (int i = 0; i < s->nblobs; i++)
        used |= 1u << s->blob[i].tex;
    return used;
}
