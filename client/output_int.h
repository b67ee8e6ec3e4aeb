/* What client/output.c, output_job.c, output_start.c and
 * output_results.c share: the output folder's state (one qc_output_t)
 * and the helpers they use. Not for callers outside the output module:
 * they use output.h. */
#ifndef QC_OUTPUT_INT_H
#define QC_OUTPUT_INT_H

#include <stdio.h>

#include "client/output.h"
#include "shared/asset_store.h"
#include "client/output_records.h"
#include "client/names.h"
#include "client/output_stamps.h"

#define JOBFILE ".qc-job"
#define SLIDESFILE ".qc-slides"
#define LOCKFILE ".qc-lock"
#define CONFIGFILE ".qc-config"
#define PATH_COLUMN "original_path"
/* results.tsv's #config_file: for the built-in config (HistoQC writes
 * "default" alone for its config.ini, so the two are told apart) */
#define BUILTIN_CONFIG_NAME "default (qc-submit's built-in config: " \
                            "qc-submit --write-default-config FILE writes it)"
#define NAME_MAX_BYTES 255    /* one path component, as Linux allows */

/* A file a step reads beside a slide, as it was when stamped. */
typedef struct {
    char *file;
    qc_stamp_t stamp;         /* size -1: not there */
} input_t;

typedef struct {
    char *name;               /* output name (client/names.h) */
    char *path;               /* the slide's absolute path */
    bool stamped;             /* stamp taken when planned (a local file) */
    qc_stamp_t stamp;
    input_t *inputs;          /* the files its steps read beside it, */
    size_t ninputs;           /* stamped with it (output_stamps.h) */
} slide_t;

struct qc_output {
    char *outdir;
    char *journal_refused;    /* why .qc-job cannot be written by this
                                 user (another's folder), or NULL */
    char *made_top;           /* the first folder of outdir this run made,
                                 or NULL: gone again if the run never
                                 starts */
    int lock_fd;
    bool locked;              /* this run holds .qc-lock */
    bool made_lock;           /* ... and made it (it was not there) */
    bool attach;
    FILE *tsv, *errors, *log, *journal;
    char **columns;           /* the columns rows are written in */
    size_t ncolumns;
    char *header;             /* header lines of a new results.tsv */
    bool new_header;          /* results.tsv is started afresh (-f) */
    qc_records_t records;     /* what earlier runs recorded */
    char *command_line;       /* for qc.log when the job starts */
    char *config_text;        /* the config sent, for .qc-config (NULL:
                                 attach) */
    char *config_file;        /* its file, or "default" */
    char config_id[QC_ASSET_HEX_LEN + 1];   /* client/config_id.h */
    qc_names_t *names;
    slide_t *slides;          /* the job's slides, by task index */
    size_t nslides, cap_slides;
    slide_t other;            /* a slide of a job not planned here */
    zhashx_t *drop;           /* paths whose records go at the start */
    zhashx_t *drop_names;     /* ... file names of rows without a path */
    zhashx_t *stamps;         /* .qc-stamps: recorded path -> qc_stamp_t */
    zhashx_t *moved;          /* "name TAB size TAB s.ns" -> the recorded
                                 path gone (qc_output_moved_from; "" when
                                 two match), made on first use; a
                                 record taken by a slide leaves it */
    zlistx_t *unsynced;       /* images and their folders written since
                                 the last qc_output_sync (paths) */
    zlistx_t *moved_taken;    /* the recorded paths so taken (the
                                 strings qc_output_moved_from returned) */
    zlistx_t *baseline;       /* slide_t of skipped slides with no stamp
                                 yet, stamped as they are now (NULL: none) */
    zhashx_t *url_stamps;     /* ... redacted URL -> qc_result_source_t */
    zhashx_t *input_stamps;   /* ... qc_input_stamp_key -> qc_stamp_t */
    zhashx_t *url_input_stamps;   /* ... the same key -> qc_result_source_t */
    qc_output_inputs_fn *inputs_of;   /* the files beside a slide (NULL: */
    void *inputs_ctx;                 /* the config's steps read none) */
    FILE *stamps_out;         /* .qc-stamps, to append slides by URL's
                                 versions to as results come (opened at
                                 the first) */
    zlistx_t *unread;         /* "path\treason" lines, escaped */
    zlistx_t *plan_notes;     /* "LEVEL\tmessage" for qc.log (NULL: none) */
    bool config_recorded;     /* .qc-config records a config of these
                                 values, with the results: kept as it is */
    char recorded_id[QC_ASSET_HEX_LEN + 1];   /* its sha256 when it is not
                                 config_id (laid out otherwise), else "" */
    uint8_t *seen;            /* bitmap of written task indices */
    size_t seen_bits;
    uint64_t written;
    bool told_other_keys;     /* a result's values under names that are not
                                 columns were said in qc.log (once a run) */
    zlistx_t *failed_now;     /* paths of the failed results this run
                                 wrote (NULL: none yet) */
    uint64_t job, key;        /* from .qc-job (attach) or set_job */
};

/* OUTDIR/name (malloc'd), or NULL out of memory. */
char *path_in (const qc_output_t *o, const char *name);
/* OUTDIR/name opened with mode, or NULL with the reason in err. */
FILE *open_in (qc_output_t *o, const char *name, const char *mode, char *err,
               size_t errlen);
/* results.tsv, error.log and qc.log opened to append (once); 0, or -1
 * with the reason in err. */
int output_open_files (qc_output_t *o, char *err, size_t errlen);
/* OUTDIR/name opened to read, or NULL (absent: nothing to read). */
FILE *read_in (const qc_output_t *o, const char *name);
/* output_config.c: the columns rows are written in go (for others, or
 * at the close); the columns chosen (the config's, plus the path
 * column; an existing results.tsv's when they agree, a new header with
 * -f, else a refusal); the folder's config checked against this one
 * (another is refused, or with -f started afresh). 0, or -1 with a
 * message. */
void output_drop_columns (qc_output_t *o);
int output_choose_columns (qc_output_t *o, const qc_output_config_t *cfg, char *err,
                           size_t errlen);
int output_check_config (qc_output_t *o, const qc_output_config_t *cfg, char *err,
                         size_t errlen);
/* The inputs of s freed (s itself is not). */
void slide_free_inputs (slide_t *s);

/* Task idx is written; -1 out of memory or an index past 2^32. */
int mark_seen (qc_output_t *o, uint64_t idx);

/* client/output_job.c: the job files read back. */
/* A result a crash interrupted (a "begin" line of .qc-job with no "done"
 * after it) is cut back on every open, whatever the mode: its half row
 * would otherwise count as a slide passed. An "abandon" line then closes
 * it, so that lines written after the cut are not cut again. */
void output_repair_torn (qc_output_t *o);
/* The job and key of .qc-job, and the indices it has written (attach). */
void output_read_journal (qc_output_t *o);
/* The job's slides from .qc-slides (attach), when it is that job's. */
void output_read_slides (qc_output_t *o, uint64_t job);

#endif
