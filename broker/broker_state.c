/* The broker's state folder: what it needs to go on after kill -9.
 *
 *   DIR/lock              held (flock) while a broker uses the folder
 *   DIR/journal           jobs, their slides, acknowledgements, cancels,
 *                         blame, forgotten jobs (records below)
 *   DIR/results/ID.qcr    job ID's results in seq order, each exactly
 *                         as the client will receive it
 *
 * Journal records (payloads; integers little-endian):
 *   J_EPOCH    u64 epoch, u64 next job id: one per broker start
 *   J_JOB      a SUBMIT message (header and body) with the job-level
 *              fields: job, key, config, name, res (job_to_submit)
 *   J_BATCH    a SUBMIT message with job, key, base, slides, final
 *   J_ACK      u64 job, u64 seq
 *   J_CANCEL   u64 job
 *   J_CANCEL_WHY u64 job, u8 why: right after a J_CANCEL the broker made
 *              itself: 1 a submission cut at --max-mb-per-client, 2 a
 *              client gone before sending all its slides (none: the
 *              client's CANCEL). Its own record, so that --state-recover
 *              on an older broker drops only the reason, not the cancel
 *   J_BLAME    u64 job, u64 idx, u32 blame
 *   J_FINISHED u64 job, i64 Unix ms
 *   J_FORGET   u64 job, u64 key, i64 finished, i64 forgotten, u8 why
 *   J_OWNER    u64 job, 40 bytes: the Z85 key of the certificate that
 *              submitted it (CurveZMQ on; right after its J_JOB)
 *   J_DISPATCH u64 job, u64 idx, u32 attempt, 40 bytes: the Z85 key of
 *              the certificate the attempt went to (CurveZMQ on; at each
 *              dispatch, and at a compaction for each attempt that may
 *              still report, oldest first; not synced: lost, the task
 *              runs again; dropped with the SUBMITs of a burst the disk
 *              refused)
 * Result file records:
 *   R_RESULT   u64 idx, u64 seq, u8 ok, then the RESULT message
 *   R_FAILED   u64 first seq, u32 n, u16 reason length, reason, n x u64 idx
 *   R_BASE     u64 seq, u64 tasks, then two bitmaps of that many bits:
 *              tasks whose results (seq 1 .. seq) were acknowledged and
 *              cut from the file, and which of those passed. First in a
 *              file rewritten without its acknowledged results.
 * A task's state is not journalled per dispatch: after a restart every
 * task without a result is queued again (execution is at-least-once);
 * only whom an attempt went to is, for its late RESULT to count.
 *
 * Everything is written at the end of each burst of messages and synced
 * once (state_commit): results before they are sent, SUBMITs before they
 * are ACCEPTED. The journal is rewritten with only what is live
 * (compaction) when most of it is about forgotten jobs; a forgotten
 * job's result file is deleted. */
#include "broker/broker_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/err.h"
#include "shared/log.h"
#include "shared/sync_dir.h"

#define MOD "broker"
/* A failed journal rewrite (a full disk) is tried again after this,
 * doubled by each failure up to COMPACT_BACKOFF_MAX_MS: tried each
 * second, it wrote and synced journal.new until the disk was full, in
 * the broker's loop, over and over (a review: 7 tries in 7 s). */
#define COMPACT_BACKOFF_MS (60 * 1000)
#define COMPACT_BACKOFF_MAX_MS (3600 * 1000)

bool
state_on (const qc_broker_t *b)
{
    return b->state.journal != NULL;
}

/* Records that must be on disk before the broker acts on them (a job
 * accepted, a cancel answered, a result file deleted) make the next
 * commit sync the journal; the others (acknowledgements, blame, finish
 * times) are written then and synced with the next such record or the
 * next sync: losing them in a crash costs a resend or a retry only. */
static void
mark_sync (qc_broker_t *b, uint8_t type)
{
    if (type == J_JOB || type == J_BATCH || type == J_CANCEL || type == J_CANCEL_WHY
        || type == J_FORGET || type == J_EPOCH || type == J_OWNER)
        b->state.sync_due = true;
}

