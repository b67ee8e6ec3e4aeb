/* A tile an Aperio scanner left out (its byte count 0: an area it did
 * not scan) reads as OpenSlide draws it: the background at the finest
 * level, the finer level scaled down at the others. The direct reader
 * used to fail the read ("tile N has no data (0 bytes)"): by path
 * OpenSlide then drew the slide, by URL (a byte source, no OpenSlide
 * behind it) the slide failed. Now by path, by source and OpenSlide
 * alone give the same picture: the first two byte for byte, OpenSlide
 * (which scales with cairo) within a few levels on smooth content. The
 * drawing goes one level deep: a missing tile over a missing tile of the
 * finer level is background there (OpenSlide would go on; a hostile file
 * missing tiles at every level took minutes a read that way). A
 * generic TIFF's tile of 0 bytes is still an error, as in OpenSlide. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/slide/slide.h"
#include "tests/unit/check.h"
#include "tests/unit/tiff_fixtures.h"
#include "shared/byte_source_file.h"

#define W0 1024
#define H0 768
#define T0 256
#define W1 256
#define H1 192
#define T1 128

/* Level 0's pixels: smooth (gradients), so that any way of scaling them
 * down gives nearly the same. Level 1's own tiles: another gradient. */
static void
px0 (uint32_t x, uint32_t y, uint8_t *p)
{
    p[0] = (uint8_t) (x / 4);
    p[1] = (uint8_t) (y / 3);
    p[2] = (uint8_t) ((x + y) / 7);
}

static void
fill (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp, uint8_t *tile)
{
    int level = *(const int *) ctx;
    for (uint32_t y = 0; y < th; y++)
        for (uint32_t x = 0; x < tw; x++) {
            uint8_t *p = tile + ((size_t) y * tw + x) * (size_t) spp;
            if (level == 0)
                px0 (x0 + x, y0 + y, p);
            else
                p[0] = (uint8_t) (255 - (x0 + x)), p[1] = 90, p[2] = (uint8_t) (y0 + y);
        }
}

/* An Aperio (or generic, description NULL) slide: level 0 with its tile
 * (1, 1) missing, level 1 with its tile (0, 0) missing, which covers
 * level 0's missing tile. */
static int
write_slide (const char *path, const char *description)
{
    fx_tiff_level_t lv[2] = {
        {.w = W0, .h = H0, .tile_w = T0, .tile_h = T0, .spp = 3,
         .compression = COMPRESSION_LZW, .description = description,
         .missing = 1 + 1 * (W0 / T0) + 1},
        {.w = W1, .h = H1, .tile_w = T1, .tile_h = T1, .spp = 3,
         .compression = COMPRESSION_LZW, .reduced = 1, .missing = 1}};
    TIFF *t = TIFFOpen (path, "w");
    if (!t)
        return -1;
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++)
        rc = fx_tiff_write_level (t, &lv[i], fill, &i);
    TIFFClose (t);
    return rc;
}

/* Three levels, tiles missing at levels 1 and 2 over the same place:
 * level 2 (64 x 48 in tiles of 48) draws its missing tile from level 1, where level 1's
 * own missing tile is background (missing_tile goes one level deep:
 * OpenSlide would go on to level 0 there). */
static int
write_three (const char *path)
{
    fx_tiff_level_t lv[3] = {
        {.w = W0, .h = H0, .tile_w = T0, .tile_h = T0, .spp = 3,
         .compression = COMPRESSION_LZW,
         .description = "Aperio Image Library v10.0.0\nthree|AppMag = 20|MPP = 0.5"},
        {.w = W1, .h = H1, .tile_w = T1, .tile_h = T1, .spp = 3,
         .compression = COMPRESSION_LZW, .reduced = 1, .missing = 1},
        {.w = W1 / 4, .h = H1 / 4, .tile_w = 48, .tile_h = 48, .spp = 3,
         .compression = COMPRESSION_LZW, .reduced = 1, .missing = 1}};
    TIFF *t = TIFFOpen (path, "w");
    if (!t)
        return -1;
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = fx_tiff_write_level (t, &lv[i], fill, &i);
    TIFFClose (t);
    return rc;
}

/* The whole of level into rgb; 0, or -1 with err. */
static int
read_level (qc_slide_t *s, int level, int w, int h, uint8_t *rgb, char *err, size_t len)
{
    qc_slide_rect_t r = {.level = level, .w = w, .h = h};
    return qc_slide_read_rows (s, &r, 0, h, rgb, (size_t) w * 3, err, len);
}

