/* Image buffer constructors and destructors, and the typed doors to an
 * image's host bytes. Every size goes through qc_image_check_size first,
 * so the byte counts computed here cannot overflow: QC_IMAGE_MAX_PIXELS
 * * 4 bytes is far below SIZE_MAX on the 64-bit machines this project
 * targets, and the bound is re-checked against SIZE_MAX for any other.
 *
 * The four image types share one layout (w, h, px, at): each function
 * below is one generic body over a span (image_place.h) and a line per
 * type. */
#include "kernels/image/image.h"
#include "kernels/image/image_cache.h"

#include <stdlib.h>
#include <string.h>

int
qc_image_check_size (int w, int h, size_t *npix)
{
    if (w < 1 || h < 1 || w > QC_IMAGE_MAX_DIM || h > QC_IMAGE_MAX_DIM)
        return -1;
    size_t n = (size_t) w * (size_t) h;
    /* Largest element is 4 bytes (float, int32) or 3 (RGB). */
    if (n > QC_IMAGE_MAX_PIXELS || n > SIZE_MAX / 4)
        return -1;
    if (npix)
        *npix = n;
    return 0;
}

/* A new image struct of the given size whose px and at are in the
 * caller's hands: NULL for a bad size or no memory. */
#define MAKE(T, w, h)                                                     \
    (qc_image_check_size ((w), (h), NULL) ? NULL : calloc (1, sizeof (T)))

/* Zeroed pixels for a new image: on the host (the large ones through the
 * buffer cache, image_cache.h); or none yet, uniform 0, on a thread
 * whose home is a device (image_place.h). 0 or -1 (no memory). */
static int
give_pixels (qc_span_t s)
{
    if (qc_place_home ()) {
        qc_span_set_uniform (s, 0);
        return 0;
    }
    qc_span_touch (s);
    *s.px = qc_image_cache_take (s.bytes);
    return *s.px ? 0 : -1;
}

/* Gives the pixels of an image back, on both sides. */
static void
drop_pixels (qc_span_t s)
{
    qc_span_drop_device (s);
    qc_image_cache_give (*s.px, s.bytes);
    *s.px = NULL;
}

/* Makes dst (new, same size and type) a copy of src on the side where
 * src's newest bytes are: on its device without a copy through the host
 * when they are there. */
static int
copy_pixels (qc_span_t dst, qc_span_t src)
{
    if (src.at->uniform) {
        qc_span_set_uniform (dst, src.at->value);
        return 0;
    }
    if (src.at->dev && !src.at->dev_stale) {
        const qc_device_t *d = src.at->device;
        void *to = qc_span_device (dst, d, QC_REWRITE);
        return to && d->copy (to, src.at->dev, src.bytes) == 0 ? 0 : -1;
    }
    const void *from = qc_span_host (src, QC_READ);
    if (!from)
        return -1;
    qc_span_touch (dst);
    if (!(*dst.px = qc_image_cache_take_uninit (dst.bytes)))
        return -1;
    memcpy (*dst.px, from, dst.bytes);
    return 0;
}

#define IMAGE_FUNCS(T, stem)                                              \
    T *qc_##stem##_new (int w, int h)                                     \
    {                                                                     \
        T *self = MAKE (T, w, h);                                         \
        if (!self)                                                        \
            return NULL;                                                  \
        self->w = w;                                                      \
        self->h = h;                                                      \
        if (give_pixels (QC_SPAN (self)) != 0) {                          \
            free (self);                                                  \
            return NULL;                                                  \
        }                                                                 \
        return self;                                                      \
    }                                                                     \
    void qc_##stem##_destroy (T **self_p)                                 \
    {                                                                     \
        if (!self_p || !*self_p)                                          \
            return;                                                       \
        drop_pixels (QC_SPAN (*self_p));                                  \
        STEM_FREE_EXTRA_##stem (*self_p);                                 \
        free (*self_p);                                                   \
        *self_p = NULL;                                                   \
    }

#define STEM_FREE_EXTRA_rgb(self)
#define STEM_FREE_EXTRA_fimg(self)
#define STEM_FREE_EXTRA_mask(self)
#define STEM_FREE_EXTRA_labels(self) free ((self)->area)

IMAGE_FUNCS (qc_rgb_t, rgb)
IMAGE_FUNCS (qc_fimg_t, fimg)
IMAGE_FUNCS (qc_mask_t, mask)
IMAGE_FUNCS (qc_labels_t, labels)

