/* Reading a slide at HistoQC's working size ("image_work_size").
 *
 * HistoQC (BaseImage.getImgThumb) accepts four kinds of size:
 *   "1.25x"  a magnification: sampling factor base_mag / 1.25
 *   "0.1"    below 1, a downscale factor: sampling factor 1 / 0.1
 *   "2"      1 up to 100, a pyramid level, read whole at its own size
 *   "1000"   100 and more, the longer side in pixels
 * and, without a bounding box (its default), gets the image from
 * openslide-python's get_thumbnail (box, box) with box = the longer side
 * of the target (rint (size / factor) per side): the level is OpenSlide's
 * best level for max (W / box, H / box), read whole, then shrunk by PIL's
 * Image.thumbnail, whose size rule is kept here exactly (the short side
 * is floor or ceil of box * aspect, whichever keeps the level's aspect
 * ratio closer; never upscaled). So CMU-1-Small-Region.svs (2220 x 2967,
 * 20x) at 1.25x is 138 x 185, not rint (2220 / 16) = 139.
 * With a bounding box, the target is rint (bbox / factor) per side exactly,
 * from the level whose downsample is within 1% of the factor, else
 * OpenSlide's best level (largest downsample not above the factor).
 *
 * Without a bounding box the level is read whole and shrunk as PIL's
 * Image.thumbnail does (kernels/slide/pil_resize.c): HistoQC's pixels, bit for
 * bit where OpenSlide decodes the same. With request.area (the project's
 * default config: image_resample = area) or a bounding box, the level is
 * area-averaged instead (kernels/ops/cpu/resize.c): an exact box average.
 *
 * Reading: where the slide's levels are plain tiled TIFF directories
 * (Aperio and generic TIFF with JPEG, LZW, deflate or no compression),
 * qc_region_read and qc_region_read_rect take the tiles straight from the
 * file (kernels/slide/tiff_direct.h: the same pixels, 4x faster than OpenSlide,
 * which spends most of a read compositing tiles). Otherwise, or where
 * a region starts between a level's pixels, through OpenSlide: a region
 * of up to 2^26 pixels (every 1.25x analysis level
 * of a 40x slide up to ~120,000 pixels wide) is read in ONE
 * openslide_read_region and composited over the slide's background
 * colour (openslide.background-color, white when absent, as
 * openslide-python does), then shrunk. Reading it in bands was 2x
 * slower: where a level's downsample is not an integer, a band starting
 * inside the level lands between pixels, and OpenSlide interpolates
 * through pixman's slow path (and shifts the pixels). Larger regions are
 * read in bands (kernels/slide/band_reader.c) by a few threads, cut at
 * the level's tile rows and area-reduced straight into the output, so
 * memory stays bounded; those bands start at level-0 y coordinates
 * rounded from the level's, with that fractional shift.
 *
 * Errors come back as messages; nothing aborts. */
#ifndef QC_REGION_READ_H
#define QC_REGION_READ_H

#include <stddef.h>
#include <stdint.h>
#include <openslide.h>

#include "kernels/image/image.h"
#include "kernels/slide/tiff_direct.h"

typedef enum {
    QC_REGION_MAG = 0,        /* value: magnification ("1.25x") */
    QC_REGION_DOWNSCALE,      /* value < 1: downscale factor */
    QC_REGION_LEVEL,          /* 1 <= value < 100: level index */
    QC_REGION_DIM             /* value >= 100: longer side in pixels */
} qc_region_kind_t;

typedef struct {
    qc_region_kind_t kind;
    double value;
    double base_mag;          /* slide magnification; MAG needs it > 0 */
    int use_bbox;             /* HistoQC's enable_bounding_box */
    int64_t bbox_x, bbox_y, bbox_w, bbox_h;   /* level-0 pixels */
    int area;                 /* shrink by area average, not PIL's
                                 thumbnail (used without a bounding box) */
} qc_region_request_t;

typedef struct {
    int level;                /* pyramid level read */
    double level_downsample;
    int64_t x0, y0;           /* level-0 top-left of the region read */
    int64_t src_w, src_h;     /* region size in level pixels */
    int pil;                  /* shrink as PIL's Image.thumbnail does
                                 (the whole level read, then
                                 kernels/slide/pil_resize.c) */
    int out_w, out_h;         /* the working image's exact size */
    char warning[256];        /* non-empty when the request was adjusted */
} qc_region_plan_t;

/* Parses an image_work_size: a positive decimal number, optionally
 * followed by 'x' or 'X' (a superset of HistoQC's pattern, which rejects
 * e.g. "12.5x"). 0, or -1 when text is not such a size. */
int qc_region_parse_size (const char *text, qc_region_kind_t *kind,
                          double *value);

/* The slide's base magnification as HistoQC's getMag finds it:
 * openslide.objective-power, else aperio.AppMag, else fallback (0 =
 * none). 0 with *mag > 0, or -1 when none is known. */
int qc_region_base_mag (openslide_t *osr, double fallback, double *mag);

/* Decides level, region and output size. 0, or -1 with a message in err
 * (unknown magnification, bad bounding box, size out of bounds,
 * OpenSlide error). */
int qc_region_plan (openslide_t *osr, const qc_region_request_t *req,
                    qc_region_plan_t *plan, char *err, size_t errlen);

/* Reads the planned region with nthreads threads (<= 0: 4; at most 16)
 * into a new RGB image of plan->out_w x plan->out_h. With direct (the
 * slide's kernels/slide/tiff_direct.h reader, or NULL) the tiles are decoded
 * straight from the TIFF where that gives OpenSlide's pixels; any read
 * it cannot make goes through OpenSlide. 0 and *out set, or -1 with
 * OpenSlide's reason (or an allocation failure) in err. */
int qc_region_read (openslide_t *osr, const qc_tiff_direct_t *direct,
                    const qc_region_plan_t *plan, int nthreads,
                    qc_rgb_t **out, char *err, size_t errlen);

/* Reads a w x h region of level (top-left (x0, y0) in level-0
 * coordinates, w x h in level pixels) resampled by area to
 * out_w x out_h. The building block of qc_region_read, for modules that
 * read their own regions. */
int qc_region_read_rect (openslide_t *osr, const qc_tiff_direct_t *direct,
                         int level, int64_t x0, int64_t y0, int64_t w,
                         int64_t h, int out_w, int out_h, int nthreads,
                         qc_rgb_t **out, char *err, size_t errlen);

/* Parse, find the magnification (fallback as above), plan and read
 * through OpenSlide alone (no direct reader):
 * the working image for a work size text such as "1.25x", shrunk by area
 * average (area) or as PIL's thumbnail. NULL with a message in err on
 * failure. */
qc_rgb_t *qc_region_read_work_size (openslide_t *osr, const char *work_size,
                                    double base_mag_fallback, int area,
                                    int nthreads, char *err, size_t errlen);

/* The largest region (pixels) read in one openslide_read_region; larger
 * ones are read in bands. 0 restores the default (2^26). For tests,
 * which read small slides and must still cover the band reader. */
void qc_region_set_whole_max (int64_t pixels);

/* PIL Image.thumbnail's size for a w x h image fitted into box_w x box_h
 * (exposed for tests and for modules that mimic other thumbnails). */
void qc_region_thumbnail_size (int64_t w, int64_t h, int64_t box_w,
                               int64_t box_h, int64_t *out_w,
                               int64_t *out_h);

#endif
