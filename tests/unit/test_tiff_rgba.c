/* Tiled TIFFs that are not 8-bit RGB or JPEG (grey, 16-bit samples,
 * planes stored apart, an alpha channel, premultiplied or not), read by
 * the direct reader through libtiff's RGBA interface (tiff_rgba.h).
 * Before, OpenSlide alone read them, and a level smaller than one of its
 * tiles (a small slide's 1.25x) came back different from read to read,
 * so such a slide failed ("Read another level"), by path and by URL.
 *
 * Each is written here with libtiff as a 3-level Aperio slide whose
 * every pixel is known (lossless): levels of 992 x 688 (partial tiles
 * at the right and bottom), 248 x 172 and 62 x 43, in 128-pixel tiles
 * (downsamples of 4 and 16, so pieces start on whole pixels).
 * What must hold: the direct reader reads it; every level, whole and in
 * pieces, is the pixels written (over white where alpha is 0); level 0
 * is OpenSlide's read byte for byte (a level OpenSlide reads right,
 * partial alpha included); every level is trusted (qc_slide_level_reliable),
 * though through OpenSlide alone the smallest is not; the same slide by
 * byte source (as by URL) reads the same; an Orientation other than
 * top-left is read as stored, as the direct reader reads JPEG, and the
 * log says so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/slide/slide.h"
#include "shared/log.h"
#include "tests/unit/check.h"
#include "tests/unit/tiff_fixtures.h"
#include "shared/byte_source_file.h"

#define LEVELS 3

/* The last warning logged (the slide's own notes: Orientation). */
static char last_warning[512];

static void
sink (const qc_log_record_t *rec, void *arg)
{
    (void) arg;
    if (rec->level == QC_LOG_WARNING)
        snprintf (last_warning, sizeof last_warning, "%s", rec->message);
}
static const uint32_t LEVEL_W[LEVELS] = { 992, 248, 62 };
static const uint32_t LEVEL_H[LEVELS] = { 688, 172, 43 };

/* The colour written at level pixel (x, y), and its alpha: clear in the
 * 40 columns on the left, half in the next 24 (compared with OpenSlide
 * only: its rounding is the compositor's), opaque elsewhere. */
static void
pixel_at (uint32_t x, uint32_t y, uint8_t rgb[3], uint8_t *alpha)
{
    rgb[0] = (uint8_t) (x * 7 + y * 3);
    rgb[1] = (uint8_t) (((x / 8 + y / 8) % 2) ? 220 : 40);
    rgb[2] = (uint8_t) (x ^ y);
    *alpha = x < 40 ? 0 : x < 64 ? 128 : 255;
}

typedef struct {
    const char *name;
    int spp, bits, separate, alpha, compression, orientation;
} variant_t;

static void
fill_known (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp,
            uint8_t *tile)
{
    const variant_t *v = ctx;
    for (uint32_t i = 0; i < tw * th; i++) {
        uint8_t c[3], a;
        pixel_at (x0 + i % tw, y0 + i / tw, c, &a);
        uint8_t *p = tile + (size_t) i * (size_t) spp;
        if (spp == 1) {
            p[0] = c[0];
            continue;
        }
        for (int k = 0; k < 3; k++)     /* premultiplied: colour at most alpha */
            p[k] = v->alpha == EXTRASAMPLE_ASSOCALPHA ? (uint8_t) (c[k] * a / 255) : c[k];
        if (spp == 4)
            p[3] = a;
    }
}

static int
write_variant (const char *path, const variant_t *v)
{
    fx_tiff_level_t lv[LEVELS];
    for (int l = 0; l < LEVELS; l++)
        lv[l] = (fx_tiff_level_t) {
            .w = LEVEL_W[l], .h = LEVEL_H[l], .tile_w = 128, .tile_h = 128,
            .spp = v->spp, .compression = v->compression, .reduced = l > 0,
            .orientation = v->orientation, .bits = v->bits, .separate = v->separate,
            .alpha = v->alpha,
            .description = l ? NULL
                             : "Aperio Image Library v10.0.0\n"
                               "test slide 992x688 (128x128)|AppMag = 20|MPP = 0.5",
        };
    return fx_tiff_write (path, lv, LEVELS, fill_known, (void *) v);
}

