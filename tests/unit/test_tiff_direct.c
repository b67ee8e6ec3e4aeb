/* The direct TIFF level reader (kernels/slide/tiff_direct.h) against OpenSlide
 * itself: every level of every slide it accepts, whole and in random
 * pieces (inside, across tiles, partly outside the level), must be the
 * pixels openslide_read_region gives, composited over the background,
 * byte for byte. Slides it must leave to OpenSlide (JPEG 2000 Aperio,
 * NDPI, not TIFF) are refused; a slide whose tiles do not decode is
 * handed back to OpenSlide and fails with OpenSlide's reason; the
 * region reader gives the same image with and without it, in one read
 * and in bands, with one thread and four; damaged tiles fail as they do
 * through OpenSlide. Slides: ../shared/slides and three made by
 * bin/qc-mkslide (one a BigTIFF; run from the repository root). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openslide.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/slide/region_read.h"
#include "kernels/slide/tiff_direct.h"
#include "tests/unit/check.h"
#include "tests/unit/slide_fixtures.h"

static const uint8_t WHITE[3] = { 255, 255, 255 };

/* OpenSlide's pixels of the w x h rectangle of level at level-0 (x0,
 * y0), over white (the slides here have
 * no background colour), as RGB. NULL when OpenSlide failed. */
static uint8_t *
openslide_rgb (openslide_t *osr, int level, int64_t x0, int64_t y0, int w,
               int h)
{
    uint32_t *argb = malloc ((size_t) w * h * 4);
    uint8_t *rgb = malloc ((size_t) w * h * 3);
    if (!argb || !rgb) {
        free (argb);
        free (rgb);
        return NULL;
    }
    openslide_read_region (osr, argb, x0, y0, level, w, h);
    for (int y = 0; y < h; y++)
        qc_cpu_argb_over_row (argb + (size_t) y * w, (size_t) w, WHITE,
                              rgb + (size_t) y * w * 3);
    free (argb);
    if (openslide_get_error (osr)) {
        free (rgb);
        return NULL;
    }
    return rgb;
}

/* Opens path with OpenSlide and its direct reader (on a slide read
 * through OpenSlide alone), all checked to open. 0, or -1 (nothing left
 * open). */
static int
open_both (const char *path, openslide_t **osr, qc_tiff_direct_t **d)
{
    char why[256] = "";
    *d = NULL;
    *osr = openslide_open (path);
    qc_slide_t *meta = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE,
                                           why, sizeof why);
    CHECK (*osr != NULL && meta != NULL, "%s: %s", path, why);
    if (*osr && meta)
        *d = qc_tiff_direct_open (meta, why, sizeof why);
    qc_slide_close (&meta);
    CHECK (!*osr || *d, "%s: %s", path, why);
    if (*osr && !*d) {
        openslide_close (*osr);
        *osr = NULL;
    }
    return *d ? 0 : -1;
}

/* path as the pipeline opens it (every reader) and through OpenSlide
 * alone; the first must have the direct reader. 0, or -1 (none open). */
static int
open_two_ways (const char *path, qc_slide_t **all, qc_slide_t **os)
{
    char err[512] = "";
    *all = qc_slide_open (path, err, sizeof err);
    *os = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE, err,
                              sizeof err);
    CHECK (*all && *os, "%s: %s", path, err);
    CHECK (!*all || strcmp (qc_slide_readers (*all), "direct TIFF, OpenSlide")
                    == 0, "%s: readers %s", path,
           *all ? qc_slide_readers (*all) : "");
    CHECK (!*os || strcmp (qc_slide_readers (*os), "OpenSlide") == 0);
    if (*all && *os)
        return 0;
    qc_slide_close (all);
    qc_slide_close (os);
    return -1;
}

/* A piece of the level read directly equals the same piece of whole,
 * the level as OpenSlide gave it (white outside the level). */
