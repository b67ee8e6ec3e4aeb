/* The worker's memory gate (worker/mem_gate.h) with real threads: a
 * slide goes in while the others leave room; one that does not fit
 * waits, and a small one that came after it waits behind it (it would
 * fit, but a large slide passed over by small ones could wait for
 * ever); a slide larger than the budget runs alone; bytes a running
 * slide adds hold the next one out until given back (and never go
 * below what it went in with); a hold (a GPU lane's) goes in at once,
 * counts no slide, and what it adds holds slides out as a slide's
 * does; budget 0 gates nothing. Every wait is bounded (a thread that is still waiting after
 * its bound fails the test). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "shared/clock.h"
#include "shared/log.h"
#include "tests/unit/check.h"
#include "worker/mem_gate.h"

#define MB ((uint64_t) 1 << 20)

/* pixels whose estimate is mb MB in all */
static uint64_t
pixels_for (uint64_t mb)
{
    return (mb * MB - QC_MEM_GATE_BYTES_PER_SLIDE) / QC_MEM_GATE_BYTES_PER_PIXEL;
}

typedef struct {
    uint64_t pixels;
    qc_mem_ticket_t ticket;
    atomic_int in;            /* 1 once admitted */
    pthread_t th;
} slide_t;

static void *
enter (void *arg)
{
    slide_t *s = arg;
    qc_mem_gate_enter (&s->ticket, s->pixels);
    atomic_store (&s->in, 1);
    return NULL;
}

static void
start (slide_t *s, uint64_t mb)
{
    s->pixels = mb ? pixels_for (mb) : 0;
    atomic_store (&s->in, 0);
    CHECK (pthread_create (&s->th, NULL, enter, s) == 0);
}

/* Whether s is admitted within secs. */
static bool
admitted_within (slide_t *s, double secs)
{
    double end = qc_clock_s () + secs;
    while (!atomic_load (&s->in) && qc_clock_s () < end)
        usleep (2000);
    return atomic_load (&s->in);
}

/* s leaves the gate. One never admitted would hold its thread in the
 * gate for good: the test ends there, failed (no join that never
 * returns). */
static void
finish (slide_t *s)
{
    if (!admitted_within (s, 5)) {
        CHECK (0, "a slide is still held in the gate");
        exit (check_done ("mem_gate"));
    }
    qc_mem_gate_leave (&s->ticket);
    pthread_join (s->th, NULL);
}

/* A GPU lane's next slide: a hold opened with mb MB, then the lane's
 * last slide (last) leaves. */
static void
lane_turn (qc_mem_ticket_t *next, int64_t mb, qc_mem_ticket_t *last)
{
    qc_mem_gate_hold (next);
    qc_mem_gate_add (next, mb * (int64_t) MB);
    qc_mem_gate_leave (last);
}

