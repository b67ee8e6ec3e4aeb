/* ClassificationModule.pixelWise: the Gaussian naive Bayes model
 * (kernels/classify/gnb.c) fitted from tables with known moments and
 * compared with scikit-learn's formulas written out here; the table
 * read as numpy.loadtxt reads it (header skipped, comments, blank lines,
 * CRLF) and every broken table refused with its line; the step's
 * config refusals; and the step on real slides with HistoQC's own
 * table (../shared/reference/histoqc/data/models/pen_markings_he/he.tsv,
 * read in place): every pixel of _<name>.png against the model's
 * probability computed in double precision from the working image
 * (_thumb.png), the column against the mask, the tissue mask after;
 * and the same with a table of a class that holds two channels at one
 * value (variances of the smoothing alone), whose pixels the float
 * planes must still find. */
#include <math.h>
#include <unistd.h>

#include "kernels/classify/gnb.h"
#include "kernels/png/png_io.h"
#include "tests/unit/pipeline_fixtures.h"

/* ---- the model ------------------------------------------------------- */

static const char table[] =
    "Class\tR\tG\tB\n"
    "0\t10\t20\t30\n"
    "0\t12\t22\t34\n"
    "1\t200\t100\t50\n"
    "1\t210\t90\t70\n"
    "1\t190\t110\t60\n";

/* scikit-learn's GaussianNB.predict_proba[:, 1], written out from its
 * definition (not from gnb.c): priors, means, population variances plus
 * 1e-9 x the largest variance of a channel over all rows. */
static double
sklearn_proba (const double rows[][4], int n, const double x[3])
{
    double label[2] = {rows[0][0], rows[0][0]};
    for (int i = 0; i < n; i++) {
        label[0] = fmin (label[0], rows[i][0]);
        label[1] = fmax (label[1], rows[i][0]);
    }
    double maxvar = 0;
    for (int j = 1; j < 4; j++) {
        double s = 0, ss = 0;
        for (int i = 0; i < n; i++)
            s += rows[i][j];
        for (int i = 0; i < n; i++)
            ss += (rows[i][j] - s / n) * (rows[i][j] - s / n);
        maxvar = fmax (maxvar, ss / n);
    }
    double jll[2];
    for (int c = 0; c < 2; c++) {
        int nc = 0;
        double mean[4] = {0}, var[4] = {0};
        for (int i = 0; i < n; i++)
            if (rows[i][0] == label[c]) {
                nc++;
                for (int j = 1; j < 4; j++)
                    mean[j] += rows[i][j];
            }
        for (int j = 1; j < 4; j++)
            mean[j] /= nc;
        for (int i = 0; i < n; i++)
            if (rows[i][0] == label[c])
                for (int j = 1; j < 4; j++)
                    var[j] += (rows[i][j] - mean[j]) * (rows[i][j] - mean[j]);
        jll[c] = log ((double) nc / n);
        for (int j = 1; j < 4; j++) {
            var[j] = var[j] / nc + 1e-9 * maxvar;
            jll[c] += -0.5 * log (2 * M_PI * var[j])
                      - 0.5 * (x[j - 1] - mean[j]) * (x[j - 1] - mean[j]) / var[j];
        }
    }
    double top = fmax (jll[0], jll[1]);
    return exp (jll[1] - (top + log (exp (jll[0] - top) + exp (jll[1] - top))));
}

