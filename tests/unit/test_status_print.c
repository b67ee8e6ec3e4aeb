/* qc-status --tsv (client/status_print.c): a worker's line ends with its
 * state, sorted with its row; a note's line names its worker (scripts
 * had only the notes' words); a broker that sends no states, or not one
 * per worker, gives "-"; a peer's control bytes never reach a line. A
 * job's line ends with its state (delivered, waiting...), sorted with
 * its row; the table counts the jobs of each state and says what the
 * words shown mean. The broker's own trouble: its word on the broker
 * line, a line each. Whose each job is (job_owners): last on its line
 * and in the table (an admin could not tell), "-" where not known. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/status_print.h"
#include "tests/unit/check.h"

/* The reply a broker sends: rows in its hash order, not by name. */
static qc_msg_t *
reply (bool with_states, size_t nstates)
{
    qc_msg_t *m = qc_msg_new (QC_STATUS_REPLY);
    if (!m)
        return NULL;
    const char *names[] = {"w10", "w1", "w\tx"};
    const char *states[] = {"paused", "busy", "idle\x1b[2J"};
    m->nworkers = 3;
    m->workers = calloc (3, sizeof *m->workers);
    m->nspeeds = 3;
    m->speeds = calloc (3, sizeof *m->speeds);
    if (!m->workers || !m->speeds) {
        qc_msg_destroy (&m);
        return NULL;
    }
    for (size_t i = 0; i < 3; i++)
        m->workers[i] = (qc_worker_row_t) {strdup (names[i]), strdup ("h"), 2, 0, 1, 0,
                                           0.5, false};
    m->speeds[0].ms_cpu = 12000;
    if (with_states) {
        m->states = calloc (nstates, sizeof *m->states);
        for (size_t i = 0; m->states && i < nstates; i++, m->nstates++)
            m->states[i] = strdup (states[i % 3]);
    }
    /* jobs in hash order, each with its state when the broker sends them */
    const uint64_t ids[] = {12, 3, 7};
    const char *jstates[] = {"waiting", "delivered", "running"};
    m->jobs = calloc (3, sizeof *m->jobs);
    m->job_states = with_states ? calloc (nstates, sizeof *m->job_states) : NULL;
    for (size_t i = 0; m->jobs && i < 3; i++, m->njobs++)
        m->jobs[i] = (qc_job_row_t) {.job = ids[i], .total = 2, .done = i == 2 ? 0 : 2,
                                     .running = i == 2 ? 2 : 0};
    for (size_t i = 0; m->job_states && i < nstates; i++, m->njob_states++)
        m->job_states[i] = strdup (jstates[i % 3]);
    const char *owners[] = {"lab-a (alice)", "", "bob\tx\x1b[2J"};
    m->job_owners = with_states ? calloc (nstates, sizeof *m->job_owners) : NULL;
    for (size_t i = 0; m->job_owners && i < nstates; i++, m->njob_owners++)
        m->job_owners[i] = strdup (owners[i % 3]);
    m->version = strdup ("9.9.9+test");      /* a broker that says its trouble */
    m->nnotes = 2;
    m->notes = calloc (2, sizeof *m->notes);
    if (m->notes) {
        m->notes[0] = strdup ("w10: takes no new slide for 9 s more: its machine failed slides");
        m->notes[1] = strdup ("gone: a worker no row names");
    }
    return m;
}

/* m printed as --tsv (table false) or as the table, malloc'd; NULL for
 * no m or no memory. */
static char *
printed (qc_msg_t *m, bool table)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = m ? open_memstream (&text, &len) : NULL;
    if (!f)
        return NULL;
    if (table)
        qc_status_print_table (f, "tcp://127.0.0.1:5555", m);
    else
        qc_status_print_tsv (f, "tcp://127.0.0.1:5555", m);
    fclose (f);
    return text;
}

static char *
tsv_of (qc_msg_t *m)
{
    return printed (m, false);
}

