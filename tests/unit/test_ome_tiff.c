/* OME-TIFF slides (bfconvert's, QuPath's exports): a pyramid whose
 * lower levels are SubIFDs of the first directory, the magnification and
 * pixel size in OME-XML. OpenSlide 3.4.1 reads such a file as a generic
 * TIFF of one level with neither, so a 1.25x image was read from full
 * resolution and a magnification work size failed without base_mag.
 *
 * Written here with libtiff, every pixel known (LZW): levels 992 x 688,
 * 248 x 172 and 62 x 43 in 128-pixel tiles, and after them a second
 * plane of level 0's size in the directory chain (as a file of several
 * planes or images has), whose pixels differ, so that taking it for a
 * level shows. What must hold, by path and by byte source (by URL):
 * vendor "ome-tiff", the three levels with their downsamples, every
 * level whole and in pieces the pixels written, the magnification the
 * pipeline reads (qc_region_base_mag_said) and the pixel size, the
 * second plane read as the side image its OME-XML names (macro); the
 * same pyramid in big-endian byte order (a classic TIFF OpenSlide
 * refuses), read the same by path too; with its levels as Images of
 * their own in the chain (bfconvert without -noflat), read as the same
 * levels; a file of
 * several scenes, the others named in the slide's notes; units
 * other than µm; an OME-TIFF of one level; channels stored apart
 * (fluorescence) and one in strips refused with their reasons, by
 * source in the same words as by path and not declined (a URL would be
 * downloaded whole to fail the same), a damaged one by source not
 * declined either; a TIFF with SubIFDs but no OME-XML left as OpenSlide
 * reads it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/image/image.h"
#include "kernels/pipeline/pipeline.h"
#include "kernels/slide/slide.h"
#include "kernels/slide/work_size.h"
#include "shared/byte_source_file.h"
#include "shared/log.h"
#include "shared/result.h"
#include "tests/unit/check.h"
#include "tests/unit/tiff_fixtures.h"

#define LEVELS 3
static const uint32_t LEVEL_W[LEVELS] = { 992, 248, 62 };
static const uint32_t LEVEL_H[LEVELS] = { 688, 172, 43 };

static const char OME_HEAD[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
    "<OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\" Creator=\"test\">";

/* The colour written at level pixel (x, y); the second plane's is its
 * inverse. */
static void
pixel_at (uint32_t x, uint32_t y, uint8_t rgb[3])
{
    rgb[0] = (uint8_t) (x * 7 + y * 3);
    rgb[1] = (uint8_t) (((x / 8 + y / 8) % 2) ? 220 : 40);
    rgb[2] = (uint8_t) (x ^ y);
}

static void
fill (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp,
      uint8_t *tile)
{
    int inverse = ctx != NULL;
    for (uint32_t i = 0; i < tw * th; i++) {
        uint8_t c[3];
        pixel_at (x0 + i % tw, y0 + i / tw, c);
        for (int k = 0; k < spp; k++)
            tile[(size_t) i * (size_t) spp + (size_t) k]
                = inverse ? (uint8_t) (255 - c[k]) : c[k];
    }
}

/* A pyramid of `levels` levels at path, written in libtiff's mode
 * ("w": the machine's byte order, "wb" big-endian), directory 0's
 * description desc (NULL: none), its lower levels SubIFDs when subifds,
 * spp samples a pixel; then a second plane of level 0's size in the
 * chain when plane2. 0, or -1. */
static int
write_slide_as (const char *mode, const char *path, const char *desc, int levels,
                int subifds, int spp, int plane2)
{
    TIFF *t = TIFFOpen (path, mode);
    if (!t)
        return -1;
    int rc = 0;
    for (int l = 0; l < levels && rc == 0; l++) {
        fx_tiff_level_t lv = {
            .w = LEVEL_W[l], .h = LEVEL_H[l], .tile_w = 128, .tile_h = 128, .spp = spp,
            .compression = COMPRESSION_LZW, .reduced = l > 0, .description = l ? NULL : desc,
            .subifds = l == 0 && subifds ? levels - 1 : 0,
        };
        rc = fx_tiff_write_level (t, &lv, fill, NULL);
    }
    if (rc == 0 && plane2) {
        fx_tiff_level_t lv = { .w = LEVEL_W[0], .h = LEVEL_H[0], .tile_w = 128,
                               .tile_h = 128, .spp = spp, .compression = COMPRESSION_LZW };
        rc = fx_tiff_write_level (t, &lv, fill, (void *) 1);
    }
    TIFFClose (t);
    return rc;
}

