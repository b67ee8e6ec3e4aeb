/* 3x3 stencil filters: Laplacian and Sobel magnitude. Three padded rows
 * (one pixel of border each side, filled by the border rule) slide down
 * the image, so the stencil itself (pixel_math.h) never tests borders.
 * In place, the source is copied first: MIRROR and WRAP read rows that
 * the pass has already written. */
#include "kernels/ops/cpu/cpu_ops.h"

#include <stdlib.h>

/* rows[k] = padded copy of image row y - 1 + k. */
static void
load_row (const qc_fimg_t *src, long y, qc_border_t border, double *row)
{
    int w = src->w;
    int yy = qc_px_border_index (y, src->h, border);
    if (yy < 0) {                       /* CONSTANT, outside: zeros */
        for (long i = 0; i < (long) w + 2; i++)
            row[i] = 0.0;
        return;
    }
    const float *p = src->px + (size_t) yy * w;
    /* inside the row the border rule maps every x to itself */
    for (int x = 0; x < w; x++)
        row[x + 1] = p[x];
    int l = qc_px_border_index (-1, w, border);
    int r = qc_px_border_index (w, w, border);
    row[0] = l < 0 ? 0.0 : p[l];
    row[w + 1] = r < 0 ? 0.0 : p[r];
}

typedef enum { STENCIL_LAPLACE, STENCIL_SOBEL } stencil_t;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define QC_EDGES_AVX2 1

/* qc_px_sobel four pixels at a time: its differences, sums, divisions
 * and square root in its order, each correctly rounded in a lane as in
 * a scalar register, so the same bits. Returns the pixels done. */
__attribute__ ((target ("avx2"))) static int
sobel_row_x4 (const double *u, const double *c, const double *b, int w,
              float *d)
{
    const __m256d two = _mm256_set1_pd (2.0), four = _mm256_set1_pd (4.0);
    int x = 0;
    for (; x + 4 <= w; x += 4) {
        /* p[0..8] of the pixels x..x+3: rows u, c, b at columns x-1..x+1 */
        __m256d p0 = _mm256_loadu_pd (u + x), p1 = _mm256_loadu_pd (u + x + 1);
        __m256d p2 = _mm256_loadu_pd (u + x + 2), p3 = _mm256_loadu_pd (c + x);
        __m256d p5 = _mm256_loadu_pd (c + x + 2), p6 = _mm256_loadu_pd (b + x);
        __m256d p7 = _mm256_loadu_pd (b + x + 1), p8 = _mm256_loadu_pd (b + x + 2);
        __m256d gy = _mm256_div_pd (_mm256_add_pd (_mm256_add_pd (
            _mm256_sub_pd (p0, p6),
            _mm256_mul_pd (two, _mm256_sub_pd (p1, p7))),
            _mm256_sub_pd (p2, p8)), four);
        __m256d gx = _mm256_div_pd (_mm256_add_pd (_mm256_add_pd (
            _mm256_sub_pd (p0, p2),
            _mm256_mul_pd (two, _mm256_sub_pd (p3, p5))),
            _mm256_sub_pd (p6, p8)), four);
        __m256d m = _mm256_sqrt_pd (_mm256_div_pd (_mm256_add_pd (
            _mm256_mul_pd (gx, gx), _mm256_mul_pd (gy, gy)), two));
        _mm_storeu_ps (d + x, _mm256_cvtpd_ps (m));
    }
    return x;
}
#endif

/* One row of qc_px_laplace over padded rows (built for AVX2 too: the
 * same operations, four doubles a step). */
__attribute__ ((target_clones ("avx2", "default"))) static void
laplace_row (const double *u, const double *c, const double *b, int w,
             float *d)
{
    for (int x = 0; x < w; x++) {
        const int i = x + 1;
        d[x] = (float) qc_px_laplace (c[i], u[i], b[i], c[i - 1], c[i + 1]);
    }
}

static int
run_stencil (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst,
             stencil_t which)
{
    if (!qc_fimg_valid (src) || !qc_fimg_valid (dst) || src->w != dst->w
        || src->h != dst->h || (int) border < QC_BORDER_REFLECT
        || border > QC_BORDER_CONSTANT)
        return -1;
    qc_fimg_t *copy = NULL;
    if (dst == src || dst->px == src->px) {
        copy = qc_fimg_clone (src);
        if (!copy)
            return -1;
        src = copy;
    }
    int w = src->w, h = src->h;
    size_t rl = (size_t) w + 2;
    double *mem = malloc (3 * rl * sizeof *mem);
    if (!mem) {
        qc_fimg_destroy (&copy);
        return -1;
    }
    double *rows[3] = { mem, mem + rl, mem + 2 * rl };
    load_row (src, -1, border, rows[0]);
    load_row (src, 0, border, rows[1]);
    for (int y = 0; y < h; y++) {
        load_row (src, (long) y + 1, border, rows[2]);
        float *d = dst->px + (size_t) y * w;
        const double *u = rows[0], *c = rows[1], *b = rows[2];
        int x0 = 0;
#ifdef QC_EDGES_AVX2
        if (which == STENCIL_SOBEL && qc_cpu_have_avx2 ())
            x0 = sobel_row_x4 (u, c, b, w, d);
#endif
        if (which == STENCIL_LAPLACE)
            laplace_row (u, c, b, w, d);
        else
            for (int x = x0; x < w; x++) {
                const int i = x + 1;
                double p[9] = { u[i - 1], u[i], u[i + 1],
                                c[i - 1], c[i], c[i + 1],
                                b[i - 1], b[i], b[i + 1] };
                d[x] = (float) qc_px_sobel (p);
            }
        double *t = rows[0];
        rows[0] = rows[1];
        rows[1] = rows[2];
        rows[2] = t;
    }
    free (mem);
    qc_fimg_destroy (&copy);
    return 0;
}

int
qc_cpu_laplace (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst)
{
    return run_stencil (src, border, dst, STENCIL_LAPLACE);
}

int
qc_cpu_sobel (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst)
{
    return run_stencil (src, border, dst, STENCIL_SOBEL);
}
