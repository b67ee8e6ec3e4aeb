/* LightDarkModule.getIntensityThresholdOtsu: tissue is what is darker
 * than Otsu's threshold of the gray image (skimage threshold_otsu, 256
 * bins over the image's range); with invert, what is brighter. As
 * HistoQC: _<name>.png is the mask found (not what was removed),
 * img_mask_use &= it, the column <name> is the mask statistic, and the
 * mask is kept as img_mask_<name> for a later step's mask_name=.
 *
 * local = True uses a threshold per pixel, skimage.filters.rank.otsu
 * over a disk of radius on the 8-bit image. HistoQC compares the [0, 1]
 * gray image with those 0..255 thresholds, which keeps nearly every
 * pixel; here both sides are 8-bit (the evident intent), so local mode
 * differs from HistoQC's output by design. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

/* skimage's rank otsu kernel on one neighbourhood histogram: the level
 * maximising the between-class variance, 0 for an empty or flat one. */
static int
hist_otsu (const uint32_t *hist, uint32_t pop, int lo, int hi)
{
    if (!pop)
        return 0;
    double mu = 0;
    for (int i = lo; i <= hi; i++)
        mu += (double) hist[i] * i;
    mu /= pop;
    double q1 = (double) hist[0] / pop, mu1 = 0, best = 0;
    int best_i = 0;
    for (int i = lo > 1 ? lo : 1; i <= hi; i++) {
        double p = (double) hist[i] / pop, nq = q1 + p;
        if (nq > 0 && nq < 1) {
            mu1 = (q1 * mu1 + i * p) / nq;
            double mu2 = (mu - nq * mu1) / (1.0 - nq);
            double sb = nq * (1.0 - nq) * (mu1 - mu2) * (mu1 - mu2);
            if (sb > best) {
                best = sb;
                best_i = i;
            }
        } else if (nq > 0)
            mu1 = (q1 * mu1 + i * p) / nq;
        q1 = nq;
    }
    return best_i;
}

/* Per-pixel local Otsu with a histogram slid along each row: the disk's
 * left column leaves, its right column enters; pixels outside the image
 * are not counted (as skimage's rank filters). */
static int
local_otsu (const uint8_t *u8, int w, int h, int r, uint8_t *thr)
{
    int *half = malloc ((size_t) (2 * r + 1) * sizeof *half);
    if (!half)
        return -1;
    for (int dy = -r; dy <= r; dy++)
        half[dy + r] = (int) floor (sqrt ((double) r * r - (double) dy * dy));
    uint32_t hist[256];
    for (int y = 0; y < h; y++) {
        memset (hist, 0, sizeof hist);
        uint32_t pop = 0;
        for (int dy = -r; dy <= r; dy++) {
            int yy = y + dy;
            if (yy < 0 || yy >= h)
                continue;
            int x1 = half[dy + r] < w - 1 ? half[dy + r] : w - 1;
            for (int x = 0; x <= x1; x++, pop++)
                hist[u8[(size_t) yy * w + x]]++;
        }
        for (int x = 0; x < w; x++) {
            if (x > 0)
                for (int dy = -r; dy <= r; dy++) {
                    int yy = y + dy;
                    if (yy < 0 || yy >= h)
                        continue;
                    int out = x - 1 - half[dy + r], in = x + half[dy + r];
                    if (out >= 0)
                        hist[u8[(size_t) yy * w + out]]--, pop--;
                    if (in < w)
                        hist[u8[(size_t) yy * w + in]]++, pop++;
                }
            int lo = 0, hi = 255;
            while (lo < 255 && !hist[lo])
                lo++;
            while (hi > lo && !hist[hi])
                hi--;
            thr[(size_t) y * w + x] = (uint8_t) hist_otsu (hist, pop, lo, hi);
        }
    }
    free (half);
    return 0;
}