static int
write_slide (const char *path, const char *desc, int levels, int subifds, int spp,
             int plane2)
{
    return write_slide_as ("w", path, desc, levels, subifds, spp, plane2);
}

/* Pixels of level l's w x h piece at level pixel (lx, ly) that are not
 * what was written (-1: not read, err says why). */
static long
wrong_in_piece (qc_slide_t *s, int l, int lx, int ly, int w, int h, char *err,
                size_t errlen)
{
    int ds = l == 0 ? 1 : l == 1 ? 4 : 16;
    qc_slide_rect_t rect = { l, (int64_t) lx * ds, (int64_t) ly * ds, w, h };
    uint8_t *px = malloc ((size_t) w * (size_t) h * 3);
    if (!px || qc_slide_read_rows (s, &rect, 0, h, px, (size_t) w * 3, err, errlen) != 0) {
        free (px);
        return -1;
    }
    long wrong = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t want[3];
            pixel_at ((uint32_t) (lx + x), (uint32_t) (ly + y), want);
            wrong += memcmp (px + ((size_t) y * (size_t) w + (size_t) x) * 3, want, 3) != 0;
        }
    free (px);
    return wrong;
}

static const char *
prop (qc_slide_t *s, const char *name)
{
    const char *v = qc_slide_property (s, name);
    return v ? v : "(none)";
}

/* The pyramid, opened one way (how): levels, pixels, metadata. */
static void
check_pyramid (qc_slide_t *s, const char *how)
{
    char err[512] = "";
    CHECK (strcmp (prop (s, "openslide.vendor"), "ome-tiff") == 0, "%s: vendor %s", how,
           prop (s, "openslide.vendor"));
    CHECK (strcmp (qc_slide_readers (s), "direct TIFF") == 0, "%s: readers %s", how,
           qc_slide_readers (s));
    CHECK (qc_slide_level_count (s) == LEVELS, "%s: %d levels", how,
           qc_slide_level_count (s));
    for (int l = 0; l < qc_slide_level_count (s) && l < LEVELS; l++) {
        int64_t w = 0, h = 0;
        qc_slide_level_size (s, l, &w, &h);
        double want = l == 0 ? 1.0 : (688.0 / LEVEL_H[l] + 992.0 / LEVEL_W[l]) / 2.0;
        CHECK (w == LEVEL_W[l] && h == LEVEL_H[l]
               && fabs (qc_slide_level_downsample (s, l) - want) < 1e-12,
               "%s: level %d is %lld x %lld, downsample %g", how, l, (long long) w,
               (long long) h, qc_slide_level_downsample (s, l));
        CHECK (qc_slide_level_reliable (s, l, err, sizeof err) == 1, "%s level %d: %s", how,
               l, err);
        long wrong = wrong_in_piece (s, l, 0, 0, (int) LEVEL_W[l], (int) LEVEL_H[l], err,
                                     sizeof err);
        CHECK (wrong == 0, "%s: level %d whole: %ld wrong %s", how, l, wrong, err);
        wrong = wrong_in_piece (s, l, 3, 5, (int) LEVEL_W[l] / 2, (int) LEVEL_H[l] / 3, err,
                                sizeof err);
        CHECK (wrong == 0, "%s: level %d piece: %ld wrong %s", how, l, wrong, err);
    }
    /* the second plane is the Image named macro: a side image, of its pixels */
    qc_rgb_t *macro = qc_slide_read_associated (s, "macro", 1 << 20, err, sizeof err);
    long wrong = macro ? 0 : -1;
    for (uint32_t y = 0; macro && y < LEVEL_H[0]; y += 37)
        for (uint32_t x = 0; x < LEVEL_W[0]; x += 41) {
            uint8_t c[3];
            pixel_at (x, y, c);
            const uint8_t *got = qc_rgb_host (macro) + ((size_t) y * LEVEL_W[0] + x) * 3;
            for (int k = 0; k < 3; k++)
                wrong += got[k] != 255 - c[k];
        }
    CHECK (macro && macro->w == 992 && macro->h == 688 && wrong == 0,
           "%s: macro %s, %ld samples wrong", how, macro ? "read" : err, wrong);
    qc_rgb_destroy (&macro);
    CHECK (!qc_slide_has_associated (s, "label"), "%s: a label", how);
    double mag = 0.0;
    CHECK (qc_region_base_mag_said (s, 0.0, &mag, NULL, NULL) == 0 && mag == 20.0,
           "%s: magnification %g", how, mag);
    CHECK (strcmp (prop (s, "openslide.objective-power"), "20") == 0
           && strcmp (prop (s, "openslide.mpp-x"), "0.5") == 0
           && strcmp (prop (s, "openslide.mpp-y"), "0.5") == 0,
           "%s: objective-power %s, mpp %s %s", how, prop (s, "openslide.objective-power"),
           prop (s, "openslide.mpp-x"), prop (s, "openslide.mpp-y"));
}

