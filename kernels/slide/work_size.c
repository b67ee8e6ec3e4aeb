/* HistoQC's image_work_size and its size rules: which level, which
 * region of it and what output size a working image is; see
 * work_size.h. */
#include "kernels/slide/work_size.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/err.h"

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
qc_work_size_parse (const char *text, qc_work_size_t *out)
{
    if (!text || !out)
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
    out->value = v;
    out->kind = mag ? QC_WORK_MAG
              : v < 1.0 ? QC_WORK_DOWNSCALE
              : v < 100.0 ? QC_WORK_LEVEL
              : QC_WORK_DIM;
    return 0;
}

/* A positive finite number as a slide's metadata writes it, spaces
 * around it, and after it one letter of unit (NULL or "": none) taken:
 * a magnification is written "40", "20.0", and "40x" or "40X" (the step
 * reading it for results.tsv took that, the one sizing the image did
 * not: the row said 40, the slide failed). */
static int
parse_property_number_in (const char *s, const char *units, double *out)
{
    if (!s)
        return -1;
    char *end;
    double v = strtod (s, &end);
    if (end == s)
        return -1;
    while (isspace ((unsigned char) *end))
        end++;
    if (*end && units && strchr (units, *end)) {
        end++;
        while (isspace ((unsigned char) *end))
            end++;
    }
    if (*end || !isfinite (v) || !(v > 0.0))
        return -1;
    *out = v;
    return 0;
}

static int
parse_property_number (const char *s, double *out)
{
    return parse_property_number_in (s, NULL, out);
}

int
qc_region_base_mag_said (const qc_slide_t *slide, double fallback, double *mag,
                         qc_base_mag_warn_fn *warn, void *arg)
{
    if (!slide || !mag)
        return -1;
    static const char *const keys[] = { "openslide.objective-power",
                                        "aperio.AppMag" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *s = qc_slide_property (slide, keys[i]);
        double v = 0;
        if (!s)
            continue;
        if (parse_property_number_in (s, "xX", &v) != 0) {
            if (warn)
                warn (arg, keys[i], s, "is not a magnification");
        } else if (v > QC_MAX_BASE_MAG) {
            if (warn)
                warn (arg, keys[i], s, "is not a plausible magnification (no objective "
                      "goes past 100x)");
        } else {
            *mag = v;
            return 0;
        }
    }
    if (fallback > 0.0 && isfinite (fallback)) {
        *mag = fallback;
        return 0;
    }
    return -1;
}

