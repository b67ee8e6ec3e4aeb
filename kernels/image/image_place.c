/* The placement state machine of image_place.h: every change of where an
 * image's current bytes are happens here, and every copy between host
 * and device is made (and counted) here. */
#include "kernels/image/image_place.h"
#include "kernels/image/image_cache.h"

#include <stdatomic.h>
#include <string.h>

#include "shared/log.h"

static atomic_uint_fast64_t s_version;
static __thread const qc_device_t *t_home;
static __thread qc_place_count_t t_count;
static __thread qc_place_observer_t t_observer;
static __thread void *t_observer_ctx;
static __thread int t_full;

void
qc_place_set_home (const qc_device_t *d)
{
    t_home = d;
}

const qc_device_t *
qc_place_home (void)
{
    return t_home;
}

void
qc_place_note_full (void)
{
    t_full = 1;
}

int
qc_place_take_full (void)
{
    int was = t_full;
    t_full = 0;
    return was;
}

void
qc_place_counts (qc_place_count_t *out)
{
    if (out)
        *out = t_count;
}

void
qc_place_observe (qc_place_observer_t fn, void *ctx)
{
    t_observer = fn;
    t_observer_ctx = ctx;
}

static void
counted (qc_span_t s, int up)
{
    if (up) {
        t_count.up++;
        t_count.up_bytes += s.bytes;
    } else {
        t_count.down++;
        t_count.down_bytes += s.bytes;
    }
    if (t_observer)
        t_observer (t_observer_ctx, up, s.npix, s.bytes);
}

static int
span_ok (qc_span_t s)
{
    return s.at && s.px && s.bytes > 0;
}

static void
new_version (qc_place_t *at)
{
    at->version = atomic_fetch_add (&s_version, 1) + 1;
}

void
qc_span_touch (qc_span_t s)
{
    if (s.at)
        new_version (s.at);
}

/* After an access a to one side: a write leaves the other side stale and
 * ends uniformity. */
static void
after_access (qc_place_t *at, qc_access_t a, int host_side)
{
    if (a == QC_READ)
        return;
    at->uniform = 0;
    new_version (at);
    if (host_side)
        at->dev_stale = at->dev != NULL;
    else
        at->host_stale = 1;
}

void *
qc_span_host (qc_span_t s, qc_access_t a)
{
    if (!span_ok (s))
        return NULL;
    qc_place_t *at = s.at;
    /* the CPU backend's case: host bytes, never on a device */
    if (*s.px && !at->host_stale && !at->dev) {
        after_access (at, a, 1);
        return *s.px;
    }
    if (!*s.px) {
        /* a uniform 0 image needs no fill after calloc's zeroes */
        int zeroed = at->uniform && at->value == 0 && a != QC_REWRITE;
        *s.px = zeroed ? qc_image_cache_take (s.bytes)
                       : qc_image_cache_take_uninit (s.bytes);
        if (!*s.px) {
            qc_log (QC_LOG_ERROR, "image", "out of memory for %zu host bytes",
                    s.bytes);
            return NULL;
        }
        at->host_stale = !zeroed;
    }
    if (at->host_stale && a != QC_REWRITE) {
        if (at->uniform)
            memset (*s.px, at->value, s.bytes);
        else if (at->dev && !at->dev_stale && at->device) {
            if (at->device->download (*s.px, at->dev, s.bytes) != 0)
                return NULL;
            counted (s, 0);
        } else {
            qc_log (QC_LOG_ERROR, "image", "no current copy of an image's "
                    "%zu bytes on any side", s.bytes);
            return NULL;
        }
    }
    at->host_stale = 0;
    after_access (at, a, 1);
    return *s.px;
}

int
qc_span_peek (qc_span_t s, size_t offset, size_t bytes, void *out)
{
    if (!span_ok (s) || !out || offset > s.bytes || bytes > s.bytes - offset)
        return -1;
    const qc_place_t *at = s.at;
    if (at->uniform)
        memset (out, at->value, bytes);
    else if (*s.px && !at->host_stale)
        memcpy (out, (const uint8_t *) *s.px + offset, bytes);
    else if (at->dev && !at->dev_stale && at->device) {
        if (at->device->download (out, (const uint8_t *) at->dev + offset, bytes) != 0)
            return -1;
        t_count.peek_bytes += bytes;
    } else
        return -1;
    return 0;
}

void *
qc_span_device (qc_span_t s, const qc_device_t *d, qc_access_t a)
{
    if (!span_ok (s) || !d)
        return NULL;
    qc_place_t *at = s.at;
    if (at->dev && at->device != d) {
        /* bytes on another device: through the host, once */
        if (!qc_span_host (s, QC_READ))
            return NULL;
        qc_span_drop_device (s);
    }
    if (!at->dev) {
        if (!(at->dev = d->alloc (s.bytes)))
            return NULL;
        at->device = d;
        at->dev_stale = 1;
    }
    if (at->dev_stale && a != QC_REWRITE) {
        if (at->uniform) {
            if (d->fill (at->dev, at->value, s.bytes) != 0)
                return NULL;
        } else if (*s.px && !at->host_stale) {
            if (d->upload (at->dev, *s.px, s.bytes) != 0)
                return NULL;
            counted (s, 1);
        } else {
            qc_log (QC_LOG_ERROR, "image", "no current copy of an image's "
                    "%zu bytes on any side", s.bytes);
            return NULL;
        }
    }
    at->dev_stale = 0;
    after_access (at, a, 0);
    return at->dev;
}

void
qc_span_device_wrote (qc_span_t s)
{
    if (span_ok (s) && s.at->dev)
        after_access (s.at, QC_EDIT, 0);
}

void
qc_span_set_uniform (qc_span_t s, int value)
{
    if (!span_ok (s))
        return;
    s.at->uniform = 1;
    s.at->value = (uint8_t) value;
    new_version (s.at);
    s.at->host_stale = 1;
    s.at->dev_stale = 1;
}

int
qc_span_on_device (qc_span_t s, const qc_device_t *d)
{
    return span_ok (s) && d && s.at->dev && s.at->device == d
           && !s.at->dev_stale;
}

void
qc_span_drop_device (qc_span_t s)
{
    if (!s.at || !s.at->dev)
        return;
    if (s.at->device)
        s.at->device->release (s.at->dev);
    s.at->dev = NULL;
    s.at->device = NULL;
    s.at->dev_stale = 0;
}