/* path opened from a byte source, as a slide by URL is: NULL with err,
 * *declined set. */
static qc_slide_t *
open_by_source (const char *path, qc_byte_source_t **src, int *declined, char *err,
                size_t errlen)
{
    *src = qc_byte_source_file_open (path, err, errlen);
    qc_slide_input_t in = { .src = *src, .name = "x.ome.tif" };
    *declined = -1;
    return *src ? qc_slide_open_input (&in, QC_SLIDE_READERS_ALL, declined, err, errlen)
                : NULL;
}

/* The pyramid written at path (what: its kind, for messages), opened
 * by path, with QC_DIRECT_READ=0 and by source: its levels, pixels,
 * metadata, and nothing to say of it. */
static void
check_file (const char *path, const char *what)
{
    char how[96], err[512] = "", note[1024] = "?";
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    CHECK (s != NULL, "%s by path: %s", what, err);
    snprintf (how, sizeof how, "%s by path", what);
    if (s) {
        check_pyramid (s, how);
        CHECK (qc_slide_notes (s, note, sizeof note) == 0 && note[0] == '\0',
               "%s: a note: %s", what, note);
    }
    qc_slide_close (&s);
    /* QC_DIRECT_READ=0 asks for OpenSlide, which reads one level: an
     * OME-TIFF is read here all the same */
    setenv ("QC_DIRECT_READ", "0", 1);
    s = qc_slide_open (path, err, sizeof err);
    unsetenv ("QC_DIRECT_READ");
    CHECK (s && qc_slide_level_count (s) == LEVELS, "%s, QC_DIRECT_READ=0: %s", what,
           s ? "levels" : err);
    qc_slide_close (&s);
    qc_byte_source_t *src = NULL;
    int declined;
    s = open_by_source (path, &src, &declined, err, sizeof err);
    CHECK (s && declined == 0, "%s by source: %s", what, err);
    snprintf (how, sizeof how, "%s by source", what);
    if (s)
        check_pyramid (s, how);
    qc_slide_close (&s);
    qc_byte_source_close (&src);
}

/* The pyramid's OME-XML into desc: the slide Image (20x, 0.5 µm, at
 * IFD 0), then the Images in images, then the macro Image at IFD
 * macro_ifd (the second plane). */
static void
pyramid_desc (char *desc, size_t len, const char *images, int macro_ifd)
{
    snprintf (desc, len, "%s<Instrument ID=\"Instrument:0\"><Objective "
              "ID=\"Objective:0:0\" NominalMagnification=\"20.0\"/></Instrument>"
              "<Image ID=\"Image:0\"><ObjectiveSettings ID=\"Objective:0:0\"/><Pixels "
              "PhysicalSizeX=\"0.5\" PhysicalSizeXUnit=\"\xc2\xb5m\" PhysicalSizeY=\"0.5\" "
              "SizeC=\"3\" SizeT=\"1\" SizeZ=\"2\" SizeX=\"992\" SizeY=\"688\" Type=\"uint8\">"
              "<Channel ID=\"Channel:0:0\" SamplesPerPixel=\"3\"/><TiffData IFD=\"0\" "
              "PlaneCount=\"1\"/></Pixels></Image>%s<Image ID=\"Image:9\" Name=\"macro\">"
              "<Pixels SizeC=\"3\" SizeX=\"992\" SizeY=\"688\"><TiffData IFD=\"%d\"/>"
              "</Pixels></Image></OME>", OME_HEAD, images, macro_ifd);
}

