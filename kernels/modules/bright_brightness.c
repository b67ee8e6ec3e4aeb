/* BrightContrastModule.getBrightnessGray and
 * getBrightnessByChannelinColorSpace, as HistoQC computes them:
 *
 *   gray:     <prefix>grayscale_brightness / _std = mean / std of
 *             rgb2gray (image) under s[mask_name] (inverted when invert)
 *   channels: image converted to to_color_space (default RGB: the raw
 *             0..255 values; otherwise skimage's convert_colorspace), and
 *             per channel k <prefix>chan<k>_brightness<suffix> and
 *             <prefix>chan<k>_brightness_std<suffix>, where suffix is
 *             "_<to_color_space>" as written, empty for "RGB" exactly.
 *
 * No pixel under the mask: HistoQC takes the mean and std of
 * np.array (-100), printing -100.0 and 0.0, without a warning. */
#include "kernels/modules/bright_algo.h"

#include <stdio.h>
#include <string.h>

#include "kernels/run/run.h"

/* ---- getBrightnessGray ---------------------------------------------- */

static int
check_gray (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_bright_params_t p;
    return qc_bright_params (sec, &p, err, errlen);
}

static int
add_prefixed (const qc_bright_params_t *p, const char *name,
              const char *suffix, qc_module_add_column_fn *add, void *ctx)
{
    char col[QC_RESULT_MAX_KEY];
    int n = snprintf (col, sizeof col, "%s%s%s", p->prefix, name, suffix);
    if (n < 0 || (size_t) n >= sizeof col)
        return -1;
    return add (ctx, col);
}

static int
gray_columns (const qc_config_section_t *sec, qc_module_add_column_fn *add,
              void *ctx)
{
    qc_bright_params_t p;
    char err[256];
    if (qc_bright_params (sec, &p, err, sizeof err) != 0)
        return -1;
    return add_prefixed (&p, "grayscale_brightness", "", add, ctx) != 0
        || add_prefixed (&p, "grayscale_brightness_std", "", add, ctx) != 0
               ? -1 : 0;
}

static int
run_gray (qc_run_t *run)
{
    qc_bright_params_t p;
    char err[512];
    if (qc_bright_params (run->params, &p, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_fimg_t *gray = qc_run_gray (run, NULL);
    qc_mask_t *mask = NULL;
    if (!gray || qc_bright_select_mask (run, &p, &mask) != 0)
        return -1;
    qc_mean_std_t ms;
    int rc = -1;
    if (qc_plane_mean_std (qc_run_ops (run), gray, mask, &ms) != 0)
        qc_run_fail (run, "statistics of a %d x %d image failed", gray->w,
                     gray->h);
    else if (qc_bright_set (run, &p, "grayscale_brightness", ms.mean) == 0
             && qc_bright_set (run, &p, "grayscale_brightness_std", ms.std) == 0)
        rc = 0;
    qc_mask_destroy (&mask);
    return rc;
}

static const char *const gray_params[] = {
    "prefix", "limit_to_mask", "mask_name", "invert", NULL
};

const qc_module_t qc_module_bright_gray = {
    .name = "BrightContrastModule.getBrightnessGray",
    .run = run_gray,
    .check = check_gray,
    .params = gray_params,
    .param_columns = gray_columns,
    .needed_masks = qc_bright_needed_masks,
};

/* ---- getBrightnessByChannelinColorSpace ----------------------------- */

/* Colour space and column suffix from to_color_space. */
static int
space_of (const qc_config_section_t *sec, qc_colorspace_t *space,
          char *suffix, size_t len, char *err, size_t errlen)
{
    const char *name;
    if (qc_config_get_string (sec, "to_color_space", "RGB", &name, err, errlen))
        return -1;
    int s = qc_colorspace_parse (name);
    if (s < 0 || strlen (name) + 2 > len) {
        snprintf (err, errlen, "[%s] to_color_space = '%.40s' (line %d): not "
                  "one of RGB, HSV, RGB CIE, XYZ, YUV, YIQ, YPbPr, YCbCr, "
                  "YDbDr, Lab", qc_config_section_name (sec), name,
                  qc_config_key_line (sec, "to_color_space"));
        return -1;
    }
    *space = (qc_colorspace_t) s;
    /* HistoQC compares with "RGB" as written: "rgb" converts (to the
     * same values) and gets a suffix. */
    if (strcmp (name, "RGB") == 0)
        suffix[0] = '\0';
    else
        snprintf (suffix, len, "_%s", name);
    return 0;
}

static int
check_channels (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_bright_params_t p;
    qc_colorspace_t space;
    char suffix[64];
    return qc_bright_params (sec, &p, err, errlen)
        || space_of (sec, &space, suffix, sizeof suffix, err, errlen) ? -1 : 0;
}

static int
channel_columns (const qc_config_section_t *sec, qc_module_add_column_fn *add,
                 void *ctx)
{
    qc_bright_params_t p;
    qc_colorspace_t space;
    char err[256], suffix[64], name[32];
    if (qc_bright_params (sec, &p, err, sizeof err) != 0
        || space_of (sec, &space, suffix, sizeof suffix, err, sizeof err) != 0)
        return -1;
    for (int c = 1; c <= 3; c++) {
        snprintf (name, sizeof name, "chan%d_brightness", c);
        if (add_prefixed (&p, name, suffix, add, ctx) != 0)
            return -1;
        snprintf (name, sizeof name, "chan%d_brightness_std", c);
        if (add_prefixed (&p, name, suffix, add, ctx) != 0)
            return -1;
    }
    return 0;
}

static int
run_channels (qc_run_t *run)
{
    qc_bright_params_t p;
    qc_colorspace_t space;
    char err[512], suffix[64], name[96];
    if (qc_bright_params (run->params, &p, err, sizeof err) != 0
        || space_of (run->params, &space, suffix, sizeof suffix, err,
                     sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_rgb_t *img = qc_run_image (run, NULL);
    qc_mask_t *mask = NULL;
    if (!img || qc_bright_select_mask (run, &p, &mask) != 0)
        return -1;
    qc_mean_std_t ms[3];
    int rc = 0;
    if (qc_channel_mean_std (qc_run_ops (run), img, space, mask, ms) != 0)
        rc = qc_run_fail (run, "%s statistics of a %d x %d image failed (out "
                          "of memory?)", qc_colorspace_name (space), img->w,
                          img->h);
    for (int c = 0; c < 3 && rc == 0; c++) {
        snprintf (name, sizeof name, "chan%d_brightness%s", c + 1, suffix);
        rc = qc_bright_set (run, &p, name, ms[c].mean);
        snprintf (name, sizeof name, "chan%d_brightness_std%s", c + 1, suffix);
        if (rc == 0)
            rc = qc_bright_set (run, &p, name, ms[c].std);
    }
    qc_mask_destroy (&mask);
    return rc;
}

static const char *const channel_params[] = {
    "prefix", "to_color_space", "limit_to_mask", "mask_name", "invert", NULL
};

const qc_module_t qc_module_bright_channels = {
    .name = "BrightContrastModule.getBrightnessByChannelinColorSpace",
    .run = run_channels,
    .check = check_channels,
    .params = channel_params,
    .param_columns = channel_columns,
    .needed_masks = qc_bright_needed_masks,
};
