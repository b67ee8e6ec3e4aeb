/* mkexamples: paints the project's own training examples for
 * ClassificationModule.byExampleWithFeatures (pen markings and coverslip
 * edges) over real H&E, with the masks that say where the ink or the
 * edge is. See kernels/classify/examples/README.md; regen_examples.sh
 * beside this file builds and runs it.
 *
 *   mkexamples TEXTURE_DIR OUT_DIR
 *
 * writes OUT_DIR/pen_markings_N.png + _mask.png and
 * OUT_DIR/coverslip_edge_N.png + _mask.png. Deterministic: the same
 * textures give the same files.
 *
 * The examples look like a slide at HistoQC's working size (1.25x, about
 * 8 um a pixel): tissue is cut from the H&E images at several scales
 * (the low-magnification view as it is, the 40x scans shrunk 8-32x) with
 * its stain density varied, on glass with illumination drift and sensor
 * noise. Pen strokes are Beer-Lambert ink (each channel multiplied by the
 * ink's transmittance) of random colour, width and opacity with streaks
 * along the stroke; the mask holds where the opacity is over 0.5.
 * Coverslip edges are thin dark lines across the glass with the glass a
 * little brighter beyond them; the mask holds the line's core. The
 * painter is written for this tool (it shares no code with the slide
 * generator in tests/gen), so the classifier is not trained on the very
 * strokes the tests measure it against. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/png/png_io.h"

#define SIDE 256
#define PATH_N 96

/* ---- random numbers and smooth noise ---- */

static uint64_t rng = 0x5eed2024ull;

