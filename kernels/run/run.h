/* The run: what a QC step knows of its slide and may use of it, the one
 * context every module author works with. qc_run_t holds the slide's
 * metadata ([BaseImage.BaseImage]'s settings, the slide, the result
 * being filled, the step running); the functions below give the slide's
 * pixels at any working size (read once per run, cached), the tissue
 * mask still in use (HistoQC's img_mask_use), masks other steps kept by
 * name, the files to return, the steps done so far, and report
 * failures, warnings and columns.
 *
 * HistoQC's counterpart is the BaseImage dictionary (s["img_mask_use"],
 * s.getImgThumb (size), s.addToPrintList, io.imsave (outdir + filename +
 * "_name.png")). Every function here checks its inputs; a failure is
 * reported with qc_run_fail by the function itself, so a module simply
 * returns -1 when it gets NULL or -1.
 *
 * Everything a run allocates is freed by qc_run_state_free at the end of
 * the slide (the pipeline calls it). */
#ifndef QC_RUN_H
#define QC_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"
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
    qc_work_size_t png_work_size;  /* the project's: PNG images larger
                                      than this size are shrunk to it
                                      before they are written (value 0:
                                      unset, HistoQC's sizes) */
} qc_base_params_t;

/* What one pipeline run knows about its slide (HistoQC's BaseImage). One
 * run belongs to one thread; the pipeline owns everything it points to.
 * Per-slide state (images, masks, files, steps done) lives behind
 * state, through the functions below. */
typedef struct qc_run {
    qc_slide_t *slide;
    qc_result_t *out;
    const char *filename;            /* slide file name, no folders */
    const char *origin;              /* the slide as named: a path or URL
                                        (files beside it are looked for
                                        there); NULL: not known */
    const qc_base_params_t *base;
    double base_mag;                 /* 0 when unknown (see
                                        qc_run_require_mag) */
    int64_t bbox_x, bbox_y, bbox_w, bbox_h;  /* region analysed, level 0 */
    const char *step;                /* the step running, as written */
    const qc_config_section_t *params;  /* its section; NULL = none */
    int read_threads;                /* threads per slide read; <= 0: 1
                                        (a worker runs several slides) */
    struct qc_run_state *state;      /* images, masks, steps done
                                        (run/run_state.h); NULL until
                                        first used */
    const struct qc_ops *ops;        /* backend (qc_run_ops); NULL = CPU */
    unsigned oom_at_start;           /* qc_oom_count () when it started */
    void (*reserve) (void *arg, int64_t bytes);  /* the pipeline input's
                                        (pipeline.h); NULL: none */
    void *reserve_arg;
    struct qc_png_queue *png_queue;  /* PNG encodes done on threads of
                                        their own while the steps go on
                                        (png_queue.h; the pipeline's,
                                        for a run with read threads to
                                        spare); NULL: each save encodes
                                        at once */
} qc_run_t;

/* Counts bytes more (fewer when negative) that the step holds beyond
 * the slide's images, for the worker's memory gate (pipeline.h's
 * reserve); nothing without one. A step gives back what it counted
 * before it returns. */
void qc_run_reserve (qc_run_t *run, int64_t bytes);

/* ---- reporting (run_report.c, pyfloat.c) ---- */

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

/* ---- images (run_images.c) ---- */


/* The slide at a working size: "1.25x" (a magnification), "0.1" (a
 * downscale), "2" (a level) or "1000" (the longer side), as HistoQC's
 * image_work_size. NULL = [BaseImage.BaseImage]'s image_work_size, the
 * size of the tissue mask. Cached for the rest of the run. */
const qc_rgb_t *qc_run_image (qc_run_t *run, const char *work_size);
/* Reads the image at [BaseImage.BaseImage]'s image_work_size now, which
 * the steps would otherwise read on first use: a GPU worker reads the
 * next slide on a CPU thread while its GPU runs the steps of the one
 * before (qc_pipeline_prepare). What the run gives is the same either
 * way: a failed read is not reported here (the step that needs the image
 * reads again and fails with its own message), and the read's warning
 * is given when a step first uses the image. 0 when the image is ready. */
int qc_run_preread (qc_run_t *run);
/* The image at [BaseImage.BaseImage]'s image_work_size if it is in
 * memory already (read ahead), else NULL: never reads, never reports
 * (its read's warning still waits for the step that uses it). For a
 * step's prefetch (module.h), which may only guess from what is read. */
const qc_rgb_t *qc_run_image_ahead (const qc_run_t *run);
/* qc_run_image (run, work_size), but when that image is not in memory
 * yet and is no larger than from (an image of this run), it is made by
 * shrinking from (area average) instead of reading the slide again. For
 * pictures such as thumbnails, where a second read buys nothing; steps
 * that measure should read. */
const qc_rgb_t *qc_run_image_shrunk (qc_run_t *run, const char *work_size,
                                     const qc_rgb_t *from);
