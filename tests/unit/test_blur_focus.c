/* Tests of the focus step (BlurDetectionModule.identifyFocusFaults,
 * kernels/modules/blur_focus.c) and what it reads with
 * (kernels/slide/slide_blocks.h):
 *
 *  - a generated slide's level measured from its JPEG coefficients and
 *    from OpenSlide's pixels agrees block by block, tile by tile or
 *    across tiles, and says which way it read and what;
 *  - the step through the pipeline on generated slides whose levels
 *    differ: 40x in 4x steps (10x read), 20x in 4x steps (no 10x: 20x
 *    read), 5x (none fine enough: a warning), no magnification at all
 *    (base_mag from the config), the pixel path (QC_DIRECT_READ=0), and
 *    the real 2x-step pyramid; fine blur found (Dice), only tissue tiles
 *    read, config errors refused; on several read threads the same
 *    results byte for byte as on one;
 *  - a slide out of focus all over is warned of (its median detail under
 *    warn_sharpness), a sharp one is not;
 *  - on a generated slide with pale tissue beside 1 um faults, the step
 *    flags the faults and little of the pale tissue.
 *
 * The level choice, the block measures and the blurry mask alone:
 * test_focus_algo.c. Run from the repository root (bin/qc-mkslide,
 * ../shared). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/modules/focus_algo.h"
#include "kernels/slide/block_measure.h"
#include "kernels/slide/slide_blocks.h"
#include "tests/unit/accuracy_fixtures.h"
#include "tests/unit/pipeline_fixtures.h"
#include "tests/unit/slide_fixtures.h"

static char tmp[64];


static int
mkslide (const char *name, const char *w, const char *h, const char *seed,
         const char *a1, const char *a2, const char *a3, const char *a4)
{
    char out[256];
    snprintf (out, sizeof out, "%s/%s.svs", tmp, name);
    char *argv[] = { FX_MKSLIDE, "-o", out, "--width", (char *) w, "--height",
                     (char *) h, "--seed", (char *) seed, "--truth", tmp,
                     "--truth-width", "1024", "--threads", "2", (char *) a1,
                     (char *) a2, (char *) a3, (char *) a4, NULL };
    return fx_mkslide (argv);
}

/* Every block of level through blocks, one tile at a time: hf and luma
 * (level blocks, row-major). 0 or -1. */
static int
read_level_blocks (qc_slide_t *s, int level, int band, float *hf,
                   float *luma, int bw, int bh, qc_slide_blocks_stats_t *st,
                   char *way, size_t waylen)
{
    qc_slide_blocks_t *b = qc_slide_blocks_open (s, level, band, err,
                                                 sizeof err);
    if (!b)
        return -1;
    int tw, th;
    qc_slide_blocks_tile (b, &tw, &th);
    int tbw = tw / 8, tbh = th / 8, rc = 0;
    float *th_ = malloc ((size_t) tbw * tbh * sizeof *th_);
    float *tl = malloc ((size_t) tbw * tbh * sizeof *tl);
    float *tm = malloc ((size_t) tbw * tbh * sizeof *tm);
    for (int by = 0; th_ && tl && tm && rc == 0 && by < bh; by += tbh)
        for (int bx = 0; rc == 0 && bx < bw; bx += tbw) {
            int nbx = bw - bx < tbw ? bw - bx : tbw;
            int nby = bh - by < tbh ? bh - by : tbh;
            rc = qc_slide_blocks_read (b, bx, by, nbx, nby, th_, tm, tl, err,
                                       sizeof err);
            for (int j = 0; rc == 0 && j < nby; j++)
                for (int i = 0; i < nbx; i++) {
                    hf[(size_t) (by + j) * bw + bx + i] = th_[j * nbx + i];
                    luma[(size_t) (by + j) * bw + bx + i] = tl[j * nbx + i];
                }
        }
    qc_slide_blocks_stats (b, st);
    snprintf (way, waylen, "%s", qc_slide_blocks_way (b));
    free (th_);
    free (tm);
    free (tl);
    qc_slide_blocks_close (&b);
    return th_ && tl ? rc : -1;
}

