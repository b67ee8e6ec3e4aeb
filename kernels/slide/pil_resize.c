/* PIL's thumbnail resampling; see pil_resize.h. The arithmetic follows
 * Pillow's C code step by step (where it rounds, truncates or clips, so
 * does this), since the point is the same bytes as HistoQC's images. */
#include "kernels/slide/pil_resize.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PRECISION_BITS (32 - 8 - 2)
#define LANCZOS_SUPPORT 3.0

static double
sinc (double x)
{
    if (x == 0.0)
        return 1.0;
    x = x * M_PI;
    return sin (x) / x;
}

static double
lanczos (double x)
{
    if (-3.0 <= x && x < 3.0)
        return sinc (x) * sinc (x / 3);
    return 0.0;
}

/* The weights of each output pixel over the input line [in0, in1):
 * bounds[2 i] the first input pixel, bounds[2 i + 1] how many; kk[i *
 * ksize + j] in fixed point. Returns ksize, or 0 when memory runs out. */
static int
coeffs (int in_size, double in0, double in1, int out_size, int **bounds_p,
        int32_t **kk_p)
{
    double scale = (in1 - in0) / out_size, filterscale = scale;
    if (filterscale < 1.0)
        filterscale = 1.0;
    double support = LANCZOS_SUPPORT * filterscale;
    int ksize = (int) ceil (support) * 2 + 1;
    double *kk = malloc ((size_t) out_size * (size_t) ksize * sizeof *kk);
    int *bounds = malloc ((size_t) out_size * 2 * sizeof *bounds);
    int32_t *fixed = malloc ((size_t) out_size * (size_t) ksize * sizeof *fixed);
    if (!kk || !bounds || !fixed) {
        free (kk);
        free (bounds);
        free (fixed);
        return 0;
    }
    for (int xx = 0; xx < out_size; xx++) {
        double center = in0 + (xx + 0.5) * scale, ww = 0.0;
        double ss = 1.0 / filterscale;
        int xmin = (int) (center - support + 0.5);
        if (xmin < 0)
            xmin = 0;
        int xmax = (int) (center + support + 0.5);
        if (xmax > in_size)
            xmax = in_size;
        xmax -= xmin;
        double *k = kk + (size_t) xx * ksize;
        int x = 0;
        for (; x < xmax; x++) {
            double w = lanczos ((x + xmin - center + 0.5) * ss);
            k[x] = w;
            ww += w;
        }
        for (x = 0; x < xmax; x++)
            if (ww != 0.0)
                k[x] /= ww;
        for (; x < ksize; x++)
            k[x] = 0;
        bounds[2 * xx] = xmin;
        bounds[2 * xx + 1] = xmax;
    }
    for (size_t i = 0; i < (size_t) out_size * (size_t) ksize; i++)
        fixed[i] = kk[i] < 0 ? (int32_t) (-0.5 + kk[i] * (1 << PRECISION_BITS))
                             : (int32_t) (0.5 + kk[i] * (1 << PRECISION_BITS));
    free (kk);
    *bounds_p = bounds;
    *kk_p = fixed;
    return ksize;
}

