/* Feature filters of ClassificationModule (frangi, local binary pattern,
 * Gabor, disk median) against scikit-image 0.19.3 / scipy 1.10 (the
 * versions HistoQC runs on Debian 12), and the feature-spec parsing of
 * config sections. The expected values were computed by skimage on the
 * same 29 x 23 image (float32 values, as here) at the pixels of PTS. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/classify/classify_features.h"
#include "kernels/ops/ops.h"
#include "shared/config.h"
#include "tests/unit/check.h"

#define W 29
#define H 23
#define NPTS 10

static const qc_ops_t *ops;
static const int PTS[NPTS][2] = {
    { 0, 0 }, { 3, 5 }, { 10, 7 }, { 28, 22 }, { 14, 11 },
    { 20, 3 }, { 5, 20 }, { 12, 15 }, { 27, 1 }, { 17, 18 }
};

/* a wavy field with a dark diagonal line (a ridge for frangi) */
static qc_fimg_t *
test_image (void)
{
    qc_fimg_t *f = qc_fimg_new (W, H);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            double v = 0.5 + 0.3 * sin (0.7 * x) * cos (0.45 * y)
                     + 0.1 * (((x * 7 + y * 13) % 5) / 5.0);
            if (fabs (x - 0.6 * y - 8) < 1.5)
                v -= 0.35;
            f->px[y * W + x] = (float) v;
        }
    return f;
}

/* |got - want| <= abs_tol + rel_tol |want| at every point */
static int
match (const char *what, const qc_fimg_t *f, const double *want,
       double abs_tol, double rel_tol)
{
    int ok = 1;
    for (int i = 0; i < NPTS; i++) {
        double got = f->px[PTS[i][1] * W + PTS[i][0]];
        if (!(fabs (got - want[i]) <= abs_tol + rel_tol * fabs (want[i]))) {
            fprintf (stderr, "  %s at (%d, %d): %.9g, skimage %.9g\n", what,
                     PTS[i][0], PTS[i][1], got, want[i]);
            ok = 0;
        }
    }
    return ok;
}

static void
test_frangi (void)
{
    qc_fimg_t *g = test_image (), *out = qc_fimg_new (W, H);
    /* sigmas 1, 10, 2 (any list: HistoQC's default config gives 1, 3, 5,
     * 7, 9, see test_spec), beta 0.5, gamma 15, dark */
    static const double want[NPTS] = {
        0, 1.58917346e-05, 1.97045124e-05, 7.92659483e-07, 7.77316924e-05,
        0, 0, 7.65756228e-07, 1.07243322e-06, 1.32603138e-05
    };
    double s[3] = { 1, 10, 2 };
    CHECK (ops->frangi (g, s, 3, 0.5, 15, 1, out) == 0);
    CHECK (match ("frangi", out, want, 1e-10, 1e-3));
    /* bright ridges, other scales and gamma */
    static const double want_w[NPTS] = {
        0.191276689, 0, 0, 0.0859300289, 0, 0.197144885, 0.573667828,
        0.865947297, 0.0623608851, 0
    };
    double s2[2] = { 1.5, 3 };
    CHECK (ops->frangi (g, s2, 2, 0.5, 0.05, 0, out) == 0);
    CHECK (match ("frangi white", out, want_w, 1e-5, 1e-3));
    /* in place */
    qc_fimg_t *g2 = test_image ();
    CHECK (ops->frangi (g2, s2, 2, 0.5, 0.05, 0, g2) == 0);
    CHECK (memcmp (g2->px, out->px, sizeof (float) * W * H) == 0);
    /* bad arguments */
    double bad[1] = { 0 };
    CHECK (ops->frangi (g, bad, 1, 0.5, 15, 1, out) == -1);
    CHECK (ops->frangi (g, s, 0, 0.5, 15, 1, out) == -1);
    CHECK (ops->frangi (g, s, 3, 0, 15, 1, out) == -1);
    CHECK (ops->frangi (g, s, 3, 0.5, NAN, 1, out) == -1);
    CHECK (ops->frangi (NULL, s, 3, 0.5, 15, 1, out) == -1);
    /* a 1-pixel-wide image: no crash, no NaN */
    qc_fimg_t *thin = qc_fimg_new (1, 7), *to = qc_fimg_new (1, 7);
    for (int i = 0; i < 7; i++)
        thin->px[i] = (float) (i % 2);
    CHECK (ops->frangi (thin, s, 3, 0.5, 15, 1, to) == 0);
    int finite = 1;
    for (int i = 0; i < 7; i++)
        finite &= isfinite (to->px[i]);
    CHECK (finite);
    qc_fimg_destroy (&thin);
    qc_fimg_destroy (&to);
    qc_fimg_destroy (&g);
    qc_fimg_destroy (&g2);
    qc_fimg_destroy (&out);
}

