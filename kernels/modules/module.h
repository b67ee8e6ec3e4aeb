/* A QC module (one HistoQC step) and the module table: HistoQC step
 * names -> C functions.
 *
 * Like OpenSlide's format table, the pipeline never knows which module it
 * runs: each module is one descriptor (qc_module_t) that names the step,
 * the parameters its config section may hold, the results.tsv columns it
 * fills and its function, which works on its slide through the run
 * (kernels/run/run.h). Adding a module is one new file here that defines
 * its descriptor, its extern line below and one line in the table in
 * table.c.
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
#ifndef QC_MODULE_H
#define QC_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/run/run.h"
#include "shared/config.h"

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

/* Work a step may do ahead, in the read ahead of a run with read
 * threads (a GPU lane's qc_pipeline_prepare: the next slide, on CPU
 * threads, while the GPU runs the steps of the slide before), with
 * run->step and run->params the step's. It may only guess from what is
 * read (qc_run_image_ahead) and keep what the step would make the same
 * way itself (qc_run_keep_ahead): the step's results are the same with
 * or without it. It reports nothing; a failure or a wrong guess leaves
 * the step to do the work. */
typedef void (qc_module_prefetch_fn) (qc_run_t *run);

/* The files outside the slide a step reads for the slide at origin (a
 * path or URL, as a worker is sent it; its file name is the slide's):
 * the module calls add (ctx, where) for each, a path or URL, whether or
 * not it is there. params may be NULL. 0, or -1 when add fails or the
 * step's parameters are bad (its check says why). */
typedef int (qc_module_inputs_fn) (const qc_config_section_t *params, const char *origin,
                                   qc_module_add_column_fn *add, void *ctx);

typedef struct {
    const char *name;                /* "BasicModule.getBasicStats" */
    qc_module_run_fn *run;
    qc_module_check_fn *check;       /* NULL: any value is fine */
    const char *const *params;       /* accepted keys, NULL-terminated */
    const char *const *columns;      /* filled columns, NULL-terminated */
    qc_module_columns_fn *param_columns;  /* NULL: columns[] only */
    qc_module_prefetch_fn *prefetch;      /* NULL: nothing ahead */
    /* The masks it keeps for a later step's mask_name= (qc_run_keep_mask,
     * HistoQC's s["img_mask_<name>"]): under fixed names, NULL-terminated
     * (NULL: none), and under names its parameters give (its name=),
     * told as param_columns tells columns (NULL: none). The pipeline
     * refuses a mask_name that no earlier step keeps, before any slide. */
    const char *const *kept_masks;
    qc_module_columns_fn *kept_named;
    /* The kept masks its parameters name that its run fails without
     * (mask_name= of a brightness or texture step; not SaveModule's,
     * which warns as HistoQC does), told the same way; NULL: none. */
    qc_module_columns_fn *needed_masks;
    /* What it reads beside the slide (AnnotationModule's annotation
     * file), so that qc-submit can tell a rerun that a slide's file
     * changed since its row (client/output_stamps.h); NULL: nothing. */
    qc_module_inputs_fn *slide_inputs;
    /* 1 when the step, with these parameters (NULL: none), reads which
     * step took each pixel (run.h: qc_run_removals; saveFinalMask's
     * _causes.png): the pipeline then keeps that record for the run;
     * NULL: never. */
    int (*reads_removals) (const qc_config_section_t *params);
} qc_module_t;

/* Looks a step up by its module name: the len bytes of name, without
 * the ":suffix". NULL when no module has that name. */
const qc_module_t *qc_module_find (const char *name, size_t len);
/* 1 when name (len bytes) is a step of HistoQC's that this project has not
 * implemented yet: the pipeline says so instead of "unknown". */
int qc_module_is_histoqc (const char *name, size_t len);
/* 1 when a config section of this name (suffix included) belongs to a
 * module: one of the table's, one of HistoQC's, or a section HistoQC's
 * bundled configs still carry for a function HistoQC no longer has
 * ([LightDarkModule.getTissuePercent]). The pipeline refuses other
 * sections, besides [pipeline] and [BaseImage.BaseImage]. */
