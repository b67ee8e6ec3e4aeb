/* Filters (Gaussian, Laplacian, Sobel, box) and resizing. Where marked,
 * expected arrays were computed with scikit-image 0.19.3 on the same
 * 6 x 5 test image; the rest are analytic or naive references. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/ops.h"
#include "tests/unit/check.h"

#define NEAR(a, b, tol) (fabs ((double) (a) - (double) (b)) <= (tol))

static const qc_ops_t *ops;

/* img[y][x] = ((7 x + 13 y) % 17) / 16: every value exact in float. */
static qc_fimg_t *
test_image (void)
{
    qc_fimg_t *f = qc_fimg_new (6, 5);
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 6; x++)
            f->px[y * 6 + x] = (float) (((x * 7 + y * 13) % 17) / 16.0);
    return f;
}

static int
all_near (const qc_fimg_t *f, const double *want, double tol)
{
    for (int i = 0; i < f->w * f->h; i++)
        if (!NEAR (f->px[i], want[i], tol)) {
            fprintf (stderr, "  pixel %d: %.10f, want %.10f\n", i, f->px[i],
                     want[i]);
            return 0;
        }
    return 1;
}

static void
test_gaussian (void)
{
    /* impulse: sums to 1 and equals the outer product of the sampled,
     * normalised 1-D kernel */
    int n = 41, c = 20;
    qc_fimg_t *f = qc_fimg_new (n, n), *g = qc_fimg_new (n, n);
    f->px[c * n + c] = 1.0f;
    double sigma = 2.0;
    CHECK (ops->gaussian (f, sigma, 4.0, QC_BORDER_REFLECT, g) == 0);
    double k[9], ks = 0, sum = 0;
    for (int i = 0; i <= 8; i++) {
        k[i] = exp (-(double) (i * i) / (2 * sigma * sigma));
        ks += i ? 2 * k[i] : k[i];
    }
    int bad = 0;
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++) {
            int dx = abs (x - c), dy = abs (y - c);
            double want = dx <= 8 && dy <= 8 ? k[dx] * k[dy] / (ks * ks) : 0;
            sum += g->px[y * n + x];
            bad += !NEAR (g->px[y * n + x], want, 1e-7);
        }
    CHECK (bad == 0 && NEAR (sum, 1.0, 1e-6), "bad %d sum %.9f", bad, sum);
    CHECK (g->px[c * n + c + 9] == 0, "radius int(4 * 2 + 0.5) = 8");

    /* skimage.filters.gaussian (img, sigma=1) (mode 'nearest') */
    static const double want_nearest[30] = {
        0.3020464899, 0.4361104476, 0.5124726714, 0.4636950312, 0.4250626888, 0.3644515456,
        0.4873131877, 0.5065605609, 0.4937893356, 0.4470840689, 0.4641609229, 0.5139242925,
        0.5405007055, 0.5566488027, 0.5176973477, 0.4971723107, 0.5173484406, 0.5449415205,
        0.4236934634, 0.5202122836, 0.536970025, 0.5477968672, 0.5467096623, 0.4684686269,
        0.2892077916, 0.4764820778, 0.5731784104, 0.5640182812, 0.5128778835, 0.3641209026 };
    static const double want_reflect[30] = {
        0.4344205396, 0.4569823555, 0.4714742547, 0.4655257816, 0.4552499778, 0.4511038547,
        0.4719981803, 0.4841486082, 0.4887175022, 0.4821338299, 0.4778934055, 0.4790411802,
        0.4933671334, 0.504501263, 0.5098773912, 0.5067086198, 0.503207749, 0.5015548209,
        0.4699625976, 0.4970907674, 0.5210117493, 0.5253304338, 0.513146981, 0.4976057713,
        0.4353064003, 0.479767836, 0.52255528, 0.5325476257, 0.5106579682, 0.4821101419 };
    qc_fimg_t *t = test_image (), *o = qc_fimg_new (6, 5);
    CHECK (ops->gaussian (t, 1.0, 4.0, QC_BORDER_NEAREST, o) == 0);
    CHECK (all_near (o, want_nearest, 1e-6), "sigma 1 nearest");
    CHECK (ops->gaussian (t, 1.5, 4.0, QC_BORDER_REFLECT, t) == 0, "in place");
    CHECK (all_near (t, want_reflect, 1e-6), "sigma 1.5 reflect");

    /* constant stays constant, even with a kernel far wider than the
     * image (HistoQC's blur uses sigma 100) */
    for (int i = 0; i < 30; i++)
        t->px[i] = 0.375f;
    for (int b = QC_BORDER_REFLECT; b <= QC_BORDER_WRAP; b++) {
        CHECK (ops->gaussian (t, 100.0, 4.0, (qc_border_t) b, o) == 0);
        int ok = 1;
        for (int i = 0; i < 30; i++)
            ok &= NEAR (o->px[i], 0.375, 1e-6);
        CHECK (ok, "border %d", b);
    }
    CHECK (ops->gaussian (t, 0.0, 4.0, QC_BORDER_REFLECT, o) == 0
           && o->px[3] == 0.375f, "sigma 0 copies");
    CHECK (ops->gaussian (t, 1.0, 0.0, QC_BORDER_REFLECT, o) == -1);
    CHECK (ops->gaussian (t, 1.0, 4.0, (qc_border_t) 9, o) == -1);
    CHECK (ops->gaussian (t, 1.0, 4.0, QC_BORDER_REFLECT, g) == -1, "size");
    qc_fimg_destroy (&f);
    qc_fimg_destroy (&g);
    qc_fimg_destroy (&t);
    qc_fimg_destroy (&o);
}

