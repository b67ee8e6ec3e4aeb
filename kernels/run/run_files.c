/* The PNG files a run returns ("<slide>_<suffix>.png"); see run.h. */
#include "kernels/run/run_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/png/png_queue.h"

/* "_<suffix>.png" into name (QC_RESULT_MAX_FILENAME bytes), or -1. */
static int
png_name (char *name, const char *suffix)
{
    int n = snprintf (name, QC_RESULT_MAX_FILENAME, "_%s.png", suffix);
    return n < 0 || n >= QC_RESULT_MAX_FILENAME ? -1 : 0;
}

/* Hands an encoded PNG (rc: its encode's result, why its reason) to the
 * result as name; the result takes data, or it is freed. */
static int
take_png (qc_run_t *run, const char *name, int rc, unsigned char *data,
          size_t size, const char *why)
{
    if (rc != 0) {
        free (data);
        return qc_run_fail (run, "encoding %s: %s", name, why);
    }
    if (qc_result_take_file (run->out, name, data, size) != 0) {
        free (data);
        return qc_run_fail (run, "cannot add file %s (%zu bytes) to the "
                            "result", name, size);
    }
    return 0;
}

/* With png_work_size set: 1 and its size in *pw, *ph when an image of
 * w x h is a plane of the run (the size of image_work_size: a mask, a
 * deconvolution, the thumbnail at that size) larger than it; 0 when the
 * image goes as it is (a plot, a thumbnail at a size of its own), w x h
 * in *pw, *ph then. */
static int
png_shrinks (const qc_run_t *run, int w, int h, int *pw, int *ph)
{
    int bw, bh, sw, sh;
    *pw = w;
    *ph = h;
    if (!run->base || run->base->png_work_size.value <= 0
        || qc_run_size_at (run, run->base->image_work_size, &bw, &bh) != 0
        || w != bw || h != bh
        || qc_run_size_at (run, run->base->png_work_size, &sw, &sh) != 0
        || sw > w || sh > h || (sw == w && sh == h))
        return 0;
    *pw = sw;
    *ph = sh;
    return 1;
}

int
qc_run_png_size (const qc_run_t *run, int w, int h, int *pw, int *ph)
{
    if (!run || !pw || !ph)
        return -1;
    return png_shrinks (run, w, h, pw, ph);
}

/* The image to write for img: img itself, or (png_work_size) a smaller
 * one the run's backend made, which *made holds for the caller to free.
 * NULL (the run failed) when memory runs out. */
