/* One open slide and the choice of its readers; see slide.h (and
 * source.h for the readers' contract). */
#include "kernels/slide/slide.h"
#include "kernels/slide/ome_xml.h"
#include "kernels/slide/slide_why.h"
#include "kernels/slide/slide_int.h"
#include "kernels/slide/openslide_log.h"
#include "kernels/slide/source.h"
#include "kernels/slide/tiff_direct.h"
#include "kernels/slide/tiff_meta.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <tiffio.h>

#include "shared/byte_source_file.h"
#include "shared/log.h"
#include "shared/err.h"
#include "shared/result.h"

/* Largest side of the region qc_slide_check_readable decodes: enough to
 * touch at least one tile, small enough to cost nothing. */
#define CHECK_SIDE 64
/* openslide.level[N].tile-height when OpenSlide gives none. */
#define DEFAULT_TILE_H 256

/* A slide's readers, in the order they are tried: the first that can
 * read a region reads it. OpenSlide is last: it reads anything. */
static const qc_slide_reader_ops_t *const reader_table[] = {
    &qc_slide_reader_tiff,
    &qc_slide_reader_openslide,
};
#define NREADERS (sizeof reader_table / sizeof *reader_table)
_Static_assert (NREADERS == QC_SLIDE_NREADERS, "slide_int.h's count of readers");


void
qc_slide_close (qc_slide_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_slide_t *self = *self_p;
    for (size_t i = self->nreaders; i-- > 0;)
        self->readers[i].ops->close (self->readers[i].state);
    if (self->osr)
        openslide_close (self->osr);
    qc_tiff_meta_free (&self->meta);
    qc_byte_source_close (&self->own_src);
    free (self->levels);
    free (self->path);
    free (self->name);
    free (self);
    *self_p = NULL;
}


static int
read_levels (qc_slide_t *self, char *err, size_t errlen)
{
    int32_t n = openslide_get_level_count (self->osr);
    const char *oe = openslide_get_error (self->osr);
    if (oe || n < 1)
        return qc_slide_fail_openslide ("OpenSlide could not read the slide's levels",
                                        oe ? oe : "no levels", err, errlen);
    self->levels = calloc ((size_t) n, sizeof *self->levels);
    if (!self->levels) {
        qc_set_err (err, errlen, "out of memory");
        return -1;
    }
    for (int32_t i = 0; i < n; i++) {
        level_t *l = &self->levels[i];
        openslide_get_level_dimensions (self->osr, i, &l->w, &l->h);
        l->downsample = openslide_get_level_downsample (self->osr, i);
        if ((oe = openslide_get_error (self->osr)) != NULL || l->w <= 0
            || l->h <= 0 || !(l->downsample > 0)) {
            qc_set_err (err, errlen, "OpenSlide reports an invalid level %d: %s",
                     (int) i, oe ? oe : "empty or unreadable size");
            return -1;
        }
    }
    self->nlevels = n;
    return 0;
}

/* The levels of a slide opened from a byte source, from its TIFF. */
static int
meta_levels (qc_slide_t *self, char *err, size_t errlen)
{
    int n = qc_tiff_meta_level_count (self->meta);
    self->levels = n > 0 ? calloc ((size_t) n, sizeof *self->levels) : NULL;
    if (!self->levels)
        return qc_fail (err, errlen, n > 0 ? "out of memory" : "no levels");
    for (int i = 0; i < n; i++) {
        const qc_tiff_meta_level_t *l = qc_tiff_meta_level (self->meta, i);
        self->levels[i] = (level_t) { l->w, l->h, l->downsample };
    }
    self->nlevels = n;
    return 0;
}

/* libtiff (inside OpenSlide) prints its warnings and errors straight to
 * stderr, which breaks qc-submit's progress bar and names no slide a
 * user could act on: they go to our log at debug level instead. An error
 * still reaches the slide's result through OpenSlide's own error (and
 * our own libtiff reads set handlers per file, tiff_source.c). */
static void
tiff_message (const char *module, const char *fmt, va_list ap)
{
    char text[1024];
    vsnprintf (text, sizeof text, fmt, ap);
    qc_log (QC_LOG_DEBUG, "libtiff", "%s: %s", module ? module : "", text);
}

