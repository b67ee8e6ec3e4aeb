/* Parallel, tile-row-aligned reading of a slide level with area
 * resampling on the fly (see band_reader.h for the scheme). */
#include "kernels/slide/band_reader.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "shared/err.h"
#include "shared/team.h"

/* ARGB pixels one read may bring in (32 MiB): bounds a thread's buffer
 * whatever the level width. A tile row wider than this is read in
 * several strips, and OpenSlide's tile cache then decides whether its
 * tiles are decoded more than once. */
#define READ_PIXELS ((int64_t) 8 << 20)

/* An output row whose source rows two bands share. The earlier band
 * gives its partial sum (head: its rows' weighted sum, in order, from
 * 0.0); the later band its rows reduced along x (tail: tail_rows rows
 * from region row tail_s0 on), not a second partial sum, so that the
 * row is head + w r + w r ... in source order: the adds, in the order,
 * of one sequential read (qc_area_resize_u8), so the same bytes. */
typedef struct {
    double *head, *tail;
    int tail_rows, tail_s0;
} pending_t;

typedef struct {
    qc_slide_t *slide;
    qc_slide_rect_t rect;
    int w, h;                   /* rect's size */
    int64_t ly_origin;          /* level row of region row 0 */
    int tile_h;
    int band_rows;              /* a multiple of tile_h */
    int64_t k0;                 /* index of the first band */
    int nbands;
    int rows_per_read;
    int same_size;              /* out is rect's size: rows are read
                                   straight into it (an area reduction
                                   at 1:1 gives every byte back) */
    qc_area_axis_t ax, ay;
    qc_rgb_t *out;
    pending_t *pending;         /* per output row shared by two bands:
                                   its halves, until both are in */
    pthread_mutex_t lock;
    atomic_int next;
    atomic_int failed;          /* 1: a read failed (why), 2: no memory */
    char why[512];              /* the first failed read's reason */
} band_ctx_t;

static void
write_row (qc_rgb_t *out, int oy, const double *a)
{
    qc_area_round_row_u8 (a, (size_t) out->w * 3,
                          out->px + (size_t) oy * out->w * 3);
}

/* Smallest output row whose source rows reach past s0. */
static int
first_row_after (const qc_area_axis_t *ay, int s0)
{
    int lo = 0, hi = ay->n_dst;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ay->first[mid] + ay->count[mid] > s0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Largest output row whose source rows start before s1. */
static int
last_row_before (const qc_area_axis_t *ay, int s1)
{
    int lo = 0, hi = ay->n_dst;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ay->first[mid] >= s1)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo - 1;
}

/* head + each tail row times its weight, in source order: the rest of
 * the sequential sum the earlier band began. */
static void
add_tail (const band_ctx_t *c, int oy, const pending_t *p, size_t n)
{
    const qc_area_axis_t *ay = &c->ay;
    for (int r = 0; r < p->tail_rows; r++) {
        double wy = ay->w[ay->off[oy] + (p->tail_s0 + r - ay->first[oy])];
        const double *row = p->tail + (size_t) r * n;
        qc_area_mix_row (p->head, row, wy, n, 0);
    }
}

/* Output row oy, summed over this band (a), written when the band holds
 * all its source rows. Else this band's half is kept: a copy of a when
 * the row starts here, tail (tail_rows reduced rows from s0 on, taken
 * over) when it started in the band before; whichever band comes second
 * finishes the row. 0, or -2 (out of memory). */
static int
finish_row (band_ctx_t *c, int oy, int s0, int s1, const double *a,
            double **tail, int tail_rows)
{
    const qc_area_axis_t *ay = &c->ay;
    size_t n = (size_t) c->out->w * 3;
    if (ay->first[oy] >= s0 && ay->first[oy] + ay->count[oy] <= s1) {
        write_row (c->out, oy, a);
        return 0;
    }
    double *head = NULL;
    if (ay->first[oy] >= s0) {
        head = malloc (n * sizeof *head);
        if (!head)
            return -2;
        memcpy (head, a, n * sizeof *head);
    }
    pthread_mutex_lock (&c->lock);
    pending_t *p = &c->pending[oy];
    if (head)
        p->head = head;
    else {
        p->tail = *tail;
        p->tail_rows = tail_rows;
        p->tail_s0 = s0;
        *tail = NULL;
    }
    int both = p->head && p->tail;
    pthread_mutex_unlock (&c->lock);
    if (!both)
        return 0;
    /* both halves in, and no other band touches this row again */
    add_tail (c, oy, p, n);
    write_row (c->out, oy, p->head);
    free (p->head);
    free (p->tail);
    p->head = p->tail = NULL;
    return 0;
}

