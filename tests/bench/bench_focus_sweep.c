/* The accuracy sweep behind issue 17's figures (reports, asserts
 * nothing): the default pipeline on generated 40x slides of several
 * sizes and seeds, with the generator's focus faults (1-3 um, drawn from
 * the seed, or fixed at 1 and 3 um) and its coarse blur (15 um), scored
 * as tests/unit/test_accuracy.c scores its ten (tissue, pen, fine and
 * coarse blur Dice: tests/unit/accuracy_fixtures.h); then the real
 * slides' flagged share. A row per slide and the range of each column.
 *
 *     build/bench/bench_focus_sweep [--data DIR] [--quick]
 *
 * Slides are made by bin/qc-mkslide into DIR (default
 * build/bench-data/focus) and reused. Run from the repository root. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/pipeline/pipeline.h"
#include "shared/log.h"
#include "tests/bench/bench_slides.h"
#include "tests/unit/accuracy_fixtures.h"

typedef struct {
    int w, h, seed;
    const char *focus_sigma;  /* level-0 px; NULL: drawn from the seed */
    const char *pale;         /* pale tissue's stain factor (qc-mkslide
                                 --pale-factor), or NULL: none */
} sweep_slide_t;

/* Makes dir/name.svs and its truth unless they are there. */
static int
ensure_truth_slide (const char *dir, const char *name, const sweep_slide_t *s)
{
    char path[1024];
    snprintf (path, sizeof path, "%s/%s_truth_focus.png", dir, name);
    struct stat st;
    if (stat (path, &st) == 0)
        return 0;
    char cmd[2048];
    snprintf (cmd, sizeof cmd, "bin/qc-mkslide -o '%s/%s.svs' --width %d "
              "--height %d --seed %d --blur-sigma 60 --truth '%s' "
              "--truth-width 1024%s%s%s%s", dir, name, s->w, s->h, s->seed, dir,
              s->focus_sigma ? " --focus-sigma " : "",
              s->focus_sigma ? s->focus_sigma : "",
              s->pale ? " --features all,pale --pale-factor " : "",
              s->pale ? s->pale : "");
    return run (cmd);
}

typedef struct {
    double lo, hi;
} range_t;

static void
widen (range_t *r, double v)
{
    if (v < r->lo)
        r->lo = v;
    if (v > r->hi)
        r->hi = v;
}

