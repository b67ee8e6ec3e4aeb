/* Working-size reads of the real slides in the shared folder: HistoQC's
 * size rules (the sizes below are what openslide-python's get_thumbnail
 * gave HistoQC for these slides), tissue-on-glass pixels, agreement with
 * HistoQC's own thumbnail, thread-count independence, bands that give
 * one read's bytes, and clean failure on a slide whose pixels do not
 * decode. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/png/png_io.h"
#include "kernels/slide/region_read.h"
#include "tests/unit/check.h"
#include "tests/unit/tiff_fixtures.h"

#include <openslide.h>
#include <unistd.h>

static char slide_dir[1024];

/* Through OpenSlide alone: what these tests compare with HistoQC's
 * reads (test_tiff_direct compares the direct reader with it). */
static qc_slide_t *
open_slide (const char *sub)
{
    char path[1200], err[512] = "";
    snprintf (path, sizeof path, "%s/%s", slide_dir, sub);
    qc_slide_t *s = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE, err,
                                        sizeof err);
    CHECK (s != NULL, "cannot open %s: %s", path, err);
    return s;
}

static qc_slide_rect_t
rect_of (int level, int64_t x0, int64_t y0, int w, int h)
{
    return (qc_slide_rect_t) { level, x0, y0, w, h };
}