static double
unit (void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double) ((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

static double
range (double lo, double hi)
{
    return lo + (hi - lo) * unit ();
}

/* Value noise: a random lattice of cell pixels, smoothly interpolated;
 * values in [-1, 1]. */
typedef struct {
    int cell, n;
    double v[40 * 40];
} noise_t;

static void
noise_init (noise_t *nz, int cell)
{
    nz->cell = cell;
    nz->n = SIDE * 2 / cell + 3;
    if (nz->n > 40)
        nz->n = 40;
    for (int i = 0; i < nz->n * nz->n; i++)
        nz->v[i] = range (-1, 1);
}

static double
noise_at (const noise_t *nz, double x, double y)
{
    double fx = x / nz->cell + 1, fy = y / nz->cell + 1;
    int ix = (int) floor (fx), iy = (int) floor (fy);
    double tx = fx - ix, ty = fy - iy;
    tx = tx * tx * (3 - 2 * tx);
    ty = ty * ty * (3 - 2 * ty);
    int n = nz->n;
    ix = ix < 0 ? 0 : ix > n - 2 ? n - 2 : ix;
    iy = iy < 0 ? 0 : iy > n - 2 ? n - 2 : iy;
    const double *v = nz->v;
    double a = v[iy * n + ix] * (1 - tx) + v[iy * n + ix + 1] * tx;
    double b = v[(iy + 1) * n + ix] * (1 - tx) + v[(iy + 1) * n + ix + 1] * tx;
    return a * (1 - ty) + b * ty;
}

/* ---- textures ---- */

typedef struct {
    qc_rgb_t *img;
} tex_t;

static qc_rgb_t *
load_scaled (const char *dir, const char *name, double scale)
{
    char path[1024], err[256];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    qc_rgb_t *src = qc_png_read_rgb (path, err, sizeof err);
    if (!src) {
        fprintf (stderr, "mkexamples: %s: %s\n", path, err);
        return NULL;
    }
    int w = (int) lround (src->w * scale), h = (int) lround (src->h * scale);
    qc_rgb_t *dst = qc_rgb_new (w < 8 ? 8 : w, h < 8 ? 8 : h);
    if (dst && qc_cpu_resize_rgb (src, QC_INTERP_AREA, dst) != 0)
        qc_rgb_destroy (&dst);
    qc_rgb_destroy (&src);
    return dst;
}

/* Texel (x, y) of a texture tiled by mirroring (no seams). */
static const uint8_t *
texel (const qc_rgb_t *t, long x, long y)
{
    long px = 2L * t->w, py = 2L * t->h;
    x %= px;
    y %= py;
    if (x < 0)
        x += px;
    if (y < 0)
        y += py;
    if (x >= t->w)
        x = px - 1 - x;
    if (y >= t->h)
        y = py - 1 - y;
    return t->px + 3 * ((size_t) y * t->w + (size_t) x);
}

/* ---- painting ---- */

typedef struct {
    double r[SIDE * SIDE], g[SIDE * SIDE], b[SIDE * SIDE];   /* 0..255 */
    uint8_t tissue[SIDE * SIDE];
    uint8_t mask[SIDE * SIDE];
} canvas_t;

static void
paint_glass (canvas_t *c)
{
    double base = range (234, 246);
    double tint[3] = { range (-3, 1), 0, range (-1, 3) };
    noise_t drift;
    noise_init (&drift, 96);
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++) {
            int i = y * SIDE + x;
            double d = 3 * noise_at (&drift, x, y);
            c->r[i] = base + tint[0] + d + range (-1.5, 1.5);
            c->g[i] = base + tint[1] + d + range (-1.5, 1.5);
            c->b[i] = base + tint[2] + d + range (-1.5, 1.5);
            c->tissue[i] = 0;
            c->mask[i] = 0;
        }
}

/* A lobed blob of tissue centred at (cx, cy), mean radius R, textured
 * from t at a random offset; stain density (optical density scale)
 * varies slowly between dens_lo and dens_hi. */
static void
paint_tissue (canvas_t *c, const qc_rgb_t *t, double cx, double cy, double R,
              double dens_lo, double dens_hi)
{
    double amp[8], ph[8];
    for (int k = 2; k < 8; k++) {
        amp[k] = range (0, 0.18) / (k - 1);
        ph[k] = range (0, 2 * M_PI);
    }
    noise_t edge, dens;
    noise_init (&edge, 12);
    noise_init (&dens, 48);
    long ox = (long) range (0, 4 * t->w), oy = (long) range (0, 4 * t->h);
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++) {
            double dx = x - cx, dy = y - cy, th = atan2 (dy, dx);
            double rr = 1;
            for (int k = 2; k < 8; k++)
                rr += amp[k] * cos (k * th + ph[k]);
            rr = R * rr + 3 * noise_at (&edge, x, y);
            double inside = rr - sqrt (dx * dx + dy * dy);   /* px inside */
            if (inside <= -0.5)
                continue;
            double a = inside >= 0.5 ? 1 : inside + 0.5;
            const uint8_t *p = texel (t, x + ox, y + oy);
            double k = dens_lo + (dens_hi - dens_lo) * 0.5
                       * (1 + noise_at (&dens, x, y));
            double col[3];
            for (int ch = 0; ch < 3; ch++) {
                /* Beer-Lambert: density scales the optical density */
                double tr = (p[ch] + 0.5) / 256.0;
                col[ch] = 255 * pow (tr, k);
            }
            int i = y * SIDE + x;
            c->r[i] = c->r[i] * (1 - a) + col[0] * a;
            c->g[i] = c->g[i] * (1 - a) + col[1] * a;
            c->b[i] = c->b[i] * (1 - a) + col[2] * a;
            if (a > 0.5)
                c->tissue[i] = 1;
        }
}

/* Marker inks as per-channel transmittance (jittered per stroke). */
static const double inks[][3] = {
    { 0.30, 0.62, 0.42 },     /* green */
    { 0.22, 0.50, 0.30 },     /* dark green */
    { 0.28, 0.38, 0.80 },     /* blue */
    { 0.18, 0.24, 0.60 },     /* dark blue */
    { 0.16, 0.16, 0.20 },     /* black */
    { 0.85, 0.22, 0.32 },     /* red */
    { 0.25, 0.60, 0.70 },     /* teal */
};
#define NINKS ((int) (sizeof inks / sizeof *inks))

