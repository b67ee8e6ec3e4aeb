/* The arithmetic of the histogram, brightness/contrast and deconvolution
 * steps (kernels/modules/hist_algo.h, bright_algo.h, deconv_algo.h)
 * against values numpy 1.24 / scikit-image 0.19 computed on the same
 * inputs (a one-off cross-check; the numbers are written here). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/modules/module.h"
#include "kernels/modules/bright_algo.h"
#include "kernels/modules/deconv_algo.h"
#include "kernels/modules/hist_algo.h"
#include "kernels/modules/hist_plot.h"
#include "kernels/png/png_io.h"

#define W 37
#define H 23

/* The test image and mask, defined identically in the Python script
 * that produced the expected values. */
static qc_rgb_t *
test_image (void)
{
    qc_rgb_t *img = qc_rgb_new (W, H);
    for (int y = 0; img && y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t *p = img->px + ((size_t) y * W + (size_t) x) * 3;
            p[0] = (uint8_t) ((x * 7 + y * 13 + (x * y) % 11 * 5 + 90) % 256);
            p[1] = (uint8_t) ((x * 3 + y * 17 + (x ^ y) * 2 + 20) % 256);
            p[2] = (uint8_t) ((x * 11 + y * 5 + 150) % 256);
        }
    return img;
}

static qc_mask_t *
test_mask (void)
{
    qc_mask_t *m = qc_mask_new (W, H);
    for (int y = 0; m && y < H; y++)
        for (int x = 0; x < W; x++)
            m->px[y * W + x] = (x - 18) * (x - 18) + (y - 11) * (y - 11) < 100
                               && !(x % 5 == 0 && y % 3 == 0);
    return m;
}

/* Relative agreement, for float32-plane results. */
static int
near (double got, double want, double rel)
{
    return fabs (got - want) <= rel * fabs (want) + 1e-12;
}

/* Exact agreement as results.tsv prints it. */
static int
prints_as (double v, const char *want)
{
    char buf[QC_PYFLOAT_LEN];
    return strcmp (qc_pyfloat (v, buf, sizeof buf), want) == 0;
}

static void
test_np_sum (void)
{
    /* np.sum of v_i = ((i * 2654435761) % 1000003) / 997 * (odd ? 1 : -1e-3);
     * the naive left-to-right sum differs from these in the last bits
     * for n >= 8, so the check tells pairwise from naive; 8193 and
     * 100000 need numpy's 8192-value chunks. */
    static const struct { size_t n; double want; } cases[] = {
        { 5, 0x1.63e1789e4d4e7p+9 },       { 8, 0x1.ce0b847aa6622p+10 },
        { 9, 0x1.cdf06755249a7p+10 },      { 100, 0x1.9ecfa417b8b23p+14 },
        { 128, 0x1.045d4afb25613p+15 },    { 129, 0x1.045bc5a927746p+15 },
        { 1000, 0x1.ec0f16b7cf816p+17 },   { 8193, 0x1.f4aef6591f348p+20 },
        { 12345, 0x1.79018be9b1a02p+21 },
        { 100000, 0x1.7e3a879fe3466p+24 },
    };
    double *v = malloc (100000 * sizeof *v);
    CHECK (v != NULL);
    if (!v)
        return;
    for (size_t i = 0; i < 100000; i++)
        v[i] = (double) ((i * 2654435761ull) % 1000003ull) / 997.0
               * (i % 2 ? 1.0 : -1e-3);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double s = qc_np_sum (v, cases[k].n);
        CHECK (s == cases[k].want, "n=%zu: %a, numpy %a", cases[k].n, s,
               cases[k].want);
    }
    CHECK (qc_np_sum (v, 0) == 0.0);
    CHECK (qc_np_sum (NULL, 3) == 0.0);
    free (v);
}

