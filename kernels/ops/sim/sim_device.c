/* The simulated device's memory (sim_ops.h): blocks apart from the
 * images' host bytes (from the buffer cache, as theirs), poisoned when
 * new; copies are plain memcpy, counted by image_place.c like any
 * device's. */
#include "kernels/ops/sim/sim_ops.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/image/image_cache.h"
#include "shared/log.h"

/* Each block starts with its size, so that release knows what it gives
 * back; 64 bytes keep the pixels as aligned as malloc's. */
#define HEADER 64

static atomic_size_t s_held, s_peak, s_limit, s_refused;

/* s_peak = max (s_peak, now) */
static void
note_peak (size_t now)
{
    size_t seen = atomic_load (&s_peak);
    while (now > seen && !atomic_compare_exchange_weak (&s_peak, &seen, now))
        ;
}

static void *
sim_alloc (size_t bytes)
{
    if (bytes > SIZE_MAX - HEADER)
        return NULL;
    /* held + bytes within the limit, or refused as a full GPU is */
    size_t limit = atomic_load (&s_limit), held = atomic_load (&s_held);
    do {
        if (limit && (bytes > limit || held > limit - bytes)) {
            atomic_fetch_add (&s_refused, 1);
            qc_place_note_full ();
            qc_log (QC_LOG_WARNING, "sim", "%zu bytes more would pass the "
                    "simulated device's limit (%zu of %zu held)", bytes, held,
                    limit);
            return NULL;
        }
    } while (!atomic_compare_exchange_weak (&s_held, &held, held + bytes));
    /* a buffer the images' cache keeps (image_cache.h): a 10x plane's
     * hundreds of MB, mapped and faulted in afresh by every malloc, made
     * the kernel most of a simulated 10x run's time */
    unsigned char *b = qc_image_cache_take_uninit (HEADER + bytes);
    if (!b) {
        atomic_fetch_sub (&s_held, bytes);
        qc_log (QC_LOG_ERROR, "sim", "out of memory for %zu device bytes",
                bytes);
        return NULL;
    }
    note_peak (held + bytes);
    memcpy (b, &bytes, sizeof bytes);
    memset (b + HEADER, QC_SIM_POISON, bytes);
    return b + HEADER;
}

static void
sim_release (void *dev)
{
    if (!dev)
        return;
    unsigned char *b = (unsigned char *) dev - HEADER;
    size_t bytes;
    memcpy (&bytes, b, sizeof bytes);
    atomic_fetch_sub (&s_held, bytes);
    qc_image_cache_give (b, HEADER + bytes);
}

static int
sim_copy (void *dst, const void *src, size_t bytes)
{
    if (!dst || !src)
        return -1;
    memcpy (dst, src, bytes);
    return 0;
}

static int
sim_fill (void *dev, int byte, size_t bytes)
{
    if (!dev)
        return -1;
    memset (dev, byte, bytes);
    return 0;
}

static const qc_device_t sim_device = {
    .name = "simulated device",
    .alloc = sim_alloc,
    .release = sim_release,
    .upload = sim_copy,
    .download = sim_copy,
    .copy = sim_copy,
    .fill = sim_fill,
};

const qc_device_t *
qc_sim_device (void)
{
    return &sim_device;
}

size_t
qc_sim_device_held (void)
{
    return atomic_load (&s_held);
}

void
qc_sim_set_limit (size_t bytes)
{
    atomic_store (&s_limit, bytes);
}

size_t
qc_sim_device_refused (void)
{
    return atomic_load (&s_refused);
}

size_t
qc_sim_device_peak (int reset)
{
    size_t peak = atomic_load (&s_peak);
    if (reset)
        atomic_store (&s_peak, atomic_load (&s_held));
    return peak;
}