static void
test_fit (void)
{
    qc_gnb_t m;
    CHECK (qc_gnb_fit_tsv (table, strlen (table), "t", &m, err, sizeof err) == 0, "%s", err);
    /* the moments by hand: class 0 means (11, 21, 32), variances (1, 1,
       4); class 1 means (200, 100, 60), variances 200/3 each; the
       largest channel variance over all rows is R's */
    double r[5] = {10, 12, 200, 210, 190}, s = 0, ss = 0;
    for (int i = 0; i < 5; i++)
        s += r[i];
    for (int i = 0; i < 5; i++)
        ss += (r[i] - s / 5) * (r[i] - s / 5);
    double eps = 1e-9 * ss / 5;
    CHECK (m.label[0] == 0 && m.label[1] == 1 && m.count[0] == 2 && m.count[1] == 3
           && m.rows == 5);
    CHECK (fabs (m.epsilon - eps) < 1e-18, "epsilon %g, want %g", m.epsilon, eps);
    CHECK (fabs (m.mean[0][0] - 11) < 1e-12 && fabs (m.mean[0][2] - 32) < 1e-12
           && fabs (m.mean[1][1] - 100) < 1e-12 && fabs (m.mean[1][2] - 60) < 1e-12);
    CHECK (fabs (m.var[0][0] - (1 + eps)) < 1e-12 && fabs (m.var[0][2] - (4 + eps)) < 1e-12
           && fabs (m.var[1][0] - (200.0 / 3 + eps)) < 1e-9, "%g %g %g", m.var[0][0],
           m.var[0][2], m.var[1][0]);

    /* probabilities and log odds as scikit-learn's, and the per-channel
       quadratic the ops compute is the same log odds */
    const double rows[5][4] = {{0, 10, 20, 30}, {0, 12, 22, 34}, {1, 200, 100, 50},
                               {1, 210, 90, 70}, {1, 190, 110, 60}};
    double sq[2][3], of[2][3], c;
    CHECK (qc_gnb_squares (&m, sq, of, &c) == 0);
    unsigned seed = 7;
    double worst_p = 0, worst_q = 0;
    for (int k = 0; k < 2000; k++) {
        double x[3];
        for (int j = 0; j < 3; j++) {
            seed = seed * 1103515245u + 12345u;
            x[j] = (seed >> 8) % 256;
        }
        if (k < 5)
            for (int j = 0; j < 3; j++)
                x[j] = rows[k][j + 1];
        double p = qc_gnb_proba (&m, x), want = sklearn_proba (rows, 5, x);
        double lo = qc_gnb_log_odds (&m, x), q = c;
        for (int j = 0; j < 3; j++) {
            double t0 = sq[0][j] * x[j] + of[0][j], t1 = sq[1][j] * x[j] + of[1][j];
            q += t0 * t0 - t1 * t1;
        }
        worst_p = fmax (worst_p, fabs (p - want));
        worst_q = fmax (worst_q, fabs (q - lo) / fmax (1, fabs (lo)));
        if (want > 1e-300 && want < 1 - 1e-12)
            CHECK (fabs (log (p / (1 - p)) - lo) < 1e-6 * fmax (1, fabs (lo)),
                   "log odds %g, probability %g", lo, p);
    }
    printf ("  model of 5 rows: probabilities within %.1e of scikit-learn's formula, "
            "centred squares within %.1e (relative) of the log odds\n", worst_p, worst_q);
    CHECK (worst_p < 1e-12 && worst_q < 1e-9, "%g %g", worst_p, worst_q);
    double x0[3] = {11, 21, 32}, x1[3] = {200, 100, 60};
    CHECK (qc_gnb_proba (&m, x0) < 0.01 && qc_gnb_proba (&m, x1) > 0.99);
    CHECK (isnan (qc_gnb_proba (NULL, x0)) && isnan (qc_gnb_log_odds (&m, NULL))
           && qc_gnb_squares (NULL, sq, of, &c) == -1);

    /* labels of any two values, positive = the greater, in any order */
    const char *swapped = "h\n5\t200\t100\t50\n-2\t10\t20\t30\n5\t210\t90\t70\n"
                          "-2\t12\t22\t34\n5\t190\t110\t60\n";
    qc_gnb_t m2;
    CHECK (qc_gnb_fit_tsv (swapped, strlen (swapped), "t", &m2, err, sizeof err) == 0
           && m2.label[0] == -2 && m2.label[1] == 5 && m2.count[0] == 2
           && fabs (qc_gnb_proba (&m2, x1) - qc_gnb_proba (&m, x1)) < 1e-12, "%s", err);
}

/* ---- reading the table as numpy.loadtxt (delimiter tab, skiprows 1) --- */

static void
accepted (const char *text, size_t rows)
{
    qc_gnb_t m;
    int rc = qc_gnb_fit_tsv (text, strlen (text), "t", &m, err, sizeof err);
    CHECK (rc == 0 && m.rows == rows, "%s: %s (%zu rows)", text, rc ? err : "",
           rc ? 0 : m.rows);
}

static void
refused (const char *text, const char *why)
{
    qc_gnb_t m;
    int rc = qc_gnb_fit_tsv (text, strlen (text), "[S] tsv_file", &m, err, sizeof err);
    CHECK (rc == -1 && strstr (err, why), "want '%s', got '%s'", why, rc ? err : "accepted");
}

