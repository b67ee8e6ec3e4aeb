/* A slide whose side image (its macro, its label) is damaged is still
 * QC'd. Before, any damage anywhere in the file refused the whole slide
 * ("the file is damaged: its image 3 (1280 x 431) names a tile or strip
 * of 4294967280 bytes..."), though OpenSlide opens such a slide and reads
 * its levels; and a side image whose data did not decode left OpenSlide's
 * handle failing every later read, so a bad macro photo failed the QC of
 * good tissue. Copies of a real Aperio slide (thumbnail, label, macro in
 * strips) damaged in place: a strip's byte count larger than the file, a
 * strip past the end, a strip of junk where its JPEG data was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tiffio.h>

#include "kernels/pipeline/pipeline.h"
#include "kernels/slide/slide.h"
#include "shared/result.h"
#include "tests/unit/check.h"
#include "tests/unit/tiff_fixtures.h"

#define SIDE 256          /* the region compared at level 0 */

/* The directory of path whose description's second line starts with
 * word (Aperio's "label", "macro"), and its first strip's offset; -1
 * when none. */
static int
find_side (const char *path, const char *word, uint32_t *strip0)
{
    TIFF *t = TIFFOpen (path, "r");
    int found = -1;
    for (int d = 0; t && found < 0; d++) {
        const char *desc = NULL;
        if (TIFFGetField (t, TIFFTAG_IMAGEDESCRIPTION, &desc) && desc) {
            const char *nl = strpbrk (desc, "\r\n");
            while (nl && (*nl == '\r' || *nl == '\n'))
                nl++;
            if (nl && strncmp (nl, word, strlen (word)) == 0 && !TIFFIsTiled (t)) {
                found = d;
                *strip0 = (uint32_t) TIFFGetStrileOffset (t, 0);
            }
        }
        if (found < 0 && !TIFFReadDirectory (t))
            break;
    }
    if (t)
        TIFFClose (t);
    return found;
}