/* Level l of s read whole (or the w x h piece at level pixel (lx, ly)),
 * NULL with err. */
static uint8_t *
read_piece (qc_slide_t *s, int l, int lx, int ly, int w, int h, char *err, size_t errlen)
{
    int ds = l == 0 ? 1 : l == 1 ? 4 : 16;
    qc_slide_rect_t rect = { l, (int64_t) lx * ds, (int64_t) ly * ds, w, h };
    uint8_t *px = malloc ((size_t) w * (size_t) h * 3);
    if (px && qc_slide_read_rows (s, &rect, 0, h, px, (size_t) w * 3, err, errlen) == 0)
        return px;
    free (px);
    return NULL;
}

/* Pixels of a piece at level pixel (lx, ly) that differ from what was
 * written, half-alpha columns skipped; the first in *at. */
static long
wrong_pixels (const variant_t *v, const uint8_t *px, int lx, int ly, int w, int h,
              char *at, size_t atlen)
{
    long wrong = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t c[3], a, want[3];
            pixel_at ((uint32_t) (lx + x), (uint32_t) (ly + y), c, &a);
            if (v->spp != 4)
                a = 255;
            if (a == 128)
                continue;
            for (int k = 0; k < 3; k++)
                want[k] = a == 0 ? 255 : v->spp == 1 ? c[0] : c[k];
            const uint8_t *got = px + ((size_t) y * (size_t) w + (size_t) x) * 3;
            if (memcmp (got, want, 3) != 0 && wrong++ == 0)
                snprintf (at, atlen, "(%d, %d): %u %u %u, not %u %u %u", lx + x, ly + y,
                          got[0], got[1], got[2], want[0], want[1], want[2]);
        }
    return wrong;
}

/* Every level whole and a few pieces of it, against what was written. */
static void
check_known (qc_slide_t *s, const variant_t *v, const char *how)
{
    static const int pieces[][4] = { { 0, 0, 1, 1 }, { 100, 120, 130, 9 },
                                     { 3, 160, 250, 15 }, { 30, 20, 32, 23 } };
    char err[512] = "", at[160] = "";
    for (int l = 0; l < LEVELS; l++) {
        uint8_t *px = read_piece (s, l, 0, 0, (int) LEVEL_W[l], (int) LEVEL_H[l], err,
                                  sizeof err);
        CHECK (px != NULL, "%s (%s) level %d: %s", v->name, how, l, err);
        long wrong = px ? wrong_pixels (v, px, 0, 0, (int) LEVEL_W[l], (int) LEVEL_H[l],
                                        at, sizeof at) : 0;
        CHECK (wrong == 0, "%s (%s) level %d: %ld pixels wrong, first %s", v->name, how, l,
               wrong, at);
        free (px);
        for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
            int x = pieces[i][0], y = pieces[i][1], w = pieces[i][2], h = pieces[i][3];
            if (x + w > (int) LEVEL_W[l] || y + h > (int) LEVEL_H[l])
                continue;
            px = read_piece (s, l, x, y, w, h, err, sizeof err);
            wrong = px ? wrong_pixels (v, px, x, y, w, h, at, sizeof at) : -1;
            CHECK (wrong == 0, "%s (%s) level %d piece %d,%d %dx%d: %ld wrong, %s %s",
                   v->name, how, l, x, y, w, h, wrong, at, err);
            free (px);
        }
    }
}

