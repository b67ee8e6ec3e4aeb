/* A byte source: random-access reads of one file's bytes, wherever the
 * file lives. The slide readers in kernels/ read a slide through this
 * interface and never learn whether the bytes come from a local disk or
 * from HTTP range requests (worker/fetch/ has both implementations: a
 * local file, and an HTTP one with a block cache).
 *
 * Contract of an implementation's ops:
 *   size     the file's length in bytes (fixed for the source's life).
 *   read_at  copies up to len bytes from offset into buf; returns the
 *            count, which is less than len only at the end of the file
 *            (0 at or past it), or -1 with the reason in err (which names
 *            the file, redacted when it is a URL). Safe to call from
 *            several threads at once.
 *   stats    the counters below, as of now.
 *   close    frees everything; the source is not used again.
 * The helpers below check their arguments, so callers need not. */
#ifndef QC_SHARED_BYTE_SOURCE_H
#define QC_SHARED_BYTE_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    uint64_t bytes_read;      /* bytes handed to callers by read_at */
    uint64_t bytes_fetched;   /* bytes brought from the origin (disk or
                                 network; with a cache, misses only) */
    uint64_t requests;        /* reads from the origin (HTTP requests,
                                 pread calls) */
    uint64_t cache_hits;      /* read_at calls answered from memory alone */
    uint64_t bytes_kept;      /* bytes read from a local copy of earlier
                                 fetches instead of the origin (an HTTP
                                 source's blocks kept on disk) */
} qc_byte_source_stats_t;

typedef struct qc_byte_source qc_byte_source_t;

typedef struct {
    int64_t (*size) (qc_byte_source_t *self);
    int64_t (*read_at) (qc_byte_source_t *self, uint64_t offset, size_t len,
                        void *buf, char *err, size_t errlen);
    void (*stats) (qc_byte_source_t *self, qc_byte_source_stats_t *out);
    void (*close) (qc_byte_source_t *self);
} qc_byte_source_ops_t;

struct qc_byte_source {
    const qc_byte_source_ops_t *ops;
    const char *name;         /* for messages: a path, or a redacted URL;
                                 owned by the implementation */
};

static inline int64_t
qc_byte_source_size (qc_byte_source_t *self)
{
    return self && self->ops ? self->ops->size (self) : -1;
}

static inline int64_t
qc_byte_source_read_at (qc_byte_source_t *self, uint64_t offset, size_t len,
                        void *buf, char *err, size_t errlen)
{
    if (!self || !self->ops || (!buf && len) || offset > (uint64_t) INT64_MAX) {
        if (err && errlen)
            snprintf (err, errlen, "byte source: bad read arguments");
        return -1;
    }
    if (len == 0)
        return 0;
    return self->ops->read_at (self, offset, len, buf, err, errlen);
}

static inline void
qc_byte_source_stats (qc_byte_source_t *self, qc_byte_source_stats_t *out)
{
    if (!out)
        return;
    *out = (qc_byte_source_stats_t) { 0 };
    if (self && self->ops)
        self->ops->stats (self, out);
}

static inline const char *
qc_byte_source_name (const qc_byte_source_t *self)
{
    return self && self->name ? self->name : "(no source)";
}

/* Closes *self_p and sets it to NULL; NULL or *NULL is a no-op. */
static inline void
qc_byte_source_close (qc_byte_source_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_byte_source_t *self = *self_p;
    *self_p = NULL;
    if (self->ops)
        self->ops->close (self);
}

#endif
