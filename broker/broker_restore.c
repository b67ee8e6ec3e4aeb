/* Reading the state folder back (broker_state.c has the record layout):
 * the journal rebuilds the jobs and their slides, each job's result file
 * says which tasks have results (with their seq numbers, as the client
 * knows them) and which of those the client still needs. Every task
 * without a result is queued again.
 *
 * A torn last record (a crash in the middle of a write) is dropped with
 * a warning. A damaged record followed by good ones is an error that
 * names the record; with --state-recover the broker starts anyway: a
 * damaged journal record is skipped, a damaged result file is cut before
 * the damage (those slides run again), and the journal is rewritten. */
#include "broker/broker_int.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/err.h"
#include "shared/log.h"

#define MOD "broker"
/* Checksums of result records are checked in the last part of a file
 * (where a crash can leave a torn record) and when a result is sent. */
#define RESULT_CRC_TAIL (4u << 20)

typedef struct {
    qc_broker_t *b;
    bool recovered;            /* something was dropped: rewrite */
} restore_t;

/* A SUBMIT message stored in a record. */
static qc_msg_t *
decode_submit (const qc_jrec_t *rec, char *why, size_t len)
{
    if (rec->len < 4) {
        snprintf (why, len, "too short for a message");
        return NULL;
    }
    qc_msg_t *m = qc_msg_decode_bytes (rec->data, 4, rec->data + 4, rec->len - 4, why, len);
    if (m && m->command != QC_SUBMIT) {
        snprintf (why, len, "holds a %s, not a SUBMIT", qc_command_name (m->command));
        qc_msg_destroy (&m);
    }
    return m;
}

/* Applies one journal record; -1 with why when it makes no sense here
 * (then it counts as damaged). */
