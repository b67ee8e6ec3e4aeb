/* See slide_why.h. */
#include "kernels/slide/slide_why.h"
#include "kernels/slide/slide.h"
#include "kernels/slide/ome_xml.h"
#include "kernels/slide/tiff_meta.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openslide.h>
#include <tiffio.h>

#include "shared/err.h"
#include "shared/fds.h"
#include "shared/result.h"

/* Errors of this machine or its share, not of the slide: out of file
 * descriptors or memory (this machine's: another may run the slide now),
 * a network file system that went away. A slide failed by one is marked
 * so that a rerun tries it again. */
#define MACHINE_OR_SHARE "this machine's or its share's trouble, not the slide's"
static const struct {
    int e;
    const char *whose;
} s_passing[] = {
    {EMFILE, "this process " QC_RESULT_NO_FDS ": this machine's trouble, not the slide's"},
    {ENFILE, "this machine " QC_RESULT_NO_FDS ": this machine's trouble, not the slide's"},
    {ENOMEM, QC_RESULT_MEMORY_SHORT ", not the slide's fault"},
    {EAGAIN, MACHINE_OR_SHARE}, {EIO, MACHINE_OR_SHARE}, {ESTALE, MACHINE_OR_SHARE},
    {ENOTCONN, MACHINE_OR_SHARE}, {ETIMEDOUT, MACHINE_OR_SHARE}, {EHOSTDOWN, MACHINE_OR_SHARE},
    /* the cohort was listed with the file there (qc-submit checks each
       slide; a worker's mount may lack it): an unmounted share, a USB
       disk pulled, a folder moved while the cohort ran. Not the slide's
       fault, and another worker, or a rerun once it is back, reads it */
    {ENOENT, "the file is not there now: moved since the cohort was listed, or its "
             "filesystem not mounted on this machine"},
};

int
qc_slide_fail_open (int e, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof s_passing / sizeof s_passing[0]; i++)
        if (e == s_passing[i].e)
            return qc_fail (err, errlen, "cannot open file: %s (%s%s", strerror (e),
                            s_passing[i].whose, QC_RESULT_RETRY_MARK);
    return qc_fail (err, errlen, "cannot open file: %s", strerror (e));
}

/* Whether this process is (nearly) out of file descriptors now:
 * OpenSlide then fails a good slide with a reason of its own ("Cannot
 * set TIFF directory 0", or no slide at all), which would read as a
 * damaged file. Nearly: by the time its failure is judged, another
 * slot may have closed a slide and freed one, so fewer left than a slide
 * holds counts too (a damaged slide judged so under such a limit is
 * only tried again by a rerun). */
bool
qc_slide_out_of_descriptors (void)
{
    long unused = qc_fds_unused ();
    if (unused >= 0)
        return unused < QC_SLIDE_FDS;
    int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        close (fd);
        return false;
    }
    return errno == EMFILE || errno == ENFILE;
}

int
qc_slide_fail_openslide (const char *what, const char *oe, char *err, size_t errlen)
{
    if (qc_slide_out_of_descriptors ())
        return qc_fail (err, errlen, "%s: %s (this process " QC_RESULT_NO_FDS ": this "
                        "machine's trouble, not the slide's%s", what ? what : "OpenSlide",
                        oe ? oe : "?", QC_RESULT_RETRY_MARK);
    if (qc_memory_short ())
        return qc_fail (err, errlen, "%s: %s (" QC_RESULT_MEMORY_SHORT ", not the slide's "
                        "fault%s", what ? what : "OpenSlide", oe ? oe : "?",
                        QC_RESULT_RETRY_MARK);
    return qc_fail (err, errlen, "%s: %s", what ? what : "OpenSlide", oe ? oe : "?");
}

bool
qc_slide_file_gone (const char *path, char *why, size_t whylen)
{
    struct stat st;
    if (!path || stat (path, &st) == 0)
        return false;
    int e = errno;
    for (size_t i = 0; i < sizeof s_passing / sizeof s_passing[0]; i++)
        if (e == s_passing[i].e) {
            qc_fail (why, whylen, "the file cannot be reached now: %s (%s%s", strerror (e),
                     s_passing[i].whose, QC_RESULT_RETRY_MARK);
            return true;
        }
    return false;
}

