/* See image_cache.h. A small array under one mutex: a slide makes a few
 * dozen large planes, so a linear scan is cheaper than any index. */
#include "kernels/image/image_cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
} slot_t;

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static slot_t s_slots[QC_IMAGE_CACHE_SLOTS];
static size_t s_nslots, s_held, s_limit;
static int s_limit_set;

/* The limit, from QC_IMAGE_CACHE_MB at the first use (lock held). */
static size_t
limit_locked (void)
{
    if (!s_limit_set) {
        s_limit = CACHE_BUILT ? QC_IMAGE_CACHE_DEFAULT : 0;
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

void *
qc_image_cache_take (size_t bytes)
{
    void *p = bytes >= QC_IMAGE_CACHE_MIN ? take_cached (bytes) : NULL;
    if (p) {
        memset (p, 0, bytes);
        return p;
    }
    p = calloc (1, bytes ? bytes : 1);
    if (!p)
        qc_oom_note ();
    return p;
}

void *
qc_image_cache_take_uninit (size_t bytes)
{
    void *p = bytes >= QC_IMAGE_CACHE_MIN ? take_cached (bytes) : NULL;
    if (!p && !(p = malloc (bytes ? bytes : 1)))
        qc_oom_note ();
    return p;
}

void
qc_image_cache_give (void *p, size_t bytes)
{
    if (!p)
        return;
    if (bytes >= QC_IMAGE_CACHE_MIN) {
        pthread_mutex_lock (&s_lock);
        int kept = 0;
        if (s_nslots < QC_IMAGE_CACHE_SLOTS && s_held + bytes <= limit_locked ()) {
            s_slots[s_nslots++] = (slot_t) { p, bytes };
            s_held += bytes;
            kept = 1;
        }
        pthread_mutex_unlock (&s_lock);
        if (kept)
            return;
    }
    free (p);
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
