/* The worker side of the protocol: READY (registration, crash reports),
 * STARTED, RESULT and DISCONNECT (a drain or a leave), and the TASK and
 * REVOKE the scheduler's callbacks send. broker.c's handle() calls the
 * workers_on_* handlers once a message is checked against its sender. */
#include "broker/broker_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "shared/cli.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/url.h"

#define MOD "broker"

void
worker_rec_destroy (void *item)
{
    worker_rec_t *w = item;
    if (!w)
        return;
    zframe_destroy (&w->id);
    free (w->name);
    free (w->host);
    free (w->version);
    for (size_t i = 0; i < w->ngpus; i++)
        free (w->gpus[i].name);
    free (w->gpus);
    free (w);
}

static int
roster_add (qc_broker_t *b, worker_rec_t *w)
{
    if (b->nroster == b->caproster) {
        size_t cap = b->caproster ? b->caproster * 2 : 64;
        worker_rec_t **r = realloc (b->roster, cap * sizeof *r);
        if (!r)
            return -1;
        b->roster = r;
        b->caproster = cap;
    }
    w->slot = b->nroster;
    b->roster[b->nroster++] = w;
    return 0;
}

static void
roster_remove (qc_broker_t *b, worker_rec_t *w)
{
    if (w->slot >= b->nroster || b->roster[w->slot] != w)
        return;
    b->roster[w->slot] = b->roster[--b->nroster];
    b->roster[w->slot]->slot = w->slot;
}

/* A worker's host for the log: "?" read as a byte replaced (a tester's
 * review) */
static const char *
host_of (const worker_rec_t *w)
{
    return w->host && *w->host ? w->host : "host not said";
}

uint32_t
worker_probe_ms (const qc_broker_t *b, const worker_rec_t *w)
{
    return b->cfg.heartbeat_ms && b->cfg.heartbeat_ms < w->hb_ms ? b->cfg.heartbeat_ms
                                                                 : w->hb_ms;
}

void
worker_unreachable (qc_broker_t *b, worker_rec_t *w)
{
    if (!b || !w || w->unreachable)
        return;
    w->unreachable = true;
    qc_log (QC_LOG_INFO, MOD, "worker %s (%s): its connection has closed; it is taken "
            "for gone unless it is back within %u ms", w->name, host_of (w),
            worker_probe_ms (b, w) * b->cfg.liveness);
}

void
worker_gone (qc_broker_t *b, worker_rec_t *w, bool died)
{
    qc_log (died ? QC_LOG_WARNING : QC_LOG_INFO, MOD,
            "worker %s (%s) %s; %zu of its tasks go back to the queue",
            w->name, host_of (w),
            !died ? "left" : w->unreachable ? "closed its connection and did not come "
                                              "back: declared dead"
                                            : "missed its heartbeats: declared dead",
            w->sw->assigned.count);
    if (died) {
        unsigned i = b->late_next++ % (sizeof b->late / sizeof b->late[0]);
        snprintf (b->late[i].key, sizeof b->late[i].key, "%s", w->key);
        snprintf (b->late[i].name, sizeof b->late[i].name, "%s", w->name ? w->name : "?");
        b->late[i].died_at = b->now;
        b->late[i].silence_ms = b->now - w->last_seen;
    }
    speeds_keep (b, w);
    sched_worker_remove (b->sched, w->sw, died, w->name);
    roster_remove (b, w);
    zhashx_delete (b->workers, w->key);
}

/* The supervisor of a worker reports the tasks its last process was
 * running when it crashed: the one verdict on a slide's own execution. */
/* Says at INFO that a message named an attempt of the broker's life
 * before (sched.h, SCHED_EARLIER_LIFE): once a second at most, with how
 * many were not said (a certificate holder could send any number; after
 * a restart, each slide that ran says it once). */
