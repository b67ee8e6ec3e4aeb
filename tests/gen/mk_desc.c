/* Aperio ImageDescription text. */
#include "tests/gen/mk_desc.h"

#include <stdio.h>
#include <stdlib.h>

char *
mk_desc_build (const mk_opts_t *o, const mk_levels_t *lv, int level,
               const char *filename)
{
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
