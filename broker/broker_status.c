/* The STATUS reply: workers, queue depth, jobs and the broker's own
 * trouble, for qc-status. With CurveZMQ on, a client sees its own jobs
 * only, an admin every job. */
#include "broker/broker_int.h"

#include "shared/cli.h"

/* A worker's state as qc-status --tsv gives it (one word each, for
 * scripts: a dashboard had only the notes' text, which carries the
 * worker's name in its words). The first that holds, in this order:
 * the scheduler's states (broker/sched.h) that keep it from new slides,
 * then whether it runs any. */
typedef enum {
    WS_DRAINING, WS_ALONE, WS_CLEARING, WS_PAUSED_VERSION, WS_PAUSED_URL, WS_PAUSED,
    WS_STALLED, WS_FAILING, WS_GPUS_FIRST, WS_BUSY, WS_IDLE, WS_COUNT
} worker_state_t;

static const char *const s_state_words[WS_COUNT] = {
    [WS_DRAINING] = "draining", [WS_ALONE] = "alone", [WS_CLEARING] = "clearing",
    [WS_PAUSED_VERSION] = "paused-version", [WS_PAUSED_URL] = "paused-url",
    [WS_PAUSED] = "paused", [WS_STALLED] = "stalled", [WS_FAILING] = "failing", [WS_GPUS_FIRST] = "gpus-first",
    [WS_BUSY] = "busy", [WS_IDLE] = "idle",
};

/* A job's state for qc-status (STATUS_REPLY job_states), the first
 * that holds: an admin could not tell a job whose results had all been
 * taken (gone after --linger) from one whose results wait for its client
 * (kept for --retention) (a soak's review). */
typedef enum {
    JS_HELD, JS_RUNNING, JS_SENDING, JS_WAITING, JS_DELIVERED, JS_COUNT
} job_state_t;

static const char *const s_job_state_words[JS_COUNT] = {
    [JS_HELD] = "held", [JS_RUNNING] = "running", [JS_SENDING] = "sending",
    [JS_WAITING] = "waiting", [JS_DELIVERED] = "delivered",
};

/* What keeps the broker itself from its work, for a readiness probe:
 * qc-status showed workers and jobs only, and stayed green on a broker
 * whose state folder could no longer be written (an overnight probe).
 * Each line starts with its word (STATUS_REPLY trouble, qc-status
 * --tsv); in this order. */
typedef enum {
    BT_STATE_GONE, BT_STATE_UNWRITABLE, BT_RESULTS_HELD, BT_STATE_SPACE_LOW, BT_COUNT
} broker_trouble_t;

static const char *const s_trouble_words[BT_COUNT] = {
    [BT_STATE_GONE] = "state-gone", [BT_STATE_UNWRITABLE] = "state-unwritable",
    [BT_RESULTS_HELD] = "results-held", [BT_STATE_SPACE_LOW] = "state-space-low",
};

/* The line for trouble t, or NULL when it does not hold (or no memory).
 * A folder deleted or a failed write the broker found itself (a file
 * system remounted read-only fails the next write: EROFS); the room
 * left asked of the kernel here (free_mb < 0: not known), as an idle
 * broker writes nothing that would fail. */
static char *
trouble_line (const qc_broker_t *b, broker_trouble_t t, int64_t free_mb)
{
    const state_t *s = &b->state;
    const char *w = s_trouble_words[t];
    char *line = NULL;
    int n = -1;
    switch (t) {
    case BT_STATE_GONE:
        if (s->dir_gone)
            n = asprintf (&line, "%s: the state folder %s was deleted while the broker ran "
                          "(%lld s ago): new jobs are refused and nothing it writes survives "
                          "a restart; restart the broker", w, s->dir,
                          (long long) ((b->now - s->gone_since) / 1000));
        break;
    case BT_STATE_UNWRITABLE:
        if (s->disk_full && !s->dir_gone)
            n = asprintf (&line, "%s: %s, for %lld s: new jobs are refused, accepted jobs go "
                          "on from memory (a restart now runs their slides again); free "
                          "space there or make it writable", w, s->disk_error,
                          (long long) ((b->now - s->full_since) / 1000));
        break;
    case BT_RESULTS_HELD:
        if (s->holding)
            n = asprintf (&line, "%s: %zu MB of results wait in memory for the state "
                          "folder: no new task is dispatched until they are written", w,
                          s->held_bytes >> 20);
        break;
    case BT_STATE_SPACE_LOW:
        if (!s->disk_full && !s->dir_gone && free_mb >= 0 && free_mb < STATE_SPACE_LOW_MB)
            n = asprintf (&line, "%s: %lld MB free for the state folder %s: once full, new "
                          "jobs are refused (free space there)", w, (long long) free_mb,
                          s->dir);
        break;
    default:
        break;
    }
    if (n < 0)
        return NULL;
    if (strlen (line) > QC_PROTO_MAX_PATH)
        line[QC_PROTO_MAX_PATH] = '\0';
    return line;
}

