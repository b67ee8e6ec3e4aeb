/* What earlier runs recorded in an output folder, for a rerun into it:
 * the slides results.tsv has a row for (passed) and error.log a line for
 * (failed), by path; the names their rows use; results.tsv's columns.
 * And, for -f, rewriting both files without the records of the slides
 * that are run again, the old files kept beside them (results.tsv.1,
 * error.log.1, the next free number), so nothing is lost.
 *
 * A row names its slide by its original_path column (this project's
 * results.tsv, escaped as client/escape.h says); a row without one (an
 * older results.tsv, HistoQC's own) names it only by its file name, so
 * a slide of that file name counts as recorded. An error.log line is
 * "escaped path TAB escaped reason". Failures a rerun should try again
 * are told apart by their reason: a slide qc-submit could not read
 * before the job (QC_RECORDS_UNREAD_PREFIX), a cancelled slide, one
 * whose cause may pass (QC_RESULT_RETRY_MARK: a server that did not
 * answer), and a worker's refusal of the config (QC_RESULT_CONFIG_ERROR:
 * the rerun checks its config first, so a worker then of another build,
 * older builds' reasons included). */
#ifndef QC_OUTPUT_RECORDS_H
#define QC_OUTPUT_RECORDS_H

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>

#include "client/names.h"

#define QC_RECORDS_UNREAD_PREFIX "not read by qc-submit: "

typedef enum {
    QC_REC_NONE = 0,
    QC_REC_PASSED,            /* a results.tsv row */
    QC_REC_FAILED,            /* an error.log line */
    QC_REC_RETRY              /* an error.log line a rerun tries again */
} qc_rec_t;

typedef struct {
    char **columns;           /* results.tsv's #dataset: columns */
    size_t ncolumns;          /* 0: no results.tsv (or no header in it) */
    char *config_file;        /* its #config_file: line's value (HistoQC
                                 writes the config's path, or "default");
                                 NULL: none */
    bool rows;                /* results.tsv has a row */
    size_t damaged;           /* rows whose cells are not the header's
                                 columns (edited by hand, cut short, two
                                 glued into one): no record of any slide */
    size_t damaged_line;      /* the first one's line number, */
    size_t damaged_cells;     /* and its number of cells */
    zhashx_t *by_path;        /* path -> qc_rec_t (as a pointer) */
    zhashx_t *cancelled;      /* paths whose error.log line says the slide
                                 was cancelled or not run (a set) */
    zhashx_t *by_name;        /* file name of rows without a path */
    zhashx_t *by_file;        /* recorded path with its folder resolved ->
                                 recorded path, made on the first lookup
                                 that needs it */
} qc_records_t;

/* Reads OUTDIR/results.tsv and OUTDIR/error.log (absent is fine) and
 * claims each row's name in names. -1 with a message when a file is
 * there but cannot be read. */
int qc_records_read (qc_records_t *r, const char *outdir, qc_names_t *names,
                     char *err, size_t errlen);
void qc_records_free (qc_records_t *r);
/* What is recorded for the slide at path. */
qc_rec_t qc_records_of (const qc_records_t *r, const char *path);
/* Whether that record is an error.log line of a slide cancelled or not
 * run (qc_result_cancelled): a QC_REC_RETRY, no failure of the slide's. */
bool qc_records_cancelled (const qc_records_t *r, const char *path);
/* Whether path's record is a results.tsv row that names its slide by the
 * file name alone (HistoQC's; no original_path): its file name, in
 * path, else NULL. */
const char *qc_records_named_only (const qc_records_t *r, const char *path);
/* The same, and when nothing is recorded under path, what is recorded
 * for the same file name in the same folder reached another way (a
 * linked folder, another spelling of its path; a link to a slide file
 * stays a slide of its own, as in the cohort): *as is then the path the
 * record has (else path). A URL goes by path only. */
qc_rec_t qc_records_of_file (qc_records_t *r, const char *path, const char **as);

/* Values of a drop set (qc_records_rewrite): a record kept in NAME.N
 * when it goes (a result run again: -f, a file that changed), or one
 * that goes without a copy (a failure a rerun tries again: a slide not
 * uploaded yet, retried each night, left one error.log.N a night). */
#define QC_DROP_KEEP      ((void *) 1)
#define QC_DROP_TRANSIENT ((void *) 2)

/* Rewrites results.tsv and error.log without the records of the paths
 * in drop (path -> QC_DROP_KEEP or QC_DROP_TRANSIENT) and the
 * results.tsv rows with no path whose filename is in drop_names (the
 * same values; may be NULL); with header not NULL both start afresh
 * instead (another config: none of their lines is kept), results.tsv
 * with header. Damaged rows (qc_records_t's damaged) go too. Each file that loses a record to keep, or its header, is
 * kept first as NAME.N. 0, or -1 with a message. */
int qc_records_rewrite (const char *outdir, zhashx_t *drop, zhashx_t *drop_names,
                        const char *header, char *err, size_t errlen);

/* Where results.tsv's header says the folder is (its "#outdir:" line,
 * before "#dataset:") when that is not real_outdir: the line is set to
 * real_outdir (through NAME.tmp) and *was gets what it said (malloc'd).
 * HistoQC's UI finds a slide's images under the last part of that path,
 * so a folder moved or renamed (archived) showed none. 0 (*was NULL:
 * nothing to change, no results.tsv or no such line), or -1 with a
 * message. */
int qc_records_set_outdir (const char *outdir, const char *real_outdir, char **was,
                           char *err, size_t errlen);

#endif
