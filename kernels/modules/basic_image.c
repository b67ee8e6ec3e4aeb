/* HistoQC's BaseImage: what is recorded for every slide before the first
 * step (filename, comments, image_bounding_box, base_mag), and the
 * [BaseImage.BaseImage] settings every step shares. */
#include "kernels/modules/module.h"
#include "kernels/slide/work_size.h"
#include "shared/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A positive decimal number, optionally followed by 'x' or 'X' (HistoQC
 * writes magnifications as "1.25x" and also accepts "40X"): the same
 * numbers image_work_size takes, whatever kind they would be there. */
static int
parse_number_x (const char *text, double *value)
{
    qc_work_size_t size;
    if (qc_work_size_parse (text, &size) != 0)
        return -1;
    *value = size.value;
    return 0;
}

int
qc_base_params_parse (const qc_config_section_t *sec, qc_base_params_t *out,
                      char *err, size_t errlen)
{
    if (!out) {
        qc_set_err (err, errlen, "no place for the settings");
        return -1;
    }
    const char *name = sec ? qc_config_section_name (sec) : "BaseImage.BaseImage";
    memset (out, 0, sizeof *out);
    const char *ws, *ms, *bm, *rs, *pws;
    if (qc_config_get_string (sec, "image_work_size", "1.25x", &ws, err, errlen)
        || qc_config_get_string (sec, "png_work_size", NULL, &pws, err, errlen)
        || qc_config_get_string (sec, "image_resample", "lanczos", &rs, err,
                                 errlen)
        || qc_config_get_string (sec, "mask_statistics", "relative2mask", &ms,
                                 err, errlen)
        || qc_config_get_string (sec, "base_mag", NULL, &bm, err, errlen)
        || qc_config_get_bool (sec, "confirm_base_mag", 0, &out->confirm_base_mag,
                               err, errlen)
        || qc_config_get_bool (sec, "enable_bounding_box", 0,
                               &out->enable_bounding_box, err, errlen)
        || qc_config_get_bool (sec, "in_memory_compression", 0,
                               &out->in_memory_compression, err, errlen))
        return -1;
    if (qc_work_size_parse (ws, &out->image_work_size) != 0) {
        qc_set_err (err, errlen, "[%s] image_work_size = '%.64s' (line %d): not a "
                 "magnification (1.25x), downscale factor (0.1), level (2) or "
                 "size in pixels (500)", name, ws,
                 qc_config_key_line (sec, "image_work_size"));
        return -1;
    }
    if (pws && qc_work_size_parse (pws, &out->png_work_size) != 0) {
        qc_set_err (err, errlen, "[%s] png_work_size = '%.64s' (line %d): not a "
                 "magnification (1.25x), downscale factor (0.1), level (2) or "
                 "size in pixels (500)", name, pws,
                 qc_config_key_line (sec, "png_work_size"));
        return -1;
    }
    if (strcmp (ms, "relative2mask") == 0)
        out->mask_statistics = QC_MASK_RELATIVE2MASK;
    else if (strcmp (ms, "absolute") == 0)
        out->mask_statistics = QC_MASK_ABSOLUTE;
    else if (strcmp (ms, "relative2image") == 0)
        out->mask_statistics = QC_MASK_RELATIVE2IMAGE;
    else {
        qc_set_err (err, errlen, "[%s] mask_statistics = '%.64s' (line %d): must be "
                 "relative2mask, absolute or relative2image", name, ms,
                 qc_config_key_line (sec, "mask_statistics"));
        return -1;
    }
    if (strcmp (rs, "lanczos") == 0)
        out->resample_area = 0;
    else if (strcmp (rs, "area") == 0)
        out->resample_area = 1;
    else {
        qc_set_err (err, errlen, "[%s] image_resample = '%.64s' (line %d): must be "
                 "lanczos (HistoQC's images) or area", name, rs,
                 qc_config_key_line (sec, "image_resample"));
        return -1;
    }
    if (bm && parse_number_x (bm, &out->base_mag) != 0) {
        qc_set_err (err, errlen, "[%s] base_mag = '%.64s' (line %d): not a "
                 "magnification (e.g. 40 or 40x)", name, bm,
                 qc_config_key_line (sec, "base_mag"));
        return -1;
    }
    return 0;
}

