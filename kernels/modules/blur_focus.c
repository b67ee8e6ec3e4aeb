/* BlurDetectionModule.identifyFocusFaults: the project's focus step, used
 * by its default config. It finds the blur scanners make (a focus fault
 * of 1-3 um) where it is visible, at 10x, at near the cost of the
 * default config's 1.25x analysis.
 *
 * Why a step of its own: a focus fault's Gaussian spread of 1-3 um is a
 * fraction of a pixel at 1.25x (8 um a pixel), where the other steps
 * work, and at 2.5x: identifyBlurryRegionsLocal finds none of it there
 * (blur Dice 0.00 on generated 40x slides blurred by 1.5 um; 0.78 at
 * 5x, 0.95 at 10x, where reading and analysing the whole level, glass
 * included, made the whole run ~5x slower).
 *
 * What it measures, at the level nearest `magnification` (default 10x:
 * 1 um a pixel at a 40x scan's 0.25 um), at or above it (a pyramid of
 * 4x steps from 20x has none at 10x: its 20x level is read; a slide
 * whose finest level is coarser is measured there, with a warning that
 * says what cannot be seen):
 *
 *   tiles     only the level's tiles under img_mask_use (the 1.25x
 *             tissue still in use, its rim eroded by edge_erode): on
 *             the 60,000 x 45,000 generated slide 500 of 2,596 tiles,
 *             read one at a time on each thread, so memory is a tile a
 *             thread whatever the level's size
 *   blocks    each tile's 8 x 8 pixel blocks: the RMS of their luma
 *             detail at DCT frequencies u + v >= 5 (block_measure.h; on a
 *             level finer than asked, the band of the same cycles a
 *             micrometre: 3 at 20x); blocks brighter than max_gray
 *             (glass, holes) are left out
 *   per mask  the blocks' mean energy under each mask pixel (at 10x one
 *   pixel     block is one 1.25x pixel; at 20x four); at a work size
 *             finer than 1.25x, under each cell of k x k mask pixels, a
 *             1.25x pixel again (judge_grid)
 *   blurry    the window x window RMS of those (energy, not amplitude,
 *             is averaged: a window of smooth tissue in focus still
 *             holds a few sharp edges, which an amplitude mean dilutes:
 *             on CMU-1 it flagged 1.4% of the tissue, the RMS 0.5%),
 *             against the slide's own median (relative_threshold .35;
 *             the in-focus tissue's where its detail is two populations,
 *             as a fault over a third or more of the tissue makes them:
 *             focus_algo.c)
 *             and a floor (absolute_threshold, gray levels), as
 *             identifyBlurryRegionsLocal judges (blur_local.c): a
 *             slide's scanner, JPEG quality and stain set its typical
 *             sharpness; but only where the fine detail is also low
 *             beside the block's coarser detail (1 <= u + v < 5: pale
 *             tissue in focus has little of both, a fault keeps the
 *             coarser; ratio_threshold .5 of the median ratio of the
 *             tissue the fine detail left unflagged),
 *             or the coarser detail is gone too (coarse blur); then the
 *             edges of what is blurry, judged again in a 3 x 3 window
 *             (edge_relative_threshold .45), and pieces under min_size
 *             pixels dropped (focus_algo.h)
 *
 * then as the other blur steps: at img_mask_use's size, removed from
 * it, "_blurry.png", kept as "blurry", the blurry_removed_* columns.
 *
 * Why these numbers (window RMS over the slide's median): on four
 * generated slides with 1-1.5 um faults the faults' interiors read
 * 0.14-0.25 at band 5 (medians; 0.21-0.33 at band 4, 0.07-0.17 at band
 * 6, where sharp blocks start to have no coefficient left), the
 * in-focus tissue's lowest 1% 0.74-0.82, and the real slides' (CMU-1,
 * TCGA-CR-7395) lowest 1% 0.42-0.47 (smooth epidermis and stroma in
 * focus): .35 lies between. On seven generated slides fine-blur Dice
 * was 0.901-0.977 at .35 (edges .45), 0.896-0.978 at .40 (.50) and
 * 0.881-0.976 at .45 (.55), which also flagged 0.6% of TCGA-CR-7395.
 *
 * Why DCT coefficients, read without decoding pixels: JPEG's 8 x 8 DCT
 * is orthonormal, so a tile's dequantised coefficients are the blocks'
 * frequency content, and libjpeg gives them after entropy decoding
 * alone (kernels/slide/tiff_blocks.h); a blur of sigma s keeps exp
 * (-2 pi^2 s^2 f^2) of frequency f, so at 10x a 1 um fault leaves 15%
 * of the amplitude at the band's edge and 2% at its top. Measured on
 * the 60,000 x 45,000 slide (seed 7) on this 2-core machine, one core,
 * load 1.3-1.9 (tests/bench/README.md, "The focus step"): libjpeg took
 * 0.062 s for the 513 tissue tiles' coefficients (8.7 MB of JPEG, 34
 * Mpx) and 0.096 s to decode them to pixels; the whole step took
 * 0.12 s from coefficients and 0.25-0.27 s from the same tiles'
 * pixels (the direct reader's, measured from pixels as below). Slides
 * the direct reader cannot take (NDPI, MIRAX, JPEG 2000) are measured
 * the same way from the pixels of region reads of the same tiles
 * (kernels/slide/slide_blocks.h): the same measure (blur Dice within
 * 0.002 of the coefficients' on generated slides), 5-8x slower.
 *
 * Threads: the step measures tiles on the run's read_threads (1 in a
 * CPU slot, which is one of many slides at once; a GPU lane's read
 * threads, worker --gpu-read-threads, where the tiles' entropy decoding
 * on one core would take longer than the GPU's whole 1.25x pipeline).
 * The flagged tiles are cut into runs of consecutive tiles, one per
 * thread, each with its own session, and their lists are joined in tile
 * order: each mask pixel adds the same numbers in the same order
 * whatever the thread count. On a GPU lane most tiles are measured
 * before the step, with the next slide's read ahead (focus_ahead.h),
 * while the GPU runs the slide before; the step then reads only the
 * tiles that guess missed. */
