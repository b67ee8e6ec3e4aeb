/* What a JPEG stream's own markers say of its colour space, for a TIFF
 * whose Photometric tag may say otherwise. */
#ifndef QC_JPEG_COLOUR_H
#define QC_JPEG_COLOUR_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int ycbcr;                /* 1: the markers say YCbCr */
    int h, v;                 /* the first component's sampling factors */
} qc_jpeg_colour_t;

/* Reads the markers of tables (a TIFF's JPEGTABLES; NULL for none) and
 * then of data (one tile), up to the first scan. The colour space is
 * YCbCr when an Adobe marker says so (transform 1 or 2), else when a
 * JFIF marker is there (JFIF is YCbCr by definition), else when the
 * chroma is subsampled (the first component's factors above the
 * others'). Without such evidence (an Adobe transform 0, components
 * named 'R', 'G', 'B', or nothing said) it is not YCbCr: what a TIFF
 * tagged RGB then holds is RGB. 0, or -1 when no frame header (SOF) was
 * found. */
int qc_jpeg_colour (const uint8_t *tables, size_t tables_len, const uint8_t *data,
                    size_t len, qc_jpeg_colour_t *out);

#endif
