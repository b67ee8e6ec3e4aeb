/* PNG encodes held back and done together; see png_queue.h. */
#include "kernels/png/png_queue.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/image/image_place.h"
#include "kernels/png/png_io.h"

#define MAX_THREADS 16
#define NAME_MAX_LEN 256

typedef enum { KIND_MASK, KIND_RGB, KIND_FIMG, KIND_GRAY8 } kind_t;

/* One queued image: a host copy, then its PNG. */
typedef struct {
    char name[NAME_MAX_LEN];
    const void *tag;
    kind_t kind;
    qc_mask_t *mask;          /* KIND_MASK */
    qc_rgb_t *rgb;            /* KIND_RGB */
    qc_fimg_t *fimg;          /* KIND_FIMG */
    uint8_t *gray;            /* KIND_GRAY8, w x h */
    int w, h;
    int rc;
    unsigned char *data;
    size_t size;
    char why[256];
} item_t;

struct qc_png_queue {
    int nthreads;
    size_t max_bytes, bytes;
    item_t *items;
    size_t n, cap;
    size_t next;              /* the next item an encoder takes */
    pthread_mutex_t lock;
};

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
    self->nthreads = nthreads;
    self->max_bytes = max_bytes;
    return self;
}

static void
item_free (item_t *it)
{
    qc_mask_destroy (&it->mask);
    qc_rgb_destroy (&it->rgb);
    qc_fimg_destroy (&it->fimg);
    free (it->gray);
    free (it->data);
    memset (it, 0, sizeof *it);
}

static void
clear (qc_png_queue_t *self)
{
    for (size_t i = 0; i < self->n; i++)
        item_free (&self->items[i]);
    self->n = self->next = 0;
    self->bytes = 0;
}

void
qc_png_queue_destroy (qc_png_queue_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_png_queue_t *self = *self_p;
    clear (self);
    free (self->items);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

/* A new item named name at the queue's end, or NULL. */
static item_t *
push (qc_png_queue_t *self, const char *name, const void *tag, kind_t kind)
{
    if (!self || !name || strlen (name) >= NAME_MAX_LEN)
        return NULL;
    if (self->n == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 32;
        item_t *grown = realloc (self->items, cap * sizeof *grown);
        if (!grown)
            return NULL;
        self->items = grown;
        self->cap = cap;
    }
    item_t *it = &self->items[self->n];
    memset (it, 0, sizeof *it);
    snprintf (it->name, sizeof it->name, "%s", name);
    it->tag = tag;
    it->kind = kind;
    return it;
}

/* Host copies are made with no home device, so that they live in host
 * memory whatever the calling thread's (a GPU lane's) home is. */
#define COPY_FUNC(T, stem, elem, KIND)                                    \
    int qc_png_queue_##stem (qc_png_queue_t *self, const char *name,     \
                             const void *tag, const T *img)               \
    {                                                                     \
        if (!qc_##stem##_valid (img))                                     \
            return -1;                                                    \
        const elem *src = qc_##stem##_host (img);                         \
        item_t *it = src ? push (self, name, tag, KIND) : NULL;           \
        if (!it)                                                          \
            return -1;                                                    \
        const qc_device_t *home = qc_place_home ();                       \
        qc_place_set_home (NULL);                                         \
        T *copy = qc_##stem##_new (img->w, img->h);                       \
        qc_place_set_home (home);                                         \
        elem *dst = copy ? qc_##stem##_host_rewrite (copy) : NULL;        \
        if (!dst) {                                                       \
            qc_##stem##_destroy (&copy);                                  \
            return -1;                                                    \
        }                                                                 \
        size_t bytes = qc_npix (img->w, img->h) * sizeof *src              \
                       * (KIND == KIND_RGB ? 3 : 1);                      \
        memcpy (dst, src, bytes);                                         \
        it->stem = copy;                                                  \
        self->bytes += bytes;                                             \
        self->n++;                                                        \
        return 0;                                                         \
    }
COPY_FUNC (qc_mask_t, mask, uint8_t, KIND_MASK)
COPY_FUNC (qc_rgb_t, rgb, uint8_t, KIND_RGB)
COPY_FUNC (qc_fimg_t, fimg, float, KIND_FIMG)

int
qc_png_queue_gray8 (qc_png_queue_t *self, const char *name, const void *tag,
                    const uint8_t *px, int w, int h)
{
    size_t n = 0;
    if (!px || qc_image_check_size (w, h, &n) != 0)
        return -1;
    item_t *it = push (self, name, tag, KIND_GRAY8);
    uint8_t *copy = it ? malloc (n) : NULL;
    if (!copy)
        return -1;
    memcpy (copy, px, n);
    it->gray = copy;
    it->w = w;
    it->h = h;
    self->bytes += n;
    self->n++;
    return 0;
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

static void
encode (item_t *it)
{
    snprintf (it->why, sizeof it->why, "invalid image");
    switch (it->kind) {
    case KIND_MASK:
        it->rc = qc_png_encode_mask (it->mask, &it->data, &it->size, it->why,
                                     sizeof it->why);
        break;
    case KIND_RGB:
        it->rc = qc_png_encode_rgb (it->rgb, &it->data, &it->size, it->why,
                                    sizeof it->why);
        break;
    case KIND_FIMG:
        it->rc = qc_png_encode_fimg (it->fimg, &it->data, &it->size, it->why,
                                     sizeof it->why);
        break;
    case KIND_GRAY8:
        it->rc = qc_png_encode_gray8 (it->gray, it->w, it->h, &it->data,
                                      &it->size, it->why, sizeof it->why);
        break;
    default:
        it->rc = -1;
    }
}

/* An encoder: takes the next item until none is left. */
static void *
encoder_main (void *arg)
{
    qc_png_queue_t *self = arg;
    for (;;) {
        pthread_mutex_lock (&self->lock);
        size_t i = self->next < self->n ? self->next++ : self->n;
        pthread_mutex_unlock (&self->lock);
        if (i == self->n)
            return NULL;
        encode (&self->items[i]);
    }
}

int
qc_png_queue_flush (qc_png_queue_t *self, qc_png_done_fn *done, void *arg)
{
    if (!self || !done)
        return -1;
    pthread_t tid[MAX_THREADS];
    int started = 0;
    self->next = 0;
    int want = self->nthreads;
    if ((size_t) want > self->n)
        want = (int) self->n;
    /* the calling thread is one of the encoders */
    for (int k = 1; k < want; k++) {
        if (pthread_create (&tid[started], NULL, encoder_main, self) != 0)
            break;
        started++;
    }
    encoder_main (self);
    for (int k = 0; k < started; k++)
        pthread_join (tid[k], NULL);
    int rc = 0;
    for (size_t i = 0; i < self->n; i++) {
        item_t *it = &self->items[i];
        if (rc == 0) {
            unsigned char *data = it->data;
            it->data = NULL;      /* done's now */
            if (done (arg, it->name, it->tag, it->rc, data, it->size, it->why) != 0
                || it->rc != 0)
                rc = -1;
        }
        item_free (it);
    }
    self->n = self->next = 0;
    self->bytes = 0;
    return rc;
}