/* Distance from (x, y) to the polyline and the arc length there. */
static double
path_dist (const double *px, const double *py, int n, double x, double y,
           double *s_at)
{
    double best = 1e30, s = 0;
    *s_at = 0;
    for (int i = 0; i + 1 < n; i++) {
        double ax = px[i], ay = py[i], bx = px[i + 1], by = py[i + 1];
        double vx = bx - ax, vy = by - ay, l2 = vx * vx + vy * vy;
        double t = l2 > 0 ? ((x - ax) * vx + (y - ay) * vy) / l2 : 0;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        double ex = ax + t * vx - x, ey = ay + t * vy - y;
        double d = ex * ex + ey * ey;
        if (d < best) {
            best = d;
            *s_at = s + t * sqrt (l2);
        }
        s += sqrt (l2);
    }
    return sqrt (best);
}

/* A marker stroke: a wavy line through (x0, y0) or an arc near it, half
 * width hw, peak opacity alpha, with streaks along it; sets the mask
 * where opacity > 0.5. */
static void
paint_pen (canvas_t *c, double hw, double alpha, int ink, double x0, double y0)
{
    double px[PATH_N], py[PATH_N];
    if (unit () < 0.5) {
        double dir = range (0, 2 * M_PI), len = range (180, 420);
        double amp = range (4, 40), cyc = range (0.3, 2.0), ph = range (0, 6.3);
        for (int k = 0; k < PATH_N; k++) {
            double t = (double) k / (PATH_N - 1) - 0.5;
            double off = amp * sin (2 * M_PI * cyc * t + ph);
            px[k] = x0 + cos (dir) * len * t - sin (dir) * off;
            py[k] = y0 + sin (dir) * len * t + cos (dir) * off;
        }
    } else {
        double cx = x0 + range (-60, 60), cy = y0 + range (-60, 60);
        double rad = range (50, 140), a0 = range (0, 6.3), span = range (1.5, 4);
        for (int k = 0; k < PATH_N; k++) {
            double a = a0 + span * k / (PATH_N - 1);
            double rr = rad * (1 + 0.06 * sin (3 * a));
            px[k] = cx + rr * cos (a);
            py[k] = cy + rr * sin (a);
        }
    }
    double tr[3];
    for (int ch = 0; ch < 3; ch++) {
        tr[ch] = inks[ink][ch] + range (-0.07, 0.07);
        tr[ch] = tr[ch] < 0.05 ? 0.05 : tr[ch] > 0.95 ? 0.95 : tr[ch];
    }
    noise_t streak;
    noise_init (&streak, 9);
    double soft = range (0.8, 2.0);     /* width of the edge ramp, px */
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++) {
            double s, d = path_dist (px, py, PATH_N, x, y, &s);
            if (d > hw + soft)
                continue;
            double edge = (hw + soft / 2 - d) / soft;
            edge = edge < 0 ? 0 : edge > 1 ? 1 : edge;
            /* streaks: the marker's felt leaves lighter lines along
             * the stroke */
            double st = 1 - 0.08 * (1 + noise_at (&streak, fmod (s, 500) * 0.4,
                                                  d * 6));
            double a = alpha * st * edge;
            int i = y * SIDE + x;
            c->r[i] *= 1 - a + a * tr[0];
            c->g[i] *= 1 - a + a * tr[1];
            c->b[i] *= 1 - a + a * tr[2];
            if (a > 0.5)
                c->mask[i] = 1;
        }
}

/* A fold: a curved band of tissue around (x0, y0), half width hw, whose
 * stain is k times denser in its middle (Beer-Lambert again); dark, like
 * thick ink, but not ink: a negative for the pen classifier. */
static void
paint_fold (canvas_t *c, double x0, double y0, double hw, double k)
{
    double px[PATH_N], py[PATH_N];
    double dir = range (0, 2 * M_PI), len = range (40, 110), bend = range (-20, 20);
    for (int i = 0; i < PATH_N; i++) {
        double t = (double) i / (PATH_N - 1) - 0.5;
        double off = bend * (1 - 4 * t * t);
        px[i] = x0 + cos (dir) * len * t - sin (dir) * off;
        py[i] = y0 + sin (dir) * len * t + cos (dir) * off;
    }
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++) {
            int i = y * SIDE + x;
            double s, d = path_dist (px, py, PATH_N, x, y, &s);
            if (!c->tissue[i] || d >= hw)
                continue;
            double w = 1 - (d / hw) * (d / hw);
            double e = 1 + (k - 1) * w;
            c->r[i] = 255 * pow (c->r[i] / 255, e);
            c->g[i] = 255 * pow (c->g[i] / 255, e);
            c->b[i] = 255 * pow (c->b[i] / 255, e);
        }
}

