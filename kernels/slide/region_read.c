/* Working-size slide reading: HistoQC's size rules (see region_read.h),
 * planning, and the front of the reader (arguments, background colour,
 * messages); kernels/slide/band_reader.c does the parallel reading. */
#include "kernels/slide/region_read.h"

#include "kernels/slide/pil_resize.h"
#include "kernels/image/pixel_math.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/slide/band_reader.h"
#include "kernels/ops/cpu/cpu_ops.h"
#include "shared/err.h"
#include "shared/log.h"

#define DEFAULT_THREADS 4
/* Source sides are used as int in the resampler. */
#define MAX_SOURCE_SIDE ((int64_t) 1 << 30)

/* ---- sizes ---------------------------------------------------------- */

/* Decimal number "12", "1.25", ".5", "3." with nothing else; no sign,
 * exponent, hex, inf or nan (strtod alone would take all of those). */
static int
parse_decimal (const char *s, size_t len, double *out)
{
    int digits = 0, dots = 0;
    for (size_t i = 0; i < len; i++) {
        if (isdigit ((unsigned char) s[i]))
            digits++;
        else if (s[i] == '.' && dots++ == 0)
            continue;
        else
            return -1;
    }
    if (!digits || len > 64)
        return -1;
    char buf[65];
    memcpy (buf, s, len);
    buf[len] = '\0';
    double v = strtod (buf, NULL);
    if (!isfinite (v))
        return -1;
    *out = v;
    return 0;
}

int
qc_region_parse_size (const char *text, qc_region_kind_t *kind, double *value)
{
    if (!text || !kind || !value)
        return -1;
    while (isspace ((unsigned char) *text))
        text++;
    size_t len = strlen (text);
    while (len && isspace ((unsigned char) text[len - 1]))
        len--;
    int mag = len && (text[len - 1] == 'x' || text[len - 1] == 'X');
    double v;
    if (parse_decimal (text, len - (size_t) mag, &v) || !(v > 0.0))
        return -1;
    *value = v;
    *kind = mag ? QC_REGION_MAG
          : v < 1.0 ? QC_REGION_DOWNSCALE
          : v < 100.0 ? QC_REGION_LEVEL
          : QC_REGION_DIM;
    return 0;
}

static int
parse_property_number (const char *s, double *out)
{
    if (!s)
        return -1;
    char *end;
    double v = strtod (s, &end);
    while (end != s && isspace ((unsigned char) *end))
        end++;
    if (end == s || *end || !isfinite (v) || !(v > 0.0))
        return -1;
    *out = v;
    return 0;
}

int
qc_region_base_mag (openslide_t *osr, double fallback, double *mag)
{
    if (!osr || !mag)
        return -1;
    static const char *const keys[] = { "openslide.objective-power",
                                        "aperio.AppMag" };
    for (size_t i = 0; i < 2; i++)
        if (parse_property_number (openslide_get_property_value (osr,
                                                                 keys[i]),
                                   mag) == 0)
            return 0;
    if (fallback > 0.0 && isfinite (fallback)) {
        *mag = fallback;
        return 0;
    }
    return -1;
}

/* Python's min (floor, ceil, key) then max (.., 1), as PIL's
 * round_aspect: floor wins ties. */
static int64_t
round_aspect (double number, double aspect, double num, int by_height)
{
    double f = floor (number), c = ceil (number);
    double kf, kc;
    if (by_height) {            /* key: |aspect - n / y|, num = y */
        kf = fabs (aspect - f / num);
        kc = fabs (aspect - c / num);
    } else {                    /* key: 0 if n == 0 else |aspect - x / n| */
        kf = f == 0.0 ? 0.0 : fabs (aspect - num / f);
        kc = c == 0.0 ? 0.0 : fabs (aspect - num / c);
    }
    double r = kc < kf ? c : f;
    return r < 1.0 ? 1 : (int64_t) r;
}

