/* Tests of the QC pipeline foundation, building pipelines: the default
 * config, validation of HistoQC-style configs against the module table
 * (unknown modules, steps and parameters, bad values, malformed step
 * lists), the module table and its helpers, and [BaseImage.BaseImage]
 * settings reaching the results. Fixtures: pipeline_fixtures.h. */
#include "tests/unit/pipeline_fixtures.h"

/* ---- building pipelines ---------------------------------------------- */

static qc_pipeline_t *
must_fail (const char *config)
{
    err[0] = '\0';
    qc_pipeline_t *p = qc_pipeline_new (config, err, sizeof err);
    CHECK (p == NULL, "accepted: %s", config);
    CHECK (err[0] != '\0', "no message for: %s", config);
    qc_pipeline_destroy (&p);
    return NULL;
}

static void
test_default_config (void)
{
    qc_pipeline_t *p = qc_pipeline_new (NULL, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (!p)
        return;
    /* HistoQC's default starts with getBasicStats; the default grows as
     * modules land, so only its start and end are fixed here. */
    CHECK (strncmp (qc_pipeline_description (p), "BasicModule.getBasicStats", 25) == 0,
           "%s", qc_pipeline_description (p));
    static const char *const want[] = {
        "filename", "comments", "image_bounding_box", "base_mag", "type",
        "levels", "height", "width", "mpp_x", "mpp_y", "comment"
    };
    size_t n = sizeof want / sizeof *want, nc = qc_pipeline_ncolumns (p);
    CHECK (nc > n, "%zu", nc);
    for (size_t i = 0; i < n; i++)
        CHECK (qc_pipeline_column (p, i)
               && strcmp (qc_pipeline_column (p, i), want[i]) == 0, "column %zu", i);
    CHECK (nc && strcmp (qc_pipeline_column (p, nc - 1), "warnings") == 0);
    CHECK (qc_pipeline_column (p, nc) == NULL);
    /* The default text is itself a valid, self-describing HistoQC config. */
    CHECK (strstr (qc_pipeline_default_config (), "[pipeline]") != NULL);
    CHECK (strstr (qc_pipeline_default_config (), "[BaseImage.BaseImage]") != NULL);
    qc_pipeline_destroy (&p);
    CHECK (p == NULL);
    qc_pipeline_destroy (&p);
    qc_pipeline_destroy (NULL);
    CHECK (qc_pipeline_description (NULL) == NULL && qc_pipeline_ncolumns (NULL) == 0);
    CHECK (qc_pipeline_column (NULL, 0) == NULL);
    /* err may be left out. */
    CHECK (qc_pipeline_new ("not a config", NULL, 0) == NULL);
    /* image_resample: lanczos (HistoQC's images) or area; anything else
     * refused by name */
    static const char *const rs[] = { "lanczos", "area", "bicubic" };
    for (int i = 0; i < 3; i++) {
        char cfg[256];
        snprintf (cfg, sizeof cfg, "[pipeline]\nsteps = BasicModule.getBasicStats\n"
                  "[BaseImage.BaseImage]\nimage_resample = %s\n", rs[i]);
        qc_pipeline_t *q = qc_pipeline_new (cfg, err, sizeof err);
        CHECK (i < 2 ? q != NULL : q == NULL && strstr (err, "image_resample")
               && strstr (err, "bicubic"), "%s: %s", rs[i], err);
        qc_pipeline_destroy (&q);
    }
    /* prefix= becomes part of the header: too long is refused by name, in
     * both steps that take it */
    static const char *const pre[] = { "BrightContrastModule.getContrast",
                                       "LocalTextureEstimationModule.estimateGreyComatrixFeatures" };
    for (int i = 0; i < 2; i++) {
        char cfg[512];
        snprintf (cfg, sizeof cfg, "[pipeline]\nsteps = %s\n[%s]\nprefix = "
                  "%070d\n", pre[i], pre[i], 7);
        qc_pipeline_t *q = qc_pipeline_new (cfg, err, sizeof err);
        CHECK (q == NULL && strstr (err, "prefix") && strstr (err, "at most 64"),
               "%s: %s", pre[i], err);
        qc_pipeline_destroy (&q);
        snprintf (cfg, sizeof cfg, "[pipeline]\nsteps = %s\n[%s]\nprefix = ok\n",
                  pre[i], pre[i]);
        q = qc_pipeline_new (cfg, err, sizeof err);
        CHECK (q != NULL, "%s: %s", pre[i], err);
        qc_pipeline_destroy (&q);
    }
}

/* A HistoQC-style config (our own words) with the parts HistoQC users
 * write: a step list with an instance suffix and a commented-out step,
 * both separators, comments, a section for a step not in the list. */
static const char histoqc_like[] =
    "[pipeline]\n"
    "steps= BasicModule.getBasicStats\n"
    "#    ClassificationModule.byExampleWithFeatures:pen_markings\n"
    "    BasicModule.getBasicStats:again\n"
    "\n"
    "[BaseImage.BaseImage]\n"
    "image_work_size = 1.25x\n"
    "#not yet implemented\n"
    "confirm_base_mag: False\n"
    "mask_statistics = relative2mask\n"
    "\n"
    "[BasicModule.getBasicStats]\n"
    "image_work_size = 1.25x\n"
    "\n"
    "[BasicModule.getBasicStats:again]\n"
    "Image_Work_Size: 2.5x\n"
    "\n"
    "; a step this pipeline does not run: legal, ignored\n"
    "[LightDarkModule.getIntensityThresholdPercent:bubble]\n"
    "name: bubble\n"
    "upper_threshold: .94\n";

static void
test_config_validation (void)
{
    qc_pipeline_t *p = qc_pipeline_new (histoqc_like, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    CHECK (p && strcmp (qc_pipeline_description (p),
                        "BasicModule.getBasicStats BasicModule.getBasicStats:again") == 0);
    /* A step run twice fills its columns once. */
    CHECK (p && qc_pipeline_ncolumns (p) == 12);
    qc_pipeline_destroy (&p);

    /* A comment after a value is part of it (configparser): the refusal
     * says so; a refusal of a value without one does not. */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BaseImage.BaseImage]\nimage_work_size = 1.25x ; the usual\n");
    CHECK (strstr (err, "'1.25x ; the usual'") && strstr (err, "comments go on their own"),
           "%s", err);
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BaseImage.BaseImage]\nimage_work_size = 1.25y\n");
    CHECK (strstr (err, "'1.25y'") && !strstr (err, "comments go on"), "%s", err);

    /* Unknown step: named, with the section and its own line (not the
     * steps= line; a comment line between counts), and the nearest. */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n  Foo.bar:x\n");
    CHECK (strstr (err, "unknown step 'Foo.bar'") && strstr (err, "[pipeline]")
           && strstr (err, "(line 3)") && !strstr (err, "did you mean"), "%s", err);
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "# a comment\n\n  LightDarkModule.getIntensityThresholdPercnt:tissue\n");
    CHECK (strstr (err, "(line 5)") && strstr (err, "'LightDarkModule."
                                                     "getIntensityThresholdPercnt'")
           && strstr (err, "did you mean LightDarkModule.getIntensityThresholdPercent?"),
           "%s", err);
    /* A section one typo away from a step that has none of its own:
     * that step would silently run with its defaults. */
    must_fail ("[pipeline]\nsteps = LightDarkModule.getIntensityThresholdPercent:darktissue\n"
               "[LightDarkModule.getIntensityThresholdPercent:darktisue]\n"
               "name = dark\nupper_threshold = .15\n");
    CHECK (strstr (err, "[LightDarkModule.getIntensityThresholdPercent:darktisue] line 3")
           && strstr (err, "the step LightDarkModule.getIntensityThresholdPercent:darktissue "
                           "of [pipeline] steps has no section")
           && strstr (err, "one of the two names is misspelt"), "%s", err);
    /* A real HistoQC step that is not implemented yet says so. */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "  BubbleRegionByRegion.roiWise\n");
    CHECK (strstr (err, "not yet implemented")
           && strstr (err, "'BubbleRegionByRegion.roiWise'"), "%s", err);
    /* Steps of HistoQC's first versions (2017-2021), which its releases
     * since do not have either: each refused with what to write now;
     * the image_work_size its configs of 2018 put in [pipeline] (read by
     * no version there) is a warning, not a refusal. */
    char *old_all = NULL;
    qc_pipeline_t *old = qc_pipeline_new_all (
        "[pipeline]\nimage_work_size = 1000\nsteps = BasicModule.getBasicStats\n"
        "  BasicModule.getMag\n  DeconvolutionModule.seperateStains\n"
        "  SaveModule.saveImages\n  SaveModule.saveThumbnail\n"
        "  ClassificationModule.byExample\n"
        "[DeconvolutionModule.seperateStains]\nstain: hed_from_rgb\n", err, sizeof err,
        &old_all);
    CHECK (old == NULL && old_all
           && strstr (old_all, "steps (line 4): 'BasicModule.getMag' is a step of HistoQC's "
                               "first versions, which its releases since do not have "
                               "either: remove the line")
           && strstr (old_all, "'DeconvolutionModule.seperateStains' is a step of HistoQC's "
                               "first versions, which its releases since do not have "
                               "either: write DeconvolutionModule.separateStains")
           && strstr (old_all, "(line 6): 'SaveModule.saveImages' is a step of HistoQC's "
                               "first versions, which its releases since do not have "
                               "either: write SaveModule.saveFinalMask")
           && strstr (old_all, "write SaveModule.saveThumbnails")
           && strstr (old_all, "write ClassificationModule.byExampleWithFeatures")
           && strstr (old_all, "\nwarning: [pipeline] line 2: 'image_work_size' is not read")
           && !strstr (old_all, "seperateStains] line"),
           "%s", old_all ? old_all : err);
    free (old_all);
    qc_pipeline_destroy (&old);
    old = qc_pipeline_new ("[pipeline]\nimage_work_size = 1000\nsteps = BasicModule.getBasicStats\n",
                           err, sizeof err);
    CHECK (old && strstr (qc_pipeline_notes (old), "warning: [pipeline] line 2: "
                          "'image_work_size' is not read here (nor by HistoQC, which "
                          "reads it in [BaseImage.BaseImage] only)"),
           "%s", old ? qc_pipeline_notes (old) : err);
    qc_pipeline_destroy (&old);
    old_all = NULL;
    old = qc_pipeline_new_all ("[pipeline]\nstep = BasicModule.getBasicStats\n", err,
                               sizeof err, &old_all);
    CHECK (!old && old_all && strstr (old_all, "line 2: unknown key 'step' (only steps is read)"),
           "%s", old_all ? old_all : err);
    free (old_all);
    /* Unknown parameter: named with its module, section and line. */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BasicModule.getBasicStats]\nimage_work_size = 1.25x\ncolour = red\n");
    CHECK (strstr (err, "unknown parameter 'colour'")
           && strstr (err, "[BasicModule.getBasicStats]") && strstr (err, "line 5")
           && strstr (err, "image_work_size") && !strstr (err, "did you mean"), "%s", err);
    /* a misspelt parameter: the nearest one is named */
    must_fail ("[pipeline]\nsteps = LightDarkModule.getIntensityThresholdPercent:t\n"
               "[LightDarkModule.getIntensityThresholdPercent:t]\nupper_treshold = .9\n");
    CHECK (strstr (err, "unknown parameter 'upper_treshold'")
           && strstr (err, "did you mean 'upper_threshold'?"), "%s", err);
    /* ...also in an instance's own section. */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats:two\n"
               "[BasicModule.getBasicStats:two]\nthresold = 3\n");
    CHECK (strstr (err, "'thresold'") && strstr (err, "[BasicModule.getBasicStats:two]"),
           "%s", err);
    /* A parameter of other steps in a step that does not read it
     * (image_work_size copied into getContrast's section) is taken, as
     * HistoQC takes it, and noted as ignored; a key that another value
     * names in a %(key)s reference is a helper, taken silently; a helper
     * no value names is still an unknown parameter. */
    err[0] = '\0';
    qc_pipeline_t *hp = qc_pipeline_new (
        "[pipeline]\nsteps = BrightContrastModule.getContrast\n"
        "[BaseImage.BaseImage]\nmag = 1.25x\nimage_work_size = %(mag)s\n"
        "[BrightContrastModule.getContrast]\nimage_work_size = 5x\nlimit_to_mask = True\n",
        err, sizeof err);
    CHECK (hp != NULL, "a helper key and a parameter of other steps: %s", err);
    const char *notes = qc_pipeline_notes (hp);
    CHECK (strstr (notes, "[BrightContrastModule.getContrast] line 7: 'image_work_size' is "
                          "not read by BrightContrastModule.getContrast")
               && strstr (notes, "ignored, as HistoQC ignores it") && !strstr (notes, "'mag'"),
           "notes: %s", notes);
    qc_pipeline_destroy (&hp);
    CHECK (strcmp (qc_pipeline_notes (NULL), "") == 0);
    hp = qc_pipeline_new (qc_pipeline_default_config (), err, sizeof err);
    CHECK (hp && strcmp (qc_pipeline_notes (hp), "") == 0, "the default config has no notes: %s",
           hp ? qc_pipeline_notes (hp) : err);
    qc_pipeline_destroy (&hp);
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BaseImage.BaseImage]\nmag = 1.25x\nimage_work_size = 1.25x\n");
    CHECK (strstr (err, "unknown parameter 'mag'"), "%s", err);

    /* ...and in [BaseImage.BaseImage] and [pipeline]. */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BaseImage.BaseImage]\nimage_worksize = 1.25x\n");
    CHECK (strstr (err, "'image_worksize'") && strstr (err, "[BaseImage.BaseImage]"),
           "%s", err);
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\nstep = x\n");
    CHECK (strstr (err, "'step'") && strstr (err, "[pipeline]"), "%s", err);
    /* Bad values are refused before any slide is opened. */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BaseImage.BaseImage]\nmask_statistics = relative\n");
    CHECK (strstr (err, "mask_statistics") && strstr (err, "relative2mask"), "%s", err);
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BaseImage.BaseImage]\nimage_work_size = big\n");
    CHECK (strstr (err, "image_work_size") && strstr (err, "big"), "%s", err);
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BaseImage.BaseImage]\nconfirm_base_mag = perhaps\n");
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BaseImage.BaseImage]\nbase_mag = -20\n");
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BasicModule.getBasicStats]\nimage_work_size = 0x\n");
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BasicModule.getBasicStats]\nimage_work_size = 50%\n");
    CHECK (strstr (err, "'%'") != NULL, "%s", err);
    /* Malformed step lists. */
    must_fail ("[pipeline]\nsteps = BasicModule\n");
    must_fail ("[pipeline]\nsteps = A.b.c\n");
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats:\n");
    must_fail ("[pipeline]\nsteps = .getBasicStats\n");
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats BasicModule.getBasicStats\n");
    CHECK (strstr (err, "one step per line") != NULL, "%s", err);
    /* a comment after a step: said as what it is */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "    MorphologyModule.removeSmallObjects ; off\n");
    CHECK (strstr (err, "a ';' after a step is part of it") && strstr (err, "line of its own")
           && !strstr (err, "one step per line"), "%s", err);
    must_fail ("[pipeline]\nsteps = BaseImage.BaseImage\n");
    CHECK (strstr (err, "not a step") != NULL, "%s", err);
    must_fail ("[pipeline]\nsteps =\n");
    must_fail ("[pipeline]\nother = 1\n");
    must_fail ("[BaseImage.BaseImage]\nimage_work_size = 1.25x\n");
    CHECK (strstr (err, "no [pipeline] section") != NULL, "%s", err);
    must_fail ("");
    /* Syntax errors come back with their line. */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n[BaseImage.BaseImage\n");
    CHECK (strstr (err, "line 3") != NULL, "%s", err);
    /* A config with more steps than allowed. */
    char *many = malloc (64 * 300 + 64);
    strcpy (many, "[pipeline]\nsteps =");
    for (int i = 0; i < 300; i++)
        strcat (many, "\n  BasicModule.getBasicStats");
    must_fail (many);
    free (many);
    /* A first line left empty and blank lines in the list are fine. */
    p = qc_pipeline_new ("[pipeline]\nsteps =\n  BasicModule.getBasicStats\n\n"
                         "  BasicModule.getBasicStats:b\n", err, sizeof err);
    CHECK (p != NULL, "%s", err);
    qc_pipeline_destroy (&p);
}

