/* Why OpenSlide refused a slide, in words a lab can act on. Each of
 * these used to fail as "OpenSlide does not read this TIFF as a slide (a
 * format it cannot read, or a damaged file)", and OpenSlide's own reason
 * went to stderr (through qc-submit's progress line), never to the
 * result: a real slide cut short (a copy that stopped), a TIFF whose
 * first image is in strips (a macro before the levels, or a converter's
 * untiled output), a pyramid whose levels are in the wrong order (what
 * OpenSlide says of it). And a TIFF Orientation other than top-left,
 * which OpenSlide applied tile by tile; a slide larger than any glass
 * slide, whose 1 Gpx working image was blamed on the machine's memory
 * and run again; JPEG tiles in YCbCr tagged RGB, read pink. Files
 * written here with
 * libtiff, and a copy of a real slide cut at 90%. And TIFFs that OpenSlide
 * read into a crash or for minutes, refused before it reads them: a
 * tile's byte count larger than the file (GLib aborted the process), a
 * table of tiles shorter than its image (OpenSlide drew the missing
 * tiles from each other at full CPU), an image none of whose tiles has
 * bytes (it passed as blank glass). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/pipeline/pipeline.h"
#include "kernels/slide/slide.h"
#include "kernels/slide/slide_why.h"
#include "kernels/slide/work_size.h"
#include "shared/result.h"
#include "tests/unit/check.h"
#include "tests/unit/tiff_fixtures.h"

static void
fill_grey (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp,
           uint8_t *tile)
{
    (void) ctx, (void) x0, (void) y0;
    memset (tile, 200, (size_t) tw * th * (size_t) spp);
}

/* Pixels no two tiles share (a flipped or moved tile shows). */
static void
fill_noise (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp,
            uint8_t *tile)
{
    unsigned *seed = ctx;
    (void) x0, (void) y0;
    for (size_t i = 0; i < (size_t) tw * th * (size_t) spp; i++)
        tile[i] = (uint8_t) (rand_r (seed) >> 7);
}

/* A one-level JPEG TIFF of 512 x 512 pixels in 256 x 256 tiles, YCbCr
 * 4:2:0 as libtiff writes it, its pixels a colour gradient; then, when
 * tag_rgb, its Photometric tag rewritten in place to RGB (2): what some
 * converters write. 0, or -1. */
