/* The shared math of the two backends, checked on the CPU (runs
 * everywhere): the per-pixel formulas the CUDA kernels use
 * (kernels/image/pixel_math.h) and the kernels' algorithms, written here
 * as plain loops over the same formulas (column-prefix disk morphology,
 * clipped-window rectangles, direct-sum Gaussian, area / bilinear /
 * nearest resizing, numpy histogram bins, colour spaces), must give
 * exactly what the CPU ops give. test_cuda_equiv then compares the GPU
 * itself against the CPU, where there is one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "shared/log.h"
#include "tests/unit/check.h"
#include "tests/unit/rand_images.h"

static void
check_spaces (void)
{
    qc_rgb_t *img = rand_rgb (67, 41);
    qc_fimg_t *c[3] = { qc_fimg_new (67, 41), qc_fimg_new (67, 41),
                        qc_fimg_new (67, 41) };
    for (int sp = 0; sp < QC_CS_COUNT; sp++) {
        CHECK (qc_cpu_rgb_to_space (img, sp, c[0], c[1], c[2]) == 0);
        size_t bad = 0;
        for (size_t i = 0; i < qc_npix (67, 41); i++) {
            double v[3];
            qc_px_rgb_to_space (sp, img->px[3 * i], img->px[3 * i + 1],
                                img->px[3 * i + 2], v);
            for (int k = 0; k < 3; k++)
                bad += c[k]->px[i] != (float) v[k];
        }
        CHECK (bad == 0, "space %s: %zu values differ", qc_colorspace_name (sp), bad);
    }
    qc_rgb_destroy (&img);
    for (int k = 0; k < 3; k++)
        qc_fimg_destroy (&c[k]);
}

static void
check_hist_bins (void)
{
    qc_fimg_t *img = rand_fimg (97, 53);
    const int nb[] = { 1, 7, 10, 256 };
    const double range[][2] = { { 0.0, 1.0 }, { 0.125, 0.625 }, { 0.5, 0.5 } };
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 3; b++) {
            int n = nb[a];
            double lo = range[b][0], hi = range[b][1];
            uint64_t got[256], want[256] = { 0 };
            CHECK (qc_cpu_fimg_histogram (img, NULL, n, lo, hi, got) == 0);
            if (lo == hi) {
                lo -= 0.5;
                hi += 0.5;
            }
            for (size_t i = 0; i < qc_npix (97, 53); i++) {
                double v = img->px[i];
                if (v >= lo && v <= hi)
                    want[qc_px_hist_bin (v, lo, hi, n, n / (hi - lo))]++;
            }
            CHECK (memcmp (got, want, (size_t) n * sizeof *got) == 0,
                   "histogram nbins %d over [%g, %g]", n, lo, hi);
        }
    qc_fimg_destroy (&img);
}

static void
check_isqrt (void)
{
    int bad = 0;
    for (long v = 0; v < 200000; v++) {
        long k = qc_px_isqrt (v);
        bad += !(k * k <= v && (k + 1) * (k + 1) > v);
    }
    for (long k = 1000000; k < 1000100; k++)
        bad += qc_px_isqrt (k * k) != k || qc_px_isqrt (k * k - 1) != k - 1;
    CHECK (bad == 0, "%d wrong integer square roots", bad);
}

/* k_disk / k_colprefix of kernels/ops/cuda/morph.cu, as loops. */
static void
emu_disk_pass (const uint8_t *in, int w, int h, int seed_inv, int r,
               int out_inv, uint8_t *out)
{
    int32_t *c = calloc ((size_t) (h + 1) * w, sizeof *c);
    for (int x = 0; x < w; x++)
        for (int y = 0; y < h; y++)
            c[(size_t) (y + 1) * w + x] = c[(size_t) y * w + x]
                + ((in[(size_t) y * w + x] != 0) ^ seed_inv);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int hit = 0;
            for (int dx = -r; dx <= r && !hit; dx++) {
                if (x + dx < 0 || x + dx >= w)
                    continue;
                int k = (int) qc_px_isqrt ((long) r * r - (long) dx * dx);
                int y0 = y - k < 0 ? 0 : y - k, y1 = y + k + 1 > h ? h : y + k + 1;
                hit = c[(size_t) y1 * w + x + dx] - c[(size_t) y0 * w + x + dx] > 0;
            }
            out[(size_t) y * w + x] = (uint8_t) (hit ^ out_inv);
        }
    free (c);
}