static void
test_pyramid (const char *dir)
{
    char path[1200], desc[2048];
    snprintf (path, sizeof path, "%s/pyramid.ome.tif", dir);
    pyramid_desc (desc, sizeof desc, "", 1);
    CHECK (write_slide (path, desc, LEVELS, 1, 3, 1) == 0, "pyramid not written");
    check_file (path, "pyramid");
    /* a classic TIFF in big-endian order, which OpenSlide 3.4.1 refuses:
     * an OME-TIFF is read here, by path as by source */
    CHECK (write_slide_as ("wb", path, desc, LEVELS, 1, 3, 1) == 0, "big-endian not written");
    FILE *f = fopen (path, "rb");
    char order[2] = "";
    CHECK (f && fread (order, 1, 2, f) == 2 && memcmp (order, "MM", 2) == 0,
           "not big-endian");
    if (f)
        fclose (f);
    check_file (path, "big-endian");
    unlink (path);
}

/* bfconvert without -noflat: the pyramid's levels are Images of their
 * own in the directory chain, listed after the slide, no SubIFDs. They
 * are the slide's levels, read as SubIFDs are; nothing is said of
 * them (they are QC'd). */
static void
test_flattened (const char *dir)
{
    char path[1200], desc[2048];
    snprintf (path, sizeof path, "%s/flat.ome.tif", dir);
    pyramid_desc (desc, sizeof desc, "<Image Name=\"flat.svs #2\"><Pixels SizeC=\"3\" "
                  "SizeX=\"248\" SizeY=\"172\"><TiffData IFD=\"1\"/></Pixels></Image>"
                  "<Image Name=\"flat.svs #3\"><Pixels SizeC=\"3\" SizeX=\"62\" "
                  "SizeY=\"43\"><TiffData IFD=\"2\"/></Pixels></Image>", 3);
    CHECK (write_slide (path, desc, LEVELS, 0, 3, 1) == 0, "flattened not written");
    check_file (path, "flattened");
    unlink (path);
}

/* A file of several brightfield Images (a CZI's scenes): the one at the
 * first directory is QC'd, and the slide's notes name the others in
 * the file (not those in none, nor a side image, nor another scene's
 * own lower resolution listed right after it, but a later scene of the
 * proportions of an earlier one), in one line whatever their names hold. */
static void
test_scenes (const char *dir)
{
    char path[1200], desc[2048], err[512] = "";
    snprintf (path, sizeof path, "%s/scenes.ome.tif", dir);
    snprintf (desc, sizeof desc, "%s<Instrument><Objective ID=\"Objective:0\" "
              "NominalMagnification=\"5\"/></Instrument><Image Name=\"Scene #1\">"
              "<ObjectiveSettings ID=\"Objective:0\"/><Pixels SizeC=\"3\" "
              "SizeX=\"992\" SizeY=\"688\"><TiffData IFD=\"0\"/></Pixels></Image>"
              "<Image Name=\"Scene|#2&#10;b\"><Pixels SizeC=\"3\" SizeX=\"992\" SizeY=\"688\">"
              "<TiffData IFD=\"1\"/></Pixels></Image>"
              "<Image Name=\"Scene #2 lower\"><Pixels SizeC=\"3\" SizeX=\"248\" SizeY=\"172\">"
              "<TiffData IFD=\"2\"/></Pixels></Image>"
              "<Image Name=\"Scene #3\"><Pixels SizeC=\"3\" SizeX=\"496\" SizeY=\"344\">"
              "<TiffData IFD=\"4\"/></Pixels></Image>"
              "<Image Name=\"label\"><Pixels SizeX=\"99\" SizeY=\"99\"><TiffData IFD=\"3\"/>"
              "</Pixels></Image>"
              "<Image Name=\"elsewhere\"><Pixels SizeX=\"99\" SizeY=\"9\"/></Image></OME>",
              OME_HEAD);
    CHECK (write_slide (path, desc, LEVELS, 1, 3, 1) == 0, "scenes not written");
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    char note[1024] = "";
    CHECK (s && qc_slide_level_count (s) == LEVELS, "scenes: %s",
           s ? "levels" : err);
    CHECK (s && qc_slide_notes (s, note, sizeof note) == 1
           && strstr (note, "holds 2 images besides the slide that are not QC'd: "
                      "'Scene?#2?b' (series 1, 992 x 688), 'Scene #3' (series 3, 496 x 344);"
                      " QC reads only the image at "
                      "its first TIFF directory ('Scene #1')")
           && strstr (note, "bfconvert -noflat -series N") && !strchr (note, '\n')
           && !strstr (note, "lower") && !strstr (note, "elsewhere"), "scenes: note %s", note);
    qc_slide_close (&s);
    /* and the default pipeline's result says it, in its warnings, once */
    qc_pipeline_t *p = qc_pipeline_new (qc_pipeline_default_config (), err, sizeof err);
    qc_result_t *r = qc_result_new ();
    qc_pipeline_input_t in = {.path = path};
    CHECK (p && r && qc_pipeline_run_input (p, &in, r, NULL) == 0 && r->ok,
           "scenes: the slide's QC failed: %s", r && r->error ? r->error : err);
    const char *said = r && r->warnings ? strstr (r->warnings, "besides the slide") : NULL;
    CHECK (said && strstr (said, "'Scene #3'") && !strstr (said + 1, "besides the slide"),
           "scenes: warnings: %s", r && r->warnings ? r->warnings : "(none)");
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
    unlink (path);
}

