/* The blur, bubble and texture steps in a pipeline on real slides:
 *
 *  - HistoQC's config.ini blur (2.5x, blur_radius 100, blur_threshold .15)
 *    removes all tissue of CMU-1-Small-Region, as HistoQC did (its
 *    reference results.tsv: blurry_removed_num_regions 1,
 *    blurry_removed_percent 1.0, the "NO tissue remains" warning) and
 *    writes _blurry.png at the mask's size;
 *  - identifyBlurryRegionsLocal on the same slide and on TCGA-CR-7395
 *    removes under 1%, fills the same columns and file;
 *  - detectSmoothness: flat_areas 0.0 on these slides (as HistoQC's
 *    reference), _flat.png written;
 *  - estimateGreyComatrixFeatures: its columns (prefix, feats), numbers in
 *    range and the same on a second run;
 *  - bad parameters refused when the pipeline is built, naming them. */
#include <math.h>

#include "kernels/png/png_io.h"
#include "tests/unit/pipeline_fixtures.h"

#define HEAD                                                               \
    "[pipeline]\n"                                                         \
    "steps= BasicModule.getBasicStats\n"                                   \
    "    LightDarkModule.getIntensityThresholdPercent:tissue\n"            \
    "    BubbleRegionByRegion.detectSmoothness\n"                          \
    "    MorphologyModule.removeFatlikeTissue\n"                           \
    "    MorphologyModule.fillSmallHoles\n"                                \
    "    MorphologyModule.removeSmallObjects\n"                            \
    "    %s\n"                                                             \
    "    LocalTextureEstimationModule.estimateGreyComatrixFeatures\n"      \
    "[LightDarkModule.getIntensityThresholdPercent:tissue]\n"              \
    "name: bright\nupper_threshold: .9\nlower_std: 10\n"                   \
    "[BubbleRegionByRegion.detectSmoothness]\n"                            \
    "threshold: .01\nkernel_size: 10\nmin_object_size: 500\n"             \
    "[MorphologyModule.removeSmallObjects]\nmin_size: 64\n"                \
    "[MorphologyModule.removeFatlikeTissue]\nkernel_size: 10\n"            \
    "max_keep_size: 1000\nfat_cell_size: 64\n"                             \
    "[MorphologyModule.fillSmallHoles]\nmin_size: 1000\n"                  \
    "[LocalTextureEstimationModule.estimateGreyComatrixFeatures]\n"        \
    "prefix: tex\nfeats: contrast:ASM:correlation\n"

static qc_pipeline_t *
pipeline (const char *blur_step, const char *blur_section)
{
    char text[4096];
    snprintf (text, sizeof text, HEAD "%s", blur_step, blur_section);
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    return p;
}

/* The file decoded, with its size checked against w x h. */
static void
check_png (const qc_result_t *r, const char *name, int w, int h)
{
    const qc_file_t *f = qc_result_file (r, name);
    CHECK (f != NULL, "no %s", name);
    if (!f)
        return;
    qc_rgb_t *img = qc_png_decode_rgb (f->data, f->size, err, sizeof err);
    CHECK (img && img->w == w && img->h == h, "%s: %d x %d", name,
           img ? img->w : -1, img ? img->h : -1);
    qc_rgb_destroy (&img);
}

static qc_result_t *
run (const qc_pipeline_t *p, const char *name)
{
    char path[1024];
    slide_path (path, sizeof path, "real", name);
    qc_result_t *r = qc_result_new ();
    int rc = p ? qc_pipeline_run (p, path, r) : -1;
    CHECK (rc == 0 && r->ok, "%s: %s", name, r->error ? r->error : "?");
    return r;
}

