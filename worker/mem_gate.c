/* The worker's memory gate; see mem_gate.h. Tickets in the order slides
 * came: the first waiting one goes in when it fits (or when nothing
 * runs), and those behind it wait for it. Holds never wait: what the
 * first in line waits for is the holds open when it began to wait, not
 * those opened since (s_marked). */
#include "worker/mem_gate.h"

#include <pthread.h>
#include <stdio.h>

#include "kernels/image/image_cache.h"
#include "shared/cgroup_limits.h"
#include "shared/clock.h"
#include "shared/err.h"
#include "shared/log.h"

#define MOD "worker"

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_turn = PTHREAD_COND_INITIALIZER;
static bool s_budget_set;
static uint64_t s_budget;            /* 0: no gate */
static uint64_t s_held;              /* estimates of the slides admitted */
static unsigned s_running;           /* slides admitted */
static uint64_t s_held_by_holds;     /* of s_held, what holds hold (qc_mem_gate_hold) */
static uint64_t s_next, s_serving;   /* tickets given, the one served next */
/* While the first in line waits: holds up to s_mark (by qc_mem_ticket_t.
 * hold_no) were open when it began to wait, and s_late_bytes is what
 * holds opened since hold. A GPU lane opens a hold a slide, so lanes
 * taking turns always held some bytes: a slide that waited for them all
 * to hold none waited for ever (a review's test: 2 lanes, 475 of their
 * slides in 5 s, the CPU slide still waiting). */
static bool s_marked;
static uint64_t s_holds_opened, s_mark, s_late_bytes;

uint64_t
qc_mem_gate_default_budget (void)
{
    uint64_t total = qc_memory_total ();
    uint64_t cache = qc_image_cache_limit ();
    uint64_t budget = total / 4 * 3;
    return budget > cache ? budget - cache : budget / 2;
}

static void
budget_locked (void)
{
    if (!s_budget_set) {
        s_budget = qc_mem_gate_default_budget ();
        s_budget_set = true;
    }
}

void
qc_mem_gate_set_budget (uint64_t bytes)
{
    pthread_mutex_lock (&s_lock);
    s_budget = bytes;
    s_budget_set = true;
    pthread_cond_broadcast (&s_turn);
    pthread_mutex_unlock (&s_lock);
}

uint64_t
qc_mem_gate_budget (void)
{
    pthread_mutex_lock (&s_lock);
    budget_locked ();
    uint64_t b = s_budget;
    pthread_mutex_unlock (&s_lock);
    return b;
}

static double
gb (uint64_t bytes)
{
    return (double) bytes / 1e9;         /* as --memory-gb (shared/cli.h) */
}

/* *counter less was plus now, kept within 0 and UINT64_MAX: a ticket's
 * bytes changed (now 0: it left) in each count that holds them. */
static void
recount (uint64_t *counter, uint64_t was, uint64_t now)
{
    *counter -= was <= *counter ? was : *counter;
    *counter = *counter > UINT64_MAX - now ? UINT64_MAX : *counter + now;
}

/* Whether hold t was opened after the first in line began to wait. */
static bool
late_locked (const qc_mem_ticket_t *t)
{
    return s_marked && t->hold && t->hold_no > s_mark;
}

/* Whether the first ticket in line, of bytes, can go in now, counting
 * the holds that were open when it began to wait only. */
static bool
fits_locked (uint64_t bytes)
{
    uint64_t held = s_held - s_late_bytes, by_holds = s_held_by_holds - s_late_bytes;
    /* alone when nothing else holds memory: a GPU lane's hold is not a
       slide, but its bytes are there all the same */
    return !s_budget || (s_running == 0 && by_holds == 0) || held + bytes <= s_budget;
}

