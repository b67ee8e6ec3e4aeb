/* What a QC needs from an OME-TIFF's OME-XML (its first directory's
 * ImageDescription): the slide Image's plane counts, its pixel size,
 * and its objective's magnification. The slide Image is the one whose
 * planes start at IFD 0, where the levels are read (the first Image
 * when none says so).
 *
 * Why: OME-TIFF (Bio-Formats' bfconvert, QuPath's export, Glencoe's
 * converters) keeps a pyramid's lower levels in SubIFDs and the
 * resolution and objective in XML; OpenSlide 3.4.1 reads it as a
 * generic TIFF of one level with no magnification, so a 1.25x working
 * image was read from full resolution and needed base_mag in the config
 * (tiff_meta.h: how the levels are found).
 *
 * Not an XML parser: start tags and their attributes are found by name
 * (a namespace prefix, "ome:Pixels", is allowed), character and the five
 * named entity references are decoded in the values read, and nothing
 * else of XML is needed for these attributes. The scan is bounded by
 * the text and always moves forward, so damaged or hostile text only
 * makes fields unknown. The OME schema's rules used: PhysicalSizeX/Y in
 * PhysicalSizeXUnit/YUnit, µm when not said; an Image names its
 * objective by ObjectiveSettings ID, an Instrument's Objective gives
 * NominalMagnification (CalibratedMagnification when that is all). */
#ifndef QC_SLIDE_OME_XML_H
#define QC_SLIDE_OME_XML_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int size_c, size_z, size_time;  /* the slide Image's Pixels; 0: not said */
    int samples;                    /* its first Channel's SamplesPerPixel; 0: not said */
    double mpp_x, mpp_y;            /* µm a pixel; 0: not said, or a unit not of length */
    char unit[24];                  /* a size unit that could not be read as a length,
                                       as written (for a log line); "" otherwise */
    double magnification;           /* its objective's; 0: not said */
} qc_ome_info_t;

/* The side images an Image may be, by OpenSlide's names for them
 * (QC_OME_NSIDE of them). */
#define QC_OME_NSIDE 3
extern const char *const qc_ome_side_names[QC_OME_NSIDE];

/* One Image of the file, as qc_ome_images lists them. */
typedef struct {
    int ifd;              /* its first TiffData's IFD (0 when not written);
                             -1: no TiffData (its planes are not in this file) */
    int64_t w, h;         /* its Pixels' SizeX, SizeY; 0: not said */
    int slide;            /* 1: the slide Image (qc_ome_read's) */
    int slide_level;      /* 1: the slide at a lower resolution: listed
                             right after it, as each before it back to the
                             slide, which is at IFD 0
                             (qc_ome_is_lower_resolution) */
    int side;             /* 1: named as a side image (label, macro, thumbnail) */
    char name[96];        /* its Name, "" when none */
} qc_ome_image_t;

/* 1 when text (an ImageDescription, may be NULL) is OME-XML: it has an
 * OME element. */
int qc_ome_is_xml (const char *text);

/* The TIFF directory (IFD, in the file's chain) that holds the Image
 * named name (compared without case, and "NAME image" too: converters
 * keep a slide's "label" and "macro" as Images of those names, and
 * Bio-Formats names a CZI's "label image", "macro image") in *ifd: 0,
 * or -1 when there is no such Image or its TiffData names no IFD. */
int qc_ome_image_ifd (const char *text, const char *name, int *ifd);

/* The Images of OME-XML text in the order written, the first max of
 * them into list (may be NULL when max is 0). How many there are
 * (more than max when the list is short), 0 none, -1 not OME-XML. */
int qc_ome_images (const char *text, qc_ome_image_t *list, int max);

/* 1 when img may hold an image of w0 x h0 at a lower resolution:
 * Bio-Formats' bfconvert writes a pyramid's levels as Images of their
 * own ("flattened") unless told -noflat, each in a directory of the
 * chain, listed right after their full resolution. Such an Image is not
 * the slide, not a side image, is in the chain (IFD >= 1), and its size
 * is w0 x h0 divided by one factor of at least 1.5, within a pixel each
 * way (a writer rounds either way). 0 otherwise. */
int qc_ome_is_lower_resolution (const qc_ome_image_t *img, int64_t w0, int64_t h0);

/* Reads info from OME-XML text. 0; -1 when text is NULL, not OME-XML or
 * has no Image with Pixels (info is then zeroed). */
int qc_ome_read (const char *text, qc_ome_info_t *info);

#endif