static void
test_bins (void)
{
    /* numpy.histogram's bin of each value 0..255 over range (0, 255):
     * checksum sum (v * bin) and, for 20 bins, each bin's first value
     * (51 = 4 * 12.75 sits exactly on an edge). */
    static const struct { int bins; long sum; } sums[] = {
        { 1, 0 }, { 3, 47345 }, { 7, 135442 }, { 20, 419620 },
        { 100, 2164120 }, { 255, 5559425 }, { 256, 5559680 }, { 300, 6525170 },
    };
    for (size_t k = 0; k < sizeof sums / sizeof sums[0]; k++) {
        long s = 0;
        for (int v = 0; v < 256; v++)
            s += (long) v * qc_hist_bin_of (v, sums[k].bins);
        CHECK (s == sums[k].sum, "bins %d: %ld, numpy %ld", sums[k].bins, s,
               sums[k].sum);
    }
    static const int firsts[20] = { 0, 13, 26, 39, 51, 64, 77, 90, 102, 115,
        128, 141, 153, 166, 179, 192, 204, 217, 230, 243 };
    for (int b = 0; b < 20; b++) {
        CHECK (qc_hist_bin_of (firsts[b], 20) == b, "first of bin %d", b);
        if (b)
            CHECK (qc_hist_bin_of (firsts[b] - 1, 20) == b - 1, "bin %d", b);
    }
    CHECK (qc_hist_bin_of (255, 20) == 19);
    CHECK (qc_hist_bin_of (0, 0) == -1);
    CHECK (qc_hist_bin_of (256, 20) == -1);
    CHECK (qc_hist_bin_of (-1, 20) == -1);
    CHECK (qc_hist_bin_of (3, QC_HIST_MAX_BINS + 1) == -1);
}

static void
test_density (const qc_rgb_t *img, const qc_mask_t *mask)
{
    const qc_ops_t *ops = qc_ops_cpu ();
    qc_hist256_t h;
    CHECK (qc_hist256_of (ops, img, mask, &h) == 0);
    CHECK (h.total == 284, "%llu", (unsigned long long) h.total);
    double d[60];
    CHECK (qc_hist_density3 (&h, 20, d) == 0);
    /* HistoQC's computeHistogram (img, 20, mask), first three rows. */
    static const char *const want[9] = {
        "0.003866335266500967", "0.0035901684617508974", "0.0011046672190002762",
        "0.0035901684617508974", "0.004694835680751174", "0.0",
        "0.0035901684617508974", "0.0033140016570008283", "0.0011046672190002762",
    };
    for (int i = 0; i < 9; i++)
        CHECK (prints_as (d[i], want[i]), "density[%d] = %.17g, numpy %s", i,
               d[i], want[i]);
    CHECK (prints_as (qc_np_sum (d, 60), "0.2352941176470588"));
    /* An empty channel: numpy's 0 / 0. */
    uint64_t none[256] = { 0 };
    double e[4];
    CHECK (qc_hist_density (none, 4, e) == 0 && isnan (e[0]));
    CHECK (qc_hist_density (NULL, 4, e) == -1);
    CHECK (qc_hist_density (none, 0, e) == -1);
    CHECK (qc_hist_density3 (&h, QC_HIST_MAX_BINS + 1, d) == -1);
    CHECK (qc_hist256_of (ops, NULL, NULL, &h) == -1);
}

/* The builtin templates are the textures' counts, and HistoQC's distance
 * to them is numpy's to the last bit. */
