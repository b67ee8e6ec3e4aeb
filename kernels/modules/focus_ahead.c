/* The focus step's tiles read ahead; see focus_ahead.h. */
#include "kernels/modules/focus_ahead.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shared/clock.h"
#include "shared/team.h"

struct qc_focus_ahead {
    int level, band;
    int ntx, nty;
    int32_t *slot;            /* per tile: its place in hf / mid / luma; -1:
                                 not read ahead */
    size_t per_tile;          /* floats a tile's place holds */
    float *hf, *mid, *luma;
    long tiles;               /* read */
    qc_slide_blocks_stats_t read;
    double seconds;
};

void
qc_focus_tile_blocks (int64_t lw, int64_t lh, int tw, int th, int tx, int ty,
                      int64_t *bx, int64_t *by, int *nbx, int *nby)
{
    const int tbw = tw / 8, tbh = th / 8;
    *bx = (int64_t) tx * tbw;
    *by = (int64_t) ty * tbh;
    /* whole blocks that start inside the level */
    int64_t left_x = (lw - *bx * 8 + 7) / 8, left_y = (lh - *by * 8 + 7) / 8;
    *nbx = left_x < tbw ? (int) left_x : tbw;
    *nby = left_y < tbh ? (int) left_y : tbh;
}

static void
ahead_free (void *p)
{
    qc_focus_ahead_t *a = p;
    if (!a)
        return;
    free (a->slot);
    free (a->hf);
    free (a->mid);
    free (a->luma);
    free (a);
}

/* What the team shares: first the guess (tile rows of the image, one at
 * a time), then the reads (the guessed tiles, one at a time). */
typedef struct {
    const uint8_t *px;        /* the image read ahead, w x h RGB */
    int w, h, row_step;       /* rows looked at: every row_step-th */
    int64_t lw, lh;           /* the level */
    int tw, th;
    int32_t *col_tile;        /* image column -> tile column */
    int32_t *row_tile;        /* image row -> tile row, -1 outside */
    uint8_t max_byte;
    uint8_t *guessed;         /* per tile */
    atomic_int next;
    qc_focus_ahead_t *a;
    int32_t *todo;            /* the guessed tiles to read, in tile
                                 order: the k-th into place k */
    size_t ntodo;
    /* one session a thread, opened before the team starts (as the step
     * opens its own: opening is not for several threads at once) */
    qc_slide_blocks_t *sessions[QC_TEAM_MAX];
    int nsessions;
    atomic_int next_session;
    pthread_mutex_t lock;     /* stats */
} team_t;

/* Marks the tiles of row ty whose image rows hold a byte at or under
 * max_byte; a tile found is not looked at again in that row. */
static void
guess_row (team_t *c, int ty)
{
    uint8_t *g = c->guessed + (size_t) ty * (size_t) c->a->ntx;
    for (int y = 0; y < c->h; y += c->row_step) {
        if (c->row_tile[y] != ty)
            continue;
        const uint8_t *row = c->px + (size_t) y * (size_t) c->w * 3;
        int x = 0;
        while (x < c->w) {
            int tx = c->col_tile[x], end = x;
            while (end < c->w && c->col_tile[end] == tx)
                end++;
            if (tx >= 0 && !g[tx]) {
                int dark = 0;
                const uint8_t *p = row + (size_t) x * 3;
                for (size_t i = 0; i < (size_t) (end - x) * 3; i++)
                    dark |= p[i] <= c->max_byte;
                g[tx] = (uint8_t) dark;
            }
            x = end;
        }
    }
}

static void *
guess_main (void *arg)
{
    team_t *c = arg;
    int ty;
    while ((ty = atomic_fetch_add (&c->next, 1)) < c->a->nty)
        guess_row (c, ty);
    return NULL;
}

/* Reads the guessed tiles on a session of this thread's; a tile that
 * fails is left to the step (its slot stays -1). */
