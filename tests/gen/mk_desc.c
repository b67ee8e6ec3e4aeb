/* Aperio ImageDescription text. */
#include "tests/gen/mk_desc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An OME-XML text as Bio-Formats writes it for a brightfield RGB image:
 * the objective, the pixel size, one 3-sample channel; flattened
 * (MK_OME_FLAT), an Image of each lower level after it, "NAME #2", ...,
 * each in the chain's directory of its level. */
static char *
ome_xml (const mk_opts_t *o, const mk_levels_t *lv, const char *filename)
{
    char instrument[256] = "", objective[64] = "", size[160] = "";
    if (!o->no_mag) {
        snprintf (instrument, sizeof instrument, "<Instrument ID=\"Instrument:0\">"
                  "<Objective ID=\"Objective:0:0\" NominalMagnification=\"%g\"/>"
                  "</Instrument>", o->mag);
        snprintf (objective, sizeof objective, "<ObjectiveSettings ID=\"Objective:0:0\"/>");
        snprintf (size, sizeof size, " PhysicalSizeX=\"%.4f\" PhysicalSizeXUnit=\"\xc2\xb5m\""
                  " PhysicalSizeY=\"%.4f\" PhysicalSizeYUnit=\"\xc2\xb5m\"", o->mpp, o->mpp);
    }
    char name[256];             /* the name, without what XML would escape */
    snprintf (name, sizeof name, "%s", filename);
    for (char *c = name; *c; c++)
        if (strchr ("<>&\"'", *c))
            *c = '_';
    char levels[16384] = "";
    size_t used = 0;
    for (int l = 1; o->ome == MK_OME_FLAT && l < lv->n && used < sizeof levels; l++) {
        int k = snprintf (levels + used, sizeof levels - used,
                          "<Image ID=\"Image:%d\" Name=\"%s #%d\"><Pixels DimensionOrder=\"XYCZT\" "
                          "ID=\"Pixels:%d\" Interleaved=\"true\" SizeC=\"3\" SizeT=\"1\" "
                          "SizeX=\"%d\" SizeY=\"%d\" SizeZ=\"1\" Type=\"uint8\"><Channel "
                          "ID=\"Channel:%d:0\" SamplesPerPixel=\"3\"/><TiffData IFD=\"%d\" "
                          "PlaneCount=\"1\"/></Pixels></Image>", l, name, l + 1, l, lv->w[l],
                          lv->h[l], l, l);
        used += k > 0 ? (size_t) k : sizeof levels;
    }
    if (used >= sizeof levels)
        return NULL;
    char *text = NULL;
    int n = asprintf (&text,
                      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                      "<OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\" "
                      "Creator=\"qc-mkslide %s (seed %llu)\">%s"
                      "<Image ID=\"Image:0\" Name=\"%s\">%s"
                      "<Pixels BigEndian=\"false\" DimensionOrder=\"XYCZT\" ID=\"Pixels:0\" "
                      "Interleaved=\"true\"%s SignificantBits=\"8\" SizeC=\"3\" SizeT=\"1\" "
                      "SizeX=\"%d\" SizeY=\"%d\" SizeZ=\"1\" Type=\"uint8\">"
                      "<Channel ID=\"Channel:0:0\" SamplesPerPixel=\"3\"><LightPath/></Channel>"
                      "<TiffData IFD=\"0\" PlaneCount=\"1\"/></Pixels></Image>%s</OME>",
                      QC_VERSION, (unsigned long long) o->seed, instrument, name,
                      objective, size, lv->w[0], lv->h[0], levels);
    return n < 0 ? NULL : text;
}

char *
mk_desc_build (const mk_opts_t *o, const mk_levels_t *lv, int level,
               const char *filename)
{
    if (o->ome)
        return level == 0 ? ome_xml (o, lv, filename) : strdup ("");
    char meta[256] = "";
    if (!o->no_mag)
        snprintf (meta, sizeof meta, "|AppMag = %g|MPP = %.4f", o->mag, o->mpp);
    char *text = NULL;
    /* The first line mimics a scanner's: "size [region] (tile) codec Q=".
     * Filename, seed and generator help a reader trace a slide back to
     * the command that made it; no date, to keep output reproducible. */
    int n;
    if (level == 0)
        n = asprintf (&text,
                      "Aperio Image Library v12.0.0 (qc-mkslide %s)\n"
                      "%dx%d [0,0 %dx%d] (%dx%d) JPEG/YCC Q=%d"
                      "%s|Filename = %s|ScanScope ID = QC-MKSLIDE"
                      "|Seed = %llu",
                      QC_VERSION, lv->w[0], lv->h[0], lv->w[0], lv->h[0],
                      o->tile, o->tile, o->quality, meta, filename,
                      (unsigned long long) o->seed);
    else
        n = asprintf (&text,
                      "Aperio Image Library v12.0.0 (qc-mkslide %s)\n"
                      "%dx%d -> %dx%d - (%dx%d) JPEG/YCC Q=%d%s",
                      QC_VERSION, lv->w[0], lv->h[0], lv->w[level],
                      lv->h[level], o->tile, o->tile, o->quality, meta);
    return n < 0 ? NULL : text;
}