#define SHRUNK_FOR_PNG(T, stem, interp)                                   \
    static const T *shrunk_##stem (qc_run_t *run, const char *suffix,     \
                                   const T *img, T **made)                \
    {                                                                     \
        int pw, ph;                                                       \
        *made = NULL;                                                     \
        if (!png_shrinks (run, img->w, img->h, &pw, &ph))                 \
            return img;                                                   \
        if (!(*made = qc_##stem##_new (pw, ph))                           \
            || qc_run_ops (run)->resize_##stem (img, interp, *made) != 0) { \
            qc_##stem##_destroy (made);                                   \
            qc_run_fail (run, "%s.png: cannot shrink %d x %d to %d x %d", \
                         suffix, img->w, img->h, pw, ph);                 \
            return NULL;                                                  \
        }                                                                 \
        return *made;                                                     \
    }
SHRUNK_FOR_PNG (qc_mask_t, mask, QC_INTERP_NEAREST)
SHRUNK_FOR_PNG (qc_rgb_t, rgb, QC_INTERP_AREA)
SHRUNK_FOR_PNG (qc_fimg_t, fimg, QC_INTERP_AREA)

/* A queued file's encode came back: the file is added as an immediate
 * save's is, a failure naming the step that saved it (tag). */
static int
queued_done (void *arg, const char *name, const void *tag, int rc,
             unsigned char *data, size_t size, const char *why)
{
    qc_run_t *run = arg;
    const char *step = run->step;
    run->step = tag ? tag : step;
    int out = take_png (run, name, rc, data, size, why);
    run->step = step;
    return out;
}

int
qc_run_flush_pngs (qc_run_t *run)
{
    if (!run || !run->png_queue)
        return 0;
    return qc_png_queue_flush (run->png_queue, queued_done, run);
}

int
qc_run_add_file (qc_run_t *run, const char *name, unsigned char *data,
                 size_t size)
{
    if (!run || !run->out || !name || !data) {
        free (data);
        return run ? qc_run_fail (run, "no file to add") : -1;
    }
    if (qc_run_flush_pngs (run) != 0) {
        free (data);
        return -1;
    }
    if (qc_result_take_file (run->out, name, data, size) != 0) {
        free (data);
        return qc_run_fail (run, "cannot add %s (%zu bytes) to the result",
                            name, size);
    }
    return 0;
}

/* With a queue: img queued under "_<suffix>.png" (queue_rc, what the
 * qc_png_queue_* call returned), flushed when its copies pass the limit. */
static int
queued (qc_run_t *run, const char *suffix, int queue_rc)
{
    if (queue_rc != 0)
        return qc_run_fail (run, "%s.png: cannot keep a copy to encode (out "
                            "of memory?)", suffix);
    return qc_png_queue_due (run->png_queue) ? qc_run_flush_pngs (run) : 0;
}

static int
save_args_ok (qc_run_t *run, const char *suffix)
{
    if (!run || !run->out)
        return 0;
    if (!suffix || !*suffix || strchr (suffix, '/')) {
        qc_run_fail (run, "bad file suffix");
        return 0;
    }
    return 1;
}

/* Writes img as "_<suffix>.png": queued when the run has a PNG queue
 * (png_queue.h), else encoded now. */
static int
save_png (qc_run_t *run, const char *suffix, const qc_png_image_t *img)
{
    char name[QC_RESULT_MAX_FILENAME];
    if (png_name (name, suffix) != 0)
        return qc_run_fail (run, "%s.png: name too long", suffix);
    if (run->png_queue && qc_png_image_valid (img))
        return queued (run, suffix, qc_png_queue_image (run->png_queue, name,
                                                        run->step, img));
    unsigned char *data = NULL;
    size_t size = 0;
    char why[256] = "";
    int rc = qc_png_encode_image (img, &data, &size, why, sizeof why);
    return take_png (run, name, rc, data, size, why);
}

int
qc_run_save_mask (qc_run_t *run, const char *suffix, const qc_mask_t *m)
{
    if (!save_args_ok (run, suffix))
        return -1;
    run_removals_saw_mask (run, suffix);
    qc_mask_t *made = NULL;
    if (qc_mask_valid (m) && !(m = shrunk_mask (run, suffix, m, &made)))
        return -1;
    qc_png_image_t img = qc_png_of_mask (m);
    int rc = save_png (run, suffix, &img);
    qc_mask_destroy (&made);
    return rc;
}

int
qc_run_save_rgb (qc_run_t *run, const char *suffix, const qc_rgb_t *img)
{
    if (!save_args_ok (run, suffix))
        return -1;
    qc_rgb_t *made = NULL;
    if (qc_rgb_valid (img) && !(img = shrunk_rgb (run, suffix, img, &made)))
        return -1;
    qc_png_image_t png = qc_png_of_rgb (img);
    int rc = save_png (run, suffix, &png);
    qc_rgb_destroy (&made);
    return rc;
}

int
qc_run_save_gray8 (qc_run_t *run, const char *suffix, const uint8_t *px,
                   int w, int h)
{
    if (!save_args_ok (run, suffix))
        return -1;
    qc_png_image_t img = qc_png_of_gray8 (px, w, h);
    return save_png (run, suffix, &img);
}

int
qc_run_save_fimg (qc_run_t *run, const char *suffix, const qc_fimg_t *img,
                  float lo, float hi)
{
    if (!save_args_ok (run, suffix))
        return -1;
    if (!qc_fimg_valid (img) || !(hi > lo) || !isfinite (lo) || !isfinite (hi))
        return qc_run_fail (run, "%s.png: invalid image or range", suffix);
    qc_fimg_t *made = NULL, *scaled = NULL;
    if (!(img = shrunk_fimg (run, suffix, img, &made)))
        return -1;
    /* To [0, 1] for the encoder (img_as_ubyte of the clipped value). With
     * [0, 1] already, the encoder's own conversion (qc_px_u8_from_unit)
     * clips, and scaling by 1 changes no value: the same bytes without a
     * pass over a copy. */
    if (lo != 0.0f || hi != 1.0f) {
        if (!(scaled = qc_fimg_new (img->w, img->h))) {
            qc_fimg_destroy (&made);
            return qc_run_fail (run, "out of memory for %s.png", suffix);
        }
        double scale = 1.0 / ((double) hi - (double) lo);
        if (qc_run_ops (run)->fimg_affine (img, scale, -(double) lo * scale,
                                           0.0, 1.0, scaled)) {
            qc_fimg_destroy (&scaled);
            qc_fimg_destroy (&made);
            return qc_run_fail (run, "%s.png: scaling failed (out of "
                                "memory?)", suffix);
        }
        img = scaled;
    }
    qc_png_image_t png = qc_png_of_fimg (img);
    int rc = save_png (run, suffix, &png);
    qc_fimg_destroy (&scaled);
    qc_fimg_destroy (&made);
    return rc;
}