int
qc_region_base_mag (const qc_slide_t *slide, double fallback, double *mag)
{
    return qc_region_base_mag_said (slide, fallback, mag, NULL, NULL);
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

/* 1 (err set) when the slide's OpenSlide handle is in its error
 * state: every read would fail with that reason. */
static int
slide_failed (const qc_slide_t *slide, char *err, size_t errlen)
{
    const char *oe = qc_slide_error (slide);
    if (!oe)
        return 0;
    qc_slide_fail_openslide ("OpenSlide", oe, err, errlen);
    return 1;
}

/* Level whose downsample is within 1% of factor (HistoQC's
 * getBestLevelForDownsample), else OpenSlide's best level. */
static int
level_for_factor (const qc_slide_t *slide, double factor)
{
    int n = qc_slide_level_count (slide);
    for (int i = 0; i < n; i++) {
        double ds = qc_slide_level_downsample (slide, i);
        if (fabs (ds / factor - 1.0) <= 0.01 + 1e-5)
            return i;
    }
    return qc_slide_best_level (slide, factor);
}

static int
plan_level (const qc_slide_t *slide, const qc_region_request_t *req,
            int64_t bw, int64_t bh, qc_region_plan_t *plan)
{
    int n = qc_slide_level_count (slide);
    int level = req->size.value >= (double) INT32_MAX ? INT32_MAX
              : (int) req->size.value;
    if (level >= n) {
        snprintf (plan->warning, sizeof plan->warning,
                  "Desired Image Level %d does not exist! Instead using "
                  "level %d! Downstream output may not be correct",
                  level, n - 1);
        level = n - 1;
    }
    int64_t lw = 0, lh = 0;
    qc_slide_level_size (slide, level, &lw, &lh);
    double ds = qc_slide_level_downsample (slide, level);
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

/* The most pixels a working image is made from, read whole from one
 * level: more than a glass slide of 75 x 50 mm holds at 40x (0.25 µm a
 * pixel: 6e10). A level that large to read is a damaged size or a slide
 * with no pyramid: a tester's single level of 10^12 pixels, with no
 * magnification and a working size in pixels, held its slot past the
 * task timeout three times (~90 minutes at the default). */
#define MAX_LEVEL_READ_PIXELS 1e11

/* A glass slide is 75 x 25 mm (75 x 50 mm at most); a scan says where
 * it is a few times larger still, with room for a resolution a scanner
 * rounds. */
#define MAX_SLIDE_MM 200.0

/* Whether a slide of W x H pixels is larger than any glass slide, by
 * its base magnification (10 µm over it: 0.25 at 40x) or, without one,
 * its resolution (openslide.mpp-x/y): a damaged or hostile file
 * declaring 1,000,000 x 1,000,000 pixels at 40x (250 mm) asked for a 1
 * Gpx image at 1.25x, ran the machine out of memory, and was blamed on
 * the machine and run again. The magnification first: it sizes the
 * working image, so a slide whose MPP alone is wrong (MPP = 30 at 40x)
 * runs, as in HistoQC. -1 (why) then. */
static int
check_physical_size (const qc_slide_t *slide, int64_t W, int64_t H, double base_mag,
                     char *err, size_t errlen)
{
    double mx = 0.0, my = 0.0;
    bool by_mag = base_mag > 0.0 && isfinite (base_mag);
    if (by_mag)
        mx = my = 10.0 / base_mag;
    else if (parse_property_number (qc_slide_property (slide, "openslide.mpp-x"), &mx) != 0
             || parse_property_number (qc_slide_property (slide, "openslide.mpp-y"), &my) != 0)
        return 0;               /* nothing to judge by */
    double wmm = (double) W * mx / 1000.0, hmm = (double) H * my / 1000.0;
    if (wmm <= MAX_SLIDE_MM && hmm <= MAX_SLIDE_MM)
        return 0;
    const char *what = by_mag ? "magnification" : "resolution";
    qc_set_err (err, errlen, "the slide declares %lld x %lld pixels of %.3g x %.3g µm (by "
                "its %s%s), %.0f x %.0f mm: larger than any glass slide (75 x 50 mm at "
                "most); its size or its %s is wrong (a damaged file?)", (long long) W,
                (long long) H, mx, my, by_mag ? "base " : "", what, wmm, hmm, what);
    return -1;
}

int
qc_region_plan (const qc_slide_t *slide, const qc_region_request_t *req,
                qc_region_plan_t *plan, char *err, size_t errlen)
{
    if (!slide || !req || !plan || !(req->size.value > 0.0)
        || !isfinite (req->size.value)) {
        qc_set_err (err, errlen, "invalid working size request");
        return -1;
    }
    memset (plan, 0, sizeof *plan);
    if (slide_failed (slide, err, errlen))
        return -1;
    int64_t W = 0, H = 0;
    qc_slide_level_size (slide, 0, &W, &H);
    if (W < 1 || H < 1) {
        qc_set_err (err, errlen, "slide has no pixels (%lld x %lld)",
                 (long long) W, (long long) H);
        return -1;
    }
    if (check_physical_size (slide, W, H, req->base_mag, err, errlen))
        return -1;
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
    switch (req->size.kind) {
    case QC_WORK_MAG:
        if (!(req->base_mag > 0.0) || !isfinite (req->base_mag)) {
            qc_set_err (err, errlen, "unknown base magnification (no "
                     "openslide.objective-power or aperio.AppMag, or none "
                     "up to %gx), so a magnification work size such as '%gx' "
                     "cannot be used; set base_mag in the config or give the "
                     "work size in pixels", QC_MAX_BASE_MAG, req->size.value);
            return -1;
        }
        factor = req->base_mag / req->size.value;
        tw = rint ((double) bw / factor);
        th = rint ((double) bh / factor);
        if (factor < 1.0 && !req->use_bbox)
            /* the read below never enlarges (as HistoQC's thumbnail) */
            snprintf (plan->warning, sizeof plan->warning, "image_work_size %gx is "
                      "above the slide's base magnification (%gx): using %gx, the "
                      "slide's own pixels (images are never enlarged)",
                      req->size.value, req->base_mag, req->base_mag);
        break;
    case QC_WORK_DOWNSCALE:
        if (req->size.value >= 1.0) {
            qc_set_err (err, errlen, "downscale factor %g is not below 1",
                     req->size.value);
            return -1;
        }
        factor = 1.0 / req->size.value;
        tw = rint ((double) bw * req->size.value);
        th = rint ((double) bh * req->size.value);
        break;
    case QC_WORK_DIM: {
        double dim = floor (req->size.value);
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
    case QC_WORK_LEVEL:
        plan_level (slide, req, bw, bh, plan);
        break;
    default:
        qc_set_err (err, errlen, "unknown working size kind %d",
                    (int) req->size.kind);
        return -1;
    }
    tw = tw < 1.0 ? 1.0 : tw;
    th = th < 1.0 ? 1.0 : th;
    if (req->size.kind != QC_WORK_LEVEL && (tw > QC_IMAGE_MAX_DIM
                                         || th > QC_IMAGE_MAX_DIM)) {
        qc_set_err (err, errlen, "working image of %.0f x %.0f pixels is too "
                 "large", tw, th);
        return -1;
    }
    if (req->size.kind != QC_WORK_LEVEL && !req->use_bbox) {
        /* openslide-python get_thumbnail ((box, box)) */
        int64_t box = (int64_t) (tw > th ? tw : th);
        double want = fmax ((double) W / (double) box,
                            (double) H / (double) box);
        int level = qc_slide_best_level (slide, want);
        int64_t lw = 0, lh = 0, ow, oh;
        qc_slide_level_size (slide, level, &lw, &lh);
        qc_region_thumbnail_size (lw, lh, box, box, &ow, &oh);
        plan->level = level;
        plan->level_downsample = qc_slide_level_downsample (slide, level);
        plan->src_w = lw;
        plan->src_h = lh;
        plan->out_w = (int) (ow > INT32_MAX ? INT32_MAX : ow);
        plan->out_h = (int) (oh > INT32_MAX ? INT32_MAX : oh);
        plan->pil = !req->area;
    } else if (req->size.kind != QC_WORK_LEVEL) {
        int level = level_for_factor (slide, factor);
        double ds = qc_slide_level_downsample (slide, level);
        int64_t lw = 0, lh = 0;
        qc_slide_level_size (slide, level, &lw, &lh);
        plan->level = level;
        plan->level_downsample = ds;
        plan->src_w = llround ((double) bw / ds);
        plan->src_h = llround ((double) bh / ds);
        plan->src_w = plan->src_w < 1 ? 1 : plan->src_w > lw ? lw : plan->src_w;
        plan->src_h = plan->src_h < 1 ? 1 : plan->src_h > lh ? lh : plan->src_h;
        plan->out_w = (int) tw;
        plan->out_h = (int) th;
    }
    if (slide_failed (slide, err, errlen))
        return -1;
    if (plan->src_w < 1 || plan->src_h < 1
        || qc_image_check_size (plan->out_w, plan->out_h, NULL)) {
        qc_set_err (err, errlen, "working image of %d x %d pixels (from level "
                 "%d, %lld x %lld) is empty or too large", plan->out_w,
                 plan->out_h, plan->level, (long long) plan->src_w,
                 (long long) plan->src_h);
        return -1;
    }
    if ((double) plan->src_w * (double) plan->src_h > MAX_LEVEL_READ_PIXELS) {
        qc_set_err (err, errlen, "the %d x %d working image would be made from level %d "
                    "read whole, %lld x %lld pixels (%.0f billion): more than a glass "
                    "slide holds at 40x (60 billion); the slide's size is damaged, or it "
                    "has no smaller level to read from (a tiled pyramid has: vips "
                    "tiffsave --tile --pyramid)", plan->out_w, plan->out_h, plan->level,
                    (long long) plan->src_w, (long long) plan->src_h,
                    (double) plan->src_w * (double) plan->src_h / 1e9);
        return -1;
    }
    return 0;
}