static void
log_rec (qc_broker_t *b, job_rec_t *job, uint8_t type, const void *p, size_t n)
{
    if (!state_on (b))
        return;
    mark_sync (b, type);
    if (qc_jfile_append (b->state.journal, type, p, n, NULL, 0, NULL))
        qc_log (QC_LOG_ERROR, MOD, "journal: out of memory buffering a record");
    else if (job && (type == J_JOB || type == J_BATCH || type == J_OWNER))
        job->journal_bytes += QC_JREC_HEADER + n;
}

/* A SUBMIT message as record bytes (header frame and body). */
static void
log_submit (qc_broker_t *b, job_rec_t *job, uint8_t type, const qc_msg_t *m)
{
    mark_sync (b, type);
    zmsg_t *enc = zmsg_new ();
    if (!enc || qc_msg_encode (m, enc)) {
        qc_log (QC_LOG_ERROR, MOD, "journal: job %" PRIu64 " could not be encoded", job->id);
        zmsg_destroy (&enc);
        return;
    }
    zframe_t *h = zmsg_first (enc), *body = zmsg_next (enc);
    if (qc_jfile_append (b->state.journal, type, zframe_data (h), zframe_size (h),
                         zframe_data (body), zframe_size (body), NULL))
        qc_log (QC_LOG_ERROR, MOD, "journal: out of memory buffering a record");
    else
        job->journal_bytes += QC_JREC_HEADER + zframe_size (h) + zframe_size (body);
    zmsg_destroy (&enc);
}

void
state_log_job (qc_broker_t *b, job_rec_t *job)
{
    if (!state_on (b))
        return;
    qc_msg_t m;
    job_to_submit (job, &m);
    log_submit (b, job, J_JOB, &m);
    state_log_owner (b, job);
}

void
state_log_owner (qc_broker_t *b, job_rec_t *job)
{
    if (!state_on (b) || !job->owner[0])
        return;
    uint8_t p[8 + QC_CURVE_KEY_LEN];
    qc_put_u64 (p, job->id);
    memcpy (p + 8, job->owner, QC_CURVE_KEY_LEN);
    log_rec (b, job, J_OWNER, p, sizeof p);
}

void
state_log_batch (qc_broker_t *b, job_rec_t *job, uint64_t base, char **slides,
                 size_t nslides, bool final)
{
    if (!state_on (b))
        return;
    qc_msg_t m = {.command = QC_SUBMIT, .gpu = -1, .job = job->id, .key = job->key,
                  .base = base, .slides = slides, .nslides = nslides, .final = final};
    log_submit (b, job, J_BATCH, &m);
}

void
state_log_ack (qc_broker_t *b, job_rec_t *job)
{
    uint8_t p[16];
    qc_put_u64 (p, job->id);
    qc_put_u64 (p + 8, job->acked_seq);
    log_rec (b, job, J_ACK, p, sizeof p);
}

/* Why a job was cancelled, by its code in J_CANCEL_WHY: a restart fails the
 * slides it had not run yet with the reason the client was told before
 * (a cut's says what to do about it). */
static const char *const s_cancel_whys[] = {
    SCHED_CANCELLED_BY_CLIENT, JOBS_CUT_WHY, JOBS_ORPHAN_WHY, JOBS_STALLED_WHY,
    JOBS_ADMIN_WHY,   /* new codes go last: a journal keeps them */
};

const char *
state_cancel_why (unsigned code)
{
    return code < sizeof s_cancel_whys / sizeof *s_cancel_whys ? s_cancel_whys[code]
                                                                : SCHED_CANCELLED_BY_CLIENT;
}

void
state_log_cancel (qc_broker_t *b, job_rec_t *job)
{
    uint8_t p[9];
    qc_put_u64 (p, job->id);
    log_rec (b, job, J_CANCEL, p, 8);
    p[8] = 0;
    for (uint8_t i = 1; i < sizeof s_cancel_whys / sizeof *s_cancel_whys; i++)
        if (job->sj->cancel_why && strcmp (job->sj->cancel_why, s_cancel_whys[i]) == 0)
            p[8] = i;
    if (p[8])
        log_rec (b, job, J_CANCEL_WHY, p, 9);
}

