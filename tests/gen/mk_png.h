/* PNG input and output for the slide generator: reading the H&E texture
 * images as 8-bit RGB, and writing 8-bit gray truth masks. */
#ifndef MK_PNG_H
#define MK_PNG_H

#include <stddef.h>
#include <stdint.h>

/* Reads any PNG (gray, palette, RGB, with or without alpha, 8 or 16 bit)
 * as packed 8-bit RGB. On success returns 0 and a malloc'd buffer of
 * w*h*3 bytes in *rgb; on failure returns -1 and writes why into err. */
int mk_png_read_rgb (const char *path, uint8_t **rgb, int *w, int *h,
                     char *err, size_t errlen);

/* Writes an 8-bit gray image of w*h bytes. 0 or -1 (err says why). */
int mk_png_write_gray (const char *path, const uint8_t *pix, int w, int h,
                       char *err, size_t errlen);

#endif
