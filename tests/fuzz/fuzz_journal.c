/* libFuzzer target: the broker's journal reader (broker/broker_restore.c
 * and broker/journal.c). The input is a journal (after its 16-byte
 * header); when it restores at least one job, the bytes after the first
 * "@@RESULTS@@" marker are that job's result file. Read into a broker
 * as a restart does, recovering from damage (--state-recover), then
 * forgotten: no input may crash, leak or corrupt the broker's memory.
 * The broker here has no sockets: only what a restore touches. */
#include <string.h>

#include "broker/broker_int.h"
#include "shared/log.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
on_dispatch (void *arg, sched_task_t *t, sched_worker_t *w)
{
    (void) arg, (void) t, (void) w;
}

static void
job_destroy (void **item)
{
    job_rec_destroy (*item);
    *item = NULL;
}

static uint8_t *
with_header (const char *magic, const uint8_t *data, size_t len)
{
    uint8_t *b = malloc (QC_JFILE_MAGIC_LEN + len + 1);
    if (b) {
        memcpy (b, magic, QC_JFILE_MAGIC_LEN);
        memcpy (b + QC_JFILE_MAGIC_LEN, data, len);
    }
    return b;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet++)
        qc_log_set_stderr_enabled (0);
    qc_broker_t *b = calloc (1, sizeof *b);
    if (!b)
        return 0;
    b->cfg.state_recover = true;
    b->next_job = 1;
    sched_callbacks_t cb = {.dispatch = on_dispatch, .failed = outbox_task_failed, .arg = b};
    b->sched = sched_new (3, &cb);
    b->jobs = zhashx_new ();
    if (!b->sched || !b->jobs)
        goto out;
    zhashx_set_destructor (b->jobs, job_destroy);
    static const char mark[] = "@@RESULTS@@";
    const uint8_t *split = memmem (data, size, mark, sizeof mark - 1);
    size_t jlen = split ? (size_t) (split - data) : size;
    uint8_t *j = with_header (JOURNAL_MAGIC, data, jlen);
    size_t cut;
    bool recovered = false;
    char err[1024];
    if (j && restore_journal_bytes (b, "journal", j, QC_JFILE_MAGIC_LEN + jlen, &cut,
                                    &recovered, err, sizeof err) == 0 && split) {
        job_rec_t *job = zhashx_first (b->jobs);
        size_t rlen = size - jlen - (sizeof mark - 1);
        uint8_t *r = with_header (RESULTS_MAGIC, split + sizeof mark - 1, rlen);
        if (job && r)
            restore_results_bytes (b, job, "results", r, QC_JFILE_MAGIC_LEN + rlen, &cut,
                                   &recovered, err, sizeof err);
        free (r);
    }
    free (j);
out:
    zhashx_destroy (&b->jobs);
    sched_destroy (&b->sched);
    free (b->tombs);
    free (b);
    return 0;
}
