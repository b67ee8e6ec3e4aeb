/* 3x3 stencil filters: Laplacian and Sobel magnitude. Three padded rows
 * (one pixel of border each side, filled by the border rule) slide down
 * the image, so the stencil itself (pixel_math.h) never tests borders.
 * In place, the source is copied first: MIRROR and WRAP read rows that
 * the pass has already written. */
#include "kernels/cpu/cpu_ops.h"

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
        if (which == STENCIL_LAPLACE)
            laplace_row (u, c, b, w, d);
        else
            for (int x = 0; x < w; x++) {
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