void
state_log_dispatch (qc_broker_t *b, job_rec_t *job, uint64_t idx, uint32_t attempt,
                    const char *key)
{
    if (!key || strlen (key) != QC_CURVE_KEY_LEN)
        return;
    uint8_t p[20 + QC_CURVE_KEY_LEN];
    qc_put_u64 (p, job->id);
    qc_put_u64 (p + 8, idx);
    qc_put_u32 (p + 16, attempt);
    memcpy (p + 20, key, QC_CURVE_KEY_LEN);
    log_rec (b, job, J_DISPATCH, p, sizeof p);
}

void
state_log_blame (qc_broker_t *b, job_rec_t *job, uint64_t idx, uint32_t blame)
{
    uint8_t p[20];
    qc_put_u64 (p, job->id);
    qc_put_u64 (p + 8, idx);
    qc_put_u32 (p + 16, blame);
    log_rec (b, job, J_BLAME, p, sizeof p);
}

void
state_log_finished (qc_broker_t *b, job_rec_t *job)
{
    uint8_t p[16];
    qc_put_u64 (p, job->id);
    qc_put_u64 (p + 8, (uint64_t) job->finished_wall);
    log_rec (b, job, J_FINISHED, p, sizeof p);
    job->finish_logged = true;
}

static char *
results_path (const qc_broker_t *b, uint64_t id)
{
    char *p = NULL;
    return asprintf (&p, "%s/results/%" PRIu64 ".qcr", b->state.dir, id) < 0 ? NULL : p;
}

void
state_log_forget (qc_broker_t *b, job_rec_t *job, uint8_t why)
{
    tombstone_t t = {.id = job->id, .key = job->key, .finished_wall = job->finished_wall,
                     .forgotten_wall = zclock_time (), .why = why};
    if (why)
        jobs_remember_tomb (b, &t);
    if (!state_on (b))
        return;
    uint8_t p[33];
    qc_put_u64 (p, t.id);
    qc_put_u64 (p + 8, t.key);
    qc_put_u64 (p + 16, (uint64_t) t.finished_wall);
    qc_put_u64 (p + 24, (uint64_t) t.forgotten_wall);
    p[32] = why;
    log_rec (b, NULL, J_FORGET, p, sizeof p);
    /* the file goes once the journal says the job is forgotten */
    char *path = results_path (b, job->id);
    if (path && zlist_append (b->state.unlink_after, path) == 0)
        path = NULL;
    free (path);
    qc_jfile_close (&job->results);
}

int
state_open_results (qc_broker_t *b, job_rec_t *job)
{
    if (!state_on (b) || job->results)
        return 0;
    char err[512];
    char *path = results_path (b, job->id);
    job->results = path ? qc_jfile_open (path, RESULTS_MAGIC, err, sizeof err) : NULL;
    free (path);
    if (!job->results) {
        qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": %s", job->id, path ? err : "out of memory");
        return -1;
    }
    b->state.dir_dirty = true;
    return 0;
}

void
state_disk_failed (qc_broker_t *b, const char *what, int e)
{
    if (!b || !what)
        return;
    state_t *s = &b->state;
    if (!s->disk_full && !s->opening)
        qc_log (QC_LOG_ERROR, MOD, "cannot write %s: %s; new jobs are refused while "
                "it cannot be written (tried again each second: 'can be written again' "
                "says when they are taken again), accepted jobs go on", what, strerror (e));
    if (!s->dir_gone)           /* the deletion stays the reason given */
        snprintf (s->disk_error, sizeof s->disk_error, "its state folder %s cannot be "
                  "written (%s)", s->dir, strerror (e));
    if (!s->disk_full)
        s->full_since = b->now;
    s->disk_full = true;
    s->disk_errno = e;
    s->next_retry = b->now + 1000;
}

/* Whether the state folder takes writes again, with nothing pending to
 * try: a write of its own (state_write_probe) says so for a file system
 * remounted read-only; a full disk needs room too, as setting times
 * takes no block (it said "can be written again" a second after each
 * refusal, the disk still full). */
