/* How much one peer may ask of the broker: a STATUS or a FETCH again too
 * soon is dropped (each answer is large for the few bytes asked: every
 * worker and job, or a job's files of up to 256 MB, and unread answers
 * queue up in the broker), and a client certificate holds at most
 * --max-jobs-per-client jobs (one certificate's empty jobs filled the
 * broker for every other client) and --max-mb-per-client of submissions
 * (within its jobs, 8 configs with 64 MiB of files made the broker 532
 * MB, and 102,400 slides of 4,000-byte paths 480 MB); without keys, the
 * clients together hold as much as one certificate. Each drop or
 * refusal is logged once in 10 s (refuse.h). */
#include "broker/broker_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fds.h"

/* qc-submit asks every few seconds, qc-status once a connection. */
#define STATUS_EVERY_MS 250
/* qc-worker asks again for files it has not got after 5 s
 * (worker/asset_wait.c ASK_AGAIN_MS); sooner is not a worker's asking. */
#define FETCH_AGAIN_MS 4000
/* a peer that asked nothing for this long is forgotten */
#define FORGET_MS 10000
/* a slide's record beside its path: its task in the scheduler, its
 * place in the outbox and in the journal's index (seen: 102,400 slides
 * of 4,000-byte paths made the broker 480 MB, ~700 bytes each beside
 * the path, its copy in the journal's page cache counted in that) */
#define SLIDE_RECORD_BYTES 512

/* Whether p was answered a STATUS less than STATUS_EVERY_MS ago (then
 * this one is dropped, said once in 10 s); else the answer is noted. */
bool
limits_status_too_soon (qc_broker_t *b, const peer_t *p)
{
    int64_t *at = zhashx_lookup (b->status_asked, p->hex);
    if (at && b->now - *at < STATUS_EVERY_MS) {
        b->dropped++;
        char who[PEER_KEY_MAX + 8];
        snprintf (who, sizeof who, "peer %s", p->hex);
        refusals_log (b->refusals, b->now, who, "STATUS again within %d ms: dropped",
                      STATUS_EVERY_MS);
        return true;
    }
    if (at)
        *at = b->now;
    else if ((at = malloc (sizeof *at))) {
        *at = b->now;
        if (zhashx_insert (b->status_asked, p->hex, at))
            free (at);
    }
    return false;
}

/* Descriptors left under which the broker says it is nearly out: each
 * TCP connection holds one, also one that never completes its handshake
 * (libzmq closes those after 30 s); at none left, libzmq fails every
 * accept, in a loop, and says nothing, and no worker or client gets in. */
#define FDS_LOW 8
#define FDS_CHECK_MS 2000

/* Says (once in 10 s) when the open-file limit is nearly reached. */
static void
check_fds (qc_broker_t *b)
{
    if (b->now < b->next_fds_check)
        return;
    b->next_fds_check = b->now + FDS_CHECK_MS;
    errno = 0;
    long left = qc_fds_unused ();
    if (left < 0 && (errno == EMFILE || errno == ENFILE))
        left = 0;               /* not even one to list them with */
    if (left >= 0 && left <= FDS_LOW)
        refusals_log (b->refusals, b->now, "new connections",
                      "%ld file descriptor%s left under the open-file limit (%zu "
                      "workers registered): a TCP connection holds one even before its "
                      "handshake (idle or half-open ones: 30 s), and at none left no "
                      "worker or client gets in; raise the broker's limit (ulimit -n, "
                      "LimitNOFILE= in its systemd unit) or find what holds the "
                      "connections", left, left == 1 ? "" : "s", zhashx_size (b->workers));
}

/* A refusal names the limit the operator set, or the one the system
 * did: told "its open-file limit" under --max-peers, they raised
 * ulimit -n to no effect. */
const char *
limits_peers_source (const qc_broker_t *b)
{
    return b->cfg.max_peers ? "qc-broker --max-peers" : "its open-file limit";
}

const char *
limits_peers_raise (const qc_broker_t *b)
{
    return b->cfg.max_peers ? "--max-peers" : "ulimit -n, LimitNOFILE= in its systemd unit";
}

/* Forgets the peers that asked for no STATUS in 10 s (bounded memory);
 * says when descriptors run short. */
void
limits_tick (qc_broker_t *b)
{
    check_fds (b);
    zlist_t *old = zlist_new ();
    if (!old)
        return;
    for (int64_t *at = zhashx_first (b->status_asked); at; at = zhashx_next (b->status_asked))
        if (b->now - *at > FORGET_MS)
            zlist_append (old, (void *) zhashx_cursor (b->status_asked));
    for (const char *k = zlist_first (old); k; k = zlist_next (old))
        zhashx_delete (b->status_asked, k);
    zlist_destroy (&old);
}

/* Whether w was sent job's files less than FETCH_AGAIN_MS ago (then its
 * FETCH is dropped, said once in 10 s); else the answer is noted. */
bool
limits_fetch_too_soon (qc_broker_t *b, worker_rec_t *w, uint64_t job)
{
    size_t n = sizeof w->fetched / sizeof w->fetched[0];
    for (size_t i = 0; i < n; i++)
        if (w->fetched[i].at && w->fetched[i].job == job
            && b->now - w->fetched[i].at < FETCH_AGAIN_MS) {
            b->dropped++;
            refusals_log (b->refusals, b->now, w->name ? w->name : "?",
                          "FETCH of job %" PRIu64 "'s config files again within %d ms: "
                          "dropped", job, FETCH_AGAIN_MS);
            return true;
        }
    w->fetched[w->fetched_next % n].job = job;
    w->fetched[w->fetched_next % n].at = b->now ? b->now : 1;
    w->fetched_next++;
    return false;
}