/* The two ways of measuring a level agree. */
static void
test_blocks_two_ways (void)
{
    CHECK (mkslide ("ways", "4000", "3000", "3", "--focus-sigma", "6", NULL,
                    NULL) == 0);
    char path[256];
    snprintf (path, sizeof path, "%s/ways.svs", tmp);
    qc_slide_t *direct = qc_slide_open (path, err, sizeof err);
    qc_slide_t *os = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE, err,
                                         sizeof err);
    CHECK (direct && os, "%s", err);
    if (!direct || !os)
        goto done;
    int64_t w = 0, h = 0;
    qc_slide_level_size (direct, 1, &w, &h);
    int bw = (int) ((w + 7) / 8), bh = (int) ((h + 7) / 8);
    size_t n = (size_t) bw * bh;
    float *h1 = malloc (n * 4), *l1 = malloc (n * 4);
    float *h2 = malloc (n * 4), *l2 = malloc (n * 4);
    qc_slide_blocks_stats_t s1, s2;
    char w1[64] = "", w2[64] = "";
    CHECK (h1 && l1 && h2 && l2);
    if (!h1 || !l1 || !h2 || !l2)
        goto free_all;
    CHECK (read_level_blocks (direct, 1, QC_BLOCK_HF_BAND, h1, l1, bw, bh,
                              &s1, w1, sizeof w1) == 0, "%s", err);
    CHECK (read_level_blocks (os, 1, QC_BLOCK_HF_BAND, h2, l2, bw, bh, &s2,
                              w2, sizeof w2) == 0, "%s", err);
    CHECK (strstr (w1, "JPEG coefficients") && strcmp (w2, "pixels") == 0,
           "%s / %s", w1, w2);
    CHECK (s1.coded_bytes > 10000 && s1.pixels == 0 && s1.blocks == n,
           "%llu bytes, %llu px, %llu blocks", (unsigned long long) s1.coded_bytes,
           (unsigned long long) s1.pixels, (unsigned long long) s1.blocks);
    CHECK (s2.coded_bytes == 0 && s2.pixels >= (uint64_t) (w * h)
           && s2.blocks == n);
    /* The pixels went through the inverse DCT, the chroma upsampling
     * and two colour conversions, each rounding: a little detail more
     * (a gray level or so), never a different picture. */
    size_t close = 0, tissue = 0;
    double sum1 = 0, sum2 = 0, lmax = 0, lsum = 0;
    for (size_t i = 0; i < n; i++) {
        lmax = fmax (lmax, fabs (l1[i] - l2[i]));
        lsum += fabs (l1[i] - l2[i]);
        if (l1[i] > 200)
            continue;
        tissue++;
        sum1 += h1[i];
        sum2 += h2[i];
        close += fabsf (h1[i] - h2[i]) < 0.1f * fmaxf (h1[i], h2[i]) + 1.0f;
    }
    printf ("level 1 (%lld x %lld): %zu tissue blocks, mean detail %.2f "
            "(coefficients) vs %.2f (pixels), %.1f%% within 10%% + 1, luma "
            "differs by %.2f on average, %.2f at most\n", (long long) w,
            (long long) h, tissue, sum1 / tissue, sum2 / tissue,
            100.0 * close / tissue, lsum / n, lmax);
    CHECK (tissue > 1000 && close > 0.95 * tissue, "%zu of %zu", close, tissue);
    CHECK (fabs (sum1 - sum2) < 0.1 * sum1, "%g vs %g", sum1, sum2);
    CHECK (lsum / n < 0.5 && lmax < 8, "luma %g, %g", lsum / n, lmax);

    /* A read across tiles gives what the tiles give. */
    qc_slide_blocks_t *b = qc_slide_blocks_open (direct, 1, QC_BLOCK_HF_BAND,
                                                 err, sizeof err);
    float across[40 * 12], am[40 * 12], al[40 * 12];
    CHECK (b && qc_slide_blocks_read (b, 20, 25, 40, 12, across, am, al, err,
                                      sizeof err) == 0, "%s", err);
    int same = 1;
    for (int j = 0; b && j < 12; j++)
        for (int i = 0; i < 40; i++)
            same &= across[j * 40 + i] == h1[(size_t) (25 + j) * bw + 20 + i];
    CHECK (same, "a read across tiles differs from the tiles");
    /* Blocks outside the level are refused. */
    CHECK (b && qc_slide_blocks_read (b, bw, 0, 1, 1, across, am, al, err,
                                      sizeof err) == -1);
    CHECK (b && qc_slide_blocks_read (b, 0, 0, 0, 1, across, am, al, err,
                                      sizeof err) == -1);
    qc_slide_blocks_close (&b);
    CHECK (!qc_slide_blocks_open (direct, 9, QC_BLOCK_HF_BAND, err, sizeof err));
free_all:
    free (h1);
    free (l1);
    free (h2);
    free (l2);
done:
    qc_slide_close (&direct);
    qc_slide_close (&os);
}

/* The tissue step and the focus step; BASE_LINES go into
 * [BaseImage.BaseImage], a focus section's lines follow. */
#define CONFIG(BASE_LINES)                                                 \
    "[pipeline]\nsteps= LightDarkModule.getIntensityThresholdPercent:tissue\n" \
    "    BlurDetectionModule.identifyFocusFaults\n"                        \
    "[LightDarkModule.getIntensityThresholdPercent:tissue]\nname: bright\n" \
    "upper_threshold: .9\nlower_std: 10\n"                                 \
    "[BaseImage.BaseImage]\nimage_work_size = 1.25x\nimage_resample = area\n" \
    BASE_LINES "[BlurDetectionModule.identifyFocusFaults]\n"