static int
apply_journal (void *arg, const qc_jrec_t *rec, char *why, size_t len)
{
    restore_t *r = arg;
    qc_broker_t *b = r->b;
    const uint8_t *p = rec->data;
    job_rec_t *job = NULL;
    qc_msg_t *m = NULL;
    int rc = -1;
    switch (rec->type) {
    case J_EPOCH:
        if (rec->len != 16)
            break;
        if (qc_get_u64 (p) > b->state.epoch)
            b->state.epoch = qc_get_u64 (p);
        if (qc_get_u64 (p + 8) > b->next_job)
            b->next_job = qc_get_u64 (p + 8);
        return 0;
    case J_JOB:
        if (!(m = decode_submit (rec, why, len)))
            return -1;
        if (!m->job || !m->key || jobs_lookup (b, m->job)) {
            snprintf (why, len, "job %" PRIu64 " created twice, or without an id", m->job);
            break;
        }
        if (!(job = job_rec_new (b, m->job, m->key)) || jobs_insert (b, job)) {
            if (job)
                sched_job_remove (b->sched, job->sj);
            job_rec_destroy (job);
            snprintf (why, len, "out of memory");
            break;
        }
        job_from_submit (job, m);
        job->durable = true;
        job->journal_bytes += QC_JREC_HEADER + rec->len;
        rc = 0;
        break;
    case J_BATCH:
        if (!(m = decode_submit (rec, why, len)))
            return -1;
        if (!(job = jobs_lookup (b, m->job)) || job->key != m->key
            || m->base != job->sj->total || job->sj->final) {
            snprintf (why, len, "slides for job %" PRIu64 " from index %" PRIu64
                      " do not follow what the journal holds", m->job, m->base);
            break;
        }
        for (size_t i = 0; i < m->nslides; i++)
            if (!sched_job_add (b->sched, job->sj, m->slides[i], job->resource)) {
                snprintf (why, len, "out of memory");
                qc_msg_destroy (&m);
                return -1;
            }
        job->sj->final |= m->final;
        job->bytes += limits_slides_bytes (m->slides, m->nslides);
        job->journal_bytes += QC_JREC_HEADER + rec->len;
        rc = 0;
        break;
    case J_OWNER:
        if (rec->len != 8 + QC_CURVE_KEY_LEN || !(job = jobs_lookup (b, qc_get_u64 (p))))
            break;
        memcpy (job->owner, p + 8, QC_CURVE_KEY_LEN);
        job->owner[QC_CURVE_KEY_LEN] = 0;
        job->journal_bytes += QC_JREC_HEADER + rec->len;
        return 0;
    case J_ACK:
        if (rec->len != 16 || !(job = jobs_lookup (b, qc_get_u64 (p))))
            break;
        if (qc_get_u64 (p + 8) > job->acked_seq)
            job->acked_seq = qc_get_u64 (p + 8);   /* applied after the results */
        return 0;
    case J_CANCEL:
        if (rec->len != 8 || !(job = jobs_lookup (b, qc_get_u64 (p))))
            break;
        job->sj->cancelled = true;      /* by its client, unless J_CANCEL_WHY follows */
        return 0;
    case J_CANCEL_WHY:
        if (rec->len != 9 || !(job = jobs_lookup (b, qc_get_u64 (p))) || !job->sj->cancelled)
            break;
        job->sj->cancel_why = state_cancel_why (p[8]);
        return 0;
    case J_BLAME:
        if (rec->len != 20 || !(job = jobs_lookup (b, qc_get_u64 (p)))
            || qc_get_u64 (p + 8) >= job->sj->total)
            break;
        sched_task_restore_blame (job->sj, qc_get_u64 (p + 8), qc_get_u32 (p + 16));
        return 0;
    case J_DISPATCH: {
        if (rec->len != 20 + QC_CURVE_KEY_LEN || !(job = jobs_lookup (b, qc_get_u64 (p)))
            || qc_get_u64 (p + 8) >= job->sj->total)
            break;
        char key[QC_CURVE_KEY_LEN + 1];
        memcpy (key, p + 20, QC_CURVE_KEY_LEN);
        key[QC_CURVE_KEY_LEN] = 0;
        /* a certificate no longer admitted finishes nothing: its attempt
           is forgotten (the slide runs again) */
        const keyring_entry_t *e = b->security ? security_lookup (b->security, key) : NULL;
        if (e)
            sched_task_restore_attempt (b->sched, job->sj, qc_get_u64 (p + 8),
                                        qc_get_u32 (p + 16), e->id);
        return 0;
    }
    case J_FINISHED:
        if (rec->len != 16 || !(job = jobs_lookup (b, qc_get_u64 (p))))
            break;
        job->finished_wall = (int64_t) qc_get_u64 (p + 8);
        job->finish_logged = true;
        return 0;
    case J_FORGET: {
        if (rec->len != 33)
            break;
        tombstone_t t = {.id = qc_get_u64 (p), .key = qc_get_u64 (p + 8),
                         .finished_wall = (int64_t) qc_get_u64 (p + 16),
                         .forgotten_wall = (int64_t) qc_get_u64 (p + 24), .why = p[32]};
        if ((job = jobs_lookup (b, t.id))) {
            char key[32];
            snprintf (key, sizeof key, "%" PRIu64, t.id);
            sched_job_remove (b->sched, job->sj);
            zhashx_delete (b->jobs, key);
        }
        if (t.why)
            jobs_remember_tomb (b, &t);
        if (t.id >= b->next_job)
            b->next_job = t.id + 1;
        return 0;
    }
    default:
        snprintf (why, len, "unknown record type %u: a newer qc-broker's? Then run that "
                  "version on this folder, as --state-recover drops what this one "
                  "cannot read", rec->type);
        return -1;
    }
    if (rc && !why[0])
        snprintf (why, len, "does not fit the jobs before it");
    qc_msg_destroy (&m);
    return rc;
}

typedef struct {
    qc_broker_t *b;
    job_rec_t *job;
} result_ctx_t;

