/* Binary morphology with disk and rectangle footprints.
 *
 * Disk: a pixel of the dilation is set when some set pixel lies within
 * Euclidean distance r (integer offsets with dx^2 + dy^2 <= r^2 are
 * exactly skimage.morphology.disk (r)). That is a threshold on the exact
 * squared distance transform (Felzenszwalb & Huttenlocher: one column
 * pass, one lower-envelope-of-parabolas pass per row), so the cost per
 * pixel does not grow with r (HistoQC's finalProcessingSpur defaults to
 * r = 25, and configs may ask for more). Erosion is the complement of the
 * dilation of the complement.
 *
 * Borders follow skimage.morphology.binary_erosion (border_value=True:
 * outside counts as set, so erosion does not eat in from the image edge)
 * and binary_dilation (outside counts as unset).
 *
 * Rectangle: separable sliding counts along rows then columns, with the
 * window [x - (k-1)/2, x + k/2] that skimage.morphology.dilation and
 * erosion use for footprint np.ones ((k, k)) (they shift even
 * footprints that way). */
#include "kernels/ops/cpu/cpu_ops.h"

#include <stdlib.h>
#include <string.h>

static int
mask_pair_ok (const qc_mask_t *src, const qc_mask_t *dst)
{
    return qc_mask_valid (src) && qc_mask_valid (dst) && src->w == dst->w
        && src->h == dst->h;
}

/* out[i] = (some seed within distance r of i) ^ out_invert, where a seed
 * is a pixel with (px != 0) ^ seed_invert. out may be px. */
static int
disk_within (const uint8_t *px, int w, int h, int seed_invert, int r,
             int out_invert, uint8_t *out)
{
    size_t n = qc_npix (w, h);
    int32_t *g = malloc (n * sizeof *g);
    double *f = malloc ((size_t) w * sizeof *f);
    int *v = malloc ((size_t) w * sizeof *v);
    double *z = malloc (((size_t) w + 1) * sizeof *z);
    if (!g || !f || !v || !z) {
        free (g);
        free (f);
        free (v);
        free (z);
        return -1;
    }
    /* Column pass: vertical distance to the nearest seed, capped at
     * r + 1 ("too far"), scanning down then up row by row so that every
     * access is contiguous. */
    const int32_t far = r + 1;
    for (int y = 0; y < h; y++) {
        const uint8_t *p = px + (size_t) y * w;
        int32_t *gr = g + (size_t) y * w;
        const int32_t *up = y ? gr - w : NULL;
        for (int x = 0; x < w; x++) {
            int seed = (p[x] != 0) ^ seed_invert;
            int32_t d = up ? up[x] + 1 : far;
            gr[x] = seed ? 0 : (d > far ? far : d);
        }
    }
    for (int y = h - 2; y >= 0; y--) {
        int32_t *gr = g + (size_t) y * w;
        const int32_t *dn = gr + w;
        for (int x = 0; x < w; x++)
            if (dn[x] + 1 < gr[x])
                gr[x] = dn[x] + 1;
    }
    /* Row pass: lower envelope of parabolas (x - q)^2 + g(q)^2 over the
     * columns q whose seed is close enough to matter. */
    const double r2 = (double) r * (double) r;
    for (int y = 0; y < h; y++) {
        const int32_t *gr = g + (size_t) y * w;
        uint8_t *o = out + (size_t) y * w;
        int k = -1;
        for (int q = 0; q < w; q++) {
            if (gr[q] >= far)
                continue;
            double fq = (double) gr[q] * gr[q];
            f[q] = fq;
            double s = -INFINITY;
            while (k >= 0) {
                int p = v[k];
                s = ((fq + (double) q * q) - (f[p] + (double) p * p))
                    / (2.0 * q - 2.0 * p);
                if (s > z[k])
                    break;
                k--;
            }
            k++;
            v[k] = q;
            z[k] = k ? s : -INFINITY;
        }
        int j = 0;
        for (int x = 0; x < w; x++) {
            int hit = 0;
            if (k >= 0) {
                while (j < k && z[j + 1] < x)
                    j++;
                double dx = (double) x - v[j];
                hit = dx * dx + f[v[j]] <= r2;
            }
            o[x] = (uint8_t) (hit ^ out_invert);
        }
    }
    free (g);
    free (f);
    free (v);
    free (z);
    return 0;
}