/* Fraction of a pixel's footprint [d - 0.5, d + 0.5] (along the
 * normal) inside the band [-hw, hw]: anti-aliased thin lines. */
static double
band_cover (double d, double hw)
{
    double lo = d - 0.5 > -hw ? d - 0.5 : -hw, hi = d + 0.5 < hw ? d + 0.5 : hw;
    return hi > lo ? hi - lo : 0;
}

/* A coverslip edge: the line n . p = c0 with angle the direction of n,
 * a dark band of half width hw (sub-pixel allowed) taking away depth of
 * the light where it covers a pixel, a faint halo, and the glass beyond
 * (n . p > c0) brighter by lift. Tissue never lies beyond a coverslip
 * edge. label: the mask holds every pixel the band touches (as a truth
 * mask would); 0 paints a dark line that is not an edge (a negative). */
static void
paint_edge (canvas_t *c, double angle, double c0, double hw, double depth,
            double lift, int label)
{
    double nx = cos (angle), ny = sin (angle);
    double grey[3] = { range (40, 70), 0, range (45, 80) };
    grey[1] = grey[0];
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++) {
            int i = y * SIDE + x;
            double d = nx * x + ny * y - c0;
            if (d > hw && !c->tissue[i] && lift > 0) {
                c->r[i] += lift;
                c->g[i] += lift;
                c->b[i] += lift;
            }
            double cov = band_cover (d, hw);
            double halo = 0.12 * exp (-fabs (d) / (3 * hw + 1));
            double a = depth * cov > halo ? depth * cov : halo;
            c->r[i] += (grey[0] - c->r[i]) * a;
            c->g[i] += (grey[1] - c->g[i]) * a;
            c->b[i] += (grey[2] - c->b[i]) * a;
            if (label && fabs (d) < hw + 0.5)
                c->mask[i] = 1;
        }
}

static int
save (const canvas_t *c, const char *dir, const char *name, int n)
{
    char path[1024], err[256];
    qc_rgb_t *img = qc_rgb_new (SIDE, SIDE);
    qc_mask_t *m = qc_mask_new (SIDE, SIDE);
    if (!img || !m)
        return -1;
    for (int i = 0; i < SIDE * SIDE; i++) {
        const double v[3] = { c->r[i], c->g[i], c->b[i] };
        for (int ch = 0; ch < 3; ch++)
            img->px[3 * i + ch] = (uint8_t) (v[ch] < 0 ? 0 : v[ch] > 255 ? 255
                                             : lround (v[ch]));
        m->px[i] = c->mask[i];
    }
    unsigned char *data = NULL;
    size_t size = 0;
    int rc = 0;
    snprintf (path, sizeof path, "%s/%s_%d.png", dir, name, n);
    rc |= qc_png_encode_rgb (img, &data, &size, err, sizeof err)
       || qc_png_write_file (path, data, size, err, sizeof err);
    free (data);
    data = NULL;
    snprintf (path, sizeof path, "%s/%s_%d_mask.png", dir, name, n);
    rc |= qc_png_encode_mask (m, &data, &size, err, sizeof err)
       || qc_png_write_file (path, data, size, err, sizeof err);
    free (data);
    if (rc)
        fprintf (stderr, "mkexamples: %s: %s\n", path, err);
    qc_rgb_destroy (&img);
    qc_mask_destroy (&m);
    return rc ? -1 : 0;
}