void
qc_region_thumbnail_size (int64_t w, int64_t h, int64_t box_w, int64_t box_h,
                          int64_t *out_w, int64_t *out_h)
{
    if (!out_w || !out_h)
        return;
    if (w < 1 || h < 1 || box_w < 1 || box_h < 1) {
        *out_w = w > 0 ? w : 1;
        *out_h = h > 0 ? h : 1;
        return;
    }
    if (box_w >= w && box_h >= h) {     /* PIL never enlarges */
        *out_w = w;
        *out_h = h;
        return;
    }
    double aspect = (double) w / (double) h;
    if ((double) box_w / (double) box_h >= aspect) {
        *out_w = round_aspect ((double) box_h * aspect, aspect,
                               (double) box_h, 1);
        *out_h = box_h;
    } else {
        *out_w = box_w;
        *out_h = round_aspect ((double) box_w / aspect, aspect,
                               (double) box_w, 0);
    }
}

/* ---- planning ------------------------------------------------------- */

static int
osr_failed (openslide_t *osr, char *err, size_t errlen)
{
    const char *oe = openslide_get_error (osr);
    if (!oe)
        return 0;
    qc_set_err (err, errlen, "OpenSlide: %s", oe);
    return 1;
}

/* Level whose downsample is within 1% of factor (HistoQC's
 * getBestLevelForDownsample), else OpenSlide's best level. */
static int
level_for_factor (openslide_t *osr, double factor)
{
    int32_t n = openslide_get_level_count (osr);
    for (int32_t i = 0; i < n; i++) {
        double ds = openslide_get_level_downsample (osr, i);
        if (fabs (ds / factor - 1.0) <= 0.01 + 1e-5)
            return i;
    }
    return openslide_get_best_level_for_downsample (osr, factor);
}

static int
plan_level (openslide_t *osr, const qc_region_request_t *req, int64_t bw,
            int64_t bh, qc_region_plan_t *plan)
{
    int32_t n = openslide_get_level_count (osr);
    int level = req->value >= (double) INT32_MAX ? INT32_MAX
              : (int) req->value;
    if (level >= n) {
        snprintf (plan->warning, sizeof plan->warning,
                  "Desired Image Level %d does not exist! Instead using "
                  "level %d! Downstream output may not be correct",
                  level, n - 1);
        level = n - 1;
    }
    int64_t lw, lh;
    openslide_get_level_dimensions (osr, level, &lw, &lh);
    double ds = openslide_get_level_downsample (osr, level);
    plan->level = level;
    plan->level_downsample = ds;
    if (req->use_bbox) {        /* HistoQC: (bbox / downsample).astype (int) */
        plan->src_w = (int64_t) ((double) bw / ds);
        plan->src_h = (int64_t) ((double) bh / ds);
    } else {
        plan->src_w = lw;
        plan->src_h = lh;
    }
    plan->out_w = (int) (plan->src_w > INT32_MAX ? INT32_MAX : plan->src_w);
    plan->out_h = (int) (plan->src_h > INT32_MAX ? INT32_MAX : plan->src_h);
    return 0;
}