#define SPAN_MAX_R 8     /* disk_spans up to this radius, else the EDT */

/* What disk_within computes, for a small r: the disk is 2r + 1 rows of
 * spans (half-width floor (sqrt (r^2 - dy^2)) at row offset dy), so a
 * pixel is within r of a seed when some row y + dy has a seed within
 * its span. Each distinct half-width is one pass of row prefix counts;
 * the rows are then OR'ed. For the radius-3 openings of the default
 * pipeline this is faster than the distance transform
 * (tests/bench/README.md, "Figures behind the code"). */
static int
disk_spans (const uint8_t *px, int w, int h, int seed_invert, int r,
            int out_invert, uint8_t *out)
{
    int nw = 0, which[SPAN_MAX_R + 1];
    int widths[SPAN_MAX_R + 1];
    for (int dy = 0; dy <= r; dy++) {
        int x = 0;
        while ((x + 1) * (x + 1) + dy * dy <= r * r)
            x++;
        which[dy] = -1;
        for (int k = 0; k < nw; k++)
            if (widths[k] == x)
                which[dy] = k;
        if (which[dy] < 0) {
            widths[nw] = x;
            which[dy] = nw++;
        }
    }
    size_t n = qc_npix (w, h);
    uint8_t *span = malloc ((size_t) nw * n + n);
    int32_t *pre = malloc (((size_t) w + 1) * sizeof *pre);
    if (!span || !pre) {
        free (span);
        free (pre);
        return -1;
    }
    uint8_t *acc = span + (size_t) nw * n;
    for (int y = 0; y < h; y++) {
        const uint8_t *p = px + (size_t) y * w;
        pre[0] = 0;
        for (int x = 0; x < w; x++)
            pre[x + 1] = pre[x] + ((p[x] != 0) ^ seed_invert);
        for (int k = 0; k < nw; k++) {
            uint8_t *o = span + (size_t) k * n + (size_t) y * w;
            int d = widths[k];
            /* the clamped ends apart, so the middle loop vectorises */
            int a = d < w ? d : w, b = w - d - 1 > a ? w - d - 1 : a;
            for (int x = 0; x < a; x++)
                o[x] = pre[x + d + 1 > w ? w : x + d + 1] > pre[0];
            for (int x = a; x < b; x++)
                o[x] = pre[x + d + 1] > pre[x - d];
            for (int x = b; x < w; x++)
                o[x] = pre[x + d + 1 > w ? w : x + d + 1] > pre[x - d < 0 ? 0 : x - d];
        }
    }
    for (int y = 0; y < h; y++) {
        uint8_t *a = acc + (size_t) y * w;
        memset (a, 0, (size_t) w);
        for (int dy = -r; dy <= r; dy++) {
            int yy = y + dy;
            if (yy < 0 || yy >= h)
                continue;
            const uint8_t *s = span + (size_t) which[dy < 0 ? -dy : dy] * n
                               + (size_t) yy * w;
            for (int x = 0; x < w; x++)
                a[x] |= s[x];
        }
    }
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t) (acc[i] ^ out_invert);
    free (span);
    free (pre);
    return 0;
}

/* A pixel within r of a seed: spans for small radii, else the
 * distance transform. */
static int
within (const uint8_t *px, int w, int h, int seed_invert, int r,
        int out_invert, uint8_t *out)
{
    return r <= SPAN_MAX_R
           ? disk_spans (px, w, h, seed_invert, r, out_invert, out)
           : disk_within (px, w, h, seed_invert, r, out_invert, out);
}

static int
copy_normalised (const qc_mask_t *src, qc_mask_t *dst)
{
    size_t n = qc_npix (src->w, src->h);
    for (size_t i = 0; i < n; i++)
        dst->px[i] = src->px[i] != 0;
    return 0;
}

