/* The focus step's share of bench_pipeline (issue 17): its own time and
 * what it read (qc_focus_last_stats after each timed run), the default
 * pipeline without it (the same config, its step left out), and each
 * one's peak memory in a process of its own. Header-only, for
 * bench_pipeline.c. */
#ifndef QC_BENCH_FOCUS_H
#define QC_BENCH_FOCUS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/classify/classify_cache.h"
#include "kernels/modules/focus_algo.h"
#include "kernels/pipeline/pipeline.h"

#define BF_STEP "    BlurDetectionModule.identifyFocusFaults\n"

/* The default config with the focus step left out of [pipeline] (its
 * section stays, unused): the pipeline of before issue 17 less its
 * 1.25x blur step. A new string, or NULL. */
static char *
bf_config_without_focus (void)
{
    const char *text = qc_pipeline_default_config ();
    const char *at = strstr (text, BF_STEP);
    if (!at)
        return NULL;
    size_t head = (size_t) (at - text), len = strlen (text);
    char *out = malloc (len + 1);
    if (!out)
        return NULL;
    memcpy (out, text, head);
    memcpy (out + head, at + strlen (BF_STEP), len - head - strlen (BF_STEP) + 1);
    return out;
}

/* The best focus step of the timed runs, and what it read. */
typedef struct {
    double best;              /* s; 1e9 before a run */
    qc_focus_stats_t st;      /* of that run */
} bf_focus_t;

static void
bf_note (bf_focus_t *f)
{
    const qc_focus_stats_t *st = qc_focus_last_stats ();
    if (st->level >= 0 && st->seconds < f->best) {
        f->best = st->seconds;
        f->st = *st;
    }
}

static void
bf_print (const bf_focus_t *f)
{
    if (f->best >= 1e9) {
        printf ("  focus step: did not run\n");
        return;
    }
    const qc_focus_stats_t *s = &f->st;
    printf ("  focus step (BlurDetectionModule.identifyFocusFaults), best run:"
            " %.3f s, of which reading and measuring tiles %.3f s\n",
            f->best, s->read_seconds);
    printf ("    level %d (%.3gx, DCT band %d), %ld of %ld tiles, %s: "
            "%.2f MB of JPEG decoded to coefficients, %.1f Mpx decoded to "
            "pixels, %.1f M blocks\n", s->level, s->level_mag, s->band,
            s->tiles, s->tiles_level, s->way, s->read.coded_bytes / 1e6,
            s->read.pixels / 1e6, s->read.blocks / 1e6);
}

/* Peak resident memory (MB) of a process that builds a pipeline from
 * config (NULL: the default) and runs it on path twice (the first run
 * trains the classifiers, as a worker's first slide does); -1 when it
 * could not run. */
static double
bf_peak_mb (const char *path, const char *config)
{
    fflush (stdout);
    pid_t pid = fork ();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        char err[512];
        qc_pipeline_t *p = qc_pipeline_new (config, err, sizeof err);
        qc_result_t *r = qc_result_new ();
        if (!p || !r)
            _exit (2);
        qc_pipeline_set_read_threads (p, 1);
        int ok = qc_pipeline_run (p, path, r) == 0;
        qc_result_reset (r);
        qc_classifier_forget_planes ();
        ok = ok && qc_pipeline_run (p, path, r) == 0;
        _exit (ok ? 0 : 1);
    }
    int status = 0;
    struct rusage ru;
    if (wait4 (pid, &status, 0, &ru) != pid || !WIFEXITED (status)
        || WEXITSTATUS (status) != 0)
        return -1;
    return ru.ru_maxrss / 1024.0;
}

#endif