#define CONFIG_HEAD CONFIG ("")

/* The tissue and focus steps at image_work_size size ("5x"), or NULL. */
static qc_pipeline_t *
pipeline_at (const char *size)
{
    char text[4096], line[64];
    snprintf (text, sizeof text, "%s", CONFIG_HEAD);
    snprintf (line, sizeof line, "image_work_size = %s", size);
    char *at = strstr (text, "image_work_size = 1.25x\n");
    if (!at || strlen (text) + strlen (line) >= sizeof text)
        return NULL;
    memmove (at + strlen (line), at + strlen ("image_work_size = 1.25x"),
             strlen (at + strlen ("image_work_size = 1.25x")) + 1);
    memcpy (at, line, strlen (line));
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p != NULL, "%s: %s", size, err);
    return p;
}

/* The built-in config with its work size (BaseImage's, getBasicStats')
 * at 5x, or NULL. */
static qc_pipeline_t *
default_at_5x (void)
{
    const char *from = "image_work_size = 1.25x", *to = "image_work_size = 5x   ";
    char *text = strdup (qc_pipeline_default_config ());
    int n = 0;
    for (char *at = text; at && (at = strstr (at, from)); at += strlen (from), n++)
        memcpy (at, to, strlen (to));
    qc_pipeline_t *p = n ? qc_pipeline_new (text, err, sizeof err) : NULL;
    CHECK (p != NULL, "the default config at 5x (%d work sizes): %s", n, err);
    free (text);
    return p;
}

/* The pixels r's _blurry.png flags, or -1 without one. */
static long
flagged_pixels (const qc_result_t *r)
{
    qc_mask_t *m = fx_result_mask (r, "_blurry.png");
    long n = m ? 0 : -1;
    for (size_t i = 0; m && i < qc_npix (m->w, m->h); i++)
        n += m->px[i] != 0;
    qc_mask_destroy (&m);
    return n;
}

/* Runs the focus step on tmp/name.svs; Dice of _blurry.png against the
 * focus truth (name's), or -1 without truth. */
static double
run_focus (const qc_pipeline_t *p, const char *name, qc_result_t *r,
           int with_truth)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s.svs", tmp, name);
    int rc = qc_pipeline_run (p, path, r);
    CHECK (rc == 0 && r->ok, "%s: %s", name, r->error ? r->error : "");
    if (rc != 0 || !with_truth)
        return -1;
    const qc_file_t *f = qc_result_file (r, "_blurry.png");
    qc_rgb_t *img = f ? qc_png_decode_rgb (f->data, f->size, err, sizeof err)
                      : NULL;
    CHECK (img != NULL, "%s: no _blurry.png", name);
    if (!img)
        return -1;
    snprintf (path, sizeof path, "%s/%s_truth_focus.png", tmp, name);
    qc_mask_t *truth = fx_truth_at (path, img->w, img->h);
    double d = truth ? fx_dice_rgb (img, truth, NULL) : -1;
    qc_mask_destroy (&truth);
    qc_rgb_destroy (&img);
    return d;
}

/* The share of tmp/name's truth "which" that r's _blurry.png flags, or
 * -1. */
static double
truth_flagged (const qc_result_t *r, const char *name, const char *which)
{
    qc_mask_t *found = fx_result_mask (r, "_blurry.png");
    qc_mask_t *truth = found ? fx_truth_named (tmp, name, which, found->w, found->h)
                             : NULL;
    double share = fx_share_flagged (found, truth, NULL, NULL, NULL);
    qc_mask_destroy (&found);
    qc_mask_destroy (&truth);
    return share;
}

/* Weakly stained tissue in focus (qc-mkslide's pale, at 0.3 of its
 * stain, JPEG quality 50) beside 1 um faults: the faults are found and
 * the pale tissue is not flagged, which without the ratio of fine to
 * coarser detail (ratio_threshold = 0) a tenth of it was. */
