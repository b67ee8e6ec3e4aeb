/* The output folder qc-submit writes as results arrive:
 *   OUTDIR/results.tsv   HistoQC's header lines, one row per passed slide
 *   OUTDIR/error.log     one line per failed slide: name, reason
 *   OUTDIR/qc.log        every forwarded log record
 *   OUTDIR/SLIDE/...     the images a slide's pipeline wrote
 *   OUTDIR/.qc-job       job id, broker, and the result numbers already
 *                        written (so --attach never writes one twice)
 * Every write is flushed at once: a crash loses nothing already shown. */
#ifndef QC_OUTPUT_H
#define QC_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "shared/proto.h"

typedef struct qc_output qc_output_t;

typedef struct {
    const char *outdir;
    const char *pipeline;      /* "#pipeline:" line */
    const char *config_file;   /* path, or "default" */
    const char *command_line;
    const char **columns;      /* NULL on attach: read from results.tsv */
    size_t ncolumns;
} qc_output_config_t;

/* Creates the folder and files (or reopens them for --attach when
 * attach is true). NULL with a message in err. */
qc_output_t *qc_output_open (const qc_output_config_t *cfg, bool attach,
                             char *err, size_t errlen);
void qc_output_close (qc_output_t **self_p);

/* Records the job this folder belongs to (first line of .qc-job): its
 * id, its identity key and the broker. */
int qc_output_set_job (qc_output_t *self, uint64_t job, uint64_t key,
                       const char *broker);
/* The job an opened (attached) folder belongs to, from its .qc-job: its
 * id (0 when none is recorded) and key (0 when an older .qc-job has
 * none). */
uint64_t qc_output_job (const qc_output_t *self, uint64_t *key);
/* Reads .qc-job of an earlier run: job id and how many results were
 * written. -1 when absent. */
int qc_output_read_job (const char *outdir, uint64_t *job, uint64_t *written);
/* True when the task index was already written. */
bool qc_output_has (const qc_output_t *self, uint64_t idx);
uint64_t qc_output_written (const qc_output_t *self);
/* Writes one result (row or error line, and its files); returns 0, or -1
 * when the disk refused (message in err). */
int qc_output_result (qc_output_t *self, const qc_msg_t *m, char *err,
                      size_t errlen);
void qc_output_log (qc_output_t *self, const qc_msg_t *m);

#endif
