/* A lab's HistoQC config, as HistoQC ships it, runs here unchanged: the
 * 23 steps of HistoQC's default [pipeline] with its sections and its
 * parameter names and values (HistoQC's modules, faithful, including
 * BlurDetectionModule.identifyBlurryRegions), accepted and run on every
 * real slide and every odd file without a crash:
 *
 *  - the results.tsv columns are exactly those of HistoQC's own
 *    results.tsv (../shared/reference/histoqc, its #dataset: line);
 *  - on the real slides, HistoQC's documented outcomes come back: the
 *    faithful blur step removes ALL tissue of CMU-1 (HistoQC's
 *    blurry_removed_percent 1.0 and pixels_to_use 0); on the TCGA slide
 *    the images HistoQC wrote come back pixel for pixel (_thumb,
 *    _thumb_small, _mask_use, _fuse, _deconv_c0..2: the level read as
 *    openslide-python reads it, shrunk as PIL's thumbnail) and with them
 *    HistoQC's pixels_to_use (13,567), bright (0.371) and blur share
 *    (0.66) within the differences the classifiers' examples make; the
 *    slide without a magnification fails with a reason, the fluorescence
 *    slide passes with no tissue;
 *  - the odd files end ok or failed with a reason.
 *
 * The examples= lines name image:mask files, as HistoQC's do; HistoQC's
 * own example files are not part of the project, so the test writes the
 * project's built-in examples to files under HistoQC's names in a
 * temporary folder first. templates= names HistoQC's own template
 * images, in ../shared/reference/histoqc/data (a missing template is a
 * config error: the project's own are used only where a config names
 * them, builtin:NAME). The config text is written here in
 * its own layout (HistoQC's keys, values and order of steps; the
 * comments and spacing are this test's). */
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/classify/classify_examples.h"
#include "kernels/png/png_io.h"
#include "tests/unit/pipeline_fixtures.h"

/* %1$s is the folder holding the example files, %2$s HistoQC's data
 * folder (its templates). */
