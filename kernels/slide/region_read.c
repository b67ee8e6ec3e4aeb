/* Reading the planned region of a slide, whole or in bands; see
 * region_read.h. kernels/slide/band_reader.c reads in bands. */
#include "kernels/slide/region_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/ops.h"
#include "kernels/slide/band_reader.h"
#include "kernels/slide/pil_resize.h"
#include "shared/err.h"

#define DEFAULT_THREADS 4
/* Source sides are used as int in the resampler. */
#define MAX_SOURCE_SIDE ((int64_t) 1 << 30)
#define WHOLE_MAX_PIXELS ((int64_t) 1 << 26)   /* 256 MiB of ARGB */

static int64_t s_whole_max = WHOLE_MAX_PIXELS;

void
qc_region_set_whole_max (int64_t pixels)
{
    s_whole_max = pixels > 0 ? pixels : WHOLE_MAX_PIXELS;
}

/* The region's rows for the area resize, as the slide's readers hand
 * them out (qc_slide_rows_get). */
typedef struct {
    qc_slide_rows_t *rows;
    int failed;
    char why[512];
} pull_t;

static const uint8_t *
pull_row (void *ctx, int y)
{
    pull_t *p = ctx;
    const uint8_t *row = qc_slide_rows_get (p->rows, y, p->why,
                                            sizeof p->why);
    if (!row)
        p->failed = 1;
    return row;
}

/* rect as one region into a new out_w x out_h image: read straight into
 * it where the sizes agree, else the exact area average of its rows as
 * the slide hands them out (kernels/ops/cpu/resize.c's
 * qc_area_resize_u8), so no second full-size image is made where the
 * direct reader reads. */
static int
read_whole (qc_slide_t *slide, const qc_slide_rect_t *rect, int out_w,
            int out_h, qc_rgb_t **out, char *err, size_t errlen)
{
    qc_rgb_t *img = qc_rgb_new_host (out_w, out_h);
    if (!img)
        return qc_fail (err, errlen, "out of memory for a %d x %d image",
                        out_w, out_h);
    int rc;
    if (rect->w == out_w && rect->h == out_h) {
        rc = qc_slide_read_rows (slide, rect, 0, rect->h, img->px,
                                 (size_t) out_w * 3, err, errlen);
    } else {
        pull_t p = { .rows = qc_slide_rows_open (slide, rect, err, errlen) };
        if (!p.rows)
            rc = -1;
        else if (qc_area_resize_u8 (rect->w, rect->h, out_w, out_h, 3,
                                    pull_row, &p, img->px) == 0)
            rc = 0;
        else if (p.failed)
            rc = qc_fail (err, errlen, "%s", p.why);
        else
            rc = qc_fail (err, errlen, "out of memory for a %d x %d image",
                          out_w, out_h);
        qc_slide_rows_close (&p.rows);
    }
    if (rc == 0)
        *out = img;
    else
        qc_rgb_destroy (&img);
    return rc;
}

int
qc_region_read_rect (qc_slide_t *slide, const qc_slide_rect_t *rect,
                     int out_w, int out_h, int nthreads, qc_rgb_t **out,
                     char *err, size_t errlen)
{
    if (!slide || !rect || !out || rect->level < 0 || rect->w < 1
        || rect->h < 1 || rect->w > MAX_SOURCE_SIDE
        || rect->h > MAX_SOURCE_SIDE
        || qc_image_check_size (out_w, out_h, NULL)) {
        qc_set_err (err, errlen, "invalid region read (level %d, %lld x %lld "
                    "to %d x %d)", rect ? rect->level : -1,
                    (long long) (rect ? rect->w : 0),
                    (long long) (rect ? rect->h : 0), out_w, out_h);
        return -1;
    }
    *out = NULL;
    const char *oe = qc_slide_error (slide);
    if (oe)
        return qc_slide_fail_openslide ("OpenSlide", oe, err, errlen);
    if (rect->level >= qc_slide_level_count (slide)) {
        qc_set_err (err, errlen, "slide has no level %d", rect->level);
        return -1;
    }
    /* one read on one thread; on more (a GPU lane's read, which the
     * GPU waits for), bands wherever they give the same bytes */
    int bands_pay = nthreads != 1
                    && rect->h > qc_slide_tile_height (slide, rect->level)
                    && qc_slide_rows_exact (slide, rect);
    if ((int64_t) rect->w * rect->h <= s_whole_max && !bands_pay
        && !qc_image_check_size (rect->w, rect->h, NULL))
        return read_whole (slide, rect, out_w, out_h, out, err, errlen);
    /* larger than that: in bands, a tile row at a time, memory bounded */
    qc_rgb_t *img = qc_rgb_new_host (out_w, out_h);
    if (!img) {
        qc_set_err (err, errlen, "out of memory for a %d x %d image", out_w,
                 out_h);
        return -1;
    }
    if (nthreads <= 0)
        nthreads = DEFAULT_THREADS;
    if (qc_band_read (slide, rect, nthreads, img, err, errlen) != 0) {
        qc_rgb_destroy (&img);
        return -1;
    }
    *out = img;
    return 0;
}

