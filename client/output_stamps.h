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
 * Slides this machine cannot stat (--no-check: only the workers see
 * them) get none; a folder an older build wrote has none: those are
 * skipped as before.
 *
 * A slide by URL is stamped when its result comes, with the version of
 * the file its worker read (size and the server's ETag and
 * Last-Modified: shared/result.h): "escaped redacted URL TAB v TAB size
 * TAB escaped ETag TAB escaped Last-Modified" (size -1 and empty
 * validators when the worker could not tell, e.g. the fetch failed, or
 * an older worker). A rerun asks the server whether the file is still
 * that version (client/url_versions.h). An older build skips such lines
 * (they do not parse as a file's).
 *
 * The files a config's steps read beside a local slide (an annotation:
 * kernels/modules/module.h's slide_inputs) are stamped with it, there or
 * not: "escaped slide path TAB i TAB escaped file path TAB size TAB
 * seconds.nanoseconds", size -1 (and time 0) for a file not there, -2
 * for one there that is no file to read (a folder, no permission). A
 * rerun runs a done slide again when such a file was drawn, changed,
 * removed or made unreadable since. An older build skips these lines.
 *
 * A local file its worker read (RESULT's `in`, with its size and
 * modification time) but this machine cannot see when the result comes
 * (a file_path folder only the workers have) is stamped with what the
 * worker read: the same line with "w" for "i" (also when this
 * machine's folder is empty: a share not mounted here). So is one its
 * worker looked for in a folder it has and found not there (size -1),
 * when this machine has no such folder. A rerun that still cannot see the
 * file cannot tell whether it changed: the slide is skipped as done and
 * that said (-f runs it again); one that sees it now compares it with
 * the worker's stamp. An older build skips these lines.
 *
 * Such a file beside a slide by URL is the worker's to read: its worker
 * says which version it read, or that the server had none (RESULT's
 * `in`, shared/result.h), and it is stamped when the result comes:
 * "escaped redacted slide URL TAB u TAB escaped redacted file URL TAB
 * size TAB escaped ETag TAB escaped Last-Modified", size -1 and no
 * validator for a file that was not there (one read of which nothing is
 * known gets no line), -2 when a later record did not say (the stamp is
 * forgotten). So is one in a file_path URL beside a local slide, keyed
 * by its path. A rerun asks the file's server
 * as it asks the slide's (client/url_versions.h): another version, or a
 * file drawn where there was none, runs the slide again. */
#ifndef QC_OUTPUT_STAMPS_H
#define QC_OUTPUT_STAMPS_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "shared/result.h"

#define QC_STAMPS_FILE ".qc-stamps"

typedef struct {
    int64_t size;
    int64_t mtime_s;
    int64_t mtime_ns;
    bool workers;   /* a "w" line: what a worker read of a file not seen here */
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

/* The URL lines of OUTDIR/.qc-stamps read into a table, redacted URL
 * -> qc_result_source_t (malloc'd), the later line of a URL winning.
 * NULL only out of memory; an absent file gives an empty table. */
zhashx_t *qc_url_stamps_read (const char *outdir);
/* One URL line for url to f: the version v (NULL: not known). What
 * fprintf gives (negative on error). */
int qc_url_stamps_put (FILE *f, const char *url, const qc_result_source_t *v);
/* Whether v names a version its server can be asked about (an ETag or
 * a Last-Modified). */
bool qc_url_stamp_checkable (const qc_result_source_t *v);

/* The stamp of a file beside a slide: as qc_stamp_take, size -1 when
 * there is no such file, -2 when it is there but no regular file to
 * read (a folder, no permission, a loop of links). false only for bad
 * arguments. */
bool qc_input_stamp_take (const char *path, qc_stamp_t *out);
/* The key of qc_input_stamps_read's table for file beside slide
 * (malloc'd), or NULL out of memory. */
char *qc_input_stamp_key (const char *slide, const char *file);
/* The input lines of OUTDIR/.qc-stamps: qc_input_stamp_key -> qc_stamp_t
 * (malloc'd), the later line winning. NULL only out of memory. */
zhashx_t *qc_input_stamps_read (const char *outdir);
/* One input line for file beside slide to f: 0, or -1 on error. */
int qc_input_stamps_put (FILE *f, const char *slide, const char *file, const qc_stamp_t *st);
/* The stamp (workers set) of the local file a worker read, from the
 * version it said (beside.h: size, and the time as Last-Modified);
 * false when the version is not one of a local file read. */
bool qc_input_stamp_of_version (const qc_result_source_t *v, qc_stamp_t *out);
/* Whether this machine lacks the folder a worker looked for file in (a
 * file_path folder only the workers have): no such folder here, or,
 * where the worker read the file (read), an empty one (a share mounted
 * on the workers, not here). Its "w" stamp is then the only word on the
 * file: written when the result comes, and a rerun cannot tell. */
bool qc_input_folder_unseen (const char *file, bool read);

/* The lines of files by URL beside slides by URL: qc_input_stamp_key
 * (redacted slide, redacted file) -> qc_result_source_t (malloc'd; size
 * -1 and no validator: not there then), the later line winning. NULL only out of
 * memory. */
zhashx_t *qc_url_input_stamps_read (const char *outdir);
/* One such line for in beside slide (a redacted URL, or a path) to f:
 * 0, or -1 on error. */
int qc_url_input_stamps_put (FILE *f, const char *slide, const qc_result_input_t *in);
/* Whether in has a stamp to write: not there, or there with a version
 * (a file read of which nothing is known has none: its line would read
 * as "not there"). */
bool qc_url_input_stampable (const qc_result_input_t *in);
/* A line that takes the stamp of the file where beside slide away (size
 * -2): the record made since did not say which version it read. 0, or
 * -1 on error. */
int qc_url_input_stamps_forget (FILE *f, const char *slide, const char *where);

#endif