static const char config_fmt[] =
    "; HistoQC's default pipeline, its 23 steps in its order\n"
    "[pipeline]\n"
    "steps = BasicModule.getBasicStats\n"
    "  ClassificationModule.byExampleWithFeatures:pen_markings\n"
    "  ClassificationModule.byExampleWithFeatures:coverslip_edge\n"
    "  LightDarkModule.getIntensityThresholdPercent:tissue\n"
    "  LightDarkModule.getIntensityThresholdPercent:darktissue\n"
    "  BubbleRegionByRegion.detectSmoothness\n"
    "  MorphologyModule.removeFatlikeTissue\n"
    "  MorphologyModule.fillSmallHoles\n"
    "  MorphologyModule.removeSmallObjects\n"
    "  BlurDetectionModule.identifyBlurryRegions\n"
    "  BasicModule.finalProcessingSpur\n"
    "  BasicModule.finalProcessingArea\n"
    "  HistogramModule.compareToTemplates\n"
    "  HistogramModule.getHistogram\n"
    "  BrightContrastModule.getContrast\n"
    "  BrightContrastModule.getBrightnessGray\n"
    "  BrightContrastModule.getBrightnessByChannelinColorSpace:RGB\n"
    "  BrightContrastModule.getBrightnessByChannelinColorSpace:YUV\n"
    "  DeconvolutionModule.separateStains\n"
    "  SaveModule.saveFinalMask\n"
    "  SaveModule.saveMacro\n"
    "  SaveModule.saveThumbnails\n"
    "  BasicModule.finalComputations\n"
    "\n"
    "[BaseImage.BaseImage]\n"
    "image_work_size: 1.25x\n"
    "confirm_base_mag = False\n"
    "mask_statistics: relative2mask\n"
    "\n"
    "[BasicModule.getBasicStats]\n"
    "image_work_size: 1.25x\n"
    "\n"
    "; pen: every feature parameter HistoQC's section carries\n"
    "[ClassificationModule.byExampleWithFeatures:pen_markings]\n"
    "name = pen_markings\n"
    "threshold = .5\n"
    "examples = %1$s/pen/1k_version/pen_green.png:%1$s/pen/1k_version/pen_green_mask.png\n"
    "area_threshold = 100\n"
    "features = frangi\n"
    "    laplace\n"
    "    rgb\n"
    "    #lbp\n"
    "laplace_ksize = 3\n"
    "frangi_scale_range = (1,10)\n"
    "frangi_scale_step = 2\n"
    "frangi_beta1 = .5\n"
    "frangi_beta2 = 15\n"
    "frangi_black_ridges = True\n"
    "gabor_theta = 4\n"
    "gabor_sigma = (1,3)\n"
    "gabor_frequency = (0.05, 0.25)\n"
    "lbp_radius = 3\n"
    "lbp_points = 24\n"
    "lbp_method = default\n"
    "median_disk_size = 3\n"
    "\n"
    "[ClassificationModule.byExampleWithFeatures:coverslip_edge]\n"
    "name = coverslip_edge\n"
    "threshold = .5\n"
    "examples = %1$s/models/coverslip_edge_he/coverslip_edge.png:%1$s/models/coverslip_edge_he/coverslip_edge_mask.png\n"
    "area_threshold = 15\n"
    "features = frangi\n"
    "    laplace\n"
    "    rgb\n"
    "dilate_kernel_size = 5\n"
    "\n"
    "; sections HistoQC's file has for steps its pipeline does not run\n"
    "[LightDarkModule.getIntensityThresholdPercent:bubble]\n"
    "name = bubble\n"
    "upper_threshold = .94\n"
    "lower_threshold = .82\n"
    "upper_variance = 11\n"
    "invert = true\n"
    "[LightDarkModule.getTissuePercent]\n"
    "threshold = .8\n"
    "[LightDarkModule.getDarkTissuePercent]\n"
    "threshold = .15\n"
    "\n"
    "[LightDarkModule.getIntensityThresholdPercent:tissue]\n"
    "name = bright\n"
    "upper_threshold = .9\n"
    "lower_std = 10\n"
    "\n"
    "[LightDarkModule.getIntensityThresholdPercent:darktissue]\n"
    "name = dark\n"
    "upper_threshold = .15\n"
    "invert = true\n"
    "\n"
    "[MorphologyModule.removeSmallObjects]\n"
    "min_size = 64\n"
    "[MorphologyModule.removeFatlikeTissue]\n"
    "kernel_size = 10\n"
    "max_keep_size = 1000\n"
    "fat_cell_size = 64\n"
    "[MorphologyModule.fillSmallHoles]\n"
    "min_size = 1000\n"
    "\n"
    "[HistogramModule.compareToTemplates]\n"
    "limit_to_mask = True\n"
    "bins = 20\n"
    "templates = %2$s/templates/template1.png\n"
    "    %2$s/templates/template2.png\n"
    "    %2$s/templates/template3.png\n"
    "    %2$s/templates/template4.png\n"
    "[HistogramModule.getHistogram]\n"
    "limit_to_mask = True\n"
    "bins = 20\n"
    "\n"
    "[BrightContrastModule.getContrast]\n"
    "limit_to_mask = True\n"
    "[BrightContrastModule.getBrightnessGray]\n"
    "limit_to_mask = True\n"
    "[BrightContrastModule.getBrightnessByChannelinColorSpace:RGB]\n"
    "limit_to_mask = True\n"
    "[BrightContrastModule.getBrightnessByChannelinColorSpace:YUV]\n"
    "limit_to_mask = True\n"
    "to_color_space = YUV\n"
    "\n"
    "[SaveModule.saveFinalMask]\n"
    "overlay = True\n"
    "[SaveModule.saveMacro]\n"
    "dim = 500\n"
    "[SaveModule.saveThumbnails]\n"
    "image_work_size = 1.25x\n"
    "small_dim = 500\n"
    "\n"
    "[BlurDetectionModule.identifyBlurryRegions]\n"
    "image_work_size = 2.5x\n"
    "blur_radius = 100\n"
    "blur_threshold = .15\n"
    "\n"
    "[BasicModule.finalComputations]\n"
    "[BasicModule.finalProcessingSpur]\n"
    "disk_radius = 5\n"
    "[BasicModule.finalProcessingArea]\n"
    "area_threshold = 10000\n"
    "\n"
    "[DeconvolutionModule.separateStains]\n"
    "; HistoQC lists the other stains here as comments\n"
    "stain = hed_from_rgb\n"
    "use_mask = True\n"
    "\n"
    "[BubbleRegionByRegion.detectSmoothness]\n"
    "threshold = .01\n"
    "kernel_size = 10\n"
    "min_object_size = 500\n";

/* Writes the built-in example builtin_name to dir/rel (making folders). */
static int
write_example (const char *dir, const char *rel, const char *builtin_name)
{
    char path[1024], sub[1024];
    snprintf (path, sizeof path, "%s/%s", dir, rel);
    snprintf (sub, sizeof sub, "%s", path);
    for (char *s = sub + strlen (dir) + 1; (s = strchr (s, '/')); s++) {
        *s = '\0';
        mkdir (sub, 0700);
        *s = '/';
    }
    qc_rgb_t *img = qc_example_read_rgb (builtin_name, err, sizeof err);
    unsigned char *data = NULL;
    size_t size = 0;
    int rc = img && qc_png_encode_rgb (img, &data, &size, err, sizeof err) == 0
             && qc_png_write_file (path, data, size, err, sizeof err) == 0
             ? 0 : -1;
    free (data);
    qc_rgb_destroy (&img);
    return rc;
}