static void
test_edges (void)
{
    static const double want_sobel[30] = {
        0.4053475553, 0.4310348195, 0.2209708691, 0.2209708691, 0.0563367387, 0.462721653,
        0.4032339969, 0.2170694373, 0.1344113323, 0.1344113323, 0.2440703024, 0.2425652296,
        0.2055147881, 0.1344113323, 0.1344113323, 0.2170694373, 0.2170694373, 0.2055147881,
        0.4697905118, 0.1746928107, 0.1344113323, 0.2440703024, 0.1344113323, 0.3033826225,
        0.3563048203, 0.4310348195, 0.2390165397, 0.0563367387, 0.2209708691, 0.4759858191 };
    static const double want_laplace[30] = {
        -1.25, 0.25, 1.3125, -0.8125, 1.3125, -1.4375,
        1.6875, -2.125, 1.0625, -2.125, 0.0, 1.5,
        -0.4375, 2.125, -1.0625, 2.125, -2.125, 0.4375,
        -0.4375, 1.0625, -2.125, 0.0, 2.125, -0.625,
        -0.6875, -0.25, 1.875, -1.3125, 0.8125, -0.875 };
    qc_fimg_t *t = test_image (), *o = qc_fimg_new (6, 5);
    CHECK (ops->sobel (t, QC_BORDER_REFLECT, o) == 0);
    CHECK (all_near (o, want_sobel, 1e-6), "sobel (skimage 0.19)");
    CHECK (ops->laplace (t, QC_BORDER_REFLECT, o) == 0);
    CHECK (all_near (o, want_laplace, 1e-6), "laplace (skimage 0.19)");
    CHECK (ops->laplace (t, QC_BORDER_MIRROR, t) == 0, "in place, mirror");

    /* ramp of slope a: interior sobel a * sqrt 2, reflected edge half */
    qc_fimg_t *r = qc_fimg_new (6, 5), *s = qc_fimg_new (6, 5);
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 6; x++)
            r->px[y * 6 + x] = 0.5f * x;
    CHECK (ops->sobel (r, QC_BORDER_REFLECT, s) == 0);
    CHECK (NEAR (s->px[2 * 6 + 2], 0.5 * sqrt (2.0), 1e-6)
           && NEAR (s->px[0], 0.5 / sqrt (2.0), 1e-6));
    /* laplacian of x^2 is -2 inside (positive centre) */
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 6; x++)
            r->px[y * 6 + x] = (float) (x * x);
    CHECK (ops->laplace (r, QC_BORDER_REFLECT, s) == 0);
    CHECK (s->px[2 * 6 + 3] == -2.0f && s->px[0] == -1.0f
           && s->px[5] == 9.0f);
    CHECK (ops->sobel (NULL, QC_BORDER_REFLECT, s) == -1);
    qc_fimg_destroy (&r);
    qc_fimg_destroy (&s);
    qc_fimg_destroy (&t);
    qc_fimg_destroy (&o);
}