static void
test_read (void)
{
    /* the first line is skipped whatever it holds, as skiprows=1 */
    accepted ("0\t1\t1\t1\n0\t10\t20\t30\n1\t200\t100\t50\n", 2);
    /* comments, blank lines, CRLF, spaces around values, no last newline */
    accepted ("Class\tR\tG\tB\r\n# pen\r\n0\t10\t20\t30  # glass\r\n\r\n"
              " 1 \t 200\t100\t50\r\n   \n1\t2.5e2\t90\t70", 3);
    refused ("", "no rows");
    refused ("Class\tR\tG\tB\n", "no rows");
    refused ("h\n1\t1\t2\t3\n1\t4\t5\t6\n", "rows of one class only");
    refused ("h\n0\t1\t2\t3\n1\t4\t5\t6\n2\t7\t8\t9\n", "line 4: a third class (2");
    refused ("h\n0\t1\t2\n1\t4\t5\t6\n", "line 2: 3 values; each row is a class and R, G, B");
    refused ("h\n0\t1\t2\t3\t4\n", "line 2: more than 4 values");
    refused ("h\n0\t1\t2\t3\t\n", "line 2: more than 4 values");
    refused ("h\n0 1 2 3\n", "line 2: value 1 is not a number (values are split by tabs)");
    refused ("h\n0\t1\tgreen\t3\n", "line 2: value 3 is not a number");
    refused ("h\n0\t1\t\t3\n", "line 2: value 3 is not a number");
    refused ("h\n0\t0x10\t2\t3\n", "value 2 is not a number");
    refused ("h\n0\tnan\t2\t3\n", "value 2 is not a number");
    refused ("h\n0\t1\tinf\t3\n", "value 3 is not a number");
    refused ("h\n0\t10\t10\t10\n1\t10\t10\t10\n", "every row holds the same colour");
    refused ("h\n0\t1e308\t1\t1\n0\t-1e308\t2\t2\n1\t3\t3\t3\n", "too far apart");
    refused ("h\r0\t1\t2\t3\r1\tx\t5\t6\r", "[S] tsv_file line 3: value 2");
    const char nul[] = "h\n0\t1\t2\t3\n1\t4\0\t5\t6\n";
    qc_gnb_t m;
    CHECK (qc_gnb_fit_tsv (nul, sizeof nul - 1, "t", &m, err, sizeof err) == -1
           && strstr (err, "line 3"), "%s", err);
    CHECK (qc_gnb_fit_tsv (NULL, 3, "t", &m, err, sizeof err) == -1
           && qc_gnb_fit_tsv (table, 3, "t", NULL, err, sizeof err) == -1);
}

/* ---- the step's config ------------------------------------------------ */

static char he_tsv[1024];

static void
config_refused (const char *body, const char *why)
{
    char text[4096];
    snprintf (text, sizeof text, "[pipeline]\nsteps= ClassificationModule.pixelWise:p\n"
              "[ClassificationModule.pixelWise:p]\n%s", body);
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p == NULL && strstr (err, why), "want '%s', got '%s'", why, p ? "accepted" : err);
    qc_pipeline_destroy (&p);
}