static bool
writable_again (qc_broker_t *b)
{
    state_t *s = &b->state;
    if (state_write_probe (b) < 0) {   /* 1: cannot tell, as before */
        state_disk_failed (b, s->dir, errno);
        return false;
    }
    uint64_t mb = 0;
    if ((s->disk_errno == ENOSPC || s->disk_errno == EDQUOT) && state_free_mb (b, &mb) == 0
        && mb < 1) {
        s->next_retry = b->now + 1000;
        return false;
    }
    return true;
}

bool
state_commit (qc_broker_t *b)
{
    state_t *s = &b->state;
    bool journal_ok = true;
    if (state_on (b) && (!s->disk_full || b->now >= s->next_retry || b->pending)) {
        bool ok = true;
        for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs)) {
            outbox_flush_failures (b, j);
            if (ok && j->results && qc_jfile_pending (j->results)) {
                if (qc_jfile_commit (j->results, true)) {
                    state_disk_failed (b, qc_jfile_path (j->results), errno);
                    ok = false;
                } else
                    qc_jfile_release_buffer (j->results);
            }
        }
        if (s->dir_dirty && ok) {
            char *dir = NULL;
            if (asprintf (&dir, "%s/results", s->dir) >= 0) {
                qc_sync_dir (dir);
                free (dir);
            }
            s->dir_dirty = false;
        }
        bool wrote = qc_jfile_pending (s->journal) > 0;
        if (wrote && qc_jfile_commit (s->journal, s->sync_due)) {
            state_disk_failed (b, qc_jfile_path (s->journal), errno);
            /* this burst's SUBMITs are refused: their records go; so do
               dispatches, which only save a rerun (kept, they would pile
               up while the disk stays full) */
            static const uint8_t drop[] = {J_JOB, J_BATCH, J_DISPATCH};
            qc_jfile_drop_pending (s->journal, drop, 3);
            journal_ok = ok = false;
        }
        if (journal_ok)
            s->sync_due = false;
        if (journal_ok && wrote)
            s->wrote_at = b->now;
        if (ok && s->disk_full && !s->dir_gone && !writable_again (b))
            ok = false;
        if (ok && s->disk_full && !s->dir_gone) {
            s->disk_full = false;
            qc_log (QC_LOG_INFO, MOD, "the state folder %s can be written again: "
                    "new jobs are accepted", s->dir);
        }
        /* (not in a folder deleted under the broker: by its name, the
           files would be a new folder's, a new broker's) */
        if (journal_ok && !s->dir_gone) {
            char *path;
            while ((path = zlist_pop (s->unlink_after))) {
                unlink (path);
                free (path);
            }
        }
    }
    /* what is on disk may be sent; with the disk full, accepted jobs go
     * on from memory (a crash then loses those results: they run again) */
    size_t held = 0;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs)) {
        j->durable_seq = j->last_seq;
        held += j->results ? qc_jfile_pending (j->results) : 0;
    }
    /* over the limit, no task goes out, whatever would dispatch one (a
       result's freed credit, a worker joining): the results the running
       tasks bring are all that still comes in */
    s->held_bytes = held;
    bool hold = held > ((size_t) (b->cfg.unwritten_mb ? b->cfg.unwritten_mb : 256) << 20);
    if (hold != s->holding) {
        if (hold)
            qc_log (QC_LOG_WARNING, MOD, "%zu MB of results wait for the disk: no new "
                    "tasks are dispatched until they are written", held >> 20);
        else
            qc_log (QC_LOG_INFO, MOD, "results no longer wait for the disk: tasks are "
                    "dispatched again");
        s->holding = hold;
        sched_hold (b->sched, hold);
        b->dispatch_due = b->dispatch_due || !hold;
    }
    return journal_ok;
}

/* ---------------------------------------------------------------- compaction */

/* What a rewrite would keep of the jobs' own records and the
 * tombstones. Whom running attempts went to is not counted (the rewrite
 * measures it: compact_extra); nor was it, before, taken from the last
 * rewrite's whole size, which kept a forgotten 100 MB job's ceiling at
 * 400 MB until the next rewrite. */
static uint64_t
live_estimate (qc_broker_t *b)
{
    uint64_t live = 4096 + b->ntombs * 42;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        live += j->journal_bytes + 256;
    return live;
}

