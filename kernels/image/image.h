/* Image buffers the QC pipeline works on: 8-bit interleaved RGB, float32
 * single channel, 0/1 masks and int32 component labels.
 *
 * The structs are open on purpose: every op of both backends (kernels/ops/cpu
 * and later CUDA) reads the fields directly, and a transparent layout is
 * what lets a device copy be one memcpy. Pixels are tightly packed,
 * row-major, with no row padding: pixel (x, y) of a w-wide image is at
 * index y * w + x (times 3 for RGB).
 *
 * Sizes are bounded (QC_IMAGE_MAX_DIM per side, QC_IMAGE_MAX_PIXELS in
 * all) so that pixel counts fit an int32 label and byte counts never
 * overflow size_t; a constructor given a bad size returns NULL. All
 * constructors return zero-filled images. destroy (T **self_p) frees and
 * nulls the caller's pointer and accepts NULL or a pointer to NULL.
 *
 * Where the bytes are (image_place.h): px is the host copy, and may be
 * stale or NULL for an image a device backend wrote or one made on a
 * thread whose home is a device. Code outside the backends reads pixels
 * through qc_T_host (img), writes through qc_T_host_edit (read and
 * write) or qc_T_host_rewrite (every pixel written, none read): each
 * returns px made current, or NULL (logged) when memory or the copy
 * fails. For an image that was never on a device they return px as it
 * is. */
#ifndef QC_IMAGE_H
#define QC_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image_place.h"

#define QC_IMAGE_MAX_DIM    (1 << 20)
#define QC_IMAGE_MAX_PIXELS ((size_t) 1 << 30)

typedef struct qc_rgb {
    int w, h;
    uint8_t *px;          /* w * h * 3 bytes: R, G, B */
    qc_place_t at;        /* where the current bytes are */
} qc_rgb_t;

typedef struct qc_fimg {
    int w, h;
    float *px;            /* w * h values */
    qc_place_t at;
} qc_fimg_t;

typedef struct qc_mask {
    int w, h;
    uint8_t *px;          /* w * h values, each 0 or 1 */
    qc_place_t at;
} qc_mask_t;

/* Connected components: px holds 0 for background and 1..n for the
 * components, numbered in raster order of their first pixel (as
 * skimage.measure.label numbers them); area[k] is the pixel count of
 * component k (area[0] counts the background). */
typedef struct qc_labels {
    int w, h;
    int32_t *px;          /* w * h labels */
    int32_t n;            /* number of components */
    size_t *area;         /* n + 1 entries; NULL until labelled (host
                             memory always) */
    qc_place_t at;
} qc_labels_t;

/* 0 when w x h is a valid image size (both >= 1, within the bounds),
 * and then *npix (if not NULL) is w * h; -1 otherwise. */
int qc_image_check_size (int w, int h, size_t *npix);

qc_rgb_t *qc_rgb_new (int w, int h);
qc_rgb_t *qc_rgb_clone (const qc_rgb_t *src);
void qc_rgb_destroy (qc_rgb_t **self_p);

qc_fimg_t *qc_fimg_new (int w, int h);
qc_fimg_t *qc_fimg_clone (const qc_fimg_t *src);
void qc_fimg_destroy (qc_fimg_t **self_p);

qc_mask_t *qc_mask_new (int w, int h);
qc_mask_t *qc_mask_clone (const qc_mask_t *src);
void qc_mask_destroy (qc_mask_t **self_p);
/* Sets every pixel to value (0 or 1; anything else counts as 1). */
int qc_mask_fill (qc_mask_t *self, int value);
/* Sets every pixel to 0.0f. On a device image neither copy is touched
 * until one is read (image_place.h: uniform). */
int qc_fimg_zero (qc_fimg_t *self);

qc_labels_t *qc_labels_new (int w, int h);

/* A new zeroed image in host memory whatever the thread's home (see
 * below): for the code that fills px itself, a slide reader or a PNG
 * decoder. */
qc_rgb_t *qc_rgb_new_host (int w, int h);
qc_fimg_t *qc_fimg_new_host (int w, int h);
qc_mask_t *qc_mask_new_host (int w, int h);
void qc_labels_destroy (qc_labels_t **self_p);

/* Host bytes, current (see the top of this file). */
const uint8_t *qc_rgb_host (const qc_rgb_t *img);
uint8_t *qc_rgb_host_edit (qc_rgb_t *img);
uint8_t *qc_rgb_host_rewrite (qc_rgb_t *img);
const float *qc_fimg_host (const qc_fimg_t *img);
float *qc_fimg_host_edit (qc_fimg_t *img);
float *qc_fimg_host_rewrite (qc_fimg_t *img);
const uint8_t *qc_mask_host (const qc_mask_t *img);
uint8_t *qc_mask_host_edit (qc_mask_t *img);
uint8_t *qc_mask_host_rewrite (qc_mask_t *img);
/* Labels are written by the label op only; host code reads them. */
const int32_t *qc_labels_host (const qc_labels_t *img);

/* Any image's bytes as image_place.h's functions take them (a backend's
 * view, whatever the type; a const image's placement changes all the
 * same: where the bytes are is not what they are). */
#ifndef __cplusplus
#define QC_SPAN(img)                                                     \
    ((qc_span_t) { (qc_place_t *) &(img)->at, (void **) &(img)->px,      \
                   qc_npix ((img)->w, (img)->h) * sizeof *(img)->px      \
                       * QC_CHANNELS (img),                              \
                   qc_npix ((img)->w, (img)->h) })
#define QC_CHANNELS(img)                                                 \
    _Generic ((img), qc_rgb_t *: 3, const qc_rgb_t *: 3, default: 1)
#else
/* C++ (the CUDA backend's host code): the same by overloading. */
extern "C++" {
template <typename T>
static inline qc_span_t
qc_span_of_ (const T *img, size_t channels)
{
    size_t n = (size_t) img->w * (size_t) img->h;
    return qc_span_t { (qc_place_t *) &img->at, (void **) &img->px,
                       n * sizeof *img->px * channels, n };
}
static inline qc_span_t qc_span_of (const qc_rgb_t *i) { return qc_span_of_ (i, 3); }
static inline qc_span_t qc_span_of (const qc_fimg_t *i) { return qc_span_of_ (i, 1); }
static inline qc_span_t qc_span_of (const qc_mask_t *i) { return qc_span_of_ (i, 1); }
static inline qc_span_t qc_span_of (const qc_labels_t *i) { return qc_span_of_ (i, 1); }
}
#define QC_SPAN(img) qc_span_of (img)
#endif

/* Validity checks the ops use on their arguments: non-NULL, pixels
 * present on some side (px, a device copy, or a uniform value), size
 * within bounds. */
int qc_rgb_valid (const qc_rgb_t *img);
int qc_fimg_valid (const qc_fimg_t *img);
int qc_mask_valid (const qc_mask_t *img);
/* 1 when m is NULL ("every pixel", as the ops read an optional mask) or
 * a valid mask of w x h. */
int qc_mask_fits (const qc_mask_t *m, int w, int h);

/* Number of pixels (w * h) of an image already known valid. */
static inline size_t
qc_npix (int w, int h)
{
    return (size_t) w * (size_t) h;
}

#endif
