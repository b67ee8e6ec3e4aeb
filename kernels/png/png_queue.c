/* PNG encodes held back and done together; see png_queue.h. */
#include "kernels/png/png_queue.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/image/image_place.h"
#include "kernels/png/png_io.h"
#include "shared/clock.h"
#include "shared/log.h"
#include "shared/team.h"

#define MAX_THREADS QC_TEAM_MAX
#define NAME_MAX_LEN 256

/* One queued image: a host copy (owned: mask, rgb, fimg or gray, as
 * img's kind says), then its PNG. Items are allocated one by one, so an
 * encoder's item stays put while the list grows. */
typedef struct {
    char name[NAME_MAX_LEN];
    const void *tag;
    qc_png_image_t img;       /* points at the copy */
    qc_mask_t *mask;
    qc_rgb_t *rgb;
    qc_fimg_t *fimg;
    uint8_t *gray;
    int rc;
    unsigned char *data;
    size_t size;
    char why[256];
} item_t;

/* The encoders start on an image as soon as it is queued, on threads of
 * their own, while the run goes on with its next steps; a flush waits
 * for what is left (and encodes some of it itself). So a GPU lane's
 * thread waits at the end of a slide only for the last images. */
struct qc_png_queue {
    int nthreads;             /* encoders in all, the flushing thread one */
    size_t max_bytes, bytes;
    item_t **items;
    size_t n, cap;
    size_t next;              /* the next item an encoder takes */
    size_t ndone;             /* items encoded */
    int stop;                 /* the encoders are to return */
    pthread_t threads[MAX_THREADS];
    int nstarted;
    pthread_mutex_t lock;
    pthread_cond_t work;      /* an item queued, or stop */
    pthread_cond_t done;      /* an item encoded */
};

static void
encode (item_t *it)
{
    it->rc = qc_png_encode_image (&it->img, &it->data, &it->size, it->why,
                                  sizeof it->why);
}

/* Takes the next item, encodes it and counts it, the lock held on entry
 * and on return; 0 when there was none. */
static int
encode_next_locked (qc_png_queue_t *self)
{
    if (self->next >= self->n)
        return 0;
    item_t *it = self->items[self->next++];
    pthread_mutex_unlock (&self->lock);
    encode (it);
    pthread_mutex_lock (&self->lock);
    self->ndone++;
    pthread_cond_broadcast (&self->done);
    return 1;
}