static int
write_compact (qc_broker_t *b, qc_jfile_t *f)
{
    state_t *s = &b->state;
    uint8_t p[33];
    qc_put_u64 (p, s->epoch);
    qc_put_u64 (p + 8, b->next_job);
    int rc = qc_jfile_append (f, J_EPOCH, p, 16, NULL, 0, NULL);
    for (size_t i = 0; i < b->ntombs && rc == 0; i++) {
        const tombstone_t *t = &b->tombs[i];
        qc_put_u64 (p, t->id);
        qc_put_u64 (p + 8, t->key);
        qc_put_u64 (p + 16, (uint64_t) t->finished_wall);
        qc_put_u64 (p + 24, (uint64_t) t->forgotten_wall);
        p[32] = t->why;
        rc = qc_jfile_append (f, J_FORGET, p, 33, NULL, 0, NULL);
    }
    qc_jfile_t *keep = s->journal;
    s->journal = f;             /* the log_* functions write into f */
    for (job_rec_t *j = zhashx_first (b->jobs); j && rc == 0; j = zhashx_next (b->jobs)) {
        if (!j->durable)
            continue;
        j->journal_bytes = 0;
        state_log_job (b, j);
        uint64_t n = j->sj->total;
        char **paths = calloc (n < QC_PROTO_MAX_SLIDES ? n + 1 : QC_PROTO_MAX_SLIDES,
                               sizeof *paths);
        if (!paths) {
            rc = -1;
            break;
        }
        for (uint64_t base = 0; base < n || base == 0; base += QC_PROTO_MAX_SLIDES) {
            size_t k = n - base < QC_PROTO_MAX_SLIDES ? (size_t) (n - base) : QC_PROTO_MAX_SLIDES;
            for (size_t i = 0; i < k; i++)
                paths[i] = sched_job_task (j->sj, base + i)->path;
            state_log_batch (b, j, base, paths, k, j->sj->final && base + k >= n);
            if (n == 0)
                break;
        }
        free (paths);
        if (j->sj->cancelled)
            state_log_cancel (b, j);
        if (j->acked_seq)
            state_log_ack (b, j);
        for (uint64_t i = 0; i < n; i++) {
            sched_task_t *t = sched_job_task (j->sj, i);
            if (t->blame)
                state_log_blame (b, j, i, t->blame);
            /* whom its attempts that may still report went to (the
               records before are gone): those that left their worker, of
               this life or restored, then the current one, oldest first
               as a restore keeps them (sched.h, SCHED_PAST); by any key
               known this run, admitted now or not (a restore checks) */
            const char *key;
            for (uint32_t k = 0; t->past && k < t->past->n; k++)
                if ((key = security_key_of (b->security, t->past->a[k].who)))
                    state_log_dispatch (b, j, i, t->past->a[k].attempt, key);
            if (t->worker && (key = security_key_of (b->security, t->who)))
                state_log_dispatch (b, j, i, t->attempt, key);
        }
        if (j->finish_logged)
            state_log_finished (b, j);
    }
    s->journal = keep;
    return rc == 0 ? qc_jfile_commit (f, true) : -1;
}

