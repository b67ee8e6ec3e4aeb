/* The module table: HistoQC step names -> C functions.
 *
 * Like OpenSlide's format table, the pipeline never knows which module it
 * runs: each module is one descriptor (qc_module_t) that names the step,
 * the parameters its config section may hold, the results.tsv columns it
 * fills and its function. Adding a module is one new file that defines
 * its descriptor and one line in the table in modules.c.
 *
 * A config step may carry an instance suffix after ':'
 * ("LightDarkModule.getIntensityThresholdPercent:tissue"): the suffix
 * picks the config section ("[LightDarkModule...:tissue]"); the module is
 * looked up by the name before ':'.
 *
 * HistoQC's BaseImage (what it does to every slide before the first step:
 * filename, bounding box, base magnification) is the descriptor
 * qc_module_base_image. The pipeline runs it first, with the parameters of
 * [BaseImage.BaseImage]; it is not a step of its own. */
#ifndef QC_MODULES_H
#define QC_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/slide/slide.h"
#include "kernels/slide/work_size.h"
#include "shared/config.h"
#include "shared/result.h"

typedef enum {
    QC_MASK_RELATIVE2MASK,
    QC_MASK_ABSOLUTE,
    QC_MASK_RELATIVE2IMAGE
} qc_mask_statistics_t;

/* [BaseImage.BaseImage], parsed once when the pipeline is built. */
typedef struct {
    qc_work_size_t image_work_size;     /* default 1.25x */
    qc_mask_statistics_t mask_statistics;
    int confirm_base_mag;    /* accepted; HistoQC has not implemented it */
    double base_mag;         /* used when the slide has none; 0 = none */
    int enable_bounding_box; /* use openslide.bounds-* as the image */
    int in_memory_compression; /* accepted; nothing here to compress */
    int resample_area;       /* image_resample = area: shrink levels by an
                                exact area average (bands in parallel);
                                0 = lanczos, PIL's thumbnail as HistoQC */
} qc_base_params_t;

/* What one pipeline run knows about its slide (HistoQC's BaseImage). One
 * run belongs to one thread; the pipeline owns everything it points to.
 * Later modules add their per-slide state (masks, thumbnails) here. */
typedef struct qc_run {
    qc_slide_t *slide;
    qc_result_t *out;
    const char *filename;            /* slide file name, no folders */
    const qc_base_params_t *base;
    double base_mag;                 /* 0 when unknown (see
                                        qc_run_require_mag) */
    int64_t bbox_x, bbox_y, bbox_w, bbox_h;  /* region analysed, level 0 */
    const char *step;                /* the step running, as written */
    const qc_config_section_t *params;  /* its section; NULL = none */
    int read_threads;                /* threads per slide read; <= 0: 1
                                        (a worker runs several slides) */
    struct qc_run_state *state;      /* images and masks (run_state.h);
                                        NULL until first used */
    const struct qc_ops *ops;        /* backend (qc_run_ops); NULL = CPU */
} qc_run_t;

/* Runs one step on a slide. 0 when done, -1 when the slide fails (after
 * qc_run_fail; the pipeline stops this slide and goes on with others). */
typedef int (qc_module_run_fn) (qc_run_t *run);
/* Checks a step's parameter values when the pipeline is built, so a bad
 * value is refused before any slide is touched. params may be NULL. */
typedef int (qc_module_check_fn) (const qc_config_section_t *params,
                                  char *err, size_t errlen);

/* Columns whose names come from a step's parameters (HistoQC's name=
 * of LightDarkModule and ClassificationModule, a colour space suffix, a
 * template's file name): the module calls add (ctx, column) for each, in
 * results.tsv order; they follow the static columns[]. params may be
 * NULL (no section). Called once, when the pipeline is built, after
 * check; the pipeline copies the names. 0, or -1 when add fails. */
typedef int (qc_module_add_column_fn) (void *ctx, const char *column);
typedef int (qc_module_columns_fn) (const qc_config_section_t *params,
                                    qc_module_add_column_fn *add, void *ctx);

typedef struct {
    const char *name;                /* "BasicModule.getBasicStats" */
    qc_module_run_fn *run;
    qc_module_check_fn *check;       /* NULL: any value is fine */
    const char *const *params;       /* accepted keys, NULL-terminated */
    const char *const *columns;      /* filled columns, NULL-terminated */
    qc_module_columns_fn *param_columns;  /* NULL: columns[] only */
} qc_module_t;