/* k_rect, rows then columns. */
static void
emu_rect_pass (const uint8_t *in, int w, int h, int kw, int kh, int dil,
               uint8_t *out)
{
    uint8_t *t = malloc (qc_npix (w, h));
    for (int axis = 0; axis < 2; axis++) {
        const uint8_t *s = axis ? t : in;
        uint8_t *d = axis ? out : t;
        int k = axis ? kh : kw;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int p = axis ? y : x, n = axis ? h : w;
                int lo = p - (k - 1) / 2, hi = p + k / 2, any = 0, all = 1;
                lo = lo < 0 ? 0 : lo;
                hi = hi >= n ? n - 1 : hi;
                for (int q = lo; q <= hi; q++) {
                    int v = (axis ? s[(size_t) q * w + x] : s[(size_t) y * w + q]) != 0;
                    any |= v;
                    all &= v;
                }
                d[(size_t) y * w + x] = (uint8_t) (dil ? any : all);
            }
    }
    free (t);
}

static void
check_morph (void)
{
    const int w = 71, h = 53;
    qc_mask_t *m = rand_mask (w, h, 45), *got = qc_mask_new (w, h);
    qc_mask_t *want = qc_mask_new (w, h), *tmp = qc_mask_new (w, h);
    const int radii[] = { 1, 2, 3, 5, 8, 25 };
    for (size_t i = 0; i < 6; i++)
        for (int op = QC_MORPH_ERODE; op <= QC_MORPH_CLOSE; op++) {
            int r = radii[i];
            CHECK (qc_cpu_morph_disk (m, r, op, got) == 0);
            int first_erode = op == QC_MORPH_ERODE || op == QC_MORPH_OPEN;
            emu_disk_pass (m->px, w, h, first_erode, r, first_erode, want->px);
            if (op >= QC_MORPH_OPEN) {
                memcpy (tmp->px, want->px, qc_npix (w, h));
                emu_disk_pass (tmp->px, w, h, !first_erode, r, !first_erode,
                               want->px);
            }
            CHECK (memcmp (got->px, want->px, qc_npix (w, h)) == 0,
                   "disk r %d op %d", r, op);
        }
    const int ks[][2] = { { 1, 1 }, { 3, 3 }, { 4, 2 }, { 1, 6 }, { 9, 5 } };
    for (size_t i = 0; i < 5; i++)
        for (int op = QC_MORPH_ERODE; op <= QC_MORPH_CLOSE; op++) {
            int kw = ks[i][0], kh = ks[i][1];
            CHECK (qc_cpu_morph_rect (m, kw, kh, op, got) == 0);
            int first_dil = op == QC_MORPH_DILATE || op == QC_MORPH_CLOSE;
            emu_rect_pass (m->px, w, h, kw, kh, first_dil, want->px);
            if (op >= QC_MORPH_OPEN) {
                memcpy (tmp->px, want->px, qc_npix (w, h));
                emu_rect_pass (tmp->px, w, h, kw, kh, !first_dil, want->px);
            }
            CHECK (memcmp (got->px, want->px, qc_npix (w, h)) == 0,
                   "rect %dx%d op %d", kw, kh, op);
        }
    qc_mask_destroy (&m);
    qc_mask_destroy (&got);
    qc_mask_destroy (&want);
    qc_mask_destroy (&tmp);
}

static double
emu_at (const float *p, int w, int h, long x, long y, int border)
{
    int xx = qc_px_border_index (x, w, border), yy = qc_px_border_index (y, h, border);
    return xx < 0 || yy < 0 ? 0.0 : (double) p[(size_t) yy * w + xx];
}