const char *
qc_slide_gone_note (const char *path, const char *said, char *note, size_t len)
{
    if (!note || len < 3)
        return "";
    note[0] = '\0';
    if ((!said || !strstr (said, QC_RESULT_RETRY_MARK))
        && qc_slide_file_gone (path, note + 2, len - 2))
        memcpy (note, "; ", 2);
    return note;
}

/* openslide_open also returns NULL for a file that is missing or is a
 * folder; those get the system's reason instead of "not a slide". */
int
qc_slide_check_file (const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat (path, &st) != 0)
        return qc_slide_fail_open (errno, err, errlen);
    if (!S_ISREG (st.st_mode)) {
        qc_set_err (err, errlen, "not a regular file");
        return -1;
    }
    if (st.st_size == 0) {
        /* a copy that never happened, or a disk that filled up */
        qc_set_err (err, errlen, "the file is empty (0 bytes)");
        return -1;
    }
    FILE *f = fopen (path, "rb");
    if (!f)
        return qc_slide_fail_open (errno, err, errlen);
    fclose (f);
    return 0;
}

/* What a TIFF's directories say about why OpenSlide refused it: read
 * by libtiff with its messages kept, not printed. */
typedef struct {
    char error[160];          /* libtiff's first error, "" when none */
    int dirs;                 /* directories read */
    uint64_t reach;           /* the furthest byte a tile or strip names */
    int reach_dir;
    bool first_tiled;
    bool first_ome;             /* its description is OME-XML */
    uint32_t first_w, first_h;
    /* damage OpenSlide reads into a crash or for minutes (a tester's
       review: a tile's byte count of 2^62 made GLib abort the process; a
       table of tiles cut short left OpenSlide drawing the missing ones
       from each other at full CPU): the first image of each kind, -1 none */
    uint64_t size;            /* the file's (0: not known) */
    struct image_at {
        int dir;              /* -1: none */
        uint32_t w, h;
    } over,                   /* a tile or strip past the file's end */
      short_table,            /* an offset table shorter than the image */
      empty;                  /* a tiled image none of whose tiles has bytes */
    uint64_t over_at, over_len;
    uint32_t empty_n;
    struct image_at huge;     /* a tiled image in tiles no scanner writes */
    uint32_t huge_tw, huge_th;
    char loop[160];           /* libtiff's words on directories that loop */
    qc_side_damaged_t side;   /* such damage in a tiled slide's side images */
} tiff_survey_t;

/* libtiff's words that a directory points back to an earlier one (an
 * error or a warning, as its version has it), kept in sv->loop. */
static void
note_loop (tiff_survey_t *sv, const char *text)
{
    if (!sv->loop[0] && strstr (text, "looping"))
        snprintf (sv->loop, sizeof sv->loop, "%s", text);
}

static int
keep_error (TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void) tif, (void) module;
    tiff_survey_t *sv = user;
    char text[160];
    vsnprintf (text, sizeof text, fmt, ap);
    note_loop (sv, text);
    if (!sv->error[0])
        snprintf (sv->error, sizeof sv->error, "%s", text);
    return 1;
}

/* libtiff's words on a file that is only looked into here: not the
 * user's business (a damaged file fails where its pixels are read, or
 * its reason is kept: keep_error). */
static int
quiet (TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void) tif, (void) user, (void) module, (void) fmt, (void) ap;
    return 1;
}

/* libtiff's warning that an image's table of tiles or strips, their
 * offsets or their byte counts, does not hold as many as its size needs
 * (it then ignores the table: every tile "missing"; OpenSlide refused
 * short byte counts with "Cannot hash TIFF tiles"): noted against the
 * image being read. */
static int
note_short_table (TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void) tif, (void) module;
    tiff_survey_t *sv = user;
    char text[160];
    vsnprintf (text, sizeof text, fmt, ap);
    note_loop (sv, text);
    if (sv->short_table.dir < 0 && strstr (text, "Incorrect count for")
        && (strstr (text, "Offsets") || strstr (text, "ByteCounts")))
        sv->short_table.dir = sv->dirs;
    return 1;
}