/* scipy.signal.convolve2d (img, ones ((kh, kw)) / (kw kh), 'same') by
 * definition: window [x - kw/2, x + (kw-1)/2], zero outside. */
static double
naive_box (const qc_fimg_t *f, int x, int y, int kw, int kh, qc_border_t b)
{
    double s = 0;
    for (int dy = -(kh / 2); dy <= (kh - 1) / 2; dy++)
        for (int dx = -(kw / 2); dx <= (kw - 1) / 2; dx++) {
            int yy = qc_px_border_index (y + dy, f->h, b);
            int xx = qc_px_border_index (x + dx, f->w, b);
            if (yy >= 0 && xx >= 0)
                s += f->px[yy * f->w + xx];
        }
    return s / (kw * kh);
}

static void
test_box (void)
{
    int w = 23, h = 17;
    qc_fimg_t *f = qc_fimg_new (w, h), *o = qc_fimg_new (w, h);
    srand (3);
    for (int i = 0; i < w * h; i++)
        f->px[i] = (float) (rand () % 1000) / 999.0f;
    static const int ks[][2] = { { 10, 10 }, { 3, 3 }, { 1, 5 }, { 4, 7 },
                                 { 40, 2 } };
    for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
        for (int b = QC_BORDER_REFLECT; b <= QC_BORDER_CONSTANT; b++) {
            CHECK (ops->box_filter (f, ks[k][0], ks[k][1], (qc_border_t) b, o)
                   == 0);
            int bad = 0;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    bad += !NEAR (o->px[y * w + x],
                                  naive_box (f, x, y, ks[k][0], ks[k][1],
                                             (qc_border_t) b), 1e-6);
            CHECK (bad == 0, "box %dx%d border %d: %d bad", ks[k][0],
                   ks[k][1], b, bad);
        }
    /* in place, with a border rule that reads rows already written */
    qc_fimg_t *copy = qc_fimg_clone (f);
    CHECK (ops->box_filter (f, 5, 6, QC_BORDER_MIRROR, o) == 0);
    CHECK (ops->box_filter (copy, 5, 6, QC_BORDER_MIRROR, copy) == 0);
    CHECK (memcmp (copy->px, o->px, sizeof (float) * w * h) == 0, "in place");
    qc_fimg_destroy (&copy);
    /* convolve2d's even-size anchor: an impulse at 6 spreads to
     * columns 2 .. 11 with k = 10 */
    qc_fimg_t *row = qc_fimg_new (12, 1), *ro = qc_fimg_new (12, 1);
    row->px[6] = 10.0f;
    CHECK (ops->box_filter (row, 10, 1, QC_BORDER_CONSTANT, ro) == 0);
    CHECK (ro->px[1] == 0 && ro->px[2] == 1.0f && ro->px[11] == 1.0f);
    CHECK (ops->box_filter (row, 0, 1, QC_BORDER_CONSTANT, ro) == -1);
    qc_fimg_destroy (&row);
    qc_fimg_destroy (&ro);
    qc_fimg_destroy (&f);
    qc_fimg_destroy (&o);
}