static void
same_piece (const char *name, const qc_tiff_direct_t *d, int level,
            const uint8_t *whole, int64_t lw, int64_t lh, int64_t lx,
            int64_t ly, int w, int h)
{
    uint8_t *got = malloc ((size_t) w * h * 3);
    char why[256] = "";
    int rc = got ? qc_tiff_direct_read (d, level, lx, ly, w, h, WHITE, got,
                                        (size_t) w * 3, why, sizeof why)
                 : -1;
    int ok = rc == 0;
    for (int y = 0; ok && y < h; y++)
        for (int x = 0; ok && x < w; x++) {
            int64_t sx = lx + x, sy = ly + y;
            const uint8_t *want = sx >= 0 && sy >= 0 && sx < lw && sy < lh
                                  ? whole + ((size_t) sy * lw + sx) * 3
                                  : WHITE;
            ok = memcmp (got + ((size_t) y * w + x) * 3, want, 3) == 0;
        }
    CHECK (ok, "%s level %d piece (%lld, %lld) %d x %d: rc %d %s", name,
           level, (long long) lx, (long long) ly, w, h, rc, why);
    free (got);
}

/* Every level whole against OpenSlide, then random pieces of each. */
static void
check_slide (const char *path, int first_unreliable_level)
{
    openslide_t *osr;
    qc_tiff_direct_t *d;
    if (open_both (path, &osr, &d))
        return;
    char why[256] = "";
    const char *name = strrchr (path, '/') ? strrchr (path, '/') + 1 : path;
    int n = openslide_get_level_count (osr);
    if (first_unreliable_level > 0 && first_unreliable_level < n)
        n = first_unreliable_level;
    unsigned seed = 7;
    for (int level = 0; level < n; level++) {
        int64_t lw, lh;
        openslide_get_level_dimensions (osr, level, &lw, &lh);
        uint8_t *want = openslide_rgb (osr, level, 0, 0, (int) lw, (int) lh);
        uint8_t *got = malloc ((size_t) lw * lh * 3);
        int rc = want && got
                 ? qc_tiff_direct_read (d, level, 0, 0, (int) lw, (int) lh,
                                        WHITE, got, (size_t) lw * 3, why,
                                        sizeof why) : -1;
        int same = rc == 0 && memcmp (want, got, (size_t) lw * lh * 3) == 0;
        CHECK (same, "%s level %d (%lld x %lld): rc %d %s%s", name, level,
               (long long) lw, (long long) lh, rc, why,
               want ? "" : " (OpenSlide failed)");
        for (int k = 0; same && k < 16; k++) {
            int w = 1 + (int) (rand_r (&seed) % (unsigned) (lw < 600 ? lw : 600));
            int h = 1 + (int) (rand_r (&seed) % (unsigned) (lh < 600 ? lh : 600));
            /* the last four poke past each edge */
            int64_t x = rand_r (&seed) % (lw - w + 1);
            int64_t y = rand_r (&seed) % (lh - h + 1);
            if (k == 12) x = lw - w / 2;
            if (k == 13) y = lh - h / 3;
            if (k == 14) x = -w / 2;
            if (k == 15) y = -h / 2 - 1;
            same_piece (name, d, level, want, lw, lh, x, y, w, h);
        }
        free (want);
        free (got);
    }
    qc_tiff_direct_close (&d);
    CHECK (d == NULL);
    openslide_close (osr);
}

static void
check_refused (const char *path, const char *expect)
{
    char why[256] = "";
    qc_slide_t *slide = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE,
                                            why, sizeof why);
    CHECK (slide != NULL, "%s: %s", path, why);
    if (!slide)
        return;
    qc_tiff_direct_t *d = qc_tiff_direct_open (slide, why, sizeof why);
    CHECK (d == NULL && strstr (why, expect), "%s: '%s'", path, why);
    qc_tiff_direct_close (&d);
    qc_slide_close (&slide);
    /* and the pipeline's slide reads it through OpenSlide alone */
    slide = qc_slide_open (path, why, sizeof why);
    CHECK (slide && strcmp (qc_slide_readers (slide), "OpenSlide") == 0,
           "%s: readers %s", path, slide ? qc_slide_readers (slide) : why);
    qc_slide_close (&slide);
}

/* unreadable.svs opens but its tile's JPEG is broken: the direct read
 * hands it back, and the region reader fails with OpenSlide's reason,
 * as it does without the direct reader. */