/* The most pixels a tile may have: 16384 x 16384, 1 GB of OpenSlide's
 * 4 bytes a pixel. Scanners write tiles of 240 to 4096 pixels a side;
 * a TileWidth of 2^20 made OpenSlide ask GLib for 4 TB, which ends the
 * process (a tester's damaged file crashed the worker three times). */
#define TILE_PIXELS_MAX ((uint64_t) 16384 * 16384)

/* path opened by libtiff in mode, its errors to on_error and its
 * warnings to on_warning (each with user); NULL when it does not open. */
static TIFF *
open_quietly (const char *path, const char *mode, TIFFErrorHandlerExtR on_error,
              TIFFErrorHandlerExtR on_warning, void *user)
{
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();
    if (!opts)
        return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR (opts, on_error, user);
    TIFFOpenOptionsSetWarningHandlerExtR (opts, on_warning, user);
    TIFF *tif = TIFFOpenExt (path, mode, opts);
    TIFFOpenOptionsFree (opts);
    return tif;
}

/* Walks path's directories (at most 64, a slide has a handful) and the
 * offsets of their tiles or strips (at most 8 M in all). false
 * when libtiff cannot open it at all. */
static bool
survey_tiff (const char *path, uint64_t size, tiff_survey_t *sv)
{
    *sv = (tiff_survey_t) {.size = size, .over.dir = -1, .short_table.dir = -1,
                           .empty.dir = -1, .huge.dir = -1};
    TIFF *tif = open_quietly (path, "r", keep_error, note_short_table, sv);
    if (!tif)
        return false;
    /* tiles looked at in all: a real slide has a few hundred thousand;
       a hostile file's claims are cut here (it is refused either way) */
    uint64_t looked = 0;
    do {
        bool tiled = TIFFIsTiled (tif);
        uint32_t n = tiled ? TIFFNumberOfTiles (tif) : TIFFNumberOfStrips (tif), with = 0;
        uint32_t w = 0, h = 0, over_i = 0, tw = 0, th = 0;
        TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w);
        TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h);
        if (tiled && sv->huge.dir < 0 && TIFFGetField (tif, TIFFTAG_TILEWIDTH, &tw)
            && TIFFGetField (tif, TIFFTAG_TILELENGTH, &th)
            && (uint64_t) tw * th > TILE_PIXELS_MAX) {
            sv->huge = (struct image_at) {sv->dirs, w, h};
            sv->huge_tw = tw;
            sv->huge_th = th;
        }
        uint64_t over_at = 0, over_len = 0;     /* this image's first, 0: none */
        for (uint32_t i = 0; i < n && looked < (8u << 20); i++, looked++) {
            int bad = 0;
            uint64_t at = TIFFGetStrileOffsetWithErr (tif, i, &bad);
            uint64_t len = bad ? 0 : TIFFGetStrileByteCountWithErr (tif, i, &bad);
            with += !bad && len > 0;
            if (!bad && at && len && at + len > sv->reach && at + len >= at) {
                sv->reach = at + len;
                sv->reach_dir = sv->dirs;
            }
            if (!bad && len && size && !over_len && (len > size || at > size - len)) {
                over_at = at;
                over_len = len;
                over_i = i;
            }
        }
        bool short_table = sv->short_table.dir == sv->dirs;    /* said while it was read */
        /* a tiled slide's thumbnail, label or macro: OpenSlide opens the
           slide without reading it (a lab's slide with a damaged label
           is still QC'd) */
        bool side = sv->dirs > 0 && sv->first_tiled && !tiled;
        if (side && (over_len || short_table)) {
            if (short_table)
                sv->short_table.dir = -1;       /* the levels' own is still looked for */
            if (sv->side.n < QC_SIDE_DAMAGED_MAX) {
                struct qc_side_damaged *d = &sv->side.img[sv->side.n++];
                *d = (struct qc_side_damaged) {.dir = sv->dirs, .w = w, .h = h};
                const char *desc = NULL, *at;
                size_t at_len;
                TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &desc);
                if (qc_tiff_meta_aperio_name (sv->dirs, desc, &at, &at_len) == 0)
                    snprintf (d->aperio_name, sizeof d->aperio_name, "%.*s", (int) at_len,
                              at);
                if (short_table)
                    snprintf (d->why, sizeof d->why, "its table of strips holds fewer "
                              "entries than an image of its size has strips");
                else if (over_len > size)
                    snprintf (d->why, sizeof d->why, "its strip %u of %llu bytes is more "
                              "than the whole file (%llu bytes)", (unsigned) over_i,
                              (unsigned long long) over_len, (unsigned long long) size);
                else
                    snprintf (d->why, sizeof d->why, "its strip %u of %llu bytes lies at "
                              "byte %llu, past the file's end (%llu bytes)", (unsigned) over_i,
                              (unsigned long long) over_len, (unsigned long long) over_at,
                              (unsigned long long) size);
            }
        } else {
            if (over_len && sv->over.dir < 0) {
                sv->over = (struct image_at) {sv->dirs, w, h};
                sv->over_at = over_at;
                sv->over_len = over_len;
            }
            if (short_table)
                sv->short_table = (struct image_at) {sv->dirs, w, h};
        }
        if (tiled && n && !with && sv->empty.dir < 0 && looked < (8u << 20)) {
            sv->empty = (struct image_at) {sv->dirs, w, h};
            sv->empty_n = n;
        }
        if (sv->dirs == 0) {
            sv->first_tiled = TIFFIsTiled (tif);
            const char *desc = NULL;
            sv->first_ome = TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &desc)
                            && qc_ome_is_xml (desc);
            TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &sv->first_w);
            TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &sv->first_h);
        }
        sv->dirs++;
    } while (sv->dirs < 64 && TIFFReadDirectory (tif));
    TIFFClose (tif);
    return true;
}

