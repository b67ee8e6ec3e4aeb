/* TIFFClientOpen over a byte source (contract in tiff_source.h). libtiff
 * calls read, seek and size; each read is one read_at at the handle's
 * own position, so handles sharing a source do not disturb each other. */
#include "kernels/slide/tiff_source.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/err.h"

typedef struct {
    qc_byte_source_t *src;
    uint64_t pos;
    int64_t size;
    char err[512];            /* the first error reported */
    char tiff_msg[400];       /* libtiff's first error, as it said it */
    int src_failed;           /* a read of the source failed */
    qc_tiff_diag_t *diag;     /* the caller's, or NULL */
} handle_t;

static void
note (handle_t *h, const char *msg)
{
    if (!h->err[0])
        snprintf (h->err, sizeof h->err, "%s", msg);
}

static tmsize_t
on_read (thandle_t th, void *buf, tmsize_t n)
{
    handle_t *h = th;
    if (n <= 0)
        return 0;
    char why[512];
    int64_t got = qc_byte_source_read_at (h->src, h->pos, (size_t) n, buf, why,
                                          sizeof why);
    if (got < 0) {
        note (h, why);
        h->src_failed = 1;
        if (h->diag && !h->diag->source_failed) {
            h->diag->source_failed = 1;
            qc_set_err (h->diag->msg, sizeof h->diag->msg, "%s", why);
            h->diag->trouble = 1;
        }
        /* 0, not -1: libtiff 4.5 adds what a read returns to the bytes it
         * has (TIFFReadAndRealloc), and a -1 made it clear a byte before
         * its buffer (ASan, a failing source under the open's probe) */
        return 0;
    }
    h->pos += (uint64_t) got;
    return (tmsize_t) got;
}

static tmsize_t
on_write (thandle_t th, void *buf, tmsize_t n)
{
    note (th, "the TIFF is opened read-only");
    return -1;
}

static toff_t
on_seek (thandle_t th, toff_t off, int whence)
{
    handle_t *h = th;
    uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? h->pos
                    : whence == SEEK_END ? (uint64_t) h->size : UINT64_MAX;
    if (base == UINT64_MAX)
        return (toff_t) -1;
    /* libtiff passes negative offsets as large unsigned ones */
    uint64_t to = base + (uint64_t) off;
    if ((int64_t) to < 0)
        return (toff_t) -1;
    h->pos = to;
    return (toff_t) to;
}

static int
on_close (thandle_t th)
{
    free (th);
    return 0;
}

static toff_t
on_size (thandle_t th)
{
    return (toff_t) ((handle_t *) th)->size;
}

static int
on_map (thandle_t th, void **base, toff_t *size)
{
    return 0;   /* no mapping: every read goes through on_read */
}

static void
on_unmap (thandle_t th, void *base, toff_t size)
{
}

/* A libtiff message into the caller's diag (the first one kept). */
static void
to_diag (handle_t *h, const char *module, const char *msg)
{
    if (!h->diag)
        return;
    if (!h->diag->trouble)
        qc_set_err (h->diag->msg, sizeof h->diag->msg, "libtiff %s: %s",
                    module ? module : "", msg);
    h->diag->trouble = 1;
}

static int
on_message (TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    handle_t *h = user;
    char msg[400];
    vsnprintf (msg, sizeof msg, fmt, ap);
    to_diag (h, module, msg);
    if (h->diag && !h->diag->error) {
        h->diag->error = 1;
        qc_set_err (h->diag->error_msg, sizeof h->diag->error_msg, "libtiff %s: %s",
                    module ? module : "", msg);
    }
    char line[512];
    snprintf (line, sizeof line, "%s: %s", qc_byte_source_name (h->src), msg);
    note (h, line);
    if (!h->tiff_msg[0])
        snprintf (h->tiff_msg, sizeof h->tiff_msg, "%s", msg);
    return 1;   /* handled: not printed on stderr */
}

static int
on_warning (TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    /* unknown tags and the like: not an error, but trouble for a caller
       that asked (the direct reader leaves such files to OpenSlide) */
    handle_t *h = user;
    if (h->diag) {
        char msg[400];
        vsnprintf (msg, sizeof msg, fmt, ap);
        to_diag (h, module, msg);
    }
    return 1;
}

TIFF *
qc_tiff_open_source (qc_byte_source_t *src, char *err, size_t errlen)
{
    return qc_tiff_open_source_diag (src, NULL, NULL, err, errlen);
}

TIFF *
qc_tiff_open_source_diag (qc_byte_source_t *src, qc_tiff_diag_t *diag,
                          int *src_failed, char *err, size_t errlen)
{
    if (src_failed)
        *src_failed = 0;
    if (!src) {
        qc_set_err (err, errlen, "qc_tiff_open_source: no source");
        return NULL;
    }
    handle_t *h = calloc (1, sizeof *h);
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();
    if (!h || !opts) {
        free (h);
        TIFFOpenOptionsFree (opts);
        qc_set_err (err, errlen, "%s: out of memory", qc_byte_source_name (src));
        return NULL;
    }
    h->src = src;
    h->diag = diag;
    h->size = qc_byte_source_size (src);
    TIFFOpenOptionsSetErrorHandlerExtR (opts, on_message, h);
    TIFFOpenOptionsSetWarningHandlerExtR (opts, on_warning, h);
    TIFF *tif = TIFFClientOpenExt (qc_byte_source_name (src), "rmO", h, on_read,
                                   on_write, on_seek, on_close, on_size, on_map,
                                   on_unmap, opts);
    TIFFOpenOptionsFree (opts);
    if (!tif) {
        /* a failed open does not call on_close (libtiff 4.5's
           TIFFClientOpenExt cleans up without it; the sanitizer run of
           test_fetch_http opens a non-TIFF to check), so h is ours */
        if (src_failed)
            *src_failed = h->src_failed;
        if (h->src_failed || (h->err[0] && !h->tiff_msg[0]))
            qc_set_err (err, errlen, "%s", h->err);   /* the source's words */
        else
            qc_set_err (err, errlen, "%s: not a TIFF file, or a damaged one (libtiff: %s)",
                        qc_byte_source_name (src), h->tiff_msg[0] ? h->tiff_msg : "no reason");
        free (h);
        return NULL;
    }
    return tif;
}

const char *
qc_tiff_source_error (TIFF *tif)
{
    handle_t *h = tif ? TIFFClientdata (tif) : NULL;
    return h ? h->err : "";
}

int
qc_tiff_source_failed (TIFF *tif)
{
    handle_t *h = tif ? TIFFClientdata (tif) : NULL;
    return h ? h->src_failed : 0;
}