static void
test_templates (const qc_rgb_t *img, const qc_mask_t *mask)
{
    CHECK (qc_hist_builtin_count () == 4);
    CHECK (qc_hist_builtin_name (4) == NULL);
    CHECK (qc_hist_builtin ("template9") == NULL);
    static const char *const tex[4] = { "he-TCGA-HE-7130.png", "he-target.png",
        "he-tcga-lung.png", "he-tissue-level2.png" };
    char path[1024];
    for (size_t i = 0; i < 4; i++) {
        const char *name = qc_hist_builtin_name (i);
        char want[16];
        snprintf (want, sizeof want, "template%zu", i + 1);
        CHECK (name && strcmp (name, want) == 0);
        snprintf (path, sizeof path, "%s/textures/%s", check_shared_dir (), tex[i]);
        qc_hist256_t from_file, builtin;
        char err[512] = "";
        char entry[64];
        snprintf (entry, sizeof entry, "builtin:%s", want);
        CHECK (qc_hist_template_load (path, &from_file, err, sizeof err) == 0,
               "%s", err);
        CHECK (qc_hist_template_load (entry, &builtin, err, sizeof err) == 0,
               "%s", err);
        CHECK (memcmp (&from_file, &builtin, sizeof builtin) == 0,
               "builtin %s differs from %s", want, path);
        /* Second load comes from the cache: same counts. */
        qc_hist256_t again;
        CHECK (qc_hist_template_load (path, &again, err, sizeof err) == 0
               && memcmp (&again, &from_file, sizeof again) == 0);
    }
    const qc_hist256_t *t1 = qc_hist_builtin ("template1");
    const qc_hist256_t *t4 = qc_hist_builtin ("template4");
    qc_hist256_t h;
    double a[60], b[60], zero[60] = { 0 };
    CHECK (t1 && t4 && qc_hist256_of (qc_ops_cpu (), img, mask, &h) == 0);
    if (!t1 || !t4)
        return;
    CHECK (qc_hist_density3 (t1, 20, a) == 0 && qc_hist_density3 (&h, 20, b) == 0);
    /* HistoQC with an empty mask compares with zeros: sum of squares. */
    CHECK (prints_as (qc_hist_sq_diff (a, zero, 60), "0.002075352931063437"));
    CHECK (prints_as (qc_hist_sq_diff (a, b, 60), "0.0011418525290923947"));
    double c[21], e[21];
    CHECK (qc_hist_density3 (t4, 7, c) == 0 && qc_hist_density3 (&h, 7, e) == 0);
    CHECK (prints_as (qc_hist_sq_diff (c, e, 21), "0.00026747168411218094"));

    char err[512] = "";
    qc_hist256_t x;
    CHECK (qc_hist_template_load ("builtin:nope", &x, err, sizeof err) == -1
           && strstr (err, "builtin:template1"), "%s", err);
    CHECK (qc_hist_template_load ("/nonexistent/t.png", &x, err, sizeof err) == -1
           && strstr (err, "/nonexistent/t.png"), "%s", err);
    CHECK (qc_hist_template_load (NULL, &x, err, sizeof err) == -1);
    /* HistoQC's default config names ./templates/template1.png (its
     * packaged copy); with no such file here, no template: the project's
     * own of that name is another image (other numbers under HistoQC's
     * column), named, not taken */
    CHECK (qc_hist_template_load ("./templates/template1.png", &x, err,
                                  sizeof err) == -1
           && strstr (err, "name it builtin:template1)"), "%s", err);
    CHECK (qc_hist_template_load ("./templates/template7.png", &x, err,
                                  sizeof err) == -1 && !strstr (err, "builtin:"), "%s", err);
    CHECK (qc_hist_template_load ("builtin:template1", &x, err, sizeof err) == 0
           && memcmp (&x, t1, sizeof x) == 0, "%s", err);
}

static void
test_names (void)
{
    char n[QC_HIST_MAX_NAME];
    CHECK (qc_hist_template_name ("./templates/template1.png", n, sizeof n) == 0
           && strcmp (n, "template1") == 0);
    CHECK (qc_hist_template_name ("a/b.c/t.tar.png", n, sizeof n) == 0
           && strcmp (n, "t.tar") == 0);
    CHECK (qc_hist_template_name ("plain", n, sizeof n) == 0
           && strcmp (n, "plain") == 0);
    CHECK (qc_hist_template_name ("dir/.hidden", n, sizeof n) == 0
           && strcmp (n, ".hidden") == 0);
    CHECK (qc_hist_template_name ("builtin:template2", n, sizeof n) == 0
           && strcmp (n, "template2") == 0);
    CHECK (qc_hist_template_name ("dir/", n, sizeof n) == -1);
    CHECK (qc_hist_template_name ("builtin:", n, sizeof n) == -1);
    CHECK (qc_hist_template_name ("xy.png", n, 2) == -1);
    CHECK (qc_hist_template_name ("x.png", n, 2) == 0 && strcmp (n, "x") == 0);
    CHECK (qc_hist_template_name (NULL, n, sizeof n) == -1);
}