static void
test_pale_tissue (void)
{
    char out[256];
    snprintf (out, sizeof out, "%s/pale.svs", tmp);
    char *argv[] = { FX_MKSLIDE, "-o", out, "--width", "8000", "--height", "6000",
                     "--seed", "45", "--truth", tmp, "--truth-width", "1024",
                     "--threads", "2", "--features", "all,pale",
                     "--pale-factor", "0.3", "--quality", "50", "--focus-sigma", "4",
                     NULL };
    CHECK (fx_mkslide (argv) == 0, "qc-mkslide pale");
    /* the default pipeline (pen, folds and the rest removed before the
       step, as a lab runs it), and the same without the ratio */
    const char *text = qc_pipeline_default_config ();
    const char *section = "[BlurDetectionModule.identifyFocusFaults]\n";
    const char *at = strstr (text, section);
    char *off_text = NULL;
    CHECK (at != NULL, "the default config has no focus step");
    if (at && asprintf (&off_text, "%.*sratio_threshold: 0\n%s",
                        (int) (at - text + (ptrdiff_t) strlen (section)), text,
                        at + strlen (section)) < 0)
        off_text = NULL;
    qc_pipeline_t *on = qc_pipeline_new (NULL, err, sizeof err);
    qc_pipeline_t *off = off_text ? qc_pipeline_new (off_text, err, sizeof err) : NULL;
    free (off_text);
    qc_result_t *r = qc_result_new ();
    CHECK (on && off && r, "%s", err);
    if (on && off && r) {
        run_focus (on, "pale", r, 0);
        double pale_on = truth_flagged (r, "pale", "pale");
        double d_on = truth_flagged (r, "pale", "focus");
        double ratio_ref = qc_focus_last_stats ()->ratio_reference;
        run_focus (off, "pale", r, 0);
        double pale_off = truth_flagged (r, "pale", "pale");
        double d_off = truth_flagged (r, "pale", "focus");
        printf ("pale tissue (0.3 of its stain) beside 1 um faults: %.1f%% of it flagged "
                "(%.1f%% with ratio_threshold 0), %.1f%% of the faults (%.1f%%); median "
                "ratio %.3f\n", 100 * pale_on, 100 * pale_off, 100 * d_on, 100 * d_off,
                ratio_ref);
        CHECK (pale_on >= 0 && pale_on < 0.01, "pale tissue flagged: %.3f", pale_on);
        CHECK (pale_off > 0.03, "without the ratio, %.3f of the pale tissue flagged: "
               "the slide no longer provokes the fault the rule mends", pale_off);
        CHECK (d_on >= 0.8 && d_on >= d_off - 0.01, "%.3f of the faults flagged "
               "(without the ratio %.3f)", d_on, d_off);
        CHECK (ratio_ref > 0.2 && ratio_ref < 1, "median ratio %g", ratio_ref);
    }
    qc_result_destroy (&r);
    qc_pipeline_destroy (&on);
    qc_pipeline_destroy (&off);
}

/* many (a run on threads read threads) gives one's columns and images,
 * byte for byte. */
static void
check_same_result (const qc_result_t *one, const qc_result_t *many,
                   const char *how, int threads)
{
    CHECK (one->nkv == many->nkv && one->nfiles == many->nfiles, "%s", how);
    for (size_t i = 0; i < one->nkv && i < many->nkv; i++)
        CHECK (strcmp (one->kv[i].key, many->kv[i].key) == 0
               && strcmp (one->kv[i].value, many->kv[i].value) == 0,
               "%s, %d threads: %s %s against %s", how, threads,
               one->kv[i].key, many->kv[i].value, one->kv[i].value);
    for (size_t i = 0; i < one->nfiles && i < many->nfiles; i++)
        CHECK (one->files[i].size == many->files[i].size
               && memcmp (one->files[i].data, many->files[i].data,
                          one->files[i].size) == 0,
               "%s, %d threads: %s differs", how, threads, one->files[i].name);
}

/* The step on read_threads threads gives the single thread's results
 * byte for byte (columns and images) and reads the same tiles and
 * blocks: the tiles are cut into runs, one per thread, whose lists are
 * joined in tile order. */
static void
check_threads_same (const qc_pipeline_t *p, const char *name, const char *how)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s.svs", tmp, name);
    const qc_focus_stats_t *st = qc_focus_last_stats ();
    qc_result_t *one = qc_result_new (), *many = qc_result_new ();
    CHECK (one && many);
    if (!one || !many)
        goto done;
    qc_pipeline_input_t in = { .path = path, .read_threads = 1 };
    CHECK (qc_pipeline_run_input (p, &in, one, NULL) == 0 && one->ok);
    qc_focus_stats_t st1 = *st;
    for (int threads = 3; threads <= 16; threads += 13) {
        in.read_threads = threads;
        CHECK (qc_pipeline_run_input (p, &in, many, NULL) == 0 && many->ok);
        CHECK (st->tiles == st1.tiles && st->read.blocks == st1.read.blocks
               && st->read.coded_bytes == st1.read.coded_bytes
               && st->read.pixels == st1.read.pixels
               && st->read.coef_reads + st->read.pixel_reads
                  == st1.read.coef_reads + st1.read.pixel_reads,
               "%s, %d threads: %ld tiles %llu blocks, one thread %ld %llu", how,
               threads, st->tiles, (unsigned long long) st->read.blocks, st1.tiles,
               (unsigned long long) st1.read.blocks);
        check_same_result (one, many, how, threads);
    }
    printf ("%s: 3 and 16 read threads give one thread's results (%ld tiles, "
            "%llu blocks)\n", how, st1.tiles, (unsigned long long) st1.read.blocks);
