/* The histogram, brightness/contrast and deconvolution steps on slides:
 *
 *  - HistoQC's own numbers, reproduced: from the image and final mask
 *    HistoQC saved for TCGA-CR-7395-pyramid.svs (_thumb.png,
 *    _mask_use.png in ../shared/reference), the arithmetic gives the
 *    values of its results.tsv row and its _deconv_c*.png images;
 *  - the steps in a pipeline on a real slide: columns (prefix, colour
 *    space suffix, template names), files (_hist.png 640 x 480,
 *    _deconv_c*.png at the mask's size), deterministic numbers;
 *  - an empty mask: HistoQC's -100 values and warnings, exactly;
 *  - config errors named before any slide is read. */
#include <math.h>

#include "kernels/modules/bright_algo.h"
#include "kernels/modules/deconv_algo.h"
#include "kernels/modules/hist_algo.h"
#include "kernels/png/png_io.h"
#include "tests/unit/pipeline_fixtures.h"

#define REF_SLIDE "TCGA-CR-7395-pyramid.svs"

/* ---- HistoQC's results.tsv ------------------------------------------- */

static char ref_line[1 << 16], ref_head[1 << 16];
static char *ref_hcols[256], *ref_rcols[256];
static size_t ref_n;

static int
load_reference_row (void)
{
    char path[1024];
    snprintf (path, sizeof path, "%s/reference/histoqc/results.tsv",
              check_shared_dir ());
    FILE *f = fopen (path, "r");
    if (!f)
        return -1;
    size_t nh = 0, nr = 0;
    while (fgets (ref_line, sizeof ref_line, f)) {
        ref_line[strcspn (ref_line, "\n")] = '\0';
        if (strncmp (ref_line, "#dataset:", 9) == 0) {
            strcpy (ref_head, ref_line + 9);
            for (char *t = strtok (ref_head, "\t"); t && nh < 256;
                 t = strtok (NULL, "\t"))
                ref_hcols[nh++] = t;
        } else if (strncmp (ref_line, REF_SLIDE "\t", strlen (REF_SLIDE) + 1) == 0) {
            char *s = ref_line;
            for (char *tab; nr < 256; s = tab + 1) {
                ref_rcols[nr++] = s;
                if (!(tab = strchr (s, '\t')))
                    break;
                *tab = '\0';
            }
            break;
        }
    }
    fclose (f);
    ref_n = nr < nh ? nr : nh;
    return nr ? 0 : -1;
}

/* The value HistoQC wrote under column, as a string ("" if none). */
static const char *
ref_get (const char *column)
{
    for (size_t i = 0; i < ref_n; i++)
        if (strcmp (ref_hcols[i], column) == 0)
            return ref_rcols[i];
    return "";
}

static int
near_ref (double got, const char *column, double rel)
{
    const char *s = ref_get (column);
    double want = strtod (s, NULL);
    int ok = *s && fabs (got - want) <= rel * fabs (want);
    if (!ok)
        fprintf (stderr, "  %s: got %.17g, HistoQC %s\n", column, got, s);
    return ok;
}

static int
prints_ref (double got, const char *column)
{
    char buf[QC_PYFLOAT_LEN];
    qc_pyfloat (got, buf, sizeof buf);
    int ok = strcmp (buf, ref_get (column)) == 0;
    if (!ok)
        fprintf (stderr, "  %s: got %s, HistoQC %s\n", column, buf,
                 ref_get (column));
    return ok;
}

static qc_rgb_t *
ref_png (const char *suffix)
{
    char path[1024];
    snprintf (path, sizeof path, "%s/reference/histoqc/%s/%s_%s.png",
              check_shared_dir (), REF_SLIDE, REF_SLIDE, suffix);
    return qc_png_read_rgb (path, err, sizeof err);
}

