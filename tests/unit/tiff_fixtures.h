/* Small tiled TIFF slides written with libtiff, for the tests that need a
 * file whose every pixel and tag they know (test_tiff_rgba,
 * test_level_reliable, test_source_declines and others), and
 * damage made in place (fx_tiff_patch: test_slide_why, test_slide_side). What
 * those share is here: a tiled level's tags and the loop over its tiles;
 * what each writes (its pixels, through a fill callback, and its levels'
 * shapes) stays in the test. Every libtiff call is checked, so that a
 * tag libtiff refuses or a tile it cannot write fails the fixture with
 * the reason, rather than leaving a file that a reader then fails on
 * for some other reason. Header-only (static functions, marked unused
 * for the programs that do not call each): every tests/unit/test_*.c is
 * its own program. */
#ifndef QC_TIFF_FIXTURES_H
#define QC_TIFF_FIXTURES_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>
#include <zlib.h>

/* Fills tile, tw x th pixels of spp bytes (rows top to bottom, none
 * padded), for the tile whose top-left pixel is (x0, y0) in the level.
 * Tiles on the right and bottom edges reach past the level: libtiff
 * stores whole tiles, so what fill writes there is in the file too
 * (readers crop it); the tile comes zeroed, so a fill that writes the
 * level's pixels alone leaves zeros there. Called once for each tile
 * written (not for a level's missing one), rows of tiles top to bottom
 * and each row left to right, so a fill may keep state in ctx (a random
 * generator's). */
typedef void fx_tiff_fill_fn (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw,
                              uint32_t th, int spp, uint8_t *tile);

/* One tiled level: by default 8 bits a sample, samples of a pixel
 * together (planar contig), what every reader of the project and
 * OpenSlide reads; bits, separate and alpha make the rarer kinds (fill
 * still writes 8-bit samples together). */
typedef struct {
    uint32_t w, h;              /* the level's size */
    uint32_t tile_w, tile_h;    /* libtiff warns where not multiples of 16 */
    int spp;                    /* 1: grey (min-is-black), 3: RGB, 4: RGB and alpha */
    int compression;            /* COMPRESSION_NONE, COMPRESSION_LZW, ... */
    const char *description;    /* ImageDescription (an Aperio header, say); NULL: none */
    int reduced;                /* 1: SubfileType reduced image (a pyramid's lower level) */
    uint32_t missing;           /* 1 + the index of a tile left unwritten (its byte
                                   count 0, as an Aperio scanner leaves an area it did
                                   not scan); 0: every tile written */
    int orientation;            /* TIFF Orientation; 0: none written (top-left) */
    int bits;                   /* 16: each sample fill writes stored times 257; 0: 8 */
    int separate;               /* 1: PlanarConfig separate (a plane of tiles a sample) */
    int alpha;                  /* spp 4's ExtraSamples: EXTRASAMPLE_ASSOCALPHA
                                   (premultiplied) or EXTRASAMPLE_UNASSALPHA */
    int subifds;                /* n (at most 8): the n levels written next are this
                                   one's SubIFDs (an OME-TIFF's pyramid), not directories
                                   of the chain */
} fx_tiff_level_t;

/* TIFFSetField, saying which tag libtiff refused (libtiff's own message,
 * where it gives one, does not always name it). 1 set, 0 refused. */
static __attribute__ ((unused)) int
fx_tiff_set (TIFF *t, uint32_t tag, ...)
{
    va_list ap;
    va_start (ap, tag);
    int ok = TIFFVSetField (t, tag, ap);
    va_end (ap);
    if (!ok)
        fprintf (stderr, "%s: libtiff refused tag %u\n", TIFFFileName (t), (unsigned) tag);
    return ok;
}

/* Writes lv as the next directory of t: its tags, its tiles from fill,
 * then TIFFWriteDirectory, so that the next level (or a directory of the
 * caller's own) starts a new one. 0 written, -1 with the reason on
 * stderr. Varargs carry each tag's value in the type libtiff reads it
 * as: uint32_t for sizes and SubfileType, int for the 16-bit tags. */
