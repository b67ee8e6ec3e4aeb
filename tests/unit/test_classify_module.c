/* ClassificationModule.byExampleWithFeatures through the pipeline: config
 * checks (bad features, examples and values are refused before any
 * slide), the built-in examples, pen and coverslip-edge Dice against the
 * truth of generated slides (bin/qc-mkslide --truth), nothing flagged on
 * the real slides (they carry no pen), HistoQC's outputs (the name=
 * column, <slide>_<name>.png), the model trained once per process, and
 * the same numbers on a second run. Dice values are printed per slide. */
#include <math.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernels/classify/classify_cache.h"
#include "kernels/classify/classify_examples.h"
#include "kernels/ops/ops.h"
#include "kernels/png/png_io.h"
#include "tests/unit/pipeline_fixtures.h"
#include "tests/unit/slide_fixtures.h"


#define PEN_SECTION                                                        \
    "[ClassificationModule.byExampleWithFeatures:pen_markings]\n"          \
    "name: pen_markings\n"                                                 \
    "threshold: .5\n"                                                      \
    "examples: builtin/pen_markings_1.png:builtin/pen_markings_1_mask.png\n" \
    "  builtin/pen_markings_2.png:builtin/pen_markings_2_mask.png\n"       \
    "  builtin/pen_markings_3.png:builtin/pen_markings_3_mask.png\n"       \
    "  builtin/pen_markings_4.png:builtin/pen_markings_4_mask.png\n"       \
    "area_threshold: 100\n"                                                \
    "features:  frangi\n"                                                  \
    "           laplace\n"                                                 \
    "           rgb\n"                                                     \
    "           #lbp\n"                                                    \
    "frangi_scale_range: (1,10)\n"                                         \
    "frangi_scale_step: 2\n"                                               \
    "frangi_beta1: .5\n"                                                   \
    "frangi_beta2: 15\n"                                                   \
    "frangi_black_ridges: True\n"

#define EDGE_SECTION                                                       \
    "[ClassificationModule.byExampleWithFeatures:coverslip_edge]\n"        \
    "name: coverslip_edge\n"                                               \
    "threshold: .5\n"                                                      \
    "examples: builtin/coverslip_edge_1.png:builtin/coverslip_edge_1_mask.png\n" \
    "  builtin/coverslip_edge_2.png:builtin/coverslip_edge_2_mask.png\n"   \
    "  builtin/coverslip_edge_3.png:builtin/coverslip_edge_3_mask.png\n"   \
    "area_threshold: 15\n"                                                 \
    "features:  frangi\n"                                                  \
    "           laplace\n"                                                 \
    "           rgb\n"                                                     \
    "dilate_kernel_size: 5\n"

static const char config[] =
    "[pipeline]\n"
    "steps= ClassificationModule.byExampleWithFeatures:pen_markings\n"
    "    ClassificationModule.byExampleWithFeatures:coverslip_edge\n"
    "[BaseImage.BaseImage]\n"
    "image_work_size = 1.25x\n"
    PEN_SECTION EDGE_SECTION;

static double
seconds (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static qc_rgb_t *
decode (const qc_result_t *r, const char *suffix)
{
    const qc_file_t *f = qc_result_file (r, suffix);
    return f ? qc_png_decode_rgb (f->data, f->size, err, sizeof err) : NULL;
}

/* ---- config checks --------------------------------------------------- */

static void
refused (const char *section_body, const char *why)
{
    char text[4096];
    snprintf (text, sizeof text,
              "[pipeline]\nsteps= ClassificationModule.byExampleWithFeatures:x\n"
              "[ClassificationModule.byExampleWithFeatures:x]\n%s", section_body);
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p == NULL && strstr (err, why), "want '%s', got '%s'", why,
           p ? "accepted" : err);
    qc_pipeline_destroy (&p);
}