#include "kernels/modules/blur_common.h"
#include "kernels/modules/focus_ahead.h"
#include "kernels/modules/focus_algo.h"

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/slide/slide_blocks.h"
#include "shared/clock.h"
#include "shared/log.h"
#include "shared/team.h"

#define STEP_NAME "BlurDetectionModule.identifyFocusFaults"

static _Thread_local qc_focus_stats_t last_stats;

const qc_focus_stats_t *
qc_focus_last_stats (void)
{
    return &last_stats;
}

/* "10", "10x" or "10X", surrounded by spaces or not. */
static int
parse_mag (const char *s, double *out)
{
    char *end;
    double v = strtod (s, &end);
    while (*end == ' ')
        end++;
    if (*end == 'x' || *end == 'X')
        end++;
    while (*end == ' ')
        end++;
    if (end == s || *end || !(v > 0) || v > 1000)
        return -1;
    *out = v;
    return 0;
}

static int
get_params (const qc_config_section_t *sec, qc_focus_params_t *p, char *err,
            size_t errlen)
{
    long long erode, min_size;
    const char *mag = NULL;
    qc_focus_defaults (p);
    if (qc_bb_check_odd_window (sec, "window", p->window, QC_FOCUS_MAX_WINDOW,
                                &p->window, err, errlen)
        || qc_bb_check_int (sec, "edge_erode", p->edge_erode, 0,
                            QC_FOCUS_MAX_ERODE, &erode, err, errlen)
        || qc_bb_check_sharpness (sec, &p->relative_threshold,
                                  &p->absolute_threshold, &p->min_fraction,
                                  &p->max_gray, err, errlen)
        || qc_bb_check_range (sec, "edge_relative_threshold",
                              p->edge_relative_threshold, 0, 1,
                              &p->edge_relative_threshold, err, errlen)
        || qc_bb_check_int (sec, "min_size", p->min_size, 0,
                            QC_FOCUS_MAX_MIN_SIZE, &min_size, err, errlen)
        || qc_bb_check_range (sec, "warn_sharpness", p->warn_sharpness, 0, 255,
                              &p->warn_sharpness, err, errlen)
        || qc_bb_check_range (sec, "ratio_threshold", p->ratio_threshold, 0, 1,
                              &p->ratio_threshold, err, errlen)
        || qc_bb_check_mask_statistics (sec, err, errlen)
        || qc_config_get_string (sec, "magnification", NULL, &mag, err,
                                 errlen))
        return -1;
    if (mag && parse_mag (mag, &p->magnification) != 0) {
        snprintf (err, errlen, "[%s] magnification = '%.64s' (line %d): not "
                  "a magnification (10 or 10x, above 0, at most 1000)",
                  qc_config_section_name (sec), mag,
                  qc_config_key_line (sec, "magnification"));
        return -1;
    }
    p->edge_erode = (int) erode;
    p->min_size = (int) min_size;
    return 0;
}

static int
check_focus (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_focus_params_t p;
    return get_params (sec, &p, err, errlen);
}

/* Where the mask lies on the level: mask pixel (mx, my) covers level-0
 * [x0 + mx sx, x0 + (mx + 1) sx) and likewise in y; level pixel x is
 * level-0 x ds. */
typedef struct {
    int mw, mh;
    double x0, y0, sx, sy;    /* level 0 */
    double ds;                /* the level's downsample */
    int64_t lw, lh;           /* the level */
    int tw, th;               /* its tiles */
    int ntx, nty;
} geom_t;