/* Whether OpenSlide decodes a level of compression comp through its
 * own JPEG or JPEG 2000 decoders: those give the right pixels of a level
 * smaller than a tile; libtiff's RGBA path (LZW, deflate, none, ...)
 * does not. */
static int
openslide_decodes_itself (unsigned comp)
{
    return comp == COMPRESSION_JPEG || comp == 33003 || comp == 33005;
}

int
qc_slide_level_reliable (qc_slide_t *self, int level, char *err, size_t errlen)
{
    if (!self || level < 0 || level >= self->nlevels) {
        qc_set_err (err, errlen, "no level %d", level);
        return 0;
    }
    /* a reader of our own (the direct TIFF reader) reads every level of
     * the slide (the regions read whole start at its origin, where it
     * reads; a tile it finds damaged still goes to OpenSlide); a slide
     * opened from a byte source has no other */
    if (!self->path)
        return 1;
    for (size_t i = 0; i < self->nreaders; i++)
        if (self->readers[i].ops != &qc_slide_reader_openslide)
            return 1;
    char name[64];
    snprintf (name, sizeof name, "openslide.level[%d].tile-width", level);
    const char *tw = qc_slide_property (self, name);
    snprintf (name, sizeof name, "openslide.level[%d].tile-height", level);
    const char *th = qc_slide_property (self, name);
    long long tile_w = tw ? atoll (tw) : 0, tile_h = th ? atoll (th) : 0;
    const level_t *l = &self->levels[level];
    if (!((tile_w > 0 && l->w < tile_w) || (tile_h > 0 && l->h < tile_h)))
        return 1;
    unsigned comp = qc_slide_tiff_level_compression (self->path, l->w, l->h);
    if (comp == 0 || openslide_decodes_itself (comp))
        return 1;
    qc_set_err (err, errlen, "level %d (%lld x %lld) is smaller than one of its "
                "%lld x %lld TIFF tiles, and OpenSlide %s decodes such a level "
                "wrongly when it is not JPEG (TIFF compression %u): its pixels "
                "differ from read to read. Read another level (image_work_size)",
                level, (long long) l->w, (long long) l->h, tile_w, tile_h,
                openslide_get_version (), comp);
    return 0;
}

/* The slide's background colour (openslide.background-color, "RRGGBB"),
 * white when absent or malformed. */
static void
read_background (qc_slide_t *self)
{
    self->bg[0] = self->bg[1] = self->bg[2] = 255;
    const char *s = qc_slide_property (self, "openslide.background-color");
    if (!s || strlen (s) != 6)
        return;
    for (int i = 0; i < 6; i++)
        if (!isxdigit ((unsigned char) s[i]))
            return;
    unsigned long v = strtoul (s, NULL, 16);
    self->bg[0] = (uint8_t) (v >> 16);
    self->bg[1] = (uint8_t) (v >> 8);
    self->bg[2] = (uint8_t) v;
}

/* Opens the readers of reader_table that read this slide. The direct
 * reader is left out for QC_SLIDE_READERS_OPENSLIDE or QC_DIRECT_READ=0;
 * a reader that does not open only means slower reads, but OpenSlide,
 * the last, must. A slide opened from a byte source has only the
 * readers that read sources, and one of them must open (else
 * *declined). 0, or -1 with why. */