static __attribute__ ((unused)) int
fx_tiff_write_level (TIFF *t, const fx_tiff_level_t *lv, fx_tiff_fill_fn *fill, void *ctx)
{
    const int bits = lv->bits ? lv->bits : 8;
    if ((lv->spp != 1 && lv->spp != 3 && lv->spp != 4) || (lv->spp == 4) != (lv->alpha != 0)
        || (bits != 8 && bits != 16) || !lv->w || !lv->h || !lv->tile_w || !lv->tile_h) {
        fprintf (stderr, "%s: no level of %u x %u, tiles %u x %u, %d samples a pixel "
                 "(alpha %d), %d bits\n", TIFFFileName (t), (unsigned) lv->w,
                 (unsigned) lv->h, (unsigned) lv->tile_w, (unsigned) lv->tile_h, lv->spp,
                 lv->alpha, bits);
        return -1;
    }
    const uint16_t extra = (uint16_t) lv->alpha;
    uint64_t sub_offsets[8] = { 0 };  /* libtiff fills them in as it writes those */
    if (lv->subifds < 0 || lv->subifds > 8) {
        fprintf (stderr, "%s: %d SubIFDs\n", TIFFFileName (t), lv->subifds);
        return -1;
    }
    /* libtiff takes a compression it has no codec for, and its
     * TIFFWriteTile then says so but returns as if it wrote: ask first */
    if (!TIFFIsCODECConfigured ((uint16_t) lv->compression)) {
        fprintf (stderr, "%s: libtiff has no codec for compression %d\n", TIFFFileName (t),
                 lv->compression);
        return -1;
    }
    int ok = fx_tiff_set (t, TIFFTAG_IMAGEWIDTH, lv->w)
             && fx_tiff_set (t, TIFFTAG_IMAGELENGTH, lv->h)
             && fx_tiff_set (t, TIFFTAG_TILEWIDTH, lv->tile_w)
             && fx_tiff_set (t, TIFFTAG_TILELENGTH, lv->tile_h)
             && fx_tiff_set (t, TIFFTAG_BITSPERSAMPLE, bits)
             && fx_tiff_set (t, TIFFTAG_SAMPLESPERPIXEL, lv->spp)
             && fx_tiff_set (t, TIFFTAG_PHOTOMETRIC,
                             lv->spp == 1 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB)
             && fx_tiff_set (t, TIFFTAG_PLANARCONFIG,
                             lv->separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG)
             && (!lv->alpha || fx_tiff_set (t, TIFFTAG_EXTRASAMPLES, 1, &extra))
             && fx_tiff_set (t, TIFFTAG_COMPRESSION, lv->compression)
             && (!lv->description
                 || fx_tiff_set (t, TIFFTAG_IMAGEDESCRIPTION, lv->description))
             && (!lv->reduced
                 || fx_tiff_set (t, TIFFTAG_SUBFILETYPE, (uint32_t) FILETYPE_REDUCEDIMAGE))
             && (!lv->orientation || fx_tiff_set (t, TIFFTAG_ORIENTATION, lv->orientation))
             && (!lv->subifds || fx_tiff_set (t, TIFFTAG_SUBIFD, lv->subifds, sub_offsets));
    if (!ok)
        return -1;
    const size_t px = (size_t) lv->tile_w * lv->tile_h, n = px * (size_t) lv->spp;
    uint8_t *tile = malloc (n), *stored = malloc (n * (size_t) (bits / 8));
    if (!tile || !stored) {
        fprintf (stderr, "%s: no memory for a %zu-byte tile\n", TIFFFileName (t), n);
        free (tile);
        free (stored);
        return -1;
    }
    uint32_t index = 0;
    for (uint32_t y = 0; ok && y < lv->h; y += lv->tile_h)
        for (uint32_t x = 0; ok && x < lv->w; x += lv->tile_w) {
            if (++index == lv->missing)
                continue;
            memset (tile, 0, n);
            fill (ctx, x, y, lv->tile_w, lv->tile_h, lv->spp, tile);
            /* as stored: one plane (all samples together) or spp planes */
            int planes = lv->separate ? lv->spp : 1, per = lv->separate ? 1 : lv->spp;
            for (int plane = 0; ok && plane < planes; plane++) {
                for (size_t i = 0; i < px * (size_t) per; i++) {
                    uint8_t v = tile[(i / (size_t) per) * (size_t) lv->spp
                                     + (size_t) plane + i % (size_t) per];
                    if (bits == 8)
                        stored[i] = v;
                    else {
                        uint16_t wide = (uint16_t) (v * 257u);
                        memcpy (stored + 2 * i, &wide, 2);
                    }
                }
                ok = TIFFWriteTile (t, stored, x, y, 0, (uint16_t) plane) >= 0;
                if (!ok)
                    fprintf (stderr, "%s: cannot write the tile at %u, %u (plane %d)\n",
                             TIFFFileName (t), (unsigned) x, (unsigned) y, plane);
            }
        }
    free (tile);
    free (stored);
    if (ok && !TIFFWriteDirectory (t)) {
        fprintf (stderr, "%s: cannot write a level's directory\n", TIFFFileName (t));
        ok = 0;
    }
    return ok ? 0 : -1;
}

