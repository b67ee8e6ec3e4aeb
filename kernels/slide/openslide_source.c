/* OpenSlide as one of a slide's readers (source.h): the last in the
 * order, the one that reads any region of any slide that opened. Its
 * pixels are premultiplied ARGB, composited here over the slide's
 * background (qc_cpu_argb_over_row, pixel_math.h's qc_px_argb_over), as
 * openslide-python does for HistoQC. */
#include "kernels/slide/source.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "shared/err.h"

typedef struct {
    const qc_slide_t *slide;
    openslide_t *osr;           /* the slide's; not closed here */
} os_reader_t;

static void *
os_open (const qc_slide_t *slide, int *failed, char *why, size_t whylen)
{
    (void) failed;
    openslide_t *osr = qc_slide_openslide (slide);
    os_reader_t *self = osr ? calloc (1, sizeof *self) : NULL;
    if (!self) {
        qc_set_err (why, whylen, osr ? "out of memory" : "no OpenSlide handle");
        return NULL;
    }
    self->slide = slide;
    self->osr = osr;
    return self;
}

static void
os_close (void *reader)
{
    free (reader);
}

static int
os_can_read (const void *reader, const qc_slide_rect_t *rect)
{
    return 1;
}

/* One openslide_read_region of the rows asked for. Row r of the region
 * is OpenSlide's level-0 y0 + round (r * downsample): where the
 * downsample is not whole, a read that does not start at row 0 lands
 * between the level's pixels and OpenSlide interpolates (the band
 * reader accepts that shift; a whole-region read has none). */
static int
os_read_rows (void *reader, const qc_slide_rect_t *rect, int row, int nrows,
              const uint8_t bg[3], uint8_t *rgb, size_t stride, char *why,
              size_t whylen)
{
    const os_reader_t *self = reader;
    uint32_t *argb = malloc ((size_t) rect->w * (size_t) nrows * sizeof *argb);
    if (!argb)
        return qc_fail (why, whylen, "out of memory for level %d (%lld x "
                        "%lld)", rect->level, (long long) rect->w,
                        (long long) nrows);
    double ds = qc_slide_level_downsample (self->slide, rect->level);
    openslide_read_region (self->osr, argb, rect->x0,
                           rect->y0 + llround ((double) row * ds),
                           rect->level, rect->w, nrows);
    const char *oe = openslide_get_error (self->osr);
    if (oe) {
        free (argb);
        return qc_slide_fail_openslide ("OpenSlide", oe, why, whylen);
    }
    for (int r = 0; r < nrows; r++)
        qc_cpu_argb_over_row (argb + (size_t) r * (size_t) rect->w,
                              (size_t) rect->w, bg, rgb + (size_t) r * stride);
    free (argb);
    return 0;
}

/* The whole region, in one read. */
static void
os_piece (const void *reader, const qc_slide_rect_t *rect, int y, int *first,
          int *count)
{
    *first = 0;
    *count = rect->h;
}

const qc_slide_reader_ops_t qc_slide_reader_openslide = {
    .name = "OpenSlide",
    .open = os_open,
    .close = os_close,
    .can_read = os_can_read,
    .read_rows = os_read_rows,
    .piece = os_piece,
};