static void
compact (qc_broker_t *b)
{
    state_t *s = &b->state;
    char *path = NULL, *tmp = NULL, err[512];
    if (asprintf (&path, "%s/journal", s->dir) < 0 || asprintf (&tmp, "%s/journal.new", s->dir) < 0) {
        free (path);
        return;
    }
    unlink (tmp);
    int64_t t0 = zclock_mono ();
    uint64_t before = qc_jfile_size (s->journal);
    qc_jfile_t *f = qc_jfile_open (tmp, JOURNAL_MAGIC, err, sizeof err);
    /* what is buffered for the old journal goes first: it is older */
    if (f && qc_jfile_commit (s->journal, true) == 0 && write_compact (b, f) == 0
        && rename (tmp, path) == 0) {
        qc_sync_dir (s->dir);
        qc_jfile_close (&s->journal);
        s->journal = qc_jfile_open (path, JOURNAL_MAGIC, err, sizeof err);
        qc_jfile_close (&f);
        if (!s->journal) {
            /* the rewritten journal is in place; only appending failed */
            qc_log (QC_LOG_ERROR, MOD, "journal: %s", err);
            s->journal = qc_jfile_open (path, JOURNAL_MAGIC, err, sizeof err);
        }
        uint64_t kept = qc_jfile_size (s->journal), jobs = live_estimate (b);
        s->compact_extra = kept > jobs ? kept - jobs : 0;
        s->compact_backoff = 0;
        qc_log (QC_LOG_INFO, MOD, "journal compacted: %" PRIu64 " -> %" PRIu64 " bytes "
                "in %" PRId64 " ms", before, qc_jfile_size (s->journal),
                zclock_mono () - t0);
    } else {
        s->compact_backoff = s->compact_backoff ? s->compact_backoff * 2 : COMPACT_BACKOFF_MS;
        if (s->compact_backoff > COMPACT_BACKOFF_MAX_MS)
            s->compact_backoff = COMPACT_BACKOFF_MAX_MS;
        s->compact_retry_at = b->now + s->compact_backoff;
        qc_log (QC_LOG_WARNING, MOD, "journal compaction failed (%s); the journal "
                "stays as it is, tried again in %" PRId64 " s", f ? strerror (errno) : err,
                s->compact_backoff / 1000);
        qc_jfile_close (&f);
        unlink (tmp);
    }
    free (path);
    free (tmp);
}

/* A job's result file without its acknowledged results: an R_BASE
 * record for them, then the records from the first unacknowledged one
 * on, copied. The outbox's offsets move with them. Done when the file
 * holds results_compact bytes that were acknowledged, half of it at
 * least; only at a result that starts a record (a failure record may
 * hold both sides: the next tick tries again). */
static void
compact_results (qc_broker_t *b, job_rec_t *j)
{
    if (!j->results || j->nfail || qc_jfile_pending (j->results))
        return;
    uint64_t size = qc_jfile_size (j->results), cut = size;
    if (j->noutbox) {
        outbox_entry_t *e = &j->outbox[j->outbox_head];
        if (e->reason >= 0 || e->off < QC_JFILE_MAGIC_LEN || !e->len)
            return;
        cut = e->off;
    }
    if (cut < b->results_compact || cut < size / 2)
        return;
    uint64_t n = j->sj->total, nb = (n + 7) / 8;
    uint8_t *p = calloc (1, 16 + 2 * nb);
    char *path = NULL, *tmp = NULL, err[512];
    if (!p || asprintf (&path, "%s", qc_jfile_path (j->results)) < 0
        || asprintf (&tmp, "%s.new", path) < 0)
        goto out;
    qc_put_u64 (p, j->acked_seq);
    qc_put_u64 (p + 8, n);
    for (uint64_t i = 0; i < n; i++) {
        sched_task_t *t = sched_job_task (j->sj, i);
        if (t->state == TASK_DONE || t->state == TASK_FAILED)
            p[16 + i / 8] |= (uint8_t) (1u << (i % 8));
        if (t->state == TASK_DONE)
            p[16 + nb + i / 8] |= (uint8_t) (1u << (i % 8));
    }
    /* the results still waiting are in the part kept */
    for (size_t k = 0; k < j->noutbox; k++) {
        uint64_t i = j->outbox[(j->outbox_head + k) % j->cap_outbox].idx;
        if (i < n)
            p[16 + i / 8] &= (uint8_t) ~(1u << (i % 8));
    }
    unlink (tmp);
    qc_jfile_t *f = qc_jfile_open (tmp, RESULTS_MAGIC, err, sizeof err);
    int64_t delta = (int64_t) (QC_JFILE_MAGIC_LEN + QC_JREC_HEADER + 16 + 2 * nb)
                    - (int64_t) cut;
    bool ok = f && qc_jfile_append (f, R_BASE, p, 16 + 2 * nb, NULL, 0, NULL) == 0;
    uint8_t chunk[1 << 16];
    for (uint64_t at = cut; ok && at < size; at += sizeof chunk) {
        size_t k = size - at < sizeof chunk ? (size_t) (size - at) : sizeof chunk;
        ok = qc_jfile_read (j->results, at, chunk, k) == 0
             && qc_jfile_append_raw (f, chunk, k) == 0;
        if (ok && qc_jfile_pending (f) > (8u << 20))
            ok = qc_jfile_commit (f, false) == 0;
    }
    ok = ok && qc_jfile_commit (f, true) == 0 && rename (tmp, path) == 0;
    qc_jfile_close (&f);
    if (!ok) {
        unlink (tmp);
        qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": its result file could not be "
                "rewritten (%s); it stays as it is", j->id, strerror (errno));
        goto out;
    }
    char *dir = NULL;
    if (asprintf (&dir, "%s/results", b->state.dir) >= 0)
        qc_sync_dir (dir);
    free (dir);
    qc_jfile_close (&j->results);
    if (!(j->results = qc_jfile_open (path, RESULTS_MAGIC, err, sizeof err))) {
        qc_log (QC_LOG_ERROR, MOD, "job %" PRIu64 ": %s", j->id, err);
        goto out;
    }
    for (size_t k = 0; k < j->noutbox; k++) {
        outbox_entry_t *e = &j->outbox[(j->outbox_head + k) % j->cap_outbox];
        if (e->reason < 0 && e->off >= cut)
            e->off = (uint64_t) ((int64_t) e->off + delta);
    }
    qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 ": result file rewritten without its %"
            PRIu64 " acknowledged results: %" PRIu64 " -> %" PRIu64 " bytes", j->id,
            j->acked_seq, size, qc_jfile_size (j->results));