/* Applies one result record of a job; -1 with why. */
static int
apply_result (void *arg, const qc_jrec_t *rec, char *why, size_t len)
{
    result_ctx_t *c = arg;
    job_rec_t *job = c->job;
    sched_t *sched = c->b->sched;
    const uint8_t *p = rec->data;
    if (rec->type == R_BASE) {
        /* acknowledged results cut from the file: which tasks had them */
        uint64_t n = rec->len >= 16 ? qc_get_u64 (p + 8) : 0;
        uint64_t nb = (n + 7) / 8;
        if (rec->len < 16 || n != job->sj->total || rec->len != 16 + 2 * nb
            || job->last_seq || rec->off != QC_JFILE_MAGIC_LEN) {
            snprintf (why, len, "a base record that does not fit the job");
            return -1;
        }
        uint64_t base = qc_get_u64 (p), finals = 0;
        for (uint64_t i = 0; i < n; i++)
            if (p[16 + i / 8] >> (i % 8) & 1) {
                if (!sched_task_restore_final (sched, job->sj, i,
                                               p[16 + nb + i / 8] >> (i % 8) & 1)) {
                    snprintf (why, len, "a base record that does not fit the job");
                    return -1;
                }
                finals++;
            }
        if (finals != base) {
            snprintf (why, len, "a base record of %" PRIu64 " results naming %" PRIu64
                      " tasks", base, finals);
            return -1;
        }
        job->last_seq = job->outbox_base = base;
        return 0;
    }
    if (rec->type == R_RESULT) {
        if (rec->len < 21) {
            snprintf (why, len, "too short");
            return -1;
        }
        uint64_t idx = qc_get_u64 (p), seq = qc_get_u64 (p + 8);
        if (seq != job->last_seq + 1
            || !sched_task_restore_final (sched, job->sj, idx, p[16] != 0)) {
            snprintf (why, len, "result %" PRIu64 " for slide %" PRIu64 " does not "
                      "follow the results before it", seq, idx);
            return -1;
        }
        return outbox_restore (job, rec->off, rec->len, idx, -1);
    }
    if (rec->type != R_FAILED || rec->len < 14) {
        snprintf (why, len, "unknown record type %u: a newer qc-broker's? Then run that "
                  "version on this folder, as --state-recover drops what this one "
                  "cannot read", rec->type);
        return -1;
    }
    uint64_t first = qc_get_u64 (p);
    uint32_t n = qc_get_u32 (p + 8);
    size_t rlen = (size_t) p[12] | (size_t) p[13] << 8;
    if (first != job->last_seq + 1 || rec->len != 14 + rlen + 8 * (size_t) n) {
        snprintf (why, len, "failures from seq %" PRIu64 " do not follow the results "
                  "before them", first);
        return -1;
    }
    char reason[65536];
    memcpy (reason, p + 14, rlen);
    reason[rlen] = 0;
    int32_t rid = outbox_reason (job, reason);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t idx = qc_get_u64 (p + 14 + rlen + 8 * i);
        if (rid < 0 || !sched_task_restore_final (sched, job->sj, idx, false)
            || outbox_restore (job, 0, 0, idx, rid)) {
            snprintf (why, len, "failure of slide %" PRIu64 " does not fit", idx);
            return -1;
        }
    }
    return 0;
}

typedef int (apply_fn) (void *ctx, const qc_jrec_t *rec, char *why, size_t len);

/* Walks a mapped file's records. crc_from: checksums are checked from
 * this offset on (before it only the framing). Sets *cut when the file
 * must be cut there (torn tail, or damage in a result file being
 * recovered). -1 with err for damage without --state-recover. */
static int
walk (restore_t *r, const char *path, const uint8_t *data, size_t len,
      size_t crc_from, bool cut_on_damage, apply_fn *apply, void *ctx,
      size_t *cut, char *err, size_t errlen)
{
    size_t pos = QC_JFILE_MAGIC_LEN;
    uint64_t nrec = 0;
    *cut = len;
    while (pos < len) {
        qc_jrec_t rec;
        char why[512] = "";
        int got = qc_jrec_parse (data, len, pos, pos >= crc_from, &rec);
        if (got == 1) {
            nrec++;
            if (apply (ctx, &rec, why, sizeof why) == 0) {
                pos = (size_t) rec.next;
                continue;
            }
        } else
            snprintf (why, sizeof why, "checksum or length does not match");
        size_t next = got == 1 ? (size_t) rec.next : qc_jrec_resync (data, len, pos);
        if (got != 1 && next == len) {
            qc_log (QC_LOG_WARNING, MOD, "%s: its last record (%zu bytes at offset %zu) "
                    "was torn by a crash: dropped", path, len - pos, pos);
            *cut = pos;
            return 0;
        }
        if (!r->b->cfg.state_recover) {
            snprintf (err, errlen, "%s: record %" PRIu64 " at offset %zu is damaged (%s), "
                      "and %zu bytes follow it. Nothing was changed. To start anyway, "
                      "dropping what is damaged (its slides run again), start with "
                      "--state-recover", path, nrec + (got != 1), pos, why, len - next);
            return -1;
        }
        r->recovered = true;
        if (cut_on_damage) {
            qc_log (QC_LOG_WARNING, MOD, "%s: record at offset %zu is damaged (%s): "
                    "it and the %zu bytes after it are dropped (--state-recover)",
                    path, pos, why, len - pos);
            *cut = pos;
            return 0;
        }
        qc_log (QC_LOG_WARNING, MOD, "%s: record at offset %zu is damaged (%s): "
                "%zu bytes dropped (--state-recover)", path, pos, why, next - pos);
        pos = next;
    }
    return 0;
}