static void
test_module_table (void)
{
    const char *s = "BasicModule.getBasicStats:tissue";
    const qc_module_t *m = qc_module_find (s, strlen ("BasicModule.getBasicStats"));
    CHECK (m == &qc_module_basic_stats);
    CHECK (qc_module_find (s, strlen (s)) == NULL);
    CHECK (qc_module_find (NULL, 0) == NULL);
    CHECK (qc_module_count () >= 1 && qc_module_at (0) != NULL);
    CHECK (qc_module_at (qc_module_count ()) == NULL);
    CHECK (qc_module_accepts (m, "image_work_size") && !qc_module_accepts (m, "x"));
    CHECK (!qc_module_accepts (NULL, "x") && !qc_module_accepts (m, NULL));
    CHECK (qc_module_is_histoqc ("SaveModule.saveThumbnails", 25));
    CHECK (!qc_module_is_histoqc ("SaveModule.saveThumbnail", 24));
    /* Every table entry is complete: a name, a function, a parameter list
     * (maybe empty). Columns are optional: some steps only write images
     * (HistogramModule.getHistogram, SaveModule.*). Names are unique. */
    for (size_t i = 0; i < qc_module_count (); i++) {
        const qc_module_t *e = qc_module_at (i);
        CHECK (e->name && e->run && e->params, "entry %zu (%s)", i,
               e->name ? e->name : "?");
        for (size_t j = 0; j < i; j++)
            CHECK (strcmp (qc_module_at (j)->name, e->name) != 0, "%s twice", e->name);
    }

    qc_work_size_t ws;
    CHECK (qc_work_size_parse ("1.25x", &ws) == 0 && ws.kind == QC_WORK_MAG
           && ws.value == 1.25);
    CHECK (qc_work_size_parse ("40X", &ws) == 0 && ws.kind == QC_WORK_MAG);
    CHECK (qc_work_size_parse ("0.1", &ws) == 0 && ws.kind == QC_WORK_DOWNSCALE);
    CHECK (qc_work_size_parse ("2", &ws) == 0 && ws.kind == QC_WORK_LEVEL);
    CHECK (qc_work_size_parse ("500", &ws) == 0 && ws.kind == QC_WORK_DIM);
    const char *bad[] = { "", "x", "0", "-1", "1.2.3x", "1e3", "abc", "1.25 x", NULL };
    for (int i = 0; bad[i]; i++)
        CHECK (qc_work_size_parse (bad[i], &ws) == -1, "'%s' accepted", bad[i]);
    CHECK (qc_work_size_parse (NULL, &ws) == -1 && qc_work_size_parse ("1x", NULL) == -1);

    /* Numbers as Python's repr prints them. */
    static const struct { double v; const char *s; } py[] = {
        { 20, "20.0" }, { 0.499, "0.499" }, { 0.2281750559028887, "0.2281750559028887" },
        { 1e-05, "1e-05" }, { 0.0001, "0.0001" }, { 1e16, "1e+16" },
        { 1234567890123456.0, "1234567890123456.0" }, { -2.5, "-2.5" },
        { 0.1 + 0.2, "0.30000000000000004" }, { 0.0, "0.0" }, { 123.456, "123.456" },
        { 1.5e300, "1.5e+300" }, { 2.5e-7, "2.5e-07" }, { 100, "100.0" },
    };
    char buf[QC_PYFLOAT_LEN];
    for (size_t i = 0; i < sizeof py / sizeof *py; i++)
        CHECK (strcmp (qc_pyfloat (py[i].v, buf, sizeof buf), py[i].s) == 0,
               "%s != %s", buf, py[i].s);
    CHECK (strcmp (qc_pyfloat (1, buf, 4), "NA") == 0);

    /* A step that needs the magnification refuses a slide without one. */
    qc_result_t *r = qc_result_new ();
    qc_run_t run = { .out = r, .filename = "x.svs", .step = "Blur.step" };
    CHECK (qc_run_require_mag (&run) == -1 && !r->ok);
    CHECK (r->error && strstr (r->error, "x.svs: Blur.step: ")
           && strstr (r->error, "base_mag"), "%s", r->error);
    run.base_mag = 20;
    CHECK (qc_run_require_mag (&run) == 0);
    CHECK (qc_run_require_mag (NULL) == -1);
    qc_result_reset (r);
    CHECK (qc_run_warn (&run, "a|b\tc") == 0 && strcmp (r->warnings, "a b c") == 0);
    CHECK (qc_run_fail (NULL, "x") == -1 && qc_run_set (&run, NULL, "x") == -1);
    qc_result_destroy (&r);
}