#define CLONE_FUNC(T, stem)                                               \
    T *qc_##stem##_clone (const T *src)                                   \
    {                                                                     \
        if (!qc_##stem##_valid (src))                                     \
            return NULL;                                                  \
        T *self = MAKE (T, src->w, src->h);                               \
        if (!self)                                                        \
            return NULL;                                                  \
        self->w = src->w;                                                 \
        self->h = src->h;                                                 \
        if (copy_pixels (QC_SPAN (self), QC_SPAN (src)) != 0) {           \
            qc_##stem##_destroy (&self);                                  \
            return NULL;                                                  \
        }                                                                 \
        return self;                                                      \
    }

#define NEW_HOST_FUNC(T, stem)                                            \
    T *qc_##stem##_new_host (int w, int h)                                \
    {                                                                     \
        const qc_device_t *home = qc_place_home ();                       \
        qc_place_set_home (NULL);                                         \
        T *self = qc_##stem##_new (w, h);                                 \
        qc_place_set_home (home);                                         \
        return self;                                                      \
    }

NEW_HOST_FUNC (qc_rgb_t, rgb)
NEW_HOST_FUNC (qc_fimg_t, fimg)
NEW_HOST_FUNC (qc_mask_t, mask)

CLONE_FUNC (qc_rgb_t, rgb)
CLONE_FUNC (qc_fimg_t, fimg)
CLONE_FUNC (qc_mask_t, mask)

int
qc_mask_fill (qc_mask_t *self, int value)
{
    if (!qc_mask_valid (self))
        return -1;
    if (self->px && !self->at.dev) {
        memset (self->px, value ? 1 : 0, qc_npix (self->w, self->h));
        self->at.host_stale = 0;
        qc_span_touch (QC_SPAN (self));
        return 0;
    }
    qc_span_set_uniform (QC_SPAN (self), value ? 1 : 0);
    return 0;
}

int
qc_fimg_zero (qc_fimg_t *self)
{
    if (!qc_fimg_valid (self))
        return -1;
    if (self->px && !self->at.dev) {
        memset (self->px, 0, qc_npix (self->w, self->h) * sizeof *self->px);
        self->at.host_stale = 0;
        qc_span_touch (QC_SPAN (self));
        return 0;
    }
    qc_span_set_uniform (QC_SPAN (self), 0);
    return 0;
}

/* The typed doors to the host bytes (image.h). */
#define HOST_READ_FUNC(T, stem, P)                                        \
    const P *qc_##stem##_host (const T *img)                              \
    {                                                                     \
        return img ? qc_span_host (QC_SPAN (img), QC_READ) : NULL;        \
    }
#define HOST_WRITE_FUNCS(T, stem, P)                                      \
    P *qc_##stem##_host_edit (T *img)                                     \
    {                                                                     \
        return img ? qc_span_host (QC_SPAN (img), QC_EDIT) : NULL;        \
    }                                                                     \
    P *qc_##stem##_host_rewrite (T *img)                                  \
    {                                                                     \
        return img ? qc_span_host (QC_SPAN (img), QC_REWRITE) : NULL;     \
    }

HOST_READ_FUNC (qc_rgb_t, rgb, uint8_t)
HOST_READ_FUNC (qc_fimg_t, fimg, float)
HOST_READ_FUNC (qc_mask_t, mask, uint8_t)
HOST_READ_FUNC (qc_labels_t, labels, int32_t)
HOST_WRITE_FUNCS (qc_rgb_t, rgb, uint8_t)
HOST_WRITE_FUNCS (qc_fimg_t, fimg, float)
HOST_WRITE_FUNCS (qc_mask_t, mask, uint8_t)

/* Pixels somewhere: host bytes, a device copy, or a uniform value. */
#define HAS_PIXELS(img) ((img)->px || (img)->at.dev || (img)->at.uniform)

int
qc_rgb_valid (const qc_rgb_t *img)
{
    return img && HAS_PIXELS (img)
           && qc_image_check_size (img->w, img->h, NULL) == 0;
}

int
qc_fimg_valid (const qc_fimg_t *img)
{
    return img && HAS_PIXELS (img)
           && qc_image_check_size (img->w, img->h, NULL) == 0;
}

int
qc_mask_valid (const qc_mask_t *img)
{
    return img && HAS_PIXELS (img)
           && qc_image_check_size (img->w, img->h, NULL) == 0;
}

int
qc_mask_fits (const qc_mask_t *m, int w, int h)
{
    return !m || (qc_mask_valid (m) && m->w == w && m->h == h);
}
