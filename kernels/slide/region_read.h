/* Reading a slide's working image: the region a plan names
 * (kernels/slide/work_size.h), resampled to the plan's output size.
 *
 * The slide chooses the reader of every read (kernels/slide/slide.h:
 * the direct TIFF reader where it can, OpenSlide otherwise); this layer
 * decides only how the region is read. A region of up to 2^26 pixels
 * (every 1.25x analysis level of a 40x slide up to ~120,000 pixels wide)
 * is read as one region: in one openslide_read_region where OpenSlide
 * reads it, composited over the slide's background colour, then shrunk.
 * Reading it in bands through OpenSlide was slower (tests/bench/README.md,
 * "Figures behind the code"): where a level's downsample is not an
 * integer, a band starting inside the level lands between pixels, and
 * OpenSlide interpolates through pixman's slow path (and shifts the
 * pixels). Larger regions are read in bands
 * (kernels/slide/band_reader.c) by a few threads, cut at the level's
 * tile rows and area-reduced straight into the output, so memory stays
 * bounded; through OpenSlide those bands start at level-0 y coordinates
 * rounded from the level's, with that fractional shift. A read with
 * more than one thread (a GPU lane's, which its GPU waits for) goes in
 * bands at any size where they give the one read's bytes
 * (qc_slide_rows_exact: the direct reader reads it, or the level's
 * downsample is whole), so every lane and slot reads the same image.
 *
 * Errors come back as messages; nothing aborts. */
#ifndef QC_REGION_READ_H
#define QC_REGION_READ_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"
#include "kernels/slide/slide.h"
#include "kernels/slide/work_size.h"

/* Reads the planned region with nthreads threads (<= 0: 4; at most 16)
 * into a new RGB image of plan->out_w x plan->out_h. 0 and *out set, or
 * -1 with OpenSlide's reason (or an allocation failure) in err. */
int qc_region_read (qc_slide_t *slide, const qc_region_plan_t *plan,
                    int nthreads, qc_rgb_t **out, char *err, size_t errlen);

/* Reads rect (rect->w x rect->h pixels of its level) resampled by area
 * to out_w x out_h. The building block of qc_region_read, for modules
 * that read their own regions. */
int qc_region_read_rect (qc_slide_t *slide, const qc_slide_rect_t *rect,
                         int out_w, int out_h, int nthreads, qc_rgb_t **out,
                         char *err, size_t errlen);

/* Parse, find the magnification (fallback as above), plan and read: the
 * working image for a work size text such as "1.25x", shrunk by area
 * average (area) or as PIL's thumbnail, through the slide's readers.
 * NULL with a message in err on failure. */
qc_rgb_t *qc_region_read_work_size (qc_slide_t *slide, const char *work_size,
                                    double base_mag_fallback, int area,
                                    int nthreads, char *err, size_t errlen);

/* The planned region decoded by ops's device from its JPEG tiles, which
 * the CPU reads compressed (a GPU lane's read: ops.h's decode_jpeg, then
 * ops->resize_rgb by area to the plan's output size: qc_region_read's
 * bytes where the device decodes as libjpeg does, the simulated device's
 * and the CPU's; within the IDCTs' rounding on a GPU). A new image on the
 * calling thread's home (its device, in a lane's steps); NULL with why
 * in err when it cannot be read so (a plan resampled as PIL does, tiles
 * other than JPEG or left out, tiles the device refuses): the caller then
 * reads it with qc_region_read. */
qc_rgb_t *qc_region_decode (qc_slide_t *slide, const qc_region_plan_t *plan,
                            const struct qc_ops *ops, char *err, size_t errlen);

/* The largest region (pixels) read as one region; larger ones are read
 * in bands. 0 restores the default (2^26). For tests, which read small
 * slides and must still cover the band reader. */
void qc_region_set_whole_max (int64_t pixels);

#endif