static void
test_lbp (void)
{
    qc_fimg_t *g = test_image (), *out = qc_fimg_new (W, H);
    static const double want[5][NPTS] = {
        { 16515073, 16318463, 2096896, 8128, 8911999, 496, 14680079, 0, 196608, 507904 },
        { 127, 2097151, 8191, 127, 1046783, 31, 127, 0, 3, 31 },
        { 7, 21, 13, 7, 25, 5, 7, 0, 2, 5 },
        { 151, 486, 305, 163, 554, 117, 148, 0, 33, 107 },
        { 0.0961333545, 0.0179039005, 0.0718691444, 0.0927197091, 0.0819142057,
          0.0187643963, 0.0492515421, 0.0277742983, 0.050760372, 0.0673585193 },
    };
    static const char *names[5] = { "default", "ror", "uniform", "nri_uniform", "var" };
    for (int m = 0; m < 5; m++) {
        CHECK (ops->lbp (g, 24, 3, (qc_lbp_method_t) m, out) == 0);
        CHECK (match (names[m], out, want[m], 0, m == 4 ? 1e-5 : 0), "%s", names[m]);
    }
    static const double want8[NPTS] = { 193, 159, 120, 24, 126, 14, 199, 8, 130, 112 };
    CHECK (ops->lbp (g, 8, 1.5, QC_LBP_DEFAULT, out) == 0);
    CHECK (match ("lbp P8 R1.5", out, want8, 0, 0));
    CHECK (ops->lbp (g, 32, 3, QC_LBP_DEFAULT, out) == -1);
    CHECK (ops->lbp (g, 8, 0, QC_LBP_DEFAULT, out) == -1);
    CHECK (ops->lbp (g, 8, 1, (qc_lbp_method_t) 9, out) == -1);
    qc_fimg_destroy (&g);
    qc_fimg_destroy (&out);
}

static void
test_median (void)
{
    qc_fimg_t *g = test_image (), *out = qc_fimg_new (W, H);
    static const double want3[NPTS] = {
        0.560000002, 0.496870786, 0.39768225, 0.375475973, 0.288592964,
        0.556526423, 0.605629385, 0.638237178, 0.544806361, 0.399450779
    };
    static const double want1[NPTS] = {
        0.5, 0.394289941, 0.381811023, 0.358081192, 0.160219491, 0.583992064,
        0.607473195, 0.776343405, 0.553620875, 0.591541886
    };
    CHECK (ops->median_disk (g, 3, QC_BORDER_NEAREST, out) == 0);
    CHECK (match ("median r3", out, want3, 1e-7, 0));
    CHECK (ops->median_disk (g, 1, QC_BORDER_NEAREST, out) == 0);
    CHECK (match ("median r1", out, want1, 1e-7, 0));
    CHECK (ops->median_disk (g, 0, QC_BORDER_NEAREST, out) == 0);
    CHECK (memcmp (g->px, out->px, sizeof (float) * W * H) == 0);
    CHECK (ops->median_disk (g, 3, QC_BORDER_NEAREST, g) == -1);   /* in place */
    CHECK (ops->median_disk (g, 51, QC_BORDER_NEAREST, out) == -1);
    qc_fimg_destroy (&g);
    qc_fimg_destroy (&out);
}

