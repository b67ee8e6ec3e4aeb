/* The per-slide state behind kernels/run_state.h: cached working images
 * (RGB and gray) keyed by parsed work size, img_mask_use, kept masks and
 * completed steps. Allocated on first use and freed by
 * qc_run_state_free, so a run that never asks for pixels costs nothing.
 *
 * Keys are the parsed size (kind, value), not the text: "1.25x",
 * "1.25X" and " 1.250x" are one image, read once. */
#include "kernels/run_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/png/png_io.h"
#include "kernels/slide/region_read.h"
#include "kernels/slide/work_size.h"
#include "shared/log.h"

/* More distinct sizes than this in one run is a config mistake (HistoQC's
 * default uses three); the cap bounds memory. */
#define MAX_IMAGES 16
#define MAX_KEPT 64
#define MAX_COMPLETED 256
#define MAX_NAME 128

typedef struct {
    qc_work_size_t size;
    qc_rgb_t *rgb;
    qc_fimg_t *gray;          /* rgb2gray of rgb, made on demand */
    char *warning;            /* read ahead (qc_run_preread): the read's
                                 warning, given when a step first uses
                                 the image, where it would have read it */
} image_entry_t;

typedef struct {
    char name[MAX_NAME];
    qc_mask_t *mask;
    int forced;               /* in HistoQC's img_mask_force */
} kept_t;

struct qc_run_state {
    image_entry_t images[MAX_IMAGES];
    size_t nimages;
    qc_mask_t *mask_use;
    kept_t kept[MAX_KEPT];
    size_t nkept;
    char *completed[MAX_COMPLETED];
    size_t ncompleted;
};

static struct qc_run_state *
state_of (qc_run_t *run)
{
    if (!run)
        return NULL;
    if (!run->state) {
        run->state = calloc (1, sizeof *run->state);
        if (!run->state)
            qc_run_fail (run, "out of memory for the run state");
    }
    return run->state;
}

const qc_ops_t *
qc_run_ops (const qc_run_t *run)
{
    return run && run->ops ? run->ops : qc_ops_cpu ();
}

/* The work size of [BaseImage.BaseImage] (1.25x without one). */
static qc_work_size_t
base_size (const qc_run_t *run)
{
    if (run->base && (unsigned) run->base->image_work_size.kind <= QC_WORK_DIM
        && run->base->image_work_size.value > 0)
        return run->base->image_work_size;
    return (qc_work_size_t) { QC_WORK_MAG, 1.25 };
}

/* HistoQC turns enable_bounding_box off for a slide whose
 * openslide.bounds-* it cannot read (BaseImage then warned); the box is
 * then the whole slide, read by the thumbnail rule. */
static int
use_bbox (const qc_run_t *run)
{
    if (!run->base || !run->base->enable_bounding_box)
        return 0;
    static const char *const props[] = {
        "openslide.bounds-x", "openslide.bounds-y", "openslide.bounds-width",
        "openslide.bounds-height"
    };
    for (size_t i = 0; i < 4; i++)
        if (!qc_slide_property (run->slide, props[i]))
            return 0;
    return 1;
}

static image_entry_t *
find_image (struct qc_run_state *st, qc_work_size_t size)
{
    for (size_t i = 0; i < st->nimages; i++)
        if (st->images[i].size.kind == size.kind
            && st->images[i].size.value == size.value)
            return &st->images[i];
    return NULL;
}

/* NULL, the run failed with why unless quiet. */
static image_entry_t *
read_failed (qc_run_t *run, int quiet, const char *work_size, const char *why)
{
    if (!quiet)
        qc_run_fail (run, "reading the image at %s: %s",
                     work_size ? work_size : "image_work_size", why);
    return NULL;
}

/* Reads the image of kind and value into a new entry. With quiet set
 * (a read ahead), a failure is not the run's: NULL comes back without a
 * word, and the step that needs the image reads again and fails in its
 * own name; a warning waits in the entry for that step. */