done:
    qc_result_destroy (&one);
    qc_result_destroy (&many);
}

/* A GPU lane's read ahead (qc_pipeline_prepare_input with read
 * threads) measures the tiles the image shows anything darker than
 * max_gray over (focus_ahead.h); the step then takes the tiles it
 * needs from there and reads the others itself. The results are a
 * plain one-thread run's, byte for byte. all: every tile the step needs
 * was read ahead (the step read none itself); else only some were. */
static void
check_read_ahead (const qc_pipeline_t *p, const char *name, const char *how,
                  int all)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s.svs", tmp, name);
    const qc_focus_stats_t *st = qc_focus_last_stats ();
    qc_result_t *one = qc_result_new (), *ahead = qc_result_new ();
    CHECK (one && ahead);
    if (!one || !ahead)
        goto done;
    qc_pipeline_input_t in = { .path = path, .read_threads = 1 };
    CHECK (qc_pipeline_run_input (p, &in, one, NULL) == 0 && one->ok);
    qc_focus_stats_t st1 = *st;
    CHECK (st1.ahead_tiles == 0 && st1.tiles_from_ahead == 0,
           "%s: a plain run reads nothing ahead", how);
    in.read_threads = 3;
    qc_pipeline_job_t *job = qc_pipeline_prepare_input (p, &in, ahead);
    CHECK (job && qc_pipeline_finish (&job, NULL) == 0 && ahead->ok, "%s: %s",
           how, ahead->error ? ahead->error : "no job");
    printf ("%s: %ld tiles read ahead, %ld of the %ld the step needed "
            "(%llu blocks read by the step itself, %llu by one thread)\n",
            how, st->ahead_tiles, st->tiles_from_ahead, st->tiles,
            (unsigned long long) st->read.blocks,
            (unsigned long long) st1.read.blocks);
    CHECK (st->tiles == st1.tiles && st->tiles > 0, "%s: %ld tiles, %ld", how,
           st->tiles, st1.tiles);
    if (all)
        CHECK (st->tiles_from_ahead == st->tiles && st->read.blocks == 0
               && st->ahead_tiles >= st->tiles
               && st->ahead_read.blocks >= st1.read.blocks,
               "%s: %ld of %ld tiles read ahead, %llu blocks read after", how,
               st->tiles_from_ahead, st->tiles,
               (unsigned long long) st->read.blocks);
    else
        CHECK (st->tiles_from_ahead > 0 && st->tiles_from_ahead < st->tiles
               && st->read.blocks > 0 && st->read.blocks < st1.read.blocks,
               "%s: %ld of %ld tiles read ahead, %llu blocks read after", how,
               st->tiles_from_ahead, st->tiles,
               (unsigned long long) st->read.blocks);
    check_same_result (one, ahead, how, 3);
done:
    qc_result_destroy (&one);
    qc_result_destroy (&ahead);
}