void
qc_mem_gate_enter (qc_mem_ticket_t *t, uint64_t work_pixels)
{
    if (!t)
        return;
    t->in = false;
    t->hold = false;
    t->hold_no = 0;
    t->waited_s = 0;
    uint64_t need = qc_mem_gate_estimate (work_pixels);
    t->bytes = need;
    pthread_mutex_lock (&s_lock);
    budget_locked ();
    uint64_t budget = s_budget;
    if (!budget) {
        pthread_mutex_unlock (&s_lock);
        return;
    }
    bool alone = t->bytes > budget;
    if (alone)
        t->bytes = budget;   /* it runs when nothing else does, and fills the gate */
    uint64_t ticket = s_next++;
    double t0 = 0;
    bool said = false;
    while (ticket != s_serving || !fits_locked (t->bytes)) {
        if (ticket == s_serving && !s_marked) {
            s_marked = true;            /* first in line, and it waits */
            s_mark = s_holds_opened;
            s_late_bytes = 0;
        }
        if (ticket == s_serving && !said) {
            /* first in line and it does not fit: say so once, outside
               the lock (a log record goes to a socket) */
            unsigned running = s_running;
            uint64_t held = s_held, by_holds = s_held_by_holds;
            pthread_mutex_unlock (&s_lock);
            said = true;
            t0 = qc_clock_s ();
            char lanes[80] = "";
            if (by_holds)
                snprintf (lanes, sizeof lanes, " (%.1f GB of it the GPU lanes' host "
                          "memory)", gb (by_holds));
            qc_log (QC_LOG_INFO, MOD, "waits for memory: its images need about "
                    "%.1f GB; the %u slide%s running hold about %.1f GB%s of this "
                    "worker's %.1f GB (--memory-gb sets it)", gb (t->bytes),
                    running, qc_plural (running), gb (held), lanes, gb (budget));
            pthread_mutex_lock (&s_lock);
            continue;
        }
        pthread_cond_wait (&s_turn, &s_lock);
    }
    s_serving++;
    s_marked = false;                    /* the next in line marks its own */
    s_late_bytes = 0;
    t->entered = t->bytes;
    s_held += t->bytes;
    s_running++;
    t->in = true;
    pthread_cond_broadcast (&s_turn);    /* the next in line may fit too */
    pthread_mutex_unlock (&s_lock);
    if (said) {
        t->waited_s = qc_clock_s () - t0;
        qc_log (QC_LOG_INFO, MOD, "goes on after %.1f s waiting for memory",
                t->waited_s);
    }
    if (alone)
        qc_log (QC_LOG_WARNING, MOD, "its image of %llu pixels needs about %.1f GB, "
                "more than this worker's memory budget of %.1f GB: it runs alone "
                "(a smaller image_work_size, or --memory-gb on a machine with "
                "more memory)", (unsigned long long) work_pixels, gb (need),
                gb (budget));
}

uint64_t
qc_mem_gate_estimate (uint64_t work_pixels)
{
    uint64_t per_pixel = QC_MEM_GATE_BYTES_PER_PIXEL;
    return work_pixels > (UINT64_MAX - QC_MEM_GATE_BYTES_PER_SLIDE) / per_pixel
           ? UINT64_MAX : work_pixels * per_pixel + QC_MEM_GATE_BYTES_PER_SLIDE;
}

void
qc_mem_gate_hold (qc_mem_ticket_t *t)
{
    if (!t)
        return;
    *t = (qc_mem_ticket_t) { 0 };
    pthread_mutex_lock (&s_lock);
    budget_locked ();
    /* no gate: nothing to count against */
    t->in = t->hold = s_budget != 0;
    t->hold_no = ++s_holds_opened;
    pthread_mutex_unlock (&s_lock);
}

void
qc_mem_gate_leave (qc_mem_ticket_t *t)
{
    if (!t || !t->in)
        return;
    pthread_mutex_lock (&s_lock);
    recount (&s_held, t->bytes, 0);
    if (late_locked (t))
        recount (&s_late_bytes, t->bytes, 0);
    if (t->hold)
        recount (&s_held_by_holds, t->bytes, 0);
    else if (s_running)
        s_running--;
    t->in = false;          /* under the lock, as qc_mem_gate_add reads it */
    pthread_cond_broadcast (&s_turn);
    pthread_mutex_unlock (&s_lock);
}

void
qc_mem_gate_add (qc_mem_ticket_t *t, int64_t bytes)
{
    if (!t || bytes == 0)
        return;
    pthread_mutex_lock (&s_lock);
    if (t->in) {
        uint64_t was = t->bytes, now;
        if (bytes > 0)
            now = was > UINT64_MAX - (uint64_t) bytes ? UINT64_MAX : was + (uint64_t) bytes;
        else {
            uint64_t less = bytes == INT64_MIN ? (uint64_t) INT64_MAX + 1 : (uint64_t) -bytes;
            now = was - t->entered > less ? was - less : t->entered;
        }
        t->bytes = now;
        recount (&s_held, was, now);
        if (t->hold)
            recount (&s_held_by_holds, was, now);
        if (late_locked (t))
            recount (&s_late_bytes, was, now);
        if (now < was)
            pthread_cond_broadcast (&s_turn);   /* room for the next in line */
    }
    pthread_mutex_unlock (&s_lock);
}

void
qc_mem_gate_held (unsigned *slides, uint64_t *bytes)
{
    pthread_mutex_lock (&s_lock);
    if (slides)
        *slides = s_running;
    if (bytes)
        *bytes = s_held;
    pthread_mutex_unlock (&s_lock);
}
