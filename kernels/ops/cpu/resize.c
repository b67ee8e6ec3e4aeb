/* Resizing to an exact output size.
 *
 * AREA: each output pixel is the average of the source area it covers,
 * [o * s, (o + 1) * s) per axis with s = n_src / n_dst, partial pixels
 * weighted by their overlap. Separable: a source row is first reduced
 * along x (qc_area_reduce_row_u8, shared with region_read, which feeds
 * it rows straight from OpenSlide), then rows are mixed along y. A
 * constant image stays exactly constant and an integer factor is a plain
 * block mean.
 * BILINEAR: sample at ((o + 0.5) s - 0.5), clamped to the edge pixels.
 * NEAREST: the source pixel containing the output centre, (o + 0.5) s.
 * Rounding to uint8 is to nearest. */
#include "kernels/ops/cpu/cpu_ops.h"

#include <stdlib.h>
#include <string.h>

void
qc_area_axis_free (qc_area_axis_t *ax)
{
    if (!ax)
        return;
    free (ax->first);
    free (ax->count);
    free (ax->off);
    free (ax->w);
    memset (ax, 0, sizeof *ax);
}

int
qc_area_axis_init (qc_area_axis_t *ax, int n_src, int n_dst)
{
    if (!ax || n_src < 1 || n_dst < 1)
        return -1;
    memset (ax, 0, sizeof *ax);
    double s = (double) n_src / n_dst;
    /* each output touches at most ceil (s) + 1 source pixels */
    size_t per = (size_t) ceil (s) + 2;
    ax->first = malloc ((size_t) n_dst * sizeof *ax->first);
    ax->count = malloc ((size_t) n_dst * sizeof *ax->count);
    ax->off = malloc ((size_t) n_dst * sizeof *ax->off);
    ax->w = malloc ((size_t) n_dst * per * sizeof *ax->w);
    if (!ax->first || !ax->count || !ax->off || !ax->w) {
        qc_area_axis_free (ax);
        return -1;
    }
    ax->n_src = n_src;
    ax->n_dst = n_dst;
    size_t off = 0;
    for (int o = 0; o < n_dst; o++) {
        /* a and b from integers so that exact factors give exact edges */
        double a = (double) o * n_src / n_dst;
        double b = o + 1 == n_dst ? n_src : (double) (o + 1) * n_src / n_dst;
        int lo = (int) floor (a), hi = (int) ceil (b) - 1;
        if (hi >= n_src)
            hi = n_src - 1;
        if (hi < lo)
            hi = lo;
        double sum = 0.0;
        int first = -1, count = 0;
        for (int i = lo; i <= hi; i++) {
            double wt = fmin (i + 1.0, b) - fmax ((double) i, a);
            if (wt <= 0.0) {
                if (first < 0)
                    continue;       /* leading sliver of zero width */
                break;              /* trailing one */
            }
            if (first < 0)
                first = i;
            ax->w[off + (size_t) count++] = wt;
            sum += wt;
        }
        if (first < 0) {            /* cannot happen for n_src >= 1 */
            first = lo;
            ax->w[off] = 1.0;
            count = 1;
            sum = 1.0;
        }
        for (int k = 0; k < count; k++)
            ax->w[off + (size_t) k] /= sum;
        ax->first[o] = first;
        ax->count[o] = count;
        ax->off[o] = (int) off;
        off += (size_t) count;
    }
    return 0;
}

/* Three channels, the common case: the channels of a pixel summed side
 * by side (three independent chains rather than one at a time), with
 * the same adds in the same order as the general loop, so the same
 * bits. */
static void
reduce_row_u8_c3 (const qc_area_axis_t *ax, const uint8_t *row, double *out)
{
    for (int o = 0; o < ax->n_dst; o++, out += 3) {
        const double *wt = ax->w + ax->off[o];
        const uint8_t *p = row + (size_t) ax->first[o] * 3;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0;
        for (int k = 0, n = ax->count[o]; k < n; k++, p += 3) {
            double w = wt[k];
            s0 += w * p[0];
            s1 += w * p[1];
            s2 += w * p[2];
        }
        out[0] = s0;
        out[1] = s1;
        out[2] = s2;
    }
}