static int
copy_file (const char *from, const char *to)
{
    char cmd[2400];
    snprintf (cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    return system (cmd) == 0 ? 0 : -1;
}

/* Level 0's top-left SIDE x SIDE pixels, read by path's readers. */
static int
read_corner (qc_slide_t *s, uint8_t *rgb, char *err, size_t errlen)
{
    qc_slide_rect_t r = {.level = 0, .w = SIDE, .h = SIDE};
    return qc_slide_read_rows (s, &r, 0, SIDE, rgb, SIDE * 3, err, errlen);
}

/* The default pipeline on path: passes, with warnings that hold says
 * and also (may be NULL), and a macro picture when macro is set. */
static void
check_pipeline (const char *path, const char *what, const char *says, const char *also,
                int macro)
{
    char err[1024] = "";
    qc_pipeline_t *p = qc_pipeline_new (qc_pipeline_default_config (), err, sizeof err);
    qc_result_t *r = qc_result_new ();
    qc_pipeline_input_t in = {.path = path};
    CHECK (p && r && qc_pipeline_run_input (p, &in, r, NULL) == 0 && r->ok,
           "%s: the slide's QC failed: %s", what, r && r->error ? r->error : err);
    CHECK (r && r->warnings && strstr (r->warnings, says)
           && (!also || strstr (r->warnings, also)),
           "%s: warnings: %s", what, r && r->warnings ? r->warnings : "(none)");
    int macro_png = 0;
    for (size_t i = 0; r && i < r->nfiles; i++)
        macro_png |= strstr (r->files[i].name, "macro") != NULL;
    CHECK (macro_png == macro, "%s: a macro picture %s", what,
           macro ? "was not written" : "was written");
    CHECK (r && qc_result_get (r, "levels") && qc_result_get (r, "pixels_to_use"),
           "%s: the slide's measures are missing", what);
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

int
main (void)
{
    char dir[] = "/tmp/qc-side-XXXXXX", real[1024], path[512], err[1024] = "", why[512];
    CHECK (mkdtemp (dir) != NULL);
    snprintf (real, sizeof real, "%s/slides/real/CMU-1-Small-Region.svs", check_shared_dir ());
    snprintf (path, sizeof path, "%s/side.svs", dir);
    uint32_t strip0 = 0, label_strip0 = 0;
    int macro = find_side (real, "macro", &strip0), label = find_side (real, "label",
                                                                        &label_strip0);
    CHECK (macro > 0 && label > 0, "the real slide's macro and label: %d, %d", macro, label);
    uint8_t *good = malloc (SIDE * SIDE * 3), *got = malloc (SIDE * SIDE * 3);
    qc_slide_t *s = qc_slide_open_with (real, QC_SLIDE_READERS_OPENSLIDE, err, sizeof err);
    CHECK (good && got && s && read_corner (s, good, err, sizeof err) == 0, "good: %s", err);
    CHECK (s && !qc_slide_associated_damaged (s, "macro", why, sizeof why) && why[0] == '\0',
           "the good slide's macro taken as damaged: %s", why);
    qc_slide_close (&s);

    /* 1. the macro's strip 5 names more bytes than the file holds: the
       slide opens, its macro is said damaged and not read, its label
       and levels read */
    CHECK (copy_file (real, path) == 0
           && fx_tiff_patch (path, macro, TIFFTAG_STRIPBYTECOUNTS, 5, 0xfffffff0u) == 0);
    s = qc_slide_open (path, err, sizeof err);
    CHECK (s != NULL, "a damaged macro refused the slide: %s", err);
    CHECK (s && qc_slide_has_associated (s, "macro")
           && qc_slide_associated_damaged (s, "macro", why, sizeof why)
           && strstr (why, "macro image (its image ") && strstr (why, "1280 x 431) is damaged: "
                                                               "its strip 5 of 4294967280 bytes "
                                                               "is more than the whole file"),
           "damaged macro: %s", why);
    CHECK (s && !qc_slide_associated_damaged (s, "label", why, sizeof why),
           "the label taken as damaged: %s", why);
    qc_rgb_t *img = s ? qc_slide_read_associated (s, "macro", 1 << 26, err, sizeof err) : NULL;
    CHECK (!img && strstr (err, "is damaged: its strip 5"), "macro read: %s", img ? "(read)" : err);
    qc_rgb_destroy (&img);
    img = s ? qc_slide_read_associated (s, "label", 1 << 26, err, sizeof err) : NULL;
    CHECK (img && img->w == 387 && img->h == 463, "label: %s", img ? "wrong size" : err);
    qc_rgb_destroy (&img);
    CHECK (s && read_corner (s, got, err, sizeof err) == 0 && good && got
           && memcmp (good, got, SIDE * SIDE * 3) == 0, "levels beside a damaged macro: %s", err);
    qc_slide_close (&s);
    char note[1024];
    s = qc_slide_open (path, err, sizeof err);
    CHECK (s && qc_slide_notes (s, note, sizeof note) == 1
           && strstr (note, "the file's macro image (its image ")
           && strstr (note, "its strip 5 of 4294967280 bytes is more than the whole file")
           && strstr (note, "the slide's levels are read and QC'd"), "the note: %s", note);
    qc_slide_close (&s);
    /* the slide's first image read says the damage; saveMacro says it
       saves no macro */
    check_pipeline (path, "a byte count past the file",
                    "is damaged: its strip 5 of 4294967280 bytes is more than the whole file",
                    "saveMacro: the 'macro' image is damaged (said above); not saved", 0);

    /* 2. the label's first strip past the end (a copy that stopped
       would be cut short: this one is not): the label is damaged, the
       macro reads */
    CHECK (copy_file (real, path) == 0
           && fx_tiff_patch (path, label, TIFFTAG_STRIPOFFSETS, 0, 0x7fff0000u) == 0);
    s = qc_slide_open (path, err, sizeof err);
    CHECK (s && qc_slide_associated_damaged (s, "label", why, sizeof why)
           && strstr (why, "its strip 0 of 3583 bytes lies at byte 2147418112")
           && strstr (why, "past the file's end"), "damaged label: %s", s ? why : err);
    img = s ? qc_slide_read_associated (s, "macro", 1 << 26, err, sizeof err) : NULL;
    CHECK (img && img->w == 1280 && img->h == 431, "macro beside a damaged label: %s",
           img ? "wrong size" : err);
    qc_rgb_destroy (&img);
    qc_slide_close (&s);
    check_pipeline (path, "a damaged label", "the file's label image (its image ", NULL, 1);

    /* 2b. a damaged label of the macro's size (its size tags written so):
       the macro, whole, is read and saved (matched by size, it was taken
       for damaged too) */
    CHECK (copy_file (real, path) == 0
           && fx_tiff_patch (path, label, TIFFTAG_IMAGEWIDTH, 0, 1280) == 0
           && fx_tiff_patch (path, label, TIFFTAG_IMAGELENGTH, 0, 431) == 0
           && fx_tiff_patch (path, label, TIFFTAG_STRIPOFFSETS, 0, 0x7fff0000u) == 0);
    s = qc_slide_open (path, err, sizeof err);
    CHECK (s && qc_slide_associated_damaged (s, "label", why, sizeof why)
           && !qc_slide_associated_damaged (s, "macro", why, sizeof why),
           "a damaged label of the macro's size: %s", s ? why : err);
    img = s ? qc_slide_read_associated (s, "macro", 1 << 26, err, sizeof err) : NULL;
    CHECK (img && img->w == 1280 && img->h == 431, "the macro beside a label of its size: %s",
           img ? "wrong size" : err);
    qc_rgb_destroy (&img);
    qc_slide_close (&s);

    /* 3. the macro's first strip overwritten with junk (its table is
       sound: no survey sees it): OpenSlide's read fails, and OpenSlide,
       reading the levels after it, still reads them (its handle for
       the levels is not the one that failed) */
    CHECK (copy_file (real, path) == 0);
    FILE *f = fopen (path, "r+b");
    uint8_t junk[2000];
    memset (junk, 0x5a, sizeof junk);
    CHECK (f && strip0 && fseek (f, strip0, SEEK_SET) == 0
           && fwrite (junk, 1, sizeof junk, f) == sizeof junk, "junk written");
    if (f)
        fclose (f);
    s = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE, err, sizeof err);
    CHECK (s && !qc_slide_associated_damaged (s, "macro", why, sizeof why), "junk: %s",
           s ? why : err);
    img = s ? qc_slide_read_associated (s, "macro", 1 << 26, err, sizeof err) : NULL;
    CHECK (!img && strstr (err, "reading the macro image: OpenSlide: "), "junk macro: %s",
           img ? "(read)" : err);
    qc_rgb_destroy (&img);
    memset (got, 0, SIDE * SIDE * 3);
    CHECK (s && read_corner (s, got, err, sizeof err) == 0 && good && got
           && memcmp (good, got, SIDE * SIDE * 3) == 0,
           "OpenSlide's levels after a failed macro read: %s", err);
    qc_slide_close (&s);
    check_pipeline (path, "a junk strip", "saveMacro: the 'macro' image is not saved: "
                    "reading the macro image: OpenSlide: ", NULL, 0);

    free (good);
    free (got);
    unlink (path);
    rmdir (dir);
    return check_done ("test_slide_side");
}
