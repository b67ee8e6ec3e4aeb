/* The slide's images at working sizes, read once per run and cached;
 * see run.h. Keys are the parsed size (kind, value), not the text:
 * "1.25x", "1.25X" and " 1.250x" are one image, read once. */
#include "kernels/run/run_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/slide/region_read.h"
#include "shared/clock.h"
#include "shared/log.h"

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

/* The request for the run's region at size. */
static qc_region_request_t
request_at (const qc_run_t *run, qc_work_size_t size)
{
    return (qc_region_request_t) {
        .size = size,
        .base_mag = run->base_mag,
        .use_bbox = use_bbox (run),
        .bbox_x = run->bbox_x, .bbox_y = run->bbox_y,
        .bbox_w = run->bbox_w, .bbox_h = run->bbox_h,
        .area = run->base ? run->base->resample_area : 0,
    };
}

int
qc_run_size_at (const qc_run_t *run, qc_work_size_t size, int *w, int *h)
{
    if (!run || !run->slide || !w || !h)
        return -1;
    qc_region_request_t req = request_at (run, size);
    qc_region_plan_t plan;
    char why[512];
    if (qc_region_plan (run->slide, &req, &plan, why, sizeof why) != 0)
        return -1;
    *w = plan.out_w;
    *h = plan.out_h;
    return 0;
}

/* NULL, the run failed with why unless quiet. The size as the config
 * gives it: a step's own work_size, else the base image_work_size. */
static image_entry_t *
read_failed (qc_run_t *run, int quiet, qc_work_size_t size, const char *work_size,
             const char *why)
{
    static const char *const form[] = { "%gx", "%g (a downscale)", "level %g", "%g pixels" };
    char text[64];
    snprintf (text, sizeof text, size.kind <= QC_WORK_DIM ? form[size.kind] : "%g",
              size.value);
    if (!quiet)
        qc_run_fail (run, "cannot read the slide at %s (%s, first needed here): %s",
                     work_size ? work_size : text,
                     work_size ? "the step's image_work_size" : "image_work_size", why);
    return NULL;
}

/* Each line of text a warning of run's, in the name of the slide's own
 * step (HistoQC's BaseImage, whose section holds the slide's
 * properties): what reading the image found is the slide's (its
 * magnification taken from elsewhere, its glass dark, no colour in it),
 * not that of whichever step read the image first (a lab that filters
 * qc.log by step took a pen classifier for the one that found a
 * fluorescence slide). */
static void
warn_lines (qc_run_t *run, const char *text)
{
    const char *step = run->step;
    run->step = "BaseImage.BaseImage";
    for (const char *p = text; *p;) {
        size_t n = strcspn (p, "\n");
        if (n)
            qc_run_warn (run, "%.*s", (int) n, p);
        p += n + (p[n] == '\n');
    }
    run->step = step;
}

/* The plan's image decoded on the run's device from the slide's JPEG
 * tiles, which the CPU reads compressed (region_read.h's
 * qc_region_decode), for a read on the lane's own thread, which its GPU
 * would otherwise wait for while the CPU decodes (an image a step asks
 * for at a size of its own; a read ahead, on threads that overlap the
 * GPU's work on the slide before, reads pixels, which the focus step's
 * read ahead needs). NULL: the host reads the pixels (no device
 * decoder, or this slide's tiles are not for it: why at debug level).
 * QC_GPU_DECODE in the environment turns it on (1) or off (0) whatever
 * the table's decode_by_default (ops.h) says. */
static qc_rgb_t *
decode_on_device (qc_run_t *run, const qc_region_plan_t *plan,
                  const char *work_size)
{
    const qc_ops_t *ops = qc_run_ops (run);
    if (!ops->device || !ops->decode_jpeg
        || !qc_jpeg_decode_wanted (ops->decode_by_default))
        return NULL;
    char why[512];
    double t0 = qc_clock_s ();
    qc_rgb_t *img = qc_region_decode (run->slide, plan, ops, why, sizeof why);
    const char *step = run->step ? run->step : "run_state";
    const char *name = run->filename ? run->filename : "?";
    const char *size = work_size ? work_size : "image_work_size";
    if (img)
        qc_log (QC_LOG_DEBUG, step, "%s: image at %s: level %d, %d x %d, its JPEG "
                "tiles decoded on the device (%s) in %.1f ms", name, size,
                plan->level, img->w, img->h, ops->name, (qc_clock_s () - t0) * 1e3);
    else
        qc_log (QC_LOG_DEBUG, step, "%s: image at %s: read on the host, not decoded "
                "on the device: %s", name, size, why);
    return img;
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
    qc_region_request_t req = request_at (run, size);
    qc_region_plan_t plan;
    qc_rgb_t *img = NULL;
    char why[512];
    if (qc_region_plan (run->slide, &req, &plan, why, sizeof why) != 0)
        return read_failed (run, quiet, size, work_size, why);
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
        return read_failed (run, quiet, size, work_size, why);
    else if (!quiet && (img = decode_on_device (run, &plan, work_size)))
        ;
    else {
        int threads = run->read_threads > 0 ? run->read_threads : 1;
        double t0 = qc_clock_s ();
        if (qc_region_read (run->slide, &plan, threads, &img, why,
                            sizeof why) != 0)
            return read_failed (run, quiet, size, work_size, why);
        /* the time and threads: what a GPU lane's read ahead spends */
        qc_log (QC_LOG_DEBUG, run->step ? run->step : "run_state",
                "%s: image at %s: level %d, %d x %d%s, read in %.1f ms on %d "
                "thread%s", run->filename ? run->filename : "?",
                work_size ? work_size : "image_work_size", plan.level, img->w,
                img->h, quiet ? " (read ahead)" : "",
                (qc_clock_s () - t0) * 1e3, threads, threads > 1 ? "s" : "");
    }
    /* the warnings, a line each: said now, or kept for the step that
       needs the image read ahead */
    const char *look = st->nimages == 0 ? qc_run_look_warning (img) : NULL;
    /* and the file's damaged side images (a label, a thumbnail): its
       levels are QC'd, but a lab should hear of the damage */
    char side[2048] = "";
    if (st->nimages == 0)
        qc_slide_notes (run->slide, side, sizeof side);
    char said[sizeof plan.warning + 512 + sizeof side];
    snprintf (said, sizeof said, "%s%s%s%s%s", plan.warning,
              plan.warning[0] && (look || side[0]) ? "\n" : "", look ? look : "",
              look && side[0] ? "\n" : "", side);
    char *warning = NULL;
    if (said[0] && quiet && !(warning = strdup (said))) {
        qc_rgb_destroy (&img);
        return NULL;
    }
    if (said[0] && !quiet)
        warn_lines (run, said);
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
    struct qc_run_state *st = run_state_of (run);
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
        warn_lines (run, e->warning);
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
    struct qc_run_state *st = run_state_of (run);
    if (!st)
        return -1;
    qc_work_size_t size = base_size (run);
    if (find_image (st, size))
        return 0;
    return read_entry (run, st, size, NULL, NULL, 1) ? 0 : -1;
}

const qc_rgb_t *
qc_run_image_ahead (const qc_run_t *run)
{
    if (!run || !run->state || !run->out || !run->out->ok)
        return NULL;
    image_entry_t *e = find_image (run->state, base_size (run));
    return e && qc_rgb_valid (e->rgb) ? e->rgb : NULL;
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
