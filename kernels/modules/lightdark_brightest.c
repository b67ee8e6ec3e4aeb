/* LightDarkModule.removeBrightestPixels: the gray values fall into three
 * clusters (glass, tissue, dark: k-means, as HistoQC's scikit-learn
 * KMeans(n_clusters=3) of every pixel's gray); pixels brighter than the
 * darkest of the brightest cluster are glass, and stay in img_mask_use
 * (HistoQC's step keeps them: invert true removes them instead). As
 * HistoQC: the mask is kept as img_mask_bright, _bright.png shows what
 * the step removed, brightestPixels is the mask statistic, and the
 * darkest value itself is not above itself (strict >).
 *
 * Known difference: HistoQC's KMeans starts from random centres (no
 * seed, one start) and stops at scikit-learn's tolerance, so its
 * threshold can move from run to run; here the clusters are the exact
 * least-squares 3-means of the gray histogram (QC_LD_KMEANS_BINS bins
 * between the image's darkest and brightest gray: the boundary to within
 * a bin, under 1/1000 of the range), the same on every run. With fewer
 * than three grays (a blank image) the brightest cluster is the
 * brightest gray, and nothing is above it. */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"
#include "shared/log.h"

static int
read_params (const qc_config_section_t *sec, int *invert, char *err, size_t errlen)
{
    return qc_config_get_bool (sec, "invert", 0, invert, err, errlen)
           || qc_masks_check_stat (sec, err, errlen) ? -1 : 0;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    int invert;
    return read_params (sec, &invert, err, errlen);
}

static int
run (qc_run_t *run)
{
    int invert;
    char err[256];
    if (read_params (run->params, &invert, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    const qc_fimg_t *gray = qc_run_gray (run, NULL);
    qc_mask_t *use = qc_run_mask (run);
    if (!gray || !use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *before = qc_masks_snapshot (run);
    qc_mask_t *keep = qc_mask_new (use->w, use->h);
    double t = 0;
    int rc = -1;
    if (!before || !keep || qc_ld_brightest_mask (ops, gray, invert, keep, &t)) {
        qc_run_fail (run, "out of memory");
        goto done;
    }
    qc_log (QC_LOG_DEBUG, run->step, "%s: the brightest of three gray clusters starts "
            "at %.6f", run->filename ? run->filename : "?", t);
    rc = qc_masks_keep_bright (run, use, before, keep,
                               "LightDarkModule.removeBrightestPixels");
done:
    qc_mask_destroy (&before);
    qc_mask_destroy (&keep);
    return rc;
}

static const char *const params[] = { "invert", "mask_statistics", NULL };
static const char *const columns[] = { "brightestPixels", NULL };

/* for a later step's mask_name= */
static const char *const kept_masks[] = { "bright", NULL };

const qc_module_t qc_module_ld_brightest = {
    .name = "LightDarkModule.removeBrightestPixels",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
    .kept_masks = kept_masks,
};
