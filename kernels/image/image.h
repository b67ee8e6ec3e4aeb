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
 * nulls the caller's pointer and accepts NULL or a pointer to NULL. */
#ifndef QC_IMAGE_H
#define QC_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define QC_IMAGE_MAX_DIM    (1 << 20)
#define QC_IMAGE_MAX_PIXELS ((size_t) 1 << 30)

typedef struct qc_rgb {
    int w, h;
    uint8_t *px;          /* w * h * 3 bytes: R, G, B */
} qc_rgb_t;

typedef struct qc_fimg {
    int w, h;
    float *px;            /* w * h values */
} qc_fimg_t;

typedef struct qc_mask {
    int w, h;
    uint8_t *px;          /* w * h values, each 0 or 1 */
} qc_mask_t;

/* Connected components: px holds 0 for background and 1..n for the
 * components, numbered in raster order of their first pixel (as
 * skimage.measure.label numbers them); area[k] is the pixel count of
 * component k (area[0] counts the background). */
typedef struct qc_labels {
    int w, h;
    int32_t *px;          /* w * h labels */
    int32_t n;            /* number of components */
    size_t *area;         /* n + 1 entries; NULL until labelled */
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

qc_labels_t *qc_labels_new (int w, int h);
void qc_labels_destroy (qc_labels_t **self_p);

/* Validity checks the ops use on their arguments: non-NULL, pixel
 * buffer present, size within bounds. */
int qc_rgb_valid (const qc_rgb_t *img);
int qc_fimg_valid (const qc_fimg_t *img);
int qc_mask_valid (const qc_mask_t *img);

/* Number of pixels (w * h) of an image already known valid. */
static inline size_t
qc_npix (int w, int h)
{
    return (size_t) w * (size_t) h;
}

#endif
