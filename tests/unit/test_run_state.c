/* Tests of the per-slide run state (kernels/run/run.h): working images
 * read once and cached by parsed size, gray cache, img_mask_use, kept
 * masks and their ownership, HistoQC's mask statistics, PNG files in the
 * result, completed steps, clean failures, and freeing (ASan checks that
 * nothing leaks). */
#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kernels/png/png_io.h"
#include "kernels/run/run.h"
#include "kernels/run/run_state.h"
#include "shared/err.h"
#include "shared/result.h"
#include "tests/unit/pipeline_fixtures.h"

/* A run on a real slide with BaseImage already applied, as the pipeline
 * sets it up. */
typedef struct {
    qc_slide_t *slide;
    qc_result_t *out;
    qc_base_params_t base;
    qc_run_t run;
} fixture_t;

static int
fixture_open (fixture_t *f, const char *name)
{
    memset (f, 0, sizeof *f);
    char path[1024];
    slide_path (path, sizeof path, "real", name);
    f->slide = qc_slide_open (path, err, sizeof err);
    f->out = qc_result_new ();
    if (!f->slide || !f->out
        || qc_base_params_parse (NULL, &f->base, err, sizeof err) != 0)
        return -1;
    f->run = (qc_run_t) { .slide = f->slide, .out = f->out,
                          .filename = qc_slide_name (f->slide),
                          .base = &f->base, .step = "test" };
    return qc_module_base_image.run (&f->run);
}

static void
fixture_close (fixture_t *f)
{
    qc_run_state_free (&f->run);
    qc_slide_close (&f->slide);
    qc_result_destroy (&f->out);
}

static void
test_images (void)
{
    fixture_t f;
    CHECK (fixture_open (&f, "CMU-1-Small-Region.svs") == 0, "%s", err);
    qc_run_t *run = &f.run;
    CHECK (run->state == NULL, "state is lazy");
    const qc_rgb_t *a = qc_run_image (run, NULL);
    CHECK (a && a->w == 138 && a->h == 185, "1.25x of 2220x2967 at 20x is "
           "HistoQC's 138 x 185, got %d x %d", a ? a->w : -1, a ? a->h : -1);
    CHECK (qc_run_image (run, "1.25x") == a, "same size, same image");
    CHECK (qc_run_image (run, " 1.25X") == a, "size parsed, not compared as text");
    const qc_rgb_t *b = qc_run_image (run, "2.5x");
    CHECK (b && b != a && b->w == 278 && b->h == 371, "2.5x: %d x %d",
           b ? b->w : -1, b ? b->h : -1);
    CHECK (qc_run_image (run, "2.5x") == b);
    const qc_rgb_t *c = qc_run_image (run, "500");
    CHECK (c && c->h == 500 && c->w == 374, "500 px: %d x %d", c ? c->w : -1,
           c ? c->h : -1);
    /* Tissue is darker than glass: the image is the slide, not zeros. */
    if (a) {
        double sum = 0;
        for (size_t i = 0; i < qc_npix (a->w, a->h) * 3; i++)
            sum += a->px[i];
        double mean = sum / (double) (qc_npix (a->w, a->h) * 3);
        CHECK (mean > 100 && mean < 250, "mean %.1f", mean);
    }
    const qc_fimg_t *g = qc_run_gray (run, NULL);
    CHECK (g && a && g->w == a->w && g->h == a->h);
    CHECK (qc_run_gray (run, "1.25x") == g, "gray cached");
    if (g && a) {
        double want = (0.2125 * a->px[0] + 0.7154 * a->px[1]
                       + 0.0721 * a->px[2]) / 255.0;
        CHECK (fabs (g->px[0] - want) < 1e-4, "rgb2gray %f vs %f", g->px[0], want);
    }
    qc_mask_t *m = qc_run_mask (run);
    CHECK (m && a && m->w == a->w && m->h == a->h);
    CHECK (qc_run_mask (run) == m, "one img_mask_use per run");
    size_t n = 0;
    if (m)
        qc_ops_cpu ()->mask_count (m, &n);
    CHECK (a && n == qc_npix (a->w, a->h), "all tissue at first");
    CHECK (f.out->ok, "%s", f.out->error ? f.out->error : "");

    /* A bad size fails the slide with a reason, and caches nothing. */
    CHECK (qc_run_image (run, "abc") == NULL);
    CHECK (!f.out->ok && f.out->error && strstr (f.out->error, "abc"),
           "%s", f.out->error ? f.out->error : "(no error)");
    fixture_close (&f);
    CHECK (f.run.state == NULL);
    qc_run_state_free (&f.run);     /* twice is harmless */
    qc_run_state_free (NULL);
}

