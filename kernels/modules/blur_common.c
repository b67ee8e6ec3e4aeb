/* What the blur, bubble and texture steps share: checks of the parameters
 * they have in common (image_work_size, mask_statistics) and the region
 * columns HistoQC prints for a removed mask. */
#include "kernels/modules/blur_common.h"

#include <stdio.h>
#include <string.h>

int
qc_bb_check_work_size (const qc_config_section_t *sec, char *err,
                       size_t errlen)
{
    const char *ws = NULL;
    qc_work_size_t parsed;
    if (qc_config_get_string (sec, "image_work_size", NULL, &ws, err, errlen))
        return -1;
    if (ws && qc_work_size_parse (ws, &parsed) != 0) {
        snprintf (err, errlen, "[%s] image_work_size = '%.64s' (line %d): not "
                  "a magnification (2.5x), downscale factor (0.1), level (2) "
                  "or size in pixels (500)", qc_config_section_name (sec), ws,
                  qc_config_key_line (sec, "image_work_size"));
        return -1;
    }
    return 0;
}

int
qc_bb_check_mask_statistics (const qc_config_section_t *sec, char *err,
                             size_t errlen)
{
    const char *ms = NULL;
    if (qc_config_get_string (sec, "mask_statistics", NULL, &ms, err, errlen))
        return -1;
    if (ms && strcmp (ms, "relative2mask") != 0 && strcmp (ms, "absolute") != 0
        && strcmp (ms, "relative2image") != 0) {
        snprintf (err, errlen, "[%s] mask_statistics = '%.64s' (line %d): "
                  "not one of relative2mask, absolute, relative2image",
                  qc_config_section_name (sec), ms,
                  qc_config_key_line (sec, "mask_statistics"));
        return -1;
    }
    return 0;
}

int
qc_bb_check_range (const qc_config_section_t *sec, const char *key,
                   double def, double lo, double hi, double *out, char *err,
                   size_t errlen)
{
    double v;
    if (qc_config_get_double (sec, key, def, &v, err, errlen))
        return -1;
    if (!(v >= lo && v <= hi)) {
        snprintf (err, errlen, "[%s] %s = %g (line %d): must be between %g "
                  "and %g", sec ? qc_config_section_name (sec) : "?", key, v,
                  qc_config_key_line (sec, key), lo, hi);
        return -1;
    }
    if (out)
        *out = v;
    return 0;
}

int
qc_bb_check_int (const qc_config_section_t *sec, const char *key,
                 long long def, long long lo, long long hi, long long *out,
                 char *err, size_t errlen)
{
    long long v;
    if (qc_config_get_int (sec, key, def, &v, err, errlen))
        return -1;
    if (v < lo || v > hi) {
        snprintf (err, errlen, "[%s] %s = %lld (line %d): must be between "
                  "%lld and %lld", sec ? qc_config_section_name (sec) : "?",
                  key, v, qc_config_key_line (sec, key), lo, hi);
        return -1;
    }
    if (out)
        *out = v;
    return 0;
}

int
qc_bb_check_odd_window (const qc_config_section_t *sec, const char *key,
                        long long def, long long max, int *out, char *err,
                        size_t errlen)
{
    long long v;
    if (qc_bb_check_int (sec, key, def, 1, max, &v, err, errlen))
        return -1;
    if (v % 2 == 0) {
        snprintf (err, errlen, "[%s] %s = %lld (line %d): must be odd (a "
                  "box centred on its pixel)", qc_config_section_name (sec),
                  key, v, qc_config_key_line (sec, key));
        return -1;
    }
    if (out)
        *out = (int) v;
    return 0;
}

int
qc_bb_check_sharpness (const qc_config_section_t *sec, double *relative,
                       double *absolute, double *min_fraction,
                       double *max_gray, char *err, size_t errlen)
{
    return qc_bb_check_range (sec, "relative_threshold", *relative, 0, 1,
                              relative, err, errlen)
        || qc_bb_check_range (sec, "absolute_threshold", *absolute, 0, 8,
                              absolute, err, errlen)
        || qc_bb_check_range (sec, "min_fraction", *min_fraction, 1e-3, 1,
                              min_fraction, err, errlen)
        || qc_bb_check_range (sec, "max_gray", *max_gray, 1e-3, 1, max_gray,
                              err, errlen) ? -1 : 0;
}

int
qc_bb_set_regions (qc_run_t *run, const char *prefix, const qc_mask_t *found)
{
    qc_region_summary_t rs;
    if (qc_run_ops (run)->region_summary (found, QC_CONN_LABEL, &rs) != 0)
        return qc_run_fail (run, "labelling the %s regions failed", prefix);
    char col[96], buf[QC_PYFLOAT_LEN];
    /* HistoQC prints ints, and numpy's mean as a float ("17.0"); with no
     * region all three are the int 0. */
    snprintf (col, sizeof col, "%s_num_regions", prefix);
    if (qc_run_set (run, col, "%zu", rs.n))
        return -1;
    snprintf (col, sizeof col, "%s_mean_area", prefix);
    if (qc_run_set (run, col, "%s", rs.n ? qc_pyfloat (rs.mean_area, buf,
                                                       sizeof buf) : "0"))
        return -1;
    snprintf (col, sizeof col, "%s_max_area", prefix);
    return qc_run_set (run, col, "%zu", rs.max_area);
}

int
qc_bb_warn_if_empty (qc_run_t *run, const qc_mask_t *mask, const char *what)
{
    size_t n = 0;
    if (qc_run_ops (run)->mask_count (mask, &n) != 0)
        return qc_run_fail (run, "counting the mask failed");
    if (n == 0)
        qc_run_warn (run, "After %s NO tissue remains detectable! Downstream "
                     "modules likely to be incorrect/fail", what);
    return 0;
}
