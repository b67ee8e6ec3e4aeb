/* HistogramModule.getHistogram, as HistoQC draws it: the density
 * histograms (bins, default 20, over 0..255) of the red, green and blue
 * values of the image at image_work_size, under img_mask_use when
 * limit_to_mask (default true), plotted as step lines in one figure
 * titled "Color Distribution for <file>" and saved as _hist.png
 * (640 x 480, as matplotlib's default figure). No columns. */
#include "kernels/modules/hist_algo.h"
#include "kernels/modules/hist_plot.h"

#include <stdio.h>
#include <stdlib.h>

#include "kernels/modules/module.h"
#include "kernels/run/run.h"

static int
get_params (const qc_config_section_t *sec, int *bins, int *limit_to_mask,
            char *err, size_t errlen)
{
    long long b;
    if (qc_config_get_int (sec, "bins", 20, &b, err, errlen)
        || qc_config_get_bool (sec, "limit_to_mask", 1, limit_to_mask, err,
                               errlen))
        return -1;
    if (b < 1 || b > QC_HIST_MAX_BINS) {
        snprintf (err, errlen, "[%s] bins = %lld (line %d): must be 1..%d",
                  qc_config_section_name (sec), b,
                  qc_config_key_line (sec, "bins"), QC_HIST_MAX_BINS);
        return -1;
    }
    *bins = (int) b;
    return 0;
}

static int
check_histogram (const qc_config_section_t *sec, char *err, size_t errlen)
{
    int bins, limit;
    return get_params (sec, &bins, &limit, err, errlen);
}

static int
run_histogram (qc_run_t *run)
{
    int bins, limit;
    char err[512];
    if (get_params (run->params, &bins, &limit, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_rgb_t *img = qc_run_image (run, NULL);
    const qc_mask_t *mask = limit ? qc_run_mask (run) : NULL;
    if (!img || (limit && !mask))
        return -1;
    qc_hist256_t h;
    double *d = malloc ((size_t) bins * 3 * sizeof *d);
    if (!d)
        return qc_run_fail (run, "out of memory");
    int rc = -1;
    /* An empty mask gives NaN densities (numpy's 0/0): empty axes. */
    if (qc_hist256_of (qc_run_ops (run), img, mask, &h) != 0
        || qc_hist_density3 (&h, bins, d) != 0)
        qc_run_fail (run, "histogram of a %d x %d image failed", img->w,
                     img->h);
    else {
        char title[512];
        snprintf (title, sizeof title, "Color Distribution for %s",
                  run->filename ? run->filename : "?");
        qc_rgb_t *plot = qc_hist_plot (d, bins, title);
        if (!plot)
            qc_run_fail (run, "out of memory for the histogram plot");
        else
            rc = qc_run_save_rgb (run, "hist", plot);
        qc_rgb_destroy (&plot);
    }
    free (d);
    return rc;
}

static const char *const params[] = { "bins", "limit_to_mask", NULL };

const qc_module_t qc_module_hist_histogram = {
    .name = "HistogramModule.getHistogram",
    .run = run_histogram,
    .check = check_histogram,
    .params = params,
};