/* Fills m->trouble; none with --state none (nothing to write). */
static void
trouble_lines (const qc_broker_t *b, qc_msg_t *m)
{
    if (!state_on (b))
        return;
    uint64_t mb = 0;
    int64_t free_mb = state_free_mb (b, &mb) == 0 ? (int64_t) mb : -1;
    m->trouble = calloc (BT_COUNT, sizeof *m->trouble);
    for (int t = 0; m->trouble && t < BT_COUNT; t++) {
        char *line = trouble_line (b, (broker_trouble_t) t, free_mb);
        if (line)
            m->trouble[m->ntrouble++] = line;
    }
}

static job_state_t
job_state (const job_rec_t *j)
{
    if (j->sj->held)
        return JS_HELD;         /* its client left before sending all slides */
    if (!j->finished_at)
        return JS_RUNNING;
    if (j->acked_seq < j->last_seq)
        return j->attached ? JS_SENDING : JS_WAITING;
    return JS_DELIVERED;
}

static worker_state_t
worker_state (const qc_broker_t *b, const worker_rec_t *w)
{
    const sched_worker_t *sw = w->sw;
    if (sw->draining)
        return WS_DRAINING;
    if (sw->alone || sw->alone_ghosts)
        return WS_ALONE;
    if (sw->clearing)
        return WS_CLEARING;
    if (sw->paused_until > b->now)
        return w->paused_for == WF_BUILD ? WS_PAUSED_VERSION
               : w->paused_for == WF_URL ? WS_PAUSED_URL : WS_PAUSED;
    if (sw->stalled)
        return WS_STALLED;
    if (sw->trouble_outlasted)
        return WS_FAILING;
    if (sw->slots && sw->cpu_inflight < sw->slots && sched_queued_any (b->sched)
        && sched_cpu_slot_waits (b->sched, sw))
        return WS_GPUS_FIRST;
    return sw->cpu_inflight || sw->gpu_inflight ? WS_BUSY : WS_IDLE;
}

/* Why w takes no new task for now, in words, or NULL: its state when
 * that is not a row's columns. */
