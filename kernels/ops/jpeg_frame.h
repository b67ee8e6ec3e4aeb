/* What a JPEG stream's frame header (SOF) says, read without a decoder,
 * and the components a tile of it decodes to as libjpeg lays them out:
 * decode_jpeg's one rule for which tiles it decodes. The GPU's op
 * (ops/cuda/jpeg_tiles.cu) applies it to the stream's own header
 * (nvJPEG says a stream's sizes and a name for its sampling, not its
 * precision or each component's factors, from which libjpeg's
 * upsampling follows), the CPU's (ops/cpu/jpeg_tiles.c) to libjpeg's
 * reading of it. Plain C beside the op's other host code
 * (jpeg_batch.c), checked against libjpeg on any machine
 * (tests/unit/test_jpeg_frame.c). */
#ifndef QC_JPEG_FRAME_H
#define QC_JPEG_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/ops/jpeg_math.h"
#include "kernels/ops/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int precision;          /* bits a sample */
    int width, height;      /* the frame's, pixels (height 0: set later
                               by a DNL marker, which libjpeg refuses) */
    int ncomp;
    int hs[3], vs[3];       /* the first three components' factors */
} qc_jpeg_frame_t;

/* f from stream p (n bytes): 0, or -1 when it has no frame header
 * before its first scan, or one cut short. Reads nothing past p + n. */
int qc_jpeg_frame_read (const uint8_t *p, size_t n, qc_jpeg_frame_t *f);

/* The three components a tile of frame f decodes to, for batch b, as
 * libjpeg's raw output gives them: each one's expansion (he, ve: the
 * largest factor over its own), and its samples, ceil (tile_w / he) x
 * ceil (tile_h / ve), laid out at a stride of its width; px left NULL.
 * 0, or -1 when the tile is not one decode_jpeg decodes as libjpeg does
 * (not 8-bit, 3 components, b's tile size; factors that do not divide
 * the largest; an upsampling jpeg_math.h has not; factors other than b's
 * sampling, which libtiff would refuse). */
int qc_jpeg_frame_planes (const qc_jpeg_frame_t *f, const qc_jpeg_batch_t *b,
                          qc_jpeg_planes_t *pl);

#ifdef __cplusplus
}
#endif

#endif /* QC_JPEG_FRAME_H */