/* Files OpenSlide does not read, known by their first bytes, and what a
 * lab does with each: formats of scanners it has no reader for (DICOM,
 * Zeiss CZI, Philips iSyntax), a picture that is not a slide, a packed
 * file, a document. Each is said as "the file is WHAT: THEN", THEN
 * after "OpenSlide <version> " where it is about OpenSlide, and
 * PICTURE_THEN where it is NULL. Before, all of them were "not a slide,
 * or a format it cannot read". */
#define ANYWHERE SIZE_MAX      /* format_mark_t.at: anywhere in the first bytes */
typedef struct {
    size_t at;                  /* where the mark starts in the file, or ANYWHERE */
    const char *mark;
    size_t len;
    const char *what, *then;
    bool of_openslide;          /* THEN follows "OpenSlide <version> " */
} format_mark_t;

static const format_mark_t s_format_marks[] = {
    { 128, "DICM", 4, "DICOM",
      "reads no DICOM slide (OpenSlide 4 does). Convert the slide (its DICOM "
      "files, one a level, in one folder) to a tiled, pyramidal OME-TIFF, which is "
      "read here, e.g. with Bio-Formats 7 or later, keeping its levels: bfconvert "
      "-noflat -tilex 512 -tiley 512 -compression JPEG ONE_OF_THEM.dcm SLIDE.ome.tif",
      true },
    { 0, "ZISRAWFILE", 10, "a Zeiss CZI",
      "does not read CZI. Convert each scene to a tiled, pyramidal "
      "OME-TIFF, which is read here: bfconvert -noflat -series N -tilex 512 -tiley 512 "
      "-pyramid-scale 2 -pyramid-resolutions 5 -compression JPEG FILE.czi SCENE.ome.tif",
      true },
    /* after <?xml ...?>: Philips' header, then its wavelet data */
    { ANYWHERE, "<DataObject ObjectType=\"DPUfsImport\"", 36, "a Philips iSyntax slide",
      "does not read iSyntax. Convert it to a tiled, pyramidal "
      "OME-TIFF, which is read here (Glencoe's isyntax2raw, which needs Philips' "
      "PixelEngine SDK, then raw2ometiff)", true },
    { 0, "\0\0\0\x0cjP  \r\n\x87\n", 12, "a JPEG 2000 picture", NULL, false },
    { 0, "\xff\x4f\xff\x51", 4, "a JPEG 2000 codestream", NULL, false },
    { 0, "\xff\xd8\xff", 3, "a JPEG picture", NULL, false },
    { 0, "\x89PNG\r\n\x1a\n", 8, "a PNG picture", NULL, false },
    { 0, "PK\x03\x04", 4, "a ZIP archive",
      "unpack it (a slide packed for sending?) and QC what it holds", false },
    { 0, "\x1f\x8b", 2, "gzip-compressed",
      "unpack it (gunzip) and QC what it holds", false },
    { 0, "7z\xbc\xaf\x27\x1c", 6, "a 7-Zip archive",
      "unpack it and QC what it holds", false },
    { 0, "%PDF-", 5, "a PDF document", "not an image", false },
};