int qc_module_section_known (const char *section);
/* For a step of HistoQC's first versions that its releases since do not
 * have (SaveModule.saveImages, DeconvolutionModule.seperateStains):
 * what to do instead ("write SaveModule.saveFinalMask ..."); NULL for
 * any other name. */
const char *qc_module_renamed (const char *name, size_t len);
size_t qc_module_count (void);
const qc_module_t *qc_module_at (size_t index);
/* 1 when the module accepts the (lower-case) parameter key. */
int qc_module_accepts (const qc_module_t *module, const char *key);

/* The descriptors; each lives in its module's file. */
extern const qc_module_t qc_module_base_image;     /* basic_image.c */
extern const qc_module_t qc_module_basic_stats;    /* basic_stats.c */
extern const qc_module_t qc_module_count_pieces;   /* basic_pieces.c */
/* group: masks (LightDark, Morphology, BasicModule.final*, SaveModule) */
extern const qc_module_t qc_module_ld_percent;            /* lightdark_percent.c */
extern const qc_module_t qc_module_ld_otsu;               /* lightdark_otsu.c */
extern const qc_module_t qc_module_ld_minfilter;          /* lightdark_minfilter.c */
extern const qc_module_t qc_module_ld_brightest;          /* lightdark_brightest.c */
extern const qc_module_t qc_module_ld_folds;              /* lightdark_folds.c */
extern const qc_module_t qc_module_ld_equalise;           /* lightdark_equalise.c */
extern const qc_module_t qc_module_morph_fatlike;         /* morph_fatlike.c */
extern const qc_module_t qc_module_morph_holes;           /* morph_holes.c */
extern const qc_module_t qc_module_morph_small;           /* morph_small.c */
extern const qc_module_t qc_module_final_spur;            /* final_spur.c */
extern const qc_module_t qc_module_final_area;            /* final_area.c */
extern const qc_module_t qc_module_final_compute;         /* final_compute.c */
extern const qc_module_t qc_module_save_final_mask;       /* save_final_mask.c */
extern const qc_module_t qc_module_save_macro;            /* save_macro.c */
extern const qc_module_t qc_module_save_thumbnails;       /* save_thumbnails.c */
extern const qc_module_t qc_module_save_mask;             /* save_mask.c */
extern const qc_module_t qc_module_save_geojson;          /* save_geojson.c */
/* group: blur, bubbles, texture */
extern const qc_module_t qc_module_bubble_smoothness; /* bubble_smoothness.c */
extern const qc_module_t qc_module_blur_histoqc;   /* blur_histoqc.c */
extern const qc_module_t qc_module_blur_local;     /* blur_local.c */
extern const qc_module_t qc_module_blur_focus;     /* blur_focus.c */
extern const qc_module_t qc_module_texture;        /* texture_module.c */
/* group: histogram, brightness, contrast, deconvolution */
extern const qc_module_t qc_module_hist_compare;    /* hist_compare.c */
extern const qc_module_t qc_module_hist_histogram;  /* hist_histogram.c */
extern const qc_module_t qc_module_bright_contrast; /* bright_contrast.c */
extern const qc_module_t qc_module_bright_gray;     /* bright_brightness.c */
extern const qc_module_t qc_module_bright_channels; /* bright_brightness.c */
extern const qc_module_t qc_module_deconv_stains;   /* deconv_stains.c */
/* group: classification */
extern const qc_module_t qc_module_classify_by_example; /* classify_by_example.c */
extern const qc_module_t qc_module_classify_pixelwise;  /* classify_pixelwise.c */
/* group: tiles */
extern const qc_module_t qc_module_tile_extract;        /* tile_extract.c */
/* group: annotations */
extern const qc_module_t qc_module_annot_mask;          /* annot_mask.c */
extern const qc_module_t qc_module_annot_xml_mask;      /* annot_mask.c */
extern const qc_module_t qc_module_annot_geojson_mask;  /* annot_mask.c */

/* Parses [BaseImage.BaseImage] (sec may be NULL: all defaults). */
int qc_base_params_parse (const qc_config_section_t *sec,
                          qc_base_params_t *out, char *err, size_t errlen);

#endif