static inline uint8_t
clip8 (int32_t v)
{
    v >>= PRECISION_BITS;
    return (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
}

/* One output pixel of either pass: n taps k over the RGB pixels at p,
 * p + step, ..., summed in 22-bit fixed point from Pillow's half. */
static void
taps_rgb (const uint8_t *p, size_t step, const int32_t *k, int n,
          uint8_t out[3])
{
    int32_t s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0;
    for (int i = 0; i < n; i++, p += step) {
        s0 += p[0] * k[i];
        s1 += p[1] * k[i];
        s2 += p[2] * k[i];
    }
    out[0] = clip8 (s0);
    out[1] = clip8 (s1);
    out[2] = clip8 (s2);
}

int
qc_pil_lanczos (const qc_rgb_t *src, double x0, double y0, double x1,
                double y1, qc_rgb_t *dst)
{
    if (!qc_rgb_valid (src) || !qc_rgb_valid (dst) || !(x0 >= 0)
        || !(y0 >= 0) || !(x1 > x0) || !(y1 > y0) || x1 > src->w
        || y1 > src->h)
        return -1;
    int ow = dst->w, oh = dst->h;
    int need_h = ow != src->w || x0 != 0.0 || x1 != ow;
    int need_v = oh != src->h || y0 != 0.0 || y1 != oh;
    int *bh = NULL, *bv = NULL;
    int32_t *kh = NULL, *kv = NULL;
    int ksh = coeffs (src->w, x0, x1, ow, &bh, &kh);
    int ksv = ksh ? coeffs (src->h, y0, y1, oh, &bv, &kv) : 0;
    if (!ksv) {
        free (bh);
        free (kh);
        return -1;
    }
    /* the input rows the vertical pass reads */
    int first = bv[0], last = bv[2 * oh - 2] + bv[2 * oh - 1];
    const uint8_t *in = src->px;
    int in_w = src->w;
    uint8_t *tmp = NULL;
    int rc = 0;
    if (need_h) {
        for (int i = 0; i < oh; i++)
            bv[2 * i] -= first;
        tmp = malloc ((size_t) ow * (size_t) (last - first) * 3);
        if (!tmp) {
            rc = -1;
            goto done;
        }
        for (int y = 0; y < last - first; y++) {
            const uint8_t *row = src->px + ((size_t) (y + first) * src->w) * 3;
            uint8_t *o = tmp + (size_t) y * ow * 3;
            for (int xx = 0; xx < ow; xx++)
                taps_rgb (row + (size_t) bh[2 * xx] * 3, 3,
                          kh + (size_t) xx * ksh, bh[2 * xx + 1], o + 3 * xx);
        }
        in = tmp;
        in_w = ow;
    }
    if (need_v) {
        for (int yy = 0; yy < oh; yy++) {
            int ymin = bv[2 * yy], ymax = bv[2 * yy + 1];
            const int32_t *k = kv + (size_t) yy * ksv;
            uint8_t *o = dst->px + (size_t) yy * ow * 3;
            for (int xx = 0; xx < ow; xx++)
                taps_rgb (in + ((size_t) ymin * in_w + xx) * 3,
                          (size_t) in_w * 3, k, ymax, o + 3 * xx);
        }
    } else if (need_h)
        /* only the horizontal pass: its rows are the output (first is 0
         * and the row count is oh when no vertical change is needed) */
        memcpy (dst->px, tmp, (size_t) ow * oh * 3);
    else
        memcpy (dst->px, src->px, (size_t) ow * oh * 3);
done:
    free (tmp);
    free (bh);
    free (kh);
    free (bv);
    free (kv);
    return rc;
}

/* Pillow's division_UINT32: 2^32 / (2^8 divider), in float, truncated. */
static uint32_t
reciprocal (int divider)
{
    float max_int = (float) (1 << 30) * 4.0f;
    uint32_t max_dividend = (1u << 8) * (uint32_t) divider;
    return (uint32_t) (max_int / (float) max_dividend);
}

/* dst pixel (ox, oy) = the mean of src's block [x, x + bw) x [y, y + bh)
 * as Pillow rounds it. */
static void
block_mean (const qc_rgb_t *src, int x, int y, int bw, int bh, uint8_t *out)
{
    uint32_t mult = reciprocal (bw * bh), amend = (uint32_t) (bw * bh / 2);
    uint32_t s[3] = { amend, amend, amend };
    for (int yy = y; yy < y + bh; yy++) {
        const uint8_t *p = src->px + ((size_t) yy * src->w + x) * 3;
        for (int xx = 0; xx < bw; xx++, p += 3) {
            s[0] += p[0];
            s[1] += p[1];
            s[2] += p[2];
        }
    }
    for (int c = 0; c < 3; c++)
        out[c] = (uint8_t) ((s[c] * mult) >> 24);
}

int
qc_pil_reduce (const qc_rgb_t *src, int fx, int fy, qc_rgb_t *dst)
{
    if (!qc_rgb_valid (src) || !qc_rgb_valid (dst) || fx < 1 || fy < 1
        || dst->w != (src->w + fx - 1) / fx || dst->h != (src->h + fy - 1) / fy)
        return -1;
    /* full blocks, then the partial last column and row (Pillow's
     * ImagingReduceCorners: the mean of what the block holds) */
    for (int oy = 0; oy < dst->h; oy++) {
        int y = oy * fy, bh = src->h - y < fy ? src->h - y : fy;
        for (int ox = 0; ox < dst->w; ox++) {
            int x = ox * fx, bw = src->w - x < fx ? src->w - x : fx;
            block_mean (src, x, y, bw, bh, dst->px + ((size_t) oy * dst->w + ox) * 3);
        }
    }
    return 0;
}

int
qc_pil_thumbnail_resize (const qc_rgb_t *src, qc_rgb_t *dst)
{
    if (!qc_rgb_valid (src) || !qc_rgb_valid (dst))
        return -1;
    /* Image.resize (size, LANCZOS, reducing_gap = 2.0) */
    int fx = (int) ((double) src->w / dst->w / 2.0);
    int fy = (int) ((double) src->h / dst->h / 2.0);
    fx = fx ? fx : 1;
    fy = fy ? fy : 1;
    if (fx == 1 && fy == 1)
        return dst->w == src->w && dst->h == src->h
               ? (memcpy (dst->px, src->px, (size_t) src->w * src->h * 3), 0)
               : qc_pil_lanczos (src, 0, 0, src->w, src->h, dst);
    /* the box PIL reduces is the whole image (its "safe box" around the
     * whole image is clipped to it); the resample box that follows is
     * the original extent in reduced pixels, which may end inside the
     * reduced image's last column or row */
    qc_rgb_t *red = qc_rgb_new_host ((src->w + fx - 1) / fx,
                                     (src->h + fy - 1) / fy);
    int rc = !red || qc_pil_reduce (src, fx, fy, red)
             || qc_pil_lanczos (red, 0, 0, (double) src->w / fx,
                                (double) src->h / fy, dst) ? -1 : 0;
    qc_rgb_destroy (&red);
    return rc;
}
