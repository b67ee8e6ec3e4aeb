/* A Gaussian with float sums, for the classifier's frangi feature.
 *
 * qc_cpu_gaussian (filter.c) sums in double, as scipy does, because
 * HistoQC's blur step smooths with an 801-tap kernel. The frangi
 * feature's kernels are 9 to 81 taps, its result is compared with
 * skimage's only to ~1e-4 and feeds a classifier's thresholds; in float
 * twice the pixels fit a vector, and each tap is one pass over a row
 * held in L1 instead of a register-blocked pass per output. Same
 * kernel, same border rule; the sums differ from the double ones by
 * ~1e-7 relative. */
#include "kernels/ops/cpu/cpu_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STRIP 512

/* acc[x] += wk (a[x] + b[x]) */
__attribute__ ((target_clones ("avx2", "default"))) static void
tap_f (float *restrict acc, const float *a, const float *b, float wk, int n)
{
    for (int x = 0; x < n; x++)
        acc[x] += wk * (a[x] + b[x]);
}

/* Four taps in one pass: acc[x] += wk (a_k[x] + b_k[x]) for k = 0..3,
 * added in that order, one statement a tap: the same operations as four
 * tap_f passes (so the same sums, whether or not the compiler fuses a
 * multiply-add), with acc loaded and stored once instead of four
 * times: the column pass of the frangi feature's wider Gaussians was
 * bound by that traffic. */
__attribute__ ((target_clones ("avx2", "default"))) static void
tap4_f (float *restrict acc, const float *const a[4], const float *const b[4],
        const float wk[4], int n)
{
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
    const float *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
    const float w0 = wk[0], w1 = wk[1], w2 = wk[2], w3 = wk[3];
    for (int x = 0; x < n; x++) {
        float v = acc[x];
        v += w0 * (a0[x] + b0[x]);
        v += w1 * (a1[x] + b1[x]);
        v += w2 * (a2[x] + b2[x]);
        v += w3 * (a3[x] + b3[x]);
        acc[x] = v;
    }
}

__attribute__ ((target_clones ("avx2", "default"))) static void
scale_f (float *restrict acc, const float *a, float w0, int n)
{
    for (int x = 0; x < n; x++)
        acc[x] = w0 * a[x];
}

int
qc_cpu_gaussian_f32 (const qc_fimg_t *src, double sigma, double truncate,
                     qc_border_t border, qc_fimg_t *dst)
{
    int r, go = qc_cpu_gauss_setup (src, sigma, truncate, border, 4096, dst,
                                    &r);
    if (go <= 0)
        return go;
    int w = src->w, h = src->h;
    size_t n = qc_npix (w, h);
    size_t longest = (size_t) (w > h ? w : h);
    float *wt = malloc ((size_t) (r + 1) * sizeof *wt);
    float *pad = malloc ((longest + 2 * (size_t) r) * sizeof *pad);
    float *zero = calloc (STRIP > longest ? STRIP : longest, sizeof *zero);
    float *tmp = malloc (n * sizeof *tmp);
    if (!wt || !pad || !zero || !tmp) {
        free (wt);
        free (pad);
        free (zero);
        free (tmp);
        return -1;
    }
    /* scipy's kernel, computed in double, then rounded to float */
    double dw[4097];
    qc_cpu_gauss_weights (sigma, r, dw);
    for (int k = 0; k <= r; k++)
        wt[k] = (float) dw[k];
    /* rows: the padded row, then one pass a tap */
    for (int y = 0; y < h; y++) {
        const float *row = src->px + (size_t) y * w;
        for (long i = 0; i < (long) w + 2 * r; i++) {
            int k = qc_px_border_index (i - r, w, border);
            pad[i] = k < 0 ? 0.0f : row[k];
        }
        float *o = tmp + (size_t) y * w;
        scale_f (o, pad + r, wt[0], w);
        int k = 1;
        for (; k + 3 <= r; k += 4) {
            const float *a[4], *b[4];
            for (int j = 0; j < 4; j++) {
                a[j] = pad + r - (k + j);
                b[j] = pad + r + (k + j);
            }
            tap4_f (o, a, b, wt + k, w);
        }
        for (; k <= r; k++)
            tap_f (o, pad + r - k, pad + r + k, wt[k], w);
    }
    /* columns: strips of columns down the rows, a tap a pass; a row
     * outside under a CONSTANT border reads zeros */
    for (int x0 = 0; x0 < w; x0 += STRIP) {
        int sw = w - x0 < STRIP ? w - x0 : STRIP;
        for (int y = 0; y < h; y++) {
            float *o = dst->px + (size_t) y * w + x0;
            scale_f (o, tmp + (size_t) qc_px_border_index (y, h, border) * w + x0,
                     wt[0], sw);
            int k = 1;
            for (; k + 3 <= r; k += 4) {
                const float *a[4], *b[4];
                for (int j = 0; j < 4; j++) {
                    int u = qc_px_border_index ((long) y - (k + j), h, border);
                    int d = qc_px_border_index ((long) y + (k + j), h, border);
                    a[j] = u < 0 ? zero : tmp + (size_t) u * w + x0;
                    b[j] = d < 0 ? zero : tmp + (size_t) d * w + x0;
                }
                tap4_f (o, a, b, wt + k, sw);
            }
            for (; k <= r; k++) {
                int u = qc_px_border_index ((long) y - k, h, border);
                int d = qc_px_border_index ((long) y + k, h, border);
                tap_f (o, u < 0 ? zero : tmp + (size_t) u * w + x0,
                       d < 0 ? zero : tmp + (size_t) d * w + x0, wt[k], sw);
            }
        }
    }
    free (wt);
    free (pad);
    free (zero);
    free (tmp);
    return 0;
}
