/* What client/session.c (the session's loop) and session_say.c (what
 * it says a user may do next) share: the session's state. Not for
 * callers outside them: they use session.h. */
#ifndef QC_CLIENT_SESSION_INT_H
#define QC_CLIENT_SESSION_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "client/progress.h"
#include "client/session.h"
#include "client/waiting.h"
#include "client/warn_once.h"
#include "shared/curve.h"

typedef struct {
    const qc_session_config_t *cfg;
    zsock_t *sock;
    qc_handshake_t *hs;       /* why the handshake fails, if it does */
    uint64_t job, key;
    uint8_t resource;         /* the job's, from an attach's ACCEPTED */
    bool write_failed;        /* the output folder refused a result */
    bool local_lost;          /* the one-process mode's worker process
                                 ended: no result would come */
    bool orphan_cancelled;    /* and was gone: the job cancelled, as no
                                 folder names it any more */
    uint64_t expected;        /* next result seq to write */
    uint64_t acked;
    int64_t last_ack;         /* when results were last synced and acked */
    uint64_t unacked_bytes;   /* result bytes written since */
    bool sync_failed;         /* a sync failed: nothing acked from then on */
    uint64_t slides_known;    /* the job's size: the slides we submit, or
                                 (--attach) its first ACCEPTED's total, at
                                 most the slides it was sent where the
                                 folder says; a result's index must be
                                 under it */
    uint64_t taken;           /* slides the broker holds of our SUBMITs (its
                                 last ACCEPTED's total) */
    int64_t last_heard, next_beat, last_resync, last_resubmit;
    bool silent;              /* said that the broker is silent */
    bool gave_up;             /* --give-up: silent too long */
    bool detached;            /* --detach: left once every slide was held */
    qc_waiting_t waiting;     /* says what a silent job waits for */
    qc_warn_once_t *warn_once;
    qc_progress_t progress;
    uint64_t other_builds;    /* results of a build not this one's, with
                                 the built-in config (said once, each in
                                 qc.log) */
    bool accepted, done, fatal;
    bool refused;               /* an ERROR after the job was accepted, or
                                   to our ATTACH */
    bool gone;                  /* the broker no longer holds the job for us
                                   (not there, or our cancel of a cut-off
                                   job refused): a rerun runs its slides
                                   without a result anew */
    bool cut;                   /* the job was cancelled while we submitted
                                   (its ERROR said): over a limit, or by
                                   another's CANCEL */
    bool cut_by_limit;          /* ... the broker's, over a limit */
    bool cut_said;              /* said that an attached job is cut off */
    bool resync_due;            /* asked within the last second: sent later */
    unsigned done_stalls;       /* DONEs in a row with nothing new written */
    uint64_t done_stall_at;
    int exit_code;
} session_t;

/* session_say.c. The command that goes on with (what: "--attach",
 * "--cancel") the session's job, as the user can paste it, into buf. */
const char *session_command_for (const session_t *s, const char *what, bool with_dir,
                                 char *buf, size_t cap);
/* What "run the same command again" adds (the config's again, or ""). */
const char *session_again_words (const qc_session_config_t *c);
/* Ctrl-C (or SIGTERM): what is kept and how to go on. */
void session_say_interrupted (session_t *s);
/* "no answer from the broker", and why where it can be told. */
void session_say_no_answer (session_t *s);
/* --detach left the job running: its id alone on stdout, and on stderr
 * how to fetch it. */
void session_say_detached (session_t *s);
/* A session that stopped before its job was whole: what follows, and
 * how to go on (nothing, where the caller says it: cfg->gone). */
void session_say_how_to_go_on (session_t *s);

/* session.c: a message to the broker (0, or -1 when it could not be
 * encoded or sent); an ATTACH asking what was missed (at most once a
 * second: again from the main loop when due); SUBMIT batches of the
 * slides from index base on. */
int session_send (session_t *s, qc_msg_t *m);
void session_resync (session_t *s);
int session_submit_from (session_t *s, uint64_t base);
/* session_recv.c: what is waiting read and acted on (up to 10,000
 * messages; it stops early once the session is done or failed). */
void session_read_burst (session_t *s);

#endif