int
restore_journal_bytes (qc_broker_t *b, const char *path, const uint8_t *data,
                       size_t len, size_t *cut, bool *recovered, char *err,
                       size_t errlen)
{
    restore_t r = {.b = b};
    *cut = len;
    int rc = len ? walk (&r, path, data, len, 0, false, apply_journal, &r, cut, err, errlen)
                 : 0;
    *recovered |= r.recovered;
    return rc;
}

int
restore_results_bytes (qc_broker_t *b, job_rec_t *job, const char *path,
                       const uint8_t *data, size_t len, size_t *cut,
                       bool *recovered, char *err, size_t errlen)
{
    restore_t r = {.b = b};
    result_ctx_t ctx = {.b = b, .job = job};
    size_t crc_from = len > RESULT_CRC_TAIL ? len - RESULT_CRC_TAIL : 0;
    *cut = len;
    if (outbox_reserve (job, (size_t) job->sj->total)) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    int rc = len ? walk (&r, path, data, len, crc_from, true, apply_result, &ctx, cut, err,
                         errlen)
                 : 0;
    *recovered |= r.recovered;
    return rc;
}

/* Reads one job's result file; opens it for appending. */
static int
restore_results (restore_t *r, job_rec_t *job, char *err, size_t errlen)
{
    qc_broker_t *b = r->b;
    char *path = NULL;
    if (asprintf (&path, "%s/results/%" PRIu64 ".qcr", b->state.dir, job->id) < 0) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    int rc = -1;
    const uint8_t *data = NULL;
    size_t len = 0, cut;
    struct stat st;
    if (stat (path, &st) != 0 && errno == ENOENT) {
        /* made when the job was accepted, so it was there: deleted by
           hand, or lost with a disk (a tester's went unsaid when no
           result had been acknowledged yet). Its tasks run again (the
           file alone says which were done); a client that reattaches
           skips the slides it already has. */
        char acked[96] = "";
        if (job->acked_seq > 0)
            snprintf (acked, sizeof acked, ", though its client acknowledged %" PRIu64
                      " result%s", job->acked_seq, qc_plural (job->acked_seq));
        qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": its result file %s is missing%s: "
                "its slides run again", job->id, path, acked);
    }
    job->results = qc_jfile_open (path, RESULTS_MAGIC, err, errlen);
    if (!job->results && b->cfg.state_recover && errno == EBADMSG) {
        /* not a result file: set aside, the slides run again (never a
           file this machine could not open: out of descriptors) */
        qc_log (QC_LOG_WARNING, MOD, "%s (--state-recover: moved aside to .damaged)", err);
        char *aside = NULL;
        if (asprintf (&aside, "%s.damaged", path) >= 0)
            rename (path, aside);
        free (aside);
        r->recovered = true;
        job->results = qc_jfile_open (path, RESULTS_MAGIC, err, errlen);
    }
    if (!job->results || qc_jfile_map (job->results, &data, &len, err, errlen)
        || restore_results_bytes (b, job, path, data, len, &cut, &r->recovered, err, errlen))
        goto out;
    if (len && cut < len && qc_jfile_truncate (job->results, cut)) {
        snprintf (err, errlen, "cannot cut %s at %zu: %s", path, cut, strerror (errno));
        goto out;
    }
    rc = 0;