static void
test_config (void)
{
    char body[2048];
    config_refused ("name: pen\n", "tsv_file: not set");
    config_refused ("tsv_file: /nonexistent/he.tsv\n", "/nonexistent/he.tsv");
    snprintf (body, sizeof body, "tsv_file: %s\nthreshold: 1\n", he_tsv);
    config_refused (body, "threshold (line 5): between 0 and 1");
    snprintf (body, sizeof body, "tsv_file: %s\nthreshold: 0\n", he_tsv);
    config_refused (body, "threshold (line 5): between 0 and 1");
    snprintf (body, sizeof body, "tsv_file: %s\nname: a/b\n", he_tsv);
    config_refused (body, "name = 'a/b'");
    snprintf (body, sizeof body, "tsv_file: %s\nmask_statistics: most\n", he_tsv);
    config_refused (body, "mask_statistics");
    snprintf (body, sizeof body, "tsv_file: %s\nunknown_key: 1\n", he_tsv);
    config_refused (body, "unknown_key");
    /* a table that is not one: the line named, before any slide */
    char bad[] = "/tmp/qc-pixelwise-XXXXXX";
    int fd = mkstemp (bad);
    const char text[] = "Class\tR\tG\tB\n1\t31\t140\t115\n0\t245\t245\n";
    CHECK (fd >= 0 && write (fd, text, sizeof text - 1) == (ssize_t) (sizeof text - 1));
    if (fd >= 0)
        close (fd);
    snprintf (body, sizeof body, "tsv_file: %s\n", bad);
    config_refused (body, "line 3: 3 values");
    unlink (bad);

    /* the column is name= (default HistoQC's classTask) */
    snprintf (body, sizeof body, "[pipeline]\nsteps= ClassificationModule.pixelWise\n"
              "[ClassificationModule.pixelWise]\ntsv_file: %s\n", he_tsv);
    qc_pipeline_t *p = qc_pipeline_new (body, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    int found = 0;
    for (size_t i = 0; p && i < qc_pipeline_ncolumns (p); i++)
        found |= strcmp (qc_pipeline_column (p, i), "classTask") == 0;
    CHECK (found, "no classTask column");
    qc_pipeline_destroy (&p);
}

/* ---- real slides with HistoQC's table ---------------------------------- */

static qc_rgb_t *
decode (const qc_result_t *r, const char *suffix)
{
    const qc_file_t *f = qc_result_file (r, suffix);
    return f ? qc_png_decode_rgb (f->data, f->size, err, sizeof err) : NULL;
}

/* The step with the table at tsv on the first nslides slides, at the
 * first nt thresholds: every pixel against double precision. The most
 * common colour of the first slide's tissue into mode (NULL: not
 * wanted). */
static void
slides_against_double (const char *tsv, const char *name, size_t nt, size_t nslides,
                       int mode[3])
{
    qc_gnb_t m;
    FILE *f = fopen (tsv, "rb");
    CHECK (f != NULL, "%s", tsv);
    if (!f)
        return;
    char buf[65536];
    size_t n = fread (buf, 1, sizeof buf, f);
    fclose (f);
    CHECK (qc_gnb_fit_tsv (buf, n, name, &m, err, sizeof err) == 0, "%s", err);
    printf ("  %s: %zu rows, classes %g (%zu rows) and %g (%zu rows)\n", name, m.rows,
            m.label[0], m.count[0], m.label[1], m.count[1]);
    const double thresholds[] = {0.5, 0.9};
    static const char *slides[] = {"CMU-1-Small-Region.svs", "TCGA-CR-7395-pyramid.svs"};
    qc_result_t *r = qc_result_new ();
    for (size_t t = 0; t < nt; t++) {
        char text[4096];
        /* the tissue step first: pixelWise limits what it finds to the
           tissue mask, and the column is of the tissue before it */
        snprintf (text, sizeof text,
                  "[pipeline]\nsteps= LightDarkModule.getIntensityThresholdPercent:tissue\n"
                  "    ClassificationModule.pixelWise:pen\n    SaveModule.saveThumbnails\n"
                  "    SaveModule.saveMask\n"
                  "[BaseImage.BaseImage]\nimage_work_size = 1.25x\n"
                  "[LightDarkModule.getIntensityThresholdPercent:tissue]\nname: bright\n"
                  "upper_threshold: .9\n"
                  "[ClassificationModule.pixelWise:pen]\nname: pen\ntsv_file: %s\n"
                  "threshold: %g\n[SaveModule.saveMask]\nsuffix: after\n",
                  tsv, thresholds[t]);
        qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
        CHECK (p != NULL, "%s", err);
        for (size_t s = 0; p && s < nslides; s++) {
            char path[1024];
            slide_path (path, sizeof path, "real", slides[s]);
            CHECK (qc_pipeline_run (p, path, r) == 0, "%s: %s", slides[s],
                   r->error ? r->error : "");
            qc_rgb_t *img = decode (r, "_thumb.png"), *pen = decode (r, "_pen.png");
            qc_rgb_t *tissue = decode (r, "_bright.png"), *after = decode (r, "_after.png");
            CHECK (img && pen && tissue && after && img->w == pen->w && img->h == pen->h
                   && after->w == pen->w, "%s: the images", slides[s]);
            size_t npx = img && pen && tissue && after ? qc_npix (img->w, img->h) : 0;
            if (mode && s == 0 && t == 0 && npx) {
                /* the colour most pixels of the tissue have, counted
                   exactly (glass is not looked at) */
                uint32_t *hist = calloc ((size_t) 1 << 24, sizeof *hist);
                size_t best = 0;
                for (size_t i = 0; hist && i < npx; i++) {
                    if (tissue->px[3 * i] != 0)
                        continue;
                    size_t key = ((size_t) img->px[3 * i] << 16)
                                 | ((size_t) img->px[3 * i + 1] << 8) | img->px[3 * i + 2];
                    if (++hist[key] > hist[best])
                        best = key;
                }
                mode[0] = (int) (best >> 16), mode[1] = (int) (best >> 8 & 255);
                mode[2] = (int) (best & 255);
                free (hist);
            }
            size_t marked = 0, want_marked = 0, off = 0, near = 0, before = 0, kept = 0;
            double cut = log (thresholds[t] / (1 - thresholds[t]));
            for (size_t i = 0; i < npx; i++) {
                double x[3] = {img->px[3 * i], img->px[3 * i + 1], img->px[3 * i + 2]};
                /* HistoQC's mask: probability over threshold, in the
                   tissue (the bright step's mask marks what it removed) */
                bool in = tissue->px[3 * i] == 0;
                bool want = in && qc_gnb_proba (&m, x) > thresholds[t];
                bool got = pen->px[3 * i] > 127;
                before += in;
                marked += got;
                want_marked += want;
                kept += after->px[3 * i] > 127;
                CHECK (!(got && after->px[3 * i] > 127), "a marked pixel left in the mask");
                if (got != want) {
                    off++;
                    near += fabs (qc_gnb_log_odds (&m, x) - cut) < 1e-3;
                }
            }
            double col = atof (get (r, "pen"));
            double want_col = before ? 1.0 - (double) kept / (double) before : -100;
            printf ("  %s, %s, threshold %g: %zu of %zu pixels marked (double precision: %zu; "
                    "%zu differ, all within 1e-3 of the threshold's log odds: %zu), "
                    "pen = %s\n", name, slides[s], thresholds[t], marked, npx, want_marked, off,
                    near, get (r, "pen"));
            CHECK (off == near && off * 10000 <= npx, "%zu pixels differ, %zu near", off,
                   near);
            CHECK (kept + marked == before, "tissue %zu = kept %zu + marked %zu", before,
                   kept, marked);
            CHECK (fabs (col - want_col) < 1e-12, "column %s, want %.17g", get (r, "pen"),
                   want_col);
            qc_rgb_destroy (&img);
            qc_rgb_destroy (&pen);
            qc_rgb_destroy (&tissue);
            qc_rgb_destroy (&after);
        }
        qc_pipeline_destroy (&p);
    }
    qc_result_destroy (&r);
}

static void
test_slides (void)
{
    int mode[3] = { -1, -1, -1 };
    slides_against_double (he_tsv, "he.tsv", 2, 2, mode);
    /* a class that holds G and B at one value each (its variances the
       smoothing alone) and R at a few: the slide's commonest colour and
       its neighbours in R. Its log odds are sums of terms of ~1e10 as a
       quadratic per channel, which float could not keep: none of its
       pixels were found */
    CHECK (mode[0] >= 0, "no working image to take a colour of");
    if (mode[0] < 0)
        return;
    char tsv[] = "/tmp/qc-test-pixelwise-XXXXXX";
    int fd = mkstemp (tsv);
    FILE *f = fd >= 0 ? fdopen (fd, "w") : NULL;
    CHECK (f != NULL, "mkstemp");
    if (!f)
        return;
    fprintf (f, "Class\tR\tG\tB\n0\t120\t60\t140\n0\t150\t90\t170\n0\t100\t40\t120\n");
    for (int d = -2; d <= 2; d++)
        fprintf (f, "1\t%d\t%d\t%d\n", mode[0] + d, mode[1], mode[2]);
    CHECK (fclose (f) == 0);
    printf ("  a class of one G and one B: (%d +-2, %d, %d)\n", mode[0], mode[1], mode[2]);
    slides_against_double (tsv, "one-G-one-B", 1, 1, NULL);
    unlink (tsv);
}

int
main (void)
{
    quiet_logs ();
    snprintf (he_tsv, sizeof he_tsv,
              "%s/reference/histoqc/data/models/pen_markings_he/he.tsv", check_shared_dir ());
    test_fit ();
    test_read ();
    test_config ();
    test_slides ();
    return check_done ("classify_pixelwise");
}