static void say_earlier_life (qc_broker_t *b, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void
say_earlier_life (qc_broker_t *b, const char *fmt, ...)
{
    if (b->earlier_said_at && b->now - b->earlier_said_at < 1000) {
        b->earlier_quiet++;
        return;
    }
    char text[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    if (b->earlier_quiet)
        qc_log (QC_LOG_INFO, MOD, "%s (and %" PRIu64 " such messages not logged before "
                "this one)", text, b->earlier_quiet);
    else
        qc_log (QC_LOG_INFO, MOD, "%s", text);
    b->earlier_said_at = b->now ? b->now : 1;
    b->earlier_quiet = 0;
}

static void
on_crash_report (qc_broker_t *b, const peer_t *p, const char *name, const qc_msg_t *m)
{
    for (size_t i = 0; i < m->ncrashed; i++) {
        const qc_taskref_t *r = &m->crashed[i];
        job_rec_t *job = jobs_of_ref (b, r);
        if (!job)
            continue;
        sched_task_t *t = sched_job_task (job->sj, r->idx);
        uint32_t blame_before = t ? t->blame : 0;
        sched_verdict_t v = sched_task_crashed_as (b->sched, job->sj, r->idx, r->attempt,
                                                   name, p->cert ? p->cert->id : 0,
                                                   (uint32_t) m->ncrashed, m->reason);
        if (v == SCHED_NOT_YOURS || v == SCHED_LATE)
            refuse (b, p, "crash report for job %" PRIu64 " slide %" PRIu64 " attempt %u: "
                    "%s", job->id, r->idx, r->attempt, v == SCHED_LATE
                    ? "it came past that attempt's task deadline (judged already)"
                    : "that attempt was not dispatched to this certificate");
        if (v == SCHED_EARLIER_LIFE)
            say_earlier_life (b, "crash report from %s for job %" PRIu64 " slide %" PRIu64
                              " attempt %u, dispatched before this broker started: with "
                              "certificates, an earlier broker life's crash report is not "
                              "counted (whether that life blamed it is not known)", name,
                              job->id, r->idx, r->attempt);
        if (v == SCHED_OK && t->blame == blame_before)
            qc_log (QC_LOG_WARNING, MOD, "worker %s died (%s) while running %zu slides at "
                    "once, which names none of them: %s (job %" PRIu64 ") is not blamed; it "
                    "runs alone on a worker from now on, where a crash is its own", name,
                    m->reason ? m->reason : "no reason given", m->ncrashed,
                    QC_URL_SHOWN (t->path), job->id);
        else if (v == SCHED_OK) {
            qc_log (QC_LOG_WARNING, MOD, "worker %s crashed (%s) while running %s "
                    "(job %" PRIu64 "): blame %u of %u", name,
                    m->reason ? m->reason : "no reason given", QC_URL_SHOWN (t->path), job->id,
                    t->blame, b->cfg.max_deaths ? b->cfg.max_deaths : 3);
            state_log_blame (b, job, r->idx, t->blame);
        }
    }
}

/* Whether o is registered as the worker p's READY m speaks for: m's
 * name and host, p's certificate (one supervisor's processes share all
 * three); with instance set, also that process of it. */
static bool
registration_of (const worker_rec_t *o, const peer_t *p, const qc_msg_t *m,
                 uint64_t instance)
{
    const char *cert = p->cert ? p->cert->key : "";
    return (!instance || o->instance == instance) && o->name && m->name
           && strcmp (o->name, m->name) == 0
           && strcmp (o->host ? o->host : "", m->host ? m->host : "") == 0
           && strcmp (o->cert_key, cert) == 0;
}

/* A supervisor's new process says READY with the crash report of the
 * one it replaces: that one's registration goes now, not after its
 * heartbeats (which read as if the new process had died), and its tasks
 * that were not running at the crash go back to the queue at once. It
 * is the registration the crashed attempts were dispatched to, with the
 * same name, host and certificate: one supervisor's processes. Not any
 * registration of that name: two workers may share one (containers
 * with one hostname, a --name fixed in a template), and retiring the
 * live one sent its running slides to run again. Found before the
 * report is judged (that takes the crashed tasks back). */
static worker_rec_t *
crashed_process (qc_broker_t *b, const peer_t *p, const qc_msg_t *m)
{
    for (size_t i = 0; i < m->ncrashed; i++) {
        const qc_taskref_t *r = &m->crashed[i];
        job_rec_t *job = jobs_of_ref (b, r);
        sched_task_t *t = job ? sched_job_task (job->sj, r->idx) : NULL;
        if (!t || !t->worker || t->attempt != r->attempt)
            continue;
        worker_rec_t *w = t->worker->owner;
        if (w && strcmp (w->key, p->hex) != 0 && registration_of (w, p, m, 0))
            return w;
    }
    return NULL;
}

/* The registration of the process a supervisor's new one replaces, as
 * its READY's succeeds names it (a process that ended while it ran no
 * slide, or restarted to free stuck ones, sends no crash report), on
 * another socket. */
static worker_rec_t *
succeeded_process (qc_broker_t *b, const peer_t *p, const qc_msg_t *m)
{
    for (worker_rec_t *o = zhashx_first (b->workers); o; o = zhashx_next (b->workers))
        if (m->succeeds && registration_of (o, p, m, m->succeeds)
            && strcmp (o->key, p->hex) != 0)
            return o;
    return NULL;
}

static void
retire_crashed (qc_broker_t *b, worker_rec_t *old, bool crashed)
{
    if (!old)
        return;
    size_t n = old->sw->assigned.count;
    qc_log (QC_LOG_INFO, MOD, "worker %s (%s) restarted%s: its old process's %zu %stask%s "
            "go%s back to the queue", old->name, old->host,
            crashed ? " after a crash" : " (its old process ended)", n,
            crashed ? "other " : "", qc_plural (n), n == 1 ? "es" : "");
    speeds_keep (b, old);
    sched_worker_remove (b->sched, old->sw, false, old->name);
    roster_remove (b, old);
    zhashx_delete (b->workers, old->key);
}

static bool
same_resources (const worker_rec_t *w, const qc_msg_t *m)
{
    if (w->slots != m->slots || w->prefetch != m->prefetch || w->ngpus != m->ngpus)
        return false;
    for (size_t i = 0; i < w->ngpus; i++)
        if (w->gpus[i].index != m->gpus[i].index)
            return false;
    return true;
}

/* A READY from a new routing id that is a registered worker's process
 * back on a new socket (a firewall reset its connection, or it heard
 * nothing for a while and connected again): the same name, host,
 * certificate, resources and instance. Its registration moves to the
 * new socket, and the tasks it runs stay with it; those it had not
 * started go back to the queue unblamed, as the worker dropped them when
 * it left the old socket. Registered anew, the old registration was
 * declared dead later and its running slides ran a second time. */
static worker_rec_t *
same_process (qc_broker_t *b, const peer_t *p, const qc_msg_t *m)
{
    for (worker_rec_t *o = zhashx_first (b->workers); o; o = zhashx_next (b->workers))
        if (m->key && registration_of (o, p, m, m->key) && same_resources (o, m))
            return o;
    return NULL;
}

static bool
move_to_socket (qc_broker_t *b, worker_rec_t *w, const peer_t *p)
{
    zframe_t *id = zframe_dup (p->id);
    if (!id || zhashx_rename (b->workers, w->key, p->hex) != 0) {
        zframe_destroy (&id);
        return false;
    }
    snprintf (w->key, sizeof w->key, "%s", p->hex);
    zframe_destroy (&w->id);
    w->id = id;
    w->unreachable = false;     /* that was the old connection */
    w->last_seen = b->now;
    w->next_beat = b->now;
    /* the tasks dispatched and not started: dropped by the worker */
    size_t running = 0, back = 0, n = w->sw->assigned.count;
    sched_task_t **unstarted = n ? calloc (n, sizeof *unstarted) : NULL;
    for (sched_task_t *t = w->sw->assigned.head; t; t = t->wnext)
        if (t->state == TASK_RUNNING)
            running++;
        else if (unstarted && back < n)
            unstarted[back++] = t;
    for (size_t i = 0; i < back; i++)
        sched_worker_return (b->sched, w->sw, unstarted[i]->job, unstarted[i]->idx,
                             unstarted[i]->attempt);
    free (unstarted);
    qc_log (QC_LOG_INFO, MOD, "worker %s (%s) is back on a new connection (the old one "
            "was cut or went silent): of its tasks, %zu running stay with it and %zu not "
            "started go back to the queue", w->name, host_of (w), running, back);
    return true;
}

void
workers_on_ready (qc_broker_t *b, const peer_t *p, qc_msg_t *m)
{
    const char *key = p->hex;
    zframe_t *from = p->id;
    worker_rec_t *old = zhashx_lookup (b->workers, key);
    if (old && p->cert && strcmp (old->cert_key, p->cert->key) != 0) {
        /* another certificate on the routing id of a connection that
           closed (a peer may choose its id): that worker is gone, and
           this READY neither keeps it alive nor takes it over */
        worker_gone (b, old, false);
        b->dispatch_due = true;
        old = NULL;
    }
    if (m->name && strcmp (m->name, "broker") == 0) {
        /* the name results and log records carry for what the broker did
           itself (a failure it made): no worker may take it, nor report
           crashes under it */
        send_simple (b, from, QC_DISCONNECT, "refused: the worker name 'broker' is the "
                     "broker's own: give qc-worker another --name");
        refusals_log (b->refusals, b->now, "worker broker", "READY: the name 'broker' is "
                      "the broker's own");
        return;
    }
    if (m->ncrashed || m->succeeds) {
        worker_rec_t *crashed = m->ncrashed ? crashed_process (b, p, m) : NULL;
        if (!crashed)
            crashed = succeeded_process (b, p, m);
        if (m->ncrashed)
            on_crash_report (b, p, m->name, m);
        /* a crash report came from the process, or the one before it
           was found: either way that one is not coming back */
        retire_crashed (b, crashed, m->ncrashed > 0);
    }
    if (old && same_resources (old, m)) {
        /* the same socket saying READY again (it heard "unknown peer"
         * before our answer to its first READY): nothing was lost */
        old->last_seen = b->now;
        return;
    }
    if (old)    /* the same socket with other resources: a new worker */
        worker_gone (b, old, false);
    worker_rec_t *moved = old || m->ncrashed ? NULL : same_process (b, p, m);
    if (moved && move_to_socket (b, moved, p)) {
        sched_dispatch (b->sched);
        return;
    }
    /* qc-worker allows at most 4096 of each; a peer that asks for more
     * would take every queued task (and slots + prefetch must not wrap) */
    if (m->slots > 4096 || m->prefetch > 4096 || (m->slots == 0 && m->ngpus == 0)) {
        qc_log (QC_LOG_WARNING, MOD, "READY from %s with %u slots, prefetch %u and %zu "
                "GPUs: ignored (%s)", m->name, m->slots, m->prefetch, m->ngpus,
                m->slots == 0 && m->ngpus == 0
                    ? "a worker needs a CPU slot or a GPU to run anything"
                    : "a worker may have at most 4096 slots and a prefetch of 4096");
        return;
    }
    if (b->max_peers && zhashx_size (b->workers) >= b->max_peers) {
        char text[256];
        snprintf (text, sizeof text, "broker is full: it holds %zu workers (%s "
                  "allows %zu peers); try again later", zhashx_size (b->workers),
                  limits_peers_source (b), b->max_peers);
        send_simple (b, from, QC_DISCONNECT, text);
        /* said here too: the operator raises the limit (once in 10 s
           per worker name, as it retries) */
        char who[300];
        snprintf (who, sizeof who, "worker %s", m->name ? m->name : "?");
        refusals_log (b->refusals, b->now, who, "broker is full (%zu workers; %s allows "
                      "%zu peers): raise %s", zhashx_size (b->workers),
                      limits_peers_source (b), b->max_peers, limits_peers_raise (b));
        return;
    }
    worker_rec_t *w = calloc (1, sizeof *w);
    uint32_t idx[QC_PROTO_MAX_GPUS];
    if (!w)
        return;
    snprintf (w->key, sizeof w->key, "%s", key);
    w->id = zframe_dup (from);
    w->name = m->name; m->name = NULL;
    w->host = m->host; m->host = NULL;
    w->version = m->version; m->version = NULL;
    w->gpus = m->gpus; m->gpus = NULL;
    w->ngpus = m->ngpus; m->ngpus = 0;
    w->slots = m->slots;
    w->prefetch = m->prefetch;
    w->instance = m->key;
    w->hb_ms = m->hb_ms < QC_HB_MS_MIN ? b->cfg.heartbeat_ms
               : m->hb_ms > QC_HB_MS_MAX ? QC_HB_MS_MAX : m->hb_ms;
    w->last_seen = b->now;
    for (size_t i = 0; i < w->ngpus; i++)
        idx[i] = w->gpus[i].index;
    if (p->cert) {
        snprintf (w->cert_key, sizeof w->cert_key, "%s", p->cert->key);
        snprintf (w->cert_name, sizeof w->cert_name, "%s", p->cert->name);
    }
    w->sw = sched_worker_add (b->sched, w->slots, w->prefetch, idx,
                              (uint32_t) w->ngpus, w);
    if (w->sw)
        w->sw->who = p->cert ? p->cert->id : 0;
    speeds_seed (b, w);
    if (!w->id || !w->sw || roster_add (b, w)) {
        if (w->sw)
            sched_worker_remove (b->sched, w->sw, false, w->name);
        worker_rec_destroy (w);
        return;
    }
    if (zhashx_insert (b->workers, w->key, w)) {
        roster_remove (b, w);
        sched_worker_remove (b->sched, w->sw, false, w->name);
        worker_rec_destroy (w);
        return;
    }
    qc_log (QC_LOG_INFO, MOD, "worker %s joined from %s: %u slot%s, %zu GPU%s, version %s%s%s%s",
            w->name, host_of (w), w->slots, qc_plural (w->slots), w->ngpus,
            qc_plural (w->ngpus),
            w->version && *w->version ? w->version : "not said", p->cert ? " (certificate " : "",
            p->cert ? p->cert->name : "", p->cert ? ")" : "");
    /* two workers of one name: results, log records and qc-status say
       the name only, so which machine ran a slide could not be told.
       Another host or certificate is another worker, and so is another
       process on the same host (containers that share a hostname, each
       worker PID 1): the same process back on a new socket, its earlier
       one not yet expired, says the same instance */
    for (worker_rec_t *o = zhashx_first (b->workers); o; o = zhashx_next (b->workers)) {
        if (o == w || !o->name || !w->name || strcmp (o->name, w->name) != 0)
            continue;
        bool other_machine = strcmp (o->cert_key, w->cert_key) != 0
                             || strcmp (o->host ? o->host : "", w->host ? w->host : "") != 0;
        bool other_process = o->instance && w->instance && o->instance != w->instance;
        if (!other_machine && !other_process)
            continue;
        qc_log (QC_LOG_WARNING, MOD, "worker %s joined from %s%s%s while another "
                "worker of that name runs (from %s%s%s%s): results, log records and "
                "qc-status name a worker by its name only, so theirs cannot be told "
                "apart; give each qc-worker its own --name", w->name,
                host_of (w), *w->cert_name ? ", certificate " : "",
                w->cert_name, host_of (o),
                *o->cert_name ? ", certificate " : "", o->cert_name,
                other_machine ? "" : ", another process; or this worker's earlier "
                "process, stopped without a word, until its heartbeats are missed");
        break;
    }
    /* another build may compute other numbers for the same slide: one
       cohort's rows should come from one build */
    if (w->version && strcmp (w->version, qc_version_full ()) != 0)
        qc_log (QC_LOG_WARNING, MOD, "worker %s runs qc %s, this broker qc %s: its "
                "results may differ from those of this build's workers; run one build "
                "across the cluster (qc-worker --version)", w->name, w->version,
                qc_version_full ());
    sched_dispatch (b->sched);
}

void
workers_on_started (qc_broker_t *b, worker_rec_t *w, qc_msg_t *m)
{
    job_rec_t *job = jobs_of_task_msg (b, m, w->name);
    if (job && sched_task_started (b->sched, w->sw, job->sj, m->idx, m->attempt)
                   == SCHED_BAD_ATTEMPT)
        qc_log (QC_LOG_WARNING, MOD, "STARTED from %s for job %" PRIu64 " slide %"
                PRIu64 " names attempt %u, never dispatched: ignored", w->name,
                m->job, m->idx, m->attempt);
}

/* A worker of another build than the broker's that cannot build a job's
 * pipeline from its config: qc-submit checked that config with its own
 * build before sending it, so the refusal is most likely the worker's
 * build (an older one, lacking a parameter the config uses; a lab
 * upgrading its clients before its workers), not the config, not the
 * slide. A worker of this build refuses only what every such worker
 * refuses: that failure stands. */
static bool
config_of_other_build (const worker_rec_t *w, const char *err)
{
    return w && w->version && err && strcmp (w->version, qc_version_full ()) != 0
           && strncmp (err, QC_RESULT_CONFIG_ERROR, strlen (QC_RESULT_CONFIG_ERROR)) == 0;
}

/* Whose a failure is: its worker's machine, build or --slides-url (the
 * slide runs elsewhere), or the slide's (WF_NONE). A worker that kept a
 * URL out of its own prefixes may sit beside one that fetches it: that
 * refusal stood for good, while the other worker could have run the
 * slide (a user's review). */
static worker_fault_t
fault_of (const worker_rec_t *w, const char *err)
{
    if (config_of_other_build (w, err))
        return WF_BUILD;
    if (err && strstr (err, QC_RESULT_URL_REFUSED))
        return WF_URL;
    return qc_result_machine_trouble (err) ? WF_MACHINE : WF_NONE;
}

/* The failure of a worker's build or --slides-url where it stands (no
 * other worker could run the slide, or it was sent out again enough):
 * says why, and that a rerun tries again (after the upgrade, or with a
 * worker that admits the URL). */
static void
mark_refusal (const worker_rec_t *w, worker_fault_t fault, qc_msg_t *m)
{
    char why[QC_RESULT_MAX_ERROR];
    if (fault == WF_BUILD)
        snprintf (why, sizeof why, "%.3000s (worker %s runs qc %.100s, this broker qc %s: "
                  "another build, which may lack what this config uses; run one build "
                  "across the cluster" QC_RESULT_RETRY_MARK, m->result->error, w->name,
                  w->version, qc_version_full ());
    else
        snprintf (why, sizeof why, "%.3000s (no worker that admits it could take it: widen "
                  "that --slides-url, or start a worker without it" QC_RESULT_RETRY_MARK,
                  m->result->error);
    char *text = strdup (why);
    if (!text)
        return;                 /* the reason stands as the worker gave it */
    qc_result_set_error (m->result, text);
}

/* A failure of the worker, not the slide (fault_of). The slide runs
 * again elsewhere while the worker pauses (sched_task_troubled), up to
 * SCHED_TROUBLE_RETRIES times; the same failure of an attempt already
 * superseded is dropped. True when the RESULT is dropped. */
static bool
retry_elsewhere (qc_broker_t *b, worker_rec_t *w, const peer_t *p, job_rec_t *job,
                 qc_msg_t *m)
{
    const char *err = m->result->ok ? NULL : m->result->error;
    worker_fault_t fault = fault_of (w, err);
    if (fault == WF_NONE)
        return false;
    bool paused = w && w->sw->paused_until > b->now;   /* its pause's reason stands */
    bool outlasted = w && w->sw->trouble_outlasted;
    /* a machine's trouble may pass (memory another program held); a
       build's or a --slides-url's refusal never does */
    sched_verdict_t v = sched_task_troubled (b->sched, w ? w->sw : NULL,
                                             p->cert ? p->cert->id : 0, job->sj, m->idx,
                                             m->attempt, fault == WF_MACHINE);
    if (w && !outlasted && w->sw->trouble_outlasted)
        qc_log (QC_LOG_WARNING, MOD, "worker %s: its machine has failed slides for %lld "
                "s (%.200s), and no other worker can take them: its failures of that "
                "kind stand from now on, each marked for a rerun, until a slide passes "
                "on it (--trouble-wait). Look at what holds that machine's memory, or "
                "add a worker", w->name,
                (long long) ((b->now - w->sw->trouble_since) / 1000), err);
    if (v == SCHED_STALE) {
        qc_log (QC_LOG_INFO, MOD, "job %" PRIu64 " slide %" PRIu64 ": a failure of %s's "
                "machine for attempt %u, one already superseded, dropped: %.200s", job->id,
                m->idx, w ? w->name : "an unregistered peer", m->attempt, err);
        b->dispatch_due = true;
        return true;
    }
    sched_task_t *t = sched_job_task (job->sj, m->idx);
    if (v != SCHED_REQUEUED) {
        if (fault != WF_MACHINE && v == SCHED_OK && w)
            mark_refusal (w, fault, m);
        else if (v == SCHED_OK && w && !job->sj->cancelled)
            /* said, as each sending back is: a failure that stood left
               no line in the log (an operator's review) */
            qc_log (QC_LOG_WARNING, MOD, "worker %s failed %s (job %" PRIu64 ") for its "
                    "machine, not the slide: %.300s; that failure stands (sent back %u "
                    "time%s before), marked for a rerun", w->name, QC_URL_SHOWN (t->path),
                    job->id, err, (unsigned) t->troubled, qc_plural (t->troubled));
        return false;
    }
    if (!paused)
        w->paused_for = (uint8_t) fault;
    char why[1024];
    if (fault == WF_BUILD)
        snprintf (why, sizeof why, "(qc %s, this broker qc %s) refused the config of job %"
                  PRIu64 ", which qc-submit checked: its build may lack what the config "
                  "uses (%.300s, for %s)", w->version, qc_version_full (), job->id, err,
                  QC_URL_SHOWN (t->path));
    else if (fault == WF_URL)
        snprintf (why, sizeof why, "refused %s (job %" PRIu64 "): its URL is outside this "
                  "worker's --slides-url, not the slide's fault", QC_URL_SHOWN (t->path),
                  job->id);
    else
        snprintf (why, sizeof why, "failed %s (job %" PRIu64 ") for its machine, not the "
                  "slide: %.300s", QC_URL_SHOWN (t->path), job->id, err);
    /* sent elsewhere: at most SCHED_TROUBLE_RETRIES times; waiting for
       the same machine: for a while (sched.h) */
    char count[160];
    if (t->trouble_waits)
        snprintf (count, sizeof count, "on %s once its pause ends (time %u; no other "
                  "worker can take it: it waits for this machine, %lld s at most)",
                  w->name, (unsigned) t->troubled,
                  (long long) (sched_trouble_wait (b->sched) / 1000));
    else
        snprintf (count, sizeof count, "(%u of %u)", (unsigned) t->troubled,
                  (unsigned) SCHED_TROUBLE_RETRIES);
    qc_log (QC_LOG_WARNING, MOD, "worker %s %s; the slide runs again %s, and %s takes no "
            "new slide for %lld s%s", w->name, why, count, w->name,
            (long long) ((w->sw->paused_until - b->now + 999) / 1000),
            fault == WF_BUILD ? "; upgrade it" : "");
    b->dispatch_due = true;
    return true;
}

void
workers_on_result (qc_broker_t *b, worker_rec_t *w, const peer_t *p, qc_msg_t *m)
{
    job_rec_t *job = jobs_of_task_msg (b, m, w ? w->name : "an unregistered peer");
    if (!job)
        return;    /* a job already delivered and forgotten, or not this one */
    if (retry_elsewhere (b, w, p, job, m))
        return;
    sched_verdict_t v = sched_task_finished_as (b->sched, w ? w->sw : NULL,
                                                p->cert ? p->cert->id : 0, job->sj,
                                                m->idx, m->attempt, m->result->ok);
    if (v == SCHED_NOT_YOURS)
        refuse (b, p, "RESULT for job %" PRIu64 " slide %" PRIu64 " attempt %u%s: that "
                "attempt was not dispatched to this certificate", job->id, m->idx,
                m->attempt, w ? "" : " from a peer not registered as a worker");
    if (v == SCHED_EARLIER_LIFE)
        /* no refusal: most likely its own worker, still running it when
           the broker restarted, whose J_DISPATCH record was lost or whose
           certificate is no longer admitted */
        say_earlier_life (b, "RESULT from %s for job %" PRIu64 " slide %" PRIu64
                          " attempt %u, dispatched before this broker started: with "
                          "certificates, a result counts only from the certificate its "
                          "attempt went to, and the journal names no admitted one for it; "
                          "not taken, the slide runs again", w ? w->name :
                          "an unregistered peer", job->id, m->idx, m->attempt);
    if (v == SCHED_OK) {
        /* the name the broker knows the sender by, as for LOG; an
           unregistered sender's own word (a worker back on a new socket
           sends before READY), but never "broker": that marks the
           failures the broker itself made */
        if (w || !m->worker || strcmp (m->worker, "broker") == 0)
            qc_msg_set_str (&m->worker, w ? w->name : "?");
        /* the build that ran it, as its READY said: a client running the
           built-in config tells rows of another build's apart (each
           build runs its own built-in config), old workers too */
        qc_msg_set_str (&m->version, w ? w->version : NULL);
        outbox_deliver (b, job, m);
    } else if (v == SCHED_BAD_ATTEMPT)
        qc_log (QC_LOG_WARNING, MOD, "RESULT from %s for job %" PRIu64 " slide %" PRIu64
                " names attempt %u, never dispatched: dropped",
                w ? w->name : "an unregistered peer", m->job, m->idx, m->attempt);
    /* the freed credit is used once the batch is read (flush_due) */
    b->dispatch_due = true;
}

void
workers_on_disconnect (qc_broker_t *b, worker_rec_t *w, qc_msg_t *m)
{
    if (m->drain) {
        qc_log (QC_LOG_INFO, MOD, "worker %s is draining: %zu task%s handed back",
                w->name, m->nrefs, qc_plural (m->nrefs));
        sched_worker_drain (b->sched, w->sw);
        for (size_t i = 0; i < m->nrefs; i++) {
            job_rec_t *job = jobs_of_ref (b, &m->refs[i]);
            if (job)
                sched_worker_return (b->sched, w->sw, job->sj, m->refs[i].idx,
                                     m->refs[i].attempt);
        }
    } else
        worker_gone (b, w, false);
    sched_dispatch (b->sched);
}

/* The scheduler assigned a task: send TASK to its worker. */
void
workers_send_task (void *arg, sched_task_t *t, sched_worker_t *sw)
{
    qc_broker_t *b = arg;
    job_rec_t *job = t->job->owner;
    worker_rec_t *w = sw->owner;
    qc_msg_t m = {.command = QC_TASK, .job = job->id, .key = job->key, .idx = t->idx,
                  .attempt = t->attempt, .path = t->path, .config = job->config,
                  .gpu = t->gpu >= 0 ? (int32_t) sw->gpu_index[t->gpu] : -1};
    if (qc_msg_send (&m, zsock_resolve (b->router), w->id)) {
        if (errno == EHOSTUNREACH)
            worker_unreachable (b, w);  /* the task goes back with it */
        else
            qc_log (QC_LOG_ERROR, MOD, "cannot send task %s to %s", QC_URL_SHOWN (t->path),
                    w->name);
    }
    /* with certificates, whose attempt it is must outlive a restart, or
       its RESULT then is no one's and the slide runs again */
    if (w->cert_key[0])
        state_log_dispatch (b, job, t->idx, t->attempt, w->cert_key);
}

/* The scheduler took an attempt back: tell its worker (it drops the task
 * if it has not started it), and keep the blame a deadline gave. */
void
workers_send_revoke (void *arg, sched_task_t *t, uint32_t attempt, sched_worker_t *sw,
             const char *reason)
{
    qc_broker_t *b = arg;
    job_rec_t *job = t->job->owner;
    worker_rec_t *w = sw->owner;
    qc_msg_t m = {.command = QC_REVOKE, .gpu = -1, .job = job->id, .key = job->key,
                  .idx = t->idx, .attempt = attempt, .reason = (char *) reason};
    qc_msg_send (&m, zsock_resolve (b->router), w->id);
    if (strstr (reason, "timeout")) {
        qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": %s %s on worker %s: taken back",
                job->id, QC_URL_SHOWN (t->path), reason, w->name);
        if (t->state == TASK_RUNNING)
            state_log_blame (b, job, t->idx, t->blame + 1);
    }
}

void
workers_late_word (qc_broker_t *b, const peer_t *p, const qc_msg_t *m)
{
    for (size_t i = 0; i < sizeof b->late / sizeof b->late[0]; i++) {
        if (!b->late[i].died_at || strcmp (b->late[i].key, p->hex) != 0)
            continue;
        int64_t ago = b->now - b->late[i].died_at;
        if (ago <= 600000)
            qc_log (QC_LOG_WARNING, MOD, "worker %s, declared dead %.1f s ago after %.1f s "
                    "without a message, still sends (%s): it was not dead, its messages "
                    "were held up on the way (a link too slow for the RESULTs it sends, "
                    "each a slide's images, or cut for a while) or its machine paused; its "
                    "tasks went to others and may run twice. If this recurs on a slow "
                    "link, raise qc-broker --liveness (now %u) or qc-worker --heartbeat-ms",
                    b->late[i].name, (double) ago / 1000.0,
                    (double) b->late[i].silence_ms / 1000.0, qc_command_name (m->command),
                    b->cfg.liveness);
        b->late[i].died_at = 0;       /* said once */
        return;
    }
}