/* enable_bounding_box on a slide without openslide.bounds-*: HistoQC
 * falls back to the whole slide and its thumbnail rule. */
static void
test_bbox_fallback (void)
{
    fixture_t f;
    CHECK (fixture_open (&f, "CMU-1-Small-Region.svs") == 0, "%s", err);
    f.base.enable_bounding_box = 1;
    const qc_rgb_t *a = qc_run_image (&f.run, NULL);
    CHECK (a && a->w == 138 && a->h == 185);
    fixture_close (&f);
}

static int s_errors;

static void
count_errors (const qc_log_record_t *rec, void *arg)
{
    (void) arg;
    s_errors += rec->level >= QC_LOG_ERROR;
}

static void
test_no_mag (void)
{
    /* TCGA-CR-7395-01A-01-TS1.svs has no magnification: 1.25x cannot be
     * read, a size in pixels can. */
    fixture_t f;
    fixture_open (&f, "TCGA-CR-7395-01A-01-TS1.svs");
    CHECK (f.run.base_mag == 0);
    CHECK (qc_run_image (&f.run, "400") != NULL, "%s", f.out->error ? f.out->error : "");
    CHECK (f.out->ok);
    /* a step asks for the image and then for its mask (the pen step
     * does): the failure is logged once, not once per request */
    s_errors = 0;
    qc_log_set_sink (count_errors, NULL, "test");
    CHECK (qc_run_image (&f.run, NULL) == NULL);
    CHECK (!f.out->ok && strstr (f.out->error, "magnification"), "%s",
           f.out->error ? f.out->error : "");
    CHECK (qc_run_mask (&f.run) == NULL);
    qc_log_set_sink (NULL, NULL, NULL);
    CHECK (s_errors == 1, "the failed read was logged %d times", s_errors);
    fixture_close (&f);
}

