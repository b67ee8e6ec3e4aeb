/* Which step first took each pixel out of img_mask_use: the record
 * SaveModule.saveFinalMask's _causes.png colours by; see run.h.
 *
 * Why a byte map kept beside the mask rather than the masks the steps
 * keep: a step keeps what a later step's mask_name= wants (LightDark's
 * tissue found, not the glass it took), some keep nothing, and a pixel
 * can sit in several; the map says which step took it, once, whatever
 * the step kept. It is filled by comparing img_mask_use after each step
 * with what no step had taken yet, so no step has to take part; on the
 * run's ops, so that on a device lane it stays in device memory. */
#include "kernels/run/run_state.h"

#include "kernels/ops/ops.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
qc_run_record_removals (qc_run_t *run)
{
    struct qc_run_state *st = run_state_of (run);
    if (!st)
        return -1;
    st->recording = 1;
    return 0;
}

void
run_removals_saw_mask (qc_run_t *run, const char *suffix)
{
    struct qc_run_state *st = run ? run->state : NULL;
    if (st && st->recording && !st->step_mask[0] && suffix)
        snprintf (st->step_mask, sizeof st->step_mask, "%s", suffix);
}

/* The record stopped: _causes.png is a review image, so a record that
 * cannot go on (no memory, too many steps) costs that image, said as
 * the slide's warning, not the slide's QC. Returns 0. */
static int __attribute__ ((format (printf, 3, 4)))
give_up (qc_run_t *run, struct qc_run_state *st, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (why, sizeof why, fmt, ap);
    va_end (ap);
    st->recording = 0;
    st->record_gave_up = 1;
    qc_run_warn (run, "_causes.png not drawn: %s", why);
    return 0;
}

/* The running step as the record's next remover; NULL when there are
 * QC_RUN_MAX_REMOVERS already. */
static qc_run_remover_t *
new_remover (qc_run_t *run, struct qc_run_state *st)
{
    if (st->nremovers >= QC_RUN_MAX_REMOVERS)
        return NULL;
    qc_run_remover_t *r = &st->removers[st->nremovers++];
    snprintf (r->step, sizeof r->step, "%s", run->step ? run->step : "?");
    snprintf (r->mask, sizeof r->mask, "%s", st->step_mask);
    r->pixels = 0;
    return r;
}

int
qc_run_causes_size (const qc_run_t *run, int w, int h, int *cw, int *ch)
{
    if (!cw || !ch || w < 1 || h < 1)
        return -1;
    if (qc_run_png_size (run, w, h, cw, ch) < 0) {
        *cw = w;
        *ch = h;
    }
    int side = *cw > *ch ? *cw : *ch;
    if (side > QC_RUN_CAUSES_MAX_SIDE) {
        double f = (double) QC_RUN_CAUSES_MAX_SIDE / side;
        *cw = (int) (*cw * f + 0.5) < 1 ? 1 : (int) (*cw * f + 0.5);
        *ch = (int) (*ch * f + 0.5) < 1 ? 1 : (int) (*ch * f + 0.5);
    }
    return *cw != w || *ch != h;
}

/* The record's images, where the mask lives (a device lane's memory: no
 * copy of a plane to the host after each step, which a GPU worker's lane
 * is measured by), at _causes.png's size (qc_run_causes_size: the mask
 * shrunk, nearest, as its PNGs are). Two: a scratch mask and the float
 * image of step numbers (whose > 0 are the pixels taken), 5 bytes a
 * pixel at most a review image's size (test_pipeline_memory bounds a
 * slide's images to 33 bytes a working pixel) */
