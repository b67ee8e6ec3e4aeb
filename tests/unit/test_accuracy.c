/* Accuracy of the project's WHOLE default pipeline (no -c: kernels/
 * default_config.c), the bars of issues 3 and 17:
 *
 *  - generated slides (bin/qc-mkslide --truth; several seeds and sizes,
 *    all features on, focus faults of 1-3 um among them): Dice of the
 *    final _mask_use.png against the truth "usable" (tissue less pen,
 *    blur, focus faults, folds, bubbles and coverslip edge: what the
 *    pipeline should keep) >= 0.95, fold pixels counted (below);
 *    _pen_markings.png against the pen truth >= 0.85; _blurry.png
 *    against the fine blur's truth (focus faults, 1-3 um) and against
 *    the coarse blur's (15 um), each >= 0.9, scored where no earlier
 *    step had to remove the tissue first (pen, edge and fold truth
 *    pixels are left out: those are removed before the blur step runs
 *    and never reach it; so are bubbles, as smooth as blur and either
 *    step's to take), each kind of blur with the other kind's truth left
 *    out. Truth masks are resampled to the mask's size (area average,
 *    then over half). Every Dice is printed per slide (the issue asks to
 *    report them);
 *  - determinism: the same slide twice, with one and with two read
 *    threads, gives the same columns and byte-identical PNG files;
 *  - every file of ../shared/slides/odd ends ok or failed with a reason,
 *    never a crash;
 *  - the real slides (no pen, in focus): pen_markings ~0 and little
 *    blurry tissue on CMU-1 and TCGA-CR-7395.
 *
 * Folds: the generator paints them 2-3x denser than the tissue around,
 * and the truth "usable" leaves them out. HistoQC's default pipeline has
 * no fold detector (its darktissue step removes only near-black pixels,
 * and a gray threshold that would take the folds also takes 11% of
 * CMU-1's tissue, whose epidermis is that dark); the default config
 * runs the project's LightDarkModule.removeFolds, which compares each
 * place's density with the tissue around it. The kept tissue is scored
 * with the folds counted: 0.952-0.987 over seeds 1-16 at 16000 x 12000
 * and 12000 x 9000 (seed 11 at 12000 x 9000, the lowest, is among the
 * slides here).
 *
 * Blur: slides are made with --blur-sigma 60 (15 um at 40x, the coarse
 * blur; the generator's own default on a full-size slide) and carry the
 * generator's focus faults (1-3 um, drawn from the seed; two slides
 * below fix it at the ends of that range, 1 and 3 um). The default
 * config's focus step measures both at 10x.
 * Seed 15 (16000 x 12000) blurs tissue that has almost no detail
 * coarser than a cell: smooth enough that HistoQC's smoothness step,
 * when it ran before the blur step, took most of it as flat (blur Dice
 * 0.37). The default config now runs it after the blur step (0.98);
 * the slide is among those below.
 *
 * Run from the repository root (bin/qc-mkslide, ../shared). */
#include <fcntl.h>
#include <math.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernels/ops/ops.h"
#include "kernels/png/png_io.h"
#include "tests/unit/accuracy_fixtures.h"
#include "tests/unit/pipeline_fixtures.h"


/* The issues' bars: never lower them. */
#define BAR_TISSUE 0.95
#define BAR_PEN 0.85
#define BAR_BLUR 0.9