int
qc_region_plan (openslide_t *osr, const qc_region_request_t *req,
                qc_region_plan_t *plan, char *err, size_t errlen)
{
    if (!osr || !req || !plan || !(req->value > 0.0)
        || !isfinite (req->value)) {
        qc_set_err (err, errlen, "invalid working size request");
        return -1;
    }
    memset (plan, 0, sizeof *plan);
    if (osr_failed (osr, err, errlen))
        return -1;
    int64_t W, H;
    openslide_get_level0_dimensions (osr, &W, &H);
    if (osr_failed (osr, err, errlen))
        return -1;
    if (W < 1 || H < 1) {
        qc_set_err (err, errlen, "slide has no pixels (%lld x %lld)",
                 (long long) W, (long long) H);
        return -1;
    }
    int64_t bx = 0, by = 0, bw = W, bh = H;
    if (req->use_bbox) {
        bx = req->bbox_x, by = req->bbox_y;
        bw = req->bbox_w, bh = req->bbox_h;
        if (bx < 0 || by < 0 || bw < 1 || bh < 1 || bx > W - bw
            || by > H - bh) {
            qc_set_err (err, errlen, "bounding box (%lld, %lld, %lld, %lld) is "
                     "not inside the slide (%lld x %lld)", (long long) bx,
                     (long long) by, (long long) bw, (long long) bh,
                     (long long) W, (long long) H);
            return -1;
        }
    }
    plan->x0 = bx;
    plan->y0 = by;

    double factor = 1.0, tw = 1.0, th = 1.0;
    switch (req->kind) {
    case QC_REGION_MAG:
        if (!(req->base_mag > 0.0) || !isfinite (req->base_mag)) {
            qc_set_err (err, errlen, "unknown base magnification (no "
                     "openslide.objective-power or aperio.AppMag), so a "
                     "magnification work size such as '%gx' cannot be "
                     "used; set base_mag in the config or give the work "
                     "size in pixels", req->value);
            return -1;
        }
        factor = req->base_mag / req->value;
        tw = rint ((double) bw / factor);
        th = rint ((double) bh / factor);
        break;
    case QC_REGION_DOWNSCALE:
        if (req->value >= 1.0) {
            qc_set_err (err, errlen, "downscale factor %g is not below 1",
                     req->value);
            return -1;
        }
        factor = 1.0 / req->value;
        tw = rint ((double) bw * req->value);
        th = rint ((double) bh * req->value);
        break;
    case QC_REGION_DIM: {
        double dim = floor (req->value);
        if (bw > bh) {          /* HistoQC getDimensionsByOneDim */
            tw = dim;
            th = floor (dim * (double) bh / (double) bw);
        } else {
            tw = floor (dim * (double) bw / (double) bh);
            th = dim;
        }
        tw = tw < 1.0 ? 1.0 : tw;
        factor = (double) bw / tw;
        break;
    }
    case QC_REGION_LEVEL:
        plan_level (osr, req, bw, bh, plan);
        break;
    default:
        qc_set_err (err, errlen, "unknown working size kind %d", (int) req->kind);
        return -1;
    }
    tw = tw < 1.0 ? 1.0 : tw;
    th = th < 1.0 ? 1.0 : th;
    if (req->kind != QC_REGION_LEVEL && (tw > QC_IMAGE_MAX_DIM
                                         || th > QC_IMAGE_MAX_DIM)) {
        qc_set_err (err, errlen, "working image of %.0f x %.0f pixels is too "
                 "large", tw, th);
        return -1;
    }
    if (req->kind != QC_REGION_LEVEL && !req->use_bbox) {
        /* openslide-python get_thumbnail ((box, box)) */
        int64_t box = (int64_t) (tw > th ? tw : th);
        double want = fmax ((double) W / (double) box,
                            (double) H / (double) box);
        int level = openslide_get_best_level_for_downsample (osr, want);
        int64_t lw = 0, lh = 0, ow, oh;
        openslide_get_level_dimensions (osr, level, &lw, &lh);
        qc_region_thumbnail_size (lw, lh, box, box, &ow, &oh);
        plan->level = level;
        plan->level_downsample = openslide_get_level_downsample (osr, level);
        plan->src_w = lw;
        plan->src_h = lh;
        plan->out_w = (int) (ow > INT32_MAX ? INT32_MAX : ow);
        plan->out_h = (int) (oh > INT32_MAX ? INT32_MAX : oh);
        plan->pil = !req->area;
    } else if (req->kind != QC_REGION_LEVEL) {
        int level = level_for_factor (osr, factor);
        double ds = openslide_get_level_downsample (osr, level);
        int64_t lw = 0, lh = 0;
        openslide_get_level_dimensions (osr, level, &lw, &lh);
        plan->level = level;
        plan->level_downsample = ds;
        plan->src_w = llround ((double) bw / ds);
        plan->src_h = llround ((double) bh / ds);
        plan->src_w = plan->src_w < 1 ? 1 : plan->src_w > lw ? lw : plan->src_w;
        plan->src_h = plan->src_h < 1 ? 1 : plan->src_h > lh ? lh : plan->src_h;
        plan->out_w = (int) tw;
        plan->out_h = (int) th;
    }
    if (osr_failed (osr, err, errlen))
        return -1;
    if (plan->src_w < 1 || plan->src_h < 1
        || qc_image_check_size (plan->out_w, plan->out_h, NULL)) {
        qc_set_err (err, errlen, "working image of %d x %d pixels (from level "
                 "%d, %lld x %lld) is empty or too large", plan->out_w,
                 plan->out_h, plan->level, (long long) plan->src_w,
                 (long long) plan->src_h);
        return -1;
    }
    return 0;
}

/* ---- reading ------------------------------------------------------ */