/* An exact halving (n_src = 2 n_dst: every output is two whole source
 * pixels, weights 0.5 and 0.5, as qc_area_axis_init makes them): the
 * general loop's 0.0 + 0.5 a + 0.5 b is exact for bytes, and so is
 * 0.5 (a + b), the same number, in a loop the compiler vectorises. The
 * 1.25x read of a 40x slide halves its 2.5x level. */
__attribute__ ((target_clones ("avx2", "default"))) static void
halve_row_u8 (const uint8_t *row, int n_dst, int ch, double *out)
{
    size_t n = (size_t) n_dst;
    if (ch == 3) {
        for (size_t o = 0; o < n; o++) {
            const uint8_t *p = row + o * 6;
            out[o * 3] = 0.5 * (double) (p[0] + p[3]);
            out[o * 3 + 1] = 0.5 * (double) (p[1] + p[4]);
            out[o * 3 + 2] = 0.5 * (double) (p[2] + p[5]);
        }
        return;
    }
    for (size_t o = 0; o < n; o++)
        for (int c = 0; c < ch; c++)
            out[o * (size_t) ch + (size_t) c]
                = 0.5 * (double) (row[(2 * o) * (size_t) ch + (size_t) c]
                                  + row[(2 * o + 1) * (size_t) ch + (size_t) c]);
}

void
qc_area_reduce_row_u8 (const qc_area_axis_t *ax, const uint8_t *row, int ch,
                       double *out)
{
    if (ax->n_src == 2 * ax->n_dst) {
        halve_row_u8 (row, ax->n_dst, ch, out);
        return;
    }
    if (ch == 3) {
        reduce_row_u8_c3 (ax, row, out);
        return;
    }
    for (int o = 0; o < ax->n_dst; o++) {
        const double *wt = ax->w + ax->off[o];
        const uint8_t *p = row + (size_t) ax->first[o] * ch;
        for (int c = 0; c < ch; c++) {
            double s = 0.0;
            for (int k = 0; k < ax->count[o]; k++)
                s += wt[k] * p[(size_t) k * ch + c];
            out[(size_t) o * ch + c] = s;
        }
    }
}

static void
reduce_row_f (const qc_area_axis_t *ax, const float *row, double *out)
{
    for (int o = 0; o < ax->n_dst; o++) {
        const double *wt = ax->w + ax->off[o];
        const float *p = row + ax->first[o];
        double s = 0.0;
        for (int k = 0; k < ax->count[o]; k++)
            s += wt[k] * p[k];
        out[o] = s;
    }
}

/* qc_px_round_u8 over a row of area averages of uint8 values. The weights are
 * positive and sum to 1 (to a few ulps), so every value lies in
 * [0, 255 + 1e-12]: its clamps never act, and without them the
 * loop vectorises. */
__attribute__ ((target_clones ("avx2", "default"))) static void
round_row_u8 (const double *v, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t) (int32_t) (v[i] + 0.5);
}

/* acc (+)= w row: 0.0 + the first product, as a sum started at zero
 * gives, then one add a row; four doubles a step where AVX2 runs. */
__attribute__ ((target_clones ("avx2", "default"))) static void
mix_row (double *restrict acc, const double *restrict row, double w,
         size_t n, int first)
{
    if (first)
        for (size_t i = 0; i < n; i++)
            acc[i] = 0.0 + w * row[i];
    else
        for (size_t i = 0; i < n; i++)
            acc[i] += w * row[i];
}

/* The two above for other files: clang 14 does not link a call from
 * another file to a function it cloned by target, so the clones stay
 * static and these plain functions call them (a call a row). */
void
qc_area_round_row_u8 (const double *v, size_t n, uint8_t *out)
{
    if (v && out)
        round_row_u8 (v, n, out);
}

void
qc_area_mix_row (double *acc, const double *row, double w, size_t n,
                 int first)
{
    if (acc && row)
        mix_row (acc, row, w, n, first);
}

/* Where area_resize takes its source rows: uint8 rows of ch channels
 * from row8 (y increasing from call to call), or float rows (ch 1) of
 * the image f. */
typedef struct {
    int ch;
    qc_area_row_fn row8;
    void *ctx;
    const float *f;
    int sw;
} area_src_t;