int
main (void)
{
    TIFFSetWarningHandler (NULL);
    char dir[] = "/tmp/qc-missing-tile.XXXXXX", path[600], generic[600], err[512] = "";
    CHECK (mkdtemp (dir) != NULL, "temporary folder");
    snprintf (path, sizeof path, "%s/missing.svs", dir);
    snprintf (generic, sizeof generic, "%s/missing.tif", dir);
    CHECK (write_slide (path, "Aperio Image Library v10.0.0\nmissing tiles|AppMag = 20|MPP = 0.5")
           == 0 && write_slide (generic, NULL) == 0, "slides written");

    qc_slide_t *all = qc_slide_open (path, err, sizeof err);
    qc_slide_t *os = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE, err, sizeof err);
    qc_byte_source_t *src = qc_byte_source_file_open (path, err, sizeof err);
    int declined = -1;
    qc_slide_input_t in = {.src = src, .name = "missing.svs"};
    qc_slide_t *bysrc = src ? qc_slide_open_input (&in, QC_SLIDE_READERS_ALL, &declined, err,
                                                   sizeof err) : NULL;
    CHECK (all && os && bysrc, "opened three ways: %s", err);
    CHECK (all && strcmp (qc_slide_readers (all), "direct TIFF, OpenSlide") == 0,
           "by path the direct reader reads first: %s", all ? qc_slide_readers (all) : "");
    CHECK (all && strcmp (qc_slide_property (all, "openslide.vendor"), "aperio") == 0,
           "OpenSlide takes it for Aperio");
    if (!all || !os || !bysrc)
        goto out;
    uint8_t bg[3];
    qc_slide_background (all, bg);

    static uint8_t a0[W0 * H0 * 3], b0[W0 * H0 * 3], o0[W0 * H0 * 3];
    static uint8_t a1[W1 * H1 * 3], b1[W1 * H1 * 3], o1[W1 * H1 * 3];
    CHECK (read_level (all, 0, W0, H0, a0, err, sizeof err) == 0, "level 0 by path: %s", err);
    CHECK (read_level (bysrc, 0, W0, H0, b0, err, sizeof err) == 0, "level 0 by source: %s", err);
    CHECK (read_level (os, 0, W0, H0, o0, err, sizeof err) == 0, "level 0, OpenSlide: %s", err);
    CHECK (read_level (all, 1, W1, H1, a1, err, sizeof err) == 0, "level 1 by path: %s", err);
    CHECK (read_level (bysrc, 1, W1, H1, b1, err, sizeof err) == 0, "level 1 by source: %s", err);
    CHECK (read_level (os, 1, W1, H1, o1, err, sizeof err) == 0, "level 1, OpenSlide: %s", err);
    CHECK (memcmp (a0, b0, sizeof a0) == 0 && memcmp (a1, b1, sizeof a1) == 0,
           "by path and by source: the same bytes");

    /* level 0: the missing tile is the background, the rest its pixels */
    long wrong = 0;
    for (int y = 0; y < H0; y++)
        for (int x = 0; x < W0; x++) {
            uint8_t want[3];
            int gone = x / T0 == 1 && y / T0 == 1;
            if (gone)
                memcpy (want, bg, 3);
            else
                px0 ((uint32_t) x, (uint32_t) y, want);
            wrong += memcmp (b0 + ((size_t) y * W0 + (size_t) x) * 3, want, 3) != 0;
        }
    CHECK (wrong == 0, "level 0: %ld pixels other than the background in the missing tile "
           "or the level's own elsewhere", wrong);
    CHECK (memcmp (a0, o0, sizeof a0) == 0, "level 0: OpenSlide's bytes");

    /* level 1: the missing tile is level 0 scaled down (4 x 4 means), the
       background where level 0 is missing too */
    wrong = 0;
    for (int y = 0; y < T1; y++)
        for (int x = 0; x < T1; x++) {
            for (int c = 0; c < 3; c++) {
                unsigned sum = 0;
                for (int v = 0; v < 4; v++)
                    for (int u = 0; u < 4; u++)
                        sum += a0[((size_t) (4 * y + v) * W0 + (size_t) (4 * x + u)) * 3
                                  + (size_t) c];
                wrong += b1[((size_t) y * W1 + (size_t) x) * 3 + (size_t) c]
                         != (uint8_t) ((sum + 8) / 16);
            }
        }
    CHECK (wrong == 0, "level 1's missing tile: %ld samples other than level 0's 4 x 4 means",
           wrong);
    CHECK (b1[((size_t) 80 * W1 + 80) * 3] == bg[0] && b1[((size_t) 10 * W1 + 10) * 3] != bg[0],
           "level 1: the background under level 0's missing tile, level 0's pixels elsewhere");
    CHECK (b1[((size_t) 10 * W1 + 200) * 3] == 255 - 200 && b1[((size_t) 10 * W1 + 200) * 3 + 1]
           == 90, "level 1's own tiles are its own");
    /* OpenSlide draws the same picture (it scales with cairo) */
    double diff = 0;
    int most = 0;
    for (size_t i = 0; i < sizeof a1; i++) {
        int d = abs ((int) a1[i] - (int) o1[i]);
        diff += d;
        most = d > most ? d : most;
    }
    diff /= (double) sizeof a1;
    CHECK (diff < 0.5 && most <= 4, "level 1 against OpenSlide: mean difference %.3f, "
           "largest %d", diff, most);
    printf ("level 1 against OpenSlide: mean difference %.3f, largest %d\n", diff, most);

    /* one level deep: level 2's missing tile from level 1, whose own
       missing tile there is background */
    char three[600];
    snprintf (three, sizeof three, "%s/three.svs", dir);
    CHECK (write_three (three) == 0, "three-level slide written");
    qc_slide_t *s3 = qc_slide_open (three, err, sizeof err);
    CHECK (s3 && qc_slide_level_count (s3) == 3, "three levels: %s", err);
    static uint8_t l1[W1 * H1 * 3], l2[(W1 / 4) * (H1 / 4) * 3];
    if (s3) {
        CHECK (read_level (s3, 1, W1, H1, l1, err, sizeof err) == 0
               && read_level (s3, 2, W1 / 4, H1 / 4, l2, err, sizeof err) == 0, "%s", err);
        long off = 0, bgs = 0;
        for (int y = 0; y < H1 / 4; y++)
            for (int x = 0; x < 48; x++)        /* level 2's missing tile */
                for (int c = 0; c < 3; c++) {
                    unsigned sum = 0;
                    for (int v = 0; v < 4; v++)
                        for (int u = 0; u < 4; u++)
                            sum += l1[((size_t) (4 * y + v) * W1 + (size_t) (4 * x + u)) * 3
                                      + (size_t) c];
                    uint8_t got = l2[((size_t) y * (W1 / 4) + (size_t) x) * 3 + (size_t) c];
                    int under_missing = x < T1 / 4 && y < T1 / 4;
                    off += got != (under_missing ? bg[c] : (uint8_t) ((sum + 8) / 16));
                    bgs += under_missing && got == bg[c];
                }
        CHECK (off == 0 && bgs == 3 * (T1 / 4) * (T1 / 4), "level 2 from level 1: %ld samples "
               "off, %ld of the %d under level 1's missing tile the background", off, bgs,
               3 * (T1 / 4) * (T1 / 4));
    }
    qc_slide_close (&s3);
    unlink (three);

    /* a generic TIFF's missing tile is an error, by source as in OpenSlide */
    qc_byte_source_t *gsrc = qc_byte_source_file_open (generic, err, sizeof err);
    qc_slide_input_t gin = {.src = gsrc, .name = "missing.tif"};
    qc_slide_t *g = gsrc ? qc_slide_open_input (&gin, QC_SLIDE_READERS_ALL, &declined, err,
                                                sizeof err) : NULL;
    CHECK (g != NULL, "generic by source: %s", err);
    err[0] = 0;
    CHECK (g && read_level (g, 0, W0, H0, b0, err, sizeof err) != 0
           && strstr (err, "has no data (0 bytes)"), "generic: %s", err);
    qc_slide_close (&g);
    qc_byte_source_close (&gsrc);
    /* by path OpenSlide fails it too, vaguely ("Cannot read raw tile"):
       the direct reader's precise reason is said beside it */
    g = qc_slide_open (generic, err, sizeof err);
    CHECK (g != NULL, "generic by path: %s", err);
    err[0] = 0;
    CHECK (g && read_level (g, 0, W0, H0, b0, err, sizeof err) != 0
           && strstr (err, "OpenSlide") && strstr (err, "has no data (0 bytes)"),
           "generic by path: %s", err);
    qc_slide_close (&g);
out:
    qc_slide_close (&all);
    qc_slide_close (&os);
    qc_slide_close (&bysrc);
    qc_byte_source_close (&src);
    unlink (path);
    unlink (generic);
    rmdir (dir);
    return check_done ("test_missing_tile");
}