int
main (int argc, char **argv)
{
    const char *dir = "build/bench-data/focus";
    int quick = 0;
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'}, {"quick", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'q': quick = 1; break;
        case 'h':
            printf ("Usage: bench_focus_sweep [--data DIR] [--quick]\n"
                    "  the default pipeline's Dice on generated slides with "
                    "focus faults\n  and coarse blur, and the real slides' "
                    "flagged share\n");
            return 0;
        default: return 2;
        }
    }
    qc_log_set_stderr_level (QC_LOG_ERROR);
    static const sweep_slide_t full[] = {
        { 16000, 12000, 1, NULL, NULL }, { 16000, 12000, 2, NULL, NULL },
        { 16000, 12000, 3, NULL, NULL }, { 16000, 12000, 4, NULL, NULL },
        { 16000, 12000, 5, NULL, NULL }, { 16000, 12000, 6, NULL, NULL },
        { 16000, 12000, 7, NULL, NULL }, { 16000, 12000, 8, NULL, NULL },
        { 12000, 9000, 9, NULL, NULL }, { 12000, 9000, 10, NULL, NULL },
        { 12000, 9000, 11, NULL, NULL }, { 12000, 9000, 12, NULL, NULL },
        { 12000, 9000, 13, NULL, NULL }, { 12000, 9000, 14, NULL, NULL },
        { 24000, 18000, 15, NULL, NULL }, { 24000, 18000, 16, NULL, NULL },
        { 24000, 18000, 17, NULL, NULL }, { 24000, 18000, 18, NULL, NULL },
        { 16000, 12000, 21, "4", NULL }, { 16000, 12000, 22, "4", NULL },
        { 12000, 9000, 23, "4", NULL }, { 24000, 18000, 24, "4", NULL },
        { 16000, 12000, 25, "12", NULL }, { 16000, 12000, 26, "12", NULL },
        { 12000, 9000, 27, "12", NULL }, { 24000, 18000, 28, "12", NULL },
        /* weakly stained tissue in focus beside 1 um faults */
        { 16000, 12000, 31, "4", "0.33" }, { 16000, 12000, 32, "4", "0.5" },
        { 12000, 9000, 33, "4", "0.33" }, { 12000, 9000, 34, "4", "0.5" },
        { 16000, 12000, 35, NULL, "0.4" }, { 24000, 18000, 36, NULL, "0.4" },
    };
    static const sweep_slide_t few[] = {
        { 12000, 9000, 1, NULL, NULL }, { 12000, 9000, 21, "4", NULL },
        { 12000, 9000, 25, "12", NULL }, { 12000, 9000, 33, "4", "0.33" },
    };
    const sweep_slide_t *list = quick ? few : full;
    size_t n = quick ? sizeof few / sizeof *few : sizeof full / sizeof *full;
    if (mkdir (dir, 0777) && access (dir, W_OK)) {
        fprintf (stderr, "cannot use %s\n", dir);
        return 1;
    }
    char err[512];
    qc_pipeline_t *p = qc_pipeline_new (NULL, err, sizeof err);
    qc_result_t *r = qc_result_new ();
    if (!p || !r) {
        fprintf (stderr, "default config: %s\n", err);
        return 1;
    }
    qc_pipeline_set_read_threads (p, 1);
    range_t tissue = { 2, -1 }, pen = { 2, -1 }, fine = { 2, -1 },
            coarse = { 2, -1 }, pale = { 2, -1 };
    int failed = 0;
    printf ("%-26s %-11s %6s %8s %8s %8s %8s %8s %s\n", "slide", "size",
            "sigma", "tissue", "pen", "fine", "coarse", "pale", "truth px fine/coarse/pale");
    for (size_t k = 0; k < n; k++) {
        const sweep_slide_t *s = &list[k];
        char name[64], path[1024];
        snprintf (name, sizeof name, "sweep-%dx%d-%d%s%s%s%s", s->w, s->h, s->seed,
                  s->focus_sigma ? "-f" : "", s->focus_sigma ? s->focus_sigma : "",
                  s->pale ? "-p" : "", s->pale ? s->pale : "");
        snprintf (path, sizeof path, "%s/%s.svs", dir, name);
        fx_scores_t sc;
        qc_result_reset (r);
        if (ensure_truth_slide (dir, name, s) != 0
            || qc_pipeline_run (p, path, r) != 0
            || fx_score_default (r, dir, name, &sc, err, sizeof err) != 0) {
            printf ("%-22s FAILED: %s\n", name, r->error ? r->error : err);
            failed++;
            continue;
        }
        char size[32];
        snprintf (size, sizeof size, "%dx%d", s->w, s->h);
        char pale_share[16] = "-";
        if (sc.pale >= 0)
            snprintf (pale_share, sizeof pale_share, "%.4f", sc.pale);
        printf ("%-26s %-11s %6s %8.4f %8.4f %8.4f %8.4f %8s %zu/%zu/%zu\n", name, size,
                s->focus_sigma ? s->focus_sigma : "drawn", sc.tissue, sc.pen,
                sc.fine, sc.coarse, pale_share, sc.n_fine, sc.n_coarse, sc.n_pale);
        if (sc.pale >= 0)
            widen (&pale, sc.pale);
        widen (&tissue, sc.tissue);
        widen (&pen, sc.pen);
        widen (&fine, sc.fine);
        widen (&coarse, sc.coarse);
    }
    printf ("ranges over %zu slides: tissue %.4f-%.4f, pen %.4f-%.4f, fine "
            "blur %.4f-%.4f, coarse blur %.4f-%.4f; pale tissue flagged %.4f-%.4f\n",
            n - (size_t) failed, tissue.lo, tissue.hi, pen.lo, pen.hi, fine.lo,
            fine.hi, coarse.lo, coarse.hi, pale.lo, pale.hi);
    static const char *const real[] = {
        "CMU-1-Small-Region.svs", "CMU-1-Small-Region-pyramid.svs",
        "TCGA-CR-7395-pyramid.svs",
    };
    const char *shared = getenv ("QC_SHARED_DIR");
    for (size_t i = 0; i < sizeof real / sizeof *real; i++) {
        char path[1024];
        snprintf (path, sizeof path, "%s/slides/real/%s",
                  shared && *shared ? shared : "../shared", real[i]);
        qc_result_reset (r);
        if (qc_pipeline_run (p, path, r) != 0)
            printf ("%s: FAILED: %s\n", real[i], r->error ? r->error : "?");
        else
            printf ("%s: blurry_removed_percent %s\n", real[i],
                    qc_result_get (r, "blurry_removed_percent"));
    }
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
    return failed ? 1 : 0;
}
