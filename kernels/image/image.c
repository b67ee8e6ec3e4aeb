/* Image buffer constructors and destructors. Every size goes through
 * qc_image_check_size first, so the byte counts computed here cannot
 * overflow: QC_IMAGE_MAX_PIXELS * 4 bytes is far below SIZE_MAX on the
 * 64-bit machines this project targets, and the bound is re-checked
 * against SIZE_MAX for any other. */
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

/* Zeroed pixels of w x h elements of elem bytes, the size already
 * bounded; large ones through the buffer cache (image_cache.h). */
static void *
alloc_pixels (int w, int h, size_t elem)
{
    size_t n;
    if (qc_image_check_size (w, h, &n))
        return NULL;
    return qc_image_cache_take (n * elem);
}

/* A copy of the n * elem bytes at src in a new pixel buffer: not
 * cleared first, every byte being written. */
static void *
copy_pixels (const void *src, int w, int h, size_t elem)
{
    size_t n;
    if (qc_image_check_size (w, h, &n))
        return NULL;
    void *p = qc_image_cache_take_uninit (n * elem);
    if (p)
        memcpy (p, src, n * elem);
    return p;
}

/* Gives the pixels of a w x h image of elem-byte elements back. */
static void
free_pixels (void *px, int w, int h, size_t elem)
{
    size_t n;
    if (qc_image_check_size (w, h, &n) == 0)
        qc_image_cache_give (px, n * elem);
    else
        free (px);
}

qc_rgb_t *
qc_rgb_new (int w, int h)
{
    qc_rgb_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->px = alloc_pixels (w, h, 3);
    if (!self->px) {
        free (self);
        return NULL;
    }
    self->w = w;
    self->h = h;
    return self;
}

qc_rgb_t *
qc_rgb_clone (const qc_rgb_t *src)
{
    if (!qc_rgb_valid (src))
        return NULL;
    qc_rgb_t *self = calloc (1, sizeof *self);
    if (!self || !(self->px = copy_pixels (src->px, src->w, src->h, 3))) {
        free (self);
        return NULL;
    }
    self->w = src->w;
    self->h = src->h;
    return self;
}

void
qc_rgb_destroy (qc_rgb_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free_pixels ((*self_p)->px, (*self_p)->w, (*self_p)->h, 3);
    free (*self_p);
    *self_p = NULL;
}

qc_fimg_t *
qc_fimg_new (int w, int h)
{
    qc_fimg_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->px = alloc_pixels (w, h, sizeof (float));
    if (!self->px) {
        free (self);
        return NULL;
    }
    self->w = w;
    self->h = h;
    return self;
}

qc_fimg_t *
qc_fimg_clone (const qc_fimg_t *src)
{
    if (!qc_fimg_valid (src))
        return NULL;
    qc_fimg_t *self = calloc (1, sizeof *self);
    if (!self
        || !(self->px = copy_pixels (src->px, src->w, src->h, sizeof (float)))) {
        free (self);
        return NULL;
    }
    self->w = src->w;
    self->h = src->h;
    return self;
}

void
qc_fimg_destroy (qc_fimg_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free_pixels ((*self_p)->px, (*self_p)->w, (*self_p)->h, sizeof (float));
    free (*self_p);
    *self_p = NULL;
}

qc_mask_t *
qc_mask_new (int w, int h)
{
    qc_mask_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->px = alloc_pixels (w, h, 1);
    if (!self->px) {
        free (self);
        return NULL;
    }
    self->w = w;
    self->h = h;
    return self;
}

qc_mask_t *
qc_mask_clone (const qc_mask_t *src)
{
    if (!qc_mask_valid (src))
        return NULL;
    qc_mask_t *self = calloc (1, sizeof *self);
    if (!self || !(self->px = copy_pixels (src->px, src->w, src->h, 1))) {
        free (self);
        return NULL;
    }
    self->w = src->w;
    self->h = src->h;
    return self;
}

void
qc_mask_destroy (qc_mask_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free_pixels ((*self_p)->px, (*self_p)->w, (*self_p)->h, 1);
    free (*self_p);
    *self_p = NULL;
}

int
qc_mask_fill (qc_mask_t *self, int value)
{
    if (!qc_mask_valid (self))
        return -1;
    memset (self->px, value ? 1 : 0, qc_npix (self->w, self->h));
    return 0;
}

qc_labels_t *
qc_labels_new (int w, int h)
{
    qc_labels_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->px = alloc_pixels (w, h, sizeof (int32_t));
    if (!self->px) {
        free (self);
        return NULL;
    }
    self->w = w;
    self->h = h;
    return self;
}

void
qc_labels_destroy (qc_labels_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free_pixels ((*self_p)->px, (*self_p)->w, (*self_p)->h, sizeof (int32_t));
    free ((*self_p)->area);
    free (*self_p);
    *self_p = NULL;
}

int
qc_rgb_valid (const qc_rgb_t *img)
{
    return img && img->px && qc_image_check_size (img->w, img->h, NULL) == 0;
}

int
qc_fimg_valid (const qc_fimg_t *img)
{
    return img && img->px && qc_image_check_size (img->w, img->h, NULL) == 0;
}

int
qc_mask_valid (const qc_mask_t *img)
{
    return img && img->px && qc_image_check_size (img->w, img->h, NULL) == 0;
}
