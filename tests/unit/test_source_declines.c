/* A slide reached by URL must give the answer it gives by path. What the
 * range reader cannot answer for, it declines, and the worker then reads
 * the file whole and opens it by path, as OpenSlide opens it. Before,
 * each of these was read by ranges and differed from the path: a TIFF
 * whose last directory was cut off passed with a level fewer; a
 * directory chain looping back, and classic big-endian files, passed
 * though OpenSlide refuses them; more than 256 directories failed every
 * read, though OpenSlide reads the file; a level whose first tile does
 * not decode here (odd/unreadable.svs) opened and failed every read. A
 * warning of libtiff's in a directory that is no level (an unknown tag
 * in a label's) is no reason to decline.
 * Files written here with libtiff: a 3-level tiled LZW generic TIFF
 * (read by ranges, the control), and its damaged or odd variants. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/slide/slide.h"
#include "tests/unit/check.h"
#include "tests/unit/tiff_fixtures.h"
#include "shared/byte_source_file.h"

typedef struct {
    const char *mode;         /* "w", "wb" (big-endian) */
    uint32_t tile;            /* tile side */
    int extra_dirs;           /* small untiled directories after the levels */
} shape_t;

/* A checkerboard of 16-pixel squares in two colours. */
static void
fill_checks (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp,
             uint8_t *tile)
{
    for (uint32_t i = 0; i < tw * th; i++) {
        uint8_t v = (uint8_t) (((x0 + i % tw) / 16 + (y0 + i / tw) / 16) % 2 ? 230 : 90);
        tile[3 * i] = v, tile[3 * i + 1] = (uint8_t) (v / 2), tile[3 * i + 2] = 180;
    }
}

/* A generic TIFF of 3 tiled LZW RGB levels (1024 x 768 and two reduced
 * ones), then extra_dirs 8 x 8 strip images. 0 made. */
static int
write_slide (const char *path, shape_t s)
{
    TIFF *t = TIFFOpen (path, s.mode);
    if (!t)
        return -1;
    int ok = 1;
    for (int level = 0; ok && level < 3; level++) {
        fx_tiff_level_t lv = { .w = 1024u >> (2 * level), .h = 768u >> (2 * level),
                               .tile_w = s.tile, .tile_h = s.tile, .spp = 3,
                               .compression = COMPRESSION_LZW, .reduced = level > 0 };
        ok = fx_tiff_write_level (t, &lv, fill_checks, NULL) == 0;
    }
    /* the extra directories: labels, not levels (untiled) */
    static uint8_t label[8 * 8 * 3];
    memset (label, 200, sizeof label);
    for (int i = 0; ok && i < s.extra_dirs; i++)
        ok = fx_tiff_set (t, TIFFTAG_IMAGEWIDTH, 8u) && fx_tiff_set (t, TIFFTAG_IMAGELENGTH, 8u)
             && fx_tiff_set (t, TIFFTAG_BITSPERSAMPLE, 8)
             && fx_tiff_set (t, TIFFTAG_SAMPLESPERPIXEL, 3)
             && fx_tiff_set (t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB)
             && fx_tiff_set (t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG)
             && fx_tiff_set (t, TIFFTAG_COMPRESSION, COMPRESSION_LZW)
             && fx_tiff_set (t, TIFFTAG_SUBFILETYPE, (uint32_t) FILETYPE_REDUCEDIMAGE)
             && fx_tiff_set (t, TIFFTAG_ROWSPERSTRIP, 8u)
             && fx_tiff_set (t, TIFFTAG_COPYRIGHT, "label")
             && TIFFWriteEncodedStrip (t, 0, label, sizeof label) >= 0
             && TIFFWriteDirectory (t);
    TIFFClose (t);
    return ok ? 0 : -1;
}

static long
file_size (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return -1;
    fseek (f, 0, SEEK_END);
    long n = ftell (f);
    fclose (f);
    return n;
}