static void *
read_main (void *arg)
{
    team_t *c = arg;
    qc_focus_ahead_t *a = c->a;
    char err[256];
    int mine = atomic_fetch_add (&c->next_session, 1);
    if (mine >= c->nsessions)
        return NULL;          /* the other threads read more */
    qc_slide_blocks_t *s = c->sessions[mine];
    long tiles = 0;
    int k;
    while ((k = atomic_fetch_add (&c->next, 1)) < (int) c->ntodo) {
        int32_t t = c->todo[k];
        int tx = (int) (t % a->ntx), ty = (int) (t / a->ntx);
        int64_t bx, by;
        int nbx, nby;
        qc_focus_tile_blocks (c->lw, c->lh, c->tw, c->th, tx, ty, &bx, &by,
                              &nbx, &nby);
        /* each tile is one thread's: its slot is set by it alone, and
         * read after the team has ended */
        size_t at = (size_t) k * a->per_tile;
        if (qc_slide_blocks_read (s, bx, by, nbx, nby, a->hf + at, a->mid + at,
                                  a->luma + at, err, sizeof err) == 0) {
            a->slot[t] = k;
            tiles++;
        }
    }
    qc_slide_blocks_stats_t st;
    qc_slide_blocks_stats (s, &st);
    pthread_mutex_lock (&c->lock);
    a->tiles += tiles;
    qc_slide_blocks_stats_add (&a->read, &st);
    pthread_mutex_unlock (&c->lock);
    return NULL;
}

/* Image column (row) -> the tile column (row) its centre lies in: image
 * pixel i covers level-0 [origin + i scale, ...), the level's pixel x is
 * level-0 x ds. -1 outside the level. */
static int32_t *
axis_tiles (int n, double origin, double scale, double ds, int64_t level_n,
            int tile)
{
    int32_t *t = malloc ((size_t) n * sizeof *t);
    for (int i = 0; t && i < n; i++) {
        double x = (origin + (i + 0.5) * scale) / ds;
        t[i] = x >= 0 && x < (double) level_n ? (int32_t) (x / tile) : -1;
    }
    return t;
}

/* The todo list: the guessed tiles, in tile order, up to the memory
 * bound; the k-th is read into place k, and its slot is set once it is
 * read. 0, or -1 (no memory). */
static int
give_slots (team_t *c)
{
    qc_focus_ahead_t *a = c->a;
    size_t ntiles = (size_t) a->ntx * (size_t) a->nty;
    size_t most = FOCUS_AHEAD_MAX_BYTES / (a->per_tile * 3 * sizeof (float));
    a->slot = malloc (ntiles * sizeof *a->slot);
    c->todo = malloc (ntiles * sizeof *c->todo);
    if (!a->slot || !c->todo)
        return -1;
    for (size_t t = 0; t < ntiles; t++) {
        a->slot[t] = -1;
        if (c->guessed[t] && c->ntodo < most)
            c->todo[c->ntodo++] = (int32_t) t;
    }
    size_t n = (c->ntodo ? c->ntodo : 1) * a->per_tile;
    a->hf = malloc (n * sizeof *a->hf);
    a->mid = malloc (n * sizeof *a->mid);
    a->luma = malloc (n * sizeof *a->luma);
    return a->hf && a->mid && a->luma ? 0 : -1;
}