/* The slide's background colour (openslide.background-color, "RRGGBB"),
 * white when absent or malformed. */
static void
background (openslide_t *osr, uint8_t bg[3])
{
    bg[0] = bg[1] = bg[2] = 255;
    const char *s = openslide_get_property_value (osr,
                                                  "openslide.background-color");
    if (!s || strlen (s) != 6)
        return;
    for (int i = 0; i < 6; i++)
        if (!isxdigit ((unsigned char) s[i]))
            return;
    unsigned long v = strtoul (s, NULL, 16);
    bg[0] = (uint8_t) (v >> 16);
    bg[1] = (uint8_t) (v >> 8);
    bg[2] = (uint8_t) v;
}

#define WHOLE_MAX_PIXELS ((int64_t) 1 << 26)   /* 256 MiB of ARGB */

static int64_t s_whole_max = WHOLE_MAX_PIXELS;

void
qc_region_set_whole_max (int64_t pixels)
{
    s_whole_max = pixels > 0 ? pixels : WHOLE_MAX_PIXELS;
}

/* OpenSlide's premultiplied ARGB rows composited over bg, one row at a
 * time, as qc_area_resize_u8 asks for them. */
typedef struct {
    const uint32_t *argb;
    int64_t w;
    uint8_t bg[3];
    uint8_t *row;                 /* w RGB pixels */
} argb_rows_t;

static const uint8_t *
argb_row (void *ctx, int y)
{
    argb_rows_t *r = ctx;
    qc_cpu_argb_over_row (r->argb + (size_t) y * (size_t) r->w, (size_t) r->w,
                          r->bg, r->row);
    return r->row;
}

/* Level rows for the area resize, decoded by the direct reader a tile
 * row at a time (tile_h x w RGB: 2.9 MB for a 1.25x read of a 40x
 * slide, where the whole level would be 31 MB). */
typedef struct {
    const qc_tiff_direct_t *direct;
    int level;
    int64_t lx, ly;
    int w, h;
    int tile_h;
    const uint8_t *bg;
    uint8_t *buf;               /* tile_h rows */
    int y0, rows;               /* region rows held in buf */
    int rc;
    char why[256];
} direct_rows_t;

static const uint8_t *
direct_row (void *ctx, int y)
{
    direct_rows_t *d = ctx;
    if (y < d->y0 || y >= d->y0 + d->rows) {
        /* the tile row holding region row y, clipped to the region */
        int64_t lrow = d->ly + y;
        int64_t start = lrow - ((lrow % d->tile_h) + d->tile_h) % d->tile_h;
        int y0 = (int) (start - d->ly > 0 ? start - d->ly : 0);
        int64_t end = start + d->tile_h - d->ly;
        int y1 = (int) (end < d->h ? end : d->h);
        d->rc = qc_tiff_direct_read (d->direct, d->level, d->lx, d->ly + y0,
                                     d->w, y1 - y0, d->bg, d->buf,
                                     (size_t) d->w * 3, d->why,
                                     sizeof d->why);
        if (d->rc != 0)
            return NULL;
        d->y0 = y0;
        d->rows = y1 - y0;
    }
    return d->buf + (size_t) (y - d->y0) * (size_t) d->w * 3;
}

/* read_whole_rect through the direct reader, from level pixel (lx, ly).
 * 0; QC_TIFF_DIRECT_FALLBACK (why says why) when OpenSlide must read
 * it; -1 when memory ran out. */