static int
open_readers (qc_slide_t *self, qc_slide_readers_t readers, int *declined,
              char *err, size_t errlen)
{
    const char *env = getenv ("QC_DIRECT_READ");
    int openslide_only = !self->src && (readers == QC_SLIDE_READERS_OPENSLIDE
                                        || (env && strcmp (env, "0") == 0));
    size_t used = 0;
    char why[256] = "";
    for (size_t i = 0; i < NREADERS; i++) {
        const qc_slide_reader_ops_t *ops = reader_table[i];
        int last = i + 1 == NREADERS;
        if ((openslide_only && !last) || (self->src && !ops->reads_sources))
            continue;
        int failed = 0;
        void *state = ops->open (self, &failed, why, sizeof why);
        if ((!state && last && !self->src) || failed)
            return qc_fail (err, errlen, "%s", why);
        if (!state) {
            qc_log (QC_LOG_DEBUG, "slide", "%s: no %s reader, levels read "
                    "by the next: %s", self->name, ops->name, why);
            continue;
        }
        self->readers[self->nreaders++] = (reader_t) { ops, state };
        used += (size_t) snprintf (self->readers_text + used,
                                   sizeof self->readers_text - used, "%s%s",
                                   used ? ", " : "", ops->name);
        if (used >= sizeof self->readers_text)
            used = sizeof self->readers_text - 1;
    }
    /* OpenSlide would read one level of an OME-TIFF: by URL too it fails
     * here rather than be downloaded to fail so (tiff_meta.h) */
    const char *vendor = qc_tiff_meta_vendor (self->meta);
    if (self->nreaders == 0 && vendor && strcmp (vendor, "ome-tiff") == 0)
        return qc_fail (err, errlen, "an OME-TIFF whose levels are not read here (%s)",
                        why);
    if (self->nreaders == 0) {
        *declined = 1;
        return qc_fail (err, errlen, "its levels are read by OpenSlide only "
                        "(%s)", why);
    }
    return 0;
}

static pthread_once_t s_tiff_once = PTHREAD_ONCE_INIT;

static void
quiet_libtiff (void)
{
    TIFFSetWarningHandler (tiff_message);
    TIFFSetErrorHandler (tiff_message);
    qc_openslide_log_init ();
}


/* self's file read as a byte source by tiff_meta.h, as one served over
 * HTTP is: 0 with self->meta, and self->own_src as self->src; else
 * qc_tiff_meta_read's answer (QC_TIFF_META_REFUSED, 1 declined, -1
 * failed) with why, and nothing kept. */
static int
read_file_meta (qc_slide_t *self, char *why, size_t whylen)
{
    if (!(self->own_src = qc_byte_source_file_open (self->path, why, whylen)))
        return -1;
    int rc = qc_tiff_meta_read (self->own_src, &self->meta, why, whylen);
    if (rc == 0)
        self->src = self->own_src;
    else
        qc_byte_source_close (&self->own_src);
    return rc;
}

/* A local OME-TIFF: OpenSlide reads it as a generic TIFF of one level,
 * without its resolution or magnification, or refuses it (a classic
 * big-endian one: libtiff reads that byte order), so it is read as one
 * served over HTTP is (its levels and properties from tiff_meta.h, its
 * pixels by the direct reader), over the file; OpenSlide, if it opened
 * the file, is let go. 0 read; -1 refused or failed (err, in the words
 * it gets by URL); 1 not an OME-TIFF read here (err says why; nothing
 * changed). */
static int
open_ome (qc_slide_t *self, char *err, size_t errlen)
{
    char why[512];
    int rc = read_file_meta (self, why, sizeof why);
    if (rc == QC_TIFF_META_REFUSED)
        return qc_fail (err, errlen, "%s", why);
    if (rc == 0 && strcmp (qc_tiff_meta_vendor (self->meta), "ome-tiff") != 0) {
        snprintf (why, sizeof why, "its TIFF reads as %s", qc_tiff_meta_vendor (self->meta));
        qc_tiff_meta_free (&self->meta);
        self->src = NULL;
        qc_byte_source_close (&self->own_src);
        rc = 1;
    }
    if (rc != 0) {
        qc_set_err (err, errlen, "an OME-TIFF that is not read here: %s", why);
        return 1;
    }
    if (self->osr) {
        openslide_close (self->osr);
        self->osr = NULL;
    }
    free (self->levels);
    self->levels = NULL;
    return meta_levels (self, err, errlen);
}

/* The OpenSlide side of opening: the handle, its levels (or an OME-TIFF
 * OpenSlide refuses, open_ome). */
