/* OpenSlide wrapper; see slide.h. */
#include "kernels/slide/slide.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <tiffio.h>

#include "kernels/slide/tiff_direct.h"
#include "shared/log.h"
#include "shared/err.h"

/* Largest side of the region qc_slide_check_readable decodes: enough to
 * touch at least one tile, small enough to cost nothing. */
#define CHECK_SIDE 64

typedef struct {
    int64_t w, h;
    double downsample;
} level_t;

struct qc_slide {
    openslide_t *osr;
    char *path;
    const char *name;     /* points into path */
    int nlevels;
    level_t *levels;
    qc_tiff_direct_t *direct;   /* NULL: every read through OpenSlide */
};

void
qc_slide_close (qc_slide_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_slide_t *self = *self_p;
    qc_tiff_direct_close (&self->direct);
    if (self->osr)
        openslide_close (self->osr);
    free (self->levels);
    free (self->path);
    free (self);
    *self_p = NULL;
}

/* openslide_open also returns NULL for a file that is missing or is a
 * folder; those get the system's reason instead of "not a slide". */
static int
check_file (const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat (path, &st) != 0) {
        qc_set_err (err, errlen, "cannot open file: %s", strerror (errno));
        return -1;
    }
    if (!S_ISREG (st.st_mode)) {
        qc_set_err (err, errlen, "not a regular file");
        return -1;
    }
    FILE *f = fopen (path, "rb");
    if (!f) {
        qc_set_err (err, errlen, "cannot open file: %s", strerror (errno));
        return -1;
    }
    fclose (f);
    return 0;
}

static int
read_levels (qc_slide_t *self, char *err, size_t errlen)
{
    int32_t n = openslide_get_level_count (self->osr);
    const char *oe = openslide_get_error (self->osr);
    if (oe || n < 1) {
        qc_set_err (err, errlen, "OpenSlide could not read the slide's levels: %s",
                 oe ? oe : "no levels");
        return -1;
    }
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

/* libtiff (inside OpenSlide) prints its warnings straight to stderr,
 * which breaks qc-submit's progress bar and says nothing a user can act
 * on: they go to our log at debug level instead. Errors still reach us
 * through OpenSlide's own error. */
static void
tiff_warning (const char *module, const char *fmt, va_list ap)
{
    char text[1024];
    vsnprintf (text, sizeof text, fmt, ap);
    qc_log (QC_LOG_DEBUG, "libtiff", "%s: %s", module ? module : "", text);
}

int
qc_slide_level_reliable (qc_slide_t *self, int level, char *err, size_t errlen)
{
    if (!self || level < 0 || level >= self->nlevels) {
        qc_set_err (err, errlen, "no level %d", level);
        return 0;
    }
    const char *vendor = openslide_get_property_value (self->osr,
                                                       "openslide.vendor");
    if (!vendor || strcmp (vendor, "generic-tiff") != 0)
        return 1;
    char name[64];
    snprintf (name, sizeof name, "openslide.level[%d].tile-width", level);
    const char *tw = openslide_get_property_value (self->osr, name);
    snprintf (name, sizeof name, "openslide.level[%d].tile-height", level);
    const char *th = openslide_get_property_value (self->osr, name);
    long long tile_w = tw ? atoll (tw) : 0, tile_h = th ? atoll (th) : 0;
    const level_t *l = &self->levels[level];
    if ((tile_w > 0 && l->w < tile_w) || (tile_h > 0 && l->h < tile_h)) {
        qc_set_err (err, errlen, "level %d (%lld x %lld) is smaller than one "
                    "of its %lld x %lld TIFF tiles, and OpenSlide %s decodes "
                    "such a level of a generic TIFF wrongly (its pixels differ "
                    "from read to read): read another level (image_work_size)",
                    level, (long long) l->w, (long long) l->h, tile_w, tile_h,
                    openslide_get_version ());
        return 0;
    }
    return 1;
}

/* The direct TIFF reader (tiff_direct.h) where the slide allows it and
 * QC_DIRECT_READ is not "0". Its absence only means slower reads. */
static void
open_direct (qc_slide_t *self)
{
    const char *env = getenv ("QC_DIRECT_READ");
    if (env && strcmp (env, "0") == 0)
        return;
    char why[256];
    self->direct = qc_tiff_direct_open (self->path, self->osr, why,
                                        sizeof why);
    if (!self->direct)
        qc_log (QC_LOG_DEBUG, "slide", "%s: levels read through OpenSlide: "
                "%s", self->name, why);
}

static pthread_once_t s_tiff_once = PTHREAD_ONCE_INIT;

static void
quiet_libtiff (void)
{
    TIFFSetWarningHandler (tiff_warning);
}

qc_slide_t *
qc_slide_open (const char *path, char *err, size_t errlen)
{
    pthread_once (&s_tiff_once, quiet_libtiff);
    if (err && errlen)
        err[0] = '\0';
    if (!path || !*path) {
        qc_set_err (err, errlen, "no slide path");
        return NULL;
    }
    if (check_file (path, err, errlen) != 0)
        return NULL;
    qc_slide_t *self = calloc (1, sizeof *self);
    if (!self || !(self->path = strdup (path))) {
        free (self);
        qc_set_err (err, errlen, "out of memory");
        return NULL;
    }
    const char *slash = strrchr (self->path, '/');
    self->name = slash && slash[1] ? slash + 1 : self->path;
    self->osr = openslide_open (path);
    if (!self->osr) {
        qc_set_err (err, errlen, "OpenSlide %s does not recognise this file as a "
                 "slide (not a slide, or a format it cannot read)",
                 openslide_get_version ());
        qc_slide_close (&self);
        return NULL;
    }
    const char *oe = openslide_get_error (self->osr);
    if (oe) {
        qc_set_err (err, errlen, "OpenSlide could not open the slide: %s", oe);
        qc_slide_close (&self);
        return NULL;
    }
    if (read_levels (self, err, errlen) != 0) {
        qc_slide_close (&self);
        return NULL;
    }
    open_direct (self);
    return self;
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
qc_slide_property (const qc_slide_t *self, const char *name)
{
    if (!self || !name)
        return NULL;
    return openslide_get_property_value (self->osr, name);
}

openslide_t *
qc_slide_handle (qc_slide_t *self)
{
    return self ? self->osr : NULL;
}

const qc_tiff_direct_t *
qc_slide_direct (const qc_slide_t *self)
{
    return self ? self->direct : NULL;
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
qc_slide_read_region (qc_slide_t *self, uint32_t *dest, int64_t x, int64_t y,
                      int level, int64_t w, int64_t h, char *err,
                      size_t errlen)
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
        qc_set_err (err, errlen, "OpenSlide could not read the slide's pixels: %s",
                 oe);
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
    uint32_t *buf = malloc ((size_t) (w * h) * sizeof *buf);
    if (!buf) {
        qc_set_err (err, errlen, "out of memory");
        return -1;
    }
    int rc = qc_slide_read_region (self, buf, 0, 0, level, w, h, err, errlen);
    free (buf);
    return rc;
}