static int
record_images (qc_run_t *run, struct qc_run_state *st, const qc_mask_t *use)
{
    if (st->removed)
        return use->w == st->use_w && use->h == st->use_h ? 0
               : give_up (run, st, "img_mask_use changed size (%d x %d, was %d x %d)",
                          use->w, use->h, st->use_w, st->use_h);
    int w, h;
    bool shrunk = qc_run_causes_size (run, use->w, use->h, &w, &h) == 1;
    st->fresh = qc_mask_new (w, h);
    st->removed = qc_fimg_new (w, h);
    st->small = shrunk ? qc_mask_new (w, h) : NULL;
    if (!st->fresh || !st->removed || (shrunk && !st->small) || qc_fimg_zero (st->removed)) {
        qc_mask_destroy (&st->fresh);
        qc_fimg_destroy (&st->removed);
        qc_mask_destroy (&st->small);
        return give_up (run, st, "out of memory for the record of which step took "
                        "which pixel (%d x %d)", w, h);
    }
    st->use_w = use->w;
    st->use_h = use->h;
    st->removed_w = w;
    st->removed_h = h;
    return 0;
}

int
qc_run_note_removals (qc_run_t *run)
{
    struct qc_run_state *st = run ? run->state : NULL;
    if (!st || !st->recording)
        return 0;
    const qc_mask_t *use = st->mask_use;
    const qc_ops_t *ops = qc_run_ops (run);
    size_t n = 0;
    int rc = 0;
    if (!use)                   /* not made yet: all of it still in use */
        goto done;
    if ((rc = record_images (run, st, use)) || !st->recording)
        goto done;
    if (st->small) {
        if (ops->resize_mask (use, QC_INTERP_NEAREST, st->small)) {
            rc = give_up (run, st, "cannot shrink img_mask_use for the record of causes");
            goto done;
        }
        use = st->small;
    }
    /* fresh: out of use now and taken by no step before (no step number
       yet): not (in use, or numbered); each count is the running step's,
       its number set where it took them (a pixel put back, by hole
       filling, and taken again keeps the first's) */
    if (ops->threshold (st->removed, 0.5, INFINITY, st->fresh)
        || ops->mask_logic (use, st->fresh, QC_LOGIC_OR, st->fresh)
        || ops->mask_logic (st->fresh, NULL, QC_LOGIC_NOT, st->fresh)
        || ops->mask_count (st->fresh, &n)) {
        rc = give_up (run, st, "cannot compare img_mask_use with the pixels taken before");
        goto done;
    }
    if (!n)
        goto done;
    qc_run_remover_t *r = new_remover (run, st);
    if (!r) {
        rc = give_up (run, st, "more than %d steps took tissue out: their colours could "
                      "not be told apart", QC_RUN_MAX_REMOVERS);
        goto done;
    }
    r->pixels = n;
    /* the number where fresh: kept elsewhere (where not fresh) */
    if (ops->mask_logic (st->fresh, NULL, QC_LOGIC_NOT, st->fresh)
        || ops->fimg_where (st->fresh, st->removed, (double) st->nremovers, st->removed))
        rc = give_up (run, st, "cannot note the pixels step %s took", r->step);
    free (st->removed_by);      /* read again from the record */
    st->removed_by = NULL;
done:
    st->step_mask[0] = '\0';    /* the next step's saves are its own */
    return rc;
}

const uint8_t *
qc_run_removals (qc_run_t *run, const qc_run_remover_t **removers,
                 size_t *n, int *w, int *h)
{
    struct qc_run_state *st = run ? run->state : NULL;
    int on = st && st->recording && st->removed;
    /* one copy to the host, when the record is read (the save step) */
    if (on && !st->removed_by) {
        const float *f = qc_fimg_host (st->removed);
        size_t npix = qc_npix (st->removed_w, st->removed_h);
        if (f && (st->removed_by = malloc (npix)))
            for (size_t i = 0; i < npix; i++)
                st->removed_by[i] = (uint8_t) (f[i] > 0.5f ? (int) (f[i] + 0.5f) : 0);
        on = st->removed_by != NULL;
    }
    if (removers)
        *removers = on ? st->removers : NULL;
    if (n)
        *n = on ? st->nremovers : 0;
    if (w)
        *w = on ? st->removed_w : 0;
    if (h)
        *h = on ? st->removed_h : 0;
    return on ? st->removed_by : NULL;
}

int
qc_run_removals_given_up (const qc_run_t *run)
{
    return run && run->state && run->state->record_gave_up;
}