/* Area resize into dst8 (uint8) or dstf (float, ch 1). Rows are reduced
 * along x once each: consecutive output rows share at most one source
 * row (the last of one is the first of the next), so the last reduced
 * row is kept and not reduced again. */
static int
area_resize (int sw, int sh, int dw, int dh, const area_src_t *src,
             uint8_t *dst8, float *dstf)
{
    qc_area_axis_t ax, ay;
    if (qc_area_axis_init (&ax, sw, dw))
        return -1;
    if (qc_area_axis_init (&ay, sh, dh)) {
        qc_area_axis_free (&ax);
        return -1;
    }
    const int ch = src->ch;
    size_t rl = (size_t) dw * ch;
    double *red[2] = { malloc (rl * sizeof (double)),
                       malloc (rl * sizeof (double)) };
    double *acc = malloc (rl * sizeof *acc);
    int red_y[2] = { -1, -1 }, last = 0;
    int rc = -1;
    if (!red[0] || !red[1] || !acc)
        goto done;
    for (int oy = 0; oy < dh; oy++) {
        const double *wy = ay.w + ay.off[oy];
        for (int k = 0; k < ay.count[oy]; k++) {
            int j = ay.first[oy] + k;
            if (red_y[last] != j) {
                last = 1 - last;
                if (src->row8) {
                    const uint8_t *r8 = src->row8 (src->ctx, j);
                    if (!r8)
                        goto done;
                    qc_area_reduce_row_u8 (&ax, r8, ch, red[last]);
                } else {
                    reduce_row_f (&ax, src->f + (size_t) j * src->sw,
                                  red[last]);
                }
                red_y[last] = j;
            }
            qc_area_mix_row (acc, red[last], wy[k], rl, k == 0);
        }
        if (dst8)
            qc_area_round_row_u8 (acc, rl, dst8 + (size_t) oy * rl);
        else
            for (size_t i = 0; i < rl; i++)
                dstf[(size_t) oy * rl + i] = (float) acc[i];
    }
    rc = 0;
done:
    free (red[0]);
    free (red[1]);
    free (acc);
    qc_area_axis_free (&ax);
    qc_area_axis_free (&ay);
    return rc;
}

typedef struct {
    const uint8_t *px;
    size_t stride;
} image_rows_t;

static const uint8_t *
image_row (void *ctx, int y)
{
    const image_rows_t *im = ctx;
    return im->px + (size_t) y * im->stride;
}

int
qc_area_resize_u8 (int sw, int sh, int dw, int dh, int ch, qc_area_row_fn row,
                   void *ctx, uint8_t *dst)
{
    if (sw < 1 || sh < 1 || dw < 1 || dh < 1 || ch < 1 || ch > 4 || !row
        || !dst)
        return -1;
    area_src_t src = { .ch = ch, .row8 = row, .ctx = ctx };
    return area_resize (sw, sh, dw, dh, &src, dst, NULL);
}

/* Bilinear taps along one axis: i0, i1 and the weight t of i1. */
typedef struct {
    int i0, i1;
    double t;
} tap_t;

static tap_t *
bilinear_taps (int n_src, int n_dst)
{
    tap_t *t = malloc ((size_t) n_dst * sizeof *t);
    if (!t)
        return NULL;
    double s = (double) n_src / n_dst;
    for (int o = 0; o < n_dst; o++) {
        double x = (o + 0.5) * s - 0.5;
        if (x < 0.0)
            x = 0.0;
        if (x > n_src - 1)
            x = n_src - 1;
        int i0 = (int) floor (x);
        t[o].i0 = i0;
        t[o].i1 = i0 + 1 < n_src ? i0 + 1 : i0;
        t[o].t = x - i0;
    }
    return t;
}