void
qc_focus_read_ahead (qc_run_t *run, int level, int band, float max_luma)
{
    double t0 = qc_clock_s ();
    const qc_rgb_t *img = qc_run_image_ahead (run);
    const uint8_t *px = img ? qc_rgb_host (img) : NULL;
    if (!px || !run->slide || run->bbox_w <= 0 || run->bbox_h <= 0)
        return;
    team_t c = { .px = px, .w = img->w, .h = img->h };
    char err[256];
    qc_slide_blocks_t *s = qc_slide_blocks_open (run->slide, level, band,
                                                 err, sizeof err);
    qc_focus_ahead_t *a = calloc (1, sizeof *a);
    double ds = qc_slide_level_downsample (run->slide, level);
    if (!s || !a || !(ds > 0)
        || qc_slide_level_size (run->slide, level, &c.lw, &c.lh) != 0)
        goto done;
    qc_slide_blocks_tile (s, &c.tw, &c.th);
    if (c.tw < 8 || c.th < 8 || c.tw % 8 || c.th % 8)
        goto done;
    int64_t ntx = (c.lw + c.tw - 1) / c.tw, nty = (c.lh + c.th - 1) / c.th;
    if (ntx < 1 || nty < 1 || ntx * nty > INT32_MAX)
        goto done;
    *a = (qc_focus_ahead_t) {
        .level = level, .band = band, .ntx = (int) ntx, .nty = (int) nty,
        .per_tile = (size_t) (c.tw / 8) * (size_t) (c.th / 8),
    };
    c.a = a;
    /* a tile's height in image rows: about 32 of them looked at (a
     * 1.25x image has 32 rows a 10x tile of 256) */
    double tile_rows = c.th * ds / ((double) run->bbox_h / c.h);
    c.row_step = tile_rows > 64 ? (int) (tile_rows / 32) : 1;
    c.max_byte = max_luma >= 255 ? 255 : max_luma < 0 ? 0 : (uint8_t) max_luma;
    c.col_tile = axis_tiles (c.w, (double) run->bbox_x,
                             (double) run->bbox_w / c.w, ds, c.lw, c.tw);
    c.row_tile = axis_tiles (c.h, (double) run->bbox_y,
                             (double) run->bbox_h / c.h, ds, c.lh, c.th);
    c.guessed = calloc ((size_t) a->ntx * (size_t) a->nty, 1);
    if (!c.col_tile || !c.row_tile || !c.guessed)
        goto done;
    int threads = run->read_threads > 1 ? run->read_threads : 1;
    atomic_init (&c.next, 0);
    qc_team_run (guess_main, &c, threads);
    if (give_slots (&c) != 0 || !c.ntodo   /* nothing looks like tissue */
        || pthread_mutex_init (&c.lock, NULL) != 0)
        goto done;
    atomic_store (&c.next, 0);
    atomic_init (&c.next_session, 0);
    if ((size_t) threads > c.ntodo)
        threads = (int) c.ntodo;
    c.sessions[0] = s;        /* the first, opened above */
    s = NULL;
    for (c.nsessions = 1; c.nsessions < threads && c.nsessions < QC_TEAM_MAX;
         c.nsessions++)
        if (!(c.sessions[c.nsessions] = qc_slide_blocks_open (run->slide, level,
                                                              band, err,
                                                              sizeof err)))
            break;            /* fewer readers */
    qc_team_run (read_main, &c, c.nsessions);
    for (int i = 0; i < c.nsessions; i++)
        qc_slide_blocks_close (&c.sessions[i]);
    pthread_mutex_destroy (&c.lock);
    a->seconds = qc_clock_s () - t0;
    qc_run_keep_ahead (run, a, ahead_free);   /* frees a when it fails */
    a = NULL;
done:                         /* a is NULL once kept */
    qc_slide_blocks_close (&s);
    free (c.col_tile);
    free (c.row_tile);
    free (c.guessed);
    free (c.todo);
    ahead_free (a);
}

const qc_focus_ahead_t *
qc_focus_ahead_for (const qc_run_t *run, int level, int band)
{
    const qc_focus_ahead_t *a = qc_run_ahead (run);
    return a && a->level == level && a->band == band ? a : NULL;
}

int
qc_focus_ahead_tile (const qc_focus_ahead_t *a, size_t t, const float **hf,
                     const float **mid, const float **luma)
{
    if (!a || !hf || !mid || !luma || t >= (size_t) a->ntx * (size_t) a->nty
        || a->slot[t] < 0)
        return 0;
    size_t at = (size_t) a->slot[t] * a->per_tile;
    *hf = a->hf + at;
    *mid = a->mid + at;
    *luma = a->luma + at;
    return 1;
}

void
qc_focus_ahead_stats (const qc_focus_ahead_t *a, long *tiles,
                      qc_slide_blocks_stats_t *read, double *seconds)
{
    if (tiles)
        *tiles = a ? a->tiles : 0;
    if (read) {
        if (a)
            *read = a->read;
        else
            memset (read, 0, sizeof *read);
    }
    if (seconds)
        *seconds = a ? a->seconds : 0;
}