/* The level's blocks and the mask pixels their centres fall in: block
 * column bx is mask column cols[bx] (and likewise for rows), -1 outside
 * the mask or the level; sampled[by * nbx + bx] is the measured mask
 * there (ops->mask_sample: a byte per block comes to the host, never the
 * mask itself, which may be on a GPU). */
typedef struct {
    int nbx, nby;
    int32_t *cols, *rows;
    uint8_t *sampled;
} blocks_map_t;

static void
blocks_map_free (blocks_map_t *b)
{
    free (b->cols);
    free (b->rows);
    free (b->sampled);
}

/* The mask pixel under level coordinate c (a block's centre), or -1
 * outside the mask. */
static int
mask_index (double c, double ds, double origin, double scale, int n)
{
    double m = floor ((c * ds - origin) / scale);
    return m >= 0 && m < n ? (int) m : -1;
}

static int
blocks_map (const qc_ops_t *ops, const geom_t *g, const qc_mask_t *meas,
            blocks_map_t *b)
{
    memset (b, 0, sizeof *b);
    int64_t nbx = (g->lw + 7) / 8, nby = (g->lh + 7) / 8;
    if (nbx < 1 || nby < 1 || nbx > INT32_MAX || nby > INT32_MAX
        || (uint64_t) nbx * (uint64_t) nby > ((uint64_t) 1 << 34))
        return -1;
    b->nbx = (int) nbx;
    b->nby = (int) nby;
    b->cols = malloc ((size_t) nbx * sizeof *b->cols);
    b->rows = malloc ((size_t) nby * sizeof *b->rows);
    b->sampled = malloc ((size_t) nbx * (size_t) nby);
    if (!b->cols || !b->rows || !b->sampled)
        return -1;
    /* a block that reaches past the level's edge is not measured: its
     * pixels there are the tile's padding (JPEG coefficients: whatever
     * the scanner padded with, read as sharp detail; hf 32-41 against
     * 1-3 from the pixels on the shared pyramid slides' glass) or the
     * background (pixels), and the two ways must agree */
    for (int64_t i = 0; i < nbx; i++) {
        double c = (double) (i * 8 + 4);
        b->cols[i] = i * 8 + 8 <= g->lw
            ? mask_index (c, g->ds, g->x0, g->sx, g->mw) : -1;
    }
    for (int64_t j = 0; j < nby; j++) {
        double c = (double) (j * 8 + 4);
        b->rows[j] = j * 8 + 8 <= g->lh
            ? mask_index (c, g->ds, g->y0, g->sy, g->mh) : -1;
    }
    return ops->mask_sample (meas, b->cols, b->nbx, b->rows, b->nby,
                             b->sampled);
}

/* For each tile of the level, its measured blocks (0: not read); *n
 * tiles with any. */
static uint32_t *
tiles_with_blocks (const geom_t *g, const blocks_map_t *b, long *n)
{
    uint32_t *count = calloc ((size_t) g->ntx * (size_t) g->nty, sizeof *count);
    if (!count)
        return NULL;
    const int tbw = g->tw / 8, tbh = g->th / 8;
    /* a tile's run of a block row at a time: no division per block (on
     * a GPU lane this loop is host time the GPU waits for) */
    for (int by = 0; by < b->nby; by++) {
        const uint8_t *row = b->sampled + (size_t) by * (size_t) b->nbx;
        uint32_t *tiles = count + (size_t) (by / tbh) * (size_t) g->ntx;
        for (int x0 = 0, tx = 0; x0 < b->nbx && tx < g->ntx; x0 += tbw, tx++) {
            int x1 = x0 + tbw < b->nbx ? x0 + tbw : b->nbx;
            uint32_t n = 0;
            for (int bx = x0; bx < x1; bx++)
                n += row[bx] != 0;
            tiles[tx] += n;
        }
    }
    *n = 0;
    for (size_t i = 0; i < (size_t) g->ntx * (size_t) g->nty; i++)
        *n += count[i] > 0;
    return count;
}

/* The measured blocks' hf and mid squared and the mask pixels they
 * belong to, in the order the tiles were read (so that each mask pixel's
 * sum adds them in that order). mid: NULL when the ratio rule is off (it
 * alone reads them). */
typedef struct {
    int32_t *idx;
    float *val, *mid;
    size_t n, cap;
} energies_t;

/* One thread's share: tiles [t0, t1) of the level in raster order (the
 * ones with measured blocks), read through its own session. */
typedef struct {
    qc_slide_blocks_t *blocks;
    const geom_t *g;
    const uint32_t *count;
    const blocks_map_t *map;
    const qc_focus_ahead_t *ahead;   /* tiles read ahead, or NULL */
    float max_luma;
    size_t t0, t1;
    long from_ahead;          /* tiles found read ahead */
    energies_t e;
    int rc;
    char err[256];
} part_t;

