/* See image_cache.h. A small array under one mutex: a slide makes a few
 * dozen large planes, so a linear scan is cheaper than any index. */
#include "kernels/image/image_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/cgroup_limits.h"
#include "shared/err.h"

#if defined(__SANITIZE_ADDRESS__)
#define CACHE_BUILT 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CACHE_BUILT 0
#endif
#endif
#ifndef CACHE_BUILT
#define CACHE_BUILT 1
#endif

typedef struct {
    void *p;
    size_t bytes;
    uint64_t given;           /* when it came back, in gives: oldest goes first */
} slot_t;

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static slot_t s_slots[QC_IMAGE_CACHE_SLOTS];
static size_t s_nslots, s_held, s_limit;
static uint64_t s_gives;
static int s_limit_set;
/* Bytes taken and not given back, and the most since the last reset:
 * what a slide's images hold (qc_image_cache_in_use) */
static atomic_size_t s_in_use, s_peak;

static void
count_taken (size_t bytes)
{
    size_t now = atomic_fetch_add (&s_in_use, bytes) + bytes;
    size_t peak = atomic_load (&s_peak);
    while (now > peak && !atomic_compare_exchange_weak (&s_peak, &peak, now))
        ;
}

/* The default limit: QC_IMAGE_CACHE_DEFAULT, but no more than an eighth
 * of the machine's memory, or of a control group's memory limit (a
 * container's: sysconf counts the host's), or a quarter of the address space a limit
 * leaves the process (ulimit -v under a batch system): what is cached
 * is memory a slide cannot have. */
static size_t
default_limit (void)
{
    uint64_t limit = QC_IMAGE_CACHE_DEFAULT;
    uint64_t machine = qc_memory_machine (), as = qc_memory_address_limit ();
    if (machine && machine / 8 < limit)
        limit = machine / 8;
    if (as && as / 4 < limit)
        limit = as / 4;
    return (size_t) limit;
}

/* The limit, from QC_IMAGE_CACHE_MB at the first use (lock held). */
static size_t
limit_locked (void)
{
    if (!s_limit_set) {
        s_limit = CACHE_BUILT ? default_limit () : 0;
        const char *env = getenv ("QC_IMAGE_CACHE_MB");
        if (CACHE_BUILT && env && *env) {
            char *end;
            unsigned long long mb = strtoull (env, &end, 10);
            if (*end == 0 && mb <= SIZE_MAX >> 20)
                s_limit = (size_t) mb << 20;
        }
        s_limit_set = 1;
    }
    return s_limit;
}

/* A cached buffer of at least bytes (and at most a quarter more), or
 * NULL when none is held. */
static void *
take_cached (size_t bytes)
{
    void *p = NULL;
    pthread_mutex_lock (&s_lock);
    size_t best = s_nslots;
    for (size_t i = 0; i < s_nslots; i++)
        if (s_slots[i].bytes >= bytes && s_slots[i].bytes - bytes <= bytes / 4
            && (best == s_nslots || s_slots[i].bytes < s_slots[best].bytes))
            best = i;
    if (best < s_nslots) {
        p = s_slots[best].p;
        s_held -= s_slots[best].bytes;
        s_slots[best] = s_slots[--s_nslots];
    }
    pthread_mutex_unlock (&s_lock);
    return p;
}

/* A new buffer from calloc or malloc; when there is no memory for it,
 * the cached buffers are freed and it is asked for again: they are
 * memory this slide needs more than a later one. */
static void *
fresh (size_t bytes, bool zeroed)
{
    size_t n = bytes ? bytes : 1;
    void *p = zeroed ? calloc (1, n) : malloc (n);
    size_t held = 0;
    if (!p)                     /* the lock only when memory ran out */
        qc_image_cache_held (NULL, &held);
    if (!p && held) {
        qc_image_cache_release ();
        p = zeroed ? calloc (1, n) : malloc (n);
    }
    if (!p)
        qc_oom_note ();
    return p;
}

void *
qc_image_cache_take (size_t bytes)
{
    void *p = bytes >= QC_IMAGE_CACHE_MIN ? take_cached (bytes) : NULL;
    if (p)
        memset (p, 0, bytes);
    else
        p = fresh (bytes, true);
    if (p)
        count_taken (bytes);
    return p;
}

void *
qc_image_cache_take_uninit (size_t bytes)
{
    void *p = bytes >= QC_IMAGE_CACHE_MIN ? take_cached (bytes) : NULL;
    if (!p)
        p = fresh (bytes, false);
    if (p)
        count_taken (bytes);
    return p;
}

void
qc_image_cache_give (void *p, size_t bytes)
{
    if (!p)
        return;
    atomic_fetch_sub (&s_in_use, bytes);
    void *drop[QC_IMAGE_CACHE_SLOTS];
    size_t ndrop = 0;
    bool kept = false;
    if (bytes >= QC_IMAGE_CACHE_MIN) {
        pthread_mutex_lock (&s_lock);
        if (bytes <= limit_locked ()) {
            /* room made by the buffers given back longest ago: a cohort's
               sizes change (a larger slide's planes fit no smaller
               slide's), and the newest are the likeliest asked for next */
            while (s_nslots && (s_nslots == QC_IMAGE_CACHE_SLOTS
                                || s_held + bytes > s_limit)) {
                size_t old = 0;
                for (size_t i = 1; i < s_nslots; i++)
                    if (s_slots[i].given < s_slots[old].given)
                        old = i;
                drop[ndrop++] = s_slots[old].p;
                s_held -= s_slots[old].bytes;
                s_slots[old] = s_slots[--s_nslots];
            }
            s_slots[s_nslots++] = (slot_t) { p, bytes, ++s_gives };
            s_held += bytes;
            kept = true;
        }
        pthread_mutex_unlock (&s_lock);
    }
    for (size_t i = 0; i < ndrop; i++)
        free (drop[i]);
    if (!kept)
        free (p);
}

size_t
qc_image_cache_limit (void)
{
    pthread_mutex_lock (&s_lock);
    size_t limit = limit_locked ();
    pthread_mutex_unlock (&s_lock);
    return limit;
}

void
qc_image_cache_set_limit (size_t bytes)
{
    void *drop[QC_IMAGE_CACHE_SLOTS];
    size_t ndrop = 0;
    pthread_mutex_lock (&s_lock);
    s_limit = CACHE_BUILT ? bytes : 0;
    s_limit_set = 1;
    while (s_nslots && s_held > s_limit) {
        s_nslots--;
        s_held -= s_slots[s_nslots].bytes;
        drop[ndrop++] = s_slots[s_nslots].p;
    }
    pthread_mutex_unlock (&s_lock);
    for (size_t i = 0; i < ndrop; i++)
        free (drop[i]);
}

void
qc_image_cache_held (size_t *buffers, size_t *bytes)
{
    pthread_mutex_lock (&s_lock);
    if (buffers)
        *buffers = s_nslots;
    if (bytes)
        *bytes = s_held;
    pthread_mutex_unlock (&s_lock);
}

void
qc_image_cache_release (void)
{
    pthread_mutex_lock (&s_lock);
    size_t limit = limit_locked ();
    pthread_mutex_unlock (&s_lock);
    qc_image_cache_set_limit (0);
    qc_image_cache_set_limit (limit);
}

void
qc_image_cache_in_use (size_t *now, size_t *peak)
{
    if (now)
        *now = atomic_load (&s_in_use);
    if (peak)
        *peak = atomic_load (&s_peak);
}

void
qc_image_cache_reset_peak (void)
{
    atomic_store (&s_peak, atomic_load (&s_in_use));
}