/* A background encoder: each item as it comes, until stop. */
static void *
encoder_main (void *arg)
{
    qc_png_queue_t *self = arg;
    pthread_mutex_lock (&self->lock);
    while (!self->stop)
        if (!encode_next_locked (self))
            pthread_cond_wait (&self->work, &self->lock);
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

qc_png_queue_t *
qc_png_queue_new (int nthreads, size_t max_bytes)
{
    if (nthreads < 1 || nthreads > MAX_THREADS || max_bytes == 0)
        return NULL;
    qc_png_queue_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    if (pthread_mutex_init (&self->lock, NULL) != 0) {
        free (self);
        return NULL;
    }
    if (pthread_cond_init (&self->work, NULL) != 0) {
        pthread_mutex_destroy (&self->lock);
        free (self);
        return NULL;
    }
    if (pthread_cond_init (&self->done, NULL) != 0) {
        pthread_cond_destroy (&self->work);
        pthread_mutex_destroy (&self->lock);
        free (self);
        return NULL;
    }
    self->nthreads = nthreads;
    self->max_bytes = max_bytes;
    return self;
}

/* The background encoders, nthreads - 1 of them, started with the first
 * image: a queue never used starts none, and one that cannot be started
 * only leaves more to the flush. Under the lock. */
static void
start_encoders_locked (qc_png_queue_t *self)
{
    while (self->nstarted < self->nthreads - 1
           && pthread_create (&self->threads[self->nstarted], NULL,
                              encoder_main, self) == 0)
        self->nstarted++;
}

static void
item_free (item_t *it)
{
    if (!it)
        return;
    qc_mask_destroy (&it->mask);
    qc_rgb_destroy (&it->rgb);
    qc_fimg_destroy (&it->fimg);
    free (it->gray);
    free (it->data);
    free (it);
}

/* Frees every item. Only when no encoder holds one: n == ndone. */
static void
clear (qc_png_queue_t *self)
{
    for (size_t i = 0; i < self->n; i++)
        item_free (self->items[i]);
    self->n = self->next = self->ndone = 0;
    self->bytes = 0;
}

void
qc_png_queue_destroy (qc_png_queue_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_png_queue_t *self = *self_p;
    /* the encoders finish the item in hand and return; the rest is
     * freed unencoded */
    pthread_mutex_lock (&self->lock);
    self->stop = 1;
    pthread_cond_broadcast (&self->work);
    pthread_mutex_unlock (&self->lock);
    for (int i = 0; i < self->nstarted; i++)
        pthread_join (self->threads[i], NULL);
    clear (self);
    free (self->items);
    pthread_cond_destroy (&self->done);
    pthread_cond_destroy (&self->work);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

int
qc_png_image_valid (const qc_png_image_t *img)
{
    if (!img)
        return 0;
    switch (img->kind) {
    case QC_PNG_MASK: return qc_mask_valid (img->mask);
    case QC_PNG_RGB: return qc_rgb_valid (img->rgb);
    case QC_PNG_FIMG: return qc_fimg_valid (img->fimg);
    case QC_PNG_GRAY8: return img->gray && qc_image_check_size (img->w, img->h, NULL) == 0;
    }
    return 0;
}

int
qc_png_encode_image (const qc_png_image_t *img, unsigned char **data,
                     size_t *size, char *why, size_t whylen)
{
    if (!qc_png_image_valid (img)) {
        snprintf (why, whylen, "%s", img && img->kind == QC_PNG_MASK
                  ? "invalid mask" : "invalid image");
        return -1;
    }
    switch (img->kind) {
    case QC_PNG_MASK: return qc_png_encode_mask (img->mask, data, size, why, whylen);
    case QC_PNG_RGB: return qc_png_encode_rgb (img->rgb, data, size, why, whylen);
    case QC_PNG_FIMG: return qc_png_encode_fimg (img->fimg, data, size, why, whylen);
    case QC_PNG_GRAY8:
        return qc_png_encode_gray8 (img->gray, img->w, img->h, data, size, why,
                                    whylen);
    }
    return -1;
}

/* A host copy of img's current bytes into it (its owned field and its
 * img), and their size: 0, or -1. Copies live in host memory whatever
 * the calling thread's (a GPU lane's) home is. */
#define COPY_INTO(stem, elem, channels)                                   \
    do {                                                                  \
        const elem *src = qc_##stem##_host (img->stem);                   \
        it->stem = src ? qc_##stem##_new_host (img->stem->w, img->stem->h) \
                       : NULL;                                            \
        elem *dst = it->stem ? qc_##stem##_host_rewrite (it->stem) : NULL; \
        if (!dst)                                                         \
            return -1;                                                    \
        *bytes = qc_npix (img->stem->w, img->stem->h) * sizeof *src * (channels); \
        memcpy (dst, src, *bytes);                                        \
        it->img.stem = it->stem;                                          \
    } while (0)

static int
copy_into (item_t *it, const qc_png_image_t *img, size_t *bytes)
{
    it->img = *img;
    switch (img->kind) {
    case QC_PNG_MASK: COPY_INTO (mask, uint8_t, 1); return 0;
    case QC_PNG_RGB: COPY_INTO (rgb, uint8_t, 3); return 0;
    case QC_PNG_FIMG: COPY_INTO (fimg, float, 1); return 0;
    case QC_PNG_GRAY8:
        *bytes = qc_npix (img->w, img->h);
        if (!(it->gray = malloc (*bytes)))
            return -1;
        memcpy (it->gray, img->gray, *bytes);
        it->img.gray = it->gray;
        return 0;
    }
    return -1;
}

int
qc_png_queue_image (qc_png_queue_t *self, const char *name, const void *tag,
                    const qc_png_image_t *img)
{
    if (!self || !name || strlen (name) >= NAME_MAX_LEN
        || !qc_png_image_valid (img))
        return -1;
    /* the copy on this thread (a GPU lane's: a device image comes down
     * here), outside the lock */
    item_t *it = calloc (1, sizeof *it);
    size_t bytes = 0;
    if (!it || copy_into (it, img, &bytes) != 0) {
        item_free (it);
        return -1;
    }
    snprintf (it->name, sizeof it->name, "%s", name);
    it->tag = tag;
    pthread_mutex_lock (&self->lock);
    if (self->n == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 32;
        item_t **grown = realloc (self->items, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock (&self->lock);
            item_free (it);
            return -1;
        }
        self->items = grown;
        self->cap = cap;
    }
    self->items[self->n++] = it;
    self->bytes += bytes;
    start_encoders_locked (self);
    pthread_cond_signal (&self->work);
    pthread_mutex_unlock (&self->lock);
    return 0;
}

size_t
qc_png_queue_encoded (qc_png_queue_t *self)
{
    if (!self)
        return 0;
    pthread_mutex_lock (&self->lock);
    size_t n = self->ndone;
    pthread_mutex_unlock (&self->lock);
    return n;
}

int
qc_png_queue_due (const qc_png_queue_t *self)
{
    return self && self->bytes > self->max_bytes;
}

size_t
qc_png_queue_length (const qc_png_queue_t *self)
{
    return self ? self->n : 0;
}

int
qc_png_queue_flush (qc_png_queue_t *self, qc_png_done_fn *done, void *arg)
{
    if (!self || !done)
        return -1;
    double t0 = qc_clock_s ();
    pthread_mutex_lock (&self->lock);
    size_t early = self->ndone;
    /* this thread encodes what no encoder has taken, then waits for the
     * ones in hand */
    while (encode_next_locked (self))
        ;
    while (self->ndone < self->n)
        pthread_cond_wait (&self->done, &self->lock);
    pthread_mutex_unlock (&self->lock);
    /* what the encoding costs the thread that waits for it (debug: the
     * steps' times are logged there too; bench_gpu --gpu-steps shows
     * both) */
    if (self->n)
        qc_log (QC_LOG_DEBUG, "png_queue", "%zu PNGs (%.1f MB of images) "
                "encoded on %d threads, %zu of them before the flush, "
                "which waited %.1f ms", self->n, (double) self->bytes / 1e6,
                self->nstarted + 1, early, (qc_clock_s () - t0) * 1e3);
    /* in order, until one fails; clear () frees what done did not take.
     * No encoder touches an item now: all are done. */
    int rc = 0;
    for (size_t i = 0; i < self->n && rc == 0; i++) {
        item_t *it = self->items[i];
        unsigned char *data = it->data;
        it->data = NULL;          /* done's now */
        if (done (arg, it->name, it->tag, it->rc, data, it->size, it->why) != 0
            || it->rc != 0)
            rc = -1;
    }
    pthread_mutex_lock (&self->lock);
    clear (self);
    pthread_mutex_unlock (&self->lock);
    return rc;
}