/* Reads the part's tiles' blocks and lists the measured ones' hf and
 * mid squared under their mask pixels. 0, or -1 (err). */
static int
measure_tiles (part_t *pt)
{
    const geom_t *g = pt->g;
    const blocks_map_t *map = pt->map;
    energies_t *e = &pt->e;
    const int tbw = g->tw / 8, tbh = g->th / 8;
    float *hf = malloc ((size_t) tbw * (size_t) tbh * sizeof *hf);
    float *mid = malloc ((size_t) tbw * (size_t) tbh * sizeof *mid);
    float *luma = malloc ((size_t) tbw * (size_t) tbh * sizeof *luma);
    int rc = -1;
    if (!hf || !mid || !luma) {
        snprintf (pt->err, sizeof pt->err, "out of memory for a %d x %d tile",
                  g->tw, g->th);
        goto done;
    }
    for (size_t t = pt->t0; t < pt->t1; t++) {
        if (!pt->count[t])
            continue;
        int tx = (int) (t % (size_t) g->ntx), ty = (int) (t / (size_t) g->ntx);
        int64_t bx, by;
        int nbx, nby;
        qc_focus_tile_blocks (g->lw, g->lh, g->tw, g->th, tx, ty, &bx, &by,
                              &nbx, &nby);
        const float *thf = hf, *tmid = mid, *tluma = luma;
        if (qc_focus_ahead_tile (pt->ahead, t, &thf, &tmid, &tluma))
            pt->from_ahead++;
        else if (qc_slide_blocks_read (pt->blocks, bx, by, nbx, nby, hf, mid,
                                       luma, pt->err, sizeof pt->err) != 0)
            goto done;
        for (int j = 0; j < nby; j++) {
            const uint8_t *meas = map->sampled
                + (size_t) (by + j) * (size_t) map->nbx + (size_t) bx;
            int32_t my = map->rows[by + j];
            for (int i = 0; i < nbx; i++) {
                size_t b = (size_t) j * (size_t) nbx + (size_t) i;
                if (!meas[i] || tluma[b] > pt->max_luma)
                    continue;
                if (e->n == e->cap) {   /* sampled blocks bound it */
                    snprintf (pt->err, sizeof pt->err, "more blocks than sampled");
                    goto done;
                }
                e->idx[e->n] = my * g->mw + map->cols[bx + i];
                if (e->mid)
                    e->mid[e->n] = tmid[b] * tmid[b];
                e->val[e->n++] = thf[b] * thf[b];
            }
        }
    }
    rc = 0;
done:
    free (hf);
    free (mid);
    free (luma);
    return rc;
}

/* The parts of measure_parallel, taken one at a time by a team of
 * threads (a thread that could not start leaves its part to the
 * others). */
typedef struct {
    part_t *parts;
    int n;
    atomic_int next;
} parts_team_t;

static void *
measure_main (void *arg)
{
    parts_team_t *t = arg;
    int k;
    while ((k = atomic_fetch_add (&t->next, 1)) < t->n)
        t->parts[k].rc = measure_tiles (&t->parts[k]);
    return NULL;
}

#define MAX_PARTS QC_TEAM_MAX

/* Measures the counted tiles on nparts threads (the calling one
 * included) and joins their lists into e in tile order. blocks is the
 * first part's session; the others open their own on the same level.
 * Their stats are added into *stats, the tiles they found read ahead
 * into *from_ahead. 0, or -1 (err). */