int
qc_cpu_morph_disk (const qc_mask_t *src, int radius, qc_morph_t op,
                   qc_mask_t *dst)
{
    if (!mask_pair_ok (src, dst) || radius < 0 || radius > QC_IMAGE_MAX_DIM
        || (int) op < QC_MORPH_ERODE || op > QC_MORPH_CLOSE)
        return -1;
    if (radius == 0)
        return copy_normalised (src, dst);
    int w = src->w, h = src->h;
    switch (op) {
    case QC_MORPH_DILATE:
        return within (src->px, w, h, 0, radius, 0, dst->px);
    case QC_MORPH_ERODE:        /* ~dilate (~src) */
        return within (src->px, w, h, 1, radius, 1, dst->px);
    case QC_MORPH_OPEN:
        if (within (src->px, w, h, 1, radius, 1, dst->px))
            return -1;
        return within (dst->px, w, h, 0, radius, 0, dst->px);
    default:                    /* CLOSE */
        if (within (src->px, w, h, 0, radius, 0, dst->px))
            return -1;
        return within (dst->px, w, h, 1, radius, 1, dst->px);
    }
}

/* Rows: out[x] = any / all of line over the window of x, where the
 * window is [x - (k-1)/2, x + k/2] clipped to [0, n). */
static void
rect_row (const uint8_t *line, uint8_t *out, int n, int k, int dilate)
{
    int a = (k - 1) / 2, count = 0;
    for (int i = 0; i < n && i <= k - 1 - a; i++)
        count += line[i] != 0;
    for (int x = 0; x < n; x++) {
        int lo = x - a < 0 ? 0 : x - a;
        int hi = x - a + k - 1 >= n ? n - 1 : x - a + k - 1;
        out[x] = (uint8_t) (dilate ? count > 0 : count == hi - lo + 1);
        if (x - a + k < n)
            count += line[x - a + k] != 0;
        if (x - a >= 0)
            count -= line[x - a] != 0;
    }
}

/* One erosion or dilation: rows of src into tmp, then columns of tmp
 * into dst with per-column counts sliding down, so every access is a
 * contiguous row and dst may be src. */
static int
rect_once (const uint8_t *src, int w, int h, int kw, int kh, int dilate,
           uint8_t *dst)
{
    uint8_t *tmp = malloc (qc_npix (w, h));
    int32_t *count = calloc ((size_t) w, sizeof *count);
    if (!tmp || !count) {
        free (tmp);
        free (count);
        return -1;
    }
    for (int y = 0; y < h; y++)
        rect_row (src + (size_t) y * w, tmp + (size_t) y * w, w, kw, dilate);
    int a = (kh - 1) / 2;
    for (int y = 0; y < h && y <= kh - 1 - a; y++)
        for (int x = 0; x < w; x++)
            count[x] += tmp[(size_t) y * w + x];
    for (int y = 0; y < h; y++) {
        int lo = y - a < 0 ? 0 : y - a;
        int hi = y - a + kh - 1 >= h ? h - 1 : y - a + kh - 1;
        int32_t full = hi - lo + 1;
        uint8_t *o = dst + (size_t) y * w;
        for (int x = 0; x < w; x++)
            o[x] = (uint8_t) (dilate ? count[x] > 0 : count[x] == full);
        if (y - a + kh < h) {
            const uint8_t *t = tmp + (size_t) (y - a + kh) * w;
            for (int x = 0; x < w; x++)
                count[x] += t[x];
        }
        if (y - a >= 0) {
            const uint8_t *t = tmp + (size_t) (y - a) * w;
            for (int x = 0; x < w; x++)
                count[x] -= t[x];
        }
    }
    free (tmp);
    free (count);
    return 0;
}

int
qc_cpu_morph_rect (const qc_mask_t *src, int kw, int kh, qc_morph_t op,
                   qc_mask_t *dst)
{
    if (!mask_pair_ok (src, dst) || kw < 1 || kh < 1
        || kw > QC_IMAGE_MAX_DIM || kh > QC_IMAGE_MAX_DIM
        || (int) op < QC_MORPH_ERODE || op > QC_MORPH_CLOSE)
        return -1;
    int w = src->w, h = src->h;
    switch (op) {
    case QC_MORPH_ERODE:
        return rect_once (src->px, w, h, kw, kh, 0, dst->px);
    case QC_MORPH_DILATE:
        return rect_once (src->px, w, h, kw, kh, 1, dst->px);
    case QC_MORPH_OPEN:
        if (rect_once (src->px, w, h, kw, kh, 0, dst->px))
            return -1;
        return rect_once (dst->px, w, h, kw, kh, 1, dst->px);
    default:                    /* CLOSE */
        if (rect_once (src->px, w, h, kw, kh, 1, dst->px))
            return -1;
        return rect_once (dst->px, w, h, kw, kh, 0, dst->px);
    }
}