static void
check_variant (const char *dir, const variant_t *v)
{
    char path[1200], err[512] = "";
    snprintf (path, sizeof path, "%s/%s.svs", dir, v->name);
    CHECK (write_variant (path, v) == 0, "%s: not written", v->name);
    last_warning[0] = '\0';
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    /* an Orientation not applied is said, as for JPEG slides */
    CHECK ((strstr (last_warning, "Orientation") != NULL) == (v->orientation > 1),
           "%s: last warning '%s'", v->name, last_warning);
    qc_slide_t *os = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE, err, sizeof err);
    CHECK (s && os, "%s: %s", v->name, err);
    if (!s || !os)
        goto out;
    CHECK (strcmp (qc_slide_readers (s), "direct TIFF, OpenSlide") == 0, "%s: readers %s",
           v->name, qc_slide_readers (s));
    CHECK (qc_slide_level_count (s) == LEVELS, "%s: %d levels", v->name,
           qc_slide_level_count (s));
    check_known (s, v, "by path");
    for (int l = 0; l < LEVELS; l++)
        CHECK (qc_slide_level_reliable (s, l, err, sizeof err) == 1, "%s level %d: %s",
               v->name, l, err);
    CHECK (qc_slide_level_reliable (os, LEVELS - 1, err, sizeof err) == 0,
           "%s: OpenSlide alone trusted its smallest level", v->name);
    /* level 0, in bigger tiles than its edge: OpenSlide's own pixels */
    if (v->orientation <= ORIENTATION_TOPLEFT) {
        char e2[512] = "";
        uint8_t *a = read_piece (s, 0, 0, 0, 992, 688, err, sizeof err);
        uint8_t *b = read_piece (os, 0, 0, 0, 992, 688, e2, sizeof e2);
        CHECK (a && b && memcmp (a, b, 992 * 688 * 3) == 0,
               "%s level 0: not OpenSlide's pixels (%s %s)", v->name, err, e2);
        free (a);
        free (b);
    }
    /* by byte source, as a slide by URL is read: this reader alone */
    qc_byte_source_t *src = qc_byte_source_file_open (path, err, sizeof err);
    int declined = -1;
    qc_slide_input_t in = { .src = src, .name = "x.svs" };
    qc_slide_t *by_src = src ? qc_slide_open_input (&in, QC_SLIDE_READERS_ALL, &declined, err,
                                                    sizeof err) : NULL;
    CHECK (by_src && declined == 0, "%s by source: %s", v->name, err);
    if (by_src)
        check_known (by_src, v, "by source");
    qc_slide_close (&by_src);
    qc_byte_source_close (&src);
out:
    qc_slide_close (&s);
    qc_slide_close (&os);
    unlink (path);
}

int
main (void)
{
    static const variant_t variants[] = {
        { "grey", 1, 8, 0, 0, COMPRESSION_LZW, 0 },
        { "rgb16", 3, 16, 0, 0, COMPRESSION_ADOBE_DEFLATE, 0 },
        { "planes", 3, 8, 1, 0, COMPRESSION_LZW, 0 },
        { "premultiplied", 4, 8, 0, EXTRASAMPLE_ASSOCALPHA, COMPRESSION_LZW, 0 },
        { "alpha", 4, 8, 0, EXTRASAMPLE_UNASSALPHA, COMPRESSION_NONE, 0 },
        { "alpha-planes16", 4, 16, 1, EXTRASAMPLE_UNASSALPHA, COMPRESSION_LZW, 0 },
        /* stored upside down and mirrored: read as stored (OpenSlide
         * turns each tile on its own) */
        { "grey-turned", 1, 8, 0, 0, COMPRESSION_LZW, ORIENTATION_BOTRIGHT },
    };
    qc_log_set_stderr_enabled (0);
    qc_log_set_sink (sink, NULL, "test");
    char dir[] = "/tmp/qc-tiff-rgba-XXXXXX";
    CHECK (mkdtemp (dir) != NULL);
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        check_variant (dir, &variants[i]);
    rmdir (dir);
    return check_done ("test_tiff_rgba");
}