static void
test_parse (void)
{
    qc_work_size_t z;
    CHECK (qc_work_size_parse ("1.25x", &z) == 0 && z.kind == QC_WORK_MAG
           && z.value == 1.25);
    CHECK (qc_work_size_parse ("2.5X", &z) == 0 && z.kind == QC_WORK_MAG);
    CHECK (qc_work_size_parse ("12.5x", &z) == 0 && z.value == 12.5);
    CHECK (qc_work_size_parse ("0.1", &z) == 0 && z.kind == QC_WORK_DOWNSCALE);
    CHECK (qc_work_size_parse (".5", &z) == 0 && z.value == 0.5);
    CHECK (qc_work_size_parse ("2", &z) == 0 && z.kind == QC_WORK_LEVEL);
    CHECK (qc_work_size_parse ("99.9", &z) == 0 && z.kind == QC_WORK_LEVEL);
    CHECK (qc_work_size_parse ("100", &z) == 0 && z.kind == QC_WORK_DIM);
    CHECK (qc_work_size_parse (" 1000 ", &z) == 0 && z.kind == QC_WORK_DIM
           && z.value == 1000);
    static const char *const bad[] = { "", "x", "-1", "1e3", "abc", "0",
        "0x", "1.2.3", "nan", "inf", "1.25xx", "0x10", "1 000" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK (qc_work_size_parse (bad[i], &z) == -1, "'%s'", bad[i]);
    CHECK (qc_work_size_parse (NULL, &z) == -1);
}

static void
test_thumbnail_rule (void)
{
    int64_t w, h;
    qc_region_thumbnail_size (2220, 2967, 185, 185, &w, &h);
    CHECK (w == 138 && h == 185, "%lld x %lld", (long long) w, (long long) h);
    qc_region_thumbnail_size (277, 370, 185, 185, &w, &h);  /* exact tie */
    CHECK (w == 138 && h == 185);
    qc_region_thumbnail_size (1110, 891, 555, 555, &w, &h);
    CHECK (w == 555 && h == 446, "%lld x %lld", (long long) w, (long long) h);
    qc_region_thumbnail_size (4443, 3567, 278, 278, &w, &h);
    CHECK (w == 278 && h == 223);
    qc_region_thumbnail_size (16, 16, 1000, 1000, &w, &h);
    CHECK (w == 16 && h == 16, "never enlarged");
    qc_region_thumbnail_size (5000, 2, 100, 100, &w, &h);
    CHECK (w == 100 && h == 1, "at least one pixel");
}

/* Plans work_size on a slide; returns 0 and fills plan, or -1. */
static int
plan_for (qc_slide_t *osr, const char *ws, double fallback,
          qc_region_plan_t *plan, char *err, size_t errlen)
{
    qc_region_request_t req;
    memset (&req, 0, sizeof req);
    if (qc_work_size_parse (ws, &req.size))
        return -1;
    if (qc_region_base_mag (osr, fallback, &req.base_mag))
        req.base_mag = 0;
    return qc_region_plan (osr, &req, plan, err, errlen);
}

static void
test_plans (void)
{
    char err[512];
    qc_region_plan_t p;
    struct {
        const char *slide, *ws;
        double fallback;
        int level, w, h;
    } cases[] = {
        { "real/CMU-1-Small-Region.svs", "1.25x", 0, 0, 138, 185 },
        { "real/CMU-1-Small-Region.svs", "2.5x", 0, 0, 278, 371 },
        { "real/CMU-1-Small-Region.svs", "1000", 0, 0, 748, 1000 },
        { "real/CMU-1-Small-Region.svs", "0.25", 0, 0, 555, 742 },
        { "real/CMU-1-Small-Region-pyramid.svs", "1.25x", 0, 3, 138, 185 },
        { "real/CMU-1-Small-Region-pyramid.svs", "1", 0, 1, 1110, 1483 },
        { "real/TCGA-CR-7395-pyramid.svs", "1.25x", 0, 3, 278, 223 },
        { "real/TCGA-CR-7395-pyramid.svs", "2.5x", 0, 2, 555, 446 },
        { "real/TCGA-CR-7395-01A-01-TS1.svs", "1.25x", 20, 1, 278, 223 },
        { "real/test3-DAPI-2.ndpi", "1.25x", 0, 5, 124, 152 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qc_slide_t *osr = open_slide (cases[i].slide);
        if (!osr)
            continue;
        err[0] = '\0';
        CHECK (plan_for (osr, cases[i].ws, cases[i].fallback, &p, err,
                         sizeof err) == 0, "%s %s: %s", cases[i].slide,
               cases[i].ws, err);
        CHECK (p.level == cases[i].level && p.out_w == cases[i].w
               && p.out_h == cases[i].h && p.warning[0] == '\0',
               "%s %s: level %d, %d x %d", cases[i].slide, cases[i].ws,
               p.level, p.out_w, p.out_h);
        qc_slide_close (&osr);
    }

    /* no magnification in the metadata and none configured */
    qc_slide_t *osr = open_slide ("real/TCGA-CR-7395-01A-01-TS1.svs");
    if (osr) {
        err[0] = '\0';
        CHECK (plan_for (osr, "1.25x", 0, &p, err, sizeof err) == -1
               && strstr (err, "magnification") != NULL, "%s", err);
        CHECK (plan_for (osr, "500", 0, &p, err, sizeof err) == 0
               && p.out_w == 500 && p.out_h == 401, "pixel sizes need none");
        CHECK (qc_region_read_work_size (osr, "1.25x", 0, 1, 2, err, sizeof err)
               == NULL && strstr (err, "base_mag") != NULL, "%s", err);
        qc_slide_close (&osr);
    }

    osr = open_slide ("real/CMU-1-Small-Region.svs");
    if (osr) {
        /* a level that does not exist: the last one, with a warning */
        CHECK (plan_for (osr, "9", 0, &p, err, sizeof err) == 0
               && p.level == 0 && p.out_w == 2220 && p.warning[0] != '\0');
        /* above the base magnification (20x): the slide's own pixels,
         * with a warning; the base magnification itself: none */
        CHECK (plan_for (osr, "40x", 0, &p, err, sizeof err) == 0 && p.level == 0
               && p.out_w == 2220 && p.out_h == 2967
               && strstr (p.warning, "above the slide's base magnification (20x)"),
               "40x of a 20x slide: %d x %d, '%s'", p.out_w, p.out_h, p.warning);
        CHECK (plan_for (osr, "20x", 0, &p, err, sizeof err) == 0 && p.out_w == 2220
               && p.warning[0] == '\0', "20x of a 20x slide: '%s'", p.warning);
        /* bounding box: rint (bbox / 16) exactly */
        qc_region_request_t req = { { QC_WORK_MAG, 1.25 }, 20.0, 1,
                                    100, 200, 1600, 1608, 1 };
        CHECK (qc_region_plan (osr, &req, &p, err, sizeof err) == 0
               && p.x0 == 100 && p.y0 == 200 && p.src_w == 1600
               && p.src_h == 1608 && p.out_w == 100 && p.out_h == 100,
               "%d x %d", p.out_w, p.out_h);
        req.bbox_w = 5000;
        CHECK (qc_region_plan (osr, &req, &p, err, sizeof err) == -1
               && strstr (err, "bounding box") != NULL);
        CHECK (qc_region_plan (NULL, &req, &p, err, sizeof err) == -1);
        double mag;
        CHECK (qc_region_base_mag (osr, 0, &mag) == 0 && mag == 20.0);
        qc_slide_close (&osr);
    }
}

static void
test_read_cmu (void)
{
    char err[512] = "";
    qc_slide_t *osr = open_slide ("real/CMU-1-Small-Region.svs");
    if (!osr)
        return;
    qc_rgb_t *img = qc_region_read_work_size (osr, "1.25x", 0, 1, 4, err,
                                              sizeof err);
    CHECK (img && img->w == 138 && img->h == 185, "%s", err);
    if (img) {
        /* tissue on glass: much bright background, a good share of
         * stained tissue, which is pink-purple (R and B above G) */
        size_t n = (size_t) img->w * img->h, glass = 0, tissue = 0;
        double s[3] = { 0, 0, 0 };
        for (size_t i = 0; i < n; i++) {
            const uint8_t *p = img->px + i * 3;
            double g = qc_px_gray (p[0], p[1], p[2]);
            if (g > 0.85)
                glass++;
            else if (g < 0.8) {
                tissue++;
                for (int c = 0; c < 3; c++)
                    s[c] += p[c];
            }
        }
        CHECK (glass > n / 10 && tissue > n / 10, "glass %zu tissue %zu of %zu",
               glass, tissue, n);
        CHECK (tissue && s[0] > s[1] && s[2] > s[1], "tissue RGB %.0f %.0f %.0f",
               s[0] / (tissue ? tissue : 1), s[1] / (tissue ? tissue : 1),
               s[2] / (tissue ? tissue : 1));
        /* the same with one thread, bit for bit */
        qc_rgb_t *one = qc_region_read_work_size (osr, "1.25x", 0, 1, 1, err,
                                                  sizeof err);
        CHECK (one && memcmp (one->px, img->px, n * 3) == 0,
               "thread count changes nothing");
        qc_rgb_destroy (&one);
        /* the band reader (regions over the one-read limit, and a GPU
         * lane's reads): the same whatever the thread count, and the one
         * read's bytes, though the scale (2220 / 138, about 16.1) leaves
         * output rows whose source rows two bands share */
        qc_region_set_whole_max (1000);
        qc_rgb_t *b1 = qc_region_read_work_size (osr, "1.25x", 0, 1, 1, err,
                                                 sizeof err);
        qc_rgb_t *b4 = qc_region_read_work_size (osr, "1.25x", 0, 1, 4, err,
                                                 sizeof err);
        qc_region_set_whole_max (0);
        CHECK (b1 && b4 && memcmp (b1->px, b4->px, n * 3) == 0,
               "bands: thread count changes nothing");
        int bmax = 0;
        for (size_t i = 0; b1 && i < n * 3; i++) {
            int d = abs ((int) b1->px[i] - (int) img->px[i]);
            bmax = d > bmax ? d : bmax;
        }
        CHECK (b1 && bmax == 0, "bands vs one read: max difference %d", bmax);
        qc_rgb_destroy (&b1);
        qc_rgb_destroy (&b4);
        /* bands (cut at the 240-row tiles) add up to the whole: against
         * the area resize of the full-resolution level, only the order
         * of additions differs */
        qc_rgb_t *full = NULL, *small = qc_rgb_new (138, 185);
        qc_slide_rect_t level0 = rect_of (0, 0, 0, 2220, 2967);
        CHECK (qc_region_read_rect (osr, &level0, 2220, 2967, 4, &full, err,
                                    sizeof err) == 0, "%s", err);
        CHECK (full && qc_cpu_resize_rgb (full, QC_INTERP_AREA, small) == 0);
        int maxd = 0, ndiff = 0;
        for (size_t i = 0; full && i < n * 3; i++) {
            int d = abs ((int) small->px[i] - (int) img->px[i]);
            maxd = d > maxd ? d : maxd;
            ndiff += d != 0;
        }
        CHECK (full && maxd <= 1 && ndiff < 20, "max %d, %d differ", maxd,
               ndiff);
        qc_rgb_destroy (&full);
        qc_rgb_destroy (&small);
        /* a region read at its own size through the band reader (a 10x
         * run's read of a 10x level): rows straight into the image, the
         * bytes of one read, also for a region that starts inside a
         * tile row, on 1 and 4 threads */
        const qc_slide_rect_t same[] = { rect_of (0, 0, 0, 2220, 2967),
                                         rect_of (0, 37, 301, 1500, 1111) };
        for (size_t k = 0; k < 2; k++) {
            qc_rgb_t *whole = NULL, *band[2] = { NULL, NULL };
            int w = same[k].w, h = same[k].h;
            CHECK (qc_region_read_rect (osr, &same[k], w, h, 1, &whole, err,
                                        sizeof err) == 0, "%s", err);
            qc_region_set_whole_max (1000);
            for (int t = 0; t < 2; t++)
                CHECK (qc_region_read_rect (osr, &same[k], w, h, t ? 4 : 1,
                                            &band[t], err, sizeof err) == 0,
                       "%s", err);
            qc_region_set_whole_max (0);
            for (int t = 0; t < 2; t++)
                CHECK (whole && band[t]
                       && memcmp (whole->px, band[t]->px, (size_t) w * h * 3) == 0,
                       "same-size bands, region %zu, %d threads: not the one "
                       "read's bytes", k, t ? 4 : 1);
            qc_rgb_destroy (&whole);
            qc_rgb_destroy (&band[0]);
            qc_rgb_destroy (&band[1]);
        }
    }
    qc_rgb_destroy (&img);

    /* identity read equals OpenSlide's pixels; a 4x reduction of it
     * equals the area resize op on those pixels */
    qc_rgb_t *id = NULL, *red = NULL;
    qc_slide_rect_t piece = rect_of (0, 1000, 1200, 64, 48);
    CHECK (qc_region_read_rect (osr, &piece, 64, 48, 3, &id, err, sizeof err)
           == 0, "%s", err);
    CHECK (qc_region_read_rect (osr, &piece, 16, 12, 3, &red, err, sizeof err)
           == 0, "%s", err);
    uint32_t *argb = malloc (64 * 48 * sizeof *argb);
    openslide_t *raw = openslide_open (qc_slide_path (osr));
    CHECK (raw != NULL);
    if (raw) {
        openslide_read_region (raw, argb, 1000, 1200, 0, 64, 48);
        openslide_close (raw);
    }
    int bad = 0;
    for (int i = 0; id && i < 64 * 48; i++) {
        uint8_t rgb[3];
        qc_px_argb_over (argb[i], 255, 255, 255, rgb);
        bad += memcmp (rgb, id->px + i * 3, 3) != 0;
    }
    CHECK (id && bad == 0, "%d pixels differ from OpenSlide", bad);
    qc_rgb_t *ref = qc_rgb_new (16, 12);
    CHECK (id && red && qc_cpu_resize_rgb (id, QC_INTERP_AREA, ref) == 0
           && memcmp (ref->px, red->px, 16 * 12 * 3) == 0,
           "reading resamples like resize_rgb");
    free (argb);
    qc_rgb_destroy (&id);
    qc_rgb_destroy (&red);
    qc_rgb_destroy (&ref);
    qc_slide_rect_t level5 = rect_of (5, 0, 0, 10, 10);
    qc_slide_rect_t ten = rect_of (0, 0, 0, 10, 10);
    CHECK (qc_region_read_rect (osr, &level5, 10, 10, 1, &id, err, sizeof err)
           == -1 && id == NULL, "no level 5");
    CHECK (qc_region_read_rect (osr, &ten, 0, 10, 1, &id, err, sizeof err)
           == -1);
    qc_slide_close (&osr);
}

/* HistoQC wrote its 1.25x working image of this slide as _thumb.png:
 * same size, and pixels within PIL's Lanczos vs our area average. */
static void
test_matches_histoqc (void)
{
    char err[512] = "", path[1200];
    snprintf (path, sizeof path, "%s/reference/histoqc/TCGA-CR-7395-pyramid.svs/"
              "TCGA-CR-7395-pyramid.svs_thumb.png", check_shared_dir ());
    qc_rgb_t *ref = qc_png_read_rgb (path, err, sizeof err);
    if (!ref) {
        printf ("note: %s not readable (%s); comparison skipped\n", path, err);
        return;
    }
    qc_slide_t *osr = open_slide ("real/TCGA-CR-7395-pyramid.svs");
    qc_rgb_t *img = osr ? qc_region_read_work_size (osr, "1.25x", 0, 1, 4, err,
                                                    sizeof err) : NULL;
    CHECK (img && img->w == ref->w && img->h == ref->h, "%s", err);
    if (img && img->w == ref->w && img->h == ref->h) {
        size_t n = (size_t) img->w * img->h * 3;
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += abs ((int) img->px[i] - (int) ref->px[i]);
        CHECK (sum / n < 3.0, "mean |difference| %.3f", sum / n);
    }
    qc_rgb_destroy (&img);
    qc_rgb_destroy (&ref);
    if (osr)
        qc_slide_close (&osr);
}

static void
test_failures (void)
{
    char err[512] = "";
    char path[1200];
    snprintf (path, sizeof path, "%s/odd/unreadable.svs", slide_dir);
    qc_slide_t *osr = qc_slide_open (path, err, sizeof err);
    if (osr) {
        qc_rgb_t *img = qc_region_read_work_size (osr, "1.25x", 20, 1, 4, err,
                                                  sizeof err);
        CHECK (img == NULL && strlen (err) > 0, "unreadable.svs: '%s'", err);
        printf ("unreadable.svs: %s\n", err);
        qc_slide_close (&osr);
    } else {
        CHECK (0, "unreadable.svs should open (its pixels fail)");
    }
    CHECK (qc_region_read_work_size (NULL, "1.25x", 20, 1, 4, err, sizeof err)
           == NULL);
    snprintf (path, sizeof path, "%s/odd/small.svs", slide_dir);
    osr = qc_slide_open (path, err, sizeof err);
    if (osr) {                  /* 16 x 16: 1 x 1 at 1.25x of 20x */
        qc_rgb_t *img = qc_region_read_work_size (osr, "1.25x", 20, 1, 4, err,
                                                  sizeof err);
        CHECK (img && img->w >= 1 && img->h >= 1, "%s", err);
        qc_rgb_destroy (&img);
        img = qc_region_read_work_size (osr, "1000", 0, 1, 4, err, sizeof err);
        CHECK (img && img->w == 16 && img->h == 16, "not enlarged: %s", err);
        qc_rgb_destroy (&img);
        qc_slide_close (&osr);
    }
}

/* Noise from the generator whose state is ctx, tile after tile. */
static void
fill_noise (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp,
            uint8_t *tile)
{
    uint32_t *seed = ctx;
    for (size_t i = 0; i < (size_t) tw * th * (size_t) spp; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        tile[i] = (uint8_t) (*seed >> 24);
    }
}

/* A tiled RGB TIFF of w x h noise pixels (uncompressed, tiles of tw x th)
 * at path, which OpenSlide and the direct reader both read. 0 or -1. */
static int
write_noise_tiff (const char *path, int w, int h, int tw, int th)
{
    uint32_t seed = 12345u;
    fx_tiff_level_t level = { .w = (uint32_t) w, .h = (uint32_t) h, .tile_w = (uint32_t) tw,
                              .tile_h = (uint32_t) th, .spp = 3,
                              .compression = COMPRESSION_NONE };
    return fx_tiff_write (path, &level, 1, fill_noise, &seed);
}

/* Bands give the one read's bytes where two bands share an output
 * row's source rows and the later band brings several of them (480
 * rows of 16-row tiles to 130: 3.69 source rows an output row). The
 * two halves' sums added together (the band reader before this test)
 * round differently from the sequential sum at about one pixel value
 * in 3000 of such rows (a weighted average of bytes falling on k + 0.5,
 * the weights being n / 480); noise over 256 columns and 3 channels
 * gives thousands of chances. Through the direct reader and through
 * OpenSlide, on 2 and 3 threads. */
static void
test_bands_exact (void)
{
    char dir[] = "/tmp/qc-bands-XXXXXX", path[64], err[512] = "";
    if (!mkdtemp (dir)) {
        CHECK (0, "mkdtemp");
        return;
    }
    snprintf (path, sizeof path, "%s/noise.tiff", dir);
    CHECK (write_noise_tiff (path, 256, 480, 64, 16) == 0, "writing %s", path);
    for (int os = 0; os < 2; os++) {
        qc_slide_t *s = qc_slide_open_with (path, os ? QC_SLIDE_READERS_OPENSLIDE
                                            : QC_SLIDE_READERS_ALL, err, sizeof err);
        CHECK (s != NULL, "open %s: %s", path, err);
        if (!s)
            continue;
        qc_slide_rect_t r = rect_of (0, 0, 0, 256, 480);
        CHECK (qc_slide_rows_exact (s, &r), "rows of level 0 are exact");
        CHECK (qc_slide_tile_height (s, 0) == 16, "tile height %d",
               qc_slide_tile_height (s, 0));
        qc_rgb_t *one = NULL;
        CHECK (qc_region_read_rect (s, &r, 256, 130, 1, &one, err, sizeof err)
               == 0, "%s", err);
        for (int t = 2; one && t <= 3; t++) {
            qc_rgb_t *b = NULL;
            CHECK (qc_region_read_rect (s, &r, 256, 130, t, &b, err, sizeof err)
                   == 0, "%s", err);
            size_t d = 0;
            for (size_t i = 0; b && i < (size_t) 256 * 130 * 3; i++)
                d += one->px[i] != b->px[i];
            CHECK (b && d == 0, "%s, %d threads: %zu of %d bytes differ from "
                   "one read", os ? "OpenSlide" : "direct reader", t, d,
                   256 * 130 * 3);
            qc_rgb_destroy (&b);
        }
        qc_rgb_destroy (&one);
        qc_slide_close (&s);
    }
    unlink (path);
    rmdir (dir);
    /* where OpenSlide alone reads a level whose downsample is not whole
     * (2.0003 here), its rows are not exact: one read, never bands */
    char pyr[1200];
    snprintf (pyr, sizeof pyr, "%s/real/CMU-1-Small-Region-pyramid.svs", slide_dir);
    for (int os = 0; os < 2; os++) {
        qc_slide_t *s = qc_slide_open_with (pyr, os ? QC_SLIDE_READERS_OPENSLIDE
                                            : QC_SLIDE_READERS_ALL, err, sizeof err);
        CHECK (s != NULL, "open %s: %s", pyr, err);
        qc_slide_rect_t r = rect_of (1, 0, 0, 1000, 1000);
        CHECK (!s || qc_slide_rows_exact (s, &r) == !os,
               "level 1 (downsample 2.0003), %s: rows exact %d",
               os ? "OpenSlide" : "direct reader", s ? qc_slide_rows_exact (s, &r) : -1);
        qc_slide_close (&s);
    }
}

int
main (void)
{
    snprintf (slide_dir, sizeof slide_dir, "%s/slides", check_shared_dir ());
    test_parse ();
    test_thumbnail_rule ();
    test_plans ();
    test_read_cmu ();
    test_matches_histoqc ();
    test_failures ();
    test_bands_exact ();
    return check_done ("test_image_region");
}
