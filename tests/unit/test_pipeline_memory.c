/* What a slide's images cost: the default pipeline's host images, at
 * their most, per pixel of the working image, and nothing of them left
 * once the slide is done. At 10x a working image is ~100-170 million
 * pixels, and a worker runs a slide per core: every byte a pixel here
 * is 0.1-0.17 GB a slide there. Before 2026-11-30 the run peaked at 61
 * bytes a pixel here (the classifier's five feature planes held to the
 * end of the slide, and made all at once beside the frangi op's
 * scratch; six stain planes; five full-size planes in the fold step);
 * 30.9 since. A real slide, read at its own
 * magnification (the whole level 0 is the working image), on the CPU
 * backend; the image bytes are counted where every host image's pixels
 * are taken and given back (image_cache.h). */
#include "kernels/image/image_cache.h"
#include "kernels/slide/slide.h"
#include "tests/unit/pipeline_fixtures.h"

/* The default pipeline's peak, images only (its PNGs' encoder buffers,
 * OpenSlide's tile cache, ops' own rows of scratch (frangi's gradients,
 * three rows each since 2026-12-01, were two full planes, 8 bytes a
 * pixel) and the libraries are not counted): the RGB image (3 bytes), its gray
 * plane (4), the classifier's five feature planes (20) and masks in the
 * pen step; later the kept masks (1 each) and a step's own planes (the
 * fold step's three density planes, 12). */
#define BYTES_PER_PIXEL_MAX 33.0

static void
run_at_full_size (const char *name, const char *work_size)
{
    char path[2048];
    slide_path (path, sizeof path, "real", name);
    char *text = qc_pipeline_config_at_work_size (NULL, work_size);
    CHECK (text != NULL);
    qc_pipeline_t *p = text ? qc_pipeline_new (text, err, sizeof err) : NULL;
    CHECK (p != NULL, "%s", err);
    free (text);
    qc_slide_t *slide = qc_slide_open (path, err, sizeof err);
    CHECK (slide != NULL, "%s: %s", name, err);
    if (!p || !slide) {
        qc_slide_close (&slide);
        qc_pipeline_destroy (&p);
        return;
    }
    int64_t w = 0, h = 0;
    CHECK (qc_slide_level_size (slide, 0, &w, &h) == 0 && w > 0 && h > 0);
    qc_slide_close (&slide);

    /* the classifiers are trained (once a process) before counting: the
     * examples' images are the training's, not the slide's */
    qc_result_t *r = qc_result_new ();
    CHECK (r && qc_pipeline_run (p, path, r) == 0, "%s: %s", name,
           r && r->error ? r->error : "?");
    size_t before, peak, after;
    qc_image_cache_in_use (&before, NULL);
    qc_image_cache_reset_peak ();
    CHECK (qc_pipeline_run (p, path, r) == 0, "%s: %s", name,
           r->error ? r->error : "?");
    qc_image_cache_in_use (&after, &peak);
    double per_pixel = (double) (peak - before) / ((double) w * (double) h);
    printf ("%s at %s (%lld x %lld): images at most %.1f MB, %.1f bytes a "
            "pixel (bound %.0f); %zd bytes left after the slide\n", name,
            work_size, (long long) w, (long long) h,
            (double) (peak - before) / 1048576.0, per_pixel,
            BYTES_PER_PIXEL_MAX, (ssize_t) (after - before));
    CHECK (per_pixel <= BYTES_PER_PIXEL_MAX, "%s: %.1f bytes a pixel", name,
           per_pixel);
    /* at least the RGB image, its gray plane and a mask were alive: a
     * count that missed the images would pass the bound above */
    CHECK (per_pixel >= 8.0, "%s: %.1f bytes a pixel counted", name,
           per_pixel);
    CHECK (after == before, "%s: %zd image bytes outlive the slide", name,
           (ssize_t) (after - before));
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

int
main (void)
{
    quiet_logs ();
    if (getenv ("QC_TEST_VERBOSE"))       /* each step's image bytes */
        qc_log_set_stderr_level (QC_LOG_DEBUG);
    /* CMU-1-Small-Region: 2220 x 2967 at 20x, level 0 only */
    run_at_full_size ("CMU-1-Small-Region.svs", "20x");
    return check_done ("pipeline_memory");
}