static void
check_unreadable (const char *path)
{
    openslide_t *osr;
    qc_tiff_direct_t *d;
    if (open_both (path, &osr, &d))
        return;
    char why[256] = "";
    uint8_t px[16 * 16 * 3];
    CHECK (qc_tiff_direct_read (d, 0, 0, 0, 16, 16, WHITE, px, 48, why,
                                sizeof why) == QC_TIFF_DIRECT_FALLBACK
           && strstr (why, "libtiff"), "'%s'", why);
    openslide_close (osr);
    qc_tiff_direct_close (&d);
    qc_slide_t *all, *os;
    if (open_two_ways (path, &all, &os))
        return;
    qc_rgb_t *img = NULL;
    char err[512] = "", err2[512] = "";
    qc_slide_rect_t rect = { 0, 0, 0, 16, 16 };
    CHECK (qc_region_read_rect (all, &rect, 16, 16, 1, &img, err, sizeof err)
           == -1 && !img && strstr (err, "Bogus marker length"), "'%s'", err);
    CHECK (qc_region_read_rect (os, &rect, 16, 16, 1, &img, err2, sizeof err2)
           == -1 && strcmp (err, err2) == 0, "'%s' vs '%s'", err, err2);
    qc_slide_close (&all);
    qc_slide_close (&os);
}

static int
same_image (const qc_rgb_t *a, const qc_rgb_t *b)
{
    return a && b && a->w == b->w && a->h == b->h
           && memcmp (a->px, b->px, (size_t) a->w * a->h * 3) == 0;
}

/* The region reader with and without the direct reader: the working
 * image at several sizes (whole read, area and PIL shrink, a bounding
 * box on whole pixels and one between them), then in bands. */
static void
check_region_reads (const char *path)
{
    qc_slide_t *all, *osr;
    char err[512] = "";
    if (open_two_ways (path, &all, &osr))
        return;
    static const struct {
        qc_work_kind_t kind;
        double value;
        int area, bbox;
        int64_t bx, by, bw, bh;
    } req[] = {
        { QC_WORK_MAG, 1.25, 1, 0, 0, 0, 0, 0 },
        { QC_WORK_MAG, 1.25, 0, 0, 0, 0, 0, 0 },
        { QC_WORK_MAG, 10, 1, 0, 0, 0, 0, 0 },
        { QC_WORK_LEVEL, 1, 1, 0, 0, 0, 0, 0 },
        { QC_WORK_DIM, 700, 1, 0, 0, 0, 0, 0 },
        { QC_WORK_MAG, 2.5, 1, 1, 1600, 800, 2400, 1600 },  /* 16 | 1600 */
        { QC_WORK_MAG, 2.5, 1, 1, 1601, 803, 2400, 1600 },
    };
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
        qc_region_request_t r = {
            .size = { req[i].kind, req[i].value }, .base_mag = 40,
            .area = req[i].area, .use_bbox = req[i].bbox,
            .bbox_x = req[i].bx, .bbox_y = req[i].by,
            .bbox_w = req[i].bw, .bbox_h = req[i].bh,
        };
        qc_region_plan_t plan;
        CHECK (qc_region_plan (osr, &r, &plan, err, sizeof err) == 0, "%s",
               err);
        /* OpenSlide, in one read: what every direct read must give */
        qc_region_set_whole_max (0);
        qc_rgb_t *os = NULL;
        CHECK (qc_region_read (osr, &plan, 1, &os, err, sizeof err) == 0,
               "%s", err);
        for (int big = 0; big < 2; big++) {
            /* big = 1: every region over 5000 pixels is read in bands.
             * (OpenSlide's own bands are not compared: where a level's
             * downsample is not whole, they start between pixels.) */
            qc_region_set_whole_max (big ? 5000 : 0);
            qc_rgb_t *d1 = NULL, *d4 = NULL;
            CHECK (qc_region_read (all, &plan, 1, &d1, err, sizeof err)
                   == 0, "%s", err);
            CHECK (qc_region_read (all, &plan, 4, &d4, err, sizeof err)
                   == 0, "%s", err);
            CHECK (same_image (os, d1) && same_image (d1, d4),
                   "request %zu (bands %d): level %d %lld x %lld -> %d x %d",
                   i, big, plan.level, (long long) plan.src_w,
                   (long long) plan.src_h, plan.out_w, plan.out_h);
            qc_rgb_destroy (&d1);
            qc_rgb_destroy (&d4);
        }
        qc_rgb_destroy (&os);
    }
    qc_region_set_whole_max (0);
    qc_slide_close (&all);
    qc_slide_close (&osr);
}

/* A copy of path with bytes overwritten in the middle of the file,
 * where the largest level's tiles are: the region reader gives the same
 * answer with and without the direct reader (the same failure, or the
 * same pixels), and nothing crashes. */