static int
bilinear_resize (int sw, int sh, int dw, int dh, int ch, const uint8_t *src8,
                 const float *srcf, uint8_t *dst8, float *dstf)
{
    tap_t *tx = bilinear_taps (sw, dw), *ty = bilinear_taps (sh, dh);
    if (!tx || !ty) {
        free (tx);
        free (ty);
        return -1;
    }
    for (int oy = 0; oy < dh; oy++) {
        size_t r0 = (size_t) ty[oy].i0 * sw, r1 = (size_t) ty[oy].i1 * sw;
        double v = ty[oy].t;
        for (int ox = 0; ox < dw; ox++) {
            double u = tx[ox].t;
            size_t a = (r0 + tx[ox].i0) * ch, b = (r0 + tx[ox].i1) * ch;
            size_t c = (r1 + tx[ox].i0) * ch, d = (r1 + tx[ox].i1) * ch;
            for (int k = 0; k < ch; k++) {
                double pa = src8 ? src8[a + k] : srcf[a + k];
                double pb = src8 ? src8[b + k] : srcf[b + k];
                double pc = src8 ? src8[c + k] : srcf[c + k];
                double pd = src8 ? src8[d + k] : srcf[d + k];
                double top = pa + (pb - pa) * u, bot = pc + (pd - pc) * u;
                double val = top + (bot - top) * v;
                size_t o = ((size_t) oy * dw + ox) * ch + k;
                if (dst8)
                    dst8[o] = qc_px_round_u8 (val);
                else
                    dstf[o] = (float) val;
            }
        }
    }
    free (tx);
    free (ty);
    return 0;
}

/* Nearest: elem-byte pixels copied from the source pixel under the
 * output centre. */
static int
nearest_resize (int sw, int sh, int dw, int dh, size_t elem,
                const void *src, void *dst)
{
    int *xs = malloc ((size_t) dw * sizeof *xs);
    if (!xs)
        return -1;
    for (int o = 0; o < dw; o++) {
        int x = (int) floor ((o + 0.5) * sw / dw);
        xs[o] = x < sw ? x : sw - 1;
    }
    const uint8_t *s = src;
    uint8_t *d = dst;
    for (int oy = 0; oy < dh; oy++) {
        int y = (int) floor ((oy + 0.5) * sh / dh);
        if (y >= sh)
            y = sh - 1;
        const uint8_t *row = s + (size_t) y * sw * elem;
        uint8_t *out = d + (size_t) oy * dw * elem;
        for (int ox = 0; ox < dw; ox++)
            memcpy (out + (size_t) ox * elem, row + (size_t) xs[ox] * elem,
                    elem);
    }
    free (xs);
    return 0;
}

int
qc_cpu_resize_rgb (const qc_rgb_t *src, qc_interp_t interp, qc_rgb_t *dst)
{
    if (!qc_rgb_valid (src) || !qc_rgb_valid (dst) || src == dst
        || src->px == dst->px)
        return -1;
    switch (interp) {
    case QC_INTERP_AREA: {
        image_rows_t im = { src->px, (size_t) src->w * 3 };
        return qc_area_resize_u8 (src->w, src->h, dst->w, dst->h, 3,
                                  image_row, &im, dst->px);
    }
    case QC_INTERP_BILINEAR:
        return bilinear_resize (src->w, src->h, dst->w, dst->h, 3, src->px,
                                NULL, dst->px, NULL);
    case QC_INTERP_NEAREST:
        return nearest_resize (src->w, src->h, dst->w, dst->h, 3, src->px,
                               dst->px);
    default:
        return -1;
    }
}

int
qc_cpu_resize_fimg (const qc_fimg_t *src, qc_interp_t interp, qc_fimg_t *dst)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src == dst
        || src->px == dst->px)
        return -1;
    switch (interp) {
    case QC_INTERP_AREA: {
        area_src_t as = { .ch = 1, .f = src->px, .sw = src->w };
        return area_resize (src->w, src->h, dst->w, dst->h, &as, NULL,
                            dst->px);
    }
    case QC_INTERP_BILINEAR:
        return bilinear_resize (src->w, src->h, dst->w, dst->h, 1, NULL,
                                src->px, NULL, dst->px);
    case QC_INTERP_NEAREST:
        return nearest_resize (src->w, src->h, dst->w, dst->h, sizeof (float),
                               src->px, dst->px);
    default:
        return -1;
    }
}

int
qc_cpu_resize_mask (const qc_mask_t *src, qc_interp_t interp, qc_mask_t *dst)
{
    if (!qc_mask_valid (src) || !qc_mask_valid (dst) || src == dst
        || src->px == dst->px || interp != QC_INTERP_NEAREST)
        return -1;
    return nearest_resize (src->w, src->h, dst->w, dst->h, 1, src->px,
                           dst->px);
}