typedef struct {
    uint8_t *rgb;               /* rows_per_read RGB rows */
    double *hrow, *acc;
    size_t acc_cap;
} scratch_t;

/* Rows the band from s0 on gives to an output row that began in the
 * band before (first_row_after's row, when it starts above s0): 0 when
 * there is none. */
static int
tail_rows_of (const qc_area_axis_t *ay, int oy, int s0, int s1)
{
    if (oy >= ay->n_dst || ay->first[oy] >= s0)
        return 0;
    int end = ay->first[oy] + ay->count[oy];
    return (end < s1 ? end : s1) - s0;
}

static void
set_failed (band_ctx_t *c, int code, const char *why)
{
    int expected = 0;
    if (atomic_compare_exchange_strong (&c->failed, &expected, code) && why)
        snprintf (c->why, sizeof c->why, "%s", why);
}

/* Region rows cy .. cy + rows - 1 as RGB into t->rgb, through the
 * slide's readers. 0; -1 when the read failed (c->why). */
static int
read_rows (band_ctx_t *c, scratch_t *t, int cy, int rows)
{
    char why[512];
    if (qc_slide_read_rows (c->slide, &c->rect, cy, rows, t->rgb,
                            (size_t) c->w * 3, why, sizeof why) == 0)
        return 0;
    set_failed (c, 1, why);
    return -1;
}

/* How many rows the read at region row cy takes, below s1: up to the
 * next tile row, so that no read splits a tile, and rows_per_read at
 * most. */
static int
rows_to_read (const band_ctx_t *c, int cy, int s1)
{
    int64_t lrow = c->ly_origin + cy;
    int64_t tile_end = (lrow / c->tile_h + 1) * c->tile_h - c->ly_origin;
    int rows = (int) ((tile_end < s1 ? tile_end : s1) - cy);
    return rows > c->rows_per_read ? c->rows_per_read : rows;
}

/* Rows s0 .. s1 - 1 of a same-size read, straight into the output, a
 * tile row (or rows_per_read rows) a read. 0, or -1 (c->why). */
static int
copy_band (band_ctx_t *c, int s0, int s1)
{
    char why[512];
    size_t stride = (size_t) c->w * 3;
    for (int cy = s0; cy < s1;) {
        int rows = rows_to_read (c, cy, s1);
        if (qc_slide_read_rows (c->slide, &c->rect, cy, rows,
                                c->out->px + (size_t) cy * stride, stride,
                                why, sizeof why) != 0) {
            set_failed (c, 1, why);
            return -1;
        }
        cy += rows;
    }
    return 0;
}

/* Reads band i and adds it into the output. 0, -1 (a read failed:
 * c->why), -2 (out of memory). */
static int
do_band (band_ctx_t *c, int i, scratch_t *t)
{
    const qc_area_axis_t *ay = &c->ay;
    int64_t k = c->k0 + i;
    int64_t b0 = k * c->band_rows - c->ly_origin;
    int64_t b1 = b0 + c->band_rows;
    int s0 = (int) (b0 < 0 ? 0 : b0), s1 = (int) (b1 > c->h ? c->h : b1);
    if (c->same_size)
        return copy_band (c, s0, s1);
    int oy_lo = first_row_after (ay, s0), oy_hi = last_row_before (ay, s1);
    if (oy_hi < oy_lo)
        return 0;
    size_t dw3 = (size_t) c->out->w * 3;
    size_t need = (size_t) (oy_hi - oy_lo + 1) * dw3;
    if (need > t->acc_cap) {
        double *a = realloc (t->acc, need * sizeof *a);
        if (!a)
            return -2;
        t->acc = a;
        t->acc_cap = need;
    }
    /* the reduced rows the row begun in the band before needs, kept
     * (that row's sum starts there, so none is made here) */
    int ntail = tail_rows_of (ay, oy_lo, s0, s1);
    double *tail = ntail > 0 ? malloc ((size_t) ntail * dw3 * sizeof *tail)
                             : NULL;
    if (ntail > 0 && !tail)
        return -2;
    int oy_cur = oy_lo;
    for (int cy = s0; cy < s1;) {
        int rows = rows_to_read (c, cy, s1);
        int rc = read_rows (c, t, cy, rows);
        if (rc) {
            free (tail);
            return rc;
        }
        for (int r = 0; r < rows; r++) {
            qc_area_reduce_row_u8 (&c->ax, t->rgb + (size_t) r * c->w * 3, 3,
                                   t->hrow);
            int sj = cy + r;
            if (sj - s0 < ntail)
                memcpy (tail + (size_t) (sj - s0) * dw3, t->hrow,
                        dw3 * sizeof *tail);
            while (oy_cur <= oy_hi
                   && ay->first[oy_cur] + ay->count[oy_cur] <= sj)
                oy_cur++;
            for (int oy = oy_cur; oy <= oy_hi && ay->first[oy] <= sj; oy++) {
                if (ay->first[oy] < s0)
                    continue;           /* the tail's row, kept above */
                double wy = ay->w[ay->off[oy] + (sj - ay->first[oy])];
                qc_area_mix_row (t->acc + (size_t) (oy - oy_lo) * dw3,
                                 t->hrow, wy, dw3, sj == ay->first[oy]);
            }
        }
        cy += rows;
    }
    int rc = 0;
    for (int oy = oy_lo; oy <= oy_hi && rc == 0; oy++)
        rc = finish_row (c, oy, s0, s1, t->acc + (size_t) (oy - oy_lo) * dw3,
                         &tail, oy == oy_lo ? ntail : 0);
    free (tail);                /* NULL once a pending row took it */
    return rc;
}