/* Settings of [BaseImage.BaseImage] reach the results. */
static void
test_base_settings (void)
{
    qc_pipeline_t *p = qc_pipeline_new (
        "[pipeline]\nsteps = BasicModule.getBasicStats\n"
        "[BaseImage.BaseImage]\nbase_mag = 40x\nenable_bounding_box = True\n"
        "in_memory_compression = True\n", err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (!p)
        return;
    qc_result_t *r = qc_result_new ();
    char path[1024];
    slide_path (path, sizeof path, "real", "TCGA-CR-7395-01A-01-TS1.svs");
    CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
    /* The slide has no magnification: the config's is used. */
    CHECK (strcmp (get (r, "base_mag"), "40.0") == 0, "%s", get (r, "base_mag"));
    CHECK (!r->warnings || !strstr (r->warnings, "Unknown base magnification"));
    /* It has no bounds either: HistoQC's warning, the whole image. */
    CHECK (r->warnings && strstr (r->warnings, "Bounding Box requested but could not read"));
    CHECK (strcmp (get (r, "image_bounding_box"), "(0, 0, 4443, 3567)") == 0);
    /* A slide with its own magnification keeps it. */
    slide_path (path, sizeof path, "real", "CMU-1-Small-Region.svs");
    CHECK (qc_pipeline_run (p, path, r) == 0 && strcmp (get (r, "base_mag"), "20.0") == 0);
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

static size_t
count_lines_starting (const char *text, const char *start)
{
    size_t n = 0, len = strlen (start);
    for (const char *line = text; line && *line;) {
        n += strncmp (line, start, len) == 0;
        line = strchr (line, '\n');
        line = line ? line + 1 : NULL;
    }
    return n;
}

/* Every step at one working size (the option to run steps at 10x). */
static void
test_config_at_work_size (void)
{
    const char *def = qc_pipeline_default_config ();
    char *t = qc_pipeline_config_at_work_size (NULL, "10x");
    CHECK (t != NULL);
    if (t) {
        size_t want = count_lines_starting (def, "image_work_size");
        CHECK (want >= 3, "the default config sets image_work_size %zu times", want);
        CHECK (count_lines_starting (t, "image_work_size = 10x") == want,
               "not every image_work_size became 10x");
        CHECK (count_lines_starting (t, "image_work_size") == want);
        CHECK (strlen (t) > strlen (def) - 3 * want, "other lines lost");
        qc_pipeline_t *p = qc_pipeline_new (t, err, sizeof err);
        CHECK (p != NULL, "the 10x config is refused: %s", err);
        qc_pipeline_destroy (&p);
        free (t);
    }
    /* a given config, both key forms; a longer key is left alone */
    const char *cfg = "[pipeline]\nsteps = BasicModule.getBasicStats\n"
                      "[BaseImage.BaseImage]\nimage_work_size: 1.25x\n"
                      "[BasicModule.getBasicStats]\nimage_work_size\t= 2.5x\n"
                      "image_work_size_note = 1\n";
    t = qc_pipeline_config_at_work_size (cfg, "2000");
    CHECK (t && count_lines_starting (t, "image_work_size = 2000") == 2
           && strstr (t, "image_work_size_note = 1\n") && strstr (t, "[pipeline]\n"),
           "%s", t ? t : "NULL");
    free (t);
    CHECK (qc_pipeline_config_at_work_size (NULL, NULL) == NULL);
    CHECK (qc_pipeline_config_at_work_size (NULL, "") == NULL);
    CHECK (qc_pipeline_config_at_work_size (NULL, "10x\nsteps = x") == NULL);
    CHECK (qc_pipeline_config_at_work_size (NULL, "10x\r") == NULL);
}

/* A line added to [BaseImage.BaseImage]; png_work_size checked like
 * image_work_size. */
static void
test_config_with_base (void)
{
    char *t = qc_pipeline_config_with_base (NULL, "png_work_size", "1.25x");
    CHECK (t && strstr (t, "[BaseImage.BaseImage]\npng_work_size = 1.25x\n"),
           "%s", t ? t : "NULL");
    qc_pipeline_t *p = t ? qc_pipeline_new (t, err, sizeof err) : NULL;
    CHECK (p != NULL, "png_work_size refused: %s", err);
    qc_pipeline_destroy (&p);
    free (t);
    /* a header that is not a whole line is not the section */
    const char *cfg = "[pipeline]\nsteps = BasicModule.getBasicStats\n"
                      "# see [BaseImage.BaseImage] below\n"
                      "[BaseImage.BaseImage]\nimage_work_size: 1.25x\n";
    t = qc_pipeline_config_with_base (cfg, "png_work_size", "500");
    CHECK (t && strstr (t, "below\n[BaseImage.BaseImage]\npng_work_size = 500\n"
                        "image_work_size: 1.25x\n"), "%s", t ? t : "NULL");
    free (t);
    CHECK (qc_pipeline_config_with_base ("[pipeline]\n", "a", "b") == NULL);
    CHECK (qc_pipeline_config_with_base (NULL, "a\nb", "1") == NULL);
    CHECK (qc_pipeline_config_with_base (NULL, "a", "1\n[x]") == NULL);
    t = qc_pipeline_config_with_base (NULL, "png_work_size", "ten");
    p = t ? qc_pipeline_new (t, err, sizeof err) : NULL;
    CHECK (p == NULL && strstr (err, "png_work_size = 'ten'"), "%s", err);
    qc_pipeline_destroy (&p);
    free (t);
}

/* Every problem of a config told at once, in the order of its lines
 * (err: the first); what HistoQC passes over noted, and a key that
 * HistoQC once read, or that is near one the step reads, said. */
/* Two steps writing one column: the later values stay (as in HistoQC,
 * which writes the column twice); a warning says the earlier are lost
 * and, where the step takes one, that a prefix= keeps both. */
static void
test_shared_columns (void)
{
    static const char two[] =
        "[pipeline]\nsteps = BrightContrastModule.getBrightnessGray:a\n"   /* 1-2 */
        "    BlurDetectionModule.identifyBlurryRegions\n"                      /* 3 */
        "    BrightContrastModule.getBrightnessGray:b\n"                       /* 4 */
        "    %s\n"                                                             /* 5 */
        "[BrightContrastModule.getBrightnessGray:a]\nlimit_to_mask = False\n"
        "[BrightContrastModule.getBrightnessGray:b]\nlimit_to_mask = False\n%s\n";
    char text[1024], err[1024];
    snprintf (text, sizeof text, two, "BasicModule.getBasicStats", "");
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    const char *notes = qc_pipeline_notes (p);
    CHECK (p && strstr (notes, "warning: [pipeline] steps (line 4): "
                               "BrightContrastModule.getBrightnessGray:b writes the column "
                               "'grayscale_brightness' that BrightContrastModule."
                               "getBrightnessGray:a (line 2) writes too")
           && strstr (notes, "its own prefix=") && !strstr (notes, "line 5"),
           "%s", p ? notes : err);
    qc_pipeline_destroy (&p);
    snprintf (text, sizeof text, two, "BlurDetectionModule.identifyBlurryRegions",
              "prefix = b");
    p = qc_pipeline_new (text, err, sizeof err);
    notes = qc_pipeline_notes (p);
    CHECK (p && !strstr (notes, "getBrightnessGray:b writes")
           && strstr (notes, "(line 5): BlurDetectionModule.identifyBlurryRegions writes "
                             "the column 'blurry_removed_num_regions'")
           && strstr (notes, "fixed names"), "%s", p ? notes : err);
    bool prefixed = false;
    for (size_t i = 0; i < qc_pipeline_ncolumns (p); i++)
        prefixed |= strstr (qc_pipeline_column (p, i), "grayscale_brightness") != NULL
                     && strncmp (qc_pipeline_column (p, i), "b", 1) == 0;
    CHECK (prefixed, "prefix b adds a column of its own");
    qc_pipeline_destroy (&p);
}

static void
test_config_all_problems (void)
{
    static const char cfg[] =
        "[pipeline]\n"                                                   /* 1 */
        "steps = BasicModule.getBasicStats\n"                             /* 2 */
        "    FooModule.bar\n"                                             /* 3 */
        "    LightDarkModule.getIntensityThresholdPercent:tissue\n"       /* 4 */
        "    BubbleRegionByRegion.roiWise\n"                             /* 5 */
        "[LightDarkModule.getIntensityThresholdPercent:tissue]\n"         /* 6 */
        "name = bright\n"                                                 /* 7 */
        "lower_std = abc\n"                                               /* 8 */
        "[BaseImage.BaseImage]\n"                                         /* 9 */
        "bogus = 1\n"                                                     /* 10 */
        "[FooModule.bar]\n"                                               /* 11 */
        "x = 1\n"                                                         /* 12 */
        "[BasicModule.getBasicStats]\n"                                   /* 13 */
        "colour = red\n";                                                 /* 14 */
    char *all = (char *) 1;
    err[0] = '\0';
    qc_pipeline_t *p = qc_pipeline_new_all (cfg, err, sizeof err, &all);
    CHECK (p == NULL && all, "5 problems, not refused");
    const char *want[] = { "(line 3): unknown step 'FooModule.bar'",
                           "(line 5): not yet implemented step",
                           "lower_std = 'abc' (line 8)",
                           "line 10: unknown parameter 'bogus'",
                           "line 14: unknown parameter 'colour'" };
    const char *at = all ? all : "";
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *hit = strstr (at, want[i]);
        CHECK (hit != NULL, "problem %zu (%s), in order, in:\n%s", i, want[i],
               all ? all : "NULL");
        at = hit ? strchr (hit, '\n') : at;
        at = at ? at : "";
    }
    CHECK (all && !strstr (all, "[FooModule.bar] line 11"),
           "the refused step's section told again:\n%s", all ? all : "");
    CHECK (strstr (err, "unknown step 'FooModule.bar'") && !strchr (err, '\n'),
           "err is the first problem: %s", err);
    free (all);
    all = (char *) 1;
    CHECK (qc_pipeline_new_all ("[pipeline\n", err, sizeof err, &all) == NULL && all == NULL,
           "a text that does not parse: err only");

    /* passed over, with a note: a lab's own section, keys HistoQC read
       once; a warning where the config meant something not done */
    err[0] = '\0';
    p = qc_pipeline_new (
        "[pipeline]\nsteps = LightDarkModule.getIntensityThresholdPercent:t\n"  /* 1-2 */
        "    BlurDetectionModule.identifyBlurryRegions\n"                       /* 3 */
        "    LocalTextureEstimationModule.estimateGreyComatrixFeatures:t\n"     /* 4 */
        "[metadata]\nauthor = a lab\n"                                          /* 5-6 */
        "[LightDarkModule.getIntensityThresholdPercent:t]\n"                    /* 7 */
        "name = bright\nlower_variance = 100\n"                                 /* 8-9 */
        "[BlurDetectionModule.identifyBlurryRegions]\nthreshold = .05\n"        /* 10-11 */
        "[BaseImage.BaseImage]\nhandles = openslide,wsidicom\n"                 /* 12-13 */
        "[LocalTextureEstimationModule.estimateGreyComatrixFeatures:t]\n"        /* 14 */
        "prefix = t\n\n\nseed = 3\n",                                           /* 15-18 */
        err, sizeof err);
    CHECK (p != NULL, "refused: %s", err);
    const char *notes = qc_pipeline_notes (p);
    const char *nwant[] = {
        "[metadata] line 5: no step or module of that name: ignored",
        "warning: [LightDarkModule.getIntensityThresholdPercent:t] line 9: 'lower_variance' "
        "is not read: HistoQC before 2023",
        "warning: [BlurDetectionModule.identifyBlurryRegions] line 11: 'threshold' is not read "
        "by BlurDetectionModule.identifyBlurryRegions (a parameter of other steps): did you "
        "mean 'blur_threshold'?",
        "[BaseImage.BaseImage] line 13: 'handles' is not read",
        "line 18: 'seed' is not read" };
    at = notes;
    for (size_t i = 0; i < sizeof nwant / sizeof nwant[0]; i++) {
        const char *hit = strstr (at, nwant[i]);
        CHECK (hit != NULL, "note %zu (%s), in order, in:\n%s", i, nwant[i], notes);
        at = hit ? strchr (hit, '\n') : at;
        at = at ? at : "";
    }
    qc_pipeline_destroy (&p);
    /* saveMacro's dim, which HistoQC's configs write and HistoQC does not
       read: a note, not taken (it was listed as taken: a HistoQC user's
       review) */
    p = qc_pipeline_new ("[pipeline]\nsteps = SaveModule.saveMacro\n"
                         "[SaveModule.saveMacro]\ndim: 300\n", err, sizeof err);
    CHECK (p && strstr (qc_pipeline_notes (p), "[SaveModule.saveMacro] line 4: 'dim' is not "
                                                "read") && strstr (qc_pipeline_notes (p),
                                                                   "write small_dim"),
           "%s", p ? qc_pipeline_notes (p) : err);
    qc_pipeline_destroy (&p);
    /* keys HistoQC's versions of 2018, 2022 and 2024 read (its own
       config_first.ini of November 2022 wrote bounding_box): warnings
       naming the key that replaced each, not refusals */
    p = qc_pipeline_new ("[pipeline]\nsteps = BrightContrastModule.getContrast\n"
                         "    HistogramModule.getHistogram\n    SaveModule.saveMask\n"
                         "[BaseImage.BaseImage]\nbounding_box: False\n"           /* 5-6 */
                         "[BrightContrastModule.getContrast]\nlimit_to_tissue: True\n" /* 7-8 */
                         "[HistogramModule.getHistogram]\nlimit_to_tissue: True\n"     /* 9-10 */
                         "[SaveModule.saveMask]\nsuffix: m\ngeojson: True\n",         /* 11-13 */
                         err, sizeof err);
    notes = p ? qc_pipeline_notes (p) : "";
    CHECK (p && strstr (notes, "warning: [BaseImage.BaseImage] line 6: 'bounding_box' is not "
                               "read: HistoQC read it from November 2022 to January 2023")
               && strstr (notes, "write enable_bounding_box to apply it")
               && strstr (notes, "warning: [BrightContrastModule.getContrast] line 8: "
                                 "'limit_to_tissue' is not read: HistoQC before February 2018")
               && strstr (notes, "[HistogramModule.getHistogram] line 10: 'limit_to_tissue'")
               && strstr (notes, "write limit_to_mask to set it")
               && strstr (notes, "line 13: 'geojson' is not read")
               && strstr (notes, "add a SaveModule.saveMask2Geojson step"),
           "%s", p ? notes : err);
    qc_pipeline_destroy (&p);
    /* more than are told: the first told are the first by line, though
       the step they are in comes later in steps= (checked in steps=
       order); a warning comes after the problems, to be mended in the
       same pass */
    char big[8192];
    int n = snprintf (big, sizeof big, "[pipeline]\nsteps = BasicModule.getBasicStats\n"
                      "    ClassificationModule.byExampleWithFeatures:pen\n"     /* 1-3 */
                      "[ClassificationModule.byExampleWithFeatures:pen]\n"       /* 4 */
                      "features = rgb\nexamples = a.png:b.png\nbad_early = 1\n"   /* 5-7 */
                      "area_thresh = 100\n"                                     /* 8 */
                      "[BasicModule.getBasicStats]\n");                         /* 9 */
    for (int i = 0; i < 40; i++)
        n += snprintf (big + n, sizeof big - (size_t) n, "bad_%02d = 1\n", i);
    all = NULL;
    p = qc_pipeline_new_all (big, err, sizeof err, &all);
    CHECK (!p && all && strstr (all, "line 7: unknown parameter 'bad_early'")
           && strstr (err, "line 6") && strstr (all, "more not listed"),
           "the first by line, of 43:\n%s", all ? all : err);
    CHECK (all && strstr (all, "\nwarning: [ClassificationModule.byExampleWithFeatures:pen] "
                                "line 8: 'area_thresh' is not read: HistoQC before March 2020"),
           "the warning beside the problems:\n%s", all ? all : "");
    free (all);
    /* an abbreviation is nearer than a short name two edits away
       ("thres": threshold, not trees) */
    must_fail ("[pipeline]\nsteps = ClassificationModule.byExampleWithFeatures:pen\n"
               "[ClassificationModule.byExampleWithFeatures:pen]\nname = pen\n"
               "features = rgb\nthres = .5\nexamples = a.png:b.png\n");
    CHECK (strstr (err, "unknown parameter 'thres'") && strstr (err, "did you mean 'threshold'?"),
           "%s", err);
    /* a mask_name no step before keeps: refused before any slide (it
       failed every slide, in HistoQC a KeyError); kept by a step before,
       by HistoQC's key or bare, it runs */
    static const char masks[] =
        "[pipeline]\nsteps = LightDarkModule.getIntensityThresholdPercent:tissue\n"  /* 1-2 */
        "    BrightContrastModule.getBrightnessGray:a\n"                               /* 3 */
        "    BrightContrastModule.getBrightnessGray:b\n"                               /* 4 */
        "    MorphologyModule.removeFatlikeTissue\n"                                   /* 5 */
        "[LightDarkModule.getIntensityThresholdPercent:tissue]\nname = bright\n"      /* 6-7 */
        "upper_threshold = .9\n"                                                      /* 8 */
        "[BrightContrastModule.getBrightnessGray:a]\nprefix = a\n"                    /* 9-10 */
        "mask_name = img_mask_bright\n"                                               /* 11 */
        "[BrightContrastModule.getBrightnessGray:b]\nprefix = b\n"                    /* 12-13 */
        "mask_name = %s\n";                                                           /* 14 */
    char text[2048];
    snprintf (text, sizeof text, masks, "img_mask_fatlike");
    must_fail (text);
    CHECK (strstr (err, "[BrightContrastModule.getBrightnessGray:b] mask_name = "
                        "'img_mask_fatlike' (line 14): no step before this one keeps a mask "
                        "of that name (before it: img_mask_use, img_mask_bright)"), "%s", err);
    /* told beside another problem, not only once it is mended; not
       told after a refused step, whose masks are not known */
    char twice[2100];
    all = NULL;
    snprintf (text, sizeof text, masks, "img_mask_fatlike");
    snprintf (twice, sizeof twice, "%s%s", text, "bogus = 1\n");
    CHECK (!qc_pipeline_new_all (twice, err, sizeof err, &all) && all
           && strstr (all, "line 14): no step before this one keeps")
           && strstr (all, "line 15: unknown parameter 'bogus'"),
           "both problems:\n%s", all ? all : err);
    free (all);
    all = NULL;
    char *refused = strstr (text, "    BrightContrastModule.getBrightnessGray:b");
    CHECK (refused != NULL, "the masks' config has step b");
    if (refused) {
        snprintf (twice, sizeof twice, "%.*s    NoSuchModule.step\n%s",
                  (int) (refused - text), text, refused);
        CHECK (!qc_pipeline_new_all (twice, err, sizeof err, &all) && all
               && strstr (all, "unknown step 'NoSuchModule.step'")
               && !strstr (all, "no step before this one keeps"),
               "after a refused step:\n%s", all ? all : err);
        free (all);
    }
    snprintf (text, sizeof text, masks, "bright");
    p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p != NULL, "a kept mask, named bare: %s", err);
    qc_pipeline_destroy (&p);
    /* a mask a step does not use (limit_to_mask False), and SaveModule's,
       which warns as HistoQC does: no reason to refuse */
    snprintf (text, sizeof text, masks, "img_mask_none\nlimit_to_mask = False");
    p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p != NULL, "limit_to_mask False: %s", err);
    qc_pipeline_destroy (&p);
    p = qc_pipeline_new ("[pipeline]\nsteps = SaveModule.saveMask2Geojson:g\n"
                         "[SaveModule.saveMask2Geojson:g]\nsuffix = g\nmask_name = img_mask_none\n",
                         err, sizeof err);
    CHECK (p != NULL, "SaveModule's mask_name: %s", err);
    qc_pipeline_destroy (&p);
    /* an empty value is named with its line, a missing one with the
       section's */
    must_fail ("[pipeline]\nsteps = DeconvolutionModule.separateStains\n"
               "[DeconvolutionModule.separateStains]\nuse_mask = True\nstain:\n");
    CHECK (strstr (err, "stain (line 5) is empty"), "%s", err);
    must_fail ("[pipeline]\nsteps = DeconvolutionModule.separateStains\n"
               "[DeconvolutionModule.separateStains]\nuse_mask = True\n");
    CHECK (strstr (err, "[DeconvolutionModule.separateStains] (line 3) has no stain"),
           "%s", err);
    /* a section near a step's name is still a typo, refused */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[BaseImage.BaseImag]\nimage_work_size = 1.25x\n");
    CHECK (strstr (err, "[BaseImage.BaseImag] line 3: unknown section")
           && strstr (err, "did you mean [BaseImage.BaseImage]?"), "%s", err);
    /* and one that differs in case alone, however many letters: HistoQC
       compares section names as written, and ran its steps with their
       defaults (a new user's review: dark tissue no longer removed) */
    must_fail ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
               "[baseimage.baseimage]\nbase_mag = 40\n");
    CHECK (strstr (err, "[baseimage.baseimage] line 3: unknown section")
           && strstr (err, "did you mean [BaseImage.BaseImage]?"), "%s", err);
    must_fail ("[pipeline]\nsteps = LightDarkModule.getIntensityThresholdPercent:darkTissue\n"
               "[LightDarkModule.getIntensityThresholdPercent:darkTissue]\nname = dark\n"
               "[lightdarkmodule.getintensitythresholdpercent:darktissue]\n"
               "upper_threshold = .15\n");
    CHECK (strstr (err, "[lightdarkmodule.getintensitythresholdpercent:darktissue] line 5: "
                        "unknown section")
           && strstr (err, "did you mean [LightDarkModule.getIntensityThresholdPercent:"
                           "darkTissue]?"), "%s", err);
    must_fail ("[pipeline]\nsteps = LightDarkModule.getIntensityThresholdPercent:darkTissue\n"
               "[lightdarkmodule.getintensitythresholdpercent:darktissue]\n"
               "upper_threshold = .15\n");
    CHECK (strstr (err, "[lightdarkmodule.getintensitythresholdpercent:darktissue] line 3"),
           "%s", err);
    /* a step's name in another case: refused, its module named */
    must_fail ("[pipeline]\nsteps = basicmodule.getbasicstats\n");
    CHECK (strstr (err, "did you mean BasicModule.getBasicStats?"), "%s", err);
}

int
main (void)
{
    quiet_logs ();
    test_config_with_base ();
    test_default_config ();
    test_config_validation ();
    test_config_all_problems ();
    test_shared_columns ();
    test_module_table ();
    test_base_settings ();
    test_config_at_work_size ();
    return check_done ("test_pipeline_config");
}
