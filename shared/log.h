/* Logging. A record has time, level, worker, slide, module and message.
 * Records go to stderr (when the level passes the threshold) and to the
 * calling thread's sink, if it set one: the worker's executor threads set
 * a sink that forwards records to the broker, which streams them to the
 * job's client. The slide a thread works on is thread-local context, so
 * pipeline code only names its module. */
#ifndef QC_LOG_H
#define QC_LOG_H

#include <stdarg.h>
#include <stdint.h>

typedef enum {
    QC_LOG_DEBUG = 0,
    QC_LOG_INFO = 1,
    QC_LOG_WARNING = 2,
    QC_LOG_ERROR = 3
} qc_log_level_t;

#define QC_LOG_MAX_MESSAGE 2048
#define QC_LOG_MAX_FIELD   256

typedef struct {
    double time;              /* seconds since the epoch */
    qc_log_level_t level;
    const char *worker;       /* "" when not in a worker */
    const char *slide;        /* "" when not about a slide */
    const char *module;
    const char *message;
} qc_log_record_t;

typedef void (qc_log_sink_fn) (const qc_log_record_t *rec, void *arg);

void qc_log (qc_log_level_t level, const char *module, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void qc_logv (qc_log_level_t level, const char *module, const char *fmt,
              va_list ap);

/* Threshold for stderr (default INFO; QC_LOG_LEVEL=debug|info|warning|error
 * in the environment overrides it). Sinks see every level at or above
 * the sink threshold (default INFO). */
void qc_log_set_stderr_level (qc_log_level_t level);
void qc_log_set_stderr_enabled (int enabled);
/* Process-wide name of this program or worker, shown in records. */
void qc_log_set_process (const char *name);
/* Thread-local: the slide this thread works on (NULL clears). */
void qc_log_set_slide (const char *slide);
/* This thread's slide ("" when none), for a helper thread to take on. */
const char *qc_log_slide (void);
/* Thread-local: the job whose slide this thread works on (0 clears).
 * stderr's lines then say "[job N: SLIDE]": a worker's log (journalctl,
 * a container's) is read beside the broker's, which names jobs, and two
 * jobs may hold slides of one name. Records to a sink are unchanged (a
 * forwarded LOG carries its job in its own field). */
void qc_log_set_job (uint64_t job);
uint64_t qc_log_job (void);
/* Thread-local: where this thread's records also go (NULL clears). */
void qc_log_set_sink (qc_log_sink_fn *fn, void *arg, const char *worker);
/* rec, made by a helper thread on this thread's work and kept until it
 * returned (shared/team.c), to this thread's sink, as this thread's
 * worker: nothing without a sink, or under the sink's threshold. Not to
 * stderr, where the helper wrote it already. */
void qc_log_to_sink (const qc_log_record_t *rec);

const char *qc_log_level_name (qc_log_level_t level);
/* Parses "debug", "info", "warning"/"warn", "error"; -1 when unknown. */
int qc_log_level_parse (const char *name);

/* Turns s's control bytes (C1 ones in UTF-8 too) and bytes that are not
 * valid UTF-8 into '?' (a tab into a space), in place, for text from a
 * peer that goes to a terminal or a log line (every qc_log record is
 * scrubbed so). Returns s; NULL stays NULL. */
char *qc_scrub_controls (char *s);

#endif