static void
test_histoqc_blur (void)
{
    qc_pipeline_t *p = pipeline ("BlurDetectionModule.identifyBlurryRegions",
                                 "[BlurDetectionModule.identifyBlurryRegions]\n"
                                 "image_work_size = 2.5x\nblur_radius: 100\n"
                                 "blur_threshold: .15\n");
    qc_result_t *r = run (p, "CMU-1-Small-Region.svs");
    printf ("HistoQC blur, CMU-1-Small-Region: regions %s, percent %s\n",
            get (r, "blurry_removed_num_regions"),
            get (r, "blurry_removed_percent"));
    CHECK (strcmp (get (r, "blurry_removed_percent"), "1.0") == 0);
    CHECK (strcmp (get (r, "blurry_removed_num_regions"), "1") == 0);
    CHECK (strcmp (get (r, "blurry_removed_max_area"), "0") != 0);
    CHECK (r->warnings && strstr (r->warnings, "After BlurDetectionModule."
                                  "identifyBlurryRegions NO tissue remains "
                                  "detectable! Downstream modules likely to "
                                  "be incorrect/fail"));
    CHECK (strcmp (get (r, "flat_areas"), "0.0") == 0, "flat_areas %s",
           get (r, "flat_areas"));
    check_png (r, "_blurry.png", 138, 185);   /* the 1.25x mask's size */
    check_png (r, "_flat.png", 138, 185);
    /* Texture of an empty mask: HistoQC's warning, and -100 in each
       column (HistoQC's value for what cannot be computed) */
    CHECK (strstr (r->warnings ? r->warnings : "", "LocalTextureEstimation"
                   "Module.estimateGreyComatrixFeatures:tex_ Can not "
                   "estimate the empty mask") != NULL);
    CHECK (strcmp (get (r, "tex_contrast"), "-100") == 0
           && strcmp (get (r, "tex_correlation_std"), "-100") == 0, "tex_contrast %s",
           get (r, "tex_contrast"));
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

static void
test_local_blur (void)
{
    qc_pipeline_t *p = pipeline ("BlurDetectionModule."
                                 "identifyBlurryRegionsLocal", "");
    const char *names[2] = { "CMU-1-Small-Region.svs",
                             "TCGA-CR-7395-pyramid.svs" };
    for (int k = 0; p && k < 2; k++) {
        qc_result_t *r = run (p, names[k]);
        double pct = strtod (get (r, "blurry_removed_percent"), NULL);
        printf ("local blur, %s: regions %s, percent %s; tex_contrast %s, "
                "tex_ASM %s, tex_correlation %s\n", names[k],
                get (r, "blurry_removed_num_regions"),
                get (r, "blurry_removed_percent"), get (r, "tex_contrast"),
                get (r, "tex_ASM"), get (r, "tex_correlation"));
        CHECK (pct >= 0 && pct < 0.01, "%s: %g removed", names[k], pct);
        CHECK (qc_result_get (r, "blurry_removed_mean_area") != NULL);
        check_png (r, "_blurry.png", k ? 278 : 138, k ? 223 : 185);
        double c = strtod (get (r, "tex_contrast"), NULL);
        double a = strtod (get (r, "tex_ASM"), NULL);
        double cc = strtod (get (r, "tex_correlation"), NULL);
        CHECK (c > 0 && c < 49 && a > 0 && a <= 1 && cc >= -1 && cc <= 1,
               "%g %g %g", c, a, cc);
        CHECK (qc_result_get (r, "tex_contrast_std") != NULL);
        CHECK (qc_result_get (r, "tex_dissimilarity") == NULL);
        /* Deterministic: a second run gives the same strings. */
        qc_result_t *again = run (p, names[k]);
        const char *keys[] = { "blurry_removed_percent", "tex_contrast",
                               "tex_correlation_std", "flat_areas" };
        for (int i = 0; i < 4; i++)
            CHECK (strcmp (get (r, keys[i]), get (again, keys[i])) == 0,
                   "%s differs", keys[i]);
        qc_result_destroy (&again);
        qc_result_destroy (&r);
    }
    /* The columns the pipeline announces for results.tsv. */
    int seen = 0;
    for (size_t i = 0; p && i < qc_pipeline_ncolumns (p); i++) {
        const char *c = qc_pipeline_column (p, i);
        seen += strcmp (c, "flat_areas") == 0 || strcmp (c, "tex_ASM") == 0
             || strcmp (c, "tex_correlation_std") == 0
             || strcmp (c, "blurry_removed_percent") == 0;
    }
    CHECK (seen == 4, "%d of 4 columns announced", seen);
    qc_pipeline_destroy (&p);
}

static void
test_bad_params (void)
{
    static const struct { const char *section, *needle; } cases[] = {
        { "[BlurDetectionModule.identifyBlurryRegionsLocal]\nwindow = 30\n",
          "window" },
        { "[BlurDetectionModule.identifyBlurryRegionsLocal]\n"
          "relative_threshold = 2\n", "relative_threshold" },
        { "[BlurDetectionModule.identifyBlurryRegionsLocal]\n"
          "image_work_size = fast\n", "image_work_size" },
        { "[BlurDetectionModule.identifyBlurryRegionsLocal]\n"
          "mask_statistics = most\n", "mask_statistics" },
        { "[BlurDetectionModule.identifyBlurryRegionsLocal]\nsigma = 3\n",
          "sigma" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char text[4096];
        snprintf (text, sizeof text, HEAD "%s",
                  "BlurDetectionModule.identifyBlurryRegionsLocal",
                  cases[k].section);
        qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
        CHECK (p == NULL && strstr (err, cases[k].needle), "case %zu: %s", k,
               p ? "accepted" : err);
        qc_pipeline_destroy (&p);
    }
    const char *others[] = {
        "[BlurDetectionModule.identifyBlurryRegions]\nblur_radius = -1\n",
        "[BlurDetectionModule.identifyBlurryRegions]\nblur_radius = 7.5\n",
        "[BubbleRegionByRegion.detectSmoothness]\nkernel_size = 0\n",
        "[LocalTextureEstimationModule.estimateGreyComatrixFeatures]\n"
        "feats = contrast:sharpness\n",
        "[LocalTextureEstimationModule.estimateGreyComatrixFeatures]\n"
        "nlevels = 1\n",
    };
    for (size_t k = 0; k < sizeof others / sizeof *others; k++) {
        char text[4096];
        /* HEAD already has the smoothness and texture sections: replace
         * them by building a pipeline without HEAD's sections. */
        snprintf (text, sizeof text, "[pipeline]\nsteps= "
                  "BubbleRegionByRegion.detectSmoothness\n"
                  "    BlurDetectionModule.identifyBlurryRegions\n"
                  "    LocalTextureEstimationModule."
                  "estimateGreyComatrixFeatures\n%s", others[k]);
        qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
        CHECK (p == NULL, "other case %zu accepted", k);
        qc_pipeline_destroy (&p);
    }
}

int
main (void)
{
    quiet_logs ();
    test_histoqc_blur ();
    test_local_blur ();
    test_bad_params ();
    return check_done ("test_blur_modules");
}