static int
measure_parallel (qc_run_t *run, qc_slide_blocks_t *blocks, int level,
                  int band, int nparts, part_t proto, energies_t *e,
                  qc_slide_blocks_stats_t *stats, long *from_ahead, char *err,
                  size_t errlen)
{
    const geom_t *g = proto.g;
    size_t ntiles = (size_t) g->ntx * (size_t) g->nty;
    part_t parts[MAX_PARTS];
    if (nparts < 1)
        nparts = 1;
    if (nparts > MAX_PARTS)
        nparts = MAX_PARTS;
    if ((size_t) nparts > e->cap)
        nparts = e->cap > 0 ? (int) e->cap : 1;
    /* runs of consecutive tiles holding about e->cap / nparts blocks */
    size_t t = 0, done_blocks = 0;
    for (int k = 0; k < nparts; k++) {
        parts[k] = proto;
        parts[k].blocks = NULL;
        parts[k].t0 = t;
        size_t goal = e->cap * (size_t) (k + 1) / (size_t) nparts, cap = 0;
        while (t < ntiles && (k == nparts - 1 || done_blocks < goal)) {
            cap += proto.count[t];
            done_blocks += proto.count[t];
            t++;
        }
        parts[k].t1 = t;
        parts[k].e = (energies_t) { .cap = cap };
    }
    int rc = 0;
    for (int k = 0; k < nparts && rc == 0; k++) {
        size_t cap = parts[k].e.cap ? parts[k].e.cap : 1;
        parts[k].e.idx = malloc (cap * sizeof *parts[k].e.idx);
        parts[k].e.val = malloc (cap * sizeof *parts[k].e.val);
        parts[k].e.mid = e->mid ? malloc (cap * sizeof *parts[k].e.mid) : NULL;
        parts[k].blocks = k == 0 ? blocks
            : qc_slide_blocks_open (run->slide, level, band, err, errlen);
        if (!parts[k].e.idx || !parts[k].e.val || (e->mid && !parts[k].e.mid)
            || !parts[k].blocks) {
            if (parts[k].blocks || k == 0)
                snprintf (err, errlen, "out of memory for %zu blocks", cap);
            rc = -1;
        }
    }
    if (rc == 0) {
        parts_team_t team = { .parts = parts, .n = nparts };
        atomic_init (&team.next, 0);
        qc_team_run (measure_main, &team, nparts);
    }
    for (int k = 0; k < nparts; k++) {
        if (rc == 0 && parts[k].rc != 0) {
            snprintf (err, errlen, "%s", parts[k].err);
            rc = -1;
        }
        if (rc == 0) {
            memcpy (e->idx + e->n, parts[k].e.idx, parts[k].e.n * sizeof *e->idx);
            memcpy (e->val + e->n, parts[k].e.val, parts[k].e.n * sizeof *e->val);
            if (e->mid)
                memcpy (e->mid + e->n, parts[k].e.mid, parts[k].e.n * sizeof *e->mid);
            e->n += parts[k].e.n;
            *from_ahead += parts[k].from_ahead;
        }
        if (k > 0 && parts[k].blocks) {
            qc_slide_blocks_stats_t s;
            qc_slide_blocks_stats (parts[k].blocks, &s);
            qc_slide_blocks_stats_add (stats, &s);
            qc_slide_blocks_close (&parts[k].blocks);
        }
        free (parts[k].e.idx);
        free (parts[k].e.val);
        free (parts[k].e.mid);
    }
    return rc;
}

/* The level to measure and its magnification, reporting nothing: 0
 * (as fine as asked), 1 (coarser: the slide has no finer level), -2 (no
 * levels) or -1 (none fits). */
static int
choose_level (qc_run_t *run, const qc_focus_params_t *p, int *level,
              double *level_mag)
{
    int n = qc_slide_level_count (run->slide);
    double *ds = n > 0 ? calloc ((size_t) n, sizeof *ds) : NULL;
    if (!ds)
        return -2;
    for (int i = 0; i < n; i++)
        ds[i] = qc_slide_level_downsample (run->slide, i);
    int rc = qc_focus_pick_level (ds, n, run->base_mag, p->magnification,
                                  level);
    if (rc >= 0)
        *level_mag = run->base_mag / ds[*level];
    free (ds);
    return rc;
}

/* Picks the level; warns when none is fine enough. 0, or -1 (failed). */
static int
pick_level (qc_run_t *run, const qc_focus_params_t *p, int *level)
{
    double level_mag = 0;
    int rc = choose_level (run, p, level, &level_mag);
    char why[512];
    if (rc == -2)
        return qc_run_fail (run, "no levels (%d) to measure focus at",
                            qc_slide_level_count (run->slide));
    if (rc < 0)
        return qc_run_fail (run, "no level to measure focus at");
    if (!qc_slide_level_reliable (run->slide, *level, why, sizeof why))
        return qc_run_fail (run, "%s", why);
    last_stats.level_mag = level_mag;
    last_stats.fine_enough = rc == 0;
    last_stats.band = qc_focus_band (p->magnification, last_stats.level_mag);
    if (rc == 1)
        qc_run_warn (run, "focus measured at level %d (%.3gx), coarser than "
                     "the %.3gx asked: the slide has no finer level, and blur "
                     "finer than about %.2g um (a pixel there) cannot be "
                     "seen", *level, last_stats.level_mag, p->magnification,
                     10.0 / last_stats.level_mag);
    return 0;
}

