/* DeconvolutionModule.separateStains, as HistoQC computes it:
 *
 *   stain    = a skimage.color X_from_rgb matrix by name (required)
 *   use_mask = default true: statistics over img_mask_use
 *   for each stain channel c of separate_stains (image at image_work_size):
 *     clip to [0, 0.99 quantile of the channel over the whole image]
 *     deconv_c<c>_mean / _std of the clipped values (under the mask)
 *     _deconv_c<c>.png: clipped values stretched from [min, max] (under
 *     the mask) to 0..255, black outside the mask
 *
 * An empty mask with use_mask: -100 for every column, black images and
 * HistoQC's warning. See deconv_algo.h for the arithmetic. */
#include "kernels/modules/deconv_algo.h"

#include <stdio.h>

#include "kernels/modules/module.h"
#include "kernels/run/run.h"

static int
get_params (const qc_config_section_t *sec, qc_mat3_t *m, int *use_mask,
            char *err, size_t errlen)
{
    const char *stain;
    if (qc_config_get_string (sec, "stain", "", &stain, err, errlen)
        || qc_config_get_bool (sec, "use_mask", 1, use_mask, err, errlen))
        return -1;
    if (!*stain) {
        int line = sec ? qc_config_key_line (sec, "stain") : 0;
        if (line > 0)   /* "stain:" with nothing after it */
            snprintf (err, errlen, "[%s] stain (line %d) is empty; name a skimage "
                      "stain matrix such as hed_from_rgb", qc_config_section_name (sec),
                      line);
        else if (sec)
            snprintf (err, errlen, "[%s] (line %d) has no stain; name a skimage stain "
                      "matrix such as hed_from_rgb", qc_config_section_name (sec),
                      qc_config_section_line (sec));
        else
            snprintf (err, errlen, "[DeconvolutionModule.separateStains] stain is not "
                      "set; name a skimage stain matrix such as hed_from_rgb");
        return -1;
    }
    if (qc_stain_matrix (stain, m) != 0) {
        snprintf (err, errlen, "[%s] stain = '%.40s' (line %d): unknown; one of "
                  "hed_from_rgb, hdx_from_rgb, fgx_from_rgb, bex_from_rgb, "
                  "rbd_from_rgb, gdx_from_rgb, hax_from_rgb, bro_from_rgb, "
                  "bpx_from_rgb, ahx_from_rgb, hpx_from_rgb",
                  qc_config_section_name (sec), stain,
                  qc_config_key_line (sec, "stain"));
        return -1;
    }
    return 0;
}

static int
check_deconv (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_mat3_t m;
    int use_mask;
    return get_params (sec, &m, &use_mask, err, errlen);
}

/* HistoQC prints the int -100 for an empty mask, floats otherwise. */
static int
set_value (qc_run_t *run, const char *col, double v, int empty)
{
    char buf[QC_PYFLOAT_LEN];
    return qc_run_set (run, col, "%s",
                       empty ? "-100" : qc_pyfloat (v, buf, sizeof buf));
}

static int
run_deconv (qc_run_t *run)
{
    qc_mat3_t m;
    int use_mask;
    char err[512];
    if (get_params (run->params, &m, &use_mask, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_rgb_t *img = qc_run_image (run, NULL);
    const qc_mask_t *mask = use_mask ? qc_run_mask (run) : NULL;
    if (!img || (use_mask && !mask))
        return -1;
    qc_fimg_t *planes[3] = { qc_fimg_new (img->w, img->h),
                             qc_fimg_new (img->w, img->h),
                             qc_fimg_new (img->w, img->h) };
    qc_deconv_stats_t st;
    int rc = 0;
    if (!planes[0] || !planes[1] || !planes[2])
        rc = qc_run_fail (run, "out of memory for %d x %d stain planes",
                          img->w, img->h);
    else if (qc_deconv_stains (qc_run_ops (run), img, &m, mask, &st, planes))
        rc = qc_run_fail (run, "stain separation of a %d x %d image failed "
                          "(out of memory?)", img->w, img->h);
    char col[32], file[32];
    for (int c = 0; c < 3 && rc == 0; c++) {
        snprintf (col, sizeof col, "deconv_c%d_mean", c);
        rc = set_value (run, col, st.mean[c], st.empty);
        snprintf (col, sizeof col, "deconv_c%d_std", c);
        if (rc == 0)
            rc = set_value (run, col, st.std[c], st.empty);
        snprintf (file, sizeof file, "deconv_c%d", c);
        if (rc == 0)
            rc = qc_run_save_fimg (run, file, planes[c], 0.0f, 1.0f);
    }
    if (rc == 0 && st.empty)
        qc_run_warn (run, "DeconvolutionModule.separateStains: NO tissue "
                     "remains detectable! Saving Black images");
    for (int c = 0; c < 3; c++)
        qc_fimg_destroy (&planes[c]);
    return rc;
}

static const char *const params[] = { "stain", "use_mask", NULL };

/* HistoQC's separateStains adds mean before std where the slide has
 * tissue (std first only for an empty mask), and its results.tsv takes
 * the header from the first slide done: mean first, in a cohort whose
 * first slide has tissue, as a lab's older results.tsv files have it.
 * (Its own bundled results.tsv began with a slide without tissue.) */
static const char *const columns[] = {
    "deconv_c0_mean", "deconv_c0_std", "deconv_c1_mean", "deconv_c1_std",
    "deconv_c2_mean", "deconv_c2_std", NULL
};

const qc_module_t qc_module_deconv_stains = {
    .name = "DeconvolutionModule.separateStains",
    .run = run_deconv,
    .check = check_deconv,
    .params = params,
    .columns = columns,
};
