/* A byte source over a local file: pread, counted (contract in
 * byte_source.h). Here in shared/ because the slide object opens one
 * too (a local OME-TIFF, kernels/slide/slide.c), not only the fetcher. */
#include "shared/byte_source_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/err.h"

typedef struct {
    qc_byte_source_t base;
    int fd;
    int64_t size;
    char *path;
    atomic_ullong bytes, requests;
} file_source_t;

static int64_t
file_size (qc_byte_source_t *s)
{
    return ((file_source_t *) s)->size;
}

static int64_t
file_read_at (qc_byte_source_t *s, uint64_t offset, size_t len, void *buf,
              char *err, size_t errlen)
{
    file_source_t *self = (file_source_t *) s;
    if (offset >= (uint64_t) self->size)
        return 0;
    if (len > (uint64_t) self->size - offset)
        len = (size_t) ((uint64_t) self->size - offset);
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread (self->fd, (char *) buf + done, len - done,
                           (off_t) (offset + done));
        atomic_fetch_add (&self->requests, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return qc_fail (err, errlen, "%s: read failed: %s", self->path,
                            strerror (errno));
        if (n == 0)
            return qc_fail (err, errlen, "%s: the file shrank while it was read",
                            self->path);
        done += (size_t) n;
    }
    atomic_fetch_add (&self->bytes, done);
    return (int64_t) done;
}

static void
file_stats (qc_byte_source_t *s, qc_byte_source_stats_t *out)
{
    file_source_t *self = (file_source_t *) s;
    out->bytes_fetched = out->bytes_read = atomic_load (&self->bytes);
    out->requests = atomic_load (&self->requests);
}

static void
file_close (qc_byte_source_t *s)
{
    file_source_t *self = (file_source_t *) s;
    if (self->fd >= 0)
        close (self->fd);
    free (self->path);
    free (self);
}

static const qc_byte_source_ops_t file_ops = {
    .size = file_size,
    .read_at = file_read_at,
    .stats = file_stats,
    .close = file_close,
};

qc_byte_source_t *
qc_byte_source_file_open (const char *path, char *err, size_t errlen)
{
    if (!path || !*path) {
        qc_set_err (err, errlen, "qc_byte_source_file_open: no path");
        return NULL;
    }
    file_source_t *self = calloc (1, sizeof *self);
    if (!self || !(self->path = strdup (path))) {
        free (self);
        qc_set_err (err, errlen, "%s: out of memory", path);
        return NULL;
    }
    self->base.ops = &file_ops;
    self->base.name = self->path;
    struct stat st;
    if ((self->fd = open (path, O_RDONLY | O_CLOEXEC)) < 0 || fstat (self->fd, &st) < 0) {
        qc_set_err (err, errlen, "%s: %s", path, strerror (errno));
        file_close (&self->base);
        return NULL;
    }
    if (!S_ISREG (st.st_mode)) {
        qc_set_err (err, errlen, "%s: not a regular file", path);
        file_close (&self->base);
        return NULL;
    }
    self->size = st.st_size;
    return &self->base;
}
