/* Truth masks: what was painted where, at a reduced size, for scoring QC
 * output. Written as DIR/<base>_truth_<feature>.png (8-bit gray, 255 where
 * the feature is) for every feature, enabled or not (a disabled feature
 * gives an all-zero mask), plus DIR/<base>_truth_usable.png and a JSON
 * description DIR/<base>_truth.json. tests/gen/README.md defines each. */
#ifndef MK_TRUTH_H
#define MK_TRUTH_H

#include <stddef.h>

#include "tests/gen/mk_field.h"
#include "tests/gen/mk_opts.h"
#include "tests/gen/mk_scene.h"
#include "tests/gen/mk_tiff.h"

/* 0, or -1 with err. base is the slide's file name without extension. */
int mk_truth_write (const mk_opts_t *opts, const mk_scene_t *scene,
                    const mk_field_t *field, const mk_levels_t *levels,
                    const char *base, char *err, size_t errlen);

#endif