/* The size of the run's image at size (without reading it): 0, or -1
 * when the slide cannot be planned at that size. */
int qc_run_size_at (const qc_run_t *run, qc_work_size_t size, int *w, int *h);
/* skimage rgb2gray of qc_run_image (run, work_size), cached as well. */
const qc_fimg_t *qc_run_gray (qc_run_t *run, const char *work_size);

/* ---- masks (run_masks.c) ---- */

/* img_mask_use: 1 where tissue is still in use, at the size of
 * qc_run_image (run, NULL). All 1 until a step removes something. Steps
 * change it in place (e.g. qc_ops->mask_logic (mask, found, ANDNOT)). */
qc_mask_t *qc_run_mask (qc_run_t *run);

/* A mask at the base size kept under a name for later steps (e.g.
 * "pen_markings", "blurry", "coverslip_edge" for the fuse image and
 * finalComputations). The run takes ownership of mask, also when it
 * fails; keeping a name again replaces (and frees) the earlier mask. */
int qc_run_keep_mask (qc_run_t *run, const char *name, qc_mask_t *mask);
const qc_mask_t *qc_run_kept_mask (const qc_run_t *run, const char *name);
/* A step's mask_name parameter, as HistoQC looks it up: "img_mask_use",
 * or a kept mask with or without HistoQC's "img_mask_" prefix. Fails the
 * slide with a reason (and returns NULL) when no step kept that mask. */
const qc_mask_t *qc_run_named_mask (qc_run_t *run, const char *name);
/* The same lookup without failing the slide: NULL when no step kept the
 * mask (or, for img_mask_use, when the image cannot be read: the run
 * has failed then). */
const qc_mask_t *qc_run_find_mask (qc_run_t *run, const char *name);
/* The kept name a mask_name= gives without HistoQC's "img_mask_" prefix
 * (name itself when it has none): a lookup tries name, then this. Also
 * the pipeline's check of mask names before any slide. */
const char *qc_run_mask_bare (const char *name);
/* HistoQC's img_mask_force: marks the kept mask name as one that
 * saveFinalMask clears from img_mask_use again (ClassificationModule
 * forces pen_markings and coverslip_edge, so that a later hole filling
 * cannot bring them back). qc_run_apply_forced clears every forced mask
 * of the same size from mask (in place). 0 or -1. */
int qc_run_force_mask (qc_run_t *run, const char *name);
int qc_run_apply_forced (qc_run_t *run, qc_mask_t *mask);

/* The fraction of a mask to report in results.tsv, as HistoQC's
 * mask_statistics says: relative2mask (default: of the pixels of
 * img_mask_use as it was when the step began; the caller passes it),
 * absolute (of the whole image), relative2image (of the image, too). */
double qc_run_mask_fraction (const qc_run_t *run, const qc_mask_t *found,
                             const qc_mask_t *mask_before);
/* As HistoQC's printMaskHelper (params.get ("mask_statistics",
 * s["mask_statistics"]), prev_mask, s["img_mask_use"]): found is the mask
 * AFTER the step (img_mask_use), mask_before the one before it.
 * relative2mask: 1 - |after| / |before| (-100 when before is empty);
 * absolute: |after|; relative2image: |after| / pixels. The step's own
 * mask_statistics parameter overrides [BaseImage.BaseImage]'s. NaN on a
 * bad argument. qc_run_set_mask_statistics sets column to it, printed as
 * HistoQC's str () does. */
int qc_run_set_mask_statistics (qc_run_t *run, const char *column,
                                const qc_mask_t *after,
                                const qc_mask_t *before);

/* ---- which step removed each pixel (run_removed.c) ---- */

/* For SaveModule.saveFinalMask's _causes.png: which step first took each
 * pixel out of img_mask_use. A pixel a later step put back (hole
 * filling) and another took out again stays the first step's; the
 * record names the step, not a mask a step kept, because what a step
 * keeps is not always what it took (LightDarkModule keeps the tissue
 * it found, its PNG shows what went).
 *
 * Off unless turned on (qc_run_record_removals: the pipeline does it
 * when a step of the config reads it, module.h's reads_removals), as
 * it costs a mask and a float image of _causes.png's size
 * (qc_run_causes_size) and a few per-pixel ops after each step, on the
 * run's ops (a device lane's stay in its memory: the host gets one
 * copy, when the record is read). */
#define QC_RUN_MAX_REMOVERS 255
/* _causes.png is a review image: its long side at most this (a working
 * image at 10x, without png_work_size, would otherwise keep a record
 * of 5 bytes a pixel of it) */
#define QC_RUN_CAUSES_MAX_SIDE 1024
typedef struct {
    char step[128];          /* the step as written, cut to fit */
    char mask[128];          /* the first mask PNG it saved
                                ("pen_markings"); "" when none */
    size_t pixels;           /* pixels it took first */
} qc_run_remover_t;

