/* Grey-level co-occurrence features of patches of a gray image, as
 * skimage's graycomatrix and graycoprops compute them, and the fixed-seed
 * draw of the patches (texture_algo.h): the arithmetic of the texture
 * step, whose file is texture_module.c. The GLCM of 100 patches of
 * 32 x 32 costs microseconds: it runs here on the CPU, not through the
 * ops table. */
#include "kernels/modules/texture_algo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const feature_names[QC_GLCM_NFEATS] = {
    "contrast", "dissimilarity", "homogeneity", "ASM", "energy",
    "correlation"
};

int
qc_glcm_feature_parse (const char *name, size_t len)
{
    if (!name)
        return -1;
    for (int i = 0; i < QC_GLCM_NFEATS; i++)
        if (strlen (feature_names[i]) == len
            && memcmp (feature_names[i], name, len) == 0)
            return i;
    return -1;
}

const char *
qc_glcm_feature_name (int feature)
{
    return feature >= 0 && feature < QC_GLCM_NFEATS ? feature_names[feature]
                                                    : NULL;
}

/* np.digitize (v, linspace (0, 1, n), right=True): how many of the bin
 * edges k / (n - 1) lie strictly below v. */
static int
digitize (double v, int n)
{
    double step = 1.0 / (n - 1);
    int q = 0;
    for (int k = 0; k < n; k++) {
        double edge = k == n - 1 ? 1.0 : k * step;
        if (edge < v)
            q++;
    }
    return q;
}

int
qc_glcm_patch_features (const qc_fimg_t *gray, int x, int y, int patch,
                        int nlevels, int distance,
                        double out[QC_GLCM_NFEATS])
{
    if (!qc_fimg_valid (gray) || !out || x < 0 || y < 0 || x >= gray->w
        || y >= gray->h || patch < 1 || nlevels < 2
        || nlevels > QC_GLCM_MAX_LEVELS || distance < 0)
        return -1;
    int pw = gray->w - x < patch ? gray->w - x : patch;
    int ph = gray->h - y < patch ? gray->h - y : patch;
    size_t nl = (size_t) nlevels;
    double *p = calloc (nl * nl, sizeof *p);
    int *row = malloc ((size_t) pw * sizeof *row);
    if (!p || !row) {
        free (p);
        free (row);
        return -1;
    }
    double total = 0;
    for (int r = 0; r < ph; r++) {
        const float *src = gray->px + (size_t) (y + r) * gray->w + x;
        for (int c = 0; c < pw; c++)
            row[c] = digitize (src[c], nlevels);
        /* Angle 0: the pixel distance columns to the right; symmetric
         * counts each pair both ways. */
        for (int c = 0; c + distance < pw; c++) {
            p[(size_t) row[c] * nl + row[c + distance]] += 1;
            p[(size_t) row[c + distance] * nl + row[c]] += 1;
            total += 2;
        }
    }
    free (row);
    if (total > 0)
        for (size_t k = 0; k < nl * nl; k++)
            p[k] /= total;
    /* skimage graycoprops. */
    double contrast = 0, dis = 0, hom = 0, asm_ = 0, mi = 0, mj = 0;
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < nl; j++) {
            double v = p[i * nl + j], d = (double) i - (double) j;
            contrast += v * d * d;
            dis += v * fabs (d);
            hom += v / (1.0 + d * d);
            asm_ += v * v;
            mi += v * (double) i;
            mj += v * (double) j;
        }
    double si = 0, sj = 0, cov = 0;
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < nl; j++) {
            double v = p[i * nl + j];
            si += v * ((double) i - mi) * ((double) i - mi);
            sj += v * ((double) j - mj) * ((double) j - mj);
            cov += v * ((double) i - mi) * ((double) j - mj);
        }
    free (p);
    si = sqrt (si);
    sj = sqrt (sj);
    out[QC_GLCM_CONTRAST] = contrast;
    out[QC_GLCM_DISSIMILARITY] = dis;
    out[QC_GLCM_HOMOGENEITY] = hom;
    out[QC_GLCM_ASM] = asm_;
    out[QC_GLCM_ENERGY] = sqrt (asm_);
    /* skimage: 1 where either deviation is (near) zero. */
    out[QC_GLCM_CORRELATION] = si < 1e-15 || sj < 1e-15 ? 1.0
                             : cov / (si * sj);
    return 0;
}

/* splitmix64: a small, well-mixed generator with a fixed seed. */
static uint64_t
next_random (uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int
qc_glcm_sample (const qc_fimg_t *gray, const qc_mask_t *mask,
                const qc_glcm_params_t *p, double mean[QC_GLCM_NFEATS],
                double std[QC_GLCM_NFEATS], double first[QC_GLCM_NFEATS])
{
    if (!qc_fimg_valid (gray) || !qc_mask_valid (mask) || !p || !mean || !std
        || mask->w != gray->w || mask->h != gray->h || p->npatches < 1
        || p->npatches > QC_GLCM_MAX_PATCHES || p->patch_size < 1
        || p->patch_size > QC_GLCM_MAX_PATCH || p->nlevels < 2
        || p->nlevels > QC_GLCM_MAX_LEVELS)
        return -1;
    /* sampling patches is host code: both come to the host (px current
     * from here on) */
    if (!qc_fimg_host (gray) || !qc_mask_host (mask))
        return -1;
    size_t n = qc_npix (mask->w, mask->h), count = 0;
    for (size_t i = 0; i < n; i++)
        count += mask->px[i] != 0;
    if (count == 0)
        return 1;
    /* Pixel indices in raster order, as mask.nonzero () lists them, and
     * every patch's features for numpy's two-pass mean and std. */
    size_t *idx = malloc (count * sizeof *idx);
    double *f = malloc ((size_t) p->npatches * QC_GLCM_NFEATS * sizeof *f);
    if (!idx || !f) {
        free (idx);
        free (f);
        return -1;
    }
    for (size_t i = 0, k = 0; i < n; i++)
        if (mask->px[i])
            idx[k++] = i;
    uint64_t state = p->seed;
    int rc = 0;
    for (int t = 0; t < p->npatches && rc == 0; t++) {
        size_t at = idx[next_random (&state) % count];
        rc = qc_glcm_patch_features (gray, (int) (at % (size_t) gray->w),
                                     (int) (at / (size_t) gray->w),
                                     p->patch_size, p->nlevels,
                                     QC_GLCM_DISTANCE,
                                     f + (size_t) t * QC_GLCM_NFEATS);
    }
    for (int k = 0; rc == 0 && k < QC_GLCM_NFEATS; k++) {
        double sum = 0, sq = 0;
        for (int t = 0; t < p->npatches; t++)
            sum += f[(size_t) t * QC_GLCM_NFEATS + k];
        mean[k] = sum / p->npatches;
        for (int t = 0; t < p->npatches; t++) {
            double d = f[(size_t) t * QC_GLCM_NFEATS + k] - mean[k];
            sq += d * d;
        }
        std[k] = sqrt (sq / p->npatches);
        if (first)
            first[k] = f[k];
    }
    free (idx);
    free (f);
    return rc == 0 ? 0 : -1;
}
