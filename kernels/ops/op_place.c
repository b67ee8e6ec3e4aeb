/* The argument placement of op_place.h: what each image of an op call
 * needs before the inner op runs, and what is true of it after. */
#include "kernels/ops/op_place.h"

#include <stdarg.h>

#include "shared/log.h"

void
qc_op_call_begin (qc_op_call_t *c, const qc_device_t *target, int swap)
{
    c->target = target;
    c->swap = swap && target;
    c->n = 0;
    c->nswapped = 0;
    c->model = NULL;
    c->planes = NULL;
    c->failed = 0;
    c->home = qc_place_home ();
}

static void
note (qc_op_call_t *c, qc_span_t s, int out)
{
    if (!s.at)
        return;
    /* an image given twice (in place) is placed once, as an input, and
     * is written too */
    for (int i = 0; i < c->n; i++)
        if (c->img[i].span.at == s.at) {
            c->img[i].written |= out;
            return;
        }
    if (c->n >= QC_OP_MAX_IMAGES) {
        c->failed = 1;
        return;
    }
    c->img[c->n].span = s;
    c->img[c->n].out = out;
    c->img[c->n].written = out;
    c->img[c->n].saved_px = NULL;
    c->n++;
}

/* Images the inner op will refuse (wrong size, no pixels) are not
 * placed: the op says what is wrong with them. */
#define NOTE_IMAGE(T, stem, dir, out)                                     \
    void qc_op_note_##stem##_##dir (qc_op_call_t *c, T *img)              \
    {                                                                     \
        if (img && qc_image_check_size (img->w, img->h, NULL) == 0        \
            && (img->px || img->at.dev || img->at.uniform || (out)))      \
            note (c, QC_SPAN (img), (out));                               \
    }
NOTE_IMAGE (const qc_rgb_t, rgb, in, 0)
NOTE_IMAGE (qc_rgb_t, rgb, out, 1)
NOTE_IMAGE (const qc_fimg_t, fimg, in, 0)
NOTE_IMAGE (qc_fimg_t, fimg, out, 1)
NOTE_IMAGE (const qc_mask_t, mask, in, 0)
NOTE_IMAGE (qc_mask_t, mask, out, 1)
NOTE_IMAGE (qc_labels_t, labels, out, 1)

void
qc_op_note_planes (qc_op_call_t *c, const qc_fimg_t *const *planes)
{
    c->planes = planes;
}

void
qc_op_note_model (qc_op_call_t *c, const struct qc_trees *model)
{
    c->model = model;
}

void
qc_op_note_other (qc_op_call_t *c, ...)
{
    (void) c;
}

int
qc_op_call_ready (qc_op_call_t *c)
{
    /* planes: as many as the model reads (trees_predict checks the
     * count it was given against the same number) */
    if (c->planes && c->model && qc_trees_valid (c->model))
        for (int j = 0; j < c->model->nfeat; j++)
            qc_op_note_fimg_in (c, c->planes[j]);
    if (c->failed) {
        qc_log (QC_LOG_ERROR, "ops", "an op with more than %d images",
                QC_OP_MAX_IMAGES);
        return -1;
    }
    /* inputs first: an output that is also an input was noted as one */
    for (int i = 0; i < c->n; i++) {
        qc_access_t a = c->img[i].out ? QC_REWRITE : QC_READ;
        void *p = c->target ? qc_span_device (c->img[i].span, c->target, a)
                            : qc_span_host (c->img[i].span, a);
        if (!p)
            return -1;
        if (c->swap) {
            c->img[i].saved_px = *c->img[i].span.px;
            c->img[i].saved_at = *c->img[i].span.at;
            *c->img[i].span.px = p;
            *c->img[i].span.at = (qc_place_t) { 0 };
            c->nswapped = i + 1;
        }
    }
    /* images the inner op makes for itself are its own, on the host */
    qc_place_set_home (NULL);
    return 0;
}

int
qc_op_call_end (qc_op_call_t *c, int rc)
{
    for (int i = 0; i < c->n; i++) {
        if (i < c->nswapped) {
            *c->img[i].span.px = c->img[i].saved_px;
            *c->img[i].span.at = c->img[i].saved_at;
        }
        if (rc != 0 || !c->img[i].written)
            continue;
        if (c->target)
            qc_span_device_wrote (c->img[i].span);
        else
            qc_span_host (c->img[i].span, QC_EDIT);
    }
    qc_place_set_home (c->home);
    return rc;
}
