/* Which levels' pixels a slide trusts (qc_slide_level_reliable): a
 * level smaller than one of its tiles that OpenSlide 3.4.1 decodes
 * through libtiff's RGBA reader (LZW, deflate, ...) comes back different
 * from read to read (blank once, in a real run: the slide then "passed"
 * with no tissue). Such a level is refused with the reason when OpenSlide
 * reads it, whatever the vendor; it is trusted when the direct reader
 * reads the slide, and a JPEG level is trusted either way (OpenSlide
 * decodes JPEG itself). Slides: ../shared/slides/odd (boxes.tiff:
 * deflate, levels 2 and 3 smaller than its 64-pixel tiles; small.svs:
 * JPEG, 16 x 16 in a 64 tile) and a grey LZW Aperio slide written here
 * with libtiff (the direct reader reads it through libtiff's RGBA
 * interface, tiff_rgba.h; before, it left grey slides to OpenSlide). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/slide/slide.h"
#include "tests/unit/check.h"
#include "tests/unit/tiff_fixtures.h"

/* Grey stripes 8 pixels wide, light and dark. */
static void
fill_stripes (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp,
              uint8_t *tile)
{
    for (uint32_t i = 0; i < tw * th; i++)
        tile[i] = (uint8_t) ((((x0 + i % tw) / 8) % 2) ? 60 : 200);
}

/* A 2-level grey LZW Aperio slide: level 0 w x h, level 1 a quarter of
 * it, 512-pixel tiles (so level 1 is smaller than one tile). 0 made. */
static int
write_grey_aperio (const char *path, uint32_t w, uint32_t h)
{
    const fx_tiff_level_t levels[2] = {
        { .w = w, .h = h, .tile_w = 512, .tile_h = 512, .spp = 1,
          .compression = COMPRESSION_LZW,
          .description = "Aperio Image Library v10.0.0\n"
                         "grey test slide|AppMag = 20|MPP = 0.5" },
        { .w = w / 4, .h = h / 4, .tile_w = 512, .tile_h = 512, .spp = 1,
          .compression = COMPRESSION_LZW },
    };
    return fx_tiff_write (path, levels, 2, fill_stripes, NULL);
}

/* Levels of path whose reliability is expected[level] when opened with
 * readers; levels past n not asked. */
static void
check_levels (const char *path, qc_slide_readers_t readers, const int *expected, int n,
              const char *why_word)
{
    char err[512] = "";
    qc_slide_t *s = qc_slide_open_with (path, readers, err, sizeof err);
    CHECK (s != NULL, "%s: %s", path, err);
    if (!s)
        return;
    CHECK (qc_slide_level_count (s) >= n, "%s: %d levels", path, qc_slide_level_count (s));
    for (int l = 0; l < n && l < qc_slide_level_count (s); l++) {
        err[0] = '\0';
        int got = qc_slide_level_reliable (s, l, err, sizeof err);
        CHECK (got == expected[l], "%s (readers: %s) level %d: %d, expected %d (%s)",
               path, qc_slide_readers (s), l, got, expected[l], err);
        if (!got)
            CHECK (strstr (err, "smaller than one of its") && strstr (err, why_word)
                   && strstr (err, "image_work_size"), "reason: %s", err);
    }
    /* out of range */
    CHECK (qc_slide_level_reliable (s, -1, err, sizeof err) == 0);
    CHECK (qc_slide_level_reliable (s, 99, err, sizeof err) == 0);
    CHECK (qc_slide_level_reliable (NULL, 0, err, sizeof err) == 0);
    qc_slide_close (&s);
}

int
main (void)
{
    char path[1024];
    const char *shared = check_shared_dir ();

    /* boxes.tiff: deflate; its small levels are read right by the direct
     * reader, wrongly by OpenSlide */
    snprintf (path, sizeof path, "%s/slides/odd/boxes.tiff", shared);
    static const int boxes_all[] = { 1, 1, 1, 1 }, boxes_os[] = { 1, 1, 0, 0 };
    check_levels (path, QC_SLIDE_READERS_ALL, boxes_all, 4, "");
    check_levels (path, QC_SLIDE_READERS_OPENSLIDE, boxes_os, 4, "compression 8");

    /* small.svs: JPEG, smaller than its tile; OpenSlide decodes JPEG
     * itself, so it is trusted by either reader */
    snprintf (path, sizeof path, "%s/slides/odd/small.svs", shared);
    static const int one[] = { 1 };
    check_levels (path, QC_SLIDE_READERS_ALL, one, 1, "");
    check_levels (path, QC_SLIDE_READERS_OPENSLIDE, one, 1, "");

    /* a grey LZW Aperio slide: level 1 (512 x 384) is smaller than its
     * 512 x 512 tile; refused when OpenSlide reads it (before, only
     * generic TIFFs were), trusted when the direct reader does */
    char tmp[] = "/tmp/qc-reliable-XXXXXX";
    CHECK (mkdtemp (tmp) != NULL);
    char grey[1100];
    snprintf (grey, sizeof grey, "%s/grey.svs", tmp);
    CHECK (write_grey_aperio (grey, 2048, 1536) == 0, "cannot write %s", grey);
    static const int grey_os[] = { 1, 0 }, grey_all[] = { 1, 1 };
    check_levels (grey, QC_SLIDE_READERS_OPENSLIDE, grey_os, 2, "compression 5");
    check_levels (grey, QC_SLIDE_READERS_ALL, grey_all, 2, "");
    char err[512] = "";
    qc_slide_t *s = qc_slide_open (grey, err, sizeof err);
    CHECK (s && strcmp (qc_slide_property (s, "openslide.vendor"), "aperio") == 0
           && strcmp (qc_slide_readers (s), "direct TIFF, OpenSlide") == 0, "%s: %s", grey,
           s ? qc_slide_readers (s) : err);
    qc_slide_close (&s);
    unlink (grey);
    rmdir (tmp);
    return check_done ("test_level_reliable");
}