static image_entry_t *
read_entry (qc_run_t *run, struct qc_run_state *st, qc_work_size_t size,
            const char *work_size, const qc_rgb_t *from, int quiet)
{
    if (st->nimages >= MAX_IMAGES) {
        if (!quiet)
            qc_run_fail (run, "more than %d different image sizes in one run",
                         MAX_IMAGES);
        return NULL;
    }
    if (!run->slide) {
        if (!quiet)
            qc_run_fail (run, "no slide to read");
        return NULL;
    }
    qc_region_request_t req = {
        .size = size,
        .base_mag = run->base_mag,
        .use_bbox = use_bbox (run),
        .bbox_x = run->bbox_x, .bbox_y = run->bbox_y,
        .bbox_w = run->bbox_w, .bbox_h = run->bbox_h,
        .area = run->base ? run->base->resample_area : 0,
    };
    qc_region_plan_t plan;
    qc_rgb_t *img = NULL;
    char why[512];
    if (qc_region_plan (run->slide, &req, &plan, why, sizeof why) != 0)
        return read_failed (run, quiet, work_size, why);
    /* Every image of a run covers the same region (the slide, or its
     * bounding box), so one no larger than from is from, shrunk. */
    if (from && plan.out_w <= from->w && plan.out_h <= from->h
        && (img = qc_rgb_new (plan.out_w, plan.out_h))
        && qc_run_ops (run)->resize_rgb (from, QC_INTERP_AREA, img) != 0)
        qc_rgb_destroy (&img);
    if (img)
        qc_log (QC_LOG_DEBUG, run->step ? run->step : "run_state",
                "%s: image at %s: %d x %d, shrunk from %d x %d in memory",
                run->filename ? run->filename : "?",
                work_size ? work_size : "image_work_size", img->w, img->h,
                from->w, from->h);
    else if (!qc_slide_level_reliable (run->slide, plan.level, why,
                                       sizeof why))
        return read_failed (run, quiet, work_size, why);
    else if (qc_region_read (run->slide, &plan, run->read_threads > 0
                             ? run->read_threads : 1, &img, why,
                             sizeof why) != 0) {
        return read_failed (run, quiet, work_size, why);
    } else
        qc_log (QC_LOG_DEBUG, run->step ? run->step : "run_state",
                "%s: image at %s: level %d, %d x %d%s", run->filename
                ? run->filename : "?", work_size ? work_size : "image_work_size",
                plan.level, img->w, img->h, quiet ? " (read ahead)" : "");
    char *warning = NULL;
    if (plan.warning[0] && quiet && !(warning = strdup (plan.warning))) {
        qc_rgb_destroy (&img);
        return NULL;
    }
    if (plan.warning[0] && !quiet)
        qc_run_warn (run, "%s", plan.warning);
    image_entry_t *e = &st->images[st->nimages++];
    e->size = size;
    e->rgb = img;
    e->gray = NULL;
    e->warning = warning;
    return e;
}

/* The image at work_size (NULL: image_work_size), read on first use
 * and kept. With from set, a new image may instead be area-resized from
 * from when it covers the same region and is at least as large. */
static image_entry_t *
image_entry_via (qc_run_t *run, const char *work_size, const qc_rgb_t *from)
{
    struct qc_run_state *st = state_of (run);
    if (!st)
        return NULL;
    qc_work_size_t size;
    if (!work_size)
        size = base_size (run);
    else if (qc_work_size_parse (work_size, &size) != 0) {
        qc_run_fail (run, "image_work_size '%.64s' is not a magnification "
                     "(1.25x), downscale factor (0.1), level (2) or size in "
                     "pixels (500)", work_size);
        return NULL;
    }
    image_entry_t *e = find_image (st, size);
    /* a run that has failed (a step asking for the image and then for
     * the mask of its size, after the read failed) reads no more: the
     * failure is said once */
    if (!e && run->out && !run->out->ok)
        return NULL;
    if (!e)
        return read_entry (run, st, size, work_size, from, 0);
    if (e->warning) {
        qc_run_warn (run, "%s", e->warning);
        free (e->warning);
        e->warning = NULL;
    }
    return e;
}

int
qc_run_preread (qc_run_t *run)
{
    if (!run || !run->out || !run->out->ok)
        return -1;
    struct qc_run_state *st = state_of (run);
    if (!st)
        return -1;
    qc_work_size_t size = base_size (run);
    if (find_image (st, size))
        return 0;
    return read_entry (run, st, size, NULL, NULL, 1) ? 0 : -1;
}

static image_entry_t *
image_entry (qc_run_t *run, const char *work_size)
{
    return image_entry_via (run, work_size, NULL);
}

