/* The output folder qc-submit writes as results arrive:
 *   OUTDIR/results.tsv   HistoQC's header lines, one row per passed slide
 *                        (an original_path column last: the slide's path)
 *   OUTDIR/error.log     one line per failed slide: path, reason
 *   OUTDIR/qc.log        every forwarded log record
 *   OUTDIR/NAME/...      the images a slide's pipeline wrote
 *   OUTDIR/.qc-job       job id, broker, and the result numbers already
 *                        written (so --attach never writes one twice)
 *   OUTDIR/.qc-slides    the job's slides by index: name and path, so an
 *                        --attach names every file from the client's own
 *                        cohort, never from what a worker sends
 *   OUTDIR/.qc-lock      held (flock) by the qc-submit writing here
 *   OUTDIR/.qc-config    the identity of the config the results were
 *                        made with (client/config_id.h), its file name
 *                        and its text as sent: a rerun with another
 *                        config is refused, or with -f starts
 *                        results.tsv and error.log afresh, so that one
 *                        results.tsv never holds rows of two configs
 * Text from slides and workers is escaped (client/escape.h); names come
 * from client/names.h.
 *
 * A rerun into a folder resumes it: opening reads what is recorded and
 * changes nothing but the lock; only once the broker has accepted the
 * job (qc_output_set_job) are files created, appended to, or (for -f)
 * rewritten without the records of the slides run again, the old files
 * kept as results.tsv.N / error.log.N. A second qc-submit into the same
 * folder is refused while the first holds the lock. Every write is
 * flushed at once: a crash loses nothing already shown. */
#ifndef QC_OUTPUT_H
#define QC_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "client/output_records.h"
#include "shared/proto.h"

typedef struct qc_output qc_output_t;
/* The files a config's steps read beside the slide at path, each told to
 * add (addctx, where): 0, or -1 when add fails. */
typedef int (qc_output_inputs_fn) (void *ctx, const char *path,
                                   int (*add) (void *addctx, const char *where),
                                   void *addctx);

typedef struct {
    const char *outdir;
    const char *pipeline;      /* "#pipeline:" line */
    const char *config_file;   /* path, or "default" */
    const char *command_line;
    const char *config_text;   /* the config as sent (its files by
                                  SHA-256); NULL on attach */
    const char *builtin_text;  /* the built-in config's, as config_text
                                  would give it: a folder that lost its
                                  .qc-config whose header names the
                                  built-in config is checked against it;
                                  NULL: not known */
    const char **columns;      /* the config's columns; NULL on attach */
    size_t ncolumns;
    bool force;                /* -f: a results.tsv of other columns, or
                                  of another config, is started afresh
                                  (the old one kept) */
    uint64_t attach_job;       /* --attach: the job whose slides to read */
    /* The files the config's steps read beside the slide at path (its
     * annotation), told to add (addctx, where), stamped with each local
     * slide so that a rerun runs a slide whose file changed again
     * (output_stamps.h); NULL: none. */
    qc_output_inputs_fn *inputs_of;
    void *inputs_ctx;
} qc_output_config_t;

/* Opens (creating the folder and its parents when missing) and locks
 * the folder, and
 * reads what earlier runs recorded; attach also reads the job's slides
 * and journal. NULL with a message in err (another qc-submit holds the
 * folder, then *busy is set when busy is not NULL; a results.tsv of
 * other columns, or results of another config, without -f; ...). */
qc_output_t *qc_output_open (const qc_output_config_t *cfg, bool attach, bool *busy,
                             char *err, size_t errlen);
void qc_output_close (qc_output_t **self_p);
/* Whether another qc-submit holds outdir's lock now (err then says so,
 * as qc_output_open would): asked before anything is said or done for
 * the folder, such as fetching its last job. */
bool qc_output_in_use (const char *outdir, char *err, size_t errlen);
/* Whether OUTDIR's .qc-config records the config of config_text (its
 * identity: client/config_id.h): an earlier run into it ran the same
 * config. False when either is NULL or it cannot be told. */
bool qc_output_config_recorded (const char *outdir, const char *config_text);

/* What the folder records for the slide at path. */
qc_rec_t qc_output_recorded (const qc_output_t *self, const char *path);
/* The same, also for the same file reached by another path (a linked
 * folder): *as is the path the folder records it under. */