static void
check_damaged (const char *path, const char *copy, long at, int nbytes)
{
    FILE *in = fopen (path, "rb"), *out = fopen (copy, "wb");
    CHECK (in && out, "cannot copy %s", path);
    if (!in || !out) {
        if (in)
            fclose (in);
        if (out)
            fclose (out);
        return;
    }
    char buf[65536];
    size_t got;
    long pos = 0;
    unsigned seed = 11;
    while ((got = fread (buf, 1, sizeof buf, in)) > 0) {
        for (size_t i = 0; i < got; i++)
            if (pos + (long) i >= at && pos + (long) i < at + nbytes)
                buf[i] = (char) rand_r (&seed);
        CHECK (fwrite (buf, 1, got, out) == got);
        pos += (long) got;
    }
    fclose (in);
    fclose (out);
    char why[256] = "", e1[512] = "", e2[512] = "";
    qc_slide_t *all = qc_slide_open (copy, why, sizeof why);
    qc_slide_t *osr = qc_slide_open_with (copy, QC_SLIDE_READERS_OPENSLIDE,
                                          why, sizeof why);
    CHECK (!all == !osr, "damaged at %ld: opens one way only", at);
    if (!all || !osr) {         /* OpenSlide refuses it: nothing to read */
        qc_slide_close (&all);
        qc_slide_close (&osr);
        unlink (copy);
        return;
    }
    int64_t lw = 0, lh = 0;
    qc_slide_level_size (osr, 0, &lw, &lh);
    qc_slide_rect_t rect = { 0, 0, 0, (int) lw, (int) lh };
    qc_rgb_t *a = NULL, *b = NULL;
    int rd = qc_region_read_rect (all, &rect, (int) lw / 4, (int) lh / 4, 1,
                                  &a, e1, sizeof e1);
    int ro = qc_region_read_rect (osr, &rect, (int) lw / 4, (int) lh / 4, 1,
                                  &b, e2, sizeof e2);
    CHECK (rd == ro && (rd != 0 || same_image (a, b))
           && (rd == 0 || strcmp (e1, e2) == 0),
           "damaged at %ld: direct %d '%s', OpenSlide %d '%s'", at, rd, e1, ro,
           e2);
    /* in bands on three threads (a GPU lane's read): the same outcome;
     * a band the direct reader gives up on is OpenSlide's, and level 0's
     * rows are whole pixels for it too */
    qc_rgb_t *c = NULL;
    int r3 = qc_region_read_rect (all, &rect, (int) lw / 4, (int) lh / 4, 3,
                                  &c, e1, sizeof e1);
    CHECK (r3 == rd && (r3 != 0 || same_image (a, c)),
           "damaged at %ld, 3 threads: %d '%s', one thread %d", at, r3, e1, rd);
    qc_rgb_destroy (&c);
    qc_rgb_destroy (&a);
    qc_rgb_destroy (&b);
    qc_slide_close (&all);
    qc_slide_close (&osr);
    unlink (copy);
}

static void
check_arguments (const char *path)
{
    char why[256];
    CHECK (qc_tiff_direct_open (NULL, why, sizeof why) == NULL);
    openslide_t *osr;
    qc_tiff_direct_t *d;
    if (open_both (path, &osr, &d))
        return;
    uint8_t px[64 * 3];
    CHECK (qc_tiff_direct_read (NULL, 0, 0, 0, 8, 8, WHITE, px, 24, why,
                                sizeof why) == -1);
    CHECK (qc_tiff_direct_read (d, 99, 0, 0, 8, 8, WHITE, px, 24, why,
                                sizeof why) == -1);
    CHECK (qc_tiff_direct_read (d, -1, 0, 0, 8, 8, WHITE, px, 24, why,
                                sizeof why) == -1);
    CHECK (qc_tiff_direct_read (d, 0, 0, 0, 0, 8, WHITE, px, 24, why,
                                sizeof why) == -1);
    CHECK (qc_tiff_direct_read (d, 0, 0, 0, 8, 8, WHITE, px, 23, why,
                                sizeof why) == -1, "stride below a row");
    CHECK (qc_tiff_direct_read (d, 0, 0, 0, 8, 8, NULL, px, 24, why,
                                sizeof why) == -1);
    /* wholly outside the level: all background */
    memset (px, 0, sizeof px);
    CHECK (qc_tiff_direct_read (d, 0, -100, -100, 8, 8, WHITE, px, 24, why,
                                sizeof why) == 0 && px[0] == 255
           && px[sizeof px - 1] == 255);
    int64_t lx, ly;
    CHECK (qc_tiff_direct_aligned (d, 1, 16, 32, &lx, &ly) == 1 && lx == 4
           && ly == 8, "level 1 of this slide has downsample 4");
    CHECK (qc_tiff_direct_aligned (d, 1, 17, 32, &lx, &ly) == 0);
    CHECK (qc_tiff_direct_aligned (d, 7, 0, 0, &lx, &ly) == 0);
    CHECK (qc_tiff_direct_tile_height (d, 0) == 256
           && qc_tiff_direct_tile_height (d, 9) == 0);
    qc_tiff_direct_close (&d);
    qc_tiff_direct_close (&d);
    qc_tiff_direct_close (NULL);
    if (osr)
        openslide_close (osr);
}

