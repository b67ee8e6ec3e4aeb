/* Helpers the blur, bubble and texture steps share (blur_common.c). */
#ifndef QC_BLUR_COMMON_H
#define QC_BLUR_COMMON_H

#include <stddef.h>

#include "kernels/modules/module.h"
#include "kernels/run/run.h"

/* Config checks: 0, or -1 with a message naming section, key and line.
 * An absent key is fine. */
int qc_bb_check_work_size (const qc_config_section_t *sec, char *err,
                           size_t errlen);
int qc_bb_check_mask_statistics (const qc_config_section_t *sec, char *err,
                                 size_t errlen);
/* A number in [lo, hi] (def when absent), stored in *out if not NULL. */
int qc_bb_check_range (const qc_config_section_t *sec, const char *key,
                       double def, double lo, double hi, double *out,
                       char *err, size_t errlen);
int qc_bb_check_int (const qc_config_section_t *sec, const char *key,
                     long long def, long long lo, long long hi, long long *out,
                     char *err, size_t errlen);

/* An odd window side in [1, max] (def when absent): a box centred on
 * its pixel. */
int qc_bb_check_odd_window (const qc_config_section_t *sec, const char *key,
                            long long def, long long max, int *out,
                            char *err, size_t errlen);

/* The parameters both sharpness steps judge by, with the same meaning
 * and bounds: relative_threshold [0, 1], absolute_threshold [0, 8],
 * min_fraction [0.001, 1], max_gray [0.001, 1]; each pointer holds its
 * default and gets the value. */
int qc_bb_check_sharpness (const qc_config_section_t *sec, double *relative,
                           double *absolute, double *min_fraction,
                           double *max_gray, char *err, size_t errlen);

/* Columns <prefix>_num_regions, _mean_area, _max_area of found's
 * 8-connected regions, printed as HistoQC prints them. 0 or -1 (failed). */
int qc_bb_set_regions (qc_run_t *run, const char *prefix,
                       const qc_mask_t *found);

/* HistoQC's warning when a step leaves img_mask_use empty; what is the
 * step as HistoQC names it in the warning. 0 or -1 (failed). */
int qc_bb_warn_if_empty (qc_run_t *run, const qc_mask_t *mask,
                         const char *what);

/* The blur steps' common ending: blurry_work (a map at any size) resized
 * to img_mask_use's size (nearest), ANDed with it and removed from it;
 * "_blurry.png" saved, kept as "blurry", blurry_removed_* columns set,
 * HistoQC's warning (naming what) when no tissue is left. 0 or -1. */
int qc_blur_apply (qc_run_t *run, const qc_mask_t *blurry_work,
                   const char *what);

#endif