/* What a picture that is no slide is told: slides are read in tiles, a
 * level at a time, with their scale. */
#define PICTURE_THEN "a picture, not a whole-slide image (tiled levels). To QC it as " \
    "one, write it as a tiled, pyramidal TIFF (vips tiffsave PICTURE SLIDE.tif " \
    "--tile --pyramid --compression jpeg) and give its magnification (base_mag in " \
    "the config)"

/* The bytes h[0..n) hold s[0..k) somewhere. */
static bool
bytes_hold (const unsigned char *h, size_t n, const char *s, size_t k)
{
    for (size_t i = 0; k && i + k <= n; i++)
        if (memcmp (h + i, s, k) == 0)
            return true;
    return false;
}

static unsigned tiff_kind (const unsigned char *h, size_t n, bool *be);

/* The mark among s_format_marks that h (n bytes of the file's start)
 * bears, or NULL. Never for a TIFF: a Philips TIFF's description holds
 * iSyntax's header, and a TIFF OpenSlide refused has its own reasons
 * (cut short, not tiled: qc_slide_fail_unrecognised). A mark found
 * ANYWHERE is in XML text: the file starts "<?xml". */
static const format_mark_t *
format_mark (const unsigned char *h, size_t n)
{
    bool be;
    if (tiff_kind (h, n, &be))
        return NULL;
    bool xml = n >= 5 && memcmp (h, "<?xml", 5) == 0;
    for (size_t i = 0; i < sizeof s_format_marks / sizeof *s_format_marks; i++) {
        const format_mark_t *m = &s_format_marks[i];
        if (m->at == ANYWHERE ? xml && bytes_hold (h, n, m->mark, m->len)
            : m->at + m->len <= n && memcmp (h + m->at, m->mark, m->len) == 0)
            return m;
    }
    return NULL;
}

/* VL Whole Slide Microscopy Image Storage, DICOM's class of a slide's
 * levels (PS3.4 B.5) */
#define DICOM_WSI_CLASS "1.2.840.10008.5.1.4.1.1.77.1.6"

/* What a file that is text says it is ("an HTML page", "a text
 * file"), from its first bytes (h, n of them); NULL for binary bytes,
 * as every slide's are (a TIFF's header has a 0 in its first 8). */
static const char *
text_kind (const unsigned char *h, size_t n)
{
    if (n < 8)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (h[i] == 0 || (h[i] < 0x20 && h[i] != '\n' && h[i] != '\r' && h[i] != '\t'))
            return NULL;
    size_t at = 0;
    if (n >= 3 && h[0] == 0xef && h[1] == 0xbb && h[2] == 0xbf)
        at = 3;             /* a UTF-8 byte order mark */
    while (at < n && (h[at] == ' ' || h[at] == '\n' || h[at] == '\r' || h[at] == '\t'))
        at++;
    char head[64] = "";
    for (size_t i = 0; i + 1 < sizeof head && at + i < n; i++)
        head[i] = (char) tolower (h[at + i]);
    if (strncmp (head, "<!doctype html", 14) == 0 || strncmp (head, "<html", 5) == 0)
        return "an HTML page";
    if (head[0] == '<')
        return "XML or HTML text";
    if (head[0] == '{' || head[0] == '[')
        return "JSON text (a web service's answer?)";
    return "a text file";
}

/* 1 when a text file is likely a list of slides given where a slide
 * goes: a list's name (.txt, .csv, .lst, .list), or a first line that
 * ends in a slide's extension. */