static void
test_masks_and_stats (void)
{
    fixture_t f;
    CHECK (fixture_open (&f, "CMU-1-Small-Region-pyramid.svs") == 0, "%s", err);
    qc_run_t *run = &f.run;
    qc_mask_t *use = qc_run_mask (run);
    if (!use) {
        fixture_close (&f);
        return;
    }
    qc_mask_t *before = qc_mask_clone (use);
    size_t npix = qc_npix (use->w, use->h);
    for (size_t i = 0; i < npix / 4; i++)
        use->px[i] = 0;
    size_t left = npix - npix / 4;
    double rel = qc_run_mask_fraction (run, use, before);
    CHECK (fabs (rel - (1.0 - (double) left / (double) npix)) < 1e-12, "%f", rel);
    CHECK (qc_run_set_mask_statistics (run, "x_perc", use, before) == 0);
    char want[64];
    CHECK (strcmp (get (f.out, "x_perc"), qc_pyfloat (rel, want, sizeof want)) == 0);
    qc_mask_t *empty = qc_mask_new (use->w, use->h);
    CHECK (qc_run_mask_fraction (run, use, empty) == -100.0, "HistoQC's -100");
    qc_run_set_mask_statistics (run, "y_perc", use, empty);
    CHECK (strcmp (get (f.out, "y_perc"), "-100") == 0, "%s", get (f.out, "y_perc"));
    f.base.mask_statistics = QC_MASK_ABSOLUTE;
    CHECK (qc_run_mask_fraction (run, use, before) == (double) left);
    qc_run_set_mask_statistics (run, "z", use, before);
    char abs_s[32];
    snprintf (abs_s, sizeof abs_s, "%zu", left);
    CHECK (strcmp (get (f.out, "z"), abs_s) == 0);
    f.base.mask_statistics = QC_MASK_RELATIVE2IMAGE;
    CHECK (fabs (qc_run_mask_fraction (run, use, NULL) - (double) left / (double) npix) < 1e-12);
    CHECK (isnan (qc_run_mask_fraction (run, NULL, before)));
    f.base.mask_statistics = QC_MASK_RELATIVE2MASK;
    CHECK (isnan (qc_run_mask_fraction (run, use, NULL)));

    /* Kept masks: ownership passes, a second keep replaces. */
    CHECK (qc_run_kept_mask (run, "pen_markings") == NULL);
    CHECK (qc_run_keep_mask (run, "pen_markings", before) == 0);
    CHECK (qc_run_kept_mask (run, "pen_markings") == before);
    qc_mask_t *again = qc_mask_new (use->w, use->h);
    CHECK (qc_run_keep_mask (run, "pen_markings", again) == 0);
    CHECK (qc_run_kept_mask (run, "pen_markings") == again);
    CHECK (qc_run_keep_mask (run, "blurry", empty) == 0);
    CHECK (qc_run_kept_mask (run, "blurry") == empty);
    CHECK (f.out->ok);
    /* Forced masks (HistoQC's img_mask_force) are cleared again. */
    qc_mask_t *pen = qc_mask_new (use->w, use->h);
    pen->px[npix - 1] = 1;
    CHECK (qc_run_keep_mask (run, "pen", pen) == 0);
    qc_mask_t *m = qc_mask_clone (use);
    CHECK (qc_run_apply_forced (run, m) == 0 && m->px[npix - 1] == 1, "not forced yet");
    CHECK (qc_run_force_mask (run, "pen") == 0);
    CHECK (qc_run_apply_forced (run, m) == 0 && m->px[npix - 1] == 0
           && m->px[npix - 2] == 1);
    qc_mask_destroy (&m);
    CHECK (f.out->ok);
    CHECK (qc_run_force_mask (run, "nothing") == -1 && !f.out->ok);
    CHECK (qc_run_keep_mask (run, NULL, qc_mask_new (2, 2)) == -1, "freed, no leak");
    CHECK (!f.out->ok);
    fixture_close (&f);
}

static void
test_files_and_completed (void)
{
    fixture_t f;
    CHECK (fixture_open (&f, "CMU-1-Small-Region.svs") == 0, "%s", err);
    qc_run_t *run = &f.run;
    const qc_rgb_t *img = qc_run_image (run, NULL);
    qc_mask_t *m = qc_run_mask (run);
    CHECK (img && m);
    if (!img || !m) {
        fixture_close (&f);
        return;
    }
    m->px[0] = 0;
    CHECK (qc_run_save_mask (run, "mask_use", m) == 0);
    CHECK (qc_run_save_rgb (run, "thumb", img) == 0);
    qc_fimg_t *fi = qc_fimg_new (4, 3);
    for (int i = 0; i < 12; i++)
        fi->px[i] = (float) i;
    CHECK (qc_run_save_fimg (run, "ramp", fi, 0.0f, 11.0f) == 0);
    CHECK (qc_run_save_fimg (run, "bad", fi, 1.0f, 1.0f) == -1);
    qc_fimg_destroy (&fi);
    CHECK (f.out->nfiles == 3, "%zu files", f.out->nfiles);
    if (f.out->nfiles >= 3) {
        CHECK (strcmp (f.out->files[0].name, "_mask_use.png") == 0);
        CHECK (strcmp (f.out->files[1].name, "_thumb.png") == 0);
        qc_rgb_t *d = qc_png_decode_rgb (f.out->files[0].data,
                                         f.out->files[0].size, err, sizeof err);
        CHECK (d && d->w == m->w && d->h == m->h && d->px[0] == 0 && d->px[3] == 255);
        qc_rgb_destroy (&d);
        d = qc_png_decode_rgb (f.out->files[1].data, f.out->files[1].size,
                               err, sizeof err);
        CHECK (d && memcmp (d->px, img->px, qc_npix (img->w, img->h) * 3) == 0);
        qc_rgb_destroy (&d);
        d = qc_png_decode_rgb (f.out->files[2].data, f.out->files[2].size,
                               err, sizeof err);
        CHECK (d && d->w == 4 && d->px[0] == 0 && d->px[33] == 255
               && d->px[3] == 23, "%d %d", d ? d->px[3] : -1, d ? d->px[33] : -1);
        qc_rgb_destroy (&d);
    }
    CHECK (!qc_run_has_completed (run, "LightDarkModule.getIntensityThresholdPercent"));
    CHECK (qc_run_mark_completed (run, "LightDarkModule.getIntensityThresholdPercent:tissue") == 0);
    CHECK (qc_run_has_completed (run, "LightDarkModule.getIntensityThresholdPercent"));
    CHECK (qc_run_has_completed (run, "LightDarkModule.getIntensityThresholdPercent:x"));
    CHECK (!qc_run_has_completed (run, "LightDarkModule.getIntensityThreshold"));
    CHECK (qc_run_save_mask (run, "a/b", m) == -1, "no folders in names");
    fixture_close (&f);
}