/* Turns the record on for this run (before its first step). 0 or -1. */
int qc_run_record_removals (qc_run_t *run);
/* After a step (the pipeline calls it; a step may call it to bring the
 * record up to date before it reads it): the pixels out of
 * img_mask_use that no step had taken are the running step's. Nothing
 * when the record is off. 0 (a record that cannot go on stops, with a
 * warning: qc_run_removals_given_up). */
int qc_run_note_removals (qc_run_t *run);
/* The size _causes.png and its record are made at for a mask of w x h:
 * what png_work_size writes it at, its long side at most
 * QC_RUN_CAUSES_MAX_SIDE. 1 when smaller than w x h, 0 when the same,
 * -1 on a bad argument. */
int qc_run_causes_size (const qc_run_t *run, int w, int h, int *cw, int *ch);
/* 1 when the record stopped (no memory, too many steps): the slide's
 * warning says why, and _causes.png is not drawn; the QC goes on. */
int qc_run_removals_given_up (const qc_run_t *run);
/* The record: w x h bytes (qc_run_causes_size of img_mask_use's), 0 for a pixel no step
 * took, k for removers[k - 1]; *n removers, in the order they ran.
 * NULL (and *n 0) when the record is off or nothing was taken yet. */
const uint8_t *qc_run_removals (qc_run_t *run,
                                const qc_run_remover_t **removers,
                                size_t *n, int *w, int *h);

/* ---- files (run_files.c) ---- */

/* Adds a PNG file "<slide>_<suffix>.png" to the result (HistoQC's names:
 * suffix "mask_use", "thumb", "pen_markings", ...). Masks are written as
 * 0/255 gray, float images scaled from [lo, hi] to 0..255.
 * With [BaseImage.BaseImage] png_work_size set, an image of the size of
 * image_work_size (a mask, a plane, the thumbnail at that size) that is
 * larger than the slide at png_work_size is shrunk to it first, by the
 * run's backend (masks: nearest; RGB and float: area average): a 10x
 * run then neither writes 10x PNGs nor, on a GPU lane, copies 10x planes
 * to the host for them. Other images (plots, a thumbnail at a size of
 * its own) go as they are. */
int qc_run_save_mask (qc_run_t *run, const char *suffix, const qc_mask_t *m);
int qc_run_save_rgb (qc_run_t *run, const char *suffix, const qc_rgb_t *img);
int qc_run_save_fimg (qc_run_t *run, const char *suffix, const qc_fimg_t *img,
                      float lo, float hi);
/* w * h gray bytes as they are (an 8-bit image a step computed). */
int qc_run_save_gray8 (qc_run_t *run, const char *suffix, const uint8_t *px,
                       int w, int h);
/* The size the saves above write an image of w x h at: with
 * png_work_size set and w x h the image_work_size, the smaller size
 * (1); else w x h itself (0). For a step that draws over a picture
 * after shrinking it (_causes.png's legend, which must stay legible). */
int qc_run_png_size (const qc_run_t *run, int w, int h, int *pw, int *ph);
/* Adds a file a step made itself (name whole, e.g. "_first.geojson"),
 * taking data (freed on failure): after the PNGs queued before it, so
 * that the files keep the order they were saved in. 0, or -1 (the run
 * failed). */
int qc_run_add_file (qc_run_t *run, const char *name, unsigned char *data,
                     size_t size);
/* With a png_queue, the saves above queue a host copy of the image
 * (the queue's encoders start on it at once); this waits for what is
 * queued (the run flushes early when the queue's copies pass its limit)
 * and adds the files in the order saved. A
 * failed encode fails the run naming the step that saved it. 0, or -1.
 * Without a queue, 0. */
int qc_run_flush_pngs (qc_run_t *run);

/* ---- steps done, backend, end of the run (run_state.c) ---- */

/* Steps completed so far (module names without ":suffix"), for steps
 * that need an earlier one (HistoQC's s["completed"]). */
int qc_run_mark_completed (qc_run_t *run, const char *module);
int qc_run_has_completed (const qc_run_t *run, const char *module);

/* Work a step did ahead (its module's prefetch, module.h, in the read
 * ahead of a run with read threads), kept for the step by its name as
 * written (run->step, "Module.fn:instance"). keep hands data over:
 * free_fn frees it with the run's state (at the end of the slide, or
 * when the step keeps something else); on failure it is freed at once.
 * 0, or -1 (bad arguments, more than MAX_AHEAD steps, no memory: the
 * step then does the work itself; nothing is reported). ahead gives
 * what the running step's prefetch kept, or NULL. */
int qc_run_keep_ahead (qc_run_t *run, void *data, void (*free_fn) (void *));
void *qc_run_ahead (const qc_run_t *run);

/* The ops backend this run uses: the table given to qc_pipeline_run_with
 * (e.g. the CUDA backend on a GPU lane), else the CPU's. */
const qc_ops_t *qc_run_ops (const qc_run_t *run);

/* Frees what the run allocated (images, masks, work done ahead). */
void qc_run_state_free (qc_run_t *run);

#endif