/* Whether job holds a place among its certificate's: a finished job
 * whose results are all fetched waits only for --linger, and a
 * cancelled one that ended keeps only the word that it was cancelled. */
static bool
holds_place (const job_rec_t *j)
{
    return !(sched_job_finished (j->sj) && (j->acked_seq == j->last_seq || j->sj->cancelled));
}

/* Whose jobs the per-client limits count for p, and the words the
 * refusal and the log name them with: its certificate (the jobs it
 * owns); or, without CurveZMQ, where no client can be told from
 * another, all clients as one, whose jobs have no owner, so that the
 * limits still bound the broker's memory (a loop of SUBMITs from anyone
 * who could connect grew it without end). */
typedef struct {
    const char *owner;               /* the jobs' owner key */
    char who[KEYRING_NAME_MAX + 32]; /* the refusal's subject */
    const char *holds, *its;         /* its verb and possessive */
    const char *log_name, *log_holds;
} limit_party_t;

static void
limit_party (const peer_t *p, limit_party_t *l)
{
    static const limit_party_t everyone = {
        "", "this broker's clients (it has no --cert, so they are one client to its "
        "limits)", "hold", "their", "clients without a certificate", "they hold"
    };
    if (!p->cert) {
        *l = everyone;
        return;
    }
    *l = (limit_party_t) { p->cert->key, "", "holds", "its", p->cert->name, "it holds" };
    snprintf (l->who, sizeof l->who, "your certificate (%s)", p->cert->name);
}

/* --max-jobs-per-client: whether p's certificate (without CurveZMQ: the
 * clients together) already holds that many jobs (running, or with
 * results not yet fetched); text then says so. One certificate's empty
 * jobs that never end filled the broker for every other client (and
 * the journal kept them). */
bool
limits_over_client_quota (qc_broker_t *b, const peer_t *p, char *text, size_t len)
{
    uint32_t max = b->cfg.max_jobs_per_client;
    if (!max)
        return false;
    limit_party_t l;
    limit_party (p, &l);
    uint32_t held = 0;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        held += strcmp (j->owner, l.owner) == 0 && holds_place (j);
    if (held < max)
        return false;
    snprintf (text, len, "%s %s %u jobs at this broker, %s limit (qc-broker "
              "--max-jobs-per-client %u): fetch or cancel some (qc-submit --attach, "
              "--cancel), or ask its operator", l.who, l.holds, held, l.its, max);
    refusals_log (b->refusals, b->now, l.log_name, "a new job: %s %u jobs "
                  "(--max-jobs-per-client %u)", l.log_holds, held, max);
    return true;
}

uint64_t
limits_config_bytes (const char *config, const qc_asset_t *assets, size_t nassets)
{
    uint64_t n = config ? strlen (config) : 0;
    for (size_t i = 0; assets && i < nassets; i++)
        n += assets[i].size + (assets[i].name ? strlen (assets[i].name) : 0);
    return n;
}

uint64_t
limits_slides_bytes (char *const *slides, size_t n)
{
    uint64_t bytes = 0;
    for (size_t i = 0; slides && i < n; i++)
        bytes += SLIDE_RECORD_BYTES + (slides[i] ? strlen (slides[i]) : 0);
    return bytes;
}

/* --max-mb-per-client: whether the jobs p's certificate (without
 * CurveZMQ: the clients together) has at the broker and add more bytes
 * would take over that many MB of it; text then says so. Every job
 * counts until it is forgotten, a cancelled or fetched one too: its
 * config, files and paths stay in memory until --linger or --retention
 * (counted as held, a loop of submit and cancel pinned any amount). */
bool
limits_over_client_bytes (qc_broker_t *b, const peer_t *p, uint64_t add, char *text,
                          size_t len)
{
    uint64_t max = (uint64_t) b->cfg.max_mb_per_client * 1000000;
    if (!max)
        return false;
    limit_party_t l;
    limit_party (p, &l);
    uint64_t held = 0;
    for (job_rec_t *j = zhashx_first (b->jobs); j; j = zhashx_next (b->jobs))
        if (strcmp (j->owner, l.owner) == 0)
            held += j->bytes;
    if (held + add <= max)
        return false;
    snprintf (text, len, "%s would hold %.1f MB of configs, their files and slide paths at this "
              "broker (%.1f MB held, %.1f MB more sent), over %s limit (qc-broker "
              "--max-mb-per-client %u): a job is let go --linger after its results are "
              "all fetched (qc-submit --attach; cancel what is not needed: --cancel); or "
              "submit fewer slides or smaller config files, or ask its operator", l.who,
              (double) (held + add) / 1e6, (double) held / 1e6, (double) add / 1e6, l.its,
              b->cfg.max_mb_per_client);
    refusals_log (b->refusals, b->now, l.log_name, "%.1f MB more: %s %.1f MB "
                  "(--max-mb-per-client %u)", (double) add / 1e6, l.log_holds,
                  (double) held / 1e6, b->cfg.max_mb_per_client);
    return true;
}