static void
test_contrast (const qc_rgb_t *img, const qc_mask_t *mask)
{
    const qc_ops_t *ops = qc_ops_cpu ();
    qc_fimg_t *g = qc_fimg_new (W, H);
    qc_mask_t *inv = qc_mask_new (W, H);
    qc_mask_t *none = qc_mask_new (W, H);
    CHECK (g && inv && none && ops->rgb_to_gray (img, g) == 0
           && ops->mask_logic (mask, NULL, QC_LOGIC_NOT, inv) == 0);
    if (!g || !inv || !none)
        goto out;
    qc_contrast_t c;
    CHECK (qc_contrast_stats (ops, g, mask, mask, &c) == 0 && !c.empty);
    CHECK (near (c.tenengrad, 0.009663401216137952, 1e-6), "%.17g", c.tenengrad);
    CHECK (near (c.michelson, 0.8323533618012523, 1e-6), "%.17g", c.michelson);
    CHECK (near (c.rms, 0.1883210213075209, 1e-6), "%.17g", c.rms);
    CHECK (qc_contrast_stats (ops, g, NULL, NULL, &c) == 0);
    CHECK (near (c.tenengrad, 0.005519605426310289, 1e-6), "%.17g", c.tenengrad);
    CHECK (near (c.michelson, 0.9066342969615437, 1e-6));
    CHECK (near (c.rms, 0.1960903018627821, 1e-6));
    /* invert = True: the sobel sum over ~mask, the count over the mask. */
    CHECK (qc_contrast_stats (ops, g, inv, mask, &c) == 0);
    CHECK (near (c.tenengrad, 0.013422734535305934, 1e-6), "%.17g", c.tenengrad);
    CHECK (qc_contrast_stats (ops, g, mask, none, &c) == 0 && c.empty
           && c.tenengrad == -100.0 && c.michelson == -100.0 && c.rms == -100.0);
    /* An all-black selection: numpy's 0 / 0. */
    qc_fimg_t *black = qc_fimg_new (W, H);
    CHECK (black && qc_contrast_stats (ops, black, NULL, mask, &c) == 0
           && isnan (c.michelson) && c.rms == 0.0 && c.tenengrad == 0.0);
    qc_fimg_destroy (&black);
    CHECK (qc_contrast_stats (ops, NULL, NULL, NULL, &c) == -1);
    qc_mask_t *small = qc_mask_new (3, 3);
    CHECK (qc_contrast_stats (ops, g, small, NULL, &c) == -1);
    qc_mask_destroy (&small);

    qc_mean_std_t ms;
    CHECK (qc_plane_mean_std (ops, g, mask, &ms) == 0 && !ms.empty);
    CHECK (near (ms.mean, 0.4975517191383596, 1e-6), "%.17g", ms.mean);
    CHECK (near (ms.std, 0.1883210213075209, 1e-6), "%.17g", ms.std);
    CHECK (qc_plane_mean_std (ops, g, none, &ms) == 0 && ms.empty
           && prints_as (ms.mean, "-100.0") && prints_as (ms.std, "0.0"));
out:
    qc_fimg_destroy (&g);
    qc_mask_destroy (&inv);
    qc_mask_destroy (&none);
}