static uint32_t
le32 (const uint8_t *p)
{
    return p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* Points the last directory of a classic little-endian TIFF back at the
 * first. 0 done. */
static int
loop_chain (const char *path)
{
    long n = file_size (path);
    FILE *f = fopen (path, "r+b");
    uint8_t *b = n > 8 ? malloc ((size_t) n) : NULL;
    int ok = f && b && fread (b, 1, (size_t) n, f) == (size_t) n;
    uint32_t first = ok ? le32 (b + 4) : 0, at = first, last_next = 0;
    for (int i = 0; ok && at && i < 1000; i++) {
        if (at + 2 > (uint32_t) n)
            ok = 0;
        else {
            uint32_t count = b[at] | (uint32_t) b[at + 1] << 8;
            last_next = at + 2 + 12 * count;
            ok = last_next + 4 <= (uint32_t) n;
            at = ok ? le32 (b + last_next) : 0;
        }
    }
    if (ok && last_next) {
        uint8_t p[4] = { (uint8_t) first, (uint8_t) (first >> 8), (uint8_t) (first >> 16),
                         (uint8_t) (first >> 24) };
        ok = fseek (f, (long) last_next, SEEK_SET) == 0 && fwrite (p, 1, 4, f) == 4;
    }
    if (f)
        ok = fclose (f) == 0 && ok;
    free (b);
    return ok && last_next ? 0 : -1;
}

/* Renames tag from to tag to in directory dir of a classic little-endian
 * TIFF (a private tag libtiff does not know, then). 0 done. */
static int
retag (const char *path, int dir, uint16_t from, uint16_t to)
{
    long n = file_size (path);
    FILE *f = fopen (path, "r+b");
    uint8_t *b = n > 8 ? malloc ((size_t) n) : NULL;
    int ok = f && b && fread (b, 1, (size_t) n, f) == (size_t) n, done = 0;
    uint32_t at = ok ? le32 (b + 4) : 0;
    for (int d = 0; ok && at && d <= dir; d++) {
        if (at + 2 > (uint32_t) n) {
            ok = 0;
            break;
        }
        uint32_t count = b[at] | (uint32_t) b[at + 1] << 8;
        for (uint32_t e = 0; d == dir && e < count && at + 2 + 12 * e + 2 <= (uint32_t) n; e++) {
            uint32_t p = at + 2 + 12 * e;
            if ((b[p] | b[p + 1] << 8) == from) {
                uint8_t v[2] = { (uint8_t) to, (uint8_t) (to >> 8) };
                ok = fseek (f, (long) p, SEEK_SET) == 0 && fwrite (v, 1, 2, f) == 2;
                done = 1;
            }
        }
        uint32_t next = at + 2 + 12 * count;
        at = next + 4 <= (uint32_t) n ? le32 (b + next) : 0;
    }
    if (f)
        ok = fclose (f) == 0 && ok;
    free (b);
    return ok && done ? 0 : -1;
}

/* path by source: declined (expect in the reason), or opened (expect
 * NULL) with levels levels. */
static void
by_source (const char *what, const char *path, const char *expect, int levels)
{
    char err[512] = "";
    qc_byte_source_t *src = qc_byte_source_file_open (path, err, sizeof err);
    CHECK (src != NULL, "%s: %s", what, err);
    if (!src)
        return;
    int declined = -1;
    qc_slide_input_t in = { .src = src, .name = "x.tif" };
    qc_slide_t *s = qc_slide_open_input (&in, QC_SLIDE_READERS_ALL, &declined, err, sizeof err);
    if (expect)
        CHECK (s == NULL && declined == 1 && strstr (err, expect),
               "%s: declined with '%s' expected; got %s, declined %d: %s", what, expect,
               s ? "opened" : "not opened", declined, err);
    else
        CHECK (s != NULL && declined == 0 && qc_slide_level_count (s) == levels,
               "%s: read by ranges, %d levels expected: %s (%d levels)", what, levels, err,
               s ? qc_slide_level_count (s) : -1);
    qc_slide_close (&s);
    qc_byte_source_close (&src);
}

/* path by path: OpenSlide opens it with levels levels (0: refuses it). */
static void
by_path (const char *what, const char *path, int levels)
{
    char err[512] = "";
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    CHECK (levels ? s && qc_slide_level_count (s) == levels : s == NULL,
           "%s by path: %d levels expected, got %d (%s)", what, levels,
           s ? qc_slide_level_count (s) : 0, err);
    qc_slide_close (&s);
}

int
main (void)
{
    TIFFSetWarningHandler (NULL);     /* the writer's own notes */
    char dir[] = "/tmp/qc-source-declines.XXXXXX";
    CHECK (mkdtemp (dir) != NULL, "temporary folder");
    char path[600];

    /* the control: read by ranges, as by path */
    snprintf (path, sizeof path, "%s/plain.tif", dir);
    CHECK (write_slide (path, (shape_t) { "w", 256, 0 }) == 0);
    by_source ("plain", path, NULL, 3);
    by_path ("plain", path, 3);

    /* the last directory cut off: by ranges it had 2 levels and passed */
    long n = file_size (path);
    CHECK (n > 200 && truncate (path, n - 60) == 0);
    by_source ("cut short", path, "libtiff", 0);
    by_path ("cut short", path, 0);

    /* a chain looping back to the first directory */
    snprintf (path, sizeof path, "%s/loop.tif", dir);
    CHECK (write_slide (path, (shape_t) { "w", 256, 0 }) == 0 && loop_chain (path) == 0);
    by_source ("looping", path, "looping", 0);
    by_path ("looping", path, 0);

    /* classic big-endian: OpenSlide 3.4.1 opened none of these */
    snprintf (path, sizeof path, "%s/be.tif", dir);
    CHECK (write_slide (path, (shape_t) { "wb", 256, 0 }) == 0);
    by_source ("big-endian", path, "big-endian", 0);

    /* more directories than the walk's bound */
    snprintf (path, sizeof path, "%s/many.tif", dir);
    CHECK (write_slide (path, (shape_t) { "w", 256, 260 }) == 0);
    by_source ("260 directories", path, "more than 256", 0);
    by_path ("260 directories", path, 3);

    /* an unknown tag in a directory that is no level (a label's): libtiff
     * warns, and the slide is still read by ranges */
    snprintf (path, sizeof path, "%s/label-tag.tif", dir);
    CHECK (write_slide (path, (shape_t) { "w", 256, 1 }) == 0
           && retag (path, 3, TIFFTAG_COPYRIGHT, 33500) == 0);
    by_source ("an unknown tag in a label", path, NULL, 3);
    by_path ("an unknown tag in a label", path, 3);

    /* a level whose first tile does not decode (its JPEG is damaged): by
     * path OpenSlide reads it (and fails it), by ranges it is declined */
    snprintf (path, sizeof path, "%s/slides/odd/unreadable.svs", check_shared_dir ());
    by_source ("a tile that does not decode", path, "first tile does not decode", 0);

    const char *names[] = { "plain.tif", "loop.tif", "be.tif", "many.tif", "label-tag.tif" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf (path, sizeof path, "%s/%s", dir, names[i]);
        unlink (path);
    }
    rmdir (dir);
    return check_done ("test_source_declines");
}