out:
    qc_jfile_unmap (data, len);
    free (path);
    return rc;
}

/* Result files of jobs the journal never numbered (an id at or past
 * its next job id) that hold results: the journal lost their records
 * (emptied or cut short by a power cut, or by hand), not a forgotten
 * job's file. The broker started afresh and deleted results no client
 * had fetched, and gave their ids again (a tester's 0-byte journal).
 * Refused, the files left as they are; with --state-recover set aside
 * as ID.qcr.lost, said, and no id of them given again. One with no
 * record is a submission never accepted (its file is made before its
 * job is journalled: a full disk, a crash between the two): removed,
 * as before (a review found a healthy folder refused). */
static int
check_unknown_results (qc_broker_t *b, bool *recovered, char *err, size_t errlen)
{
    char *dir = NULL;
    if (asprintf (&dir, "%s/results", b->state.dir) < 0)
        return 0;
    DIR *d = opendir (dir);
    struct dirent *e;
    uint64_t first = 0, last = 0, n = 0;
    while (d && (e = readdir (d))) {
        unsigned long long id;
        char tail[8];
        if (sscanf (e->d_name, "%llu.qc%7s", &id, tail) != 2 || strcmp (tail, "r") != 0
            || id < b->next_job || jobs_lookup (b, id))
            continue;
        struct stat st;
        char *p = NULL;
        if (asprintf (&p, "%s/%s", dir, e->d_name) < 0 || stat (p, &st) != 0
            || st.st_size <= QC_JFILE_MAGIC_LEN) {
            free (p);
            continue;           /* no record: remove_orphans' */
        }
        first = !n || id < first ? id : first;
        last = id > last ? id : last;
        n++;
        if (b->cfg.state_recover) {
            /* never over an earlier recovery's: .lost.2, ... */
            char *aside = NULL;
            struct stat there;
            bool named = asprintf (&aside, "%s.lost", p) >= 0;
            for (int k = 2; named && k < 100 && lstat (aside, &there) == 0; k++) {
                free (aside);
                aside = NULL;
                named = asprintf (&aside, "%s.lost.%d", p, k) >= 0;
            }
            if (named && rename (p, aside) == 0)
                qc_log (QC_LOG_WARNING, MOD, "%s: the results of job %llu, which the "
                        "journal does not know: set aside as %s (--state-recover)", p, id,
                        aside);
            free (aside);
        }
        free (p);
    }
    if (d)
        closedir (d);
    int rc = 0;
    if (n && !b->cfg.state_recover) {
        char ids[64];
        if (n > 1)
            snprintf (ids, sizeof ids, "jobs %" PRIu64 " to %" PRIu64, first, last);
        else
            snprintf (ids, sizeof ids, "job %" PRIu64, first);
        snprintf (err, errlen, "%s holds the results of %s, which the journal does not "
                  "know: it holds no record of them (emptied or cut short: a power cut, "
                  "or by hand?). The result files were left as they are. Put the journal "
                  "back from a backup, "
                  "or start with --state-recover to set those results aside (ID.qcr.lost) "
                  "and go on without them", dir, ids);
        rc = -1;
    }
    if (n && b->cfg.state_recover) {
        b->next_job = last + 1;         /* their ids are not given again */
        *recovered = true;
    }
    free (dir);
    return rc;
}

/* Result files of jobs the journal does not hold are left over from a
 * crash between forgetting a job and deleting its file. */
static void
remove_orphans (qc_broker_t *b)
{
    char *dir = NULL;
    if (asprintf (&dir, "%s/results", b->state.dir) < 0)
        return;
    DIR *d = opendir (dir);
    struct dirent *e;
    while (d && (e = readdir (d))) {
        unsigned long long id;
        char tail[8];
        if (sscanf (e->d_name, "%llu.qc%7s", &id, tail) == 2 && strcmp (tail, "r") == 0
            && !jobs_lookup (b, id)) {
            char *p = NULL;
            if (asprintf (&p, "%s/%s", dir, e->d_name) >= 0)
                unlink (p);
            free (p);
        }
    }
    if (d)
        closedir (d);
    free (dir);
}

