/* The parallel tile pipeline and the TIFF directories.
 *
 * Tiles of all levels form one sequence (level 0 row by row, then level
 * 1, ...). Workers claim the next index, paint and encode it, and park
 * the bytes in a ring slot; the writer takes slots strictly in sequence.
 * A worker never runs more than the ring's length ahead of the writer,
 * which bounds memory whatever the slide size. */
#include "tests/gen/mk_tiff.h"
#include "tests/gen/mk_jpeg.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

void
mk_levels_compute (mk_levels_t *lv, int w, int h)
{
    lv->n = 1;
    lv->w[0] = w;
    lv->h[0] = h;
    while (lv->n < MK_MAX_LEVELS) {
        int pw = lv->w[lv->n - 1], ph = lv->h[lv->n - 1];
        if ((pw > ph ? pw : ph) <= 1024)
            break;
        lv->w[lv->n] = (pw + 3) / 4;
        lv->h[lv->n] = (ph + 3) / 4;
        lv->n++;
    }
}

typedef struct {
    uint8_t *data;
    size_t len, cap;
    int ready;
} slot_t;

typedef struct {
    const mk_pyramid_job_t *job;
    int tile;
    long total;
    long start[MK_MAX_LEVELS + 1];   /* first sequence index of each level */
    int ntx[MK_MAX_LEVELS];
    pthread_mutex_t mu;
    pthread_cond_t cv_ready, cv_space;
    long next, written;
    int failed;
    char err[512];
    slot_t *ring;
    int nring;
} pipe_t;

static void
pipe_fail (pipe_t *p, const char *fmt, ...)
{
    pthread_mutex_lock (&p->mu);
    if (!p->failed) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (p->err, sizeof p->err, fmt, ap);
        va_end (ap);
        p->failed = 1;
    }
    pthread_cond_broadcast (&p->cv_ready);
    pthread_cond_broadcast (&p->cv_space);
    pthread_mutex_unlock (&p->mu);
}

static void *
worker_main (void *arg)
{
    pipe_t *p = arg;
    int T = p->tile;
    mk_scratch_t *scratch = mk_scratch_new (T);
    mk_jpeg_t *jpeg = mk_jpeg_new (p->job->quality, T, T);
    uint8_t *rgb = malloc ((size_t) T * T * 3);
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    if (!scratch || !jpeg || !rgb) {
        pipe_fail (p, "out of memory starting a worker");
        goto done;
    }
    for (;;) {
        pthread_mutex_lock (&p->mu);
        while (!p->failed && p->next < p->total
               && p->next >= p->written + p->nring)
            pthread_cond_wait (&p->cv_space, &p->mu);
        if (p->failed || p->next >= p->total) {
            pthread_mutex_unlock (&p->mu);
            break;
        }
        long g = p->next++;
        pthread_mutex_unlock (&p->mu);

        int level = 0;
        while (g >= p->start[level + 1])
            level++;
        long idx = g - p->start[level];
        int tx = (int) (idx % p->ntx[level]), ty = (int) (idx / p->ntx[level]);
        mk_paint_tile (p->job->painter, level, tx, ty, rgb, scratch);
        if (mk_jpeg_encode (jpeg, rgb, &buf, &cap, &len) != 0) {
            pipe_fail (p, "tile %d,%d of level %d: %s", tx, ty, level,
                       mk_jpeg_error (jpeg));
            break;
        }
        /* Hand the bytes over by swapping buffers: no copy, and the
         * worker takes the slot's old buffer for its next tile. */
        pthread_mutex_lock (&p->mu);
        slot_t *s = &p->ring[g % p->nring];
        uint8_t *old = s->data;
        size_t oldcap = s->cap;
        s->data = buf;
        s->cap = cap;
        s->len = len;
        s->ready = 1;
        buf = old;
        cap = oldcap;
        pthread_cond_broadcast (&p->cv_ready);
        pthread_mutex_unlock (&p->mu);
    }
done:
    free (buf);
    free (rgb);
    mk_jpeg_destroy (&jpeg);
    mk_scratch_destroy (&scratch);
    return NULL;
}