static int
read_whole_direct (const qc_tiff_direct_t *direct, int level, int64_t lx,
                   int64_t ly, int w, int h, const uint8_t bg[3], int out_w,
                   int out_h, qc_rgb_t **out, char *why, size_t whylen)
{
    qc_rgb_t *img = qc_rgb_new (out_w, out_h);
    if (!img)
        return qc_fail (why, whylen, "out of memory for a %d x %d image",
                        out_w, out_h);
    int rc;
    if (w == out_w && h == out_h) {
        rc = qc_tiff_direct_read (direct, level, lx, ly, w, h, bg, img->px,
                                  (size_t) w * 3, why, whylen);
    } else {
        int th = qc_tiff_direct_tile_height (direct, level);
        direct_rows_t rows = {
            .direct = direct, .level = level, .lx = lx, .ly = ly, .w = w,
            .h = h, .tile_h = th > 0 ? th : 1, .bg = bg, .y0 = 0, .rows = 0,
            .rc = 0,
        };
        rows.buf = malloc ((size_t) rows.tile_h * (size_t) w * 3);
        if (!rows.buf)
            rc = qc_fail (why, whylen, "out of memory for %d rows of %d "
                          "pixels", rows.tile_h, w);
        else if (qc_area_resize_u8 (w, h, out_w, out_h, 3, direct_row,
                                    &rows, img->px) == 0)
            rc = 0;
        else if (rows.rc != 0) {
            rc = rows.rc;
            qc_set_err (why, whylen, "%s", rows.why);
        } else
            rc = qc_fail (why, whylen, "out of memory for a %d x %d image",
                          out_w, out_h);
        free (rows.buf);
    }
    if (rc == 0)
        *out = img;
    else
        qc_rgb_destroy (&img);
    return rc;
}

/* The w x h pixels of level at level-0 (x0, y0) in ONE
 * openslide_read_region, composited over bg, into a new out_w x out_h
 * image (the exact area average where the sizes differ; the source rows
 * are composited one at a time as the resize takes them, so no second
 * full-size image is made). One read rather than bands: a band starting
 * inside a level whose downsample is not an integer lands between its
 * pixels, and OpenSlide then interpolates, through pixman's slow path.
 * On a 60,000 x 45,000 slide (level 2, downsample 15.9986) one read of
 * the level took 0.30 s, the same in 256-row bands 0.47 s, and the
 * bands' pixels were shifted by a fraction of a pixel (HistoQC, through
 * openslide-python, reads in one call). */
static int
read_whole_openslide (openslide_t *osr, int level, int64_t x0, int64_t y0,
                      int64_t w, int64_t h, const uint8_t bg[3], int out_w,
                      int out_h, qc_rgb_t **out, char *err, size_t errlen)
{
    uint32_t *argb = malloc ((size_t) w * (size_t) h * sizeof *argb);
    uint8_t *row = malloc ((size_t) w * 3);
    qc_rgb_t *img = qc_rgb_new (out_w, out_h);
    if (!argb || !row || !img) {
        free (argb);
        free (row);
        qc_rgb_destroy (&img);
        qc_set_err (err, errlen, "out of memory for level %d (%lld x %lld)",
                 level, (long long) w, (long long) h);
        return -1;
    }
    openslide_read_region (osr, argb, x0, y0, level, w, h);
    int rc = -1;
    if (osr_failed (osr, err, errlen))
        goto done;
    if (w == out_w && h == out_h) {
        for (int64_t y = 0; y < h; y++)
            qc_cpu_argb_over_row (argb + (size_t) y * (size_t) w, (size_t) w,
                                  bg, img->px + (size_t) y * (size_t) w * 3);
    } else {
        argb_rows_t rows = { argb, w, { bg[0], bg[1], bg[2] }, row };
        if (qc_area_resize_u8 ((int) w, (int) h, out_w, out_h, 3, argb_row,
                               &rows, img->px) != 0) {
            qc_set_err (err, errlen, "out of memory for a %d x %d image",
                        out_w, out_h);
            goto done;
        }
    }
    *out = img;
    img = NULL;
    rc = 0;
done:
    free (argb);
    free (row);
    qc_rgb_destroy (&img);
    return rc;
}

/* The w x h pixels of level at level-0 (x0, y0), over bg, as an
 * out_w x out_h image: straight from the TIFF where the direct reader
 * can give OpenSlide's pixels, else through OpenSlide. */
static int
read_whole_rect (openslide_t *osr, const qc_tiff_direct_t *direct,
                 int level, int64_t x0, int64_t y0, int64_t w, int64_t h,
                 const uint8_t bg[3], int out_w, int out_h, qc_rgb_t **out,
                 char *err, size_t errlen)
{
    int64_t lx, ly;
    if (direct && qc_tiff_direct_aligned (direct, level, x0, y0, &lx, &ly)) {
        char why[256];
        int rc = read_whole_direct (direct, level, lx, ly, (int) w, (int) h,
                                    bg, out_w, out_h, out, why, sizeof why);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return qc_fail (err, errlen, "%s", why);
        qc_log (QC_LOG_DEBUG, "region_read", "level %d read through "
                "OpenSlide: %s", level, why);
    }
    return read_whole_openslide (osr, level, x0, y0, w, h, bg, out_w, out_h,
                                 out, err, errlen);
}

