/* JPEG encoding of tiles with libjpeg, for raw writing into a TIFF.
 * Every encoder made with the same quality and tile size uses the same
 * quantisation and (standard) Huffman tables, so the tables go once into
 * the TIFF's JPEGTables tag and each tile is an abbreviated stream without
 * them, as TIFF Technical Note 2 describes. One encoder per thread. */
#ifndef MK_JPEG_H
#define MK_JPEG_H

#include <stddef.h>
#include <stdint.h>

typedef struct mk_jpeg mk_jpeg_t;

mk_jpeg_t *mk_jpeg_new (int quality, int tile_w, int tile_h);
void mk_jpeg_destroy (mk_jpeg_t **self_p);

/* The tables-only stream (SOI, DQT, DHT, EOI) for JPEGTables. On success
 * 0 and a malloc'd buffer. */
int mk_jpeg_tables (mk_jpeg_t *self, uint8_t **data, size_t *len);

/* Encodes one tile of packed RGB (YCbCr 4:2:0 inside the stream). The
 * output goes into *buf (grown with realloc as needed; *cap is its size)
 * and *len is set. 0, or -1 with a reason in mk_jpeg_error. */
int mk_jpeg_encode (mk_jpeg_t *self, const uint8_t *rgb, uint8_t **buf,
                    size_t *cap, size_t *len);
const char *mk_jpeg_error (const mk_jpeg_t *self);

#endif