int
main (int argc, char **argv)
{
    if (argc != 3) {
        fprintf (stderr, "usage: mkexamples TEXTURE_DIR OUT_DIR\n");
        return 2;
    }
    const char *tdir = argv[1], *out = argv[2];
    /* tissue as it looks at 1.25x: the low-magnification view (kept and
     * shrunk) and the 40x scans shrunk 8, 16 and 32 times */
    qc_rgb_t *tex[6] = {
        load_scaled (tdir, "he-tissue-level2.png", 1.0),
        load_scaled (tdir, "he-tissue-level2.png", 0.5),
        load_scaled (tdir, "he-TCGA-HE-7130.png", 1.0 / 8),
        load_scaled (tdir, "he-target.png", 1.0 / 16),
        load_scaled (tdir, "he-tcga-lung.png", 1.0 / 8),
        load_scaled (tdir, "he-TCGA-HE-7130.png", 1.0 / 32),
    };
    for (int i = 0; i < 6; i++)
        if (!tex[i])
            return 1;
    canvas_t *c = malloc (sizeof *c);
    if (!c)
        return 1;
    int rc = 0;
    /* pen: every ink at least once over tissue and glass; two of them
     * also show a coverslip-like thin line that is not ink */
    static const int pen_inks[4][4] = {
        { 0, 5, 2, 4 }, { 4, 3, 1, 5 }, { 2, 6, 5, 0 }, { 5, 4, 3, 6 }
    };
    for (int e = 0; e < 4; e++) {
        paint_glass (c);
        int nt = 1 + (e % 2);
        double tx[2], ty[2];
        for (int k = 0; k < nt; k++) {
            tx[k] = range (60, 196);
            ty[k] = range (60, 196);
            /* the second piece is dense, as a fold or thick section */
            paint_tissue (c, tex[(e * 2 + k) % 6], tx[k], ty[k], range (50, 95),
                          range (0.4, 0.8), k ? range (2.0, 2.8) : range (0.9, 1.6));
        }
        for (int k = 0; k < 3; k++)
            paint_fold (c, tx[k % nt] + range (-25, 25), ty[k % nt] + range (-25, 25),
                        range (4, 12), range (2.0, 3.6));
        if (e % 2)
            paint_edge (c, (e == 1 ? M_PI / 2 : 0) + range (-0.03, 0.03),
                        range (12, 30), range (0.4, 1.2), range (0.5, 0.85),
                        0, 0);
        /* most strokes cross tissue, where ink is hardest to see */
        for (int k = 0; k < 4; k++) {
            int on = k < 3;
            paint_pen (c, range (2.5, 12), range (0.72, 0.95), pen_inks[e][k],
                       on ? tx[k % nt] : range (0, SIDE),
                       on ? ty[k % nt] : range (0, SIDE));
        }
        rc |= save (c, out, "pen_markings", e + 1);
    }
    /* coverslip edges: two lines each, along two sides (which side the
     * coverslip ends on varies); the last example also has strokes of
     * dark ink, which are not edges */
    for (int e = 0; e < 3; e++) {
        paint_glass (c);
        paint_tissue (c, tex[(e * 3 + 1) % 6], range (100, 150), range (100, 140),
                      range (45, 65), range (0.7, 1.0), range (1.1, 1.6));
        for (int k = 0; k < 2; k++) {
            /* n points out of the coverslip, towards the margin */
            int side = (e + 2 * k) % 4;  /* right, top, left, bottom */
            double at = range (10, 36), tilt = range (-0.035, 0.035);
            static const double normal[4] = { 0, -M_PI / 2, M_PI, M_PI / 2 };
            double ang = normal[side] + tilt;
            double c0 = side == 0 || side == 3 ? SIDE - at : -at;
            paint_edge (c, ang, c0, range (0.3, 1.5), range (0.45, 0.9),
                        range (2, 6), 1);
        }
        if (e == 2) {
            uint8_t keep[SIDE * SIDE];
            memcpy (keep, c->mask, sizeof keep);
            paint_pen (c, range (4, 9), 0.85, 4, 128, 128);
            paint_pen (c, range (2.5, 5), 0.85, 3, 128, 128);
            memcpy (c->mask, keep, sizeof keep);
        }
        rc |= save (c, out, "coverslip_edge", e + 1);
    }
    for (int i = 0; i < 6; i++)
        qc_rgb_destroy (&tex[i]);
    free (c);
    return rc ? 1 : 0;
}