int
qc_region_read_rect (openslide_t *osr, const qc_tiff_direct_t *direct,
                     int level, int64_t x0, int64_t y0, int64_t w, int64_t h,
                     int out_w, int out_h, int nthreads, qc_rgb_t **out,
                     char *err, size_t errlen)
{
    if (!osr || !out || level < 0 || w < 1 || h < 1 || w > MAX_SOURCE_SIDE
        || h > MAX_SOURCE_SIDE || qc_image_check_size (out_w, out_h, NULL)) {
        qc_set_err (err, errlen, "invalid region read (level %d, %lld x %lld "
                 "to %d x %d)", level, (long long) w, (long long) h, out_w,
                 out_h);
        return -1;
    }
    *out = NULL;
    if (osr_failed (osr, err, errlen))
        return -1;
    if (level >= openslide_get_level_count (osr)) {
        qc_set_err (err, errlen, "slide has no level %d", level);
        return -1;
    }
    uint8_t bg[3];
    background (osr, bg);
    if (w * h <= s_whole_max && !qc_image_check_size ((int) w, (int) h, NULL)) {
        /* one read, then the exact area average (kernels/ops/cpu/resize.c) */
        return read_whole_rect (osr, direct, level, x0, y0, w, h, bg, out_w,
                                out_h, out, err, errlen);
    }
    /* larger than that: in bands, a tile row at a time, memory bounded */
    qc_rgb_t *img = qc_rgb_new (out_w, out_h);
    if (!img) {
        qc_set_err (err, errlen, "out of memory for a %d x %d image", out_w,
                 out_h);
        return -1;
    }
    if (nthreads <= 0)
        nthreads = DEFAULT_THREADS;
    int rc = qc_band_read (osr, direct, level, x0, y0, (int) w, (int) h, bg,
                           nthreads, img);
    if (rc) {
        qc_rgb_destroy (&img);
        if (!osr_failed (osr, err, errlen))
            qc_set_err (err, errlen, "out of memory reading level %d", level);
        return -1;
    }
    *out = img;
    return 0;
}

int
qc_region_read (openslide_t *osr, const qc_tiff_direct_t *direct,
                const qc_region_plan_t *plan, int nthreads, qc_rgb_t **out,
                char *err, size_t errlen)
{
    if (!plan) {
        qc_set_err (err, errlen, "no plan");
        return -1;
    }
    if (!plan->pil || (plan->src_w == plan->out_w && plan->src_h == plan->out_h))
        return qc_region_read_rect (osr, direct, plan->level, plan->x0,
                                    plan->y0, plan->src_w, plan->src_h,
                                    plan->out_w, plan->out_h, nthreads, out,
                                    err, errlen);
    /* the whole level, then PIL's thumbnail resampling */
    qc_rgb_t *level = NULL;
    if (qc_region_read_rect (osr, direct, plan->level, plan->x0, plan->y0,
                             plan->src_w, plan->src_h, (int) plan->src_w,
                             (int) plan->src_h, nthreads, &level, err, errlen))
        return -1;
    qc_rgb_t *img = qc_rgb_new (plan->out_w, plan->out_h);
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
qc_region_read_work_size (openslide_t *osr, const char *work_size,
                          double base_mag_fallback, int area, int nthreads,
                          char *err, size_t errlen)
{
    qc_region_request_t req;
    memset (&req, 0, sizeof req);
    if (!osr || qc_region_parse_size (work_size, &req.kind, &req.value)) {
        qc_set_err (err, errlen, "invalid image_work_size '%.64s'",
                 work_size ? work_size : "(null)");
        return NULL;
    }
    if (qc_region_base_mag (osr, base_mag_fallback, &req.base_mag))
        req.base_mag = 0.0;     /* only MAG needs it; plan says so */
    req.area = area;
    qc_region_plan_t plan;
    qc_rgb_t *img = NULL;
    if (qc_region_plan (osr, &req, &plan, err, errlen)
        || qc_region_read (osr, NULL, &plan, nthreads, &img, err, errlen))
        return NULL;
    return img;
}