static void
test_reference (void)
{
    qc_rgb_t *img = ref_png ("thumb");
    qc_rgb_t *m8 = ref_png ("mask_use");
    CHECK (img && m8 && load_reference_row () == 0, "%s", err);
    if (!img || !m8 || !ref_n)
        goto out;
    const qc_ops_t *ops = qc_ops_cpu ();
    qc_mask_t *mask = qc_mask_new (img->w, img->h);
    qc_fimg_t *gray = qc_fimg_new (img->w, img->h);
    CHECK (mask && gray && ops->rgb_to_gray (img, gray) == 0);
    if (!mask || !gray)
        goto out2;
    size_t used = 0;
    for (size_t i = 0; i < qc_npix (img->w, img->h); i++)
        used += mask->px[i] = m8->px[i * 3] > 127;
    CHECK (used == 13567, "%zu", used);     /* pixels_to_use */

    qc_contrast_t c;
    CHECK (qc_contrast_stats (ops, gray, mask, mask, &c) == 0 && !c.empty);
    CHECK (near_ref (c.tenengrad, "tenenGrad_contrast", 1e-6));
    CHECK (near_ref (c.michelson, "michelson_contrast", 1e-6));
    CHECK (near_ref (c.rms, "rms_contrast", 1e-6));
    qc_mean_std_t ms, ch[3];
    CHECK (qc_plane_mean_std (ops, gray, mask, &ms) == 0);
    CHECK (near_ref (ms.mean, "grayscale_brightness", 1e-6));
    CHECK (near_ref (ms.std, "grayscale_brightness_std", 1e-6));
    /* Integer channels: the very digits HistoQC printed. */
    CHECK (qc_channel_mean_std (ops, img, QC_CS_RGB, mask, ch) == 0);
    CHECK (prints_ref (ch[0].mean, "chan1_brightness"));
    CHECK (prints_ref (ch[1].mean, "chan2_brightness"));
    CHECK (prints_ref (ch[2].mean, "chan3_brightness"));
    CHECK (near_ref (ch[0].std, "chan1_brightness_std", 1e-13));
    CHECK (near_ref (ch[1].std, "chan2_brightness_std", 1e-13));
    CHECK (near_ref (ch[2].std, "chan3_brightness_std", 1e-13));
    CHECK (qc_channel_mean_std (ops, img, QC_CS_YUV, mask, ch) == 0);
    static const char *const yuv[6] = {
        "chan1_brightness_YUV", "chan1_brightness_std_YUV",
        "chan2_brightness_YUV", "chan2_brightness_std_YUV",
        "chan3_brightness_YUV", "chan3_brightness_std_YUV" };
    for (int k = 0; k < 3; k++) {
        CHECK (near_ref (ch[k].mean, yuv[2 * k], 1e-6));
        CHECK (near_ref (ch[k].std, yuv[2 * k + 1], 1e-6));
    }

    qc_mat3_t hed;
    qc_deconv_stats_t st;
    qc_fimg_t *p[3] = { qc_fimg_new (img->w, img->h), qc_fimg_new (img->w, img->h),
                        qc_fimg_new (img->w, img->h) };
    CHECK (p[0] && p[1] && p[2] && qc_stain_matrix ("hed_from_rgb", &hed) == 0
           && qc_deconv_stains (ops, img, &hed, mask, &st, p) == 0);
    for (int k = 0; p[0] && p[1] && p[2] && k < 3; k++) {
        char col[32], file[32];
        /* HistoQC writes each row in that slide's own order but takes
         * the header from the first slide (which had no tissue and added
         * std first): in its TCGA row the mean is under _std and the std
         * under _mean. */
        snprintf (col, sizeof col, "deconv_c%d_std", k);
        CHECK (near_ref (st.mean[k], col, 1e-5));
        snprintf (col, sizeof col, "deconv_c%d_mean", k);
        CHECK (near_ref (st.std[k], col, 1e-5));
        snprintf (file, sizeof file, "deconv_c%d", k);
        qc_rgb_t *ref = ref_png (file);
        CHECK (ref && ref->w == img->w && ref->h == img->h);
        size_t off = 0;
        int worst = 0;
        for (size_t i = 0; ref && i < qc_npix (img->w, img->h); i++) {
            int d = abs ((int) qc_px_u8_from_unit (p[k]->px[i]) - ref->px[i * 3]);
            off += d != 0;
            worst = d > worst ? d : worst;
        }
        /* float32 planes: a rare pixel rounds the other way. */
        CHECK (worst <= 1 && off <= 20, "c%d: %zu pixels differ, by up to %d",
               k, off, worst);
        qc_rgb_destroy (&ref);
    }
    for (int k = 0; k < 3; k++)
        qc_fimg_destroy (&p[k]);
out2:
    qc_mask_destroy (&mask);
    qc_fimg_destroy (&gray);
out:
    qc_rgb_destroy (&img);
    qc_rgb_destroy (&m8);
}