/* A classic TIFF at path (the host's byte order) of the n levels in
 * levels, in that order, all filled by fill. 0 written, -1 with the reason on
 * stderr (the file may then be left half-written). */
static __attribute__ ((unused)) int
fx_tiff_write (const char *path, const fx_tiff_level_t *levels, int n, fx_tiff_fill_fn *fill,
               void *ctx)
{
    TIFF *t = TIFFOpen (path, "w");
    if (!t) {
        fprintf (stderr, "%s: libtiff cannot create it\n", path);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = fx_tiff_write_level (t, &levels[i], fill, ctx);
    TIFFClose (t);
    return rc;
}

/* The offset of directory dir (0 the first) of the little-endian
 * classic TIFF open in f, and of the word that points to it (4 for the
 * first: the header's), in *at and *from; -1 when there is none. */
static __attribute__ ((unused)) int
fx_tiff_ifd (FILE *f, int dir, uint32_t *at, uint32_t *from)
{
    uint8_t h[8], c[2], next[4];
    if (fseek (f, 0, SEEK_SET) || fread (h, 1, 8, f) != 8 || h[0] != 'I' || h[2] != 42)
        return -1;
    uint32_t ifd = h[4] | h[5] << 8 | h[6] << 16 | (uint32_t) h[7] << 24, ptr = 4;
    for (int d = 0; d < dir && ifd; d++) {     /* each entry is 12 bytes */
        if (fseek (f, ifd, SEEK_SET) || fread (c, 1, 2, f) != 2)
            return -1;
        ptr = ifd + 2 + 12 * (uint32_t) (c[0] | c[1] << 8);
        if (fseek (f, ptr, SEEK_SET) || fread (next, 1, 4, f) != 4)
            return -1;
        ifd = next[0] | next[1] << 8 | next[2] << 16 | (uint32_t) next[3] << 24;
    }
    *at = ifd;
    *from = ptr;
    return ifd ? 0 : -1;
}

/* Overwrites, in directory dir (0 the first) of the little-endian
 * classic TIFF at path, value i of tag (SHORT or LONG; its values inline
 * or where the entry points) with v; every value when i is -1; or, when
 * i is FX_TIFF_COUNT, the entry's count of values (made smaller: the
 * values stay where they were): damage made on purpose, in place. 0,
 * or -1 (no such directory or tag). */
#define FX_TIFF_COUNT (-2)
static __attribute__ ((unused)) int
fx_tiff_patch (const char *path, int dir, uint16_t tag, int i, uint32_t v)
{
    FILE *f = fopen (path, "r+b");
    uint8_t e[12], c[2];
    uint32_t ifd, from;
    int rc = -1;
    if (!f || fx_tiff_ifd (f, dir, &ifd, &from) || fseek (f, ifd, SEEK_SET)
        || fread (c, 1, 2, f) != 2)
        goto out;
    for (unsigned k = 0; k < (unsigned) (c[0] | c[1] << 8); k++) {
        if (fseek (f, ifd + 2 + 12 * k, SEEK_SET) || fread (e, 1, 12, f) != 12)
            goto out;
        if ((e[0] | e[1] << 8) != tag)
            continue;
        unsigned type = e[2] | e[3] << 8, size = type == 3 ? 2 : 4;
        uint32_t n = e[4] | e[5] << 8 | e[6] << 16 | (uint32_t) e[7] << 24;
        long at = n * size <= 4 ? (long) (ifd + 2 + 12 * k + 8)
                                : (long) (e[8] | e[9] << 8 | e[10] << 16 | (uint32_t) e[11] << 24);
        uint8_t b[4] = {(uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16), (uint8_t) (v >> 24)};
        if (i == FX_TIFF_COUNT) {
            rc = v < n && v * size > 4 && fseek (f, ifd + 2 + 12 * k + 4, SEEK_SET) == 0
                         && fwrite (b, 1, 4, f) == 4 ? 0 : -1;
            break;
        }
        rc = 0;
        for (uint32_t j = i < 0 ? 0 : (uint32_t) i; rc == 0 && j < (i < 0 ? n : (uint32_t) i + 1); j++)
            if (fseek (f, at + (long) (j * size), SEEK_SET) || fwrite (b, 1, size, f) != size)
                rc = -1;
        break;
    }
out:
    if (f && fclose (f) != 0)
        rc = -1;
    return rc;
}

/* Points directory dir's next-directory word at directory to (an
 * earlier one, or itself: a loop), in the little-endian classic TIFF at
 * path. 0, or -1. */
static __attribute__ ((unused)) int
fx_tiff_link (const char *path, int dir, int to)
{
    FILE *f = fopen (path, "r+b");
    uint32_t at, from, target, unused;
    uint8_t c[2];
    int rc = -1;
    if (f && fx_tiff_ifd (f, dir, &at, &from) == 0 && fx_tiff_ifd (f, to, &target, &unused) == 0
        && fseek (f, at, SEEK_SET) == 0 && fread (c, 1, 2, f) == 2) {
        uint32_t next = at + 2 + 12 * (uint32_t) (c[0] | c[1] << 8);
        uint8_t b[4] = {(uint8_t) target, (uint8_t) (target >> 8), (uint8_t) (target >> 16),
                        (uint8_t) (target >> 24)};
        rc = fseek (f, next, SEEK_SET) == 0 && fwrite (b, 1, 4, f) == 4 ? 0 : -1;
    }
    if (f && fclose (f) != 0)
        rc = -1;
    return rc;
}

/* A tiled TIFF of one level of w x h pixels (RGB, deflate) in tiles of
 * tile x tile, every entry of its table naming the same black tile: a
 * huge level in a small file, written by hand (libtiff would write each
 * tile). A little-endian classic TIFF, its words written in this host's
 * order (x86's, as the patches above assume), no description. 0, or -1. */
static __attribute__ ((unused)) int
fx_tiff_write_huge (const char *path, uint32_t w, uint32_t h, uint32_t tile)
{
    uint64_t across = (w + tile - 1) / tile, down = (h + tile - 1) / tile, n = across * down;
    size_t raw = (size_t) tile * tile * 3;
    uLongf packed = compressBound (raw);
    uint8_t *zero = calloc (raw, 1), *data = malloc (packed);
    FILE *f = n < (1u << 24) ? fopen (path, "wb") : NULL;
    int ok = zero && data && f && compress2 (data, &packed, zero, raw, 6) == Z_OK;
    /* header, the tile, BitsPerSample's 3 values, the two tables, the IFD */
    uint32_t at_tile = 8, at_bits = at_tile + (uint32_t) packed, at_offs = at_bits + 6,
             at_counts = at_offs + 4 * (uint32_t) n, at_ifd = at_counts + 4 * (uint32_t) n;
    struct { uint16_t tag, type; uint32_t count, value; } e[] = {
        {256, 4, 1, w}, {257, 4, 1, h}, {258, 3, 3, at_bits}, {259, 3, 1, 8},
        {262, 3, 1, 2}, {277, 3, 1, 3}, {284, 3, 1, 1}, {322, 4, 1, tile},
        {323, 4, 1, tile}, {324, 4, (uint32_t) n, at_offs}, {325, 4, (uint32_t) n, at_counts},
    };
    uint8_t head[8] = {'I', 'I', 42, 0, (uint8_t) at_ifd, (uint8_t) (at_ifd >> 8),
                       (uint8_t) (at_ifd >> 16), (uint8_t) (at_ifd >> 24)};
    uint16_t bits[3] = {8, 8, 8}, count = sizeof e / sizeof *e;
    uint32_t next = 0, len = (uint32_t) packed;
    ok = ok && fwrite (head, 1, 8, f) == 8 && fwrite (data, 1, packed, f) == packed
         && fwrite (bits, 2, 3, f) == 3;
    for (uint64_t i = 0; ok && i < n; i++)
        ok = fwrite (&at_tile, 4, 1, f) == 1;
    for (uint64_t i = 0; ok && i < n; i++)
        ok = fwrite (&len, 4, 1, f) == 1;
    ok = ok && fwrite (&count, 2, 1, f) == 1;
    for (size_t i = 0; ok && i < sizeof e / sizeof *e; i++) {
        /* a SHORT's value sits in the entry's first two bytes */
        uint32_t v = e[i].type == 3 && e[i].count == 1 ? (uint32_t) (uint16_t) e[i].value
                                                       : e[i].value;
        ok = fwrite (&e[i].tag, 2, 1, f) == 1 && fwrite (&e[i].type, 2, 1, f) == 1
             && fwrite (&e[i].count, 4, 1, f) == 1 && fwrite (&v, 4, 1, f) == 1;
    }
    ok = ok && fwrite (&next, 4, 1, f) == 1;
    if (f && fclose (f) != 0)
        ok = 0;
    free (zero);
    free (data);
    return ok ? 0 : -1;
}

#endif
