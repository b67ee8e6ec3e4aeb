/* A client's first SUBMIT sent again after the job ran, from a new
 * socket (PROTOCOL.md section 8.1, rule 1: its sender becomes the job's
 * client, as after ATTACH), with a state folder and without one:
 *  - the first sender left without reading anything, and the job
 *    finished while the broker still held it as that socket's: the
 *    repeat gets ACCEPTED, both results and DONE. Before, it got
 *    ACCEPTED and then only HEARTBEATs: the job was marked attached, so
 *    nothing resumed it.
 *  - a second repeat, after result 1 alone was acknowledged, gets result
 *    2 (no gap, no result 1 again) and DONE;
 *  - with a state folder, the same after a broker restart. */
#include <czmq.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "shared/proto.h"
#include "shared/result.h"
#include "tests/unit/check.h"
#include "tests/unit/broker_fixtures.h"

#define KEY 0x4242ULL

typedef struct {
    uint64_t job;             /* from its ACCEPTED; 0: none */
    uint64_t first_seq;       /* of the first RESULT; 0: none came */
    int results, done;
} seen_t;

static char *s_slides[] = {"/a.svs", "/b.svs"};

/* The job's first SUBMIT (always the same) from a new socket. */
static zsock_t *
submit_first (const char *ep)
{
    zsock_t *s = zsock_new_dealer (ep);
    qc_msg_t sub = {.command = QC_SUBMIT, .gpu = -1, .key = KEY, .slides = s_slides,
                    .nslides = 2, .final = true, .hb_ms = 1000};
    CHECK (s && qc_msg_send (&sub, zsock_resolve (s), NULL) == 0);
    return s;
}

/* Reads what s gets until DONE or wait_ms, acknowledging RESULTs up to
 * ack_upto (none past it). */
static void
drain (zsock_t *s, seen_t *seen, uint64_t ack_upto, int wait_ms)
{
    zsock_set_rcvtimeo (s, 50);
    for (int64_t until = zclock_mono () + wait_ms; zclock_mono () < until && !seen->done;) {
        zmsg_t *raw = zmsg_recv (s);
        qc_msg_t *m = raw ? qc_msg_decode (raw, NULL, 0) : NULL;
        zmsg_destroy (&raw);
        if (m && m->command == QC_ACCEPTED && !seen->job)
            seen->job = m->job;
        if (m && m->command == QC_RESULT) {
            if (!seen->results++)
                seen->first_seq = m->seq;
            if (m->seq <= ack_upto) {
                qc_msg_t ack = {.command = QC_ACK, .gpu = -1, .job = m->job, .key = m->key,
                                .seq = m->seq};
                qc_msg_send (&ack, zsock_resolve (s), NULL);
            }
        }
        if (m && m->command == QC_DONE)
            seen->done++;
        qc_msg_destroy (&m);
    }
}

/* A repeat from a new socket: resumed from result from_seq, and DONE;
 * ack_upto as drain's. */
static void
repeat (const char *ep, const char *what, int from_seq, uint64_t ack_upto)
{
    zsock_t *s = submit_first (ep);
    seen_t seen = {0};
    drain (s, &seen, ack_upto, 3000);
    CHECK (seen.job == 1 && seen.done == 1 && seen.results == 3 - from_seq
           && seen.first_seq == (uint64_t) from_seq,
           "%s: the repeat got job 1's ACCEPTED (job %llu), results from %d (%d, the first "
           "seq %llu) and DONE (%d)", what, (unsigned long long) seen.job, from_seq,
           seen.results, (unsigned long long) seen.first_seq, seen.done);
    zclock_sleep (100);         /* its ACK in the broker before it closes */
    zsock_destroy (&s);
}

static void
run (const char *state_dir)
{
    const char *mode = state_dir ? "state folder" : "no state";
    char ep[128], err[512];
    qc_broker_t *b = fx_broker_new (state_dir, ep, err, sizeof err);
    CHECK (b != NULL, "%s: %s", mode, err);
    if (!b)
        return;
    zactor_t *actor = zactor_new (qc_broker_actor, b);
    qc_worker_t *w = fx_noop_worker (ep, "steady", 200);
    CHECK (w != NULL);
    zclock_sleep (300);         /* registered */
    /* sent, never read: the socket closes with the job's answers on it */
    zsock_t *gone = submit_first (ep);
    zclock_sleep (1500);        /* the job runs and finishes meanwhile */
    zsock_destroy (&gone);
    qc_worker_destroy (&w);

    repeat (ep, mode, 1, 1);
    repeat (ep, mode, 2, 0);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
    if (!state_dir)
        return;
    b = fx_broker_new (state_dir, ep, err, sizeof err);
    CHECK (b != NULL, "restarted: %s", err);
    if (!b)
        return;
    actor = zactor_new (qc_broker_actor, b);
    repeat (ep, "after a restart", 2, 2);
    zactor_destroy (&actor);
    qc_broker_destroy (&b);
}

int
main (void)
{
    zsys_handler_set (NULL);
    char dir[] = "/tmp/qc-submit-repeat.XXXXXX";
    CHECK (mkdtemp (dir) != NULL, "a temporary folder");
    run (NULL);
    run (dir);
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!getenv ("KEEP") && system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", dir);
    return check_done ("test_submit_again");
}
