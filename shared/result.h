/* One slide's QC result: ok/failed with a reason, ordered metric columns
 * (key -> value text, as results.tsv shows them), warnings, and the image
 * files the pipeline wrote (name -> bytes). It travels from the worker to
 * the client inside a RESULT message, so every part is bounded. */
#ifndef QC_RESULT_H
#define QC_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QC_RESULT_MAX_KV       512
#define QC_RESULT_MAX_KEY      128
#define QC_RESULT_MAX_VALUE    16384
#define QC_RESULT_MAX_FILES    64
#define QC_RESULT_MAX_FILENAME 200
#define QC_RESULT_MAX_FILESIZE (64u << 20)
#define QC_RESULT_MAX_ERROR    4096
#define QC_RESULT_MAX_WARNINGS 8192

/* Ends a failure's reason when the cause may pass (a server that did not
 * answer, after every retry): a rerun into the same folder runs such a
 * slide again (client/output_records.h) instead of skipping it. */
#define QC_RESULT_RETRY_MARK   "; a rerun tries again)"

/* The whole reason of a slide its job's client cancelled (qc-submit
 * --cancel, or Ctrl-C): no failure of the slide's, run again on a rerun
 * and counted apart in qc-submit's summary. */
#define QC_RESULT_CANCELLED    "cancelled by the client"
/* How the reason of a slide the broker dropped with its job starts (a
 * submission over its quota, a client gone for good, no worker that
 * could run it): counted with the cancelled. */
#define QC_RESULT_NOT_RUN      "not run: "
/* True when a failure's reason is either: not the slide's fault, counted
 * apart (a summary, the counts a folder's records give an --attach). */
bool qc_result_cancelled (const char *reason);

/* Phrases of a failure's reason that name the machine that ran the slide
 * as the cause, not the slide, its server or its share: memory short, no
 * file descriptor left, a cache disk full. Another machine may run that slide now, so the
 * broker sends it out again (qc_result_machine_trouble). A server's or a
 * share's failure is everyone's: it carries the rerun mark only. */
#define QC_RESULT_MEMORY_SHORT "memory ran out on this machine"
#define QC_RESULT_NO_FDS       "had no file descriptor left"
/* A worker's slide cache on a disk that refused a write (full, over
 * quota, failing): every slide by URL fails there, and would on another
 * worker pass (worker/fetch/disk_cache.c). */
#define QC_RESULT_CACHE_DISK   "this machine's cache disk refused a write"
/* Starts a failure's reason when a worker cannot build the job's
 * pipeline from its config (worker/exec_pipeline.c). qc-submit checks a
 * config with its own build before sending it, so a worker of another
 * build that says this most likely lacks what the config uses: the
 * broker then sends the slide elsewhere (broker/broker_workers.c). */
#define QC_RESULT_CONFIG_ERROR "configuration error: "
/* In a failure's reason when a worker refused a slide's URL as outside
 * its own --slides-url prefixes (worker/slides_root.c): another worker,
 * whose prefixes admit it or who has none, may fetch it, so the broker
 * sends it elsewhere, as it does a build's refusal. */
#define QC_RESULT_URL_REFUSED  "is outside every --slides-url of this worker"
/* True when reason (a failure's) names one of them. */
bool qc_result_machine_trouble (const char *reason);
/* Ends a worker's crash report reason (READY `reason`) when memory was
 * short as its process died: the death names no culprit, and a slide
 * failed after such deaths is marked for a rerun (broker/sched.c). */
#define QC_RESULT_CRASH_MEMORY "while memory ran short"

typedef struct {
    char *key;
    char *value;
} qc_kv_t;

typedef struct {
    char *name;            /* file name suffix, e.g. "_thumb.png" */
    unsigned char *data;
    size_t size;
} qc_file_t;

/* Which version of a slide by URL the worker read: its size and the
 * validators its server gave (ETag, Last-Modified). The client notes it
 * beside the slide's record, so that a rerun into the folder can ask the
 * server whether the slide changed since (client/output_stamps.h). */
#define QC_RESULT_MAX_ETAG     255
#define QC_RESULT_MAX_LASTMOD  63
typedef struct {
    int64_t size;          /* bytes; -1 when not known */
    char etag[QC_RESULT_MAX_ETAG + 1];           /* "" when none */
    char last_modified[QC_RESULT_MAX_LASTMOD + 1]; /* "" when none */
} qc_result_source_t;