static char *
worker_note (const qc_broker_t *b, const worker_rec_t *w, worker_state_t state)
{
    const sched_worker_t *sw = w->sw;
    char *note = NULL;
    int n = -1;
    unsigned running = sw->cpu_inflight + sw->gpu_inflight;
    switch (state) {
    case WS_DRAINING:
        /* "draining" alone read as trouble (a user's review): it leaves,
           asked to (a SIGTERM, its unit stopped), as soon as its slides end */
        n = asprintf (&note, "%s: leaving (asked to stop): takes no new slide, and goes "
                      "once its %u running slide%s %s", w->name, running,
                      running == 1 ? "" : "s", running == 1 ? "ends" : "end");
        break;
    case WS_ALONE:
        n = asprintf (&note, "%s: runs a slide alone (a crash beside others named no "
                      "culprit) and takes no other until it ends", w->name);
        break;
    case WS_CLEARING:
        n = asprintf (&note, "%s: takes no new slide until it is empty: a slide that must "
                      "run alone (a crash beside others named no culprit) waits for it",
                      w->name);
        break;
    case WS_PAUSED_VERSION:
        n = asprintf (&note, "%s: takes no new slide for %lld s more: it runs qc %s, "
                      "this broker qc %s, and refused a config qc-submit had checked; the "
                      "slides run elsewhere (upgrade it)", w->name,
                      (long long) ((sw->paused_until - b->now + 999) / 1000),
                      w->version ? w->version : "?", qc_version_full ());
        break;
    case WS_PAUSED_URL:
        n = asprintf (&note, "%s: takes no new slide for %lld s more: it refused slides by "
                      "URL outside its --slides-url, which run on other workers", w->name,
                      (long long) ((sw->paused_until - b->now + 999) / 1000));
        break;
    case WS_PAUSED:
        n = asprintf (&note, "%s: takes no new slide for %lld s more: its machine failed "
                      "slides (memory or file descriptors short, or its cache disk full), "
                      "which run again elsewhere or after the pause",
                      w->name, (long long) ((sw->paused_until - b->now + 999) / 1000));
        break;
    case WS_STALLED:
        n = asprintf (&note, "%s: takes no new slide: one it held did not start within the "
                      "task timeout", w->name);
        break;
    case WS_FAILING:
        /* it takes slides, and fails them at once: said, or its row
           reads as a worker at work */
        n = asprintf (&note, "%s: its machine has failed slides (memory or file "
                      "descriptors short, or its cache disk full) for %lld s with no other "
                      "worker to take them: such failures stand at once, marked for a rerun, "
                      "until a slide passes on it", w->name,
                      (long long) ((b->now - sw->trouble_since) / 1000));
        break;
    case WS_GPUS_FIRST:
        n = asprintf (&note, "%s: its free CPU slots leave the %zu queued slides to the "
                      "GPUs, which finish them sooner (a slide took %.1f s on a slot here)",
                      w->name, sched_queued_any (b->sched), (double) sw->ms_cpu / 1e3);
        break;
    default:            /* busy, idle: its columns say */
        break;
    }
    /* a worker of another build, in a rolling upgrade: which ones are
       still old was in the broker's log alone (an admin's review) */
    if (n < 0 && w->version && strcmp (w->version, qc_version_full ()) != 0)
        n = asprintf (&note, "%s: runs qc %s, this broker qc %s: another build, whose "
                      "results may differ from this build's workers' (upgrade it)", w->name,
                      w->version, qc_version_full ());
    return n < 0 ? NULL : note;
}

/* Whose a job is, for qc-status's OWNER column (an admin sees every
 * job, and could not tell whose was whose: a hospital admin's probe):
 * its certificate's name with the user its client named, the user
 * alone without CurveZMQ. A certificate since taken out of the keyring
 * is named by the start of its key. malloc'd; NULL out of memory. */
static char *
job_owner (qc_broker_t *b, const job_rec_t *j)
{
    const keyring_entry_t *cert = j->owner[0] && b->security
                                  ? security_lookup (b->security, j->owner) : NULL;
    char who[KEYRING_NAME_MAX + 40] = "";
    if (cert)
        snprintf (who, sizeof who, "%s", cert->name);
    else if (j->owner[0])
        snprintf (who, sizeof who, "certificate %.8s... (no longer admitted)", j->owner);
    char *s = NULL;
    const char *user = j->name && *j->name ? j->name : NULL;
    int n = *who && user ? asprintf (&s, "%s (%s)", who, user)
            : asprintf (&s, "%s", *who ? who : user ? user : "");
    if (n < 0)
        return NULL;
    if (strlen (s) > QC_PROTO_MAX_PATH)
        s[QC_PROTO_MAX_PATH] = '\0';
    return s;
}