/* The cells blur is judged on, as k x k mask pixels: the larger of
 * - the physical rule: a cell is what a mask pixel is at 1.25x, which
 *   window, min_size and edge_erode were chosen for (HistoQC's work size;
 *   8 um on a 40x slide), so a config judges the same tissue at every
 *   work size: 2 at 2.5x, 4 at 5x, 8 at 10x. Counted from the measured
 *   level's magnification (level_mag) and its pixels in a mask pixel:
 *   that level's pixels over 1.25x's. Before, a cell was a block of the
 *   measured level, which on a 20x slide read at 20x made cells half as
 *   wide at 5x as at 1.25x, and min_size a quarter of the tissue: a
 *   dense, smooth region of CMU-1 in focus was flagged at 5x only (an
 *   operator's review);
 * - a block (8 pixels) of the measured level: a cell smaller than a
 *   block holds no measure of its own (only the pixel under each block's
 *   centre was measured, too few for the windows: the median detail came
 *   out 0 at 5x, and at 2.5x no blur was found where 1.25x found 28%).
 * On a 40x slide read at 10x both give the same. qc_blur_apply spreads
 * the verdict to the mask's pixels. A mask pixel of 6.4 level pixels or
 * more is one block (a rounding of the slide's size, 7.89 on a small
 * slide, must not change the grid), and likewise 0.8 of a 1.25x pixel. */
static int
judge_grid (int64_t bbox_w, int64_t bbox_h, int mw, int mh, double ds, double level_mag)
{
    if (mw < 1 || mh < 1 || !(ds > 0))
        return 1;
    double px = fmin ((double) bbox_w / mw, (double) bbox_h / mh) / ds;
    double block = px > 0 ? floor (8.0 / px + 0.25) : 1;
    double phys = px > 0 && level_mag > 0 ? floor (level_mag / (QC_FOCUS_CELL_MAG * px) + 0.25)
                                          : 1;
    double k = fmax (block, phys);
    int most = mw < mh ? mw : mh;
    return k < 1 ? 1 : k > most ? most : (int) k;
}