int
qc_region_read (qc_slide_t *slide, const qc_region_plan_t *plan,
                int nthreads, qc_rgb_t **out, char *err, size_t errlen)
{
    if (!plan) {
        qc_set_err (err, errlen, "no plan");
        return -1;
    }
    if (plan->src_w < 1 || plan->src_h < 1 || plan->src_w > MAX_SOURCE_SIDE
        || plan->src_h > MAX_SOURCE_SIDE) {
        qc_set_err (err, errlen, "invalid region read (level %d, %lld x %lld "
                    "to %d x %d)", plan->level, (long long) plan->src_w,
                    (long long) plan->src_h, plan->out_w, plan->out_h);
        return -1;
    }
    qc_slide_rect_t rect = {
        .level = plan->level, .x0 = plan->x0, .y0 = plan->y0,
        .w = (int) plan->src_w, .h = (int) plan->src_h,
    };
    if (!plan->pil || (plan->src_w == plan->out_w && plan->src_h == plan->out_h))
        return qc_region_read_rect (slide, &rect, plan->out_w, plan->out_h,
                                    nthreads, out, err, errlen);
    /* the whole level, then PIL's thumbnail resampling */
    qc_rgb_t *level = NULL;
    if (qc_region_read_rect (slide, &rect, rect.w, rect.h, nthreads, &level,
                             err, errlen))
        return -1;
    qc_rgb_t *img = qc_rgb_new_host (plan->out_w, plan->out_h);
    if (!img || qc_pil_thumbnail_resize (level, img) != 0) {
        qc_set_err (err, errlen, "out of memory shrinking a %lld x %lld level",
                 (long long) plan->src_w, (long long) plan->src_h);
        qc_rgb_destroy (&img);
        qc_rgb_destroy (&level);
        return -1;
    }
    qc_rgb_destroy (&level);
    *out = img;
    return 0;
}

qc_rgb_t *
qc_region_decode (qc_slide_t *slide, const qc_region_plan_t *plan,
                  const qc_ops_t *ops, char *err, size_t errlen)
{
    if (!slide || !plan || !ops || !ops->decode_jpeg || !ops->resize_rgb) {
        qc_set_err (err, errlen, "no device decoder");
        return NULL;
    }
    int same = plan->src_w == plan->out_w && plan->src_h == plan->out_h;
    if (plan->pil && !same) {
        qc_set_err (err, errlen, "the image is resampled as PIL's thumbnail is");
        return NULL;
    }
    if (plan->src_w > MAX_SOURCE_SIDE || plan->src_h > MAX_SOURCE_SIDE
        || qc_image_check_size ((int) plan->src_w, (int) plan->src_h, NULL)) {
        qc_set_err (err, errlen, "the region is %lld x %lld", (long long) plan->src_w,
                    (long long) plan->src_h);
        return NULL;
    }
    qc_slide_rect_t rect = {
        .level = plan->level, .x0 = plan->x0, .y0 = plan->y0,
        .w = (int) plan->src_w, .h = (int) plan->src_h,
    };
    qc_slide_jpeg_t *tiles = NULL;
    if (qc_slide_jpeg_tiles (slide, &rect, &tiles, err, errlen) != 0)
        return NULL;
    qc_rgb_t *level = qc_rgb_new (rect.w, rect.h);
    qc_rgb_t *img = same ? level : qc_rgb_new (plan->out_w, plan->out_h);
    int rc = !level || !img ? qc_fail (err, errlen, "out of memory for the image")
             : ops->decode_jpeg (&tiles->batch, level) != 0
             ? qc_fail (err, errlen, "the %s ops did not decode its %zu JPEG tiles",
                        ops->name, tiles->batch.n)
             : !same && ops->resize_rgb (level, QC_INTERP_AREA, img) != 0
             ? qc_fail (err, errlen, "the %s ops did not shrink it", ops->name)
             : 0;
    qc_slide_jpeg_free (&tiles);
    if (!same)
        qc_rgb_destroy (&level);
    if (rc != 0)
        qc_rgb_destroy (&img);
    return img;
}

qc_rgb_t *
qc_region_read_work_size (qc_slide_t *slide, const char *work_size,
                          double base_mag_fallback, int area, int nthreads,
                          char *err, size_t errlen)
{
    qc_region_request_t req;
    memset (&req, 0, sizeof req);
    if (!slide || qc_work_size_parse (work_size, &req.size)) {
        qc_set_err (err, errlen, "invalid image_work_size '%.64s'",
                 work_size ? work_size : "(null)");
        return NULL;
    }
    if (qc_region_base_mag (slide, base_mag_fallback, &req.base_mag))
        req.base_mag = 0.0;     /* only MAG needs it; plan says so */
    req.area = area;
    qc_region_plan_t plan;
    qc_rgb_t *img = NULL;
    if (qc_region_plan (slide, &req, &plan, err, errlen)
        || qc_region_read (slide, &plan, nthreads, &img, err, errlen))
        return NULL;
    return img;
}
