/* One open slide: a thin layer over OpenSlide that turns its failures into
 * messages a lab can act on and caches what every step asks for.
 *
 * OpenSlide reports trouble two ways, and both are passed on verbatim:
 * openslide_open returning NULL means it does not recognise the file as a
 * slide at all (not a slide, or a format this OpenSlide version does not
 * read); a handle whose openslide_get_error is set carries OpenSlide's own
 * reason (e.g. "Unsupported TIFF compression: 52479"). Once a read fails,
 * OpenSlide keeps the handle in that error state, so every later call on
 * this slide fails with the same reason.
 *
 * A qc_slide_t is used by one thread at a time (one pipeline run). */
#ifndef QC_SLIDE_H
#define QC_SLIDE_H

#include <stddef.h>
#include <stdint.h>

#include <openslide.h>

#include "kernels/slide/tiff_direct.h"

typedef struct qc_slide qc_slide_t;

/* Opens path. On failure returns NULL and writes the reason (without the
 * file name; the caller adds it) into err. */
qc_slide_t *qc_slide_open (const char *path, char *err, size_t errlen);
void qc_slide_close (qc_slide_t **self_p);

const char *qc_slide_path (const qc_slide_t *self);
/* The file name without its folders, as results.tsv's filename column. */
const char *qc_slide_name (const qc_slide_t *self);

/* An OpenSlide property ("openslide.vendor", "aperio.AppMag", ...), or
 * NULL when the slide does not have it. Valid while the slide is open. */
const char *qc_slide_property (const qc_slide_t *self, const char *name);

/* The OpenSlide handle, for readers that call OpenSlide themselves (e.g.
 * reading a level in bands from several threads, which OpenSlide allows
 * on one handle). Owned by the slide: do not close it. */
openslide_t *qc_slide_handle (qc_slide_t *self);

/* The direct TIFF reader of the slide's levels (kernels/slide/tiff_direct.h),
 * opened with the slide; NULL when the slide is not of a kind it reads
 * or QC_DIRECT_READ=0 is set. Owned by the slide. */
const qc_tiff_direct_t *qc_slide_direct (const qc_slide_t *self);
/* Pyramid geometry, read once at open. Level 0 is full resolution. */
int qc_slide_level_count (const qc_slide_t *self);
/* 0 and the size of level, or -1 when level does not exist. */
int qc_slide_level_size (const qc_slide_t *self, int level, int64_t *w,
                         int64_t *h);
/* Downsample factor of level relative to level 0; 0 when it does not
 * exist. */
double qc_slide_level_downsample (const qc_slide_t *self, int level);

/* Reads a w x h region of level whose top-left corner is (x, y) in
 * level-0 coordinates into dest (w * h premultiplied ARGB pixels, as
 * OpenSlide gives them). 0, or -1 with OpenSlide's reason in err. */
int qc_slide_read_region (qc_slide_t *self, uint32_t *dest, int64_t x,
                          int64_t y, int level, int64_t w, int64_t h,
                          char *err, size_t errlen);

/* Reads a small region of the lowest-resolution level: a slide whose
 * metadata opens but whose pixels do not decode fails here, before any
 * step spends time on it. 0, or -1 with OpenSlide's reason in err. */
int qc_slide_check_readable (qc_slide_t *self, char *err, size_t errlen);

/* 1 when level's pixels can be trusted; 0 (err says why) for a level of
 * a generic TIFF that is smaller than one of its tiles: OpenSlide 3.4.1
 * with libtiff 4.5 returns different pixels on every read of such a level
 * (../shared/slides/odd/boxes.tiff's levels 2 and 3; libtiff logs "raster
 * width adapted for reading" for some of them, not all, and OpenSlide's
 * tile cache then hands out the bad tile without a word, so the level's
 * shape is the test, not the warning). */
int qc_slide_level_reliable (qc_slide_t *self, int level, char *err,
                             size_t errlen);

#endif