static int
check_base (const qc_config_section_t *params, char *err, size_t errlen)
{
    qc_base_params_t scratch;
    return qc_base_params_parse (params, &scratch, err, errlen);
}

/* One openslide.bounds-* property as a non-negative integer. */
static int
bound (const qc_run_t *run, const char *prop, int64_t *out)
{
    const char *s = qc_slide_property (run->slide, prop);
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll (s, &end, 10);
    if (errno || *end || v < 0)
        return -1;
    *out = v;
    return 0;
}

static void
set_bbox (qc_run_t *run)
{
    int64_t w = 0, h = 0;
    qc_slide_level_size (run->slide, 0, &w, &h);
    run->bbox_x = 0, run->bbox_y = 0, run->bbox_w = w, run->bbox_h = h;
    if (!run->base->enable_bounding_box)
        return;
    int64_t x, y, bw, bh;
    if (bound (run, "openslide.bounds-x", &x) || bound (run, "openslide.bounds-y", &y)
        || bound (run, "openslide.bounds-width", &bw)
        || bound (run, "openslide.bounds-height", &bh) || bw <= 0 || bh <= 0
        || x > w || y > h || bw > w - x || bh > h - y) {
        qc_run_warn (run, "Bounding Box requested but could not read");
        return;
    }
    run->bbox_x = x, run->bbox_y = y, run->bbox_w = bw, run->bbox_h = bh;
}

/* A magnification property not believed, said (the slide's other one,
 * or the config's base_mag, is used). */
static void
warn_mag (void *arg, const char *property, const char *value, const char *why)
{
    qc_run_warn (arg, "%s '%.40s' %s; ignored", property, value, why);
}

/* HistoQC reads the magnification from openslide.objective-power, then
 * aperio.AppMag, then the config's base_mag: the reader the steps that
 * size images use (kernels/slide/work_size.h). */
static void
set_base_mag (qc_run_t *run)
{
    run->base_mag = 0;
    if (qc_region_base_mag_said (run->slide, run->base->base_mag, &run->base_mag, warn_mag,
                                 run) != 0) {
        run->base_mag = 0;
        qc_run_warn (run, "Unknown base magnification for file (no "
                     "openslide.objective-power or aperio.AppMag; set base_mag "
                     "in [BaseImage.BaseImage] to give one)");
    }
}

static int
run_base (qc_run_t *run)
{
    set_bbox (run);
    set_base_mag (run);
    char mag[QC_PYFLOAT_LEN];
    /* results.tsv shows HistoQC's Python values: " " for the comments a
     * user fills in the UI, a tuple for the box, a float or NA. */
    if (qc_run_set (run, "filename", "%s", run->filename)
        || qc_run_set (run, "comments", " ")
        || qc_run_set (run, "image_bounding_box", "(%lld, %lld, %lld, %lld)",
                       (long long) run->bbox_x, (long long) run->bbox_y,
                       (long long) run->bbox_w, (long long) run->bbox_h)
        || qc_run_set (run, "base_mag", "%s", run->base_mag > 0
                       ? qc_pyfloat (run->base_mag, mag, sizeof mag) : "NA"))
        return -1;
    return 0;
}

static const char *const params[] = {
    "image_work_size", "mask_statistics", "confirm_base_mag", "base_mag",
    "enable_bounding_box", "in_memory_compression", "image_resample",
    "png_work_size", NULL
};

static const char *const columns[] = {
    "filename", "comments", "image_bounding_box", "base_mag", NULL
};

const qc_module_t qc_module_base_image = {
    .name = "BaseImage.BaseImage",
    .run = run_base,
    .check = check_base,
    .params = params,
    .columns = columns,
};