const qc_rgb_t *
qc_run_image_shrunk (qc_run_t *run, const char *work_size,
                     const qc_rgb_t *from)
{
    image_entry_t *e = image_entry_via (run, work_size, qc_rgb_valid (from)
                                                        ? from : NULL);
    return e ? e->rgb : NULL;
}

const qc_rgb_t *
qc_run_image (qc_run_t *run, const char *work_size)
{
    image_entry_t *e = image_entry (run, work_size);
    return e ? e->rgb : NULL;
}

const qc_fimg_t *
qc_run_gray (qc_run_t *run, const char *work_size)
{
    image_entry_t *e = image_entry (run, work_size);
    if (!e)
        return NULL;
    if (!e->gray) {
        qc_fimg_t *g = qc_fimg_new (e->rgb->w, e->rgb->h);
        if (!g || qc_run_ops (run)->rgb_to_gray (e->rgb, g) != 0) {
            qc_fimg_destroy (&g);
            qc_run_fail (run, "out of memory for a %d x %d gray image",
                         e->rgb->w, e->rgb->h);
            return NULL;
        }
        e->gray = g;
    }
    return e->gray;
}

qc_mask_t *
qc_run_mask (qc_run_t *run)
{
    struct qc_run_state *st = state_of (run);
    if (!st)
        return NULL;
    if (st->mask_use)
        return st->mask_use;
    const qc_rgb_t *img = qc_run_image (run, NULL);
    if (!img)
        return NULL;
    qc_mask_t *m = qc_mask_new (img->w, img->h);
    if (!m) {
        qc_run_fail (run, "out of memory for a %d x %d mask", img->w, img->h);
        return NULL;
    }
    qc_mask_fill (m, 1);
    st->mask_use = m;
    return m;
}

int
qc_run_keep_mask (qc_run_t *run, const char *name, qc_mask_t *mask)
{
    /* Ownership passes even on failure, so a caller never has to know
     * whether to free. */
    if (!run || !name || !*name || strlen (name) >= MAX_NAME
        || !qc_mask_valid (mask)) {
        qc_mask_destroy (&mask);
        if (run)
            qc_run_fail (run, "qc_run_keep_mask: bad argument");
        return -1;
    }
    struct qc_run_state *st = state_of (run);
    if (!st) {
        qc_mask_destroy (&mask);
        return -1;
    }
    for (size_t i = 0; i < st->nkept; i++)
        if (strcmp (st->kept[i].name, name) == 0) {
            if (st->kept[i].mask != mask)
                qc_mask_destroy (&st->kept[i].mask);
            st->kept[i].mask = mask;
            return 0;
        }
    if (st->nkept >= MAX_KEPT) {
        qc_mask_destroy (&mask);
        return qc_run_fail (run, "more than %d kept masks", MAX_KEPT);
    }
    snprintf (st->kept[st->nkept].name, MAX_NAME, "%s", name);
    st->kept[st->nkept].mask = mask;
    st->kept[st->nkept].forced = 0;
    st->nkept++;
    return 0;
}

const qc_mask_t *
qc_run_kept_mask (const qc_run_t *run, const char *name)
{
    if (!run || !run->state || !name)
        return NULL;
    for (size_t i = 0; i < run->state->nkept; i++)
        if (strcmp (run->state->kept[i].name, name) == 0)
            return run->state->kept[i].mask;
    return NULL;
}

int
qc_run_force_mask (qc_run_t *run, const char *name)
{
    if (!run || !name)
        return -1;
    for (size_t i = 0; run->state && i < run->state->nkept; i++)
        if (strcmp (run->state->kept[i].name, name) == 0) {
            run->state->kept[i].forced = 1;
            return 0;
        }
    return qc_run_fail (run, "no kept mask '%.64s' to force", name);
}

int
qc_run_apply_forced (qc_run_t *run, qc_mask_t *mask)
{
    if (!run || !qc_mask_valid (mask))
        return -1;
    for (size_t i = 0; run->state && i < run->state->nkept; i++) {
        const kept_t *k = &run->state->kept[i];
        if (!k->forced)
            continue;
        if (k->mask->w != mask->w || k->mask->h != mask->h)
            return qc_run_fail (run, "forced mask '%s' is %d x %d, the mask "
                                "%d x %d", k->name, k->mask->w, k->mask->h,
                                mask->w, mask->h);
        qc_run_ops (run)->mask_logic (mask, k->mask, QC_LOGIC_ANDNOT, mask);
    }
    return 0;
}