static void
test_resize (void)
{
    /* constant RGB stays exactly constant at any ratio and method */
    qc_rgb_t *c = qc_rgb_new (37, 29);
    for (int i = 0; i < 37 * 29; i++) {
        c->px[i * 3] = 200;
        c->px[i * 3 + 1] = 100;
        c->px[i * 3 + 2] = 7;
    }
    static const int sizes[][2] = { { 5, 4 }, { 37, 29 }, { 80, 61 },
                                    { 1, 1 }, { 13, 29 } };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int m = QC_INTERP_AREA; m <= QC_INTERP_NEAREST; m++) {
            qc_rgb_t *d = qc_rgb_new (sizes[s][0], sizes[s][1]);
            CHECK (ops->resize_rgb (c, (qc_interp_t) m, d) == 0);
            int ok = 1;
            for (int i = 0; i < d->w * d->h; i++)
                ok &= d->px[i * 3] == 200 && d->px[i * 3 + 1] == 100
                   && d->px[i * 3 + 2] == 7;
            CHECK (ok, "constant %dx%d method %d", d->w, d->h, m);
            qc_rgb_destroy (&d);
        }
    qc_rgb_t *same = qc_rgb_new (37, 29);
    CHECK (ops->resize_rgb (c, QC_INTERP_AREA, c) == -1, "no in place");
    qc_rgb_destroy (&same);
    qc_rgb_destroy (&c);

    /* 4 x 4 -> 2 x 2 area: block means; 3 -> 2: weights 2/3 and 1/3 */
    qc_fimg_t *f = qc_fimg_new (4, 4), *g = qc_fimg_new (2, 2);
    for (int i = 0; i < 16; i++)
        f->px[i] = (float) i;
    CHECK (ops->resize_fimg (f, QC_INTERP_AREA, g) == 0);
    CHECK (g->px[0] == 2.5f && g->px[1] == 4.5f && g->px[2] == 10.5f
           && g->px[3] == 12.5f);
    qc_fimg_t *r3 = qc_fimg_new (3, 1), *r2 = qc_fimg_new (2, 1);
    r3->px[0] = 0, r3->px[1] = 3, r3->px[2] = 6;
    CHECK (ops->resize_fimg (r3, QC_INTERP_AREA, r2) == 0);
    CHECK (NEAR (r2->px[0], 1.0, 1e-6) && NEAR (r2->px[1], 5.0, 1e-6));
    /* bilinear 2 -> 4: centres at -0.25, 0.25, 0.75, 1.25 (clamped) */
    qc_fimg_t *b2 = qc_fimg_new (2, 1), *b4 = qc_fimg_new (4, 1);
    b2->px[0] = 0, b2->px[1] = 4;
    CHECK (ops->resize_fimg (b2, QC_INTERP_BILINEAR, b4) == 0);
    CHECK (b4->px[0] == 0 && b4->px[1] == 1 && b4->px[2] == 3 && b4->px[3] == 4);
    CHECK (ops->resize_fimg (b2, QC_INTERP_NEAREST, b4) == 0);
    CHECK (b4->px[0] == 0 && b4->px[1] == 0 && b4->px[2] == 4 && b4->px[3] == 4);

    /* masks: nearest only; 2x downsample takes the odd pixels */
    qc_mask_t *m = qc_mask_new (4, 1), *m2 = qc_mask_new (2, 1);
    m->px[1] = 1;
    CHECK (ops->resize_mask (m, QC_INTERP_NEAREST, m2) == 0);
    CHECK (m2->px[0] == 1 && m2->px[1] == 0);
    CHECK (ops->resize_mask (m, QC_INTERP_AREA, m2) == -1);

    /* the area axis weights sum to one and cover the source */
    qc_area_axis_t ax;
    CHECK (qc_area_axis_init (&ax, 2967, 185) == 0);
    int ok = ax.first[0] == 0
          && ax.first[184] + ax.count[184] == 2967;
    for (int o = 0; o < 185; o++) {
        double s = 0;
        for (int k = 0; k < ax.count[o]; k++)
            s += ax.w[ax.off[o] + k];
        ok &= NEAR (s, 1.0, 1e-12) && ax.count[o] <= 18;
    }
    CHECK (ok);
    qc_area_axis_free (&ax);
    CHECK (qc_area_axis_init (&ax, 0, 3) == -1);

    qc_fimg_destroy (&f);
    qc_fimg_destroy (&g);
    qc_fimg_destroy (&r3);
    qc_fimg_destroy (&r2);
    qc_fimg_destroy (&b2);
    qc_fimg_destroy (&b4);
    qc_mask_destroy (&m);
    qc_mask_destroy (&m2);
}

int
main (void)
{
    ops = qc_ops_cpu ();
    test_gaussian ();
    test_edges ();
    test_box ();
    test_resize ();
    return check_done ("test_image_filters");
}
