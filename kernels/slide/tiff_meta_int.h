/* What tiff_meta.c and tiff_meta_ome.c share: the metadata's parts, one
 * directory as the walk saw it, and the helpers both set properties and
 * decline with. Private to those two files. */
#ifndef QC_SLIDE_TIFF_META_INT_H
#define QC_SLIDE_TIFF_META_INT_H

#include <stddef.h>
#include <stdint.h>
#include <tiffio.h>

#include "kernels/slide/ome_xml.h"
#include "kernels/slide/tiff_meta.h"
#include "kernels/slide/tiff_source.h"

/* Directories walked: real slides have a handful; this bounds a damaged
 * or hostile file (the direct reader has the same bound). */
#define MAX_DIRS 256
#define NDPI_FORMAT_FLAG 65420

typedef struct {
    char *name;
    char *value;              /* NULL: named but without a value, as
                                 OpenSlide keeps "KEY" with no "=" */
} prop_t;

typedef struct {
    char *name;
    int dir;
    int64_t w, h;
} image_t;

struct qc_tiff_meta {
    const char *vendor;
    qc_tiff_meta_level_t *levels;
    int nlevels;
    prop_t *props;
    size_t nprops, cap;
    image_t *images;
    size_t nimages;
    char *note;               /* qc_tiff_meta_note's; NULL: none */
};

/* One TIFF directory as the walk saw it. */
typedef struct {
    int tiled;
    uint32_t w, h, tile_w, tile_h;
    int reduced;              /* SubfileType says reduced resolution */
    int codec_ok;             /* libtiff (or OpenSlide) decodes it */
    int jp2k;                 /* Aperio's JPEG 2000: OpenSlide's only */
    int depth_ok;
    uint16_t spp;             /* SamplesPerPixel */
    char *desc;               /* ImageDescription, or NULL */
    int chain;                /* its index in the directory chain (an
                                 OME-TIFF's SubIFD: its parent's, 0) */
    uint64_t subifd;          /* an OME-TIFF's SubIFD: its offset; else 0 */
} dir_t;

/* Sets the property name to v as OpenSlide writes doubles
 * (g_ascii_dtostr, "%.17g" in the C locale). 0, or -1 on memory. */
int meta_set_double (qc_tiff_meta_t *m, const char *name, double v);

/* 1, with why: the slide is not one read here. */
int meta_decline (char *why, size_t whylen, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* The current directory of tif into *d (its description strdup'd). */
void meta_read_dir (TIFF *tif, dir_t *d);

/* The OME-TIFF rules (tiff_meta.h, tiff_meta_ome.c): its Images, listed
 * once from directory 0's description (the first MAX_DIRS; their names
 * made one line each, as the note shows them) into *list (freed by the
 * caller): their count, or -1 out of memory; the levels' directories,
 * the properties, the associated images and the note of the Images not
 * QC'd. */
int meta_ome_list (const char *desc, qc_ome_image_t **list);
int meta_ome_dirs (TIFF *tif, const qc_tiff_diag_t *diag, const qc_ome_image_t *images,
                   int nimages, dir_t *dirs, int *ndirs, char *why, size_t whylen);
int meta_ome_properties (qc_tiff_meta_t *m, const dir_t *d0, const char *name, char *why,
                         size_t whylen);
int meta_ome_images (qc_tiff_meta_t *m, TIFF *tif, const char *desc,
                     const qc_ome_image_t *images, int nimages);

#endif
