/* qc-submit's word on a job that makes no progress (client/waiting.c):
 * asked after --wait-warn, it says what is missing; a STATUS sent before
 * progress came (a result, or the broker answering again after a restart)
 * is not used: asked while the broker was down and answered when it came
 * back, before its workers had joined again, it said "waiting -21 s: no
 * worker is connected ... start one". */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client/waiting.h"
#include "tests/unit/check.h"

int
main (void)
{
    qc_progress_t p = {0};
    qc_waiting_t w;
    qc_msg_t none = {.command = QC_STATUS_REPLY, .gpu = -1};   /* no worker */

    /* no progress for 10 s: asked, and the answer says no worker is there */
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:1", 0);
    CHECK (!qc_waiting_due (&w, 9999), "not before --wait-warn");
    CHECK (qc_waiting_due (&w, 10000), "asked at 10 s");
    CHECK (qc_waiting_on_status (&w, &none, 1, &p), "no worker: said");
    CHECK (!qc_waiting_on_status (&w, &none, 1, &p), "one answer per STATUS");

    /* asked, then the broker answers again (progress) before the reply */
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:1", 0);
    CHECK (qc_waiting_due (&w, 10000));
    qc_waiting_progress (&w, 31000);
    CHECK (!qc_waiting_on_status (&w, &none, 1, &p),
           "the answer to a STATUS sent before progress is not used");
    CHECK (!qc_waiting_due (&w, 40999) && qc_waiting_due (&w, 41000),
           "asked again --wait-warn after the progress");
    CHECK (qc_waiting_on_status (&w, &none, 1, &p), "and that answer is used");

    /* the worker to start, as a command that works: to a broker with
       CurveZMQ, with the keys a worker needs (the bare command is
       refused at the handshake) */
    char said[4096] = "";
    fflush (stderr);
    int saved = dup (2);
    FILE *tmp = tmpfile ();
    CHECK (saved >= 0 && tmp && dup2 (fileno (tmp), 2) == 2);
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:1", 0);
    CHECK (qc_waiting_due (&w, 10000) && qc_waiting_on_status (&w, &none, 1, &p));
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:1", 0);
    w.server_key = "keys/our broker.cert";
    CHECK (qc_waiting_due (&w, 10000) && qc_waiting_on_status (&w, &none, 1, &p));
    /* workers there, one of them paused: the line says so, not idle */
    qc_worker_row_t rows[2] = {{.name = "a", .slots = 2}, {.name = "b", .slots = 2}};
    qc_job_row_t job = {.job = 1, .total = 5, .queued = 3};
    char *notes[1] = {"a: takes no new slide for 9 s more: ..."};
    qc_msg_t busy = {.command = QC_STATUS_REPLY, .gpu = -1, .workers = rows, .nworkers = 2,
                     .jobs = &job, .njobs = 1, .notes = notes, .nnotes = 1};
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:1", 0);
    CHECK (qc_waiting_due (&w, 10000));
    qc_waiting_on_status (&w, &busy, 1, &p);
    /* two paused: counted, qc-status gives the reasons */
    char *two[2] = {"a: takes no new slide for 9 s more: ...", "b: takes no new slide"};
    qc_msg_t both = busy;
    both.notes = two;
    both.nnotes = 2;
    job.queued = 2;
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:1", 0);
    CHECK (qc_waiting_due (&w, 10000));
    qc_waiting_on_status (&w, &both, 1, &p);
    /* one worker, one slide: in the singular ("on 1 workers", a user's
       review) */
    qc_msg_t one = busy;
    one.nworkers = 1;
    one.nnotes = 0;
    job.queued = 1;
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:1", 0);
    CHECK (qc_waiting_due (&w, 10000));
    qc_waiting_on_status (&w, &one, 1, &p);
    job.queued = 3;
    /* workers were there, none now: one may be restarting (a worker
       whose process the OOM killer took: "start one" added a second to
       a machine short of memory: an operator's review) */
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:3", 0);
    qc_waiting_worked (&w);
    CHECK (qc_waiting_due (&w, 10000) && qc_waiting_on_status (&w, &none, 1, &p));
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:4", 0);
    CHECK (qc_waiting_due (&w, 10000));
    qc_waiting_on_status (&w, &busy, 1, &p);           /* 2 workers seen */
    CHECK (qc_waiting_due (&w, 300000) && qc_waiting_on_status (&w, &none, 1, &p));
    qc_waiting_worked (NULL);
    /* -q: how a job stands is progress, not said; a missing worker is */
    qc_progress_t quiet = {.quiet = true};
    job.queued = 4;
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:1", 0);
    CHECK (qc_waiting_due (&w, 10000));
    qc_waiting_on_status (&w, &busy, 1, &quiet);
    qc_waiting_init (&w, 10, QC_RES_ANY, "tcp://127.0.0.1:2", 0);
    CHECK (qc_waiting_due (&w, 10000) && qc_waiting_on_status (&w, &none, 1, &quiet));
    /* the one-process mode's own worker process: never one to start */
    qc_waiting_init (&w, 10, QC_RES_ANY, "ipc:///tmp/qc-submit-x/broker", 0);
    w.local = true;
    CHECK (qc_waiting_due (&w, 10000) && qc_waiting_on_status (&w, &none, 1, &quiet));
    fflush (stderr);
    dup2 (saved, 2);
    close (saved);
    if (tmp) {
        rewind (tmp);
        size_t got = fread (said, 1, sizeof said - 1, tmp);
        said[got] = 0;
        fclose (tmp);
    }
    CHECK (strstr (said, "no worker is connected to tcp://127.0.0.1:1; start one with "
                         "qc-worker --connect tcp://127.0.0.1:1 (still waiting)\n"),
           "without keys: %s", said);
    CHECK (strstr (said, "start one with qc-worker --connect tcp://127.0.0.1:1 --cert "
                         "WORKER.cert_secret --server-key 'keys/our broker.cert' (the "
                         "worker's own key pair: qc-keygen --role worker, its public half "
                         "in the broker's --allow folder) (still waiting)"),
           "with CurveZMQ: %s", said);
    /* the one paused worker's reason itself (a lone worker waiting for
       its machine's memory said nothing of it: an operator's review) */
    CHECK (strstr (said, "job 1 has 3 slides queued and 0 running on 2 workers (0 with a GPU); "
                         "worker a: takes no new slide for 9 s more: ...\n"),
           "a paused worker: %s", said);
    CHECK (strstr (said, "job 1 has 1 slide queued and 0 running on 1 worker (0 with a GPU)\n"),
           "one worker, one slide: %s", said);
    CHECK (strstr (said, "job 1 has 2 slides queued and 0 running on 2 workers (0 with a GPU); "
                         "2 of the workers take no new slide for now (qc-status says why)"),
           "two paused workers: %s", said);
    CHECK (strstr (said, "no worker is connected to tcp://127.0.0.1:3 now (1 was before: a "
                         "worker whose process died starts it again by itself within a "
                         "minute, and its log says why it stopped); if none comes back, "
                         "start one with qc-worker --connect tcp://127.0.0.1:3 (still "
                         "waiting)"), "after a result: %s", said);
    CHECK (strstr (said, "no worker is connected to tcp://127.0.0.1:4 now (2 were before"),
           "after a status with two: %s", said);
    CHECK (!strstr (said, "job 1 has 4 slides queued"), "-q said how the job stands: %s", said);
    CHECK (strstr (said, "no worker is connected to tcp://127.0.0.1:2"),
           "-q kept back a missing worker: %s", said);
    CHECK (strstr (said, "waiting 10 s: qc-submit's worker process is not connected now (it "
                         "is starting) (still waiting)\n")
           && !strstr (said, "qc-worker --connect ipc://"), "one-process mode: %s", said);
    return check_done ("test_client_waiting");
}