static double
seconds (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

typedef struct {
    int w, h, seed;
    const char *focus_sigma;  /* level-0 px; NULL: the generator's draw */
} gen_t;

static int
mkslide (const char *dir, const char *name, const gen_t *g)
{
    char out[1024], ws[16], hs[16], sd[16];
    snprintf (out, sizeof out, "%s/%s.svs", dir, name);
    snprintf (ws, sizeof ws, "%d", g->w);
    snprintf (hs, sizeof hs, "%d", g->h);
    snprintf (sd, sizeof sd, "%d", g->seed);
    char *argv[] = {FX_MKSLIDE, "-o", out, "--width", ws, "--height", hs,
                    "--seed", sd, "--blur-sigma", "60", "--truth", (char *) dir,
                    "--truth-width", "1024", "--threads", "2",
                    g->focus_sigma ? "--focus-sigma" : NULL,
                    (char *) g->focus_sigma, NULL};
    return fx_mkslide (argv);
}

/* Same columns, same files, byte for byte. */
static int
same_result (const qc_result_t *a, const qc_result_t *b)
{
    int same = a->ok == b->ok && a->nkv == b->nkv && a->nfiles == b->nfiles;
    for (size_t i = 0; same && i < a->nkv; i++) {
        same = strcmp (a->kv[i].key, b->kv[i].key) == 0
               && strcmp (a->kv[i].value, b->kv[i].value) == 0;
        if (!same)
            fprintf (stderr, "column %s: %s vs %s\n", a->kv[i].key,
                     a->kv[i].value, b->kv[i].value);
    }
    for (size_t i = 0; same && i < a->nfiles; i++) {
        same = strcmp (a->files[i].name, b->files[i].name) == 0
               && a->files[i].size == b->files[i].size
               && memcmp (a->files[i].data, b->files[i].data,
                          a->files[i].size) == 0;
        if (!same)
            fprintf (stderr, "file %s differs\n", a->files[i].name);
    }
    return same;
}

/* Seeds 1-16 were measured while tuning the default config; these
 * cover one to three pen strokes (black, red, green, blue; on glass and
 * across tissue, red over pink tissue in seed 8), large folds (3, 13), a
 * fold the classifier took for ink at HistoQC's threshold (7), bubbles,
 * the coverslip edge, blurred tissue with little coarse detail (15),
 * focus faults of 1.1 to 2.9 um (the generator's draws), one cut by a
 * pen stroke (8), and two more slides whose faults are 1 um (sigma 4 px,
 * the finest a scanner makes, 1 px at 10x) and 3 um. Sizes keep the
 * program under a minute on two cores (build/bench/bench_focus_sweep runs
 * the larger sweep). */
static const gen_t slides[] = {
    { 16000, 12000, 1, NULL }, { 16000, 12000, 3, NULL },
    { 16000, 12000, 13, NULL }, { 16000, 12000, 15, NULL },
    { 12000, 9000, 5, NULL },  { 12000, 9000, 7, NULL },
    { 12000, 9000, 8, NULL },  { 12000, 9000, 11, NULL },
    { 16000, 12000, 21, "4" }, { 12000, 9000, 22, "12" },
};
#define NSLIDES (sizeof slides / sizeof *slides)

static void
score_generated (qc_pipeline_t *p, const char *dir, const gen_t *g,
                 qc_result_t *r)
{
    char name[64], path[1024];
    snprintf (name, sizeof name, "gen%d", g->seed);
    snprintf (path, sizeof path, "%s/%s.svs", dir, name);
    double t0 = seconds ();
    int rc = qc_pipeline_run (p, path, r);
    double t = seconds () - t0;
    CHECK (rc == 0 && r->ok, "%s: %s", name, r->error ? r->error : "");
    fx_scores_t sc;
    if (rc != 0 || fx_score_default (r, dir, name, &sc, err, sizeof err) != 0) {
        CHECK (0, "%s: %s", name, err);
        return;
    }
    printf ("%s (%d x %d, focus sigma %s px, mask %d x %d, %.2f s): tissue "
            "Dice %.4f (mask_use vs usable, folds counted), pen %.4f, fine "
            "blur %.4f (%zu px), coarse blur %.4f (%zu px)\n", name, g->w,
            g->h, g->focus_sigma ? g->focus_sigma : "drawn", sc.w, sc.h, t,
            sc.tissue, sc.pen, sc.fine, sc.n_fine, sc.coarse, sc.n_coarse);
    CHECK (sc.tissue >= BAR_TISSUE, "%s: tissue Dice %.4f", name, sc.tissue);
    CHECK (sc.pen >= BAR_PEN, "%s: pen Dice %.4f", name, sc.pen);
    /* each slide has both kinds of blur, large enough to score */
    CHECK (sc.n_fine > 300 && sc.n_coarse > 300, "%s: %zu fine, %zu coarse "
           "truth pixels", name, sc.n_fine, sc.n_coarse);
    CHECK (sc.fine >= BAR_BLUR, "%s: fine blur Dice %.4f", name, sc.fine);
    CHECK (sc.coarse >= BAR_BLUR, "%s: coarse blur Dice %.4f", name,
           sc.coarse);
}

static void
test_generated (qc_pipeline_t *p)
{
    if (access (FX_MKSLIDE, X_OK) != 0) {
        CHECK (0, "%s not built (make bin/qc-mkslide, from the repository "
               "root)", FX_MKSLIDE);
        return;
    }
    char dir[] = "/tmp/qc-accuracy-XXXXXX";
    if (!mkdtemp (dir)) {
        CHECK (0, "mkdtemp");
        return;
    }
    qc_result_t *r = qc_result_new (), *again = qc_result_new ();
    for (size_t k = 0; k < NSLIDES && r && again; k++) {
        char name[64];
        snprintf (name, sizeof name, "gen%d", slides[k].seed);
        int rc = mkslide (dir, name, &slides[k]);
        CHECK (rc == 0, "qc-mkslide seed %d", slides[k].seed);
        if (rc == 0)
            score_generated (p, dir, &slides[k], r);
        if (k == 0 && rc == 0) {
            /* Determinism: the same slide again, read by two threads. */
            char path[1024];
            snprintf (path, sizeof path, "%s/%s.svs", dir, name);
            qc_pipeline_set_read_threads (p, 2);
            qc_pipeline_run (p, path, again);
            qc_pipeline_set_read_threads (p, 1);
            CHECK (r->nfiles > 10 && same_result (r, again),
                   "%s: a second run differs", name);
        }
    }
    qc_result_destroy (&r);
    qc_result_destroy (&again);
    char cmd[1100];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK (system (cmd) == 0);
}

/* The real slides carry no pen and are in focus: the focus step flags
 * under 1% of their tissue (issue 17's bar). */
static void
test_real (const qc_pipeline_t *p)
{
    static const char *const names[] = {
        "CMU-1-Small-Region.svs", "CMU-1-Small-Region-pyramid.svs",
        "TCGA-CR-7395-pyramid.svs",
    };
    qc_result_t *r = qc_result_new ();
    for (size_t i = 0; r && i < sizeof names / sizeof *names; i++) {
        char path[1024];
        slide_path (path, sizeof path, "real", names[i]);
        CHECK (qc_pipeline_run (p, path, r) == 0, "%s: %s", names[i],
               r->error ? r->error : "");
        double pen = atof (get (r, "pen_markings"));
        double blurry = atof (get (r, "blurry_removed_percent"));
        long use = atol (get (r, "pixels_to_use"));
        double folds = atof (get (r, "folds"));
        printf ("%s: pen_markings %s, coverslip_edge %s, folds %s, "
                "blurry_removed_percent %s, pixels_to_use %s\n", names[i],
                get (r, "pen_markings"), get (r, "coverslip_edge"),
                get (r, "folds"), get (r, "blurry_removed_percent"),
                get (r, "pixels_to_use"));
        /* No known fold on these; CMU-1 has one dense dark region
         * (keratin) the fold step took (1.2%) before its seeds had to
         * be the tissue's colour within 0.01 (now 0%): more would be
         * good tissue lost. */
        CHECK (folds >= 0.0 && folds < 0.02, "%s: folds %f", names[i], folds);
        CHECK (pen < 0.005, "%s: pen_markings %f", names[i], pen);
        CHECK (blurry < 0.01, "%s: blurry %f", names[i], blurry);
        /* CMU-1-Small-Region keeps ~9,000 of its 25,500 pixels at 1.25x,
         * TCGA-CR-7395 ~40,000 of 62,000 (the rest is glass). */
        CHECK (use > 5000, "%s: pixels_to_use %ld", names[i], use);
    }
    /* No magnification: a clear failure. */
    char path[1024];
    slide_path (path, sizeof path, "real", "TCGA-CR-7395-01A-01-TS1.svs");
    CHECK (r && qc_pipeline_run (p, path, r) == -1 && r->error
           && strstr (r->error, "magnification"), "%s",
           r && r->error ? r->error : "passed");
    /* Fluorescence: no tissue found, but no failure either. */
    slide_path (path, sizeof path, "real", "test3-DAPI-2.ndpi");
    CHECK (r && qc_pipeline_run (p, path, r) == 0, "%s",
           r && r->error ? r->error : "");
    qc_result_destroy (&r);
}

static void
test_odd (const qc_pipeline_t *p)
{
    qc_result_t *r = qc_result_new ();
    fx_run_odd_files (p, r);
    qc_result_destroy (&r);
}

int
main (void)
{
    quiet_logs ();
    qc_pipeline_t *p = qc_pipeline_new (NULL, err, sizeof err);
    CHECK (p != NULL, "default config: %s", err);
    if (p) {
        printf ("default pipeline: %s\n", qc_pipeline_description (p));
        test_generated (p);
        test_real (p);
        test_odd (p);
    }
    qc_pipeline_destroy (&p);
    return check_done ("accuracy");
}