static int
open_openslide (qc_slide_t *self, char *err, size_t errlen)
{
    if (qc_slide_check_file (self->path, err, errlen) != 0
        || qc_slide_check_tiff (self->path, &self->side_damaged, err, errlen) != 0)
        return -1;
    qc_openslide_log_clear ();
    self->osr = openslide_open (self->path);
    const char *oe = self->osr ? openslide_get_error (self->osr) : NULL;
    /* OpenSlide's words hide a lack of descriptors or memory */
    if ((!self->osr || oe) && qc_slide_out_of_descriptors ())
        return qc_slide_fail_open (EMFILE, err, errlen);
    if (!self->osr && qc_memory_short ())
        return qc_slide_fail_open (ENOMEM, err, errlen);
    int rc;
    if (!self->osr && (rc = open_ome (self, err, errlen)) != 1)
        return rc;
    if (!self->osr)
        return qc_slide_fail_unrecognised (self->path, qc_openslide_log_last (), err,
                                           errlen);
    /* libtiff's reason for OpenSlide's bare "Invalid TIFF", unless the
       machine is short (then OpenSlide's words, marked for a rerun) */
    if (oe && !qc_slide_out_of_descriptors () && !qc_memory_short ()
        && qc_slide_fail_tiff_damaged (self->path, oe, err, errlen) != 0)
        return -1;
    if (oe)
        return qc_slide_fail_openslide ("OpenSlide could not open the slide", oe, err,
                                        errlen);
    return read_levels (self, err, errlen);
}

/* Whether OpenSlide opened self's file as a generic TIFF whose
 * description is OME-XML: an OME-TIFF, read here (open_ome). */
static bool
opened_ome (const qc_slide_t *self)
{
    const char *vendor = qc_slide_property (self, "openslide.vendor");
    return vendor && strcmp (vendor, "generic-tiff") == 0
           && qc_ome_is_xml (qc_slide_property (self, "tiff.ImageDescription"));
}

qc_slide_t *
qc_slide_open_input (const qc_slide_input_t *in, qc_slide_readers_t readers,
                     int *declined, char *err, size_t errlen)
{
    pthread_once (&s_tiff_once, quiet_libtiff);
    int ignored;
    if (!declined)
        declined = &ignored;
    *declined = 0;
    if (err && errlen)
        err[0] = '\0';
    if (!in || (in->path && in->src) || (!in->src && (!in->path || !*in->path))) {
        qc_set_err (err, errlen, "no slide path");
        return NULL;
    }
    const char *whole = in->path ? in->path : qc_byte_source_name (in->src);
    const char *slash = strrchr (whole, '/');
    const char *base = in->name && *in->name ? in->name
                       : slash && slash[1] ? slash + 1 : whole;
    qc_slide_t *self = calloc (1, sizeof *self);
    if (!self || !(self->name = strdup (base))
        || (in->path && !(self->path = strdup (in->path)))) {
        qc_slide_close (&self);
        qc_set_err (err, errlen, "out of memory");
        return NULL;
    }
    self->src = in->src;
    int rc;
    if (in->path) {
        rc = open_openslide (self, err, errlen);
        if (rc == 0 && opened_ome (self) && open_ome (self, err, errlen) != 0)
            rc = -1;            /* not read here: not read (one level) by OpenSlide either */
    } else {
        rc = qc_tiff_meta_read (in->src, &self->meta, err, errlen);
        *declined = rc == 1;
        if (rc == 0)
            rc = meta_levels (self, err, errlen);
    }
    if (rc == 0) {
        read_background (self);
        rc = open_readers (self, readers, declined, err, errlen);
    }
    if (rc != 0)
        qc_slide_close (&self);
    return self;
}

qc_slide_t *
qc_slide_open_with (const char *path, qc_slide_readers_t readers, char *err,
                    size_t errlen)
{
    qc_slide_input_t in = { .path = path };
    return qc_slide_open_input (&in, readers, NULL, err, errlen);
}

qc_slide_t *
qc_slide_open (const char *path, char *err, size_t errlen)
{
    return qc_slide_open_with (path, QC_SLIDE_READERS_ALL, err, errlen);
}

const char *
qc_slide_path (const qc_slide_t *self)
{
    return self ? self->path : NULL;
}

const char *
qc_slide_name (const qc_slide_t *self)
{
    return self ? self->name : NULL;
}

const char *
qc_slide_readers (const qc_slide_t *self)
{
    return self ? self->readers_text : NULL;
}

const char *
qc_slide_property (const qc_slide_t *self, const char *name)
{
    if (!self || !name)
        return NULL;
    if (self->meta)
        return qc_tiff_meta_property (self->meta, name);
    return openslide_get_property_value (self->osr, name);
}

