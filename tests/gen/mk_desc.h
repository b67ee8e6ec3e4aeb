/* The Aperio ImageDescription text that makes OpenSlide 3.4.1 read the
 * file as vendor "aperio": it must start with "Aperio", then '|'-separated
 * "Key = Value" fields; AppMag and MPP become openslide.objective-power
 * and openslide.mpp-x/-y. */
#ifndef MK_DESC_H
#define MK_DESC_H

#include <stddef.h>

#include "tests/gen/mk_opts.h"
#include "tests/gen/mk_tiff.h"

/* Description of level `level` (level 0 carries the metadata; lower
 * levels name their size, as Aperio scanners write them); with --ome,
 * level 0's OME-XML and "" (none written) for the others. Returns a
 * malloc'd string or NULL when memory runs out. */
char *mk_desc_build (const mk_opts_t *opts, const mk_levels_t *lv, int level,
                     const char *filename);

#endif