/* libtiff reports errors through a process-wide handler; the last one is
 * kept to explain a failed call. Only the writer thread calls libtiff. */
static char tiff_last_error[512];

static void
on_tiff_error (const char *module, const char *fmt, va_list ap)
{
    char msg[400];
    vsnprintf (msg, sizeof msg, fmt, ap);
    snprintf (tiff_last_error, sizeof tiff_last_error, "%s: %s",
              module ? module : "libtiff", msg);
}

static int
set_level_tags (TIFF *tif, const mk_pyramid_job_t *job, int level,
                const uint8_t *tables, size_t tables_len)
{
    int T = job->painter->tile;
    /* libtiff writes the directories after one naming n SubIFDs as
     * those, and fills in their offsets */
    uint64_t sub_offsets[MK_MAX_LEVELS] = { 0 };
    uint16_t nsub = (uint16_t) (job->levels->n - 1);
    return TIFFSetField (tif, TIFFTAG_SUBFILETYPE,
                         job->subifds && level > 0 ? FILETYPE_REDUCEDIMAGE : 0)
           && (!job->subifds || level > 0 || nsub == 0
               || TIFFSetField (tif, TIFFTAG_SUBIFD, nsub, sub_offsets))
           && TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (uint32_t) job->levels->w[level])
           && TIFFSetField (tif, TIFFTAG_IMAGELENGTH, (uint32_t) job->levels->h[level])
           && TIFFSetField (tif, TIFFTAG_TILEWIDTH, (uint32_t) T)
           && TIFFSetField (tif, TIFFTAG_TILELENGTH, (uint32_t) T)
           && TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8)
           && TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 3)
           && TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG)
           && TIFFSetField (tif, TIFFTAG_COMPRESSION, COMPRESSION_JPEG)
           && TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_YCBCR)
           && TIFFSetField (tif, TIFFTAG_YCBCRSUBSAMPLING, 2, 2)
           && TIFFSetField (tif, TIFFTAG_JPEGTABLES, (uint32_t) tables_len, tables)
           && (!job->desc[level]
               || TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, job->desc[level]));
}

/* The writer loop: takes tiles in sequence order, one directory per
 * level. Returns 0 or -1 (p->err says why). */
static int
write_tiles (pipe_t *p, TIFF *tif, const uint8_t *tables, size_t tables_len)
{
    const mk_levels_t *lv = p->job->levels;
    for (int level = 0; level < lv->n; level++) {
        if (!set_level_tags (tif, p->job, level, tables, tables_len)) {
            pipe_fail (p, "setting TIFF tags: %s", tiff_last_error);
            return -1;
        }
        for (long g = p->start[level]; g < p->start[level + 1]; g++) {
            slot_t *s = &p->ring[g % p->nring];
            pthread_mutex_lock (&p->mu);
            while (!s->ready && !p->failed)
                pthread_cond_wait (&p->cv_ready, &p->mu);
            int failed = p->failed;
            pthread_mutex_unlock (&p->mu);
            if (failed)
                return -1;
            /* The slot stays ready (untouched by workers) until written
             * moves past it, so it is read here without the lock. */
            if (TIFFWriteRawTile (tif, (uint32_t) (g - p->start[level]),
                                  s->data, (tmsize_t) s->len) < 0) {
                pipe_fail (p, "writing a tile: %s", tiff_last_error);
                return -1;
            }
            pthread_mutex_lock (&p->mu);
            s->ready = 0;
            p->written++;
            pthread_cond_broadcast (&p->cv_space);
            pthread_mutex_unlock (&p->mu);
        }
        if (!TIFFWriteDirectory (tif)) {
            pipe_fail (p, "writing a TIFF directory: %s", tiff_last_error);
            return -1;
        }
    }
    return 0;
}