static int freed;

static void
count_free (void *p)
{
    freed++;
    free (p);
}

/* Work kept ahead (qc_run_keep_ahead): by the step's name as written,
 * replaced and freed once, freed with the state, refused without
 * leaking (ASan) when it cannot be kept. */
static void
test_ahead (void)
{
    fixture_t f;
    CHECK (fixture_open (&f, "CMU-1-Small-Region.svs") == 0, "%s", err);
    qc_run_t *run = &f.run;
    CHECK (qc_run_image_ahead (run) == NULL, "nothing read yet");
    CHECK (qc_run_preread (run) == 0);
    const qc_rgb_t *img = qc_run_image_ahead (run);
    CHECK (img && img == qc_run_image (run, NULL), "the image read ahead");
    freed = 0;
    run->step = "BlurDetectionModule.identifyFocusFaults";
    CHECK (qc_run_ahead (run) == NULL);
    int *a = malloc (sizeof *a), *b = malloc (sizeof *b);
    CHECK (qc_run_keep_ahead (run, a, count_free) == 0);
    CHECK (qc_run_ahead (run) == a);
    run->step = "BlurDetectionModule.identifyFocusFaults:other";
    CHECK (qc_run_ahead (run) == NULL, "another instance has its own");
    CHECK (qc_run_keep_ahead (run, b, count_free) == 0);
    CHECK (qc_run_ahead (run) == b);
    run->step = "BlurDetectionModule.identifyFocusFaults";
    CHECK (qc_run_ahead (run) == a);
    CHECK (qc_run_keep_ahead (run, malloc (4), count_free) == 0 && freed == 1,
           "the one replaced is freed (%d)", freed);
    CHECK (qc_run_ahead (run) != a);
    /* refused: freed at once */
    CHECK (qc_run_keep_ahead (run, NULL, count_free) == -1);
    static int not_heap;
    CHECK (qc_run_keep_ahead (run, &not_heap, NULL) == -1, "no free_fn");
    run->step = NULL;
    CHECK (qc_run_keep_ahead (run, malloc (4), count_free) == -1 && freed == 2);
    char names[MAX_AHEAD + 1][32];
    int kept = 0;
    for (int i = 0; i < MAX_AHEAD + 1; i++) {
        snprintf (names[i], sizeof names[i], "Step.n:%d", i);
        run->step = names[i];
        kept += qc_run_keep_ahead (run, malloc (4), count_free) == 0;
    }
    CHECK (kept == MAX_AHEAD - 2 && freed == 5, "%d kept, %d freed", kept,
           freed);
    fixture_close (&f);
    CHECK (freed == 5 + MAX_AHEAD, "the state frees what it kept: %d", freed);
    CHECK (qc_run_ahead (NULL) == NULL && qc_run_image_ahead (NULL) == NULL);
}

