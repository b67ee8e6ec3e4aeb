/* Tests of the tissue-mask steps on slides, through the pipeline with
 * HistoQC's own parameters (its config.ini sections): HistoQC's columns,
 * file names, sizes and colours on the real slides (against
 * ../shared/reference/histoqc where comparable), clean failures on the
 * odd files, determinism (same slide twice, one or four read threads),
 * and the tissue mask's Dice against the truth of generated slides
 * (bin/qc-mkslide --truth), printed per slide. */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openslide.h>

#include "kernels/modules/masks.h"
#include "kernels/ops/ops.h"
#include "kernels/png/png_io.h"
#include "tests/unit/pipeline_fixtures.h"
#include "tests/unit/slide_fixtures.h"


/* HistoQC's default config, restricted to this group's steps. */
#define SECTIONS                                                          \
    "[BaseImage.BaseImage]\nimage_work_size = 1.25x\nconfirm_base_mag: False\n" \
    "mask_statistics = relative2mask\n"                                   \
    "[BasicModule.getBasicStats]\nimage_work_size = 1.25x\n"              \
    "[LightDarkModule.getIntensityThresholdPercent:bubble]\nname: bubble\n" \
    "upper_threshold: .94\nlower_threshold: .82\nupper_variance: 11\ninvert: true\n" \
    "[LightDarkModule.getIntensityThresholdPercent:tissue]\nname: bright\n" \
    "upper_threshold: .9\nlower_std: 10\n"                                \
    "[LightDarkModule.getIntensityThresholdPercent:darktissue]\nname: dark\n" \
    "upper_threshold: .15\ninvert: true\n"                                \
    "[MorphologyModule.removeSmallObjects]\nmin_size: 64\n"               \
    "[MorphologyModule.removeFatlikeTissue]\nkernel_size: 10\n"           \
    "max_keep_size: 1000\nfat_cell_size: 64\n"                            \
    "[MorphologyModule.fillSmallHoles]\nmin_size: 1000\n"                 \
    "[SaveModule.saveFinalMask]\noverlay: True\n"                         \
    "[SaveModule.saveMacro]\ndim: 500\n"                                  \
    "[SaveModule.saveThumbnails]\nimage_work_size: 1.25x\nsmall_dim: 500\n" \
    "[BasicModule.finalComputations]\n"                                   \
    "[BasicModule.finalProcessingSpur]\ndisk_radius: 5\n"                 \
    "[BasicModule.finalProcessingArea]\narea_threshold:  10000\n"

static const char full_config[] =
    "[pipeline]\nsteps= BasicModule.getBasicStats\n"
    "    LightDarkModule.getIntensityThresholdPercent:tissue\n"
    "    LightDarkModule.getIntensityThresholdPercent:darktissue\n"
    "    MorphologyModule.removeFatlikeTissue\n"
    "    MorphologyModule.fillSmallHoles\n"
    "    MorphologyModule.removeSmallObjects\n"
    "    BasicModule.finalProcessingSpur\n"
    "    BasicModule.finalProcessingArea\n"
    "    SaveModule.saveFinalMask\n"
    "    SaveModule.saveMacro\n"
    "    SaveModule.saveThumbnails\n"
    "    BasicModule.finalComputations\n" SECTIONS;

/* The tissue steps only: what the Dice bar is about. */
static const char tissue_config[] =
    "[pipeline]\nsteps= LightDarkModule.getIntensityThresholdPercent:tissue\n"
    "    MorphologyModule.removeFatlikeTissue\n"
    "    MorphologyModule.fillSmallHoles\n"
    "    MorphologyModule.removeSmallObjects\n"
    "    SaveModule.saveFinalMask\n" SECTIONS;

static qc_rgb_t *
decode (const qc_result_t *r, const char *suffix)
{
    const qc_file_t *f = qc_result_file (r, suffix);
    return f ? qc_png_decode_rgb (f->data, f->size, err, sizeof err) : NULL;
}