int
restore_run (qc_broker_t *b, char *err, size_t errlen)
{
    restore_t r = {.b = b};
    int64_t t0 = zclock_mono ();
    const uint8_t *data = NULL;
    size_t len = 0, cut;
    const char *path = qc_jfile_path (b->state.journal);
    if (qc_jfile_map (b->state.journal, &data, &len, err, errlen))
        return -1;
    int rc = restore_journal_bytes (b, path, data, len, &cut, &r.recovered, err, errlen);
    qc_jfile_unmap (data, len);
    if (rc)
        return -1;
    if (len && cut < len && qc_jfile_truncate (b->state.journal, cut)) {
        snprintf (err, errlen, "cannot cut %s at %zu: %s", path, cut, strerror (errno));
        return -1;
    }
    uint64_t tasks = 0, queued = 0, waiting = 0;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs)) {
        if (restore_results (&r, j, err, errlen))
            return -1;
        if (j->acked_seq > j->last_seq)
            j->acked_seq = j->last_seq;
        /* results cut from the file (R_BASE) were acknowledged, whatever
         * the journal's last ACK record says */
        uint64_t acked = j->acked_seq > j->outbox_base ? j->acked_seq : j->outbox_base;
        j->acked_seq = j->outbox_base;
        outbox_drop_acked (j, acked);
        j->sent_seq = j->durable_seq = j->last_seq;
        outbox_rewind (j);
        if (j->sj->cancelled) {
            /* tasks queued when the cancel was journalled and whose
             * failures were not yet written */
            const char *why = j->sj->cancel_why;
            j->sj->cancelled = false;
            sched_job_cancel (b->sched, j->sj, why);
        }
        if (sched_job_finished (j->sj)) {
            /* --linger counts from the finish, not from this restart */
            int64_t age = j->finished_wall ? zclock_time () - j->finished_wall : 0;
            age = age > 0 ? age : 0;
            /* before this boot, maybe: the monotonic clock starts at boot,
               so finished_at may be negative (0 alone means running) */
            j->finished_at = b->now - age != 0 ? b->now - age : -1;
            if (!j->finished_wall)
                j->finished_wall = zclock_time ();
        }
        tasks += j->sj->total;
        queued += sched_job_queued (j->sj);
        waiting += j->last_seq - j->acked_seq;
    }
    if (check_unknown_results (b, &r.recovered, err, errlen))
        return -1;
    /* Jobs a certificate owns, restored by a broker started without
     * --cert (a rollback, a unit file mistyped): every peer is then
     * admitted, and any local user could fetch or cancel them with a
     * made-up job key (a hospital admin's probe). Refused before a peer
     * is heard; nothing in the folder changed. */
    size_t owned = 0;
    for (job_rec_t *j = zhashx_first (b->jobs); j && !b->cfg.cert_path; j = zhashx_next (b->jobs))
        owned += j->owner[0] != 0;
    if (owned) {
        snprintf (err, errlen, "the state folder %s holds %zu job%s submitted with a "
                  "certificate (its broker ran with --cert): without --cert, anyone who "
                  "can reach this broker could fetch or cancel %s. Start it with its --cert "
                  "and --allow, as before, or give another --state", b->state.dir, owned,
                  qc_plural (owned), owned == 1 ? "it" : "them");
        return -1;
    }
    remove_orphans (b);
    qc_log (QC_LOG_INFO, MOD, "state %s: %zu job%s restored (%" PRIu64 " slide%s, %"
            PRIu64 " to run, %" PRIu64 " results waiting for their clients) in %"
            PRId64 " ms; next job id %" PRIu64, b->state.dir, zhashx_size (b->jobs),
            qc_plural (zhashx_size (b->jobs)), tasks, qc_plural (tasks), queued, waiting, zclock_mono () - t0, b->next_job);
    if (r.recovered)
        b->state.next_compact_check = 0;   /* rewritten on the first tick */
    /* the memory replaying forgotten jobs took goes back to the system
       (the broker held 107 MB after restoring none from a long history
       until some job was next forgotten) */
    b->trim_due = true;
    b->state.force_compact = r.recovered;
    return 0;
}