static int
run_focus (qc_run_t *run)
{
    double t0 = qc_clock_s ();
    memset (&last_stats, 0, sizeof last_stats);
    last_stats.level = -1;
    qc_focus_params_t p;
    char err[512];
    if (get_params (run->params, &p, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    if (qc_run_require_mag (run) != 0)
        return -1;
    const qc_mask_t *use = qc_run_mask (run);
    int level = 0;
    if (!use || pick_level (run, &p, &level) != 0)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    /* the grid blur is judged on: the mask, or at a work size finer
       than a block a mask pixel (judge_grid) k x k of its pixels a cell */
    double ds = qc_slide_level_downsample (run->slide, level);
    int k = judge_grid (run->bbox_w, run->bbox_h, use->w, use->h, ds,
                        last_stats.level_mag);
    last_stats.cell = k;
    int mw = (use->w + k - 1) / k, mh = (use->h + k - 1) / k, rc = -1;
    qc_mask_t *cells = k > 1 ? qc_mask_new (mw, mh) : NULL;
    if (k > 1 && (!cells || ops->resize_mask (use, QC_INTERP_NEAREST, cells) != 0)) {
        qc_mask_destroy (&cells);
        return qc_run_fail (run, "out of memory for a %d x %d grid", mw, mh);
    }
    const qc_mask_t *judged = k > 1 ? cells : use;
    qc_mask_t *meas = qc_mask_new (mw, mh), *blurry = qc_mask_new (mw, mh);
    qc_fimg_t *sum = qc_fimg_new (mw, mh), *count = qc_fimg_new (mw, mh);
    /* the coarser detail's plane, for the ratio rule: none at a band of 1
       (a level 3.3x finer than asked, or more), which has no coarser
       frequency to compare the fine with, or with the rule off */
    bool by_ratio = last_stats.band >= 2 && p.ratio_threshold > 0;
    qc_fimg_t *mid = by_ratio ? qc_fimg_new (mw, mh) : NULL;
    blocks_map_t map = { 0 };
    energies_t en = { 0 };
    qc_slide_blocks_stats_t extra = { 0 };   /* the other threads' reads */
    qc_slide_blocks_t *blocks = qc_slide_blocks_open (run->slide, level,
                                                      last_stats.band, err,
                                                      sizeof err);
    uint32_t *tile_count = NULL;
    geom_t g = {
        .mw = mw, .mh = mh, .x0 = (double) run->bbox_x,
        .y0 = (double) run->bbox_y, .sx = (double) run->bbox_w / mw,
        .sy = (double) run->bbox_h / mh, .ds = ds,
    };
    if (!blocks) {
        qc_run_fail (run, "measuring level %d: %s", level, err);
        goto done;
    }
    if (!meas || !blurry || !sum || (by_ratio && !mid) || !count) {
        qc_run_fail (run, "out of memory for %d x %d masks", mw, mh);
        goto done;
    }
    qc_slide_level_size (run->slide, level, &g.lw, &g.lh);
    qc_slide_blocks_tile (blocks, &g.tw, &g.th);
    g.ntx = (int) ((g.lw + g.tw - 1) / g.tw);
    g.nty = (int) ((g.lh + g.th - 1) / g.th);
    /* Measured: the tissue away from its rim (whose blocks see glass). */
    if (ops->morph_rect (judged, 2 * p.edge_erode + 1, 2 * p.edge_erode + 1,
                         QC_MORPH_ERODE, meas) != 0
        || blocks_map (ops, &g, meas, &map) != 0
        || !(tile_count = tiles_with_blocks (&g, &map, &last_stats.tiles))) {
        qc_run_fail (run, "choosing the tissue's tiles failed (out of memory?)");
        goto done;
    }
    last_stats.tiles_level = (long) g.ntx * g.nty;
    for (size_t i = 0; i < (size_t) map.nbx * (size_t) map.nby; i++)
        en.cap += map.sampled[i];
    en.idx = malloc ((en.cap ? en.cap : 1) * sizeof *en.idx);
    en.val = malloc ((en.cap ? en.cap : 1) * sizeof *en.val);
    en.mid = by_ratio ? malloc ((en.cap ? en.cap : 1) * sizeof *en.mid) : NULL;
    if (!en.idx || !en.val || (by_ratio && !en.mid)) {
        qc_run_fail (run, "out of memory for %zu blocks", en.cap);
        goto done;
    }
    double t_read = qc_clock_s ();
    const qc_focus_ahead_t *ahead = qc_focus_ahead_for (run, level,
                                                        last_stats.band);
    part_t proto = { .g = &g, .count = tile_count, .map = &map,
                     .ahead = ahead,
                     .max_luma = (float) (p.max_gray * 255.0) };
    qc_focus_ahead_stats (ahead, &last_stats.ahead_tiles, &last_stats.ahead_read,
                          &last_stats.ahead_seconds);
    if (measure_parallel (run, blocks, level, last_stats.band,
                          run->read_threads, proto, &en, &extra,
                          &last_stats.tiles_from_ahead, err,
                          sizeof err) != 0) {
        qc_run_fail (run, "reading level %d: %s", level, err);
        goto done;
    }
    last_stats.read_seconds = qc_clock_s () - t_read;
    /* the energies and counts go where the planes are (a GPU's, maybe) */
    if (ops->fimg_scatter (en.idx, en.val, en.n, 0.0, sum) != 0
        || (mid && ops->fimg_scatter (en.idx, en.mid, en.n, 0.0, mid) != 0)
        || ops->fimg_scatter (en.idx, NULL, en.n, 0.0, count) != 0) {
        qc_run_fail (run, "placing %zu block measures failed", en.n);
        goto done;
    }
    if (qc_focus_map (ops, sum, mid, count, judged, &p,
                      blurry, &last_stats.threshold,
                      &last_stats.reference, &last_stats.ratio_reference) != 0) {
        qc_run_fail (run, "focus map failed on a %d x %d mask (out of "
                     "memory?)", mw, mh);
        goto done;
    }
    /* The slide's own sharpness, for a lab to compare slides with: the
     * blurry are judged against it, so a slide out of focus all over
     * shows here and not in the mask */
    /* How the blocks were measured, said with the numbers: JPEG
     * coefficients and decoded pixels give close but not equal measures
     * (slide_blocks.h), so the same slide's blurry_* columns differ with
     * QC_DIRECT_READ=0 or a damaged tile; an auditor comparing two runs
     * must see why */
    qc_slide_blocks_stats_t how;
    qc_slide_blocks_stats (blocks, &how);
    qc_slide_blocks_stats_add (&how, &extra);
    char way[160];
    if (how.coef_reads && how.pixel_reads)
        snprintf (way, sizeof way, "measured from %s, %llu of %llu reads from pixels",
                  qc_slide_blocks_way (blocks), (unsigned long long) how.pixel_reads,
                  (unsigned long long) (how.coef_reads + how.pixel_reads));
    else
        snprintf (way, sizeof way, "measured from %s",
                  how.coef_reads ? "JPEG coefficients (direct TIFF)"
                  : how.pixel_reads ? "pixels" : qc_slide_blocks_way (blocks));
    if (en.n == 0)
        /* its median of nothing read as "0 gray levels ... blurry under
           1" on a slide whose tissue earlier steps had all removed */
        qc_log (QC_LOG_INFO, run->step, "no tissue left to judge at level %d (%.3gx): "
                "the mask in use holds none away from its rim, or only glass (%s)",
                level, last_stats.level_mag, way);
    else if (last_stats.ratio_reference > 0)
        qc_log (QC_LOG_INFO, run->step, "the tissue's median detail: %.3g gray levels "
                "(level %d, %.3gx, band %d; %s), %.2g of its coarser detail; blurry under "
                "%.3g where that ratio is under %.2g too (or the coarser detail is gone)",
                last_stats.reference, level, last_stats.level_mag, last_stats.band, way,
                last_stats.ratio_reference, last_stats.threshold,
                p.ratio_threshold * last_stats.ratio_reference);
    else
        qc_log (QC_LOG_INFO, run->step, "the tissue's median detail: %.3g gray levels "
                "(level %d, %.3gx, band %d; %s); blurry under %.3g", last_stats.reference,
                level, last_stats.level_mag, last_stats.band, way, last_stats.threshold);
    if (k > 1)
        qc_log (QC_LOG_INFO, run->step, "judged on cells of %d x %d mask pixels (a "
                "mask pixel is %.3g pixels of level %d): a cell is what a mask pixel is "
                "at 1.25x, for which window, min_size and edge_erode are counted",
                k, k, g.sx / k / g.ds, level);
    if (en.n > 0 && last_stats.reference <= 0)
        qc_run_warn (run, "blur not judged: the tissue's detail measured 0 at level %d "
                     "(%.3gx), so nothing can be judged against it", level,
                     last_stats.level_mag);
    if (last_stats.reference > 0 && last_stats.reference < p.warn_sharpness)
        qc_run_warn (run, "the tissue's median detail is %.3g gray levels, under "
                     "warn_sharpness (%.3g): the slide may be out of focus all over "
                     "(blur is judged against the slide's own sharpness, so the mask "
                     "may show little or none of it; tissue with no fine detail at "
                     "all is flagged), or its tissue very pale. Look at it",
                     last_stats.reference, p.warn_sharpness);
    rc = qc_blur_apply (run, blurry, STEP_NAME);
done:
    last_stats.level = level;
    qc_slide_blocks_stats (blocks, &last_stats.read);
    qc_slide_blocks_stats_add (&last_stats.read, &extra);
    snprintf (last_stats.way, sizeof last_stats.way, "%s",
              qc_slide_blocks_way (blocks));
    last_stats.seconds = qc_clock_s () - t0;
    if (last_stats.ahead_tiles)
        qc_log (QC_LOG_DEBUG, run->step, "%s: %ld tiles read ahead (%.1f MB "
                "coded, %.1f Mpx decoded) in %.1f ms; %ld of them used",
                run->filename ? run->filename : "?", last_stats.ahead_tiles,
                last_stats.ahead_read.coded_bytes / 1e6,
                last_stats.ahead_read.pixels / 1e6,
                last_stats.ahead_seconds * 1e3, last_stats.tiles_from_ahead);
    qc_log (QC_LOG_DEBUG, run->step, "%s: level %d (%.3gx, band %d), %ld of "
            "%ld tiles (%ld read ahead), %s: %.1f MB coded, %.1f Mpx "
            "decoded, %llu blocks, threshold %.3g, %.1f ms",
            run->filename ? run->filename : "?",
            level, last_stats.level_mag, last_stats.band, last_stats.tiles,
            last_stats.tiles_level, last_stats.tiles_from_ahead,
            last_stats.way, last_stats.read.coded_bytes / 1e6,
            last_stats.read.pixels / 1e6,
            (unsigned long long) last_stats.read.blocks, last_stats.threshold,
            last_stats.seconds * 1e3);
    free (tile_count);
    blocks_map_free (&map);
    free (en.idx);
    free (en.val);
    free (en.mid);
    qc_slide_blocks_close (&blocks);
    qc_mask_destroy (&meas);
    qc_mask_destroy (&blurry);
    qc_mask_destroy (&cells);
    qc_fimg_destroy (&sum);
    qc_fimg_destroy (&mid);
    qc_fimg_destroy (&count);
    return rc;
}

/* The step's work ahead (module.h): the tiles it will likely read,
 * measured on the read threads of a GPU lane's read ahead. */
static void
prefetch_focus (qc_run_t *run)
{
    qc_focus_params_t p;
    char why[512];
    int level = 0;
    double level_mag = 0;
    if (get_params (run->params, &p, why, sizeof why) != 0
        || !(run->base_mag > 0)
        || choose_level (run, &p, &level, &level_mag) < 0
        || !qc_slide_level_reliable (run->slide, level, why, sizeof why))
        return;               /* the step says why, if it is anything */
    qc_focus_read_ahead (run, level, qc_focus_band (p.magnification, level_mag),
                         (float) (p.max_gray * 255.0));
}

static const char *const params[] = {
    "magnification", "window", "relative_threshold", "edge_relative_threshold",
    "absolute_threshold", "min_fraction", "edge_erode", "max_gray",
    "min_size", "mask_statistics", "warn_sharpness", "ratio_threshold", NULL
};

static const char *const columns[] = {
    "blurry_removed_num_regions", "blurry_removed_mean_area",
    "blurry_removed_max_area", "blurry_removed_percent", NULL
};

const qc_module_t qc_module_blur_focus = {
    .name = STEP_NAME,
    .run = run_focus,
    .check = check_focus,
    .params = params,
    .columns = columns,
    .prefetch = prefetch_focus,
};