const char *
qc_slide_property_name (const qc_slide_t *self, size_t i)
{
    if (!self)
        return NULL;
    if (self->meta)
        return qc_tiff_meta_property_name (self->meta, i);
    const char *const *names = openslide_get_property_names (self->osr);
    for (size_t k = 0; names && names[k]; k++)
        if (k == i)
            return names[k];
    return NULL;
}

const char *
qc_slide_error (const qc_slide_t *self)
{
    return self && self->osr ? openslide_get_error (self->osr) : NULL;
}

openslide_t *
qc_slide_openslide (const qc_slide_t *self)
{
    return self ? self->osr : NULL;
}

qc_byte_source_t *
qc_slide_source (const qc_slide_t *self)
{
    return self ? self->src : NULL;
}

size_t
qc_slide_reader_count (const qc_slide_t *self)
{
    return self ? self->nreaders : 0;
}

const qc_slide_reader_ops_t *
qc_slide_reader_at (const qc_slide_t *self, size_t i, void **state)
{
    if (!self || i >= self->nreaders)
        return NULL;
    if (state)
        *state = self->readers[i].state;
    return self->readers[i].ops;
}

int
qc_slide_level_count (const qc_slide_t *self)
{
    return self ? self->nlevels : 0;
}

int
qc_slide_level_size (const qc_slide_t *self, int level, int64_t *w,
                     int64_t *h)
{
    if (!self || level < 0 || level >= self->nlevels)
        return -1;
    if (w)
        *w = self->levels[level].w;
    if (h)
        *h = self->levels[level].h;
    return 0;
}

double
qc_slide_level_downsample (const qc_slide_t *self, int level)
{
    if (!self || level < 0 || level >= self->nlevels)
        return 0;
    return self->levels[level].downsample;
}

int
qc_slide_level_tiff_dir (const qc_slide_t *self, int level, int *dir, uint64_t *subifd)
{
    const qc_tiff_meta_level_t *l = self && dir && subifd
                                    ? qc_tiff_meta_level (self->meta, level) : NULL;
    if (!l)
        return -1;
    *dir = l->dir;
    *subifd = l->subifd;
    return 0;
}

int
qc_slide_best_level (const qc_slide_t *self, double downsample)
{
    if (!self)
        return -1;
    if (self->osr)
        return openslide_get_best_level_for_downsample (self->osr, downsample);
    /* openslide_get_best_level_for_downsample's rule */
    if (downsample < self->levels[0].downsample)
        return 0;
    for (int i = 1; i < self->nlevels; i++)
        if (downsample < self->levels[i].downsample)
            return i - 1;
    return self->nlevels - 1;
}

int
qc_slide_tile_height (const qc_slide_t *self, int level)
{
    char key[64];
    snprintf (key, sizeof key, "openslide.level[%d].tile-height", level);
    const char *s = qc_slide_property (self, key);
    long v = s ? strtol (s, NULL, 10) : 0;
    return v > 0 && v <= 65536 ? (int) v : DEFAULT_TILE_H;
}

void
qc_slide_background (const qc_slide_t *self, uint8_t bg[3])
{
    if (!bg)
        return;
    if (!self) {
        bg[0] = bg[1] = bg[2] = 255;
        return;
    }
    memcpy (bg, self->bg, 3);
}

static int
rect_ok (const qc_slide_t *self, const qc_slide_rect_t *rect)
{
    return self && rect && rect->level >= 0 && rect->level < self->nlevels
           && rect->w > 0 && rect->h > 0;
}

/* ---- the choice of reader ------------------------------------------- */

/* A read that failed in the last reader tried (OpenSlide's "Cannot read
 * raw tile") after the first one passed it on: the first one's reason
 * is often the precise one ("tile 1 has no data (0 bytes)", which a
 * slide read by URL, with no other reader, gives alone), so both are
 * said, but for a JPEG that does not decode. -1. */