out:
    free (p);
    free (path);
    free (tmp);
}

/* Once a second: whether the state folder is still there and writable
 * and its room (broker_state_watch.c), the result files and the journal
 * rewritten when most of them is what no one needs any more. */
void
state_maintain (qc_broker_t *b)
{
    state_t *s = &b->state;
    if (state_on (b)) {
        state_folder_gone (b);
        state_space_watch (b);
        state_write_watch (b, false);
    }
    if (!state_on (b) || b->now < s->next_compact_check || s->disk_full || b->pending)
        return;
    s->next_compact_check = b->now + 1000;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        compact_results (b, j);
    uint64_t live = live_estimate (b) + s->compact_extra;
    uint64_t size = qc_jfile_size (s->journal);
    if (s->force_compact
        || (size > b->journal_compact && size > 4 * live && b->now >= s->compact_retry_at)) {
        s->force_compact = false;
        compact (b);
    }
}

/* ---------------------------------------------------------------- open */

/* mkdir -p with 0700 for what it creates. */
static int
make_dirs (const char *dir)
{
    char buf[4096];
    if (snprintf (buf, sizeof buf, "%s", dir) >= (int) sizeof buf)
        return -1;
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir (buf, 0700) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir (buf, 0700) && errno != EEXIST ? -1 : 0;
}

