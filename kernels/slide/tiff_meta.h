/* A slide's metadata read from its TIFF through a byte source, as
 * OpenSlide 3.4.1 gives it for the two formats the direct reader reads
 * ("aperio" and "generic-tiff"). For slides OpenSlide cannot open
 * because they are not files here: a slide served over HTTP is read by
 * range requests (tiff_source.h), and OpenSlide opens paths only.
 *
 * What OpenSlide would say, rule by rule (its openslide.c,
 * openslide-vendor-aperio.c, -generic-tiff.c and -decode-tifflike.c):
 *  - format: NDPI (tag 65420), Trestle (Software "MedScan") come first,
 *    then Aperio (ImageDescription starting "Aperio"), then Leica (its
 *    XML namespace in the description), Philips (Software "Philips"),
 *    Ventana (XMLPacket with "iScan"), then generic TIFF. Only Aperio
 *    and generic TIFF are read here, and only when directory 0 is
 *    tiled; the others are declined (read such a slide whole, by path).
 *  - levels: Aperio: its tiled directories in file order; generic TIFF:
 *    directory 0 and the tiled reduced-resolution directories, widest
 *    first. Downsample 1 for level 0, else the mean of the width and
 *    height ratios; decreasing downsamples are declined (OpenSlide
 *    refuses the slide).
 *  - one format OpenSlide 3.4.1 does not know: OME-TIFF (OME-XML in
 *    directory 0's description; OpenSlide reads it as a generic TIFF of
 *    one level, without its resolution): vendor "ome-tiff", levels
 *    directory 0, its SubIFDs and the chain's directories of the Images
 *    listed right after the slide's that hold it at lower resolutions
 *    (bfconvert's without -noflat: ome_xml.h), widest first (the
 *    file's other directories are other planes or images: a note,
 *    qc_tiff_meta_note, names the Images not QC'd), openslide.mpp-x/-y and
 *    openslide.objective-power from the slide's Image (ome_xml.h), the
 *    Images named label, macro and thumbnail (or "label image", ...:
 *    qc_ome_image_ifd; in the chain's directory their TiffData names)
 *    as its associated images; one of channels stored apart, grey
 *    images (fluorescence), or in strips, is refused
 *    (QC_TIFF_META_REFUSED), as is any it declines.
 *    A local one is read so too (qc_slide_open). These rules are in
 *    tiff_meta_ome.c.
 *  - properties: openslide.vendor, .level-count, .level[N].width,
 *    .height, .downsample ("%.17g", as g_ascii_dtostr), .tile-width,
 *    .tile-height; openslide.comment and tiff.ImageDescription, Make,
 *    Model, Software, DateTime, Artist, HostComputer, Copyright,
 *    DocumentName, X/YResolution and X/YPosition (read from the
 *    directory's own bytes: libtiff hands rationals out as floats, and
 *    OpenSlide divides them in double) and ResolutionUnit, all of
 *    directory 0. Aperio: aperio.KEY for every "KEY = VALUE" of the
 *    description after its first '|' piece, openslide.objective-power
 *    from a whole aperio.AppMag, openslide.mpp-x and -y from aperio.MPP.
 *  - associated images (Aperio): directory 1, when not tiled, is
 *    "thumbnail"; every other untiled directory is named by the first
 *    word of its description's second line ("label", "macro"). Their
 *    pixels: libtiff's RGBA image, top-left first, as OpenSlide reads
 *    them (qc_tiff_meta_read_image).
 *  - also declined, so that a slide gives the same answer by URL as by
 *    path: an error of libtiff's while walking the directories, or a
 *    chain that does not end (cut short or looping: OpenSlide refuses
 *    such a file), more than 256
 *    directories, and classic (not Big) TIFFs in big-endian byte order,
 *    which OpenSlide 3.4.1 did not open in any test (but OME-TIFFs,
 *    which only this reader reads, by path too); and by the direct
 *    reader's open, a level whose directory libtiff warns of or whose
 *    first tile does not decode here (tiff_direct.c).
 * Left out: openslide.quickhash-1 (a hash of the smallest level's bytes
 * and these properties; nothing in the pipeline reads it).
 *
 * tests/unit/test_slide_source.c compares every property, level and
 * associated image with OpenSlide's for the same files read by path. */
#ifndef QC_SLIDE_TIFF_META_H
#define QC_SLIDE_TIFF_META_H

#include <stddef.h>
#include <stdint.h>

#include "shared/byte_source.h"

typedef struct {
    int dir;                  /* the TIFF directory (0 for a SubIFD) */
    uint64_t subifd;          /* an OME-TIFF's SubIFD: its offset; else 0 */
    int64_t w, h;
    double downsample;
    uint32_t tile_w, tile_h;
} qc_tiff_meta_level_t;

typedef struct qc_tiff_meta qc_tiff_meta_t;

/* Reads src's metadata. 0 (*out set); 1 declined: src is not a slide
 * read here (why says what it is; OpenSlide may read it from a file);
 * QC_TIFF_META_REFUSED: src is an OME-TIFF that is not read here (why),
 * and so not read at all: OpenSlide would read one level of it without
 * its resolution, so it is not read whole for OpenSlide either (by URL,
 * not downloaded to fail the same way); -1 failed: a read of src failed
 * (why has the source's words). */
#define QC_TIFF_META_REFUSED 2
int qc_tiff_meta_read (qc_byte_source_t *src, qc_tiff_meta_t **out,
                       char *why, size_t whylen);

/* Why an OME-TIFF whose first image (w x h) is in strips is not read,
 * and how to write it so that it is, into why: one text whether it is
 * found by path or by URL. */
void qc_tiff_meta_ome_strips_why (uint32_t w, uint32_t h, char *why, size_t whylen);
void qc_tiff_meta_free (qc_tiff_meta_t **self_p);

/* The name OpenSlide gives an Aperio slide's untiled directory dir whose
 * ImageDescription is desc (may be NULL): "thumbnail" for directory 1,
 * else the first word of the description's second line ("label
 * 387x463" gives "label"): its *n bytes at *at (in desc, or static).
 * 0, or -1 when it has none. */
int qc_tiff_meta_aperio_name (int dir, const char *desc, const char **at, size_t *n);

const char *qc_tiff_meta_vendor (const qc_tiff_meta_t *self);
/* What a lab should hear of the file beyond its levels' QC (an
 * OME-TIFF's Images that are not QC'd), or NULL when nothing. */
const char *qc_tiff_meta_note (const qc_tiff_meta_t *self);
int qc_tiff_meta_level_count (const qc_tiff_meta_t *self);
/* Level i (0 <= i < count), or NULL. */
const qc_tiff_meta_level_t *qc_tiff_meta_level (const qc_tiff_meta_t *self,
                                                int i);
/* A property's value, or NULL when it has none. */
const char *qc_tiff_meta_property (const qc_tiff_meta_t *self,
                                   const char *name);
/* Property i's name (0 <= i < count), for tests; NULL past the end. */
const char *qc_tiff_meta_property_name (const qc_tiff_meta_t *self,
                                        size_t i);

/* 0 and the size of the associated image name, or -1 when there is
 * none of that name. */
int qc_tiff_meta_image_size (const qc_tiff_meta_t *self, const char *name,
                             int64_t *w, int64_t *h);
/* The associated image name as OpenSlide's premultiplied ARGB (w * h
 * values, its size from qc_tiff_meta_image_size) into argb. 0, or -1
 * with the reason in err. */
int qc_tiff_meta_read_image (const qc_tiff_meta_t *self,
                             qc_byte_source_t *src, const char *name,
                             uint32_t *argb, char *err, size_t errlen);

#endif
