/* qc_rogue_broker: a broker that lies to its client, for
 * tests/integration/test_hostile_broker.sh. It binds a ROUTER, waits for
 * the first SUBMIT, answers ACCEPTED with the job's true size (the
 * slides of that SUBMIT), then sends what it was told to:
 *
 *   qc_rogue_broker --bind EP --idx N [--total N] [--claim N] [--mute] [--wait-ms N]
 *
 * one RESULT for slide index N ("ok", its comments "rogue"), then DONE
 * with --total (default: the slides submitted) done and 0 failed;
 * --claim: ACCEPTED says the job has that many slides instead. Every
 * ATTACH is answered with ACCEPTED (attached, seq 0) and the same RESULT
 * and DONE again, so that a client that resyncs sees the same lie (an
 * ATTACH before any SUBMIT: to that job, of one slide). It
 * prints "got COMMAND" for each message and "rogue: ..." for what it
 * sent, and exits after --wait-ms (default 8000) with nothing heard, or
 * 60 s in all. Exit 0 when a SUBMIT or ATTACH came, 1 when none did, 2 on a usage
 * error.
 *
 * --mute: answers nothing at all (a broker whose answers are lost on the
 * way back, as a firewall drops them), and says of each CANCEL whether
 * its key is the first SUBMIT's ("got CANCEL of the submitted key"). */
#include <czmq.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/proto.h"
#include "shared/result.h"

static zsock_t *s_router;

static void
send_to (zframe_t *peer, qc_msg_t *m)
{
    if (qc_msg_send (m, zsock_resolve (s_router), peer))
        printf ("rogue: send failed: %s\n", qc_command_name (m->command));
}

/* ACCEPTED, the RESULT for idx, DONE: what an honest broker sends for
 * a job of that many slides, but for a slide it may not have */
static uint64_t s_claim;      /* --claim: ACCEPTED's total, 0: the truth */

static void
tell (zframe_t *peer, uint64_t job, uint64_t key, uint64_t slides, uint64_t idx,
      uint64_t total, bool attached)
{
    qc_msg_t acc = {.command = QC_ACCEPTED, .gpu = -1, .job = job, .key = key,
                    .total = s_claim ? s_claim : slides, .seq = 0, .attached = attached};
    send_to (peer, &acc);
    qc_result_t *res = qc_result_new ();
    if (!res)
        return;
    qc_result_set (res, "comments", "rogue");
    qc_msg_t r = {.command = QC_RESULT, .gpu = -1, .job = job, .key = key, .idx = idx,
                  .seq = 1, .path = "rogue.svs", .worker = "rogue", .result = res};
    send_to (peer, &r);
    qc_result_destroy (&res);
    qc_msg_t done = {.command = QC_DONE, .gpu = -1, .job = job, .key = key, .total = total,
                     .done = total};
    send_to (peer, &done);
    printf ("rogue: sent job %" PRIu64 " of %" PRIu64 " slides a result for index %" PRIu64
            "\n", job, slides, idx);
    fflush (stdout);
}

int
main (int argc, char **argv)
{
    const char *bind = NULL;
    uint64_t idx = 0, total = 0;
    bool have_idx = false, have_total = false;
    int wait_ms = 8000;
    bool mute = false;
    static const struct option opts[] = {
        {"bind", required_argument, 0, 'b'}, {"idx", required_argument, 0, 'i'},
        {"total", required_argument, 0, 't'}, {"wait-ms", required_argument, 0, 'w'},
        {"claim", required_argument, 0, 'c'}, {"mute", no_argument, 0, 'm'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'b': bind = optarg; break;
        case 'i': idx = strtoull (optarg, NULL, 0); have_idx = true; break;
        case 't': total = strtoull (optarg, NULL, 0); have_total = true; break;
        case 'w': wait_ms = atoi (optarg); break;
        case 'c': s_claim = strtoull (optarg, NULL, 0); break;
        case 'm': mute = true; break;
        default: return 2;
        }
    }
    if (!bind || !have_idx || wait_ms < 100 || wait_ms > 60000) {
        fprintf (stderr, "usage: qc_rogue_broker --bind EP --idx N [--total N] [--claim N] "
                         "[--mute] [--wait-ms 100..60000]\n");
        return 2;
    }
    zsys_init ();
    zsys_set_linger (0);
    s_router = zsock_new (ZMQ_ROUTER);
    if (!s_router || zsock_bind (s_router, "%s", bind) < 0) {
        fprintf (stderr, "qc_rogue_broker: cannot bind %s\n", bind);
        zsock_destroy (&s_router);
        return 2;
    }
    qc_proto_limit_socket (s_router);
    zpoller_t *p = zpoller_new (s_router, NULL);
    uint64_t job = 7, key = 0, slides = 0;
    bool submitted = false;
    int64_t start = zclock_mono (), last = start;
    while (p && zclock_mono () - last < wait_ms && zclock_mono () - start < 60000) {
        if (!zpoller_wait (p, 100))
            continue;
        zmsg_t *raw = zmsg_recv (s_router);
        zframe_t *peer = raw ? zmsg_pop (raw) : NULL;
        char err[256];
        qc_msg_t *m = peer ? qc_msg_decode (raw, err, sizeof err) : NULL;
        zmsg_destroy (&raw);
        last = zclock_mono ();
        if (m && m->command != QC_HEARTBEAT) {
            printf ("got %s\n", qc_command_name (m->command));
            fflush (stdout);
        }
        if (mute) {
            if (m && m->command == QC_SUBMIT && !submitted) {
                submitted = true;
                key = m->key;
            } else if (m && m->command == QC_CANCEL && submitted && m->key == key) {
                printf ("got CANCEL of the submitted key\n");
                fflush (stdout);
            }
        } else if (m && m->command == QC_SUBMIT && !submitted) {
            submitted = true;
            key = m->key;
            slides = m->nslides;
            tell (peer, job, key, slides, idx, have_total ? total : slides, false);
        } else if (m && m->command == QC_ATTACH) {
            if (!submitted) {       /* a job it never had: one slide */
                submitted = true;
                job = m->job;
                key = m->key;
                slides = 1;
            }
            tell (peer, job, key, slides, idx, have_total ? total : slides, true);
        }
        qc_msg_destroy (&m);
        zframe_destroy (&peer);
    }
    zpoller_destroy (&p);
    zsock_destroy (&s_router);
    return submitted ? 0 : 1;
}