static void *
band_main (void *arg)
{
    band_ctx_t *c = arg;
    scratch_t t = { NULL, NULL, NULL, 0 };
    if (!c->same_size) {
        t.rgb = malloc ((size_t) c->rows_per_read * c->w * 3);
        t.hrow = malloc ((size_t) c->out->w * 3 * sizeof *t.hrow);
        if (!t.rgb || !t.hrow)
            set_failed (c, 2, NULL);
    }
    while (!atomic_load (&c->failed)) {
        int i = atomic_fetch_add (&c->next, 1);
        if (i >= c->nbands)
            break;
        int rc = do_band (c, i, &t);
        if (rc == -2)
            set_failed (c, 2, NULL);
    }
    free (t.rgb);
    free (t.hrow);
    free (t.acc);
    return NULL;
}

int
qc_band_read (qc_slide_t *slide, const qc_slide_rect_t *rect, int nthreads,
              qc_rgb_t *out, char *err, size_t errlen)
{
    if (!slide || !rect || !qc_rgb_valid (out) || rect->w < 1 || rect->h < 1
        || rect->level < 0)
        return qc_fail (err, errlen, "out of memory reading level %d",
                        rect ? rect->level : -1);
    band_ctx_t c;
    memset (&c, 0, sizeof c);
    c.slide = slide;
    c.rect = *rect;
    int level = rect->level, w = rect->w, h = rect->h;
    double ds = qc_slide_level_downsample (slide, level);
    if (!(ds > 0.0))
        return qc_fail (err, errlen, "slide has no level %d", level);
    c.w = w;
    c.h = h;
    c.out = out;
    c.same_size = out->w == w && out->h == h;
    c.ly_origin = llround ((double) rect->y0 / ds);
    c.tile_h = qc_slide_tile_height (slide, level);
    int64_t rpr = READ_PIXELS / w;
    c.rows_per_read = (int) (rpr < 1 ? 1 : rpr > c.tile_h ? c.tile_h : rpr);
    /* tall enough that an output row (ceil (scale) + 1 source rows at
     * most) never spans three bands */
    int64_t span = (int64_t) ceil ((double) h / out->h) + 1;
    int64_t m = (span + c.tile_h - 1) / c.tile_h;
    if (m * c.tile_h > INT32_MAX / 2)
        return qc_fail (err, errlen, "out of memory reading level %d", level);
    c.band_rows = (int) (m * c.tile_h);
    c.k0 = c.ly_origin / c.band_rows;
    c.nbands = (int) ((c.ly_origin + h - 1) / c.band_rows - c.k0 + 1);
    atomic_init (&c.next, 0);
    atomic_init (&c.failed, 0);
    c.pending = calloc ((size_t) out->h, sizeof *c.pending);
    if (!c.pending || qc_area_axis_init (&c.ax, w, out->w)
        || qc_area_axis_init (&c.ay, h, out->h)
        || pthread_mutex_init (&c.lock, NULL)) {
        free (c.pending);
        qc_area_axis_free (&c.ax);
        qc_area_axis_free (&c.ay);
        return qc_fail (err, errlen, "out of memory reading level %d", level);
    }
    if (nthreads > c.nbands)
        nthreads = c.nbands;
    /* The calling thread reads too; a thread that cannot start only
     * means fewer readers. */
    qc_team_run (band_main, &c, nthreads);
    int failed = atomic_load (&c.failed);
    for (int oy = 0; oy < out->h; oy++) {
        free (c.pending[oy].head);      /* only left over after a failure */
        free (c.pending[oy].tail);
    }
    free (c.pending);
    pthread_mutex_destroy (&c.lock);
    qc_area_axis_free (&c.ax);
    qc_area_axis_free (&c.ay);
    if (failed == 1)
        return qc_fail (err, errlen, "%s", c.why);
    if (failed)
        return qc_fail (err, errlen, "out of memory reading level %d", level);
    return 0;
}