qc_rec_t qc_output_recorded_as (qc_output_t *self, const char *path, const char **as);
/* A local slide with no record that was moved: the recorded path of a
 * file of the same name, size and modification time (its .qc-stamps
 * line) that has a record and is gone (stat: no such file); NULL when
 * there is none, or two such (which one is not known). A folder of
 * slides moved to an archive ran again whole under new names. */
const char *qc_output_moved_from (qc_output_t *self, const char *path);
/* The slide at to (moved from from, which it is) takes from's name, so
 * that run again (-f) it writes its row and images under the name its
 * record had, not a new one (arch__a.svs) beside the old folder. -1 on
 * memory. */
int qc_output_name_moved (qc_output_t *self, const char *from, const char *to);
/* Whether the file at path is no longer the one the folder's record of
 * it (under the path recorded) was made from: its size or modification
 * time differ from the stamp the run that sent it noted
 * (client/output_stamps.h). false when there is no stamp, or the file
 * cannot be stat'ed now. */
bool qc_output_changed (const qc_output_t *self, const char *recorded, const char *path);
/* For a local slide the folder records as done (under the path
 * recorded): whether a file the config's steps read beside it (its
 * annotation) was drawn, changed or removed since the run that stamped
 * it (*changed), and which one its worker read, not seen here then nor
 * now, so that whether it changed cannot be told (*unseen, malloc'd:
 * the first such; NULL when none). The files with no stamp yet (a folder an older build
 * wrote, a config that began reading them) are noted as they are now,
 * for .qc-stamps when the run starts. 0, or -1 out of memory. */
int qc_output_inputs_changed (qc_output_t *self, const char *recorded, const char *path,
                              bool *changed, char **unseen);
/* A file by URL that the config's steps read beside a slide (its
 * annotation: beside a slide by URL, or in a file_path URL), and the
 * version the slide's record was made with. */
typedef struct {
    char *url;                      /* as the config and cohort give it */
    const qc_result_source_t *was;  /* the folder's; size -1 and no
                                       validator: it was not there */
} qc_output_url_input_t;
/* For the slide at url (as the cohort gives it; shown, its redacted
 * form or the path its record has, as the folder records it): the files by URL the
 * config's steps read beside it that the run that made its record
 * stamped (output_stamps.h), for a rerun to ask their servers about.
 * *list is malloc'd (qc_output_url_inputs_free). 0, or -1 out of
 * memory. */
int qc_output_url_inputs (qc_output_t *self, const char *url, const char *shown,
                          qc_output_url_input_t **list, size_t *n);
void qc_output_url_inputs_free (qc_output_url_input_t *list, size_t n);
/* Whether the folder has any such stamp: a rerun into a folder with
 * none asks nothing per slide. */
bool qc_output_url_inputs_any (const qc_output_t *self);
/* When the record of a local slide (under the path recorded) has no
 * stamp (a folder an older qc-submit wrote) and its file at path can be
 * stat'ed: notes the file as it is now for .qc-stamps (written when the
 * run starts, job or none), so that a later rescan is told, and returns
 * true. false when it has a stamp, or path cannot be stat'ed. */
bool qc_output_stamp_unstamped (qc_output_t *self, const char *recorded, const char *path);
/* The version of the file a slide by URL's record was made from (its
 * redacted URL: client/output_stamps.h), or NULL when none was noted. */
const qc_result_source_t *qc_output_url_version (const qc_output_t *self, const char *url);
/* Adds a slide to the job (task index = order of calls); names it, and
 * notes its stamp (a local file) for .qc-stamps when the job starts. */
int qc_output_plan (qc_output_t *self, const char *path);
size_t qc_output_planned (const qc_output_t *self);
/* Its records are dropped when the job starts (it runs again); history:
 * kept in results.tsv.N / error.log.N (-f, a changed file), else gone
 * (a failure a rerun tries again). */
int qc_output_drop (qc_output_t *self, const char *path, bool history);
/* A line for qc.log about the plan (level "INFO", "WARNING"), written
 * when the run starts, after its own line. -1 on memory. */