/* Other units and forms; one level; fluorescence; SubIFDs without OME. */
static void
test_kinds (const char *dir)
{
    char path[1200], desc[2048], err[512] = "";
    snprintf (path, sizeof path, "%s/kinds.ome.tif", dir);

    /* a prefix, nm, no objective: a resolution and no magnification */
    CHECK (write_slide (path, "<ome:OME xmlns:ome=\"http://www.openmicroscopy.org/Schemas/OME/"
                        "2016-06\"><ome:Image><ome:Pixels PhysicalSizeX=\"250\" "
                        "PhysicalSizeXUnit=\"nm\" PhysicalSizeY=\"250\" PhysicalSizeYUnit=\"nm\""
                        " SizeC=\"3\"/></ome:Image></ome:OME>", LEVELS, 1, 3, 0) == 0);
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    double mag = -1.0;
    CHECK (s && qc_slide_level_count (s) == LEVELS
           && strcmp (prop (s, "openslide.mpp-x"), "0.25") == 0
           && qc_slide_property (s, "openslide.objective-power") == NULL
           && qc_region_base_mag_said (s, 0.0, &mag, NULL, NULL) == -1,
           "nm: %s, mpp-x %s", s ? "opened" : err, s ? prop (s, "openslide.mpp-x") : "");
    qc_slide_close (&s);

    /* one level, no SubIFDs */
    snprintf (desc, sizeof desc, "%s<Instrument><Objective NominalMagnification=\"40\"/>"
              "</Instrument><Image><Pixels SizeC=\"3\" PhysicalSizeX=\"0.25\" "
              "PhysicalSizeY=\"0.25\"/></Image></OME>", OME_HEAD);
    CHECK (write_slide (path, desc, 1, 0, 3, 0) == 0);
    s = qc_slide_open (path, err, sizeof err);
    CHECK (s && qc_slide_level_count (s) == 1
           && strcmp (prop (s, "openslide.objective-power"), "40") == 0
           && wrong_in_piece (s, 0, 0, 0, 992, 688, err, sizeof err) == 0,
           "one level: %s", err);
    qc_slide_close (&s);

    /* two channels, each a grey image: fluorescence, refused so both ways,
     * in the same words; by source not declined (which would have a URL
     * downloaded whole to fail the same) */
    snprintf (desc, sizeof desc, "%s<Image><Pixels SizeC=\"2\" PhysicalSizeX=\"0.25\">"
              "<Channel SamplesPerPixel=\"1\" Name=\"DAPI\"/><Channel SamplesPerPixel=\"1\"/>"
              "</Pixels></Image></OME>", OME_HEAD);
    CHECK (write_slide (path, desc, LEVELS, 1, 1, 1) == 0);
    s = qc_slide_open (path, err, sizeof err);
    CHECK (!s && strstr (err, "fluorescence") && strstr (err, "2 channels"),
           "fluorescence by path: %s", s ? "opened" : err);
    qc_slide_close (&s);
    qc_byte_source_t *src = NULL;
    int declined;
    s = open_by_source (path, &src, &declined, err, sizeof err);
    char by_path[512];
    snprintf (by_path, sizeof by_path, "%s", err);
    CHECK (!s && declined == 0 && strcmp (err, by_path) == 0,
           "fluorescence by source: %s (declined %d)", s ? "opened" : err, declined);
    qc_slide_close (&s);
    qc_byte_source_close (&src);

    /* in strips (bfconvert's default): refused, saying how to write it */
    TIFF *t = TIFFOpen (path, "w");
    uint8_t row[64 * 3] = { 0 };
    int ok = t && fx_tiff_set (t, TIFFTAG_IMAGEWIDTH, 64) && fx_tiff_set (t, TIFFTAG_IMAGELENGTH, 8)
             && fx_tiff_set (t, TIFFTAG_BITSPERSAMPLE, 8) && fx_tiff_set (t, TIFFTAG_SAMPLESPERPIXEL, 3)
             && fx_tiff_set (t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB)
             && fx_tiff_set (t, TIFFTAG_ROWSPERSTRIP, 8)
             && fx_tiff_set (t, TIFFTAG_IMAGEDESCRIPTION, desc);
    for (uint32_t y = 0; ok && y < 8; y++)
        ok = TIFFWriteScanline (t, row, y, 0) == 1;
    if (t)
        TIFFClose (t);
    CHECK (ok, "the stripped OME-TIFF not written");
    s = qc_slide_open (path, err, sizeof err);
    CHECK (!s && strstr (err, "OME-TIFF") && strstr (err, "strips") && strstr (err, "-tilex"),
           "in strips: %s", s ? "opened" : err);
    snprintf (by_path, sizeof by_path, "%s", err);
    s = open_by_source (path, &src, &declined, err, sizeof err);
    CHECK (!s && declined == 0 && strcmp (err, by_path) == 0,
           "in strips by source: %s (declined %d)", s ? "opened" : err, declined);
    qc_slide_close (&s);
    qc_byte_source_close (&src);

    /* damaged after its first directory (a SubIFD past the end): by
     * source it fails as an OME-TIFF not read here, not declined */
    CHECK (write_slide (path, desc, LEVELS, 1, 3, 1) == 0);
    uint64_t cut = 0;
    if ((t = TIFFOpen (path, "r"))) {
        uint16_t n = 0;
        uint64_t *offsets = NULL;
        if (TIFFGetField (t, TIFFTAG_SUBIFD, &n, &offsets) && n > 0)
            cut = offsets[0];
        TIFFClose (t);
    }
    CHECK (cut > 0 && truncate (path, (off_t) cut) == 0, "SubIFD at %llu", (unsigned long long) cut);
    s = open_by_source (path, &src, &declined, err, sizeof err);
    CHECK (!s && declined == 0 && strstr (err, "an OME-TIFF that is not read here: "),
           "damaged by source: %s (declined %d)", s ? "opened" : err, declined);
    qc_slide_close (&s);
    qc_byte_source_close (&src);

    /* SubIFDs in a TIFF without OME-XML: OpenSlide's generic TIFF, as before */
    CHECK (write_slide (path, "a plain TIFF", LEVELS, 1, 3, 0) == 0);
    s = qc_slide_open (path, err, sizeof err);
    CHECK (s && strcmp (prop (s, "openslide.vendor"), "generic-tiff") == 0
           && qc_slide_level_count (s) == 1, "no OME-XML: %s %s %d", s ? "" : err,
           s ? prop (s, "openslide.vendor") : "", s ? qc_slide_level_count (s) : 0);
    qc_slide_close (&s);
    unlink (path);
}

int
main (void)
{
    qc_log_set_stderr_enabled (0);
    char dir[] = "/tmp/qc-ome-tiff-XXXXXX";
    CHECK (mkdtemp (dir) != NULL);
    test_pyramid (dir);
    test_flattened (dir);
    test_scenes (dir);
    test_kinds (dir);
    rmdir (dir);
    return check_done ("test_ome_tiff");
}