/* The #dataset: columns of HistoQC's results.tsv, tab-separated. */
static char *
reference_columns (void)
{
    char path[1024];
    snprintf (path, sizeof path, "%s/reference/histoqc/results.tsv",
              check_shared_dir ());
    FILE *f = fopen (path, "r");
    if (!f)
        return NULL;
    char *line = NULL, *found = NULL;
    size_t cap = 0;
    while (!found && getline (&line, &cap, f) > 0)
        if (strncmp (line, "#dataset:", 9) == 0) {
            line[strcspn (line, "\r\n")] = '\0';
            found = strdup (line + 9);
        }
    free (line);
    fclose (f);
    return found;
}

/* HistoQC's header as it writes it for a cohort whose first slide has
 * tissue: its separateStains adds deconv_cN_mean before _std then (std
 * first for an empty mask, as in its bundled results.tsv, whose first
 * slide had none); this project writes mean first, always. In place:
 * each "deconv_cN_std\tdeconv_cN_mean" becomes "..._mean\t..._std". */
static void
deconv_mean_first (char *cols)
{
    for (int c = 0; c < 3; c++) {
        char was[64], now[64];
        snprintf (was, sizeof was, "deconv_c%d_std\tdeconv_c%d_mean", c, c);
        snprintf (now, sizeof now, "deconv_c%d_mean\tdeconv_c%d_std", c, c);
        char *at = strstr (cols, was);
        if (at)
            memcpy (at, now, strlen (now));   /* the same length */
    }
}

static void
test_columns (const qc_pipeline_t *p)
{
    char *want = reference_columns ();
    CHECK (want != NULL, "reference results.tsv");
    if (!want)
        return;
    deconv_mean_first (want);
    size_t len = 1;
    for (size_t i = 0; i < qc_pipeline_ncolumns (p); i++)
        len += strlen (qc_pipeline_column (p, i)) + 1;
    char *got = calloc (1, len);
    for (size_t i = 0; got && i < qc_pipeline_ncolumns (p); i++) {
        if (i)
            strcat (got, "\t");
        strcat (got, qc_pipeline_column (p, i));
    }
    CHECK (got && strcmp (got, want) == 0, "columns\n  ours:    %s\n  HistoQC: %s",
           got ? got : "?", want);
    free (got);
    free (want);
}

/* The result's file suffix decodes to the pixels of HistoQC's own file
 * of that name in ../shared/reference/histoqc. */
static int
same_as_reference (const qc_result_t *r, const char *slide, const char *suffix)
{
    char path[1024], e[256];
    snprintf (path, sizeof path, "%s/reference/histoqc/%s/%s%s",
              check_shared_dir (), slide, slide, suffix);
    const qc_file_t *f = qc_result_file (r, suffix);
    qc_rgb_t *want = qc_png_read_rgb (path, e, sizeof e);
    qc_rgb_t *got = f ? qc_png_decode_rgb (f->data, f->size, e, sizeof e) : NULL;
    int same = want && got && want->w == got->w && want->h == got->h
               && memcmp (want->px, got->px, (size_t) want->w * want->h * 3) == 0;
    if (!same)
        printf ("  %s%s: %s\n", slide, suffix, !want ? "no reference"
                : !got ? "not written" : "pixels differ");
    qc_rgb_destroy (&want);
    qc_rgb_destroy (&got);
    return same;
}