static int
failed_after (char *err, size_t errlen, const char *why, const char *declined)
{
    /* a JPEG that does not decode fails both decoders on the same
       bytes: OpenSlide's words say it, as they do with OpenSlide alone */
    if (!declined[0] || strcmp (why, declined) == 0 || strstr (declined, "JPEGLib"))
        return qc_fail (err, errlen, "%s", why);
    return qc_fail (err, errlen, "%s (the direct TIFF reader passed it on: %s)", why,
                    declined);
}

int
qc_slide_rows_exact (const qc_slide_t *self, const qc_slide_rect_t *rect)
{
    if (!rect_ok (self, rect))
        return 0;
    for (size_t i = 0; i < self->nreaders; i++) {
        const reader_t *r = &self->readers[i];
        if (r->ops != &qc_slide_reader_openslide
            && r->ops->can_read (r->state, rect))
            return 1;
    }
    /* OpenSlide reads row r at level-0 y0 + round (r * downsample): on
     * the level's own pixels when the downsample is whole and rect
     * starts on one of them */
    double ds = self->levels[rect->level].downsample;
    if (!(ds >= 1.0 && ds < 1e9 && ds == floor (ds)))
        return 0;
    int64_t d = (int64_t) ds;
    return rect->x0 % d == 0 && rect->y0 % d == 0;
}

int
qc_slide_read_rows (qc_slide_t *self, const qc_slide_rect_t *rect, int row,
                    int nrows, uint8_t *rgb, size_t stride, char *err,
                    size_t errlen)
{
    if (!rect_ok (self, rect) || row < 0 || nrows < 1 || row > rect->h - nrows
        || !rgb || stride < (size_t) rect->w * 3)
        return qc_fail (err, errlen, "invalid read of rows");
    char why[256] = "", declined[256] = "";
    for (size_t i = 0; i < self->nreaders; i++) {
        const reader_t *r = &self->readers[i];
        if (!r->ops->can_read (r->state, rect))
            continue;
        int rc = r->ops->read_rows (r->state, rect, row, nrows, self->bg, rgb,
                                    stride, why, sizeof why);
        if (rc != QC_SLIDE_NEXT_READER)
            return rc == 0 ? 0 : failed_after (err, errlen, why, declined);
        qc_log (QC_LOG_DEBUG, "slide", "%s: level %d rows %d..%d: read by "
                "the next reader: %s", self->name, rect->level, row,
                row + nrows - 1, why);
        if (!declined[0])
            snprintf (declined, sizeof declined, "%s", why);
    }
    return qc_fail (err, errlen, "no reader reads level %d%s%s", rect->level,
                    why[0] ? ": " : "", why);
}

struct qc_slide_rows {
    qc_slide_t *slide;
    qc_slide_rect_t rect;
    size_t reader;              /* index of the reader in use */
    uint8_t *buf;               /* the piece read last */
    size_t cap;
    int first, count;           /* its rows */
};

qc_slide_rows_t *
qc_slide_rows_open (qc_slide_t *self, const qc_slide_rect_t *rect,
                    char *err, size_t errlen)
{
    if (!rect_ok (self, rect)) {
        qc_set_err (err, errlen, "invalid region");
        return NULL;
    }
    qc_slide_rows_t *rows = calloc (1, sizeof *rows);
    if (!rows) {
        qc_set_err (err, errlen, "out of memory");
        return NULL;
    }
    rows->slide = self;
    rows->rect = *rect;
    return rows;
}