void
status_reply (qc_broker_t *b, const peer_t *p)
{
    /* the broker's build: a client tells a broker that says no trouble
       from one too old to say any */
    qc_msg_t m = {.command = QC_STATUS_REPLY, .gpu = -1,
                  .queue = sched_queue_depth (b->sched), .version = (char *) qc_version_full ()};
    size_t nw = zhashx_size (b->workers), nj = zhashx_size (b->jobs);
    if (nw > QC_PROTO_MAX_WORKERS) nw = QC_PROTO_MAX_WORKERS;
    if (nj > QC_PROTO_MAX_JOBS) nj = QC_PROTO_MAX_JOBS;
    m.workers = nw ? calloc (nw, sizeof *m.workers) : NULL;
    m.jobs = nj ? calloc (nj, sizeof *m.jobs) : NULL;
    m.job_states = nj ? calloc (nj, sizeof *m.job_states) : NULL;
    m.job_owners = nj ? calloc (nj, sizeof *m.job_owners) : NULL;
    m.notes = nw ? calloc (nw, sizeof *m.notes) : NULL;
    m.speeds = nw ? calloc (nw, sizeof *m.speeds) : NULL;
    m.states = nw ? calloc (nw, sizeof *m.states) : NULL;
    if ((nw && (!m.workers || !m.notes || !m.speeds || !m.states))
        || (nj && (!m.jobs || !m.job_states || !m.job_owners)))
        goto out;
    for (worker_rec_t *w = zhashx_first (b->workers); w && m.nworkers < nw;
         w = zhashx_next (b->workers)) {
        qc_worker_row_t *r = &m.workers[m.nworkers++];
        r->name = w->name;
        r->host = w->host;
        r->slots = w->slots;
        r->gpus = (uint32_t) w->ngpus;
        r->busy = w->sw->cpu_inflight;
        r->gpu_busy = w->sw->gpu_inflight;
        r->heartbeat_age = (double) (b->now - w->last_seen) / 1000.0;
        r->draining = w->sw->draining;
        /* what the scheduler goes by (sched.h, Speed) */
        qc_worker_speed_t *sp = &m.speeds[m.nspeeds++];
        sp->ms_cpu = (uint32_t) (w->sw->ms_cpu > UINT32_MAX ? UINT32_MAX : w->sw->ms_cpu);
        sp->ms_gpu = (uint32_t) (w->sw->ms_gpu > UINT32_MAX ? UINT32_MAX : w->sw->ms_gpu);
        worker_state_t state = worker_state (b, w);
        m.states[m.nstates++] = (char *) s_state_words[state];
        char *note = worker_note (b, w, state);
        if (note && strlen (note) > QC_PROTO_MAX_PATH)
            note[QC_PROTO_MAX_PATH] = '\0';
        if (note)
            m.notes[m.nnotes++] = note;
    }
    /* jobs still running first: past QC_PROTO_MAX_JOBS rows the list is
     * cut, and finished ones waiting for --linger or --retention must not
     * hide them */
    for (int pass = 0; pass < 2; pass++) {
        for (job_rec_t *j = zhashx_first (b->jobs); j && m.njobs < nj;
             j = zhashx_next (b->jobs)) {
            bool finished = j->finished_at != 0;
            if (!jobs_allows (j, p, USE_SEE) || finished != (pass == 1))
                continue;
            char *owner = job_owner (b, j);
            if (!owner)
                goto out;
            m.job_owners[m.njob_owners++] = owner;
            m.job_states[m.njob_states++] = (char *) s_job_state_words[job_state (j)];
            qc_job_row_t *r = &m.jobs[m.njobs++];
            r->job = j->id;
            r->total = j->sj->total;
            r->done = j->sj->done;
            r->failed = j->sj->failed;
            r->queued = sched_job_queued (j->sj);
            r->running = j->sj->running + j->sj->dispatched;
            r->attached = j->attached;
            r->cancelled = j->sj->cancelled;
        }
    }
    state_write_watch (b, true);   /* a remount since the last 10 s' look */
    trouble_lines (b, &m);
    qc_msg_send (&m, zsock_resolve (b->router), p->id);
out:
    /* the rows borrow their strings from the registry, the states from
       s_state_words and s_job_state_words; the notes are their own */
    free (m.workers);
    free (m.speeds);
    free (m.states);          /* words of s_state_words */
    free (m.jobs);
    free (m.job_states);      /* words of s_job_state_words */
    for (size_t i = 0; i < m.njob_owners; i++)
        free (m.job_owners[i]);
    free (m.job_owners);
    for (size_t i = 0; i < m.nnotes; i++)
        free (m.notes[i]);
    free (m.notes);
    for (size_t i = 0; i < m.ntrouble; i++)
        free (m.trouble[i]);
    free (m.trouble);
}
