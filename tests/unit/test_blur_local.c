/* Accuracy of the blur detectors on slides with known blur:
 *
 *  - generated slides (bin/qc-mkslide --truth, all features, several seeds,
 *    sizes and blur strengths): BlurDetectionModule.
 *    identifyBlurryRegionsLocal's map, restricted as in the pipeline to the
 *    tissue still in use (truth tissue less pen, bubbles and coverslip
 *    edge, which earlier steps remove), must reach Dice >= 0.8 against the
 *    blur truth at the 1.25x mask size; HistoQC's detector with its
 *    config.ini parameters is scored alongside (printed, not required);
 *  - the real slides CMU-1-Small-Region and TCGA-CR-7395 (no blur to
 *    speak of): the local detector flags under 1% of the tissue, while
 *    HistoQC's flags all of CMU-1's, as HistoQC itself did (its reference
 *    results.tsv: blurry_removed_percent 1.0): the faithful module keeps
 *    HistoQC's failure, the new one fixes it.
 *
 * Dice and fractions are printed per slide (the numbers the issue asks
 * for). Run from the repository root (bin/qc-mkslide, ../shared). */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/modules/blur_algo.h"
#include "kernels/png/png_io.h"
#include "kernels/slide/region_read.h"
#include "tests/unit/check.h"
#include "tests/unit/slide_fixtures.h"

#pragma GCC diagnostic ignored "-Wformat-zero-length"


static const qc_ops_t *ops;
static char tmp[64];

static void
remove_tree (const char *dir)
{
    DIR *d = opendir (dir);
    if (!d)
        return;
    struct dirent *e;
    char p[1024];
    while ((e = readdir (d)) != NULL) {
        if (strcmp (e->d_name, ".") && strcmp (e->d_name, "..")) {
            snprintf (p, sizeof p, "%s/%s", dir, e->d_name);
            unlink (p);
        }
    }
    closedir (d);
    rmdir (dir);
}

/* A truth PNG (255 = set) resampled to w x h, nearest. */
static qc_mask_t *
truth_mask (const char *name, const char *which, int w, int h)
{
    char path[512], err[256];
    snprintf (path, sizeof path, "%s/%s_truth_%s.png", tmp, name, which);
    qc_rgb_t *rgb = qc_png_read_rgb (path, err, sizeof err);
    CHECK (rgb != NULL, "%s: %s", path, err);
    if (!rgb)
        return NULL;
    qc_mask_t *m = qc_mask_new (rgb->w, rgb->h), *out = qc_mask_new (w, h);
    for (size_t i = 0; m && i < qc_npix (rgb->w, rgb->h); i++)
        m->px[i] = rgb->px[3 * i] > 127;
    if (!m || !out || ops->resize_mask (m, QC_INTERP_NEAREST, out) != 0)
        qc_mask_destroy (&out);
    qc_mask_destroy (&m);
    qc_rgb_destroy (&rgb);
    return out;
}

static size_t
count (const qc_mask_t *m)
{
    size_t n = 0;
    ops->mask_count (m, &n);
    return n;
}

/* A work-size map brought to the mask's size and limited to it, as the
 * module does before reporting. */
static qc_mask_t *
at_mask_size (const qc_mask_t *work, const qc_mask_t *use)
{
    qc_mask_t *f = qc_mask_new (use->w, use->h);
    if (f && (ops->resize_mask (work, QC_INTERP_NEAREST, f) != 0
              || ops->mask_logic (f, use, QC_LOGIC_AND, f) != 0))
        qc_mask_destroy (&f);
    return f;
}

typedef struct {
    qc_rgb_t *work, *base;    /* 2.5x and 1.25x */
    qc_fimg_t *gray;          /* of work */
} slide_imgs_t;

static int
read_slide (const char *path, slide_imgs_t *s)
{
    char err[512];
    memset (s, 0, sizeof *s);
    qc_slide_t *osr = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE,
                                          err, sizeof err);
    CHECK (osr != NULL, "open %s: %s", path, err);
    if (!osr)
        return -1;
    s->work = qc_region_read_work_size (osr, "2.5x", 0, 1, 2, err, sizeof err);
    CHECK (s->work != NULL, "%s 2.5x: %s", path, err);
    s->base = qc_region_read_work_size (osr, "1.25x", 0, 1, 2, err, sizeof err);
    CHECK (s->base != NULL, "%s 1.25x: %s", path, err);
    qc_slide_close (&osr);
    if (!s->work || !s->base)
        return -1;
    s->gray = qc_fimg_new (s->work->w, s->work->h);
    return s->gray && ops->rgb_to_gray (s->work, s->gray) == 0 ? 0 : -1;
}

static void
free_slide (slide_imgs_t *s)
{
    qc_rgb_destroy (&s->work);
    qc_rgb_destroy (&s->base);
    qc_fimg_destroy (&s->gray);
}

/* Both detectors on one slide, against mask use (1.25x size): the
 * local and HistoQC maps at the mask's size in *local, *histoqc. */
