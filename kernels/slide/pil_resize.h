/* PIL's Image.thumbnail resampling, bit for bit, for reading a slide as
 * HistoQC does: openslide-python's get_thumbnail shrinks the level it
 * read with Image.thumbnail (size, LANCZOS), which (Pillow 7 and later,
 * reducing_gap 2) first averages blocks of an integer factor when the
 * image is at least 4x the target (Image.reduce), then resamples with
 * Lanczos-3 in 8-bit fixed point (ImagingResample: 22-bit coefficients,
 * a horizontal pass into 8-bit rows, then a vertical pass). Written from
 * Pillow's published algorithm; the Lanczos path is checked against the
 * thumbnails HistoQC wrote (tests/unit/test_pil_resize.c). */
#ifndef QC_PIL_RESIZE_H
#define QC_PIL_RESIZE_H

#include "kernels/image/image.h"

/* dst (out_w x out_h, allocated by the caller) = src resized as
 * Image.resize ((out_w, out_h), LANCZOS, reducing_gap = 2.0) does.
 * 0, or -1 on a bad argument or when memory runs out. */
int qc_pil_thumbnail_resize (const qc_rgb_t *src, qc_rgb_t *dst);

/* The two steps, for tests: Image.reduce ((fx, fy)) of the whole image
 * into dst of ceil (w / fx) x ceil (h / fy); and the Lanczos resample of
 * the box [x0, x1) x [y0, y1) of src (Image.resize with box=). */
int qc_pil_reduce (const qc_rgb_t *src, int fx, int fy, qc_rgb_t *dst);
int qc_pil_lanczos (const qc_rgb_t *src, double x0, double y0, double x1,
                    double y1, qc_rgb_t *dst);

#endif