const uint8_t *
qc_slide_rows_get (qc_slide_rows_t *rows, int y, char *err, size_t errlen)
{
    if (!rows || y < 0 || y >= rows->rect.h) {
        qc_set_err (err, errlen, "invalid row");
        return NULL;
    }
    size_t row_bytes = (size_t) rows->rect.w * 3;
    if (y >= rows->first && y < rows->first + rows->count)
        return rows->buf + (size_t) (y - rows->first) * row_bytes;
    const qc_slide_t *self = rows->slide;
    char why[256] = "", declined[256] = "";
    for (; rows->reader < self->nreaders; rows->reader++) {
        const reader_t *r = &self->readers[rows->reader];
        if (!r->ops->can_read (r->state, &rows->rect))
            continue;
        int first, count;
        r->ops->piece (r->state, &rows->rect, y, &first, &count);
        size_t need = (size_t) count * row_bytes;
        if (need > rows->cap) {
            uint8_t *grown = realloc (rows->buf, need);
            if (!grown) {
                qc_set_err (err, errlen, "out of memory for %d rows of %d "
                            "pixels", count, rows->rect.w);
                return NULL;
            }
            rows->buf = grown;
            rows->cap = need;
        }
        rows->count = 0;
        int rc = r->ops->read_rows (r->state, &rows->rect, first, count,
                                    self->bg, rows->buf, row_bytes, why,
                                    sizeof why);
        if (rc == 0) {
            rows->first = first;
            rows->count = count;
            return rows->buf + (size_t) (y - first) * row_bytes;
        }
        if (rc != QC_SLIDE_NEXT_READER) {
            failed_after (err, errlen, why, declined);
            return NULL;
        }
        qc_log (QC_LOG_DEBUG, "slide", "%s: level %d read by the next "
                "reader: %s", self->name, rows->rect.level, why);
        if (!declined[0])
            snprintf (declined, sizeof declined, "%s", why);
    }
    qc_set_err (err, errlen, "no reader reads level %d%s%s", rows->rect.level,
                why[0] ? ": " : "", why);
    return NULL;
}

void
qc_slide_rows_close (qc_slide_rows_t **rows_p)
{
    if (!rows_p || !*rows_p)
        return;
    free ((*rows_p)->buf);
    free (*rows_p);
    *rows_p = NULL;
}

/* ---- OpenSlide's own checks and images ------------------------------ */

/* Reads a w x h region of level at level-0 (x, y) through OpenSlide into
 * dest (premultiplied ARGB). 0, or -1 with OpenSlide's reason in err. */
static int
openslide_region (qc_slide_t *self, uint32_t *dest, int64_t x, int64_t y,
                  int level, int64_t w, int64_t h, char *err, size_t errlen)
{
    if (!self || !dest || level < 0 || level >= self->nlevels || w <= 0
        || h <= 0 || w > INT32_MAX || h > INT32_MAX
        || (uint64_t) w > SIZE_MAX / sizeof *dest / (uint64_t) h) {
        qc_set_err (err, errlen, "invalid region request");
        return -1;
    }
    openslide_read_region (self->osr, dest, x, y, level, w, h);
    const char *oe = openslide_get_error (self->osr);
    if (oe) {
        qc_slide_fail_openslide ("OpenSlide could not read the slide's pixels", oe, err,
                                 errlen);
        return -1;
    }
    return 0;
}

int
qc_slide_check_readable (qc_slide_t *self, char *err, size_t errlen)
{
    if (!self) {
        qc_set_err (err, errlen, "no slide");
        return -1;
    }
    int level = self->nlevels - 1;
    const level_t *l = &self->levels[level];
    int64_t w = l->w < CHECK_SIDE ? l->w : CHECK_SIDE;
    int64_t h = l->h < CHECK_SIDE ? l->h : CHECK_SIDE;
    if (!self->osr) {
        uint8_t rgb[CHECK_SIDE * CHECK_SIDE * 3];
        qc_slide_rect_t rect = { level, 0, 0, (int) w, (int) h };
        return qc_slide_read_rows (self, &rect, 0, (int) h, rgb,
                                   (size_t) w * 3, err, errlen);
    }
    uint32_t *buf = malloc ((size_t) (w * h) * sizeof *buf);
    if (!buf) {
        qc_set_err (err, errlen, "out of memory");
        return -1;
    }
    int rc = openslide_region (self, buf, 0, 0, level, w, h, err, errlen);
    free (buf);
    return rc;
}

int
qc_slide_fetch_level (qc_slide_t *self, int level, const atomic_int *cancel,
                      char *err, size_t errlen)
{
    if (!self || level < 0 || level >= self->nlevels)
        return qc_fail (err, errlen, "no level %d", level);
    if (!self->src || self->own_src)    /* a local file needs no fetching */
        return 0;
    for (size_t i = 0; i < self->nreaders; i++)
        if (self->readers[i].ops == &qc_slide_reader_tiff)
            return qc_tiff_direct_fetch_level (self->readers[i].state, level,
                                               cancel, err, errlen);
    return 0;
}