static int
looks_like_list (const char *path, const unsigned char *h, size_t n)
{
    static const char *const list_ext[] = { ".txt", ".csv", ".lst", ".list" };
    static const char *const slide_ext[] = {
        ".svs", ".ndpi", ".tif", ".tiff", ".mrxs", ".scn", ".vms", ".vmu", ".bif",
        ".dcm", ".svslide", ".qptiff",
    };
    const char *dot = path ? strrchr (path, '.') : NULL;
    for (size_t i = 0; dot && i < sizeof list_ext / sizeof *list_ext; i++)
        if (strcasecmp (dot, list_ext[i]) == 0)
            return 1;
    size_t end = 0;
    while (end < n && h[end] != '\n' && h[end] != '\r' && h[end] != '\t' && h[end] != ',')
        end++;
    while (end > 0 && h[end - 1] == ' ')
        end--;
    for (size_t i = 0; i < sizeof slide_ext / sizeof *slide_ext; i++) {
        size_t k = strlen (slide_ext[i]);
        if (end > k && strncasecmp ((const char *) h + end - k, slide_ext[i], k) == 0)
            return 1;
    }
    return 0;
}

/* A TIFF's header (its first n bytes at h): 42 (classic) or 43
 * (BigTIFF), *be set for a big-endian one ("MM"); 0 for no TIFF. */
static unsigned
tiff_kind (const unsigned char *h, size_t n, bool *be)
{
    *be = n >= 4 && h[0] == 'M' && h[1] == 'M';
    bool le = n >= 4 && h[0] == 'I' && h[1] == 'I';
    unsigned kind = le ? h[2] | h[3] << 8 : *be ? h[2] << 8 | h[3] : 0;
    return kind == 42 || kind == 43 ? kind : 0;
}

/* Why OpenSlide did not recognise path, where the file says more: a
 * format known by its first bytes (s_format_marks), text, a TIFF cut
 * short (a copy that stopped: its first directory, or the data its
 * directories name, past the end), one whose first image is not tiled,
 * or what OpenSlide said of it (said, its own message, or NULL). */
/* What libtiff tells of a TIFF OpenSlide refused (sv, from survey_tiff,
 * which read it when read): it cannot read it, its directories loop, or
 * it stops after some; -1 with why, in the words damaged begins, and
 * OpenSlide's own after them (os; NULL: none). 0 when libtiff reads it
 * whole. One account for a file OpenSlide did not recognise and one it
 * called "Invalid TIFF". */
static int
say_libtiff_damage (const tiff_survey_t *sv, bool read, const char *damaged, const char *os,
                    char *err, size_t errlen)
{
    const char *open = os ? " (OpenSlide: " : "", *shut = os ? ")" : "";
    if (!os)
        os = "";
    if (!read)
        return qc_fail (err, errlen, "%s: libtiff cannot read it as a TIFF: %s%s%s%s",
                        damaged, sv->error[0] ? sv->error : "no reason given", open, os,
                        shut);
    if (sv->loop[0])
        return qc_fail (err, errlen, "the file is damaged: its directories loop, one "
                        "pointing back to an earlier one (libtiff: %s%s%s)", sv->loop,
                        *open ? "; OpenSlide: " : "", os);
    if (sv->error[0])
        return qc_fail (err, errlen, "%s: libtiff reads %d of its images, then stops: %s%s%s%s",
                        damaged, sv->dirs, sv->error, open, os, shut);
    return 0;
}