int qc_output_plan_note (qc_output_t *self, const char *level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* A slide qc-submit cannot read: one error.log line when the run starts. */
int qc_output_unreadable (qc_output_t *self, const char *path, const char *why);

/* The broker accepted job (0: no job, every slide was skipped or could
 * not be read): applies the drops, creates or opens the files, writes
 * the header of a new results.tsv, .qc-job (the job's id, identity key
 * and broker) and .qc-slides, and the lines of unreadable slides. 0, or -1 with the reason in err. */
int qc_output_set_job (qc_output_t *self, uint64_t job, uint64_t key,
                       const char *broker, char *err, size_t errlen);
/* The job an opened (attached) folder belongs to, from its .qc-job: its
 * id (0 when none is recorded) and key (0 when an older .qc-job has
 * none). */
uint64_t qc_output_job (const qc_output_t *self, uint64_t *key);
/* What OUTDIR's .qc-job and .qc-slides say of the last job run into it
 * (the folder need not be open): its id, whether it ran in one process,
 * how many slides it has and how many of them have a result written.
 * When .qc-slides is another job's or gone (a run killed between
 * writing the two files as it started its job), slides is 0 and
 * slides_unknown true: whether the job is whole here cannot be told.
 * -1 when no job is recorded. */
typedef struct {
    uint64_t job;
    uint64_t key;              /* 0: an older .qc-job without one */
    bool local;
    char endpoint[256];        /* the broker it ran on ("local"), cut to fit */
    uint64_t slides, done;
    bool slides_unknown;       /* .qc-slides is not this job's */
    bool torn;                 /* .qc-slides names a newer job (with its
                                  key) than .qc-job: the one given here */
    bool table;                /* results.tsv is there, with its header */
    bool delivered;            /* a run told the broker every result is
                                  written (its "delivered" line) */
} qc_output_last_job_t;
int qc_output_last_job (const char *outdir, qc_output_last_job_t *last);
/* Finishes what a run killed as it started a job left undone (last->torn):
 * OUTDIR/.qc-job names that job (no result written yet). 0, or -1. */
int qc_output_adopt_job (const char *outdir, const qc_output_last_job_t *last, char *err,
                         size_t errlen);
/* Records in .qc-job that the broker was told every result of the job
 * is written (its last ACK sent): qc_output_last_job's delivered. */
void qc_output_mark_delivered (qc_output_t *self);
/* The output name of task idx (client/names.h), or NULL. */
const char *qc_output_name_of (const qc_output_t *self, uint64_t idx);
/* True when the task index was already written. */
bool qc_output_has (const qc_output_t *self, uint64_t idx);
uint64_t qc_output_written (const qc_output_t *self);
/* The paths of the failed results this run wrote (its error.log lines),
 * in order, handed to the caller (who destroys it); NULL when none. */
zlistx_t *qc_output_take_failed (qc_output_t *self);
/* Why this run could not journal a job in the folder (its .qc-job is
 * another user's, or read-only), or NULL: said before a job starts, not
 * before a run with nothing to run. */
const char *qc_output_journal_refused (const qc_output_t *self);
/* Of the job's slides written (attach), how many passed and how many
 * failed, by what the folder records for each; of the failed, how many
 * were cancelled or not run (counted apart in the summary). */
void qc_output_written_counts (const qc_output_t *self, uint64_t *passed, uint64_t *failed,
                               uint64_t *cancelled);
/* Writes one result (its files, then its row or error line); 0, or -1
 * when any of it cannot be written (message in err, said in qc.log):
 * the run cannot go on, and the result is not counted as written. */
int qc_output_result (qc_output_t *self, const qc_msg_t *m, char *err,
                      size_t errlen);
/* Whether the output folder itself is gone (moved or deleted while the
 * run went on): with it its .qc-job, which names the job. */
bool qc_output_folder_gone (const qc_output_t *self);
/* Puts what was written so far (tables, images, records) on the disk,
 * past the page cache: before the broker is told it may forget those
 * results. 0, or -1 with errno. */
int qc_output_sync (qc_output_t *self);
void qc_output_log (qc_output_t *self, const qc_msg_t *m);
/* The slide a log record names, as the folder names it: the output name
 * of its task (idx) when its `slide` is that task's file name (two
 * slides of one file name in two folders get two names), else its
 * `slide` as sent (an older worker's record, or none). */
const char *qc_output_log_slide (const qc_output_t *self, const qc_msg_t *m);
/* A line of qc-submit's own in qc.log (escaped). */
void qc_output_note (qc_output_t *self, const char *level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

#endif