static int
file_size_is (const qc_result_t *r, const char *suffix, int w, int h)
{
    qc_rgb_t *img = decode (r, suffix);
    int ok = img && img->w == w && img->h == h;
    if (!ok)
        fprintf (stderr, "%s: %d x %d, want %d x %d\n", suffix, img ? img->w : -1,
                 img ? img->h : -1, w, h);
    qc_rgb_destroy (&img);
    return ok;
}

static double
seconds (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static void
test_tcga (qc_pipeline_t *p, qc_result_t *r)
{
    char path[1024];
    slide_path (path, sizeof path, "real", "TCGA-CR-7395-pyramid.svs");
    double t0 = seconds ();
    CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
    printf ("TCGA-CR-7395-pyramid.svs: %.3f s\n", seconds () - t0);
    /* HistoQC's sizes for this slide (reference folder). */
    static const char *const masks[] = {
        "_bright.png", "_dark.png", "_fatlike.png", "_small_fill.png",
        "_small_remove.png", "_spur.png", "_areathresh.png", "_mask_use.png",
        "_fuse.png", "_thumb.png", NULL
    };
    for (int i = 0; masks[i]; i++)
        CHECK (file_size_is (r, masks[i], 278, 223), "%s", masks[i]);
    CHECK (file_size_is (r, "_thumb_small.png", 500, 401));
    CHECK (qc_result_file (r, "_macro.png") == NULL);
    CHECK (r->warnings && strstr (r->warnings, "TCGA-CR-7395-pyramid.svs- "
                                  "saveMacro Can't Read 'macro' Image from "
                                  "Slide's Associated Images"), "%s",
           r->warnings ? r->warnings : "");
    /* HistoQC removed 37.1% as glass after removing the coverslip edge
     * first; the same threshold on this image removes nearly the same. */
    double bright = atof (get (r, "bright"));
    CHECK (fabs (bright - 0.3712) < 0.01, "bright %f", bright);
    CHECK (strcmp (get (r, "fatlike_tissue_removed_num_regions"), "0") == 0);
    CHECK (strcmp (get (r, "fatlike_tissue_removed_percent"), "0.0") == 0);
    CHECK (strchr (get (r, "small_tissue_filled_mean_area"), '.'), "a float");
    CHECK (atoi (get (r, "small_tissue_filled_num_regions")) > 10);
    CHECK (atoi (get (r, "pixels_to_use")) > 30000
           && atoi (get (r, "pixels_to_use")) < 45000, "%s", get (r, "pixels_to_use"));

    /* The removed glass agrees with HistoQC's _bright.png. */
    char ref[1024];
    snprintf (ref, sizeof ref, "%s/reference/histoqc/TCGA-CR-7395-pyramid.svs/"
              "TCGA-CR-7395-pyramid.svs_bright.png", check_shared_dir ());
    qc_rgb_t *theirs = qc_png_read_rgb (ref, err, sizeof err);
    qc_rgb_t *ours = decode (r, "_bright.png");
    if (theirs && ours && theirs->w == ours->w && theirs->h == ours->h) {
        size_t same = 0, n = qc_npix (ours->w, ours->h);
        for (size_t i = 0; i < n; i++)
            same += (theirs->px[3 * i] > 127) == (ours->px[3 * i] > 127);
        CHECK ((double) same / (double) n > 0.99, "agreement %f",
               (double) same / (double) n);
    } else
        CHECK (0, "reference _bright.png: %s", err);
    qc_rgb_destroy (&theirs);
    qc_rgb_destroy (&ours);

    /* _fuse.png: R = B = the final mask, G = the gray thumbnail. */
    qc_rgb_t *fuse = decode (r, "_fuse.png"), *mask = decode (r, "_mask_use.png");
    qc_rgb_t *thumb = decode (r, "_thumb.png");
    if (fuse && mask && thumb) {
        size_t bad = 0, n = qc_npix (fuse->w, fuse->h);
        for (size_t i = 0; i < n; i++) {
            const uint8_t *t = thumb->px + 3 * i;
            double g = (0.2125 * t[0] + 0.7154 * t[1] + 0.0721 * t[2]) / 255.0;
            bad += fuse->px[3 * i] != mask->px[3 * i]
                   || fuse->px[3 * i + 2] != mask->px[3 * i]
                   || abs (fuse->px[3 * i + 1] - (int) rint (g * 255)) > 1;
        }
        CHECK (bad == 0, "%zu fuse pixels differ", bad);
    } else
        CHECK (0, "fuse, mask or thumb missing");
    qc_rgb_destroy (&fuse);
    qc_rgb_destroy (&mask);
    qc_rgb_destroy (&thumb);
}

static void
test_other_real (qc_pipeline_t *p, qc_result_t *r)
{
    char path[1024];
    /* Fluorescence: all "tissue" is dark; HistoQC's numbers exactly. */
    slide_path (path, sizeof path, "real", "test3-DAPI-2.ndpi");
    CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
    CHECK (strcmp (get (r, "bright"), "0.5951294567062818") == 0, "%s", get (r, "bright"));
    CHECK (strcmp (get (r, "dark"), "1.0") == 0);
    CHECK (strcmp (get (r, "small_tissue_filled_percent"), "-100") == 0);
    CHECK (strcmp (get (r, "areaThresh"), "-100") == 0);
    CHECK (strcmp (get (r, "pixels_to_use"), "0") == 0);
    /* first the slide's dark glass (run_look.c), then HistoQC's own */
    CHECK (r->warnings && strncmp (r->warnings, "the slide's glass is dark", 25) == 0
           && strstr (r->warnings, "|After LightDarkModule.getIntensityThresholdPercent:dark "
                                   "NO tissue remains detectable!"), "%s",
           r->warnings ? r->warnings : "");
    CHECK (qc_result_file (r, "_macro.png") != NULL, "the NDPI has a macro");

    /* The macro: longer side 500, short side rounded. */
    slide_path (path, sizeof path, "real", "CMU-1-Small-Region.svs");
    CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
    openslide_t *osr = openslide_open (path);
    int64_t mw = 0, mh = 0;
    if (osr)
        openslide_get_associated_image_dimensions (osr, "macro", &mw, &mh);
    openslide_close (osr);
    int ew, eh;
    qc_save_macro_size (mw, mh, 500, &ew, &eh);
    CHECK (mw > 0 && file_size_is (r, "_macro.png", ew, eh));
    qc_rgb_t *macro = decode (r, "_macro.png");
    if (macro) {                /* a photo of glass and label, not black */
        double sum = 0;
        for (size_t i = 0; i < qc_npix (macro->w, macro->h) * 3; i++)
            sum += macro->px[i];
        CHECK (sum / (double) (qc_npix (macro->w, macro->h) * 3) > 60);
    }
    qc_rgb_destroy (&macro);

    /* No magnification: a clear failure, as HistoQC cannot run it either. */
    slide_path (path, sizeof path, "real", "TCGA-CR-7395-01A-01-TS1.svs");
    CHECK (qc_pipeline_run (p, path, r) == -1);
    CHECK (r->error && strstr (r->error, "magnification")
           && strstr (r->error, "TCGA-CR-7395-01A-01-TS1.svs"), "%s",
           r->error ? r->error : "");
}

/* Same slide twice, and with four read threads (which also encode the
 * PNGs together at the end: kernels/png/png_queue.h): the same columns
 * and byte-identical files, in the same order, as one thread's first
 * run. */
static void
test_determinism (qc_pipeline_t *p)
{
    char path[1024];
    slide_path (path, sizeof path, "real", "CMU-1-Small-Region-pyramid.svs");
    qc_result_t *a = qc_result_new (), *b = qc_result_new ();
    CHECK (a && b);
    if (a)
        qc_pipeline_run (p, path, a);
    for (int round = 0; a && b && round < 3; round++) {
        qc_pipeline_set_read_threads (p, round == 0 ? 1 : 4);
        qc_pipeline_input_t in = { .path = path, .read_threads = round == 2 ? 7 : 0 };
        qc_pipeline_run_input (p, &in, b, NULL);
        CHECK (a->ok && b->ok && a->nkv == b->nkv && a->nfiles == b->nfiles,
               "round %d", round);
        for (size_t i = 0; i < a->nkv && i < b->nkv; i++)
            CHECK (strcmp (a->kv[i].key, b->kv[i].key) == 0
                   && strcmp (a->kv[i].value, b->kv[i].value) == 0,
                   "round %d: %s", round, a->kv[i].key);
        for (size_t i = 0; i < a->nfiles && i < b->nfiles; i++)
            CHECK (strcmp (a->files[i].name, b->files[i].name) == 0
                   && a->files[i].size == b->files[i].size
                   && memcmp (a->files[i].data, b->files[i].data,
                              a->files[i].size) == 0,
                   "round %d: %s", round, a->files[i].name);
    }
    qc_pipeline_set_read_threads (p, 1);
    qc_result_destroy (&a);
    qc_result_destroy (&b);
}

static int
mkslide (const char *dir, const char *name, int seed)
{
    char out[1024], sd[16];
    snprintf (out, sizeof out, "%s/%s", dir, name);
    snprintf (sd, sizeof sd, "%d", seed);
    char *argv[] = {FX_MKSLIDE, "-o", out, "--width", "12000", "--height", "9000",
                    "--seed", sd, "--truth", (char *) dir, "--truth-width", "1024",
                    "--threads", "2", NULL};
    return fx_mkslide (argv);
}

static void
test_generated (void)
{
    if (access (FX_MKSLIDE, X_OK) != 0) {
        CHECK (0, "%s not built (make bin/qc-mkslide)", FX_MKSLIDE);
        return;
    }
    qc_pipeline_t *p = qc_pipeline_new (tissue_config, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    char dir[] = "/tmp/qc-masks-XXXXXX";
    if (!p || !mkdtemp (dir))
        return;
    qc_result_t *r = qc_result_new ();
    /* Seed 5 is the hardest of seeds 1-8 (a pen stroke on glass, a
     * bubble on the tissue edge). */
    static const int seeds[] = { 1, 5, 7 };
    for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
        char name[32], path[1024], tp[1024];
        snprintf (name, sizeof name, "gen%d.svs", seeds[k]);
        CHECK (mkslide (dir, name, seeds[k]) == 0, "qc-mkslide seed %d", seeds[k]);
        snprintf (path, sizeof path, "%s/%s", dir, name);
        double t0 = seconds ();
        CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
        double t = seconds () - t0;
        qc_rgb_t *found = decode (r, "_mask_use.png");
        if (!found)
            continue;
        int w = found->w, h = found->h;
        snprintf (tp, sizeof tp, "%s/gen%d_truth_tissue.png", dir, seeds[k]);
        qc_mask_t *truth = fx_truth_at (tp, w, h);
        snprintf (tp, sizeof tp, "%s/gen%d_truth_pen.png", dir, seeds[k]);
        qc_mask_t *pen = fx_truth_at (tp, w, h);
        snprintf (tp, sizeof tp, "%s/gen%d_truth_bubble.png", dir, seeds[k]);
        qc_mask_t *bubble = fx_truth_at (tp, w, h);
        if (truth && pen && bubble) {
            qc_ops_cpu ()->mask_logic (pen, bubble, QC_LOGIC_OR, pen);
            double d = fx_dice_rgb (found, truth, NULL), dx = fx_dice_rgb (found, truth, pen);
            printf ("generated seed %d (12000 x 9000, mask %d x %d): tissue "
                    "Dice %.4f, %.4f without pen and bubble pixels; %.3f s\n",
                    seeds[k], w, h, d, dx, t);
            /* HistoQC's parameters: pen on glass and bubbles on tissue
             * edges are the other steps' job; the rest must be right. */
            CHECK (d >= 0.94, "seed %d: Dice %.4f", seeds[k], d);
            CHECK (dx >= 0.975, "seed %d: Dice without pen/bubble %.4f", seeds[k], dx);
        } else
            CHECK (0, "truth masks: %s", err);
        qc_mask_destroy (&truth);
        qc_mask_destroy (&pen);
        qc_mask_destroy (&bubble);
        qc_rgb_destroy (&found);
    }
    char cmd[1100];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK (system (cmd) == 0);
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

/* The project's default config runs these steps and writes their files. */
static void
test_default_config (void)
{
    qc_pipeline_t *p = qc_pipeline_new (NULL, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (!p)
        return;
    qc_result_t *r = qc_result_new ();
    char path[1024];
    slide_path (path, sizeof path, "real", "TCGA-CR-7395-pyramid.svs");
    CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
    CHECK (file_size_is (r, "_mask_use.png", 278, 223)
           && file_size_is (r, "_thumb_small.png", 500, 401));
    CHECK (atoi (get (r, "pixels_to_use")) > 30000);
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

/* LightDarkModule.removeBrightestPixels (in no bundled config) on a
 * real slide: with invert, the glass goes (the brightest of three gray
 * clusters) and the tissue stays; its statistic, its _bright.png and
 * its kept mask (for a later mask_name=) as HistoQC names them. */
static void
test_brightest_step (void)
{
    static const char config[] =
        "[pipeline]\nsteps= BasicModule.getBasicStats\n"
        "    LightDarkModule.removeBrightestPixels\n"
        "    SaveModule.saveMask:bright\n" SECTIONS
        "[LightDarkModule.removeBrightestPixels]\ninvert: True\n"
        "[SaveModule.saveMask:bright]\nsuffix: bright_kept\nmask_name: bright\n";
    qc_pipeline_t *p = qc_pipeline_new (config, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (!p)
        return;
    qc_result_t *r = qc_result_new ();
    char path[1024];
    slide_path (path, sizeof path, "real", "CMU-1-Small-Region.svs");
    CHECK (qc_pipeline_run (p, path, r) == 0 && r->ok, "%s", r->error ? r->error : "");
    /* relative2mask: the share of the mask before that the step removed */
    const char *stat = get (r, "brightestPixels");
    double frac = stat ? atof (stat) : -1;
    /* CMU-1-Small-Region: glass and pale tissue around its darker tissue */
    CHECK (frac > 0.2 && frac < 0.9, "brightestPixels %s", stat ? stat : "(none)");
    qc_rgb_t *removed = decode (r, "_bright.png"), *saved = decode (r, "_bright_kept.png");
    CHECK (removed && saved && removed->w == saved->w && removed->h == saved->h,
           "_bright.png and the kept mask's picture");
    /* what it removed and what it kept are the two sides of one mask */
    size_t n = removed && saved ? (size_t) removed->w * (size_t) removed->h : 0, both = 0,
           gone = 0;
    for (size_t i = 0; i < n; i++) {
        both += removed->px[3 * i] && saved->px[3 * i];
        gone += removed->px[3 * i] != 0;
    }
    CHECK (n && both == 0 && fabs ((double) gone / (double) n - frac) < 0.01,
           "%zu pixels both removed and kept; %zu of %zu removed, the statistic %.3f",
           both, gone, n, frac);
    qc_rgb_destroy (&removed);
    qc_rgb_destroy (&saved);
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

int
main (void)
{
    quiet_logs ();
    qc_pipeline_t *p = qc_pipeline_new (full_config, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (p) {
        CHECK (strcmp (qc_pipeline_column (p, qc_pipeline_ncolumns (p) - 1),
                       "warnings") == 0);
        qc_result_t *r = qc_result_new ();
        test_tcga (p, r);
        test_other_real (p, r);
        fx_run_odd_files (p, r);
        test_determinism (p);
        qc_result_destroy (&r);
    }
    qc_pipeline_destroy (&p);
    test_default_config ();
    test_brightest_step ();
    test_generated ();
    return check_done ("masks_slides");
}