int
qc_slide_fail_unrecognised (const char *path, const char *said, char *err, size_t errlen)
{
    unsigned char h[1024] = {0};
    struct stat st;
    FILE *f = fopen (path, "rb");
    size_t got = f ? fread (h, 1, sizeof h, f) : 0;
    if (f)
        fclose (f);
    const format_mark_t *mark = format_mark (h, got);
    if (mark && strcmp (mark->what, "DICOM") == 0 && !bytes_hold (h, got, DICOM_WSI_CLASS, strlen (DICOM_WSI_CLASS)))
        return qc_fail (err, errlen, "the file is DICOM, but not a whole-slide image (its "
                        "class is not VL Whole Slide Microscopy, %s): not a slide",
                        DICOM_WSI_CLASS);
    if (mark)
        return qc_fail (err, errlen, "the file is %s: %s%s%s%s",
                        strcmp (mark->what, "DICOM") == 0 ? "a DICOM whole-slide image"
                        : mark->what, mark->of_openslide ? "OpenSlide " : "",
                        mark->of_openslide ? openslide_get_version () : "",
                        mark->of_openslide ? " " : "", mark->then ? mark->then : PICTURE_THEN);
    const char *text = text_kind (h, got);
    if (text)
        return qc_fail (err, errlen, "the file is %s, not an image%s", text,
                        strstr (text, "HTML") ? ": a web server's page in the slide's place "
                        "(by URL: a folder's listing, or an error or login page? Give each "
                        "slide's own address, one a line in --list FILE, and check that "
                        "its server needs no login)"
                        : strcmp (text, "a text file") == 0 && looks_like_list (path, h, got)
                        ? " (a list of slides? qc-submit reads one given as --list FILE, "
                          "or as a .tsv)" : "");
    size_t n = got < 16 ? got : 16;
    bool be;
    unsigned kind = tiff_kind (h, got, &be);
    bool le = kind && !be;
    const char *version = openslide_get_version ();
    if (n == 16 && (kind == 42 || kind == 43) && stat (path, &st) == 0) {
        /* the first directory's offset: 4 bytes at 4, or BigTIFF's 8 at 8 */
        uint64_t at = 0;
        int len = kind == 42 ? 4 : 8, from = kind == 42 ? 4 : 8;
        for (int i = 0; i < len; i++)
            at |= (uint64_t) h[from + (le ? i : len - 1 - i)] << (8 * i);
        uint64_t size = (uint64_t) st.st_size;
        if (at >= size)
            return qc_fail (err, errlen, "the file is cut short (a copy that stopped?): "
                            "it is a TIFF whose first directory lies at byte %llu, past "
                            "its end (%llu bytes)", (unsigned long long) at,
                            (unsigned long long) size);
        tiff_survey_t sv;
        bool read = survey_tiff (path, 0, &sv);
        if (read && sv.reach > size)
            return qc_fail (err, errlen, "the file is cut short (a copy that stopped?): "
                            "its image %d names data up to byte %llu, past its end "
                            "(%llu bytes)", sv.reach_dir, (unsigned long long) sv.reach,
                            (unsigned long long) size);
        if (say_libtiff_damage (&sv, read, "the file is cut short or damaged (a copy "
                                "that stopped?)", NULL, err, errlen))
            return -1;
        if (!sv.first_tiled && sv.first_ome) {
            qc_tiff_meta_ome_strips_why (sv.first_w, sv.first_h, err, errlen);
            return -1;
        }
        if (!sv.first_tiled)
            return qc_fail (err, errlen, "OpenSlide %s does not read this TIFF as a "
                            "slide: its first image (%u x %u) is not tiled. A slide's "
                            "first image is its full-resolution level, in tiles; a "
                            "macro or label image goes after the levels (vips "
                            "tiffsave --tile --pyramid, for one, writes such a file)",
                            version, (unsigned) sv.first_w, (unsigned) sv.first_h);
        /* OpenSlide 3.4.1 refused every big-endian slide tried here */
        const char *order = be ? " (it is big-endian, \"MM\": a little-endian copy "
                            "may read)" : "";
        if (said)
            return qc_fail (err, errlen, "OpenSlide %s does not read this TIFF as a "
                            "slide: %s%s", version, said, order);
        return qc_fail (err, errlen, "OpenSlide %s does not read this TIFF as a slide "
                        "(a format it cannot read, or a damaged file)%s", version, order);
    }
    if (said)
        return qc_fail (err, errlen, "OpenSlide %s does not recognise this file as a "
                        "slide: %s", version, said);
    return qc_fail (err, errlen, "OpenSlide %s does not recognise this file as a "
                    "slide (not a slide, or a format it cannot read)", version);
}

/* Whether path starts as a TIFF (classic or BigTIFF, either order). */
static bool
starts_as_tiff (const char *path)
{
    unsigned char h[4] = {0};
    FILE *f = path ? fopen (path, "rb") : NULL;
    size_t got = f ? fread (h, 1, sizeof h, f) : 0;
    if (f)
        fclose (f);
    bool be;
    return tiff_kind (h, got, &be) != 0;
}