/* ---- in a pipeline --------------------------------------------------- */

#define STEPS                                                                \
    "[pipeline]\n"                                                           \
    "steps= LightDarkModule.getIntensityThresholdPercent:tissue\n"           \
    "    HistogramModule.compareToTemplates\n"                               \
    "    HistogramModule.getHistogram\n"                                     \
    "    BrightContrastModule.getContrast\n"                                 \
    "    BrightContrastModule.getContrast:bg\n"                              \
    "    BrightContrastModule.getBrightnessGray\n"                           \
    "    BrightContrastModule.getBrightnessByChannelinColorSpace:RGB\n"      \
    "    BrightContrastModule.getBrightnessByChannelinColorSpace:YUV\n"      \
    "    DeconvolutionModule.separateStains\n"                               \
    "[BaseImage.BaseImage]\nimage_work_size = 1.25x\n"                       \
    "[BrightContrastModule.getContrast:bg]\nprefix: background\n"            \
    "invert: True\n"                                                         \
    "[BrightContrastModule.getBrightnessByChannelinColorSpace:YUV]\n"        \
    "to_color_space: YUV\n"                                                  \
    "[DeconvolutionModule.separateStains]\nstain: hed_from_rgb\n"

static const char config_tissue[] = STEPS
    "[LightDarkModule.getIntensityThresholdPercent:tissue]\nname: bright\n"
    "upper_threshold: .9\nlower_std: 10\n";

/* A threshold nothing passes: no tissue left for the later steps. */
static const char config_empty[] = STEPS
    "[LightDarkModule.getIntensityThresholdPercent:tissue]\nname: bright\n"
    "upper_threshold: 0\n";

static const char *const expect_columns[] = {
    "template1_MSE_hist", "template2_MSE_hist", "template3_MSE_hist",
    "template4_MSE_hist", "tenenGrad_contrast", "michelson_contrast",
    "rms_contrast", "background_tenenGrad_contrast",
    "background_michelson_contrast", "background_rms_contrast",
    "grayscale_brightness", "grayscale_brightness_std", "chan1_brightness",
    "chan1_brightness_std", "chan2_brightness", "chan2_brightness_std",
    "chan3_brightness", "chan3_brightness_std", "chan1_brightness_YUV",
    "chan1_brightness_std_YUV", "chan2_brightness_YUV",
    "chan2_brightness_std_YUV", "chan3_brightness_YUV",
    "chan3_brightness_std_YUV", "deconv_c0_mean", "deconv_c0_std",
    "deconv_c1_mean", "deconv_c1_std", "deconv_c2_mean", "deconv_c2_std",
};
#define NEXPECT (sizeof expect_columns / sizeof *expect_columns)

static qc_rgb_t *
decode (const qc_result_t *r, const char *name)
{
    const qc_file_t *f = qc_result_file (r, name);
    return f ? qc_png_decode_rgb (f->data, f->size, err, sizeof err) : NULL;
}

