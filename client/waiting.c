/* See waiting.h. */
#include "client/waiting.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/escape.h"
#include "client/shell_word.h"
#include "shared/err.h"

#define AGAIN_MS 60000     /* asked again after this, doubling while busy */

void
qc_waiting_init (qc_waiting_t *w, uint32_t wait_s, uint8_t resource,
                 const char *endpoint, int64_t now)
{
    *w = (qc_waiting_t) {.wait_s = wait_s, .resource = resource,
                         .endpoint = endpoint, .since = now, .again = AGAIN_MS};
    w->next = now + (int64_t) wait_s * 1000;
}

void
qc_waiting_progress (qc_waiting_t *w, int64_t now)
{
    w->since = now;
    w->next = now + (int64_t) w->wait_s * 1000;
    w->again = AGAIN_MS;
    /* a STATUS still out tells of the wait before this: its answer is
       dropped (one asked while the broker was down and answered when it
       came back, before its workers had joined again, said "waiting -21
       s: no worker is connected") */
    w->asked = 0;
}

void
qc_waiting_worked (qc_waiting_t *w)
{
    if (w && !w->workers_seen)
        w->workers_seen = 1;
}

bool
qc_waiting_due (qc_waiting_t *w, int64_t now)
{
    if (!w->wait_s || now < w->next)
        return false;
    w->asked = now;
    w->next = now + w->again;
    return true;
}

/* "qc-worker --connect EP" and, to a broker with CurveZMQ, the keys a
 * worker needs to be let in (the command alone would be refused). */
static void
worker_command (const qc_waiting_t *w, const char *more, char *buf, size_t len)
{
    char ep[512] = "", key[1024] = "";
    qc_shell_word_add (ep, sizeof ep, w->endpoint ? w->endpoint : "?");
    if (w->server_key)
        qc_shell_word_add (key, sizeof key, w->server_key);
    snprintf (buf, len, "qc-worker --connect %s%s%s%s", ep, more,
              w->server_key ? " --cert WORKER.cert_secret --server-key " : "", key);
    if (w->server_key) {
        size_t at = strlen (buf);
        snprintf (buf + at, len - at, " (the worker's own key pair: qc-keygen --role worker, "
                  "its public half in the broker's --allow folder)");
    }
}

bool
qc_waiting_on_status (qc_waiting_t *w, const qc_msg_t *m, uint64_t job, qc_progress_t *p)
{
    if (!w->asked || !m)
        return false;
    long secs = (long) ((w->asked - w->since) / 1000);
    w->asked = 0;
    size_t with_gpu = 0, with_slots = 0;
    for (size_t i = 0; i < m->nworkers; i++) {
        if (m->workers[i].draining)
            continue;
        with_gpu += m->workers[i].gpus > 0;
        with_slots += m->workers[i].slots > 0;
    }
    size_t n = m->nworkers;
    if (n > w->workers_seen)
        w->workers_seen = n;
    char line[2048], start[1536];
    if (w->resource == QC_RES_GPU && !with_gpu) {
        worker_command (w, " --gpu 0", start, sizeof start);
        snprintf (line, sizeof line, "waiting %ld s: this job runs only on GPUs "
                  "(--gpu-only) and %s of the %zu worker%s connected to %s has "
                  "one; start %s on a GPU machine (still waiting)", secs,
                  n == 1 ? "not one" : "none", n, qc_plural (n), w->endpoint, start);
    } else if (w->resource == QC_RES_CPU && !with_slots) {
        worker_command (w, "", start, sizeof start);
        snprintf (line, sizeof line, "waiting %ld s: this job runs only on CPU slots "
                  "(--cpu-only) and %s of the %zu worker%s connected to %s has one; "
                  "start %s (still waiting)", secs, n == 1 ? "not one" : "none", n,
                  qc_plural (n), w->endpoint, start);
    } else if (!with_gpu && !with_slots && w->local) {
        /* the one-process mode's own worker process: starting, or
           started again after a crash (its lines above say why); not one
           to start by hand on a private socket (a tester's review) */
        snprintf (line, sizeof line, "waiting %ld s: qc-submit's worker process is not "
                  "connected now (%s) (still waiting)", secs, w->workers_seen
                  ? "it is started again by itself after a crash, within a minute: the "
                    "lines above say why it stopped"
                  : "it is starting");
    } else if (!with_gpu && !with_slots && w->workers_seen) {
        /* workers were there: most likely one whose process died and
         * whose supervisor starts it again after a back-off (up to a
         * minute); "start one" sent an operator to add a second worker
         * to a machine short of memory (an operator's review) */
        worker_command (w, "", start, sizeof start);
        snprintf (line, sizeof line, "waiting %ld s: no worker is connected to %s now "
                  "(%zu %s before: a worker whose process died starts it again by "
                  "itself within a minute, and its log says why it stopped); if none "
                  "comes back, start one with %s (still waiting)", secs, w->endpoint,
                  w->workers_seen, w->workers_seen == 1 ? "was" : "were", start);
    } else if (!with_gpu && !with_slots) {
        worker_command (w, "", start, sizeof start);
        snprintf (line, sizeof line, "waiting %ld s: no worker is connected to %s; "
                  "start one with %s (still waiting)", secs, w->endpoint, start);
    }
    else {
        /* workers that can take the job are there: say how it stands,
         * less often each time while nothing comes back */
        const qc_job_row_t *row = NULL;
        for (size_t i = 0; i < m->njobs; i++)
            if (m->jobs[i].job == job)
                row = &m->jobs[i];
        /* workers that take no new slide for now (the broker's notes:
           paused, set aside, stalled) would read as idle */
        char held[640] = "";
        char *note = m->nnotes == 1 && m->notes && m->notes[0]
                         ? qc_escape_dup (m->notes[0]) : NULL;
        if (note)               /* its reason said: a pause for memory */
            snprintf (held, sizeof held, "; worker %.500s", note);
        else if (m->nnotes)
            snprintf (held, sizeof held, "; %zu of the workers take no new slide for "
                      "now (qc-status says why)", m->nnotes);
        free (note);
        if (row)
            snprintf (line, sizeof line, "waiting %ld s: job %" PRIu64 " has %" PRIu64
                      " slide%s queued and %" PRIu64 " running on %zu worker%s (%zu with a "
                      "GPU)%s", secs, job, row->queued, qc_plural (row->queued), row->running,
                      n, qc_plural (n), with_gpu, held);
        else
            snprintf (line, sizeof line, "waiting %ld s: %zu worker%s connected to %s",
                      secs, n, qc_plural (n), w->endpoint);
        /* how it stands is progress (-q: none); a missing worker, below,
           is a warning, said whatever */
        if (!p->quiet)
            qc_progress_print (p, line);
        w->next += w->again;
        w->again *= 2;
        return false;
    }
    w->said++;
    qc_progress_print (p, line);
    return true;
}