static void
test_levels (void)
{
    qc_pipeline_t *p = qc_pipeline_new (CONFIG_HEAD, err, sizeof err);
    qc_pipeline_t *p40 = qc_pipeline_new (CONFIG ("base_mag = 40\n"), err,
                                          sizeof err);
    CHECK (p && p40, "%s", err);
    qc_pipeline_t *p20 = pipeline_at ("5x");
    qc_result_t *r = qc_result_new ();
    if (!p || !p40 || !p20 || !r)
        goto done;
    const qc_focus_stats_t *st = qc_focus_last_stats ();
    /* 40x, levels 40x 10x 2.5x: the 10x level, from its coefficients */
    CHECK (mkslide ("mag40", "12000", "9000", "5", "--features", "tissue,focus",
                    "--focus-sigma", "6") == 0);
    double d = run_focus (p, "mag40", r, 1);
    printf ("40x: level %d (%.3gx, band %d), %ld of %ld tiles, %s, %.2f MB, "
            "%.3f s; fine blur Dice %.3f\n", st->level, st->level_mag,
            st->band, st->tiles, st->tiles_level, st->way,
            st->read.coded_bytes / 1e6, st->seconds, d);
    CHECK (st->level == 1 && st->fine_enough && st->band == QC_BLOCK_HF_BAND);
    CHECK (strstr (st->way, "JPEG") && st->read.coded_bytes > 0
           && st->read.pixels == 0);
    CHECK (st->tiles > 0 && st->tiles < st->tiles_level / 2,
           "%ld of %ld tiles read", st->tiles, st->tiles_level);
    CHECK (d >= 0.9, "40x fine blur Dice %.3f", d);
    CHECK (!r->warnings, "%s", r->warnings);
    CHECK (st->reference > 2 * QC_FOCUS_WARN_SHARPNESS, "sharp tissue's median detail "
           "%.3g", st->reference);
    double sharp_ref = st->reference;
    /* at 2.5x, 5x and 10x the mask's pixels are finer than the 10x
     * level's blocks: judged on cells of 2, 4 and 8 mask pixels, the
     * blur is found as at 1.25x (before: not judged; at 2.5x nothing was
     * flagged, at 5x the median detail came out 0: an operator's review) */
    static const char *const finer[] = { "image_work_size = 2.5x ",
                                         "image_work_size = 5x   ",
                                         "image_work_size = 10x  " };
    for (size_t f = 0; f < 3; f++) {
        char five[4096];
        snprintf (five, sizeof five, "%s", CONFIG_HEAD);
        char *at = strstr (five, "image_work_size = 1.25x");
        if (at)
            memcpy (at, finer[f], 23);
        qc_pipeline_t *p5 = at ? qc_pipeline_new (five, err, sizeof err) : NULL;
        qc_result_t *r5 = qc_result_new ();
        CHECK (p5 && r5, "%s", err);
        if (p5 && r5) {
            double d5 = run_focus (p5, "mag40", r5, 1);
            printf ("%.22s: median detail %.3g (1.25x: %.3g), fine blur Dice %.3f\n",
                    finer[f], st->reference, sharp_ref, d5);
            CHECK (d5 >= 0.85, "%s: fine blur Dice %.3f", finer[f], d5);
            CHECK (fabs (st->reference - sharp_ref) < 0.1 * sharp_ref, "%s: median "
                   "detail %.3g, at 1.25x %.3g", finer[f], st->reference, sharp_ref);
            CHECK (!r5->warnings, "%s: %s", finer[f], r5->warnings);
        }
        qc_result_destroy (&r5);
        qc_pipeline_destroy (&p5);
    }

    /* The same slide out of focus all over (1-3 um): judged against
     * itself, its blur is not flagged, so the step warns of its low
     * sharpness; a config may turn that off */
    CHECK (mkslide ("blurall", "12000", "9000", "5", "--features", "tissue,focus",
                    "--focus-all", NULL) == 0);
    run_focus (p, "blurall", r, 0);
    printf ("40x blurred all over: median detail %.3g (sharp: %.3g), warning: %s\n",
            st->reference, sharp_ref, r->warnings ? r->warnings : "(none)");
    CHECK (st->reference > 0 && st->reference < QC_FOCUS_WARN_SHARPNESS
           && st->reference < sharp_ref / 3, "median detail %.3g", st->reference);
    CHECK (r->warnings && strstr (r->warnings, "under warn_sharpness (5)")
           && strstr (r->warnings, "out of focus all over"), "%s",
           r->warnings ? r->warnings : "no warning");
    qc_pipeline_t *quiet = qc_pipeline_new (CONFIG_HEAD "warn_sharpness = 0\n", err,
                                            sizeof err);
    CHECK (quiet != NULL, "%s", err);
    if (quiet) {
        run_focus (quiet, "blurall", r, 0);
        CHECK (!r->warnings || !strstr (r->warnings, "warn_sharpness"), "%s", r->warnings);
    }
    qc_pipeline_destroy (&quiet);

    /* At magnification 2.6 the 10x level is read at band 1, which has
     * no coarser band: the ratio rule stands aside (it once cleared the
     * whole mask there), and 3 um faults are found as without it */
    CHECK (mkslide ("mag40f12", "12000", "9000", "5", "--features", "tissue,focus",
                    "--focus-sigma", "12") == 0);
    qc_pipeline_t *b1 = qc_pipeline_new (CONFIG_HEAD "magnification = 2.6\n", err,
                                         sizeof err);
    qc_pipeline_t *b1_off = qc_pipeline_new (CONFIG_HEAD "magnification = 2.6\n"
                                             "ratio_threshold = 0\n", err, sizeof err);
    CHECK (b1 && b1_off, "%s", err);
    if (b1 && b1_off) {
        double d1 = run_focus (b1, "mag40f12", r, 1);
        int band = st->band;
        double d1_off = run_focus (b1_off, "mag40f12", r, 1);
        printf ("40x at magnification 2.6: band %d, fine blur Dice %.3f (%.3f without the "
                "ratio)\n", band, d1, d1_off);
        CHECK (band == 1 && d1 > 0.3 && d1 == d1_off, "band %d: Dice %.3f, without the "
               "ratio %.3f", band, d1, d1_off);
    }
    qc_pipeline_destroy (&b1);
    qc_pipeline_destroy (&b1_off);

    /* The same from OpenSlide's pixels */
    setenv ("QC_DIRECT_READ", "0", 1);
    double dp = run_focus (p, "mag40", r, 1);
    unsetenv ("QC_DIRECT_READ");
    printf ("40x from pixels: %s, %.1f Mpx, %.3f s; Dice %.3f\n", st->way,
            st->read.pixels / 1e6, st->seconds, dp);
    CHECK (strcmp (st->way, "pixels") == 0 && st->read.pixels > 0
           && st->read.coded_bytes == 0);
    CHECK (fabs (dp - d) < 0.02, "%.3f vs %.3f", dp, d);

    /* on several threads: the same, both ways; and read ahead */
    check_threads_same (p, "mag40", "40x, coefficients");
    check_read_ahead (p, "mag40", "40x, read ahead", 1);
    setenv ("QC_DIRECT_READ", "0", 1);
    check_threads_same (p, "mag40", "40x, pixels");
    check_read_ahead (p, "mag40", "40x, pixels read ahead", 1);
    unsetenv ("QC_DIRECT_READ");
    /* a guess that misses: at max_gray .25 the read ahead takes only the
     * tiles with something that dark; the step reads the others */
    qc_pipeline_t *dark = qc_pipeline_new (CONFIG_HEAD "max_gray = .25\n", err,
                                           sizeof err);
    CHECK (dark != NULL, "%s", err);
    if (dark)
        check_read_ahead (dark, "mag40", "40x, max_gray .25, some read ahead",
                          0);
    qc_pipeline_destroy (&dark);

    /* 20x in 4x steps (20x, 5x, 1.25x): no 10x level; 20x is read, at a
     * lower band (the same detail in cycles a micrometre) */
    CHECK (mkslide ("mag20", "6000", "4500", "5", "--mag", "20",
                    "--features", "tissue,focus") == 0);
    d = run_focus (p, "mag20", r, 1);
    printf ("20x: level %d (%.3gx, band %d), %ld tiles; Dice %.3f\n",
            st->level, st->level_mag, st->band, st->tiles, d);
    CHECK (st->level == 0 && st->fine_enough && st->band == 3);
    CHECK (d >= 0.85, "20x fine blur Dice %.3f", d);
    CHECK (!r->warnings, "%s", r->warnings);
    CHECK (st->cell == 1, "20x at 1.25x: cells of %d", st->cell);
    /* at 5x a cell is what a mask pixel is at 1.25x, 4 x 4 of them, on a
     * 20x slide read at 20x too (before: a 20x block, 2 x 2, so min_size
     * and the windows took a quarter of the tissue they take at 1.25x) */
    {
        d = run_focus (p20, "mag20", r, 1);
        printf ("20x at 5x: cells of %d, Dice %.3f\n", st->cell, d);
        CHECK (st->cell == 4, "20x at 5x: cells of %d", st->cell);
        CHECK (d >= 0.85, "20x at 5x: fine blur Dice %.3f", d);
    }

    /* 5x: nothing fine enough; its finest level, and a warning */
    CHECK (mkslide ("mag5", "2000", "1500", "5", "--mag", "5", NULL,
                    NULL) == 0);
    run_focus (p, "mag5", r, 0);
    printf ("5x: level %d (%.3gx), warning: %s\n", st->level, st->level_mag,
            r->warnings ? r->warnings : "(none)");
    CHECK (st->level == 0 && !st->fine_enough);
    CHECK (r->warnings && strstr (r->warnings, "coarser than the 10x asked"),
           "%s", r->warnings ? r->warnings : "no warning");

    /* no magnification in the file: base_mag from the config */
    CHECK (mkslide ("nomag", "8000", "6000", "5", "--no-mag", NULL, NULL,
                    NULL) == 0);
    run_focus (p40, "nomag", r, 0);
    CHECK (st->level == 1 && st->fine_enough, "level %d", st->level);
    char path[256];
    snprintf (path, sizeof path, "%s/nomag.svs", tmp);
    CHECK (qc_pipeline_run (p, path, r) == -1 && r->error
           && strstr (r->error, "magnification"), "%s",
           r->error ? r->error : "passed");

    /* real slides: a 2x-step pyramid has its 10x level; the one-level
     * original is read at 20x */
    slide_path (path, sizeof path, "real", "CMU-1-Small-Region-pyramid.svs");
    CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
    CHECK (st->level == 1 && fabs (st->level_mag - 10) < 0.1, "level %d, %gx",
           st->level, st->level_mag);
    slide_path (path, sizeof path, "real", "CMU-1-Small-Region.svs");
    CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
    CHECK (st->level == 0 && st->band == 3, "level %d band %d", st->level,
           st->band);
    /* in focus all over: nothing flagged at 1.25x nor at 5x (before, a
     * dense, smooth region of it was, at 5x only: cells of 2 x 2 there) */
    CHECK (flagged_pixels (r) == 0, "CMU-1-Small-Region at 1.25x: %ld flagged",
           flagged_pixels (r));
    CHECK (qc_pipeline_run (p20, path, r) == 0, "%s", r->error ? r->error : "");
    CHECK (st->cell == 4 && flagged_pixels (r) == 0,
           "CMU-1-Small-Region at 5x: cells of %d, %ld flagged", st->cell,
           flagged_pixels (r));
    /* the same under the whole default config at 5x, whose earlier steps
       leave the mask the region was flagged in */
    qc_pipeline_t *whole = default_at_5x ();
    if (whole) {
        CHECK (qc_pipeline_run (whole, path, r) == 0, "%s", r->error ? r->error : "");
        printf ("default config at 5x, CMU-1-Small-Region: cells of %d, %ld mask pixels "
                "flagged\n", st->cell, flagged_pixels (r));
        CHECK (st->cell == 4 && flagged_pixels (r) == 0,
               "default config at 5x: cells of %d, %ld flagged", st->cell,
               flagged_pixels (r));
    }
    qc_pipeline_destroy (&whole);
    /* a slide whose pixels do not decode fails with a reason */
    slide_path (path, sizeof path, "odd", "unreadable.svs");
    CHECK (qc_pipeline_run (p, path, r) == -1 && r->error);
done:
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
    qc_pipeline_destroy (&p40);
    qc_pipeline_destroy (&p20);
}