int
main (void)
{
    qc_msg_t *m = reply (true, 3);
    char *t = m ? tsv_of (m) : NULL;
    CHECK (t != NULL, "the lines");
    if (t) {
        CHECK (strstr (t, "cpu_s_per_slide gpu_s_per_slide state | note worker text | job"),
               "#kind names the new fields: %s", t);
        /* sorted by name, each state with its own row */
        const char *w1 = strstr (t, "\nworker\tw1\th\t2\t0\t1\t0\t0.5\tno\t-\t-\tbusy\n");
        const char *w10 = strstr (t, "\nworker\tw10\th\t2\t0\t1\t0\t0.5\tno\t12.0\t-\tpaused\n");
        CHECK (w1 && w10 && w1 < w10, "rows sorted, each with its speed and state: %s", t);
        CHECK (strstr (t, "\nworker\tw x\th\t2\t0\t1\t0\t0.5\tno\t-\t-\tidle?[2J\n"),
               "a tab in a name is no field; a state's control bytes are scrubbed: %s", t);
        CHECK (strstr (t, "\nnote\tw10\tw10: takes no new slide"),
               "the note names its worker (w10, not w1): %s", t);
        CHECK (strstr (t, "\nnote\t-\tgone: a worker no row names\n"),
               "a note no row's name starts: '-': %s", t);
        CHECK (strstr (t, "running attached cancelled state owner | trouble"),
               "#kind names state and owner: %s", t);
        const char *j3 = strstr (t, "\njob\t3\t2\t0\t2\t0\t0\tno\tno\tdelivered\t-\n");
        const char *j7 = strstr (t, "\njob\t7\t0\t0\t2\t0\t2\tno\tno\trunning\tbob x?[2J\n");
        const char *j12 = strstr (t, "\njob\t12\t2\t0\t2\t0\t0\tno\tno\twaiting\t"
                                     "lab-a (alice)\n");
        CHECK (j3 && j7 && j12 && j3 < j7 && j7 < j12,
               "jobs sorted by id, each with its own state and owner (scrubbed): %s", t);
    }
    free (t);
    qc_msg_destroy (&m);

    /* a broker before states, and one whose list does not match */
    for (int k = 0; k < 2; k++) {
        m = reply (k == 1, 2);
        t = m ? tsv_of (m) : NULL;
        CHECK (t && strstr (t, "\nworker\tw1\th\t2\t0\t1\t0\t0.5\tno\t-\t-\t-\n")
                   && strstr (t, "\nworker\tw10\th\t2\t0\t1\t0\t0.5\tno\t12.0\t-\t-\n"),
               "%s: states not known ('-'): %s", k ? "2 states for 3 rows" : "no states",
               t ? t : "?");
        CHECK (t && strstr (t, "\njob\t3\t2\t0\t2\t0\t0\tno\tno\t-\t-\n"),
               "%s: a job's state and owner not known ('-'): %s", k ? "2 for 3 jobs" : "none",
               t ? t : "?");
        free (t);
        qc_msg_destroy (&m);
    }

    /* the table a person reads: the state under its own header (a
       worker's "draining" stood under none: a user's review), counts
       in the singular where they are one */
    m = reply (true, 3);
    char *text = printed (m, true);
    CHECK (text && strstr (text, "\nw10: takes no new slide for 9 s more")
               && strstr (text, "CPU S/SL  GPU S/SL  STATE\n")
               && strstr (text, "      12.0         -  paused\n")
               && strstr (text, ": 3 workers, 0 tasks queued\n"), "table: %s", text ? text : "?");
    CHECK (text && strstr (text, "\njobs: 3 (1 running, 1 waiting, 1 delivered)\n")
               && strstr (text, "RUNNING  STATE      CLIENT                OWNER\n")
               && strstr (text, "\n3               2        0        2        0        0  "
                                "delivered  none                  -\n")
               && strstr (text, "  waiting    none                  lab-a (alice)\n")
               && strstr (text, "\n  waiting: finished; its results wait for its client")
               && strstr (text, "\n  delivered: finished; every result was taken")
               && !strstr (text, "  running: ")
               && strstr (text, "(forgotten after the broker's --linger)\nJOB "),
           "table: jobs counted by state, each word shown said: %s", text ? text : "?");
    free (text);
    qc_msg_destroy (&m);

    /* a broker before owners: no OWNER column, the table as it was */
    m = reply (false, 3);
    text = printed (m, true);
    CHECK (text && strstr (text, "RUNNING  STATE      CLIENT\n") && !strstr (text, "OWNER"),
           "no owners, no OWNER column: %s", text ? text : "?");
    free (text);
    qc_msg_destroy (&m);

    /* a heartbeat's age no broker sends (a peer posing as one): "-" */
    m = reply (true, 3);
    if (m) {
        m->workers[0].heartbeat_age = NAN;
        m->workers[1].heartbeat_age = -3;
    }
    t = m ? tsv_of (m) : NULL;
    CHECK (t && strstr (t, "\nworker\tw1\th\t2\t0\t1\t0\t-\tno\t")
               && strstr (t, "\nworker\tw10\th\t2\t0\t1\t0\t-\tno\t")
               && strstr (t, "\nworker\tw x\th\t2\t0\t1\t0\t0.5\tno\t"),
           "heartbeat ages: %s", t ? t : "?");
    free (t);
    qc_msg_destroy (&m);
    /* the broker's own trouble: on the broker line (its first word, "ok"
       with none), a line each in --tsv with the word apart, first in
       the table; a line without a word, and one whose word is too long
       for one, is "trouble" whole; a peer's control bytes scrubbed */
    m = reply (true, 3);
    const char *lines[] = {"state-unwritable: its state folder /s cannot be written",
                           "no word here\x1b[2J", "results-held:x"};
    if (m && (m->trouble = calloc (3, sizeof *m->trouble)))
        for (size_t i = 0; i < 3; i++)
            m->trouble[m->ntrouble++] = strdup (lines[i]);
    t = m ? tsv_of (m) : NULL;
    CHECK (t && strstr (t, "\nbroker\ttcp://127.0.0.1:5555\t3\t0\tstate-unwritable\t9.9.9+test\n")
               && strstr (t, "\ntrouble\tstate-unwritable\tits state folder /s cannot be "
                             "written\n")
               && strstr (t, "\ntrouble\ttrouble\tno word here?[2J\n")
               && strstr (t, "\ntrouble\ttrouble\tresults-held:x\n")
               && strstr (t, "cancelled state owner | trouble word text\n"),
           "trouble in --tsv: %s", t ? t : "?");
    free (t);
    text = printed (m, true);
    CHECK (text && strncmp (text, "broker tcp://127.0.0.1:5555 (qc 9.9.9+test): 3 workers, 0 "
                                  "tasks queued\nTROUBLE state-unwritable: its state folder "
                                  "/s cannot be written\nTROUBLE no word here?[2J\n", 146) == 0,
           "trouble first in the table: %s", text ? text : "?");
    free (text);
    qc_msg_destroy (&m);
    m = reply (true, 3);
    t = m ? tsv_of (m) : NULL;
    CHECK (t && strstr (t, "\nbroker\ttcp://127.0.0.1:5555\t3\t0\tok\t9.9.9+test\n")
               && !strstr (t, "\ntrouble\t"), "no trouble: ok: %s", t ? t : "?");
    free (t);
    /* a broker older than trouble says no build: its state not known */
    if (m) {
        free (m->version);
        m->version = NULL;
    }
    t = m ? tsv_of (m) : NULL;
    CHECK (t && strstr (t, "\nbroker\ttcp://127.0.0.1:5555\t3\t0\t-\t-\n"),
           "an older broker: '-': %s", t ? t : "?");
    free (t);
    text = printed (m, true);
    CHECK (text && strstr (text, "broker tcp://127.0.0.1:5555: 3 workers, 0 tasks queued\n(a "
                                 "broker older than 2026-12-03: its own trouble, a state folder "
                                 "it cannot write, is not said)\n"), "table: %s", text ? text : "?");
    free (text);
    qc_msg_destroy (&m);
    return check_done ("test_status_print");
}