static void
test_real (const qc_pipeline_t *p)
{
    qc_result_t *r = qc_result_new ();
    char path[1024];
    static const char *const cmu[] = {
        "CMU-1-Small-Region.svs", "CMU-1-Small-Region-pyramid.svs"
    };
    for (size_t i = 0; r && i < 2; i++) {
        slide_path (path, sizeof path, "real", cmu[i]);
        CHECK (qc_pipeline_run (p, path, r) == 0, "%s: %s", cmu[i],
               r->error ? r->error : "");
        printf ("%s: pen_markings %s, bright %s, blurry_removed_percent %s, "
                "pixels_to_use %s (HistoQC: 1.0, 0)\n", cmu[i],
                get (r, "pen_markings"), get (r, "bright"),
                get (r, "blurry_removed_percent"), get (r, "pixels_to_use"));
        /* HistoQC's own failure, kept by its faithful blur module. */
        CHECK (strcmp (get (r, "blurry_removed_percent"), "1.0") == 0, "%s: %s",
               cmu[i], get (r, "blurry_removed_percent"));
        CHECK (strcmp (get (r, "pixels_to_use"), "0") == 0, "%s", cmu[i]);
        CHECK (r->warnings && strstr (r->warnings, "NO tissue remains"), "%s",
               cmu[i]);
    }
    if (r) {
        slide_path (path, sizeof path, "real", "TCGA-CR-7395-pyramid.svs");
        CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
        double bright = atof (get (r, "bright"));
        long use = atol (get (r, "pixels_to_use"));
        printf ("TCGA-CR-7395-pyramid.svs: bright %s (HistoQC 0.3712), "
                "blurry_removed_percent %s (HistoQC 0.6613), pixels_to_use %ld "
                "(HistoQC 13567)\n", get (r, "bright"),
                get (r, "blurry_removed_percent"), use);
        /* HistoQC's image, bit for bit: the level read whole and shrunk
         * as PIL's thumbnail (image_resample's default, lanczos). From
         * it the kept tissue is HistoQC's to the pixel; bright and the
         * blur step differ a little, since the pen and coverslip
         * classifiers learn from the project's examples, not HistoQC's
         * files, and take other edge pixels first. */
        CHECK (use == 13567, "pixels_to_use %ld (HistoQC 13567)", use);
        CHECK (fabs (bright - 0.3712) < 0.002, "bright %f", bright);
        CHECK (fabs (atof (get (r, "blurry_removed_percent")) - 0.6613) < 0.02,
               "blurry %s", get (r, "blurry_removed_percent"));
        static const char *const same[] = {
            "_thumb.png", "_thumb_small.png", "_mask_use.png", "_fuse.png",
            "_deconv_c0.png", "_deconv_c1.png", "_deconv_c2.png", NULL
        };
        for (int i = 0; same[i]; i++)
            CHECK (same_as_reference (r, "TCGA-CR-7395-pyramid.svs", same[i]),
                   "TCGA %s differs from HistoQC's", same[i]);
        static const char *const files[] = {
            "_mask_use.png", "_fuse.png", "_thumb.png", "_thumb_small.png",
            "_pen_markings.png", "_coverslip_edge.png", "_blurry.png",
            "_hist.png", "_deconv_c0.png", "_flat.png", NULL
        };
        for (int i = 0; files[i]; i++)
            CHECK (qc_result_file (r, files[i]), "TCGA: no %s", files[i]);
        /* No magnification: a reason, as HistoQC's TypeError was not. */
        slide_path (path, sizeof path, "real", "TCGA-CR-7395-01A-01-TS1.svs");
        CHECK (qc_pipeline_run (p, path, r) == -1 && r->error
               && strstr (r->error, "magnification"), "%s",
               r->error ? r->error : "passed");
        slide_path (path, sizeof path, "real", "test3-DAPI-2.ndpi");
        CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
        CHECK (strcmp (get (r, "pixels_to_use"), "0") == 0, "DAPI: %s",
               get (r, "pixels_to_use"));
    }
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
    char dir[] = "/tmp/qc-histoqc-config-XXXXXX";
    if (!mkdtemp (dir)) {
        CHECK (0, "mkdtemp");
        return check_done ("histoqc_config");
    }
    CHECK (write_example (dir, "pen/1k_version/pen_green.png",
                          "builtin/pen_markings_1.png") == 0
           && write_example (dir, "pen/1k_version/pen_green_mask.png",
                             "builtin/pen_markings_1_mask.png") == 0
           && write_example (dir, "models/coverslip_edge_he/coverslip_edge.png",
                             "builtin/coverslip_edge_1.png") == 0
           && write_example (dir, "models/coverslip_edge_he/coverslip_edge_mask.png",
                             "builtin/coverslip_edge_1_mask.png") == 0,
           "example files: %s", err);
    char data[1024];
    snprintf (data, sizeof data, "%s/reference/histoqc/data", check_shared_dir ());
    size_t cap = sizeof config_fmt + 8 * strlen (dir) + 4 * strlen (data);
    char *text = malloc (cap);
    if (text)
        snprintf (text, cap, config_fmt, dir, data);
    qc_pipeline_t *p = text ? qc_pipeline_new (text, err, sizeof err) : NULL;
    CHECK (p != NULL, "HistoQC's config refused: %s", err);
    if (p) {
        const char *steps = qc_pipeline_description (p);
        int n = 1;
        for (const char *s = steps; (s = strchr (s, ' ')); s++)
            n++;
        CHECK (n == 23, "%d steps: %s", n, steps);
        test_columns (p);
        test_real (p);
        test_odd (p);
    }
    /* A misspelt parameter in the same config is refused by name. */
    if (text) {
        char *bad = strstr (text, "blur_threshold");
        if (bad)
            memcpy (bad, "blur_treshold_", 14);
        qc_pipeline_t *q = qc_pipeline_new (text, err, sizeof err);
        CHECK (!q && strstr (err, "blur_treshold_"), "%s", q ? "accepted" : err);
        qc_pipeline_destroy (&q);
    }
    qc_pipeline_destroy (&p);
    free (text);
    char cmd[1100];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK (system (cmd) == 0);
    return check_done ("histoqc_config");
}
