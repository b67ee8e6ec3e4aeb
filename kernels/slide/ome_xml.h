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

typedef struct {
    int size_c, size_z, size_time;  /* the slide Image's Pixels; 0: not said */
    int samples;                    /* its first Channel's SamplesPerPixel; 0: not said */
    double mpp_x, mpp_y;            /* µm a pixel; 0: not said, or a unit not of length */
    char unit[24];                  /* a size unit that could not be read as a length,
                                       as written (for a log line); "" otherwise */
    double magnification;           /* its objective's; 0: not said */
} qc_ome_info_t;

/* 1 when text (an ImageDescription, may be NULL) is OME-XML: it has an
 * OME element. */
int qc_ome_is_xml (const char *text);

/* The TIFF directory (IFD, in the file's chain) that holds the Image
 * named name (compared without case, and "NAME image" too: converters
 * keep a slide's "label" and "macro" as Images of those names, and
 * Bio-Formats names a CZI's "label image", "macro image") in *ifd: 0,
 * or -1 when there is no such Image or its TiffData names no IFD. */
int qc_ome_image_ifd (const char *text, const char *name, int *ifd);

/* Reads info from OME-XML text. 0; -1 when text is NULL, not OME-XML or
 * has no Image with Pixels (info is then zeroed). */
int qc_ome_read (const char *text, qc_ome_info_t *info);

#endif