static int
pipe_setup (pipe_t *p, const mk_pyramid_job_t *job)
{
    memset (p, 0, sizeof *p);
    p->job = job;
    p->tile = job->painter->tile;
    for (int l = 0; l < job->levels->n; l++) {
        p->ntx[l] = (job->levels->w[l] + p->tile - 1) / p->tile;
        long nty = (job->levels->h[l] + p->tile - 1) / p->tile;
        p->start[l + 1] = p->start[l] + (long) p->ntx[l] * nty;
    }
    p->total = p->start[job->levels->n];
    p->nring = job->threads * 4;
    p->ring = calloc ((size_t) p->nring, sizeof *p->ring);
    if (!p->ring)
        return -1;
    pthread_mutex_init (&p->mu, NULL);
    pthread_cond_init (&p->cv_ready, NULL);
    pthread_cond_init (&p->cv_space, NULL);
    return 0;
}

static void
pipe_teardown (pipe_t *p)
{
    for (int i = 0; i < p->nring; i++)
        free (p->ring[i].data);
    free (p->ring);
    pthread_mutex_destroy (&p->mu);
    pthread_cond_destroy (&p->cv_ready);
    pthread_cond_destroy (&p->cv_space);
}

/* Runs the workers and the writer on an open TIFF. */
static int
run_pipeline (pipe_t *p, TIFF *tif, char *err, size_t errlen)
{
    uint8_t *tables = NULL;
    size_t tables_len = 0;
    mk_jpeg_t *jpeg = mk_jpeg_new (p->job->quality, p->tile, p->tile);
    if (!jpeg || mk_jpeg_tables (jpeg, &tables, &tables_len) != 0) {
        snprintf (err, errlen, "cannot set up the JPEG encoder: %s",
                  jpeg ? mk_jpeg_error (jpeg) : "out of memory");
        mk_jpeg_destroy (&jpeg);
        return -1;
    }
    mk_jpeg_destroy (&jpeg);
    pthread_t th[64];
    int started = 0;
    for (; started < p->job->threads && started < 64; started++) {
        int rc = pthread_create (&th[started], NULL, worker_main, p);
        if (rc != 0) {
            pipe_fail (p, "cannot start a thread: %s", strerror (rc));
            break;
        }
    }
    int rc = started > 0 ? write_tiles (p, tif, tables, tables_len) : -1;
    if (rc != 0)
        pipe_fail (p, "stopped");    /* wakes workers; keeps first reason */
    for (int i = 0; i < started; i++)
        pthread_join (th[i], NULL);
    free (tables);
    if (rc != 0 || p->failed) {
        snprintf (err, errlen, "%s", p->err);
        return -1;
    }
    return 0;
}

int
mk_pyramid_write (const mk_pyramid_job_t *job, char *err, size_t errlen)
{
    char tmp[4096];
    if (snprintf (tmp, sizeof tmp, "%s.partial", job->path) >= (int) sizeof tmp) {
        snprintf (err, errlen, "output path too long");
        return -1;
    }
    pipe_t p;
    if (pipe_setup (&p, job) != 0) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    TIFFSetErrorHandler (on_tiff_error);
    TIFFSetWarningHandler (NULL);
    tiff_last_error[0] = '\0';
    TIFF *tif = TIFFOpen (tmp, job->bigtiff ? "w8" : "w");
    int rc = -1;
    if (!tif)
        snprintf (err, errlen, "cannot create %s: %s", tmp,
                  tiff_last_error[0] ? tiff_last_error : strerror (errno));
    else {
        rc = run_pipeline (&p, tif, err, errlen);
        TIFFClose (tif);
        if (rc == 0 && tiff_last_error[0]) {
            snprintf (err, errlen, "closing %s: %s", tmp, tiff_last_error);
            rc = -1;
        }
        if (rc == 0 && rename (tmp, job->path) != 0) {
            snprintf (err, errlen, "renaming %s to %s: %s", tmp, job->path,
                      strerror (errno));
            rc = -1;
        }
        if (rc != 0)
            remove (tmp);
    }
    pipe_teardown (&p);
    return rc;
}