int
qc_slide_check_tiff (const char *path, qc_side_damaged_t *side, char *err, size_t errlen)
{
    if (side)
        side->n = 0;
    struct stat st;
    tiff_survey_t sv;
    if (!starts_as_tiff (path) || stat (path, &st) != 0 || st.st_size <= 0
        || !survey_tiff (path, (uint64_t) st.st_size, &sv))
        return 0;               /* OpenSlide's to read, or to refuse */
    if (sv.over.dir >= 0 && sv.over_len > sv.size)
        return qc_fail (err, errlen, "the file is damaged: its image %d (%u x %u) names a "
                        "tile or strip of %llu bytes, more than the whole file (%llu bytes)",
                        sv.over.dir, sv.over.w, sv.over.h, (unsigned long long) sv.over_len,
                        (unsigned long long) sv.size);
    if (sv.over.dir >= 0 && sv.over_at > UINT64_MAX - sv.over_len)   /* no end to name */
        return qc_fail (err, errlen, "the file is damaged: its image %d (%u x %u) names "
                        "data at byte %llu, past its end (%llu bytes)", sv.over.dir,
                        sv.over.w, sv.over.h, (unsigned long long) sv.over_at,
                        (unsigned long long) sv.size);
    if (sv.over.dir >= 0)
        return qc_fail (err, errlen, "the file is cut short or damaged (a copy that "
                        "stopped?): its image %d (%u x %u) names data at bytes %llu to "
                        "%llu, past its end (%llu bytes)", sv.over.dir, sv.over.w, sv.over.h,
                        (unsigned long long) sv.over_at,
                        (unsigned long long) (sv.over_at + sv.over_len),
                        (unsigned long long) sv.size);
    if (sv.huge.dir >= 0)
        return qc_fail (err, errlen, "the file is damaged: its image %d (%u x %u) is in "
                        "tiles of %u x %u pixels, %.0f GB each at 4 bytes a pixel (scanners "
                        "write tiles of 240 to 4096 pixels a side): more than a reader can "
                        "hold for one tile", sv.huge.dir, sv.huge.w, sv.huge.h, sv.huge_tw,
                        sv.huge_th, 4.0 * sv.huge_tw * sv.huge_th / 1e9);
    if (sv.short_table.dir >= 0)
        return qc_fail (err, errlen, "the file is damaged: the table of tiles or strips of "
                        "its image %d (%u x %u) holds fewer entries than an image of that "
                        "size has tiles (a size or a table written wrong)",
                        sv.short_table.dir, sv.short_table.w, sv.short_table.h);
    if (sv.empty.dir >= 0)
        return qc_fail (err, errlen, "the file holds no pixels there: none of the %u tiles "
                        "of its image %d (%u x %u) has any bytes (a conversion or copy that "
                        "did not write them?)", sv.empty_n, sv.empty.dir, sv.empty.w,
                        sv.empty.h);
    if (side)
        *side = sv.side;
    return 0;
}

int
qc_slide_fail_tiff_damaged (const char *path, const char *said, char *err, size_t errlen)
{
    tiff_survey_t sv;
    if (!starts_as_tiff (path))
        return 0;
    bool read = survey_tiff (path, 0, &sv);
    return say_libtiff_damage (&sv, read, "the file is damaged", said ? said : "?", err,
                               errlen);
}

unsigned
qc_slide_tiff_level_compression (const char *path, int64_t w, int64_t h)
{
    if (!path || w < 1 || h < 1)
        return 0;
    TIFF *tif = open_quietly (path, "rO", quiet, quiet, NULL);   /* O: no offset tables */
    if (!tif)
        return 0;
    unsigned found = 0;
    int dirs = 0;       /* slides have a handful; this bounds a damaged one */
    do {
        uint32_t dw = 0, dh = 0;
        uint16_t comp = 0;
        if (TIFFIsTiled (tif) && TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &dw)
            && TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &dh) && dw == w && dh == h
            && TIFFGetFieldDefaulted (tif, TIFFTAG_COMPRESSION, &comp))
            found = comp;
    } while (!found && ++dirs < 256 && TIFFReadDirectory (tif));
    TIFFClose (tif);
    return found;
}