/* The step's own mask_statistics (HistoQC: params.get ("mask_statistics",
 * s["mask_statistics"])), else [BaseImage.BaseImage]'s. */
static qc_mask_statistics_t
mask_stat_mode (const qc_run_t *run)
{
    const char *v = NULL;
    if (run->params
        && qc_config_get_string (run->params, "mask_statistics", NULL, &v,
                                 NULL, 0) == 0 && v) {
        if (strcmp (v, "absolute") == 0)
            return QC_MASK_ABSOLUTE;
        if (strcmp (v, "relative2image") == 0)
            return QC_MASK_RELATIVE2IMAGE;
        if (strcmp (v, "relative2mask") == 0)
            return QC_MASK_RELATIVE2MASK;
    }
    return run->base ? run->base->mask_statistics : QC_MASK_RELATIVE2MASK;
}

static size_t
count_set (const qc_run_t *run, const qc_mask_t *m)
{
    size_t n = 0;
    qc_run_ops (run)->mask_count (m, &n);
    return n;
}

double
qc_run_mask_fraction (const qc_run_t *run, const qc_mask_t *found,
                      const qc_mask_t *mask_before)
{
    if (!run || !qc_mask_valid (found))
        return NAN;
    size_t after = count_set (run, found);
    switch (mask_stat_mode (run)) {
    case QC_MASK_ABSOLUTE:
        return (double) after;
    case QC_MASK_RELATIVE2IMAGE:
        return (double) after / (double) qc_npix (found->w, found->h);
    case QC_MASK_RELATIVE2MASK:
    default:
        if (!qc_mask_valid (mask_before))
            return NAN;
        {
            size_t before = count_set (run, mask_before);
            if (before == 0)
                return -100.0;
            return 1.0 - (double) after / (double) before;
        }
    }
}

int
qc_run_set_mask_statistics (qc_run_t *run, const char *column,
                            const qc_mask_t *after, const qc_mask_t *before)
{
    if (!run || !column)
        return -1;
    double v = qc_run_mask_fraction (run, after, before);
    if (isnan (v))
        return qc_run_fail (run, "%s: mask statistics of an invalid mask",
                            column);
    /* HistoQC prints str (int) for absolute and for the empty-mask -100
     * of relative2mask, str (float) otherwise. */
    if (mask_stat_mode (run) == QC_MASK_ABSOLUTE || v == -100.0)
        return qc_run_set (run, column, "%.0f", v);
    char buf[QC_PYFLOAT_LEN];
    return qc_run_set (run, column, "%s", qc_pyfloat (v, buf, sizeof buf));
}

/* Hands an encoded PNG to the result as "_<suffix>.png". */
static int
add_png (qc_run_t *run, const char *suffix, int rc, unsigned char *data,
         size_t size, const char *why)
{
    if (rc != 0) {
        free (data);
        return qc_run_fail (run, "encoding %s.png: %s", suffix, why);
    }
    char name[QC_RESULT_MAX_FILENAME];
    int n = snprintf (name, sizeof name, "_%s.png", suffix);
    if (n < 0 || (size_t) n >= sizeof name
        || qc_result_take_file (run->out, name, data, size) != 0) {
        free (data);
        return qc_run_fail (run, "cannot add file %s.png (%zu bytes) to the "
                            "result", suffix, size);
    }
    return 0;
}

static int
save_args_ok (qc_run_t *run, const char *suffix)
{
    if (!run || !run->out)
        return 0;
    if (!suffix || !*suffix || strchr (suffix, '/')) {
        qc_run_fail (run, "bad file suffix");
        return 0;
    }
    return 1;
}

int
qc_run_save_mask (qc_run_t *run, const char *suffix, const qc_mask_t *m)
{
    if (!save_args_ok (run, suffix))
        return -1;
    unsigned char *data = NULL;
    size_t size = 0;
    char why[256] = "invalid mask";
    int rc = qc_mask_valid (m) ? qc_png_encode_mask (m, &data, &size, why,
                                                     sizeof why) : -1;
    return add_png (run, suffix, rc, data, size, why);
}

int
qc_run_save_rgb (qc_run_t *run, const char *suffix, const qc_rgb_t *img)
{
    if (!save_args_ok (run, suffix))
        return -1;
    unsigned char *data = NULL;
    size_t size = 0;
    char why[256] = "invalid image";
    int rc = qc_rgb_valid (img) ? qc_png_encode_rgb (img, &data, &size, why,
                                                     sizeof why) : -1;
    return add_png (run, suffix, rc, data, size, why);
}