int
main (void)
{
    qc_log_set_stderr_enabled (0);
    slide_t a, b, c;

    /* 150 MB: a (64) in; b (120) waits; c (64) would fit beside a but
       came after b: it waits too */
    qc_mem_gate_set_budget (150 * MB);
    start (&a, 0);
    CHECK (admitted_within (&a, 5), "the first slide did not go in");
    start (&b, 120);
    CHECK (!admitted_within (&b, 0.3), "120 MB went in beside 64 MB under 150");
    start (&c, 64);
    CHECK (!admitted_within (&c, 0.3), "a slide passed the one waiting before it");
    unsigned n;
    uint64_t held;
    qc_mem_gate_held (&n, &held);
    CHECK (n == 1 && held == 64 * MB, "%u slides, %llu bytes held", n,
           (unsigned long long) held);
    finish (&a);
    CHECK (admitted_within (&b, 5), "b did not go in when a left");
    CHECK (!admitted_within (&c, 0.3), "c went in beside b: 184 MB under 150");
    CHECK (b.ticket.waited_s > 0.2, "b waited %.2f s", b.ticket.waited_s);
    finish (&b);
    CHECK (admitted_within (&c, 5), "c did not go in when b left");
    finish (&c);
    qc_mem_gate_held (&n, &held);
    CHECK (n == 0 && held == 0, "%u slides, %llu bytes held at the end", n,
           (unsigned long long) held);

    /* larger than the budget: alone, and it holds the whole budget */
    start (&a, 0);
    CHECK (admitted_within (&a, 5));
    start (&b, 400);
    CHECK (!admitted_within (&b, 0.3), "a slide over the budget ran beside another");
    finish (&a);
    CHECK (admitted_within (&b, 5), "a slide over the budget never ran");
    CHECK (b.ticket.bytes == 150 * MB, "it holds %llu bytes",
           (unsigned long long) b.ticket.bytes);
    start (&c, 0);
    CHECK (!admitted_within (&c, 0.3), "a slide ran beside one over the budget");
    finish (&b);
    CHECK (admitted_within (&c, 5));
    finish (&c);

    /* bytes a running slide adds (a large annotation, parsed) hold the
       next slide out without a wait of its own; giving them back lets
       it in; they never go below what the slide went in with */
    start (&a, 64);
    CHECK (admitted_within (&a, 5));
    qc_mem_gate_add (&a.ticket, 60 * (int64_t) MB);
    start (&b, 64);
    CHECK (!admitted_within (&b, 0.3), "64 MB went in beside 124 MB under 150");
    qc_mem_gate_held (&n, &held);
    CHECK (n == 1 && held == 124 * MB, "%u slides, %llu bytes held", n,
           (unsigned long long) held);
    qc_mem_gate_add (&a.ticket, -60 * (int64_t) MB);
    CHECK (admitted_within (&b, 5), "the bytes given back did not let the next slide in");
    qc_mem_gate_add (&a.ticket, -500 * (int64_t) MB);
    qc_mem_gate_add (&a.ticket, INT64_MIN);
    CHECK (a.ticket.bytes == 64 * MB, "a slide gave back more than it added: %llu held",
           (unsigned long long) a.ticket.bytes);
    qc_mem_gate_add (&b.ticket, INT64_MAX);
    qc_mem_gate_add (&b.ticket, INT64_MAX);    /* held to UINT64_MAX, no wrap */
    qc_mem_gate_add (&b.ticket, -INT64_MAX);
    qc_mem_gate_add (&b.ticket, -INT64_MAX);
    qc_mem_gate_add (&b.ticket, -INT64_MAX);
    CHECK (b.ticket.bytes == 64 * MB, "%llu", (unsigned long long) b.ticket.bytes);
    finish (&a);
    finish (&b);
    qc_mem_gate_held (&n, &held);
    CHECK (n == 0 && held == 0, "%u slides, %llu bytes held after adding", n,
           (unsigned long long) held);
    qc_mem_ticket_t never = { 0 };
    qc_mem_gate_add (&never, 10 * (int64_t) MB);     /* not admitted: nothing */
    qc_mem_gate_add (NULL, 10 * (int64_t) MB);
    qc_mem_gate_held (&n, &held);
    CHECK (n == 0 && held == 0 && never.bytes == 0);

    /* a hold (a GPU lane's slide): in at once, no slide counted; the
       host memory it adds (its images run again on the host) holds the
       next slide out; all of it goes back, even below nothing added */
    qc_mem_ticket_t lane;
    qc_mem_gate_hold (&lane);
    CHECK (lane.in && lane.hold && lane.bytes == 0);
    qc_mem_gate_held (&n, &held);
    CHECK (n == 0 && held == 0, "a hold counted as a slide: %u, %llu", n,
           (unsigned long long) held);
    start (&a, 64);
    CHECK (admitted_within (&a, 5));
    uint64_t est = qc_mem_gate_estimate (pixels_for (70));
    CHECK (est > 69 * MB && est <= 70 * MB && qc_mem_gate_estimate (0) == 64 * MB
           && qc_mem_gate_estimate (UINT64_MAX) == UINT64_MAX);
    qc_mem_gate_add (&lane, 70 * (int64_t) MB);
    qc_mem_gate_held (&n, &held);
    CHECK (n == 1 && held == 134 * MB, "%u slides, %llu bytes held", n,
           (unsigned long long) held);
    start (&b, 64);
    CHECK (!admitted_within (&b, 0.3), "64 MB went in beside a slide and a lane's 70 MB "
           "under 150");
    qc_mem_gate_add (&lane, -500 * (int64_t) MB);
    CHECK (lane.bytes == 0 && admitted_within (&b, 5), "the lane's bytes given back did "
           "not let the slide in: %llu", (unsigned long long) lane.bytes);
    finish (&a);
    finish (&b);
    /* no slide running, the lane's bytes still held: a slide that does
       not fit beside them waits for them (it does not go in alone) */
    qc_mem_gate_add (&lane, 120 * (int64_t) MB);
    start (&c, 64);
    CHECK (!admitted_within (&c, 0.3), "64 MB went in beside a lane's 120 MB under 150 "
           "with no slide running");
    qc_mem_gate_add (&lane, -90 * (int64_t) MB);
    CHECK (admitted_within (&c, 5), "the lane's bytes given back did not let it in");
    finish (&c);
    qc_mem_gate_leave (&lane);
    qc_mem_gate_leave (&lane);      /* once only */
    qc_mem_gate_held (&n, &held);
    CHECK (n == 0 && held == 0 && !lane.in, "%u slides, %llu bytes held after a hold",
           n, (unsigned long long) held);
    qc_mem_gate_hold (NULL);

    /* GPU lanes taking turns, a hold a slide, always hold some bytes: the
       slide first in line waits for the holds open when it began to
       wait, not for those opened since (it waited for ever, a review
       found); a slide that begins to wait later waits for them */
    qc_mem_ticket_t lane1, lane2, lane3, lane4;
    qc_mem_gate_hold (&lane1);
    qc_mem_gate_add (&lane1, 100 * (int64_t) MB);
    start (&a, 64);
    CHECK (!admitted_within (&a, 0.3), "64 MB went in beside a lane's 100 MB under 150");
    lane_turn (&lane2, 100, &lane1);
    CHECK (admitted_within (&a, 5), "a slide waited for a hold opened after it began "
           "to wait");
    finish (&a);
    start (&b, 64);
    CHECK (!admitted_within (&b, 0.3), "a hold open when the slide began to wait did "
           "not hold it out");
    lane_turn (&lane3, 10, &lane2);
    CHECK (admitted_within (&b, 5), "the lane's bytes given back did not let it in");
    finish (&b);
    /* over the budget, it runs alone: alone of the holds it waited for */
    start (&c, 200);
    CHECK (!admitted_within (&c, 0.3), "a slide over the budget went in beside a "
           "lane's bytes");
    lane_turn (&lane4, 10, &lane3);
    CHECK (admitted_within (&c, 5), "a slide over the budget waited for a hold opened "
           "after it began to wait");
    finish (&c);
    qc_mem_gate_leave (&lane4);
    qc_mem_gate_held (&n, &held);
    CHECK (n == 0 && held == 0, "%u slides, %llu bytes held after lanes taking turns",
           n, (unsigned long long) held);

    /* a larger budget set while a slide waits lets it in */
    start (&a, 100);
    CHECK (admitted_within (&a, 5));
    start (&b, 100);
    CHECK (!admitted_within (&b, 0.3));
    qc_mem_gate_set_budget (300 * MB);
    CHECK (admitted_within (&b, 5), "a larger budget did not wake the waiting slide");
    finish (&a);
    finish (&b);

    /* 0: no gate; nothing is held */
    qc_mem_gate_set_budget (0);
    start (&a, 100000);
    start (&b, 100000);
    CHECK (admitted_within (&a, 5) && admitted_within (&b, 5), "budget 0 held a slide");
    CHECK (!a.ticket.in && !b.ticket.in, "budget 0 held bytes");
    qc_mem_gate_hold (&lane);
    qc_mem_gate_add (&lane, 10 * (int64_t) MB);
    CHECK (!lane.in && lane.bytes == 0, "budget 0: a hold held bytes");
    finish (&a);
    finish (&b);
    qc_mem_gate_held (&n, &held);
    CHECK (n == 0 && held == 0);

    /* the default: three quarters of the memory, less the image cache */
    CHECK (qc_mem_gate_default_budget () > 0, "no default budget on this machine");
    return check_done ("mem_gate");
}