static void
test_config_errors (void)
{
    static const char *const bad[] = {
        "magnification: ten\n", "magnification: 0\n", "window: 4\n",
        "window: 0\n", "relative_threshold: 1.5\n",
        "edge_relative_threshold: -1\n", "absolute_threshold: 9\n",
        "edge_erode: 100\n", "max_gray: 0\n", "mask_statistics: most\n",
        "image_work_size: 10x\n", "window: 7\nwindow: 9\n",
        "min_size: -1\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char cfg[2048];
        snprintf (cfg, sizeof cfg, "%s%s", CONFIG_HEAD, bad[i]);
        qc_pipeline_t *p = qc_pipeline_new (cfg, err, sizeof err);
        CHECK (!p && strstr (err, "identifyFocusFaults"), "%s: %s", bad[i],
               p ? "accepted" : err);
        qc_pipeline_destroy (&p);
    }
    qc_pipeline_t *p = qc_pipeline_new (CONFIG_HEAD "magnification = 20X\n"
                                        "window: 7\n", err, sizeof err);
    CHECK (p != NULL, "%s", err);
    qc_pipeline_destroy (&p);
}

/* What the step logs (its module's records). */
static char focus_log[4096];

static void
keep_focus_log (const qc_log_record_t *rec, void *arg)
{
    (void) arg;
    size_t n = strlen (focus_log);
    if (rec && rec->module && strstr (rec->module, "identifyFocusFaults"))
        snprintf (focus_log + n, sizeof focus_log - n, "%s\n", rec->message);
}

