/* HistoQC's working size ("image_work_size") and its size rules: which
 * level, which region of it and which output size make the image a step
 * works on (kernels/slide/region_read.h reads it).
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
 * With a bounding box, the target is rint (bbox / factor) per side
 * exactly, from the level whose downsample is within 1% of the factor,
 * else OpenSlide's best level (largest downsample not above the factor).
 *
 * Without a bounding box the level is read whole and shrunk as PIL's
 * Image.thumbnail does (kernels/slide/pil_resize.c): HistoQC's pixels,
 * bit for bit where OpenSlide decodes the same. With request.area (the
 * project's default config: image_resample = area) or a bounding box,
 * the level is area-averaged instead (kernels/ops/cpu/resize.c): an
 * exact box average. */
#ifndef QC_WORK_SIZE_H
#define QC_WORK_SIZE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/slide/slide.h"

typedef enum {
    QC_WORK_MAG = 0,          /* value: magnification ("1.25x") */
    QC_WORK_DOWNSCALE,        /* value < 1: downscale factor */
    QC_WORK_LEVEL,            /* 1 <= value < 100: level index */
    QC_WORK_DIM               /* value >= 100: longer side in pixels */
} qc_work_kind_t;

/* One image_work_size, parsed: the project's one type for it (the
 * config's, the run's image cache's and the reader's). */
typedef struct {
    qc_work_kind_t kind;
    double value;
} qc_work_size_t;

/* Parses an image_work_size: a positive decimal number, optionally
 * followed by 'x' or 'X' (a superset of HistoQC's pattern, which rejects
 * e.g. "12.5x"), surrounded by spaces or not. The one parser of the
 * project, so that a size the config check accepts is one the reader
 * reads. 0, or -1 when text is not such a size. */
int qc_work_size_parse (const char *text, qc_work_size_t *out);

typedef struct {
    qc_work_size_t size;
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

/* The largest magnification a slide's metadata is believed for: no
 * objective goes past 100x; a damaged or hostile file's AppMag of 1e6
 * made every mask 1 x 1 pixel, and the slide passed (a tester's review). */
#define QC_MAX_BASE_MAG 200.0

/* The slide's base magnification as HistoQC's getMag finds it:
 * openslide.objective-power, else aperio.AppMag (each only up to
 * QC_MAX_BASE_MAG), else fallback (0 = none). 0 with *mag > 0, or -1
 * when none is known. */
int qc_region_base_mag (const qc_slide_t *slide, double fallback,
                        double *mag);
/* The same, each property that is there but not believed (no number, or
 * past QC_MAX_BASE_MAG) told to warn (NULL: none) with why in words. One
 * reader for the step that records base_mag and the ones that size the
 * image by it, which read "40x" differently before. */
typedef void (qc_base_mag_warn_fn) (void *arg, const char *property, const char *value,
                                    const char *why);
int qc_region_base_mag_said (const qc_slide_t *slide, double fallback, double *mag,
                             qc_base_mag_warn_fn *warn, void *arg);

/* Decides level, region and output size. 0, or -1 with a message in err
 * (unknown magnification, bad bounding box, size out of bounds,
 * OpenSlide error). */
int qc_region_plan (const qc_slide_t *slide, const qc_region_request_t *req,
                    qc_region_plan_t *plan, char *err, size_t errlen);

/* PIL Image.thumbnail's size for a w x h image fitted into box_w x box_h
 * (exposed for tests and for modules that mimic other thumbnails). */
void qc_region_thumbnail_size (int64_t w, int64_t h, int64_t box_w,
                               int64_t box_h, int64_t *out_w,
                               int64_t *out_h);

#endif