static int
write_ycbcr_jpeg (const char *path, int tag_rgb)
{
    TIFF *t = TIFFOpen (path, "w");
    int ok = t && fx_tiff_set (t, TIFFTAG_IMAGEWIDTH, 512) && fx_tiff_set (t, TIFFTAG_IMAGELENGTH, 512)
             && fx_tiff_set (t, TIFFTAG_TILEWIDTH, 256) && fx_tiff_set (t, TIFFTAG_TILELENGTH, 256)
             && fx_tiff_set (t, TIFFTAG_SAMPLESPERPIXEL, 3) && fx_tiff_set (t, TIFFTAG_BITSPERSAMPLE, 8)
             && fx_tiff_set (t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG)
             && fx_tiff_set (t, TIFFTAG_COMPRESSION, COMPRESSION_JPEG)
             && fx_tiff_set (t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_YCBCR)
             && fx_tiff_set (t, TIFFTAG_YCBCRSUBSAMPLING, 2, 2)
             && fx_tiff_set (t, TIFFTAG_JPEGQUALITY, 90)
             && fx_tiff_set (t, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    static uint8_t tile[256 * 256 * 3];
    for (uint32_t ty = 0; ok && ty < 512; ty += 256)
        for (uint32_t tx = 0; ok && tx < 512; tx += 256) {
            for (uint32_t i = 0; i < 256 * 256; i++) {
                uint32_t x = tx + i % 256, y = ty + i / 256;
                tile[3 * i] = (uint8_t) (120 + x / 8), tile[3 * i + 1] = (uint8_t) (40 + y / 8);
                tile[3 * i + 2] = (uint8_t) (200 - x / 16);
            }
            ok = TIFFWriteTile (t, tile, tx, ty, 0, 0) > 0;
        }
    if (t)
        TIFFClose (t);
    if (!ok || !tag_rgb)
        return ok ? 0 : -1;
    /* the first IFD's Photometric entry: classic TIFF, this host's order */
    FILE *f = fopen (path, "r+b");
    uint32_t at = 0;
    uint16_t n = 0;
    ok = f && fseek (f, 4, SEEK_SET) == 0 && fread (&at, 4, 1, f) == 1
         && fseek (f, at, SEEK_SET) == 0 && fread (&n, 2, 1, f) == 1;
    int patched = 0;
    for (uint16_t i = 0; ok && i < n && !patched; i++) {
        uint8_t e[12];
        ok = fseek (f, at + 2 + 12 * i, SEEK_SET) == 0 && fread (e, 12, 1, f) == 1;
        uint16_t tag;
        memcpy (&tag, e, 2);
        if (ok && tag == TIFFTAG_PHOTOMETRIC) {
            uint16_t rgb = PHOTOMETRIC_RGB;
            ok = fseek (f, at + 2 + 12 * i + 8, SEEK_SET) == 0 && fwrite (&rgb, 2, 1, f) == 1;
            patched = 1;
        }
    }
    if (f && fclose (f))
        ok = 0;
    return ok && patched ? 0 : -1;
}

/* Opens path with stderr caught: the reason, and whether OpenSlide
 * printed anything there. */
static qc_slide_t *
open_caught (const char *path, char *err, size_t errlen, char *printed, size_t plen)
{
    char tmp[] = "/tmp/qc-why-stderr-XXXXXX";
    int fd = mkstemp (tmp), saved = dup (2);
    fflush (stderr);
    if (fd >= 0)
        dup2 (fd, 2);
    qc_slide_t *s = qc_slide_open (path, err, errlen);
    fflush (stderr);
    if (saved >= 0) {
        dup2 (saved, 2);
        close (saved);
    }
    printed[0] = '\0';
    if (fd >= 0) {
        ssize_t n = pread (fd, printed, plen - 1, 0);
        printed[n > 0 ? n : 0] = '\0';
        close (fd);
        unlink (tmp);
    }
    return s;
}

/* A slide whose file went away while it ran (its share unmounted, a
 * USB disk pulled: the kernel says ENOENT) failed for good: a rerun
 * said "nothing to run". Now its failure, whatever the reader said, is
 * marked for a rerun; and one that cannot be opened at all, the same. */
static void
test_file_gone (const char *dir)
{
    char path[512], cmd[1200], err[1024] = "";
    snprintf (path, sizeof path, "%s/gone.svs", dir);
    snprintf (cmd, sizeof cmd, "cp '%s/slides/real/CMU-1-Small-Region.svs' '%s'",
              check_shared_dir (), path);
    CHECK (system (cmd) == 0, "%s", cmd);
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    CHECK (s != NULL, "the copy opens: %s", err);
    unlink (path);
    qc_pipeline_t *p = qc_pipeline_new (qc_pipeline_default_config (), err, sizeof err);
    qc_result_t *r = qc_result_new ();
    qc_pipeline_input_t in = {.slide = s};
    CHECK (p && r && qc_pipeline_run_input (p, &in, r, NULL) == -1 && r->error
           && strstr (r->error, "the file cannot be reached now: No such file or directory "
                                "(the file is not there now: moved since the cohort was "
                                "listed, or its filesystem not mounted on this machine; a "
                                "rerun tries again)"),
           "read after it went: %s", r && r->error ? r->error : "(passed)");
    CHECK (qc_slide_check_file (path, err, sizeof err) == -1
           && strstr (err, "cannot open file: No such file or directory (the file is not "
                           "there now") && strstr (err, QC_RESULT_RETRY_MARK),
           "opened after it went: %s", err);
    /* gone after its image was read: a later step's read fails */
    CHECK (system (cmd) == 0, "%s", cmd);
    qc_result_destroy (&r);
    r = qc_result_new ();
    in.slide = qc_slide_open (path, err, sizeof err);
    qc_pipeline_job_t *job = in.slide ? qc_pipeline_prepare_input (p, &in, r) : NULL;
    unlink (path);
    CHECK (job && qc_pipeline_finish (&job, NULL) == -1 && r->error
           && strstr (r->error, "; the file cannot be reached now: No such file or directory")
           && strstr (r->error, QC_RESULT_RETRY_MARK),
           "a step's read after it went: %s", r->error ? r->error : "(passed)");
    qc_pipeline_job_destroy (&job);
    char why[256];
    CHECK (!qc_slide_file_gone (NULL, why, sizeof why), "a slide by URL has no file to miss");
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

static void
test_damaged_tables (const char *dir)
{
    static const char aperio[] = "Aperio Image Library v10.0.51\r\n1024x768 [0,0 1024x768] "
                                 "(256x256) LZW|AppMag = 20|MPP = 0.5";
    fx_tiff_level_t lv[] = {
        {.w = 1024, .h = 768, .tile_w = 256, .tile_h = 256, .spp = 3,
         .compression = COMPRESSION_LZW, .description = aperio},
        {.w = 256, .h = 192, .tile_w = 128, .tile_h = 128, .spp = 3,
         .compression = COMPRESSION_LZW, .reduced = 1},
    };
    static const struct {
        const char *what;
        uint16_t tag;
        int index;
        uint32_t value;
        const char *says;
    } cases[] = {
        {"a byte count larger than the file", TIFFTAG_TILEBYTECOUNTS, 5, 0xfffffff0u,
         "the file is damaged: its image 0 (1024 x 768) names a tile or strip of 4294967280 "
         "bytes, more than the whole file"},
        {"a tile's data past the end", TIFFTAG_TILEOFFSETS, 3, 0x7fff0000u,
         "the file is cut short or damaged (a copy that stopped?): its image 0 (1024 x 768) "
         "names data at bytes 2147418112 to"},
        {"an image wider than its table of tiles", TIFFTAG_IMAGEWIDTH, 0, 40000,
         "the file is damaged: the table of tiles or strips of its image 0 (40000 x 768) "
         "holds fewer entries than an image of that size has tiles"},
        {"no tile with bytes", TIFFTAG_TILEBYTECOUNTS, -1, 0,
         "the file holds no pixels there: none of the 12 tiles of its image 0 (1024 x 768) "
         "has any bytes"},
        /* OpenSlide said "Cannot hash TIFF tiles: Invalid tile/strip counts" */
        {"a table of byte counts cut short", TIFFTAG_TILEBYTECOUNTS, FX_TIFF_COUNT, 2,
         "the file is damaged: the table of tiles or strips of its image 0 (1024 x 768) "
         "holds fewer entries than an image of that size has tiles"},
        /* OpenSlide said "Invalid TIFF: PATH" */
        {"a TileWidth of 0", TIFFTAG_TILEWIDTH, 0, 0,
         "the file is damaged: libtiff cannot read it as a TIFF: Cannot handle zero number "
         "of tiles (OpenSlide: Invalid TIFF: "},
    };
    char path[512], err[1024];
    snprintf (path, sizeof path, "%s/tables.svs", dir);
    CHECK (fx_tiff_write (path, lv, 2, fill_grey, NULL) == 0);
    CHECK (qc_slide_check_tiff (path, NULL, err, sizeof err) == 0, "the good file: %s", err);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        CHECK (fx_tiff_write (path, lv, 2, fill_grey, NULL) == 0
               && fx_tiff_patch (path, 0, cases[k].tag, cases[k].index, cases[k].value) == 0,
               "%s: written", cases[k].what);
        err[0] = '\0';
        qc_slide_t *s = qc_slide_open (path, err, sizeof err);
        CHECK (s == NULL && strstr (err, cases[k].says), "%s: %s", cases[k].what,
               s ? "(opened)" : err);
        qc_slide_close (&s);
    }
    /* tiles of 65520 pixels a side (the most a SHORT tag holds; a
       tester's LONG 2^20 made OpenSlide ask GLib for 4 TB for one, and
       the process ended: the worker crashed three times): refused
       before OpenSlide reads it */
    CHECK (fx_tiff_write (path, lv, 2, fill_grey, NULL) == 0
           && fx_tiff_patch (path, 0, TIFFTAG_TILEWIDTH, 0, 65520) == 0
           && fx_tiff_patch (path, 0, TIFFTAG_TILELENGTH, 0, 65520) == 0, "huge tiles written");
    err[0] = '\0';
    qc_slide_t *ht = qc_slide_open (path, err, sizeof err);
    CHECK (ht == NULL && strstr (err, "the file is damaged: its image 0 (1024 x 768) is in "
                                      "tiles of 65520 x 65520 pixels, 17 GB each"),
           "huge tiles: %s", ht ? "(opened)" : err);
    qc_slide_close (&ht);
    /* directories that loop (the last pointing back to the first; one
       pointing to itself): said as that, not "a format it cannot read" */
    for (int self = 0; self < 2; self++) {
        CHECK (fx_tiff_write (path, lv, 2, fill_grey, NULL) == 0
               && fx_tiff_link (path, 1, self ? 1 : 0) == 0, "a loop written");
        err[0] = '\0';
        qc_slide_t *l = qc_slide_open (path, err, sizeof err);
        CHECK (l == NULL && strstr (err, "the file is damaged: its directories loop, one "
                                         "pointing back to an earlier one (libtiff: TIFF "
                                         "directory 1 has IFD looping to directory"),
               "a loop to directory %d: %s", self ? 1 : 0, l ? "(opened)" : err);
        qc_slide_close (&l);
    }
    /* an AppMag no objective has: not believed (every mask was 1 x 1
       pixel, and the slide passed) */
    static const char absurd[] = "Aperio Image Library v10.0.51\r\n1024x768 [0,0 1024x768] "
                                 "(256x256) LZW|AppMag = 1000000|MPP = 0.5";
    lv[0].description = absurd;
    CHECK (fx_tiff_write (path, lv, 2, fill_grey, NULL) == 0);
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    double mag = 0;
    CHECK (s && qc_region_base_mag (s, 0, &mag) == -1, "AppMag 1e6 taken: %g", mag);
    CHECK (s && qc_region_base_mag (s, 20, &mag) == 0 && mag == 20,
           "AppMag 1e6 over a config's base_mag: %g", mag);
    qc_slide_close (&s);
    /* "40x" as some software writes it: one reader, one answer (the step
       recording base_mag took it, the one sizing the image did not) */
    static const char with_x[] = "Aperio Image Library v10.0.51\r\n1024x768 [0,0 1024x768] "
                                 "(256x256) LZW|AppMag = 40x|MPP = 0.25";
    lv[0].description = with_x;
    CHECK (fx_tiff_write (path, lv, 2, fill_grey, NULL) == 0);
    s = qc_slide_open (path, err, sizeof err);
    mag = 0;
    CHECK (s && qc_region_base_mag (s, 0, &mag) == 0 && mag == 40, "AppMag 40x: %g", mag);
    qc_slide_close (&s);
    /* an empty field in the description: GLib's complaints (one per
       field; 8 million lines for one slide) stay off stderr */
    static const char empty_field[] = "Aperio Image Library v10.0.51\r\n1024x768 [0,0 "
                                      "1024x768] (256x256) LZW|AppMag = 20||||MPP = 0.5";
    lv[0].description = empty_field;
    char printed[4096];
    CHECK (fx_tiff_write (path, lv, 2, fill_grey, NULL) == 0);
    s = open_caught (path, err, sizeof err, printed, sizeof printed);
    CHECK (s != NULL, "empty fields: %s", err);
    CHECK (!strstr (printed, "GLib"), "GLib printed on stderr: %s", printed);
    qc_slide_close (&s);
    unlink (path);
    /* no TIFF: OpenSlide's to refuse */
    CHECK (qc_slide_check_tiff ("/dev/null", NULL, err, sizeof err) == 0
           && qc_slide_check_tiff (NULL, NULL, err, sizeof err) == 0, "no TIFF: not judged here");
}

/* Files OpenSlide 3.4.1 does not read, known by their first bytes: each
 * said as what it is and what to do, where all were "not a slide, or a
 * format it cannot read". A real DICOM whole-slide image (odd/), and
 * the first bytes of the others written here, the rest of each file
 * noise. */
static void
test_known_formats (const char *dir)
{
    char path[512], err[1024];
    snprintf (path, sizeof path, "%s/slides/odd/boxes-dicom.dcm", check_shared_dir ());
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    CHECK (!s && strstr (err, "the file is a DICOM whole-slide image: OpenSlide ")
               && strstr (err, "reads no DICOM slide") && strstr (err, "bfconvert -noflat"),
           "boxes-dicom.dcm: %s", err);
    qc_slide_close (&s);

    static const struct { size_t at; const char *mark; size_t len; const char *says; } k[] = {
        { 128, "DICM\x02\0\0\0UL\x04\0", 12, "the file is DICOM, but not a whole-slide image" },
        { 128, "DICM....1.2.840.10008.5.1.4.1.1.77.1.6\0", 39, "a DICOM whole-slide image: OpenSlide" },
        { 0, "ZISRAWFILE", 10, "the file is a Zeiss CZI: OpenSlide" },
        { 0, "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<DataObject ObjectType=\"DPUfsImport\">",
          76, "the file is a Philips iSyntax slide: OpenSlide" },
        { 0, "\0\0\0\x0cjP  \r\n\x87\n", 12, "the file is a JPEG 2000 picture: a picture, not a whole-slide image" },
        { 0, "\xff\xd8\xff\xe0", 4, "the file is a JPEG picture: a picture, not a whole-slide image (tiled levels). To QC it as one, write it as a tiled, pyramidal TIFF (vips tiffsave" },
        { 0, "\x89PNG\r\n\x1a\n", 8, "the file is a PNG picture: a picture" },
        { 0, "PK\x03\x04", 4, "the file is a ZIP archive: unpack it" },
        { 0, "\x1f\x8b\x08", 3, "the file is gzip-compressed: unpack it" },
        { 0, "%PDF-1.7\n%\xe2\xe3", 11, "the file is a PDF document: not an image" },
        /* a TIFF whose description is Philips' (a Philips TIFF, which
           OpenSlide reads, refused for its own reason) is no iSyntax
           file, nor is XML that does not start as iSyntax's does */
        { 0, "II*\0\x08\0\0\0<DataObject ObjectType=\"DPUfsImport\">", 44,
          "libtiff cannot read it as a TIFF" },
        { 0, "<Root><DataObject ObjectType=\"DPUfsImport\">", 44, "OpenSlide" },
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        unsigned char bytes[2048];
        unsigned seed = 7u + (unsigned) i;
        for (size_t b = 0; b < sizeof bytes; b++)
            bytes[b] = (unsigned char) (rand_r (&seed) >> 5);
        memcpy (bytes + k[i].at, k[i].mark, k[i].len);
        snprintf (path, sizeof path, "%s/known%zu.svs", dir, i);
        FILE *f = fopen (path, "wb");
        CHECK (f && fwrite (bytes, 1, sizeof bytes, f) == sizeof bytes);
        if (f)
            fclose (f);
        s = qc_slide_open (path, err, sizeof err);
        CHECK (!s && strstr (err, k[i].says)
                   && !strstr (err, "iSyntax") == !strstr (k[i].says, "iSyntax"),
               "mark %zu: %s", i, err);
        qc_slide_close (&s);
        unlink (path);
    }
}

int
main (void)
{
    char dir[] = "/tmp/qc-why-XXXXXX", path[512], err[1024], printed[4096];
    CHECK (mkdtemp (dir) != NULL);

    /* an Aperio slide's levels smallest first: OpenSlide refuses it,
       and says why */
    static const char aperio[] = "Aperio Image Library v10.0.51\r\n1024x768 [0,0 1024x768] "
                                 "(256x256) LZW|AppMag = 20|MPP = 0.5";
    fx_tiff_level_t rev[] = {
        {.w = 256, .h = 192, .tile_w = 128, .tile_h = 128, .spp = 3,
         .compression = COMPRESSION_LZW, .description = aperio},
        {.w = 1024, .h = 768, .tile_w = 256, .tile_h = 256, .spp = 3,
         .compression = COMPRESSION_LZW, .reduced = 1},
    };
    snprintf (path, sizeof path, "%s/reversed.svs", dir);
    CHECK (fx_tiff_write (path, rev, 2, fill_grey, NULL) == 0);
    qc_slide_t *s = open_caught (path, err, sizeof err, printed, sizeof printed);
    CHECK (s == NULL && strstr (err, "Downsampled images not correctly ordered"),
           "levels smallest first: %s", err);
    CHECK (!strstr (printed, "Openslide"), "OpenSlide printed on stderr: %s", printed);
    qc_slide_close (&s);
    unlink (path);

    /* its first image in strips */
    snprintf (path, sizeof path, "%s/stripped.tif", dir);
    TIFF *t = TIFFOpen (path, "w");
    uint8_t row[3 * 512];
    memset (row, 200, sizeof row);
    int ok = t && fx_tiff_set (t, TIFFTAG_IMAGEWIDTH, 512) && fx_tiff_set (t, TIFFTAG_IMAGELENGTH, 384)
             && fx_tiff_set (t, TIFFTAG_SAMPLESPERPIXEL, 3) && fx_tiff_set (t, TIFFTAG_BITSPERSAMPLE, 8)
             && fx_tiff_set (t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB)
             && fx_tiff_set (t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG)
             && fx_tiff_set (t, TIFFTAG_ROWSPERSTRIP, 16);
    for (uint32_t y = 0; ok && y < 384; y++)
        ok = TIFFWriteScanline (t, row, y, 0) == 1;
    if (t)
        TIFFClose (t);
    CHECK (ok, "stripped TIFF not written");
    s = open_caught (path, err, sizeof err, printed, sizeof printed);
    CHECK (s == NULL && strstr (err, "its first image (512 x 384) is not tiled"),
           "stripped: %s", err);
    qc_slide_close (&s);
    unlink (path);

    /* a real slide cut at 90%: its later directories lie past the end */
    char real[1024];
    snprintf (real, sizeof real, "%s/slides/real/CMU-1-Small-Region.svs", check_shared_dir ());
    struct stat st;
    snprintf (path, sizeof path, "%s/cut.svs", dir);
    char cmd[2200];
    CHECK (stat (real, &st) == 0, "%s", real);
    snprintf (cmd, sizeof cmd, "head -c %lld '%s' > '%s'", (long long) st.st_size * 9 / 10,
              real, path);
    CHECK (system (cmd) == 0);
    s = open_caught (path, err, sizeof err, printed, sizeof printed);
    CHECK (s == NULL && strstr (err, "the file is cut short or damaged (a copy that stopped?)"),
           "cut at 90%%: %s", err);
    qc_slide_close (&s);
    unlink (path);

    /* Orientation 3 on LZW tiles: OpenSlide's RGBA path turned each
       tile on its own (tiles flipped in place, the lower ones blank) and
       the slide passed; now read as stored, as a JPEG slide is, so the
       same pixels under Orientation 1 read the same */
    uint8_t *a = malloc (1024 * 768 * 3), *b = malloc (1024 * 768 * 3);
    char turned[600];
    snprintf (path, sizeof path, "%s/upright.svs", dir);
    snprintf (turned, sizeof turned, "%s/turned.svs", dir);
    fx_tiff_level_t lv[] = {
        {.w = 1024, .h = 768, .tile_w = 256, .tile_h = 256, .spp = 3,
         .compression = COMPRESSION_LZW, .description = aperio},
        {.w = 256, .h = 192, .tile_w = 128, .tile_h = 128, .spp = 3,
         .compression = COMPRESSION_LZW, .reduced = 1},
    };
    unsigned seed = 1;
    CHECK (a && b && fx_tiff_write (path, lv, 2, fill_noise, &seed) == 0);
    lv[0].orientation = lv[1].orientation = ORIENTATION_BOTRIGHT;
    seed = 1;
    CHECK (fx_tiff_write (turned, lv, 2, fill_noise, &seed) == 0);
    qc_slide_t *up = qc_slide_open (path, err, sizeof err);
    qc_slide_t *tu = qc_slide_open (turned, err, sizeof err);
    qc_slide_rect_t r = {.level = 0, .w = 1024, .h = 768};
    CHECK (up && tu && qc_slide_read_rows (up, &r, 0, 768, a, 1024 * 3, err, sizeof err) == 0
           && qc_slide_read_rows (tu, &r, 0, 768, b, 1024 * 3, err, sizeof err) == 0,
           "read: %s", err);
    CHECK (a && b && memcmp (a, b, 1024 * 768 * 3) == 0, "Orientation 3 read otherwise");
    qc_slide_close (&up);
    qc_slide_close (&tu);
    free (a);
    free (b);
    unlink (path);
    unlink (turned);

    /* JPEG tiles in YCbCr (4:2:0) under Photometric RGB: read pink (the
       YCbCr samples taken for RGB) and passed; now read as what their
       markers say, the same pixels as the file tagged YCbCr */
    char tagged[600];
    snprintf (path, sizeof path, "%s/ycbcr.tif", dir);
    snprintf (tagged, sizeof tagged, "%s/ycbcr-tagged-rgb.tif", dir);
    a = malloc (512 * 512 * 3), b = malloc (512 * 512 * 3);
    CHECK (a && b && write_ycbcr_jpeg (path, 0) == 0 && write_ycbcr_jpeg (tagged, 1) == 0,
           "JPEG slides written");
    up = qc_slide_open (path, err, sizeof err);
    tu = qc_slide_open (tagged, err, sizeof err);
    qc_slide_rect_t r5 = {.level = 0, .w = 512, .h = 512};
    CHECK (up && tu && qc_slide_read_rows (up, &r5, 0, 512, a, 512 * 3, err, sizeof err) == 0
           && qc_slide_read_rows (tu, &r5, 0, 512, b, 512 * 3, err, sizeof err) == 0,
           "read: %s", err);
    long off = 0;
    for (size_t i = 0; a && b && i < 512 * 512 * 3; i++)
        off += a[i] != b[i];
    CHECK (a && b && off == 0, "YCbCr tiles tagged RGB: %ld samples differ; pixel 0 %d %d %d "
           "against %d %d %d", off, b[0], b[1], b[2], a[0], a[1], a[2]);
    CHECK (a && abs (a[0] - 120) < 8 && abs (a[1] - 40) < 8 && abs (a[2] - 200) < 8,
           "pixel 0 is %d %d %d, want about 120 40 200", a[0], a[1], a[2]);
    qc_slide_close (&up);
    qc_slide_close (&tu);
    free (a);
    free (b);
    unlink (path);
    unlink (tagged);

    /* larger than any glass slide: 500,000 pixels at 20x (0.5 µm by
       the magnification: 250 mm), the slide's fault, not the machine's;
       without a magnification, by MPP (4096 pixels of 100 µm: 410 mm);
       with one, a wrong MPP alone is no reason (the working image is
       sized by the magnification, and HistoQC runs it) */
    static const char long_mag[] = "Aperio Image Library v10.0.51\r\n500000x16 [0,0 500000x16] "
                                   "(256x16) LZW|AppMag = 20|MPP = 0.5";
    static const char big_mpp[] = "Aperio Image Library v10.0.51\r\n4096x512 [0,0 4096x512] "
                                  "(256x256) LZW|MPP = 100";
    static const char mag_and_big_mpp[] = "Aperio Image Library v10.0.51\r\n4096x512 "
                                          "[0,0 4096x512] (256x256) LZW|AppMag = 20|MPP = 100";
    fx_tiff_level_t strip[] = {
        {.w = 500000, .h = 16, .tile_w = 256, .tile_h = 16, .spp = 3,
         .compression = COMPRESSION_LZW, .description = long_mag},
    };
    fx_tiff_level_t wide[] = {
        {.w = 4096, .h = 512, .tile_w = 256, .tile_h = 256, .spp = 3,
         .compression = COMPRESSION_LZW, .description = big_mpp},
    };
    qc_region_request_t by_mag = {.size = {QC_WORK_MAG, 1.25}, .base_mag = 20};
    qc_region_request_t by_dim = {.size = {QC_WORK_DIM, 500}};
    qc_region_plan_t plan;
    snprintf (path, sizeof path, "%s/huge.svs", dir);
    CHECK (fx_tiff_write (path, strip, 1, fill_grey, NULL) == 0);
    s = qc_slide_open (path, err, sizeof err);
    err[0] = '\0';
    CHECK (s && qc_region_plan (s, &by_mag, &plan, err, sizeof err) == -1
           && strstr (err, "500000 x 16 pixels of 0.5 x 0.5 µm (by its base magnification), "
                           "250 x 0 mm: larger than any glass slide")
           && !strstr (err, "machine"), "by magnification: %s", err);
    qc_slide_close (&s);
    CHECK (fx_tiff_write (path, wide, 1, fill_grey, NULL) == 0);
    s = qc_slide_open (path, err, sizeof err);
    err[0] = '\0';
    CHECK (s && qc_region_plan (s, &by_dim, &plan, err, sizeof err) == -1
           && strstr (err, "4096 x 512 pixels of 100 x 100 µm (by its resolution), 410 x 51 mm"),
           "by MPP: %s", err);
    qc_slide_close (&s);
    wide[0].description = mag_and_big_mpp;
    CHECK (fx_tiff_write (path, wide, 1, fill_grey, NULL) == 0);
    s = qc_slide_open (path, err, sizeof err);
    CHECK (s && qc_region_plan (s, &by_mag, &plan, err, sizeof err) == 0,
           "a wrong MPP beside a magnification: %s", err);
    qc_slide_close (&s);
    /* one level of 400,000 x 300,000 pixels, no pyramid, read whole for
       any working image: refused, with a magnification that puts it on
       the glass (40x: 100 x 75 mm) and without one (a tester's single
       level of 10^12 pixels held its slot past the task timeout three
       times); one of 100,000 x 100,000 is planned */
    qc_region_request_t by_mag40 = {.size = {QC_WORK_MAG, 1.25}, .base_mag = 40};
    qc_region_request_t by_dim2000 = {.size = {QC_WORK_DIM, 2000}};
    CHECK (fx_tiff_write_huge (path, 400000, 300000, 2048) == 0, "the huge level written");
    s = qc_slide_open (path, err, sizeof err);
    CHECK (s != NULL, "the huge level opens: %s", err);
    for (int k = 0; s && k < 2; k++) {
        err[0] = '\0';
        CHECK (qc_region_plan (s, k ? &by_dim2000 : &by_mag40, &plan, err, sizeof err) == -1
               && strstr (err, "would be made from level 0 read whole, 400000 x 300000 "
                               "pixels (120 billion): more than a glass slide holds"),
               "%s: %s", k ? "2000 pixels" : "1.25x of 40x", err);
    }
    qc_slide_close (&s);
    CHECK (fx_tiff_write_huge (path, 100000, 100000, 2048) == 0, "a 1e10 level written");
    s = qc_slide_open (path, err, sizeof err);
    CHECK (s && qc_region_plan (s, &by_dim2000, &plan, err, sizeof err) == 0,
           "a single level of 100,000 x 100,000 pixels: %s", err);
    qc_slide_close (&s);
    unlink (path);

    test_file_gone (dir);
    test_damaged_tables (dir);

    /* a web page saved as the slide (a login or error page): said so */
    snprintf (path, sizeof path, "%s/page.svs", dir);
    FILE *page = fopen (path, "w");
    CHECK (page && fputs ("\n  <!DOCTYPE html>\n<html><head><title>Sign in</title></head>"
                          "<body>Please sign in</body></html>\n", page) >= 0);
    if (page)
        fclose (page);
    s = qc_slide_open (path, err, sizeof err);
    CHECK (!s && strstr (err, "the file is an HTML page, not an image: a web server's page in "
                              "the slide's place (by URL: a folder's listing, or an error or "
                              "login page? Give each slide's own address"), "a page: %s", err);
    qc_slide_close (&s);
    unlink (path);

    /* a list of slides given where a slide goes (a new user's review):
       by its name, or by a first line that names a slide; any other
       text file is only a text file */
    static const struct { const char *name, *text; int list; } texts[] = {
        { "cohort.txt", "slides are listed elsewhere\n", 1 },
        { "cohort.CSV", "path,label\n", 1 },
        { "cohort", "/data/slides/a b.svs\n/data/slides/c.svs\n", 1 },
        { "cohort.dat", "  /data/slides/a.NDPI  \t1\n", 1 },
        { "notes.svs", "not a slide at all, some notes\n", 0 },
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        snprintf (path, sizeof path, "%s/%s", dir, texts[i].name);
        FILE *t = fopen (path, "w");
        CHECK (t && fputs (texts[i].text, t) >= 0);
        if (t)
            fclose (t);
        s = qc_slide_open (path, err, sizeof err);
        CHECK (!s && strstr (err, "the file is a text file, not an image")
                   && !strstr (err, "--list FILE") == !texts[i].list,
               "%s: %s", texts[i].name, err);
        qc_slide_close (&s);
        unlink (path);
    }
    test_known_formats (dir);
    rmdir (dir);
    return check_done ("test_slide_why");
}
