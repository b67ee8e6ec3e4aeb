/* The result window is the client's, over all its jobs (PROTOCOL.md
 * section 11: "sent and unacknowledged per client"): a broker with a
 * window of 4 results sends one socket with three finished jobs of 6
 * slides 4 results until it acknowledges some, not 4 a job (12, as
 * before: one slow client with many jobs held a window per job of the
 * broker's memory). Once it acknowledges, every job gets all its
 * results and DONE: the room freed goes round the client's jobs, so
 * none waits for ever while another takes it (here the first job holds
 * the whole window, and the others' results were made meanwhile: an ACK
 * that made room for the acknowledged job alone left them waiting). */
#include <czmq.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "shared/proto.h"
#include "shared/result.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"

#define JOBS 3
#define SLIDES 6
#define WINDOW 4

typedef struct {
    int results[JOBS + 1], done[JOBS + 1];     /* by job id, from 1 */
    int accepted, total;
    int64_t next_beat;
} seen_t;

/* Reads what s gets for wait_ms (or until every job is DONE), beating
 * as a live client does; acknowledges each RESULT when ack. */
static void
drain (zsock_t *s, seen_t *seen, bool ack, int wait_ms)
{
    zsock_set_rcvtimeo (s, 50);
    int64_t until = zclock_mono () + wait_ms;
    while (zclock_mono () < until) {
        if (zclock_mono () >= seen->next_beat) {
            qc_msg_t hb = {.command = QC_HEARTBEAT, .gpu = -1};
            qc_msg_send (&hb, zsock_resolve (s), NULL);
            seen->next_beat = zclock_mono () + 300;
        }
        zmsg_t *raw = zmsg_recv (s);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (!m)
            continue;
        bool ours = m->job >= 1 && m->job <= JOBS;
        if (m->command == QC_ACCEPTED)
            seen->accepted++;
        if (m->command == QC_RESULT && ours) {
            seen->results[m->job]++;
            seen->total++;
            qc_msg_t a = {.command = QC_ACK, .gpu = -1, .job = m->job, .key = m->key,
                          .seq = m->seq};
            if (ack)
                qc_msg_send (&a, zsock_resolve (s), NULL);
        }
        if (m->command == QC_DONE && ours)
            seen->done[m->job]++;
        qc_msg_destroy (&m);
        int done = 0;
        for (int j = 1; j <= JOBS; j++)
            done += seen->done[j] > 0;
        if (done == JOBS)
            break;
    }
}

int
main (void)
{
    zsys_handler_set (NULL);
    qc_broker_config_t bc;
    fx_broker_config (&bc, NULL);
    bc.result_window = WINDOW;
    char err[512], ep[128];
    qc_broker_t *b = fx_broker_new_with (&bc, ep, err, sizeof err);
    CHECK (b != NULL, "a broker: %s", err);
    if (!b)
        return check_done ("test_client_window");
    zactor_t *actor = zactor_new (qc_broker_actor, b);
    zsock_t *c = zsock_new_dealer (ep);
    char *slides[SLIDES];
    char names[SLIDES][16];
    for (int i = 0; i < SLIDES; i++) {
        snprintf (names[i], sizeof names[i], "/s%d.svs", i);
        slides[i] = names[i];
    }
    seen_t seen = {0};
    qc_worker_t *w = fx_noop_worker (ep, "steady", 200);
    CHECK (w != NULL);
    zclock_sleep (300);         /* registered */
    /* job 1 runs first and fills the window; jobs 2 and 3 then run, and
       their results wait behind it (every slide a no-op; nothing is
       acknowledged) */
    for (int j = 1; j <= JOBS; j++) {
        qc_msg_t sub = {.command = QC_SUBMIT, .gpu = -1, .key = 0x77000 + (uint64_t) j,
                        .slides = slides, .nslides = SLIDES, .final = true, .hb_ms = 1000};
        CHECK (qc_msg_send (&sub, zsock_resolve (c), NULL) == 0);
        drain (c, &seen, false, j == 1 ? 1500 : 200);   /* job ids 1, 2, 3 */
    }
    CHECK (seen.accepted == JOBS, "each SUBMIT accepted (%d)", seen.accepted);
    drain (c, &seen, false, 1500);
    CHECK (seen.total == WINDOW && seen.results[1] == WINDOW, "unacknowledged, the "
           "client's three jobs were sent %d results together (%d + %d + %d), the window "
           "of one client (%d)", seen.total, seen.results[1], seen.results[2],
           seen.results[3], WINDOW);
    /* acknowledged from now on (those already here too: ACK seq covers
       what came before), every job finishes */
    for (int j = 1; j <= JOBS; j++) {
        qc_msg_t a = {.command = QC_ACK, .gpu = -1, .job = (uint64_t) j,
                      .key = 0x77000 + (uint64_t) j, .seq = (uint64_t) seen.results[j]};
        if (seen.results[j])
            qc_msg_send (&a, zsock_resolve (c), NULL);
    }
    drain (c, &seen, true, 5000);
    for (int j = 1; j <= JOBS; j++)
        CHECK (seen.results[j] == SLIDES && seen.done[j] == 1, "job %d: all its results "
               "(%d of %d) and DONE (%d) once acknowledged", j, seen.results[j], SLIDES,
               seen.done[j]);
    qc_worker_destroy (&w);
    zsock_destroy (&c);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
    return check_done ("test_client_window");
}