/* Looks a step up by its module name: the len bytes of name, without
 * the ":suffix". NULL when no module has that name. */
const qc_module_t *qc_module_find (const char *name, size_t len);
/* 1 when name (len bytes) is a step of HistoQC's that this project has not
 * implemented yet: the pipeline says so instead of "unknown". */
int qc_module_is_histoqc (const char *name, size_t len);
size_t qc_module_count (void);
const qc_module_t *qc_module_at (size_t index);
/* 1 when the module accepts the (lower-case) parameter key. */
int qc_module_accepts (const qc_module_t *module, const char *key);

/* The descriptors; each lives in its module's file. */
extern const qc_module_t qc_module_base_image;     /* basic_image.c */
extern const qc_module_t qc_module_basic_stats;    /* basic_stats.c */
/* group: masks (LightDark, Morphology, BasicModule.final*, SaveModule) */
extern const qc_module_t qc_module_ld_percent;            /* lightdark_percent.c */
extern const qc_module_t qc_module_ld_otsu;               /* lightdark_otsu.c */
extern const qc_module_t qc_module_ld_minfilter;          /* lightdark_minfilter.c */
extern const qc_module_t qc_module_ld_folds;              /* lightdark_folds.c */
extern const qc_module_t qc_module_morph_fatlike;         /* morph_fatlike.c */
extern const qc_module_t qc_module_morph_holes;           /* morph_holes.c */
extern const qc_module_t qc_module_morph_small;           /* morph_small.c */
extern const qc_module_t qc_module_final_spur;            /* final_spur.c */
extern const qc_module_t qc_module_final_area;            /* final_area.c */
extern const qc_module_t qc_module_final_compute;         /* final_compute.c */
extern const qc_module_t qc_module_save_final_mask;       /* save_final_mask.c */
extern const qc_module_t qc_module_save_macro;            /* save_macro.c */
extern const qc_module_t qc_module_save_thumbnails;       /* save_thumbnails.c */
/* group: blur, bubbles, texture */
extern const qc_module_t qc_module_bubble_smoothness; /* bubble_smoothness.c */
extern const qc_module_t qc_module_blur_histoqc;   /* blur_histoqc.c */
extern const qc_module_t qc_module_blur_local;     /* blur_local.c */
extern const qc_module_t qc_module_texture_glcm;   /* texture_module.c */
/* group: histogram, brightness, contrast, deconvolution */
extern const qc_module_t qc_module_hist_compare;    /* hist_compare.c */
extern const qc_module_t qc_module_hist_histogram;  /* hist_histogram.c */
extern const qc_module_t qc_module_bright_contrast; /* bright_contrast.c */
extern const qc_module_t qc_module_bright_gray;     /* bright_brightness.c */
extern const qc_module_t qc_module_bright_channels; /* bright_brightness.c */
extern const qc_module_t qc_module_deconv_stains;   /* deconv_stains.c */
/* group: classification */
extern const qc_module_t qc_module_classify_by_example; /* classify_by_example.c */

/* Parses [BaseImage.BaseImage] (sec may be NULL: all defaults). */
int qc_base_params_parse (const qc_config_section_t *sec,
                          qc_base_params_t *out, char *err, size_t errlen);

/* Helpers every module uses (basic_run.c). */

/* Marks the slide failed with "<file>: <step>: <reason>" and logs it. */
int qc_run_fail (qc_run_t *run, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* Adds a results.tsv warning and logs it under the step's name. Warnings
 * are '|'-joined in results.tsv, so '|', tabs and newlines become ' '. */
int qc_run_warn (qc_run_t *run, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* Sets a column; a value over the result's bounds fails the slide. */
int qc_run_set (qc_run_t *run, const char *column, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* For steps that work at a magnification: a slide whose base
 * magnification is unknown (no openslide.objective-power, no
 * aperio.AppMag, no base_mag in [BaseImage.BaseImage]) fails here with a
 * reason that says how to fix it. 0 when the magnification is known. */
int qc_run_require_mag (qc_run_t *run);

/* Formats v as Python's repr(float) does (0.499, 20.0, 1e-05), the way
 * HistoQC's results.tsv shows numbers. buf needs QC_PYFLOAT_LEN bytes. */
#define QC_PYFLOAT_LEN 32
const char *qc_pyfloat (double v, char *buf, size_t len);

#endif