static void
test_channels (const qc_rgb_t *img, const qc_mask_t *mask)
{
    const qc_ops_t *ops = qc_ops_cpu ();
    static const struct {
        qc_colorspace_t space;
        double v[6];      /* mean, std of each channel */
    } cases[] = {
        { QC_CS_YUV, { 0.4997677022921843, 0.1644567115278229,
                       0.031114183731427766, 0.12778247140295299,
                       -0.011607185604253032, 0.23676973749040559 } },
        { QC_CS_HSV, { 0.6009473489403422, 0.26436078148922176,
                       0.649248012260909, 0.2158030832306237,
                       0.7468793151063242, 0.16643995902788927 } },
        { QC_CS_XYZ, { 0.28727208125654835, 0.14782337545536017,
                       0.2961047114284437, 0.17939544218693876,
                       0.3669035199371934, 0.24532382232000435 } },
        { QC_CS_YCBCR, { 125.44912680198841, 36.01601982459322,
                         135.9924458574979, 32.82403583119483,
                         125.88608505937586, 43.12076200548461 } },
    };
    qc_mean_std_t o[3];
    /* RGB: integer channels, so the printed numbers are numpy's. */
    CHECK (qc_channel_mean_std (ops, img, QC_CS_RGB, mask, o) == 0);
    CHECK (prints_as (o[0].mean, "124.0669014084507"), "%.17g", o[0].mean);
    CHECK (prints_as (o[1].mean, "126.02816901408451"), "%.17g", o[1].mean);
    CHECK (prints_as (o[2].mean, "143.56338028169014"), "%.17g", o[2].mean);
    CHECK (near (o[0].std, 71.83710369901837, 1e-13), "%.17g", o[0].std);
    CHECK (near (o[1].std, 69.05860377825793, 1e-13));
    CHECK (near (o[2].std, 59.918720156503795, 1e-13));
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        CHECK (qc_channel_mean_std (ops, img, cases[k].space, mask, o) == 0);
        for (int c = 0; c < 3; c++) {
            /* float32 planes: an absolute floor for means near 0 */
            CHECK (fabs (o[c].mean - cases[k].v[2 * c])
                   <= 1e-6 * fabs (cases[k].v[2 * c]) + 1e-8,
                   "%s chan %d mean %.17g", qc_colorspace_name (cases[k].space),
                   c, o[c].mean);
            CHECK (near (o[c].std, cases[k].v[2 * c + 1], 1e-6),
                   "%s chan %d std %.17g", qc_colorspace_name (cases[k].space),
                   c, o[c].std);
        }
    }
    qc_mask_t *none = qc_mask_new (W, H);
    CHECK (qc_channel_mean_std (ops, img, QC_CS_YUV, none, o) == 0);
    CHECK (o[0].empty && o[2].mean == -100.0 && o[2].std == 0.0);
    CHECK (qc_channel_mean_std (ops, img, QC_CS_RGB, none, o) == 0 && o[1].empty);
    CHECK (qc_channel_mean_std (ops, img, QC_CS_COUNT, mask, o) == -1);
    qc_mask_destroy (&none);
}

static void
test_deconv (const qc_rgb_t *img, const qc_mask_t *mask)
{
    const qc_ops_t *ops = qc_ops_cpu ();
    qc_mat3_t hed;
    CHECK (qc_stain_matrix ("hed_from_rgb", &hed) == 0);
    qc_fimg_t *p[3] = { qc_fimg_new (W, H), qc_fimg_new (W, H), qc_fimg_new (W, H) };
    CHECK (p[0] && p[1] && p[2]);
    if (!p[0] || !p[1] || !p[2])
        goto out;
    qc_deconv_stats_t st;
    CHECK (qc_deconv_stains (ops, img, &hed, mask, &st, p) == 0 && !st.empty);
    static const double want[3][2] = {
        { 0.10691713824334317, 0.12352892556693183 },
        { 0.040383916809315884, 0.05978311807478729 },
        { 0.03767252215380602, 0.059373228409989987 },
    };
    /* img_as_ubyte of HistoQC's stretched images: sums of the bytes. */
    static const long png_sum[3] = { 12023, 9728, 5148 };
    for (int c = 0; c < 3; c++) {
        CHECK (near (st.mean[c], want[c][0], 1e-5), "c%d mean %.17g", c, st.mean[c]);
        CHECK (near (st.std[c], want[c][1], 1e-5), "c%d std %.17g", c, st.std[c]);
        long sum = 0, outside = 0;
        float mx = 0;
        for (size_t i = 0; i < (size_t) W * H; i++) {
            sum += qc_px_u8_from_unit (p[c]->px[i]);
            outside += !mask->px[i] && p[c]->px[i] != 0.0f;
            mx = p[c]->px[i] > mx ? p[c]->px[i] : mx;
        }
        /* float32 may round a pixel the other way at .5 */
        CHECK (labs (sum - png_sum[c]) <= 2, "c%d png sum %ld, HistoQC %ld", c,
               sum, png_sum[c]);
        CHECK (outside == 0 && mx == 1.0f);
    }
    qc_mask_t *none = qc_mask_new (W, H);
    p[1]->px[5] = 0.5f;
    CHECK (qc_deconv_stains (ops, img, &hed, none, &st, p) == 0 && st.empty
           && st.mean[0] == -100.0 && st.std[2] == -100.0 && p[1]->px[5] == 0.0f);
    /* use_mask off: every pixel. */
    CHECK (qc_deconv_stains (ops, img, &hed, NULL, &st, NULL) == 0 && !st.empty);
    /* A uniform image: equal min and max, a black image, no NaN. */
    qc_rgb_t *flat = qc_rgb_new (W, H);
    if (flat)
        memset (flat->px, 200, (size_t) W * H * 3);
    CHECK (flat && qc_deconv_stains (ops, flat, &hed, mask, &st, p) == 0
           && p[0]->px[100] == 0.0f && st.std[0] == 0.0);
    qc_rgb_destroy (&flat);
    CHECK (qc_deconv_stains (ops, img, NULL, mask, &st, p) == -1);
    qc_mask_t *small = qc_mask_new (2, 2);
    CHECK (qc_deconv_stains (ops, img, &hed, small, &st, p) == -1);
    qc_mask_destroy (&small);
    qc_mask_destroy (&none);
out:
    for (int c = 0; c < 3; c++)
        qc_fimg_destroy (&p[c]);
}