int
state_open (qc_broker_t *b, char *err, size_t errlen)
{
    state_t *s = &b->state;
    s->lock_fd = -1;
    s->dir_fd = -1;
    s->epoch = 1;
    if (!b->cfg.state_dir) {
        sched_set_attempt_base (b->sched, 0);
        return 0;
    }
    if (!(s->dir = strdup (b->cfg.state_dir)) || !(s->unlink_after = zlist_new ())) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    char *results = NULL, *lock = NULL, *journal = NULL;
    int rc = -1;
    if (asprintf (&results, "%s/results", s->dir) < 0 || asprintf (&lock, "%s/lock", s->dir) < 0
        || asprintf (&journal, "%s/journal", s->dir) < 0) {
        snprintf (err, errlen, "out of memory");
        goto out;
    }
    bool made = make_dirs (s->dir) == 0;
    if (!made || make_dirs (results)) {
        int e = errno;
        /* there already, but another user's: whose, rather than "create";
           there, but its results folder not made (read-only): that one
           named, not "cannot create the state folder" (a tester's) */
        struct stat st;
        struct passwd *pw = stat (s->dir, &st) == 0 && st.st_uid != geteuid ()
                            ? getpwuid (st.st_uid) : NULL;
        snprintf (err, errlen, "cannot %s %s%s: %s (%s%s%sgive --state DIR, or --state "
                  "none to keep no state)", pw ? "use" : "create",
                  made && !pw ? "" : "the state folder ", made && !pw ? results : s->dir,
                  strerror (e), pw ? "it is " : "", pw ? pw->pw_name : "",
                  pw ? "'s: run the broker as that user, or " : "");
        goto out;
    }
    s->lock_fd = open (lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->lock_fd < 0) {
        snprintf (err, errlen, "cannot open %s: %s (the state folder must be "
                  "writable by this user: give --state DIR, or --state none to keep no "
                  "state)", lock, strerror (errno));
        goto out;
    }
    /* the folder is locked too: the lock file holds a pid and looks like
       a stale pid file, and a broker started after it was deleted would
       write the same journal as the one running */
    s->dir_fd = open (s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->dir_fd < 0) {
        snprintf (err, errlen, "cannot open the state folder %s: %s", s->dir, strerror (errno));
        goto out;
    }
    if (flock (s->dir_fd, LOCK_EX | LOCK_NB) || flock (s->lock_fd, LOCK_EX | LOCK_NB)) {
        if (errno != EWOULDBLOCK) {     /* a file system without locks */
            snprintf (err, errlen, "cannot lock the state folder %s: %s (give a --state "
                      "DIR on a local file system)", s->dir, strerror (errno));
            goto out;
        }
        char pid[32] = "?";
        ssize_t n = pread (s->lock_fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 1] = 0;
        pid[strcspn (pid, "\n")] = 0;
        snprintf (err, errlen, "the state folder %s is in use by another broker "
                  "(pid %s); give each broker its own --state DIR", s->dir, pid);
        goto out;
    }
    char pid[32];
    int n = snprintf (pid, sizeof pid, "%d\n", (int) getpid ());
    if (ftruncate (s->lock_fd, 0) || pwrite (s->lock_fd, pid, (size_t) n, 0) != n) {
        /* the lock holds without the pid: only the message is poorer */
    }
    if (!(s->journal = qc_jfile_open (journal, JOURNAL_MAGIC, err, errlen)))
        goto out;
    s->opening = true;
    if (restore_run (b, err, errlen))
        goto out;
    /* a new life: its attempts are numbered after the last life's */
    s->epoch++;
    sched_set_attempt_base (b->sched, (uint32_t) (((s->epoch - 1) & 0xffff) << 16));
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        for (uint64_t i = 0; i < j->sj->total; i++)
            sched_job_task (j->sj, i)->attempt = (uint32_t) (((s->epoch - 1) & 0xffff) << 16);
    uint8_t p[16];
    qc_put_u64 (p, s->epoch);
    qc_put_u64 (p + 8, b->next_job);
    if (qc_jfile_append (s->journal, J_EPOCH, p, sizeof p, NULL, 0, NULL)
        || qc_jfile_commit (s->journal, true)) {
        int e = errno;
        /* a full disk is no configuration error: said so (main exits 5,
           which a service manager restarts, not 2, which it does not) */
        bool full = qc_errno_disk_refused (e) && e != EROFS;  /* read-only: a mount's */
        snprintf (err, errlen, "%scannot write %s: %s%s", full ? QC_BROKER_DISK_REFUSED : "",
                  journal, strerror (e), full ? " (a full disk? free space; the broker "
                  "starts once it can write its journal)" : "");
        goto out;
    }
    rc = 0;
    s->opening = false;     /* on a failure it stays: the broker is not
                               started, and its last commit says nothing */
out:
    free (results);
    free (lock);
    free (journal);
    return rc;
}

void
state_close (qc_broker_t *b)
{
    state_t *s = &b->state;
    if (s->journal)
        qc_jfile_commit (s->journal, true);
    qc_jfile_close (&s->journal);
    if (s->unlink_after) {
        char *path;
        while ((path = zlist_pop (s->unlink_after)))
            free (path);
        zlist_destroy (&s->unlink_after);
    }
    if (s->lock_fd >= 0)
        close (s->lock_fd);     /* releases the locks */
    if (s->dir_fd >= 0)
        close (s->dir_fd);
    s->lock_fd = s->dir_fd = -1;
    free (s->dir);
    s->dir = NULL;
}
