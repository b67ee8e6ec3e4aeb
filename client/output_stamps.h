/* Which file a folder's record is for: a slide rescanned and written
 * again under the same path kept its old row on a rerun, which skipped
 * it as done, and nothing said so. Each run notes, for every local slide
 * it sends, the file's size and modification time in OUTDIR/.qc-stamps
 * (as make and rsync's quick check do: a rescan writes a new file; a
 * copy of the cohort to another disk keeps both, so it is not run
 * again). A rerun runs a slide whose file no longer matches the stamp of
 * its record again (the old record kept in results.tsv.N or
 * error.log.N, as with -f), and says how many.
 *
 * .qc-stamps: one line per slide sent, "escaped path TAB size TAB
 * seconds.nanoseconds"; later lines of a path replace earlier ones.
 * Slides by URL get no stamp (their server says what they are), nor
 * ones this machine cannot stat (--no-check: only the workers see them);
 * a folder an older build wrote has none: those are skipped as before. */
#ifndef QC_OUTPUT_STAMPS_H
#define QC_OUTPUT_STAMPS_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define QC_STAMPS_FILE ".qc-stamps"

typedef struct {
    int64_t size;
    int64_t mtime_s;
    int64_t mtime_ns;
} qc_stamp_t;

/* The stamp of the file at path now (links followed); false when it
 * cannot be stat'ed or is not a regular file. */
bool qc_stamp_take (const char *path, qc_stamp_t *out);
/* Whether two stamps name the same file contents, as far as they tell. */
bool qc_stamp_same (const qc_stamp_t *a, const qc_stamp_t *b);

/* OUTDIR/.qc-stamps read into a table, path -> qc_stamp_t (malloc'd;
 * absent or unreadable lines are skipped: a damaged line only makes its
 * slide be judged as before). NULL only out of memory; an absent file
 * gives an empty table. */
zhashx_t *qc_stamps_read (const char *outdir);
/* One line for path to f; what fprintf gives (negative on error). */
int qc_stamps_put (FILE *f, const char *path, const qc_stamp_t *st);

#endif