static int
is_rgb (const qc_rgb_t *img, int x, int y, int r, int g, int b)
{
    const uint8_t *p = img->px + ((size_t) y * (size_t) img->w + (size_t) x) * 3;
    return p[0] == r && p[1] == g && p[2] == b;
}

/* The figure: size, where a known bar lands, axes and title drawn; an
 * empty histogram gives axes and no coloured line. */
static void
test_plot (void)
{
    /* Every red value is 200 (bin 15 of 20), green spread evenly. */
    qc_hist256_t h;
    memset (&h, 0, sizeof h);
    h.c[0][200] = 1000;
    for (int v = 0; v < 250; v++)
        h.c[1][v] = 4;
    h.c[2][10] = 1000;
    h.total = 1000;
    double d[60];
    CHECK (qc_hist_density3 (&h, 20, d) == 0);
    qc_rgb_t *img = qc_hist_plot (d, 20, "Color Distribution for a.svs");
    CHECK (img && img->w == 640 && img->h == 480);
    if (!img)
        return;
    /* The axes span x 80..576 for -12.75..267.75 and y 427..58 for
     * 0..1.05 * the highest density: the red bar's top is at
     * 427 - 369 / 1.05 = 75.6, over bin 15, 191.25..204 (x 441..463). */
    int red_top = 0;
    for (int x = 444; x < 460; x++)
        red_top += is_rgb (img, x, 76, 255, 0, 0) || is_rgb (img, x, 77, 255, 0, 0);
    CHECK (red_top >= 16, "%d", red_top);
    CHECK (!is_rgb (img, 300, 76, 255, 0, 0));
    /* Green's flat density (0.004 or so) draws low across the plot. */
    int green = 0;
    for (int y = 300; y < 427; y++)
        green += is_rgb (img, 200, y, 0, 128, 0);
    CHECK (green > 0);
    /* Frame corners, the grid line at x = 100 (pixel 279), black title
     * text. */
    CHECK (is_rgb (img, 80, 58, 0, 0, 0) && is_rgb (img, 576, 427, 0, 0, 0));
    CHECK (is_rgb (img, 279, 200, 176, 176, 176));
    CHECK (!is_rgb (img, 290, 200, 176, 176, 176));
    int title = 0;
    for (int y = 20; y < 58; y++)
        for (int x = 0; x < 640; x++)
            title += is_rgb (img, x, y, 0, 0, 0);
    CHECK (title > 200, "%d", title);
    qc_rgb_destroy (&img);

    /* No pixels: NaN densities, empty axes. */
    qc_hist256_t none;
    memset (&none, 0, sizeof none);
    CHECK (qc_hist_density3 (&none, 20, d) == 0 && isnan (d[0]));
    img = qc_hist_plot (d, 20, "Color Distribution for empty.svs");
    CHECK (img != NULL);
    int coloured = 0;
    for (size_t i = 0; img && i < qc_npix (img->w, img->h); i++) {
        const uint8_t *p = img->px + i * 3;
        coloured += p[0] != p[1] || p[1] != p[2];
    }
    CHECK (coloured == 0);
    qc_rgb_destroy (&img);
    /* A very long title is cut to fit, not drawn off the image. */
    char longt[600];
    memset (longt, 'x', sizeof longt - 1);
    longt[sizeof longt - 1] = '\0';
    img = qc_hist_plot (d, 20, longt);
    CHECK (img != NULL);
    qc_rgb_destroy (&img);
    /* a long UTF-8 title is cut between characters: drawn as the same
     * title in plain letters is ('é' is drawn 'e'; a cut inside one would
     * draw '?') */
    char accents[2 * 300 + 1], plain[300 + 1];
    for (int i = 0; i < 300; i++) {
        memcpy (accents + 2 * i, "\xc3\xa9", 2);
        plain[i] = 'e';
    }
    accents[600] = plain[300] = '\0';
    qc_rgb_t *ua = qc_hist_plot (d, 20, accents), *ub = qc_hist_plot (d, 20, plain);
    CHECK (ua && ub && ua->w == ub->w && ua->h == ub->h
           && memcmp (ua->px, ub->px, qc_npix (ua->w, ua->h) * 3) == 0,
           "a long UTF-8 title cut between characters");
    qc_rgb_destroy (&ua);
    qc_rgb_destroy (&ub);
    CHECK (qc_hist_plot (NULL, 20, "t") == NULL);
    CHECK (qc_hist_plot (d, 0, "t") == NULL);
    CHECK (qc_plot_text_width ("abc", 2) == 34);
    /* UTF-8 names: a character is one glyph; an accented Latin-1 letter
     * is drawn as its plain letter, any other character as one '?' */
    CHECK (qc_plot_text_width ("caf\xc3\xa9", 1) == qc_plot_text_width ("cafe", 1)
           && qc_plot_text_width ("\xe6\x97\xa5\xe6\x9c\xac", 1)
                  == qc_plot_text_width ("??", 1)
           && qc_plot_text_width ("\xff", 1) == qc_plot_text_width ("?", 1),
           "widths by character");
    static const char *const pairs[][2] = {
        { "caf\xc3\xa9 \xc3\x9c" "ber", "cafe Uber" },
        { "a \xe6\x97\xa5\xf0\x9f\x94\xac b", "a ?? b" },
        { "bad \xe9t\xe9 \xc3", "bad ?t? ?" },            /* not UTF-8 */
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        qc_rgb_t *a = qc_rgb_new (200, 12), *b = qc_rgb_new (200, 12);
        static const uint8_t ink[3] = { 0, 0, 0 };
        if (a && b) {
            memset (a->px, 255, qc_npix (a->w, a->h) * 3);
            memset (b->px, 255, qc_npix (b->w, b->h) * 3);
            qc_plot_text (a, 1, 1, pairs[i][0], 1, ink);
            qc_plot_text (b, 1, 1, pairs[i][1], 1, ink);
        }
        CHECK (a && b && memcmp (a->px, b->px, qc_npix (a->w, a->h) * 3) == 0,
               "'%s' drawn as '%s'", pairs[i][0], pairs[i][1]);
        qc_rgb_destroy (&a);
        qc_rgb_destroy (&b);
    }
}

int
main (void)
{
    qc_rgb_t *img = test_image ();
    qc_mask_t *mask = test_mask ();
    CHECK (img && mask);
    if (img && mask) {
        test_np_sum ();
        test_bins ();
        test_density (img, mask);
        test_templates (img, mask);
        test_names ();
        test_contrast (img, mask);
        test_channels (img, mask);
        test_deconv (img, mask);
        test_plot ();
    }
    qc_rgb_destroy (&img);
    qc_mask_destroy (&mask);
    return check_done ("stats_modules");
}