int
main (void)
{
    char dir[1024], path[1200], tmp[] = "/tmp/qc-tiffdirect-XXXXXX";
    snprintf (dir, sizeof dir, "%s/slides", check_shared_dir ());
    static const char *const accepted[] = {
        "real/CMU-1-Small-Region.svs",          /* JPEG, RGB, 240 tiles */
        "real/CMU-1-Small-Region-pyramid.svs",  /* JPEG, YCbCr, 5 levels */
        "real/TCGA-CR-7395-pyramid.svs",
        "odd/small.svs",                        /* 16 x 16 in a 64 tile */
    };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        snprintf (path, sizeof path, "%s/%s", dir, accepted[i]);
        check_slide (path, 0);
    }
    /* generic TIFF, deflate; OpenSlide's own pixels of its levels 2 and
     * 3 (smaller than a tile) change from read to read (slide.h) */
    snprintf (path, sizeof path, "%s/odd/boxes.tiff", dir);
    check_slide (path, 2);

    snprintf (path, sizeof path, "%s/real/TCGA-CR-7395-01A-01-TS1.svs", dir);
    check_refused (path, "read by OpenSlide only");   /* JPEG 2000 */
    snprintf (path, sizeof path, "%s/real/test3-DAPI-2.ndpi", dir);
    check_refused (path, "hamamatsu");
    snprintf (path, sizeof path, "%s/odd/unreadable.svs", dir);
    check_unreadable (path);

    /* generated: 240-pixel tiles and an odd height, so levels have
     * partial tiles and downsamples that are not whole numbers; and one
     * with whole downsamples for the bounding box and band reads */
    CHECK (mkdtemp (tmp) != NULL);
    char g1[1200], g2[1200];
    snprintf (g1, sizeof g1, "%s/odd.svs", tmp);
    snprintf (g2, sizeof g2, "%s/even.svs", tmp);
    char *a1[] = { FX_MKSLIDE, "-o", g1, "--width", "5000", "--height", "3751",
                   "--tile", "240", "--seed", "3", "--threads", "2", NULL };
    char *a2[] = { FX_MKSLIDE, "-o", g2, "--width", "6400", "--height", "4800",
                   "--seed", "4", "--threads", "2", NULL };
    char g3[1200];
    snprintf (g3, sizeof g3, "%s/big.svs", tmp);
    char *a3[] = { FX_MKSLIDE, "-o", g3, "--width", "3000", "--height", "2000",
                   "--tile", "512", "--quality", "95", "--bigtiff", "--seed",
                   "5", "--threads", "2", NULL };
    int made = fx_mkslide (a1) == 0 && fx_mkslide (a2) == 0
               && fx_mkslide (a3) == 0;
    CHECK (made, "%s not built (make bin/qc-mkslide, from the repository "
           "root)", FX_MKSLIDE);
    if (made) {
        check_slide (g1, 0);
        check_slide (g2, 0);
        check_slide (g3, 0);            /* BigTIFF, 512-pixel tiles */
        check_region_reads (g1);
        check_region_reads (g2);
        check_arguments (g2);
        char bad[1300];
        snprintf (bad, sizeof bad, "%s/damaged.svs", tmp);
        /* here: the first two fail ("Corrupt JPEG data: premature end
         * of data segment", from both), the third decodes the same */
        check_damaged (g2, bad, 20000, 64);
        check_damaged (g2, bad, 900000, 4096);
        check_damaged (g2, bad, 1608000, 64);
    }
    unlink (g1);
    unlink (g2);
    unlink (g3);
    rmdir (tmp);
    return check_done ("test_tiff_direct");
}
