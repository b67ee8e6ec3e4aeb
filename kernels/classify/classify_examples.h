/* Example images and masks for ClassificationModule: HistoQC's examples=
 * lines ("image.png:mask.png", one pair a line) and the project's own
 * examples built into the library.
 *
 * A path that starts with "builtin/" names one of the PNGs embedded from
 * kernels/classify/examples/ (the build turns them into a C array with
 * kernels/tools/embed_examples.sh), so the project's default config trains
 * on any machine, with no files beside the program. Any other path is read
 * through kernels/assets/asset.h: a job's asset (what qc-submit sends), or,
 * where the process allows it, a file relative to the working directory
 * as in HistoQC. */
#ifndef QC_CLASSIFY_EXAMPLES_H
#define QC_CLASSIFY_EXAMPLES_H

#include <stddef.h>

#include "kernels/image/image.h"

typedef struct {
    const char *name;       /* "builtin/pen_markings_1.png" */
    const char *base64;     /* the PNG file, base64 */
    size_t len;             /* strlen (base64) */
} qc_example_file_t;

extern const qc_example_file_t qc_example_files[];
extern const size_t qc_example_nfiles;

#define QC_EXAMPLE_PREFIX "builtin/"
#define QC_EXAMPLE_MAX_PATH 1024

/* Splits one examples= line into image and mask paths where HistoQC's
 * re.split (r'(?<!\W[A-Za-z]):(?!\\)') does: at a ':' that is not a
 * Windows drive colon ("C:\" or " D:"). Surrounding blanks are trimmed.
 * 0 when the line is exactly two non-empty parts (HistoQC would ignore
 * a third; here it is an error). */
int qc_example_split (const char *line, size_t len, char *image,
                      char *mask, size_t cap);

/* 1 when path names a file this machine can read: a builtin that
 * exists, or a readable file. */
int qc_example_exists (const char *path);

/* Reads an example image (any PNG, as RGB). NULL with a reason. */
qc_rgb_t *qc_example_read_rgb (const char *path, char *err, size_t errlen);

/* Reads an example mask as HistoQC does: io.imread (as_gray=True) and
 * img_as_bool, i.e. gray (skimage rgb2gray of the RGB, or the gray
 * value itself) over half of full scale. */
qc_mask_t *qc_example_read_mask (const char *path, char *err, size_t errlen);

#endif