/* NULL everywhere: no crash, -1 / NULL. */
static void
test_bad_args (void)
{
    CHECK (qc_run_image (NULL, NULL) == NULL);
    CHECK (qc_run_gray (NULL, "1.25x") == NULL);
    CHECK (qc_run_mask (NULL) == NULL);
    CHECK (qc_run_kept_mask (NULL, "x") == NULL);
    CHECK (qc_run_save_mask (NULL, "x", NULL) == -1);
    CHECK (qc_run_mark_completed (NULL, "x") == -1);
    CHECK (qc_run_has_completed (NULL, "x") == 0);
    CHECK (qc_run_ops (NULL) != NULL);
    qc_result_t *out = qc_result_new ();
    qc_run_t run = { .out = out, .filename = "none" };
    CHECK (qc_run_image (&run, "1.25x") == NULL, "no slide");
    CHECK (!out->ok);
    qc_run_state_free (&run);
    qc_result_destroy (&out);
}

/* A step that fails while memory ran out (an image's pixels could not be
 * had) fails the slide as this machine's trouble, marked for a rerun; a
 * step that fails with memory to spare is the slide's. */
static void
test_out_of_memory (void)
{
    qc_result_t *out = qc_result_new ();
    qc_run_t run = {.out = out, .filename = "a.svs", .step = "Step.one",
                    .oom_at_start = qc_oom_count ()};
    qc_run_fail (&run, "its mask failed");
    CHECK (out->error && !strstr (out->error, QC_RESULT_RETRY_MARK), "memory to spare: %s",
           out->error ? out->error : "(none)");
    qc_result_destroy (&out);
    /* a step that says memory is what failed (an allocation not noted) */
    out = qc_result_new ();
    run = (qc_run_t) {.out = out, .filename = "a.svs", .step = "Step.one",
                      .oom_at_start = qc_oom_count ()};
    qc_run_fail (&run, "its features failed (out of memory?)");
    CHECK (out->error && strstr (out->error, QC_RESULT_RETRY_MARK), "said by the step: %s",
           out->error ? out->error : "(none)");
    qc_result_destroy (&out);
    out = qc_result_new ();
    run = (qc_run_t) {.out = out, .filename = "a.svs", .step = "Step.one",
                      .oom_at_start = qc_oom_count ()};
#if QC_TEST_ASAN
    qc_oom_note ();           /* ASan needs its address space unlimited */
#else
    /* 1 GB of pixels under a ulimit -v of 64 MB more than is mapped: refused */
    struct rlimit was, tight;
    CHECK (getrlimit (RLIMIT_AS, &was) == 0);
    unsigned long long now = qc_mapped_bytes ();
    CHECK (now > 0);
    tight = was;
    tight.rlim_cur = (rlim_t) (now + (64u << 20));
    CHECK (setrlimit (RLIMIT_AS, &tight) == 0);
    qc_fimg_t *big = qc_fimg_new (16384, 16384);
    setrlimit (RLIMIT_AS, &was);
    CHECK (big == NULL, "1 GB of pixels given under the limit");
    qc_fimg_destroy (&big);
#endif
    CHECK (qc_oom_count () != run.oom_at_start, "the refused allocation was not noted");
    qc_run_fail (&run, "its mask failed (out of memory?)");
    CHECK (out->error && strstr (out->error, "a.svs: Step.one: its mask failed (out of "
                                 "memory?) (memory ran out on this machine, not the slide's "
                                 "fault" QC_RESULT_RETRY_MARK), "%s", out->error ? out->error : "(none)");
    qc_result_destroy (&out);
}

int
main (void)
{
    quiet_logs ();
    test_images ();
    test_bbox_fallback ();
    test_no_mag ();
    test_masks_and_stats ();
    test_files_and_completed ();
    test_ahead ();
    test_bad_args ();
    test_out_of_memory ();    /* last: the count it raises stays raised */
    return check_done ("run_state");
}
