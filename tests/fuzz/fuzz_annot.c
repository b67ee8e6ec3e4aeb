/* libFuzzer target: an annotation file as a worker reads one beside a
 * slide (kernels/annot/: annot_xml.c, annot_geojson.c, annot_raster.c),
 * from whoever wrote it. Byte 0 picks the format (even: ImageScope XML,
 * odd: GeoJSON) and, with byte 1, the mask the regions are drawn into
 * (its size, scale and offset, as a bounding box would move them); the
 * rest is the file. What parses must hold only rings of 3 points or
 * more, and draw into the mask only 0s and 1s. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/annot/annot_parse.h"
#include "kernels/annot/annot_raster.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    qc_annot_format_t fmt = data[0] & 1 ? QC_ANNOT_GEOJSON : QC_ANNOT_XML;
    int w = 1 + (data[0] >> 1) % 97, h = 1 + data[1] % 61;
    static const double scales[] = { 1.0, 0.03125, 0.0625, 0.25, 2.0, 1e-6, 7.5, 1e9 };
    double scale = scales[(data[1] >> 5) & 7];
    double off = (data[1] & 16) ? -1000.5 : 0.0;
    /* each ring on its own (the earlier steps'), or as HistoQC */
    qc_annot_fill_t fill = (data[0] >> 7) & 1 ? QC_ANNOT_FILL_AS_HISTOQC
                                              : QC_ANNOT_FILL_EVEN_ODD;
    char err[512];
    qc_annot_t a;
    if (qc_annot_parse ((const char *) data + 2, size - 2, fmt, 20000, &a, err,
                        sizeof err) != 0) {
        if (a.n || a.regions || !err[0])
            __builtin_trap ();          /* a refusal leaves nothing, says why */
        return 0;
    }
    for (size_t i = 0; i < a.n; i++) {
        if (a.regions[i].outer.n < 3)
            __builtin_trap ();
        for (size_t j = 0; j < a.regions[i].nholes; j++)
            if (a.regions[i].holes[j].n < 3)
                __builtin_trap ();
    }
    uint8_t *mask = calloc ((size_t) w * (size_t) h, 1);
    if (mask && qc_annot_draw (a.regions, a.n, off, off, scale, fill, mask, w, h, err,
                               sizeof err) == 0)
        for (size_t i = 0; i < (size_t) w * (size_t) h; i++)
            if (mask[i] > 1)
                __builtin_trap ();
    free (mask);
    qc_annot_free (&a);
    return 0;
}
