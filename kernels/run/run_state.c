/* The run's state: made on first use, freed at the end of the slide;
 * the steps done so far and the backend the run uses. See run.h and
 * run_state.h. */
#include "kernels/run/run_state.h"

#include <stdlib.h>
#include <string.h>

struct qc_run_state *
run_state_of (qc_run_t *run)
{
    if (!run)
        return NULL;
    if (!run->state) {
        run->state = calloc (1, sizeof *run->state);
        if (!run->state)
            qc_run_fail (run, "out of memory for the run state");
    }
    return run->state;
}

const qc_ops_t *
qc_run_ops (const qc_run_t *run)
{
    return run && run->ops ? run->ops : qc_ops_cpu ();
}

/* The module name without ":instance". */
static size_t
module_len (const char *module)
{
    const char *c = strchr (module, ':');
    return c ? (size_t) (c - module) : strlen (module);
}

int
qc_run_mark_completed (qc_run_t *run, const char *module)
{
    if (!run || !module || !*module)
        return -1;
    struct qc_run_state *st = run_state_of (run);
    if (!st)
        return -1;
    size_t n = module_len (module);
    for (size_t i = 0; i < st->ncompleted; i++)
        if (strlen (st->completed[i]) == n
            && memcmp (st->completed[i], module, n) == 0)
            return 0;
    if (st->ncompleted >= MAX_COMPLETED)
        return qc_run_fail (run, "more than %d completed steps", MAX_COMPLETED);
    char *copy = strndup (module, n);
    if (!copy)
        return qc_run_fail (run, "out of memory");
    st->completed[st->ncompleted++] = copy;
    return 0;
}

int
qc_run_has_completed (const qc_run_t *run, const char *module)
{
    if (!run || !run->state || !module)
        return 0;
    size_t n = module_len (module);
    for (size_t i = 0; i < run->state->ncompleted; i++)
        if (strlen (run->state->completed[i]) == n
            && memcmp (run->state->completed[i], module, n) == 0)
            return 1;
    return 0;
}

static void
ahead_free (ahead_t *a)
{
    if (a->free_fn && a->data)
        a->free_fn (a->data);
    free (a->step);
    *a = (ahead_t) { 0 };
}

int
qc_run_keep_ahead (qc_run_t *run, void *data, void (*free_fn) (void *))
{
    ahead_t given = { .data = data, .free_fn = free_fn };
    if (!run || !run->step || !data || !free_fn) {
        ahead_free (&given);
        return -1;
    }
    /* no run_state_of: a state that cannot be made fails the run, and
     * work done ahead must report nothing */
    struct qc_run_state *st = run->state;
    ahead_t *slot = NULL;
    for (size_t i = 0; st && i < st->nahead && !slot; i++)
        if (strcmp (st->ahead[i].step, run->step) == 0)
            slot = &st->ahead[i];
    if (!st || (!slot && st->nahead >= MAX_AHEAD)
        || !(given.step = strdup (run->step))) {
        ahead_free (&given);
        return -1;
    }
    if (slot)
        ahead_free (slot);
    else
        slot = &st->ahead[st->nahead++];
    *slot = given;
    return 0;
}

void *
qc_run_ahead (const qc_run_t *run)
{
    if (!run || !run->state || !run->step)
        return NULL;
    for (size_t i = 0; i < run->state->nahead; i++)
        if (strcmp (run->state->ahead[i].step, run->step) == 0)
            return run->state->ahead[i].data;
    return NULL;
}

void
qc_run_state_free (qc_run_t *run)
{
    if (!run || !run->state)
        return;
    struct qc_run_state *st = run->state;
    for (size_t i = 0; i < st->nimages; i++) {
        qc_rgb_destroy (&st->images[i].rgb);
        qc_fimg_destroy (&st->images[i].gray);
        free (st->images[i].warning);
    }
    qc_mask_destroy (&st->mask_use);
    for (size_t i = 0; i < st->nkept; i++)
        qc_mask_destroy (&st->kept[i].mask);
    for (size_t i = 0; i < st->ncompleted; i++)
        free (st->completed[i]);
    for (size_t i = 0; i < st->nahead; i++)
        ahead_free (&st->ahead[i]);
    qc_mask_destroy (&st->small);
    qc_mask_destroy (&st->fresh);
    qc_fimg_destroy (&st->removed);
    free (st->removed_by);
    free (st);
    run->state = NULL;
}

void
qc_run_reserve (qc_run_t *run, int64_t bytes)
{
    if (run && run->reserve && bytes)
        run->reserve (run->reserve_arg, bytes);
}
