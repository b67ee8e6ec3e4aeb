/* The slide object's fields, shared by the files that make it up:
 * slide.c (opening, levels, readers) and slide_side.c (its side images:
 * thumbnail, label, macro). Not for anything outside kernels/slide. */
#ifndef QC_KERNELS_SLIDE_INT_H
#define QC_KERNELS_SLIDE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <openslide.h>

#include "kernels/slide/slide.h"
#include "kernels/slide/slide_why.h"
#include "kernels/slide/source.h"
#include "kernels/slide/tiff_meta.h"
#include "shared/byte_source.h"

/* slide.c's table of readers holds this many (checked there). */
#define QC_SLIDE_NREADERS 2

typedef struct {
    int64_t w, h;
    double downsample;
} level_t;

typedef struct {
    const qc_slide_reader_ops_t *ops;
    void *state;
} reader_t;

struct qc_slide {
    openslide_t *osr;     /* opened by path */
    qc_byte_source_t *src;    /* or opened from this (not ours) */
    qc_tiff_meta_t *meta;     /* ... with this metadata */
    char *path;           /* NULL with src, but for a local OME-TIFF: */
    qc_byte_source_t *own_src;   /* its file, as src (ours) */
    char *name;
    int nlevels;
    level_t *levels;
    uint8_t bg[3];        /* openslide.background-color, else white */
    reader_t readers[QC_SLIDE_NREADERS];   /* those that opened, in table order */
    size_t nreaders;
    char readers_text[64];
    qc_side_damaged_t side_damaged;   /* side images not to read (by path) */
};

#endif