static void
detect (const slide_imgs_t *s, const qc_mask_t *use, qc_mask_t **local,
        qc_mask_t **histoqc)
{
    int w = s->gray->w, h = s->gray->h;
    qc_mask_t *tissue = qc_mask_new (w, h), *map = qc_mask_new (w, h);
    qc_blur_local_params_t lp;
    qc_blur_local_defaults (&lp);
    double thr = 0;
    *local = *histoqc = NULL;
    CHECK (tissue && map);
    if (!tissue || !map)
        goto done;
    CHECK (ops->resize_mask (use, QC_INTERP_NEAREST, tissue) == 0);
    CHECK (qc_blur_local_map (ops, s->gray, tissue, &lp, map, &thr) == 0);
    CHECK (thr >= lp.absolute_threshold, "threshold %g", thr);
    *local = at_mask_size (map, use);
    qc_blur_histoqc_params_t hp = { 100, 0.15 };   /* HistoQC config.ini */
    CHECK (qc_blur_histoqc_map (ops, s->gray, &hp, map) == 0);
    *histoqc = at_mask_size (map, use);
done:
    qc_mask_destroy (&tissue);
    qc_mask_destroy (&map);
}

static void
test_generated (void)
{
    /* width, height, seed, blur sigma (level-0 px; 60 is the default of a
     * 60,000 px slide, where the blur spans ~4 px at 2.5x) */
    static const struct { const char *w, *h, *seed, *sigma; } cases[] = {
        { "8000", "6000", "6", "60" },
        { "10000", "7500", "8", "40" },
        { "12000", "9000", "3", "60" },
        { "12000", "9000", "11", "80" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char name[32], out[128];
        snprintf (name, sizeof name, "gen%s", cases[k].seed);
        snprintf (out, sizeof out, "%s/%s.svs", tmp, name);
        char *argv[] = {
            FX_MKSLIDE, "-o", out, "--width", (char *) cases[k].w, "--height",
            (char *) cases[k].h, "--seed", (char *) cases[k].seed,
            "--blur-sigma", (char *) cases[k].sigma, "--truth", tmp,
            "--truth-width", "1024", NULL
        };
        int rc = fx_mkslide (argv);
        CHECK (rc == 0, "qc-mkslide %s failed", name);
        slide_imgs_t s;
        if (rc != 0 || read_slide (out, &s) != 0)
            continue;
        int bw = s.base->w, bh = s.base->h;
        qc_mask_t *use = truth_mask (name, "tissue", bw, bh);
        qc_mask_t *blur = truth_mask (name, "blur", bw, bh);
        const char *gone[] = { "pen", "bubble", "edge" };
        for (int g = 0; use && g < 3; g++) {
            qc_mask_t *m = truth_mask (name, gone[g], bw, bh);
            if (m)
                ops->mask_logic (use, m, QC_LOGIC_ANDNOT, use);
            qc_mask_destroy (&m);
        }
        qc_mask_t *local = NULL, *histoqc = NULL;
        if (use && blur) {
            detect (&s, use, &local, &histoqc);
            CHECK (count (blur) > 100, "%s: blur truth of %zu px", name,
                   count (blur));
        }
        if (local && histoqc) {
            double dl = fx_dice (local, blur, NULL), dh = fx_dice (histoqc, blur, NULL);
            printf ("%s (%sx%s, blur sigma %s): Dice local %.3f, HistoQC "
                    "%.3f; tissue flagged local %.3f, HistoQC %.3f\n", name,
                    cases[k].w, cases[k].h, cases[k].sigma, dl, dh,
                    (double) count (local) / count (use),
                    (double) count (histoqc) / count (use));
            CHECK (dl >= 0.8, "%s: local Dice %.3f", name, dl);
        }
        qc_mask_destroy (&use);
        qc_mask_destroy (&blur);
        qc_mask_destroy (&local);
        qc_mask_destroy (&histoqc);
        free_slide (&s);
    }
}

static void
test_real (void)
{
    static const char *const names[] = {
        "CMU-1-Small-Region.svs", "TCGA-CR-7395-pyramid.svs"
    };
    for (int k = 0; k < 2; k++) {
        char path[1024];
        snprintf (path, sizeof path, "%s/slides/real/%s", check_shared_dir (),
                  names[k]);
        slide_imgs_t s;
        if (read_slide (path, &s) != 0) {
            free_slide (&s);
            continue;
        }
        /* Tissue: what is clearly stained at 1.25x (gray < 0.8). */
        qc_fimg_t *g = qc_fimg_new (s.base->w, s.base->h);
        qc_mask_t *use = qc_mask_new (s.base->w, s.base->h);
        qc_mask_t *local = NULL, *histoqc = NULL;
        if (g && use && ops->rgb_to_gray (s.base, g) == 0
            && ops->threshold (g, -INFINITY, 0.8, use) == 0)
            detect (&s, use, &local, &histoqc);
        if (local && histoqc) {
            double fl = (double) count (local) / count (use);
            double fh = (double) count (histoqc) / count (use);
            printf ("%s: tissue flagged blurry: local %.4f, HistoQC %.4f\n",
                    names[k], fl, fh);
            CHECK (fl < 0.01, "%s: local flags %.4f", names[k], fl);
            if (k == 0)
                CHECK (fh > 0.99, "HistoQC's detector should flag all of "
                       "CMU-1 (it did in HistoQC): %.4f", fh);
        }
        qc_fimg_destroy (&g);
        qc_mask_destroy (&use);
        qc_mask_destroy (&local);
        qc_mask_destroy (&histoqc);
        free_slide (&s);
    }
}

int
main (void)
{
    ops = qc_ops_cpu ();
    test_real ();
    if (access (FX_MKSLIDE, X_OK) != 0) {
        CHECK (0, "%s not built (make bin/qc-mkslide, from the repository "
               "root)", FX_MKSLIDE);
        return check_done ("test_blur_local");
    }
    snprintf (tmp, sizeof tmp, "/tmp/test_blur_local.XXXXXX");
    CHECK (mkdtemp (tmp) != NULL);
    test_generated ();
    remove_tree (tmp);
    return check_done ("test_blur_local");
}