static double
num (const qc_result_t *r, const char *key)
{
    return strtod (get (r, key), NULL);
}

static qc_result_t *
run_slide (const qc_pipeline_t *p, const char *name)
{
    char path[1024];
    slide_path (path, sizeof path, "real", name);
    qc_result_t *r = qc_result_new ();
    CHECK (r && qc_pipeline_run (p, path, r) == 0, "%s: %s", name,
           r && r->error ? r->error : "");
    return r;
}

static void
test_pipeline (void)
{
    qc_pipeline_t *p = qc_pipeline_new (config_tissue, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (!p)
        return;
    /* The header: the step's columns in order, after the tissue step's. */
    size_t at = 0;
    for (size_t i = 0; i < qc_pipeline_ncolumns (p); i++)
        if (strcmp (qc_pipeline_column (p, i), "bright") == 0)
            at = i + 1;
    CHECK (at > 0);
    for (size_t k = 0; at && k < NEXPECT; k++)
        CHECK (strcmp (qc_pipeline_column (p, at + k) ? qc_pipeline_column (p, at + k)
                       : "", expect_columns[k]) == 0, "column %zu: %s, want %s",
               at + k, qc_pipeline_column (p, at + k), expect_columns[k]);

    qc_result_t *r = run_slide (p, "CMU-1-Small-Region.svs");
    qc_result_t *again = run_slide (p, "CMU-1-Small-Region.svs");
    if (r && again) {
        for (size_t k = 0; k < NEXPECT; k++) {
            const char *v = get (r, expect_columns[k]);
            char *end;
            double x = strtod (v, &end);
            CHECK (*v && !*end && isfinite (x), "%s = %s", expect_columns[k], v);
            /* Same slide, same numbers. */
            CHECK (strcmp (v, get (again, expect_columns[k])) == 0, "%s", v);
        }
        /* H&E: red brightest, green darkest; YUV's Y in [0, 1]. */
        CHECK (num (r, "chan1_brightness") > num (r, "chan2_brightness"));
        CHECK (num (r, "chan3_brightness") > num (r, "chan2_brightness"));
        CHECK (num (r, "chan1_brightness_YUV") > 0.3
               && num (r, "chan1_brightness_YUV") < 0.95);
        CHECK (num (r, "michelson_contrast") > 0 && num (r, "michelson_contrast") <= 1);
        CHECK (num (r, "rms_contrast") == num (r, "grayscale_brightness_std"));
        /* Glass is flat: the background's gradient per tissue pixel is
         * smaller than the tissue's. */
        CHECK (num (r, "background_tenenGrad_contrast")
               < num (r, "tenenGrad_contrast") * 10);
        CHECK (num (r, "deconv_c0_mean") > 0 && num (r, "deconv_c0_std") > 0);
        CHECK (r->warnings == NULL || !strstr (r->warnings, "NO tissue"),
               "%s", r->warnings);

        qc_rgb_t *hist = decode (r, "_hist.png");
        CHECK (hist && hist->w == 640 && hist->h == 480, "%s", err);
        if (hist) {
            /* Red, green and blue lines were drawn. */
            int seen[3] = { 0, 0, 0 };
            for (size_t i = 0; i < qc_npix (hist->w, hist->h); i++) {
                const uint8_t *q = hist->px + i * 3;
                seen[0] |= q[0] == 255 && q[1] == 0 && q[2] == 0;
                seen[1] |= q[0] == 0 && q[1] == 128 && q[2] == 0;
                seen[2] |= q[0] == 0 && q[1] == 0 && q[2] == 255;
            }
            CHECK (seen[0] && seen[1] && seen[2]);
            if (getenv ("QC_TEST_KEEP")) {
                const qc_file_t *f = qc_result_file (r, "_hist.png");
                qc_png_write_file ("/tmp/stats_hist.png", f->data, f->size,
                                   err, sizeof err);
            }
        }
        qc_rgb_destroy (&hist);
        qc_rgb_t *mask_img = NULL;
        for (int c = 0; c < 3; c++) {
            char name[32];
            snprintf (name, sizeof name, "_deconv_c%d.png", c);
            qc_rgb_t *d = decode (r, name);
            CHECK (d != NULL, "%s", name);
            if (d && !mask_img)
                mask_img = decode (r, "_bright.png");
            /* At the mask's size; full range used. */
            CHECK (d && mask_img && d->w == mask_img->w && d->h == mask_img->h);
            int mx = 0;
            for (size_t i = 0; d && i < qc_npix (d->w, d->h); i++)
                mx = d->px[i * 3] > mx ? d->px[i * 3] : mx;
            CHECK (mx == 255, "%s max %d", name, mx);
            qc_rgb_destroy (&d);
        }
        qc_rgb_destroy (&mask_img);
    }
    qc_result_destroy (&r);
    qc_result_destroy (&again);
    qc_pipeline_destroy (&p);
}

/* With no tissue left, HistoQC's exact strings: the int -100 for the
 * contrasts and stains, -100.0 / 0.0 for brightness, the templates'
 * sums of squares, its three warnings and black stain images. */
static void
test_empty (void)
{
    qc_pipeline_t *p = qc_pipeline_new (config_empty, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (!p)
        return;
    qc_result_t *r = run_slide (p, "CMU-1-Small-Region.svs");
    if (r) {
        static const char *const int100[] = {
            "tenenGrad_contrast", "michelson_contrast", "rms_contrast",
            "background_tenenGrad_contrast", "deconv_c0_std", "deconv_c0_mean",
            "deconv_c1_std", "deconv_c2_mean" };
        for (size_t k = 0; k < sizeof int100 / sizeof *int100; k++)
            CHECK (strcmp (get (r, int100[k]), "-100") == 0, "%s = %s",
                   int100[k], get (r, int100[k]));
        CHECK (strcmp (get (r, "grayscale_brightness"), "-100.0") == 0);
        CHECK (strcmp (get (r, "grayscale_brightness_std"), "0.0") == 0);
        CHECK (strcmp (get (r, "chan2_brightness"), "-100.0") == 0);
        CHECK (strcmp (get (r, "chan3_brightness_std_YUV"), "0.0") == 0);
        /* Each template against zeros: the sum of its squared densities. */
        const qc_hist256_t *t = qc_hist_builtin ("template1");
        double d[60], zero[60] = { 0 };
        char buf[QC_PYFLOAT_LEN];
        CHECK (t && qc_hist_density3 (t, 20, d) == 0);
        CHECK (strcmp (get (r, "template1_MSE_hist"),
                       qc_pyfloat (qc_hist_sq_diff (d, zero, 60), buf,
                                   sizeof buf)) == 0, "%s",
               get (r, "template1_MSE_hist"));
        const char *w = r->warnings ? r->warnings : "";
        CHECK (strstr (w, "HistogramModule.compareToTemplates NO tissue remains "
                       "detectable in mask!") != NULL, "%s", w);
        CHECK (strstr (w, "After BrightContrastModule.getContrast: NO tissue "
                       "remains detected, statistics are impossible to "
                       "compute, defaulting to -100 !") != NULL);
        CHECK (strstr (w, "DeconvolutionModule.separateStains: NO tissue "
                       "remains detectable! Saving Black images") != NULL);
        qc_rgb_t *d0 = decode (r, "_deconv_c2.png");
        int mx = 0;
        for (size_t i = 0; d0 && i < qc_npix (d0->w, d0->h) * 3; i++)
            mx = d0->px[i] > mx ? d0->px[i] : mx;
        CHECK (d0 && mx == 0);
        qc_rgb_destroy (&d0);
        qc_rgb_t *h = decode (r, "_hist.png");
        CHECK (h && h->w == 640);
        qc_rgb_destroy (&h);
    }
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

/* Bad values are refused when the pipeline is built, naming them. */
static void
test_config_errors (void)
{
    static const struct { const char *section, *text, *needle; } bad[] = {
        { "DeconvolutionModule.separateStains", "stain: hed_from_rgbx\n",
          "hed_from_rgbx" },
        { "DeconvolutionModule.separateStains", "use_mask: True\n", "stain" },
        { "HistogramModule.compareToTemplates", "bins: 0\n", "bins" },
        { "HistogramModule.compareToTemplates",
          "templates= builtin:template1\n    /nonexistent/t9.png\n",
          "/nonexistent/t9.png" },
        { "HistogramModule.compareToTemplates", "templates= builtin:other\n",
          "builtin:other" },
        { "HistogramModule.getHistogram", "bins: many\n", "bins" },
        { "BrightContrastModule.getBrightnessByChannelinColorSpace",
          "to_color_space: CMYK\n", "CMYK" },
        { "BrightContrastModule.getContrast", "invert: perhaps\n", "invert" },
        { "BrightContrastModule.getBrightnessGray", "colour: red\n", "colour" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char text[1024];
        snprintf (text, sizeof text, "[pipeline]\nsteps= %s\n[%s]\n%s",
                  bad[k].section, bad[k].section, bad[k].text);
        err[0] = '\0';
        qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
        CHECK (p == NULL && strstr (err, bad[k].needle), "case %zu: %s", k, err);
        qc_pipeline_destroy (&p);
    }
    /* A template file by path: its name makes the column. */
    char text[2048];
    snprintf (text, sizeof text, "[pipeline]\nsteps= "
              "HistogramModule.compareToTemplates\n"
              "[HistogramModule.compareToTemplates]\ntemplates= "
              "%s/textures/he-target.png\n    builtin:template3\n",
              check_shared_dir ());
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    int found = 0;
    for (size_t i = 0; p && i < qc_pipeline_ncolumns (p); i++)
        found += strcmp (qc_pipeline_column (p, i), "he-target_MSE_hist") == 0
                 || strcmp (qc_pipeline_column (p, i), "template3_MSE_hist") == 0;
    CHECK (found == 2);
    qc_pipeline_destroy (&p);

    /* HistoQC's own section, as its config.ini has it, where its
     * ./templates/ files are not: refused, naming the project's own
     * template of that name (another image, other numbers), which was
     * taken silently before; named so, the project's own run */
    static const char histoqc_section[] = "[pipeline]\nsteps= "
        "HistogramModule.compareToTemplates\n"
        "[HistogramModule.compareToTemplates]\nlimit_to_mask: True\nbins: 20\n"
        "templates= ./templates/template1.png\n"
        "           ./templates/template2.png\n"
        "           ./templates/template3.png\n"
        "           ./templates/template4.png\n";
    p = qc_pipeline_new (histoqc_section, err, sizeof err);
    CHECK (p == NULL && strstr (err, "./templates/template1.png")
               && strstr (err, "builtin:template1"), "%s", p ? "accepted" : err);
    qc_pipeline_destroy (&p);
    static const char own_section[] = "[pipeline]\nsteps= "
        "HistogramModule.compareToTemplates\n"
        "[HistogramModule.compareToTemplates]\nlimit_to_mask: True\nbins: 20\n"
        "templates= builtin:template1\n  builtin:template2\n  builtin:template3\n"
        "  builtin:template4\n";
    p = qc_pipeline_new (own_section, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    found = 0;
    for (size_t i = 0; p && i < qc_pipeline_ncolumns (p); i++)
        found += strncmp (qc_pipeline_column (p, i), "template", 8) == 0;
    CHECK (found == 4);
    qc_pipeline_destroy (&p);
}

int
main (void)
{
    quiet_logs ();
    test_reference ();
    test_pipeline ();
    test_empty ();
    test_config_errors ();
    return check_done ("stats_modules_run");
}