/* A file a step read beside a slide by URL (its annotation), and which
 * version: the client stamps it with the slide's record, so that a rerun
 * into the folder asks the server whether it is still that file, or
 * still not there (client/output_stamps.h). where is the URL redacted
 * (shared/url.h: no credentials, no query), as the client knows it. */
#define QC_RESULT_MAX_INPUTS   8
#define QC_RESULT_MAX_INPUT    5120
typedef struct {
    char *where;
    bool there;            /* false: the server said 404 or 410 */
    qc_result_source_t v;  /* when there; size -1 and "" when not */
} qc_result_input_t;

typedef struct qc_result {
    int ok;                /* 1 = every step ran; 0 = failed, see error */
    char *error;           /* reason when failed (NULL when ok) */
    char *warnings;        /* "|"-joined warnings, NULL when none */
    qc_kv_t *kv;
    size_t nkv, cap_kv;
    qc_file_t *files;
    size_t nfiles, cap_files;
    bool has_source;       /* a slide by URL: source says its version */
    qc_result_source_t source;
    qc_result_input_t inputs[QC_RESULT_MAX_INPUTS];
    size_t ninputs;
} qc_result_t;

qc_result_t *qc_result_new (void);
void qc_result_destroy (qc_result_t **self_p);
/* Empties the result back to "ok, nothing set". */
void qc_result_reset (qc_result_t *self);

/* Sets key to a printf-formatted value, replacing an earlier value of the
 * same key and keeping its position. Returns 0, or -1 when a bound is hit
 * or memory runs out. */
int qc_result_set (qc_result_t *self, const char *key, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
const char *qc_result_get (const qc_result_t *self, const char *key);
/* Copies size bytes under name. -1 on bounds or memory. */
int qc_result_add_file (qc_result_t *self, const char *name,
                        const void *data, size_t size);
/* Takes ownership of data (malloc'd) on success; on -1 the caller frees. */
int qc_result_take_file (qc_result_t *self, const char *name,
                         unsigned char *data, size_t size);
/* The file added under name, or NULL. */
const qc_file_t *qc_result_file (const qc_result_t *self, const char *name);
int qc_result_add_warning (qc_result_t *self, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* Notes the version of the slide's file that was read (size -1 when
 * not known; etag, last_modified NULL or "" when none). -1 when a
 * validator is over its bound or holds a control byte (none is then
 * noted: a rerun cannot check it). */
int qc_result_set_source (qc_result_t *self, int64_t size, const char *etag,
                          const char *last_modified);
/* The same into a version of its own, *out (a stamp read back from a
 * file): 0, or -1 with *out untouched. */
int qc_result_source_make (qc_result_source_t *out, int64_t size, const char *etag,
                           const char *last_modified);

/* Whether v says anything of a file's version: a size or a validator
 * (size -1 and none is a version not known, or, for a file beside a
 * slide, one that was not there). */
bool qc_result_source_known (const qc_result_source_t *v);

/* Notes the version of a file read beside the slide, by URL (where
 * redacted) or a local one (beside.h says what its version holds); v
 * NULL when it was not there. A later note of the same
 * where replaces the earlier. -1 for bad arguments, a where longer than
 * QC_RESULT_MAX_INPUT or with a control byte, a validator as
 * qc_result_set_source refuses, more than QC_RESULT_MAX_INPUTS files, or
 * no memory: nothing is noted then (a rerun cannot check it). */
int qc_result_add_input (qc_result_t *self, const char *where,
                         const qc_result_source_t *v);

/* Marks the result failed with a reason; the first reason wins. When not
 * even a short text can be allocated, the reason is a static one that
 * names memory on this machine (QC_RESULT_MEMORY_SHORT: the broker sends
 * the slide elsewhere, a rerun tries it again) rather than none, which
 * the client wrote as a bare "failed" that nothing tried again. 0, or -1
 * for NULL arguments. */
int qc_result_fail (qc_result_t *self, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Replaces the result's reason with text, which it takes over (NULL:
 * none). Every other change of error goes through here, as the reason
 * may be that static text, which is not freed. */
void qc_result_set_error (qc_result_t *self, char *text);

#endif
