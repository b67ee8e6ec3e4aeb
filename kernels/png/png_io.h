/* PNG files of QC images, through libpng.
 *
 * Encoders write 8-bit PNGs the way HistoQC's skimage.io.imsave does:
 * RGB images as colour type RGB; gray bytes, masks (0/1 -> 0/255) and
 * float images (skimage img_as_ubyte: rint (clip (v, 0, 1) * 255)) as
 * 8-bit grayscale. The bytes go to a malloc'd buffer the caller frees
 * (ready for qc_result_take_file) or to a file.
 *
 * The decoder reads any PNG (palette, gray, 16-bit, alpha) into RGB:
 * palettes and gray expand, 16-bit samples keep their high byte, alpha
 * is dropped (as HistoQC's img[:, :, 0:3]). No gamma or colour-profile
 * conversion: the stored samples are the pixels, as skimage reads them.
 *
 * Every function returns 0 / a new image on success and -1 / NULL with
 * libpng's or the system's reason in err (when err is not NULL). */
#ifndef QC_PNG_IO_H
#define QC_PNG_IO_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"

int qc_png_encode_rgb (const qc_rgb_t *img, unsigned char **data,
                       size_t *size, char *err, size_t errlen);
/* w * h gray bytes. */
int qc_png_encode_gray8 (const uint8_t *px, int w, int h, unsigned char **data,
                         size_t *size, char *err, size_t errlen);
int qc_png_encode_mask (const qc_mask_t *mask, unsigned char **data,
                        size_t *size, char *err, size_t errlen);
/* The mask (0 / non-zero) as an 8-bit gray PNG of 0 / 255 written run
 * by run (kernels/png/png_runs.c): what qc_png_encode_mask writes. */
int qc_png_encode_runs (const qc_mask_t *mask, unsigned char **data,
                        size_t *size, char *err, size_t errlen);
int qc_png_encode_fimg (const qc_fimg_t *img, unsigned char **data,
                        size_t *size, char *err, size_t errlen);

/* Writes size bytes to path (replacing it). */
int qc_png_write_file (const char *path, const unsigned char *data,
                       size_t size, char *err, size_t errlen);

qc_rgb_t *qc_png_decode_rgb (const void *data, size_t size, char *err,
                             size_t errlen);
qc_rgb_t *qc_png_read_rgb (const char *path, char *err, size_t errlen);

#endif