/* A slide of glass alone: the step says there is no tissue left to
 * judge, not a median detail of nothing ("0 gray levels ... blurry
 * under 1": a user's review), and flags nothing. */
static void
test_no_tissue (void)
{
    CHECK (mkslide ("glass", "4000", "3000", "3", "--features", "none", NULL, NULL) == 0);
    qc_pipeline_t *p = qc_pipeline_new (CONFIG_HEAD, err, sizeof err);
    qc_result_t *r = qc_result_new ();
    CHECK (p && r, "%s", err);
    if (p && r) {
        focus_log[0] = '\0';
        qc_log_set_sink (keep_focus_log, NULL, NULL);
        run_focus (p, "glass", r, 0);
        qc_log_set_sink (NULL, NULL, NULL);
        printf ("glass alone: %s", focus_log);
        CHECK (strstr (focus_log, "no tissue left to judge at level"), "%s", focus_log);
        CHECK (!strstr (focus_log, "median detail"), "%s", focus_log);
    }
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

int
main (void)
{
    quiet_logs ();
    if (access (FX_MKSLIDE, X_OK) != 0) {
        CHECK (0, "%s not built (make, from the repository root)", FX_MKSLIDE);
        return check_done ("test_blur_focus");
    }
    snprintf (tmp, sizeof tmp, "/tmp/test_blur_focus.XXXXXX");
    CHECK (mkdtemp (tmp) != NULL);
    test_blocks_two_ways ();
    test_levels ();
    test_pale_tissue ();
    test_no_tissue ();
    test_config_errors ();
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK (system (cmd) == 0);
    return check_done ("test_blur_focus");
}