static void
test_config (void)
{
    qc_pipeline_t *p = qc_pipeline_new (config, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    /* the columns are the steps' name= values */
    int pen = 0, edge = 0;
    for (size_t i = 0; p && i < qc_pipeline_ncolumns (p); i++) {
        pen |= strcmp (qc_pipeline_column (p, i), "pen_markings") == 0;
        edge |= strcmp (qc_pipeline_column (p, i), "coverslip_edge") == 0;
    }
    CHECK (pen && edge);
    qc_pipeline_destroy (&p);

    const char *ex = "examples: builtin/pen_markings_1.png:builtin/pen_markings_1_mask.png\n";
    char body[1024];
    refused ("features: rgb\n", "examples");
    snprintf (body, sizeof body, "%s", ex);
    refused (body, "features");
    snprintf (body, sizeof body, "%sfeatures: rgb\n sobel\n", ex);
    refused (body, "sobel");
    refused ("features: rgb\nexamples: /nonexistent/a.png:/nonexistent/a_mask.png\n",
             "/nonexistent/a.png");
    refused ("features: rgb\nexamples: builtin/nope.png:builtin/pen_markings_1_mask.png\n",
             "builtin/nope.png");
    refused ("features: rgb\nexamples: only_one_path.png\n", "only_one_path.png");
    snprintf (body, sizeof body, "%sfeatures: rgb\nnsamples_per_example: 0\n", ex);
    refused (body, "nsamples_per_example");
    snprintf (body, sizeof body, "%sfeatures: rgb\ntree_depth: 40\n", ex);
    refused (body, "tree_depth");
    snprintf (body, sizeof body, "%sfeatures: rgb\nthreshold: high\n", ex);
    refused (body, "threshold");
    snprintf (body, sizeof body, "%sfeatures: rgb\nthreshold: .5\ngrow_threshold: .7\n", ex);
    refused (body, "grow_threshold (line 7): above 0 and at most threshold (0.5)");
    snprintf (body, sizeof body, "%sfeatures: rgb\nthreshold: .5\ngrow_threshold: 0\n", ex);
    refused (body, "grow_threshold (line 7): above 0 and at most threshold (0.5); leave it "
             "out for none");
    snprintf (body, sizeof body, "%sfeatures: rgb\nmask_statistics: most\n", ex);
    refused (body, "mask_statistics");
    snprintf (body, sizeof body, "%sfeatures: rgb\nname: a/b\n", ex);
    refused (body, "name");
    snprintf (body, sizeof body, "%sfeatures: rgb\nfrangi_beta2: 0\n", ex);
    refused (body, "frangi_beta2");
    snprintf (body, sizeof body, "%sfeatures: rgb\nunknown_key: 1\n", ex);
    refused (body, "unknown_key");

    /* examples= splitting as HistoQC's regular expression */
    char a[64], b[64];
    CHECK (qc_example_split ("x.png:y.png", 11, a, b, 64) == 0
           && !strcmp (a, "x.png") && !strcmp (b, "y.png"));
    const char *win = "C:\\ex\\x.png:D:\\ex\\y.png";
    CHECK (qc_example_split (win, strlen (win), a, b, 64) == 0
           && !strcmp (a, "C:\\ex\\x.png") && !strcmp (b, "D:\\ex\\y.png"), "%s | %s", a, b);
    CHECK (qc_example_split (" a.png : b.png ", 15, a, b, 64) == 0 && !strcmp (b, "b.png"));
    CHECK (qc_example_split ("a.png", 5, a, b, 64) == -1);
    CHECK (qc_example_split ("a.png:b.png:c.png", 17, a, b, 64) == -1);
    CHECK (qc_example_split ("a.png:", 6, a, b, 64) == -1);

    /* every built-in example decodes, image and mask of one size, and
     * both classes present in every mask */
    CHECK (qc_example_nfiles >= 14, "%zu built-in files", qc_example_nfiles);
    for (size_t i = 0; i < qc_example_nfiles; i++) {
        const char *name = qc_example_files[i].name;
        if (strstr (name, "_mask.png"))
            continue;
        char mname[256];
        snprintf (mname, sizeof mname, "%.*s_mask.png", (int) (strlen (name) - 4), name);
        qc_rgb_t *img = qc_example_read_rgb (name, err, sizeof err);
        qc_mask_t *m = qc_example_read_mask (mname, err, sizeof err);
        size_t n = 0;
        if (m)
            qc_ops_cpu ()->mask_count (m, &n);
        CHECK (img && m && img->w == m->w && img->h == m->h && n > 100
               && n < qc_npix (m->w, m->h) / 2, "%s", name);
        qc_rgb_destroy (&img);
        qc_mask_destroy (&m);
    }
}

/* ---- generated slides -------------------------------------------------- */

static int
mkslide (const char *dir, const char *name, int seed)
{
    char out[1024], sd[16];
    snprintf (out, sizeof out, "%s/%s", dir, name);
    snprintf (sd, sizeof sd, "%d", seed);
    /* 20x, 16000 x 12000: a 1000 x 750 working image at 1.25x, as a
     * 32000 x 24000 40x slide gives */
    char *argv[] = {FX_MKSLIDE, "-o", out, "--width", "16000", "--height", "12000",
                    "--mag", "20", "--seed", sd, "--features", "tissue,pen,edge",
                    "--truth", (char *) dir, "--truth-width", "1000", "--threads", "2",
                    NULL};
    return fx_mkslide (argv);
}

static void
test_generated (void)
{
    if (access (FX_MKSLIDE, X_OK) != 0) {
        CHECK (0, "%s not built (make bin/qc-mkslide)", FX_MKSLIDE);
        return;
    }
    qc_pipeline_t *p = qc_pipeline_new (config, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    char dir[] = "/tmp/qc-classify-XXXXXX";
    if (!p || !mkdtemp (dir))
        return;
    qc_result_t *r = qc_result_new (), *r2 = qc_result_new ();
    static const int seeds[] = { 11, 5, 8 };
    double pen_sum = 0;
    for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
        char name[32], path[1024], tp[1024];
        snprintf (name, sizeof name, "gen%d.svs", seeds[k]);
        CHECK (mkslide (dir, name, seeds[k]) == 0, "qc-mkslide seed %d", seeds[k]);
        snprintf (path, sizeof path, "%s/%s", dir, name);
        double t0 = seconds ();
        CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
        double t = seconds () - t0;
        qc_rgb_t *pen = decode (r, "_pen_markings.png");
        qc_rgb_t *edge = decode (r, "_coverslip_edge.png");
        CHECK (pen && edge, "seed %d: no _pen_markings.png / _coverslip_edge.png", seeds[k]);
        if (pen && edge) {
            snprintf (tp, sizeof tp, "%s/gen%d_truth_pen.png", dir, seeds[k]);
            qc_mask_t *tpen = fx_truth_at (tp, pen->w, pen->h);
            snprintf (tp, sizeof tp, "%s/gen%d_truth_edge.png", dir, seeds[k]);
            qc_mask_t *tedge = fx_truth_at (tp, edge->w, edge->h);
            CHECK (tpen && tedge);
            if (tpen && tedge) {
                double dp = fx_dice_rgb (pen, tpen, NULL), de = fx_dice_rgb (edge, tedge, NULL);
                pen_sum += dp;
                printf ("  gen%d (%dx%d): pen Dice %.3f, coverslip_edge Dice %.3f "
                        "(dilated by 5 as HistoQC), pen_markings %s, "
                        "coverslip_edge %s, %.2f s\n", seeds[k], pen->w, pen->h,
                        dp, de, get (r, "pen_markings"), get (r, "coverslip_edge"), t);
                CHECK (dp >= 0.8, "seed %d: pen Dice %.3f", seeds[k], dp);
                CHECK (de >= 0.3, "seed %d: coverslip Dice %.3f", seeds[k], de);
            }
            qc_mask_destroy (&tpen);
            qc_mask_destroy (&tedge);
        }
        /* the column is 1 - tissue after / tissue before, in (0, 1) */
        double frac = atof (get (r, "pen_markings"));
        CHECK (frac > 0 && frac < 0.2, "pen_markings = %s", get (r, "pen_markings"));
        /* deterministic: the same slide gives the same numbers and images */
        if (k == 0) {
            CHECK (qc_pipeline_run (p, path, r2) == 0);
            CHECK (!strcmp (get (r, "pen_markings"), get (r2, "pen_markings"))
                   && !strcmp (get (r, "coverslip_edge"), get (r2, "coverslip_edge")));
            const qc_file_t *f1 = qc_result_file (r, "_pen_markings.png");
            const qc_file_t *f2 = qc_result_file (r2, "_pen_markings.png");
            CHECK (f1 && f2 && f1->size == f2->size && !memcmp (f1->data, f2->data, f1->size));
        }
        qc_rgb_destroy (&pen);
        qc_rgb_destroy (&edge);
        unlink (path);
        static const char *masks[] = { "tissue", "pen", "blur", "dark", "bubble",
                                       "edge", "focus", "pale", "usable" };
        for (size_t i = 0; i < sizeof masks / sizeof *masks; i++) {
            snprintf (tp, sizeof tp, "%s/gen%d_truth_%s.png", dir, seeds[k], masks[i]);
            unlink (tp);
        }
        snprintf (tp, sizeof tp, "%s/gen%d_truth.json", dir, seeds[k]);
        unlink (tp);
    }
    printf ("  mean pen Dice %.3f\n", pen_sum / 3);
    rmdir (dir);
    qc_result_destroy (&r);
    qc_result_destroy (&r2);
    qc_pipeline_destroy (&p);
}

/* ---- grow_threshold: ink followed over dense tissue ------------------ */

/* The pen step of the default config (threshold .6), with grow_line. */
static qc_pipeline_t *
pen_at (const char *grow_line)
{
    char text[4096];
    snprintf (text, sizeof text,
              "[pipeline]\nsteps= ClassificationModule.byExampleWithFeatures:pen_markings\n"
              "[BaseImage.BaseImage]\nimage_work_size = 1.25x\n%s%s", PEN_SECTION, grow_line);
    char *at = strstr (text, "threshold: .5\n");
    if (at)
        at[strlen ("threshold: .")] = '6';
    qc_pipeline_t *p = at ? qc_pipeline_new (text, err, sizeof err) : NULL;
    CHECK (p != NULL, "%s", err);
    return p;
}

/* Of the truth's ink over tissue, and of all that was found, the shares
 * that are ink; -1 without the files. */
static int
ink_found (const qc_result_t *r, const char *dir, const char *name, double *on_tissue,
           double *precision)
{
    char tp[1024];
    qc_rgb_t *pen = decode (r, "_pen_markings.png");
    snprintf (tp, sizeof tp, "%s/%s_truth_pen.png", dir, name);
    qc_mask_t *tpen = pen ? fx_truth_at (tp, pen->w, pen->h) : NULL;
    snprintf (tp, sizeof tp, "%s/%s_truth_tissue.png", dir, name);
    qc_mask_t *tis = pen ? fx_truth_at (tp, pen->w, pen->h) : NULL;
    size_t ink = 0, ink_found = 0, found = 0, right = 0;
    for (size_t i = 0; tpen && tis && i < qc_npix (pen->w, pen->h); i++) {
        bool f = pen->px[3 * i] > 127;
        ink += tpen->px[i] && tis->px[i];
        ink_found += tpen->px[i] && tis->px[i] && f;
        found += f;
        right += f && tpen->px[i];
    }
    int rc = tpen && tis && ink && found ? 0 : -1;
    *on_tissue = ink ? (double) ink_found / (double) ink : 0;
    *precision = found ? (double) right / (double) found : 0;
    qc_rgb_destroy (&pen);
    qc_mask_destroy (&tpen);
    qc_mask_destroy (&tis);
    return rc;
}

/* As HistoQC (img_mask_force): what the pen step found stays out of the
 * final mask, even where a later step put tissue back. Filling every
 * hole of the mask refills the ink the step took out of the tissue;
 * saveFinalMask takes it out again. (Until 2026-12-01 the step did not
 * force its mask, and the ink came back as usable tissue.) */
static void
forced_out (const char *slide, const char *dir)
{
    char text[4096];
    snprintf (text, sizeof text,
              "[pipeline]\nsteps= ClassificationModule.byExampleWithFeatures:pen_markings\n"
              "    MorphologyModule.fillSmallHoles\n    SaveModule.saveFinalMask\n"
              "[BaseImage.BaseImage]\nimage_work_size = 1.25x\n"
              "[MorphologyModule.fillSmallHoles]\nmin_size: 10000000\n"
              "[SaveModule.saveFinalMask]\nuse_mask: False\n%s", PEN_SECTION);
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    qc_result_t *r = qc_result_new ();
    if (!p || !r || qc_pipeline_run (p, slide, r) != 0) {
        CHECK (0, "%s: %s", slide, r && r->error ? r->error : err);
        qc_result_destroy (&r);
        qc_pipeline_destroy (&p);
        return;
    }
    qc_rgb_t *pen = decode (r, "_pen_markings.png"), *use = decode (r, "_mask_use.png");
    size_t ink = 0, ink_kept = 0, tissue = 0;
    for (size_t i = 0; pen && use && i < qc_npix (pen->w, pen->h); i++) {
        ink += pen->px[3 * i] > 127;
        ink_kept += pen->px[3 * i] > 127 && use->px[3 * i] > 127;
        tissue += use->px[3 * i] > 127;
    }
    printf ("  holes filled after the pen step: %zu ink pixels, %zu of them in "
            "_mask_use.png (%zu pixels)\n", ink, ink_kept, tissue);
    CHECK (pen && use && pen->w == use->w && pen->h == use->h, "%s: the two masks", dir);
    CHECK (ink > 100 && ink_kept == 0 && tissue > 0, "%zu of %zu ink pixels left as "
           "usable tissue", ink_kept, ink);
    qc_rgb_destroy (&pen);
    qc_rgb_destroy (&use);
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

/* Red ink over dense tissue, which the classifier is less sure of than
 * of the same stroke on glass (a user's review: 13.5% of it found, 58%
 * left as usable tissue): grow_threshold follows it, and what it adds is
 * ink; on the real slides, which carry none, it finds nothing (specks
 * too small to keep do not grow: a first version took 0.4% of
 * CMU-1-Small-Region-pyramid's tissue for ink). */
static void
test_grow (void)
{
    qc_pipeline_t *plain = pen_at (""), *grown = pen_at ("grow_threshold: .4\n");
    char dir[] = "/tmp/qc-grow-XXXXXX";
    if (!plain || !grown || !mkdtemp (dir)) {
        qc_pipeline_destroy (&plain);
        qc_pipeline_destroy (&grown);
        return;
    }
    char out[1024];
    snprintf (out, sizeof out, "%s/s19.svs", dir);
    char *argv[] = {FX_MKSLIDE, "-o", out, "--width", "16000", "--height", "12000",
                    "--seed", "19", "--features", "all,pale", "--truth", dir,
                    "--truth-width", "2048", "--threads", "2", NULL};
    CHECK (fx_mkslide (argv) == 0, "qc-mkslide seed 19");
    qc_result_t *r = qc_result_new ();
    double t0 = 0, p0 = 0, t1 = 0, p1 = 0;
    CHECK (qc_pipeline_run (plain, out, r) == 0 && ink_found (r, dir, "s19", &t0, &p0) == 0,
           "%s", r->error ? r->error : "the truth");
    CHECK (qc_pipeline_run (grown, out, r) == 0 && ink_found (r, dir, "s19", &t1, &p1) == 0,
           "%s", r->error ? r->error : "the truth");
    printf ("  red ink over dense tissue found: %.3f (precision %.3f); grown from .4: %.3f "
            "(precision %.3f)\n", t0, p0, t1, p1);
    CHECK (t1 >= 1.5 * t0 && t1 > 0.2 && p1 >= 0.98, "grown: %.3f of the ink on tissue "
           "(%.3f before), precision %.3f", t1, t0, p1);
    forced_out (out, dir);
    static const char *real[] = { "CMU-1-Small-Region.svs", "CMU-1-Small-Region-pyramid.svs",
                                  "TCGA-CR-7395-pyramid.svs" };
    for (size_t i = 0; i < sizeof real / sizeof *real; i++) {
        char path[1024];
        slide_path (path, sizeof path, "real", real[i]);
        CHECK (qc_pipeline_run (grown, path, r) == 0 && atof (get (r, "pen_markings")) == 0,
               "%s: pen_markings %s", real[i], get (r, "pen_markings"));
    }
    char cmd[1100];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system (cmd) != 0)
        printf ("  %s left behind\n", dir);
    qc_result_destroy (&r);
    qc_pipeline_destroy (&plain);
    qc_pipeline_destroy (&grown);
}

/* ---- real slides: no pen, nothing (or almost nothing) flagged --------- */

static void
test_real (void)
{
    qc_pipeline_t *p = qc_pipeline_new (config, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    qc_result_t *r = qc_result_new ();
    static const char *slides[] = { "CMU-1-Small-Region.svs", "TCGA-CR-7395-pyramid.svs" };
    for (size_t i = 0; p && i < 2; i++) {
        char path[1024];
        slide_path (path, sizeof path, "real", slides[i]);
        if (access (path, R_OK) != 0) {
            printf ("  %s: not found, skipped\n", path);
            continue;
        }
        CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
        double pen = atof (get (r, "pen_markings")), edge = atof (get (r, "coverslip_edge"));
        printf ("  %s: pen_markings %s, coverslip_edge %s\n", slides[i],
                get (r, "pen_markings"), get (r, "coverslip_edge"));
        CHECK (pen < 0.01 && edge < 0.02, "%s: %g %g", slides[i], pen, edge);
    }
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

/* ---- the cache: one training per process and section ---------------- */

static void
test_cache (void)
{
    qc_config_t *c = qc_config_parse (config, sizeof config - 1, err, sizeof err, NULL);
    CHECK (c != NULL);
    if (!c)
        return;
    const qc_config_section_t *sec =
        qc_config_section (c, "ClassificationModule.byExampleWithFeatures:pen_markings");
    int owned = 1;
    double t0 = seconds ();
    qc_classifier_t *a = qc_classifier_get (sec, qc_ops_cpu (), &owned, err, sizeof err);
    double t1 = seconds ();
    qc_classifier_t *b = qc_classifier_get (sec, qc_ops_cpu (), &owned, err, sizeof err);
    double t2 = seconds ();
    CHECK (a && a == b && owned == 0);
    CHECK (t2 - t1 < 0.01, "cache lookup took %.3f s", t2 - t1);
    qc_classifier_put (b, owned);
    if (a)
        printf ("  pen model: %zu samples (%zu pen), %d trees of depth %d, "
                "%zu bytes, trained in %.2f s (first lookup %.2f s)\n",
                a->nsamples, a->npositive, a->model->ntrees, a->model->depth,
                qc_trees_size (a->model), a->train_seconds, t1 - t0);
    qc_classifier_put (a, owned);
    qc_config_destroy (&c);
}

/* ---- the cache: least recently used out, never one in use ---------- */

static void
test_cache_lru (void)
{
    enum { N = QC_CLASSIFIER_CACHE_MAX + 8 };
    qc_config_t *cfgs[N];
    qc_classifier_t *got[N];
    int owned[N];
    for (int i = 0; i < N; i++) {
        char text[1024];
        /* distinct models (the sample count is part of the key), each
         * quick to train */
        snprintf (text, sizeof text,
                  "[pipeline]\nsteps= ClassificationModule.byExampleWithFeatures:m\n"
                  "[ClassificationModule.byExampleWithFeatures:m]\nname: m\n"
                  "threshold: .5\nexamples: builtin/pen_markings_1.png:"
                  "builtin/pen_markings_1_mask.png\nfeatures: rgb\ntrees: 1\n"
                  "tree_depth: 2\nnsamples_per_example: %d\n", 100 + i);
        cfgs[i] = qc_config_parse (text, strlen (text), err, sizeof err, NULL);
        CHECK (cfgs[i] != NULL, "%s", err);
    }
    const char *name = "ClassificationModule.byExampleWithFeatures:m";
    /* the first stays in use while all the others pass through */
    got[0] = qc_classifier_get (qc_config_section (cfgs[0], name), qc_ops_cpu (), &owned[0],
                                err, sizeof err);
    for (int i = 1; i < N; i++) {
        got[i] = qc_classifier_get (qc_config_section (cfgs[i], name), qc_ops_cpu (),
                                    &owned[i], err, sizeof err);
        CHECK (got[i] != NULL && owned[i] == 0, "model %d: %s", i, err);
        qc_classifier_put (got[i], owned[i]);
        CHECK (qc_classifier_cached () <= QC_CLASSIFIER_CACHE_MAX);
    }
    CHECK (got[0] && got[0]->nsamples > 0, "the model in use survived");
    /* a recent one is still cached: the same model comes back */
    int again;
    qc_classifier_t *last = qc_classifier_get (qc_config_section (cfgs[N - 1], name),
                                               qc_ops_cpu (), &again, err, sizeof err);
    CHECK (last == got[N - 1] && again == 0, "the most recent model was evicted");
    qc_classifier_put (last, again);
    qc_classifier_put (got[0], owned[0]);
    for (int i = 0; i < N; i++)
        qc_config_destroy (&cfgs[i]);
}

int
main (void)
{
    quiet_logs ();
    test_config ();
    test_cache ();
    test_cache_lru ();
    test_generated ();
    test_real ();
    test_grow ();
    return check_done ("classify_module");
}