int
qc_ld_otsu_mask (const qc_ops_t *ops, const qc_fimg_t *gray, int local,
                 int radius, int invert, qc_mask_t *out, double *thresh)
{
    if (!ops || !qc_fimg_valid (gray) || !qc_mask_valid (out)
        || gray->w != out->w || gray->h != out->h || radius < 0
        || radius > 1000)
        return -1;
    if (thresh)
        *thresh = NAN;
    if (!local) {
        double t;
        if (ops->otsu (gray, NULL, 256, &t)
            || ops->threshold (gray, -INFINITY, t, out))
            return -1;
        if (thresh)
            *thresh = t;
    } else {
        /* the local threshold is host code (not in the default config):
         * the plane comes to the host and the mask goes back */
        size_t n = qc_npix (gray->w, gray->h);
        const float *g = qc_fimg_host (gray);
        uint8_t *o = g ? qc_mask_host_rewrite (out) : NULL;
        uint8_t *u8 = calloc (n, 1), *thr = calloc (n, 1);
        if (!o || !u8 || !thr) {
            free (u8);
            free (thr);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            u8[i] = qc_px_u8_from_unit (g[i]);
        int rc = local_otsu (u8, gray->w, gray->h, radius, thr);
        for (size_t i = 0; i < n && !rc; i++)
            o[i] = u8[i] < thr[i];
        free (u8);
        free (thr);
        if (rc)
            return -1;
    }
    if (invert)
        return ops->mask_logic (out, NULL, QC_LOGIC_NOT, out);
    return 0;
}

typedef struct {
    const char *name;
    int local, radius, invert;
} otsu_params_t;

static int
read_params (const qc_config_section_t *sec, otsu_params_t *p, char *err,
             size_t errlen)
{
    return qc_masks_get_name (sec, &p->name, err, errlen)
           || qc_config_get_bool (sec, "local", 0, &p->local, err, errlen)
           || qc_masks_get_int (sec, "radius", 15, 0, 1000, &p->radius, err,
                                errlen)
           || qc_config_get_bool (sec, "invert", 0, &p->invert, err, errlen)
           || qc_masks_check_stat (sec, err, errlen) ? -1 : 0;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    otsu_params_t p;
    return read_params (sec, &p, err, errlen);
}

static int
run (qc_run_t *run)
{
    otsu_params_t p;
    char err[256];
    if (read_params (run->params, &p, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    const qc_fimg_t *gray = qc_run_gray (run, NULL);
    qc_mask_t *use = qc_run_mask (run);
    if (!gray || !use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *before = qc_masks_snapshot (run);
    qc_mask_t *found = qc_mask_new (use->w, use->h);
    int rc = -1;
    if (!before || !found
        || qc_ld_otsu_mask (ops, gray, p.local, p.radius, p.invert, found,
                            NULL)) {
        qc_run_fail (run, "out of memory");
        goto done;
    }
    if (qc_run_save_mask (run, p.name, found))
        goto done;
    if (ops->mask_logic (use, found, QC_LOGIC_AND, use)) {
        qc_run_fail (run, "mask arithmetic failed (out of memory?)");
        goto done;
    }
    char what[160];
    snprintf (what, sizeof what, "LightDarkModule.getIntensityThresholdOtsu:%s",
              p.name);
    rc = qc_masks_finish (run, p.name, what, use, before);
    if (rc == 0) {   /* img_mask_<name>, for a later step's mask_name= */
        rc = qc_run_keep_mask (run, p.name, found);
        found = NULL;
    }
done:
    qc_mask_destroy (&before);
    qc_mask_destroy (&found);
    return rc;
}

/* The only column is named by name= (param_columns). */
static const char *const no_columns[] = { NULL };

static const char *const params[] = {
    "name", "local", "radius", "invert", "mask_statistics", NULL
};

const qc_module_t qc_module_ld_otsu = {
    .name = "LightDarkModule.getIntensityThresholdOtsu",
    .run = run,
    .check = check,
    .params = params,
    .columns = no_columns,
    .param_columns = qc_masks_name_column,
    .kept_named = qc_masks_name_column,    /* img_mask_<name>: its one column's name */
};
