/* What a QC step may use of its slide beyond qc_run_t's metadata: the
 * slide's pixels at any working size (read once per run, cached), the
 * tissue mask still in use (HistoQC's img_mask_use), masks other steps
 * kept by name, the files to return, and the steps done so far.
 *
 * HistoQC's counterpart is the BaseImage dictionary (s["img_mask_use"],
 * s.getImgThumb (size), s.addToPrintList, io.imsave (outdir + filename +
 * "_name.png")). Every function here checks its inputs; a failure is
 * reported with qc_run_fail by the function itself, so a module simply
 * returns -1 when it gets NULL or -1.
 *
 * Everything a run allocates is freed by qc_run_state_free at the end of
 * the slide (the pipeline calls it). */
#ifndef QC_RUN_STATE_H
#define QC_RUN_STATE_H

#include "kernels/image/image.h"
#include "kernels/modules.h"
#include "kernels/ops/ops.h"

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
/* qc_run_image (run, work_size), but when that image is not in memory
 * yet and is no larger than from (an image of this run), it is made by
 * shrinking from (area average) instead of reading the slide again. For
 * pictures such as thumbnails, where a second read buys nothing; steps
 * that measure should read. */
const qc_rgb_t *qc_run_image_shrunk (qc_run_t *run, const char *work_size,
                                     const qc_rgb_t *from);
/* skimage rgb2gray of qc_run_image (run, work_size), cached as well. */
const qc_fimg_t *qc_run_gray (qc_run_t *run, const char *work_size);

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

/* Adds a PNG file "<slide>_<suffix>.png" to the result (HistoQC's names:
 * suffix "mask_use", "thumb", "pen_markings", ...). Masks are written as
 * 0/255 gray, float images scaled from [lo, hi] to 0..255. */
int qc_run_save_mask (qc_run_t *run, const char *suffix, const qc_mask_t *m);
int qc_run_save_rgb (qc_run_t *run, const char *suffix, const qc_rgb_t *img);
int qc_run_save_fimg (qc_run_t *run, const char *suffix, const qc_fimg_t *img,
                      float lo, float hi);

/* Steps completed so far (module names without ":suffix"), for steps
 * that need an earlier one (HistoQC's s["completed"]). */
int qc_run_mark_completed (qc_run_t *run, const char *module);
int qc_run_has_completed (const qc_run_t *run, const char *module);

/* The ops backend this run uses: the table given to qc_pipeline_run_with
 * (e.g. the CUDA backend on a GPU lane), else the CPU's. */
const qc_ops_t *qc_run_ops (const qc_run_t *run);

/* Frees what the run allocated (images, masks). */
void qc_run_state_free (qc_run_t *run);

#endif