static void
test_gabor (void)
{
    qc_fimg_t *g = test_image (), *out = qc_fimg_new (W, H);
    static const struct {
        int theta;
        double sigma, freq, want[NPTS];
    } cases[] = {
        { 0, 1, 0.05, { 0.547105734, 0.404150986, 0.299564438, 0.481198095,
                        0.255419526, 0.562988405, 0.574933705, 0.675670499,
                        0.511290408, 0.408523404 } },
        { 1, 3, 0.25, { 0.00035480876, -0.00511559244, -0.00104047787,
                        0.00265067283, 0.00636298545, 0.00503372951,
                        -0.00720001372, 0.00240558825, 0.0143421381,
                        0.00293026508 } },
        { 2, 1, 0.25, { 0.197985173, 0.117026983, 0.0803774185, 0.121142893,
                        0.0743451604, 0.178718713, 0.177253044, 0.221374501,
                        0.156882433, 0.138887355 } },
        { 3, 3, 0.05, { 0.356779391, 0.342615196, 0.253885787, 0.355787799,
                        0.224247736, 0.34477228, 0.343179346, 0.359738405,
                        0.347762997, 0.256356831 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double th = cases[i].theta / 4.0 * M_PI;
        CHECK (ops->gabor (g, cases[i].freq, th, cases[i].sigma, cases[i].sigma,
                           QC_BORDER_WRAP, out) == 0);
        CHECK (match ("gabor", out, cases[i].want, 2e-7, 1e-5), "case %zu", i);
    }
    /* sigma_x != sigma_y: the direct 2-D path */
    static const double aniso[NPTS] = {
        0.334999353, 0.274903758, 0.219367832, 0.316181684, 0.301842283,
        0.363314481, 0.372858478, 0.38841502, 0.336529422, 0.321895412
    };
    CHECK (ops->gabor (g, 0.1, 0.5, 1.5, 2.5, QC_BORDER_WRAP, out) == 0);
    CHECK (match ("gabor anisotropic", out, aniso, 2e-7, 1e-5));
    CHECK (ops->gabor (g, 0, 0, 1, 1, QC_BORDER_WRAP, out) == -1);
    CHECK (ops->gabor (g, 0.1, 0, 1, 101, QC_BORDER_WRAP, out) == -1);
    qc_fimg_destroy (&g);
    qc_fimg_destroy (&out);
}

static const char cfg_text[] =
    "[pipeline]\nsteps = ClassificationModule.byExampleWithFeatures:pen\n"
    "[ClassificationModule.byExampleWithFeatures:pen]\n"
    "features:  frangi\n"
    "           laplace\n"
    "           #lbp\n"
    "           rgb\n"
    "           gabor\n"
    "frangi_scale_range: (1,10)\n"
    "frangi_scale_step: 2\n"
    "gabor_sigma: (1,3)\n"
    "gabor_frequency: (0.05, 0.25)\n"
    "[bad:feature]\nfeatures: frangi\n  sobel\n"
    "[bad:tuple]\nfeatures: gabor\ngabor_sigma: (1;3)\n"
    "[bad:none]\nfeatures:\n"
    "[bad:lbp]\nfeatures: lbp\nlbp_method: fancy\n"
    "[fr:half]\nfeatures: frangi\nfrangi_scale_range: (0.5, 2.1)\n"
    "frangi_scale_step: 0.75\n"
    "[bad:fr1]\nfeatures: frangi\nfrangi_scale_range: (3)\n"
    "[bad:fr2]\nfeatures: frangi\nfrangi_scale_step: 0\n"
    "[bad:fr3]\nfeatures: frangi\nfrangi_scale_range: (10, 1)\n"
    "[bad:fr4]\nfeatures: frangi\nfrangi_scale_range: (1, 100)\n"
    "frangi_scale_step: 0.5\n"
    "[mc]\nfeatures: gaussian\n median\n lbp\ngaussian_multichan: True\n";

static void
test_spec (void)
{
    char err[256];
    qc_config_t *c = qc_config_parse (cfg_text, sizeof cfg_text - 1, err, sizeof err, NULL);
    CHECK (c != NULL, "%s", err);
    if (!c)
        return;
    qc_feature_spec_t s;
    const qc_config_section_t *sec =
        qc_config_section (c, "ClassificationModule.byExampleWithFeatures:pen");
    CHECK (qc_feature_spec_parse (sec, &s, err, sizeof err) == 0, "%s", err);
    CHECK (s.nkinds == 4 && s.kinds[0] == QC_FEAT_FRANGI
           && s.kinds[1] == QC_FEAT_LAPLACE && s.kinds[2] == QC_FEAT_RGB
           && s.kinds[3] == QC_FEAT_GABOR);
    /* skimage 0.19: np.arange (1, 10, 2), not the tuple (1, 10, 2) */
    CHECK (s.frangi_nsigma == 5 && s.frangi_sigma[0] == 1 && s.frangi_sigma[1] == 3
           && s.frangi_sigma[2] == 5 && s.frangi_sigma[3] == 7
           && s.frangi_sigma[4] == 9, "%d sigmas", s.frangi_nsigma);
    CHECK (qc_feature_spec_planes (&s) == 1 + 1 + 3 + 16);
    CHECK (qc_feature_spec_parse (qc_config_section (c, "fr:half"), &s, err,
                                  sizeof err) == 0
           && s.frangi_nsigma == 3 && s.frangi_sigma[0] == 0.5
           && s.frangi_sigma[1] == 1.25 && s.frangi_sigma[2] == 2, "%s", err);
    static const char *const bad_frangi[] = { "bad:fr1", "bad:fr2", "bad:fr3",
                                              "bad:fr4" };
    for (int i = 0; i < 4; i++)
        CHECK (qc_feature_spec_parse (qc_config_section (c, bad_frangi[i]), &s,
                                      err, sizeof err) == -1
               && strstr (err, "frangi_scale"), "%s: %s", bad_frangi[i], err);
    CHECK (qc_feature_spec_parse (qc_config_section (c, "bad:feature"), &s, err,
                                  sizeof err) == -1 && strstr (err, "sobel"), "%s", err);
    CHECK (qc_feature_spec_parse (qc_config_section (c, "bad:tuple"), &s, err,
                                  sizeof err) == -1 && strstr (err, "gabor_sigma"), "%s", err);
    CHECK (qc_feature_spec_parse (qc_config_section (c, "bad:none"), &s, err,
                                  sizeof err) == -1 && strstr (err, "none"), "%s", err);
    CHECK (qc_feature_spec_parse (qc_config_section (c, "bad:lbp"), &s, err,
                                  sizeof err) == -1 && strstr (err, "lbp_method"), "%s", err);
    CHECK (qc_feature_spec_parse (qc_config_section (c, "mc"), &s, err, sizeof err) == 0);
    CHECK (qc_feature_spec_planes (&s) == 5);

    /* computing: plane order and content follow the list */
    qc_rgb_t *img = qc_rgb_new (W, H);
    for (int i = 0; i < W * H * 3; i++)
        img->px[i] = (uint8_t) ((i * 37) % 251);
    qc_fimg_t *planes[QC_FEAT_MAX_PLANES];
    CHECK (qc_feature_spec_parse (sec, &s, err, sizeof err) == 0);
    CHECK (qc_features_compute (ops, img, &s, planes) == 0);
    CHECK (planes[2]->px[5] == img->px[15] && planes[3]->px[5] == img->px[16]
           && planes[4]->px[5] == img->px[17]);
    qc_fimg_t *gray = qc_fimg_new (W, H), *lap = qc_fimg_new (W, H);
    ops->rgb_to_gray (img, gray);
    ops->laplace (gray, QC_BORDER_REFLECT, lap);
    CHECK (memcmp (lap->px, planes[1]->px, sizeof (float) * W * H) == 0);
    qc_feature_planes_free (planes, qc_feature_spec_planes (&s));
    CHECK (planes[0] == NULL);
    double t[4];
    int n;
    CHECK (qc_feature_parse_tuple ("(1,10)", t, 4, &n) == 0 && n == 2 && t[1] == 10);
    CHECK (qc_feature_parse_tuple (" 3 ", t, 4, &n) == 0 && n == 1 && t[0] == 3);
    CHECK (qc_feature_parse_tuple ("(0.05, 0.25,)", t, 4, &n) == 0 && n == 2);
    CHECK (qc_feature_parse_tuple ("(nan)", t, 4, &n) == -1);
    CHECK (qc_feature_parse_tuple ("(1, 2", t, 4, &n) == -1);
    CHECK (qc_feature_parse_tuple ("(1,2,3,4,5)", t, 4, &n) == -1);
    CHECK (qc_feature_parse_tuple ("", t, 4, &n) == -1);
    qc_fimg_destroy (&gray);
    qc_fimg_destroy (&lap);
    qc_rgb_destroy (&img);
    qc_config_destroy (&c);
}

int
main (void)
{
    ops = qc_ops_cpu ();
    test_frangi ();
    test_lbp ();
    test_median ();
    test_gabor ();
    test_spec ();
    return check_done ("classify_features");
}