int
qc_run_save_fimg (qc_run_t *run, const char *suffix, const qc_fimg_t *img,
                  float lo, float hi)
{
    if (!save_args_ok (run, suffix))
        return -1;
    if (!qc_fimg_valid (img) || !(hi > lo) || !isfinite (lo) || !isfinite (hi))
        return qc_run_fail (run, "%s.png: invalid image or range", suffix);
    unsigned char *data = NULL;
    size_t size = 0;
    char why[256] = "";
    if (lo == 0.0f && hi == 1.0f) {
        /* the encoder's own conversion (qc_px_u8_from_unit) already
         * clips to [0, 1], and scaling by 1 changes no value: the same
         * bytes without a pass over a copy */
        int rc = qc_png_encode_fimg (img, &data, &size, why, sizeof why);
        return add_png (run, suffix, rc, data, size, why);
    }
    qc_fimg_t *scaled = qc_fimg_new (img->w, img->h);
    if (!scaled)
        return qc_run_fail (run, "out of memory for %s.png", suffix);
    /* To [0, 1] for the encoder (img_as_ubyte of the clipped value). */
    double scale = 1.0 / ((double) hi - (double) lo);
    qc_run_ops (run)->fimg_affine (img, scale, -(double) lo * scale, 0.0, 1.0,
                                   scaled);
    int rc = qc_png_encode_fimg (scaled, &data, &size, why, sizeof why);
    qc_fimg_destroy (&scaled);
    return add_png (run, suffix, rc, data, size, why);
}

/* The module name without ":instance". */
static size_t
module_len (const char *module)
{
    const char *c = strchr (module, ':');
    return c ? (size_t) (c - module) : strlen (module);
}

int
qc_run_mark_completed (qc_run_t *run, const char *module)
{
    if (!run || !module || !*module)
        return -1;
    struct qc_run_state *st = state_of (run);
    if (!st)
        return -1;
    size_t n = module_len (module);
    for (size_t i = 0; i < st->ncompleted; i++)
        if (strlen (st->completed[i]) == n
            && memcmp (st->completed[i], module, n) == 0)
            return 0;
    if (st->ncompleted >= MAX_COMPLETED)
        return qc_run_fail (run, "more than %d completed steps", MAX_COMPLETED);
    char *copy = strndup (module, n);
    if (!copy)
        return qc_run_fail (run, "out of memory");
    st->completed[st->ncompleted++] = copy;
    return 0;
}

int
qc_run_has_completed (const qc_run_t *run, const char *module)
{
    if (!run || !run->state || !module)
        return 0;
    size_t n = module_len (module);
    for (size_t i = 0; i < run->state->ncompleted; i++)
        if (strlen (run->state->completed[i]) == n
            && memcmp (run->state->completed[i], module, n) == 0)
            return 1;
    return 0;
}

void
qc_run_state_free (qc_run_t *run)
{
    if (!run || !run->state)
        return;
    struct qc_run_state *st = run->state;
    for (size_t i = 0; i < st->nimages; i++) {
        qc_rgb_destroy (&st->images[i].rgb);
        qc_fimg_destroy (&st->images[i].gray);
        free (st->images[i].warning);
    }
    qc_mask_destroy (&st->mask_use);
    for (size_t i = 0; i < st->nkept; i++)
        qc_mask_destroy (&st->kept[i].mask);
    for (size_t i = 0; i < st->ncompleted; i++)
        free (st->completed[i]);
    free (st);
    run->state = NULL;
}

const qc_mask_t *
qc_run_named_mask (qc_run_t *run, const char *name)
{
    if (!run || !name)
        return NULL;
    if (strcmp (name, "img_mask_use") == 0)
        return qc_run_mask (run);
    const qc_mask_t *m = qc_run_kept_mask (run, name);
    if (!m && strncmp (name, "img_mask_", 9) == 0)
        m = qc_run_kept_mask (run, name + 9);
    if (!m)
        qc_run_fail (run, "mask_name '%.100s': no earlier step made a mask of "
                     "that name (img_mask_use, or a mask such as "
                     "pen_markings that a step keeps)", name);
    return m;
}