/* k_gauss, both passes, weights as the op computes them. */
static void
check_gaussian (void)
{
    const int w = 45, h = 38;
    qc_fimg_t *src = rand_fimg (w, h), *got = qc_fimg_new (w, h);
    float *t = malloc (qc_npix (w, h) * sizeof *t), *o = malloc (qc_npix (w, h) * sizeof *o);
    const double sigmas[] = { 0.7, 2.0, 5.0, 30.0 };
    for (int border = 0; border <= QC_BORDER_CONSTANT; border++)
        for (size_t si = 0; si < 4; si++) {
            double sg = sigmas[si];
            int r = qc_px_gauss_radius (sg, 4.0);
            double wt[200], sum = 0.0;
            for (int k = 0; k <= r; k++) {
                wt[k] = exp (-0.5 / (sg * sg) * (double) k * (double) k);
                sum += k ? 2.0 * wt[k] : wt[k];
            }
            for (int k = 0; k <= r; k++)
                wt[k] /= sum;
            for (int pass = 0; pass < 2; pass++) {
                const float *s = pass ? t : src->px;
                float *d = pass ? o : t;
                for (long y = 0; y < h; y++)
                    for (long x = 0; x < w; x++) {
                        double v = wt[0] * emu_at (s, w, h, x, y, border);
                        for (int k = 1; k <= r; k++)
                            v += wt[k] * (pass ? emu_at (s, w, h, x, y - k, border)
                                                 + emu_at (s, w, h, x, y + k, border)
                                               : emu_at (s, w, h, x - k, y, border)
                                                 + emu_at (s, w, h, x + k, y, border));
                        d[y * w + x] = (float) v;
                    }
            }
            CHECK (qc_cpu_gaussian (src, sg, 4.0, border, got) == 0);
            CHECK (memcmp (got->px, o, qc_npix (w, h) * sizeof *o) == 0,
                   "gaussian sigma %g border %d", sg, border);
        }
    free (t);
    free (o);
    qc_fimg_destroy (&src);
    qc_fimg_destroy (&got);
}

/* k_area, k_bilinear and k_nearest on RGB. */
static void
check_resize (void)
{
    const int sizes[][4] = { { 50, 40, 17, 13 }, { 31, 29, 64, 45 },
                             { 100, 80, 25, 20 }, { 7, 5, 7, 5 } };
    for (size_t s = 0; s < 4; s++) {
        int sw = sizes[s][0], sh = sizes[s][1], dw = sizes[s][2], dh = sizes[s][3];
        qc_rgb_t *src = rand_rgb (sw, sh), *got = qc_rgb_new (dw, dh);
        uint8_t *want = malloc (qc_npix (dw, dh) * 3);
        qc_area_axis_t ax, ay;
        CHECK (qc_area_axis_init (&ax, sw, dw) == 0 && qc_area_axis_init (&ay, sh, dh) == 0);
        for (int interp = QC_INTERP_AREA; interp <= QC_INTERP_NEAREST; interp++) {
            for (int oy = 0; oy < dh; oy++)
                for (int ox = 0; ox < dw; ox++)
                    for (int c = 0; c < 3; c++) {
                        size_t i = ((size_t) oy * dw + ox) * 3 + c;
                        if (interp == QC_INTERP_NEAREST) {
                            int x = qc_px_nearest_index (ox, sw, dw);
                            int y = qc_px_nearest_index (oy, sh, dh);
                            want[i] = src->px[((size_t) y * sw + x) * 3 + c];
                        } else if (interp == QC_INTERP_BILINEAR) {
                            int x0, x1, y0, y1;
                            double u, v;
                            qc_px_bilinear_tap (sw, dw, ox, &x0, &x1, &u);
                            qc_px_bilinear_tap (sh, dh, oy, &y0, &y1, &v);
                            const uint8_t *p = src->px;
                            want[i] = qc_px_round_u8 (qc_px_bilinear_mix (
                                p[((size_t) y0 * sw + x0) * 3 + c], p[((size_t) y0 * sw + x1) * 3 + c],
                                p[((size_t) y1 * sw + x0) * 3 + c], p[((size_t) y1 * sw + x1) * 3 + c],
                                u, v));
                        } else {
                            double acc = 0.0;
                            for (int ky = 0; ky < ay.count[oy]; ky++) {
                                size_t j = (size_t) ay.first[oy] + ky;
                                double sum = 0.0;
                                for (int kx = 0; kx < ax.count[ox]; kx++)
                                    sum += ax.w[ax.off[ox] + kx]
                                         * src->px[(j * sw + ax.first[ox] + kx) * 3 + c];
                                acc += ay.w[ay.off[oy] + ky] * sum;
                            }
                            want[i] = qc_px_round_u8 (acc);
                        }
                    }
            CHECK (qc_cpu_resize_rgb (src, interp, got) == 0);
            CHECK (memcmp (got->px, want, qc_npix (dw, dh) * 3) == 0,
                   "resize %dx%d -> %dx%d interp %d", sw, sh, dw, dh, interp);
        }
        qc_area_axis_free (&ax);
        qc_area_axis_free (&ay);
        free (want);
        qc_rgb_destroy (&src);
        qc_rgb_destroy (&got);
    }
}

int
main (void)
{
    qc_log_set_stderr_level (QC_LOG_ERROR);
    check_spaces ();
    check_hist_bins ();
    check_isqrt ();
    check_morph ();
    check_gaussian ();
    check_resize ();
    return check_done ("kernel_math");
}
