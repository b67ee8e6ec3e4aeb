/* See journal.h. */
#include "broker/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct qc_jfile {
    char *path;
    int fd;
    uint64_t size;             /* committed bytes in the file */
    uint8_t *buf;              /* appended, not yet written */
    size_t nbuf, capbuf;
};

/* ---------------------------------------------------------------- parse */

static uint32_t
record_crc (uint8_t type, const uint8_t *data, uint32_t len)
{
    uLong c = crc32 (0L, Z_NULL, 0);
    c = crc32 (c, &type, 1);
    /* zlib takes lengths as uInt: a payload over 4 GiB is refused
     * before it gets here */
    c = crc32 (c, data, len);
    return (uint32_t) c;
}

int
qc_jrec_parse (const uint8_t *buf, size_t len, size_t pos, bool check_crc,
               qc_jrec_t *rec)
{
    if (!buf || !rec || pos > len)
        return -1;
    if (pos == len)
        return 0;
    if (len - pos < QC_JREC_HEADER)
        return -1;
    const uint8_t *h = buf + pos;
    uint32_t n = qc_get_u32 (h);
    if (n > QC_JREC_MAX_PAYLOAD || n > len - pos - QC_JREC_HEADER)
        return -1;
    uint8_t type = h[8];
    if (check_crc && record_crc (type, h + QC_JREC_HEADER, n) != qc_get_u32 (h + 4))
        return -1;
    rec->type = type;
    rec->data = h + QC_JREC_HEADER;
    rec->len = n;
    rec->off = pos;
    rec->next = pos + QC_JREC_HEADER + n;
    return 1;
}

size_t
qc_jrec_resync (const uint8_t *buf, size_t len, size_t pos)
{
    qc_jrec_t rec;
    for (size_t p = pos + 1; buf && p + QC_JREC_HEADER <= len; p++)
        if (qc_jrec_parse (buf, len, p, true, &rec) == 1)
            return p;
    return len;
}

/* ---------------------------------------------------------------- files */

static int
reserve (qc_jfile_t *self, size_t more)
{
    if (more > SIZE_MAX / 2 - self->nbuf)
        return -1;
    if (self->nbuf + more <= self->capbuf)
        return 0;
    size_t cap = self->capbuf ? self->capbuf : 64 * 1024;
    while (cap < self->nbuf + more)
        cap *= 2;
    uint8_t *b = realloc (self->buf, cap);
    if (!b)
        return -1;
    self->buf = b;
    self->capbuf = cap;
    return 0;
}

qc_jfile_t *
qc_jfile_open (const char *path, const char *magic, char *err, size_t errlen)
{
    if (!path || !magic || !err) {
        if (err) snprintf (err, errlen, "qc_jfile_open: bad arguments");
        return NULL;
    }
    qc_jfile_t *self = calloc (1, sizeof *self);
    if (!self || !(self->path = strdup (path))) {
        snprintf (err, errlen, "out of memory");
        free (self);
        return NULL;
    }
    self->fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    struct stat st;
    int e = 0;
    if (self->fd < 0 || fstat (self->fd, &st)) {
        e = errno;
        snprintf (err, errlen, "cannot open %s: %s%s", path, strerror (e),
                  e == EMFILE || e == ENFILE ? " (raise the broker's open-file limit: "
                  "ulimit -n, or LimitNOFILE= in its systemd unit)" : "");
        goto fail;
    }
    if (st.st_size == 0) {
        /* new: the header goes first, synced with the first commit */
        if (reserve (self, QC_JFILE_MAGIC_LEN)) {
            snprintf (err, errlen, "out of memory");
            goto fail;
        }
        memcpy (self->buf, magic, QC_JFILE_MAGIC_LEN);
        self->nbuf = QC_JFILE_MAGIC_LEN;
        return self;
    }
    char head[QC_JFILE_MAGIC_LEN];
    if (st.st_size < QC_JFILE_MAGIC_LEN
        || pread (self->fd, head, sizeof head, 0) != (ssize_t) sizeof head
        || memcmp (head, magic, QC_JFILE_MAGIC_LEN) != 0) {
        snprintf (err, errlen, "%s is not a %.*s file (its first bytes differ)", path,
                  (int) strcspn (magic, "\n"), magic);
        e = EBADMSG;            /* the file's fault, not the machine's */
        goto fail;
    }
    self->size = (uint64_t) st.st_size;
    return self;
fail:
    qc_jfile_close (&self);
    errno = e;
    return NULL;
}

void
qc_jfile_close (qc_jfile_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_jfile_t *self = *self_p;
    if (self->fd >= 0)
        close (self->fd);
    free (self->buf);
    free (self->path);
    free (self);
    *self_p = NULL;
}

const char *
qc_jfile_path (const qc_jfile_t *self)
{
    return self ? self->path : NULL;
}

int
qc_jfile_append (qc_jfile_t *self, uint8_t type, const void *a, size_t alen,
                 const void *b, size_t blen, uint64_t *off)
{
    if (!self || (alen && !a) || (blen && !b) || alen > QC_JREC_MAX_PAYLOAD
        || blen > QC_JREC_MAX_PAYLOAD - alen)
        return -1;
    size_t n = alen + blen;
    if (reserve (self, QC_JREC_HEADER + n))
        return -1;
    uint8_t *h = self->buf + self->nbuf;
    if (alen) memcpy (h + QC_JREC_HEADER, a, alen);
    if (blen) memcpy (h + QC_JREC_HEADER + alen, b, blen);
    qc_put_u32 (h, (uint32_t) n);
    qc_put_u32 (h + 4, record_crc (type, h + QC_JREC_HEADER, (uint32_t) n));
    h[8] = type;
    if (off)
        *off = self->size + self->nbuf;
    self->nbuf += QC_JREC_HEADER + n;
    return 0;
}

int
qc_jfile_append_raw (qc_jfile_t *self, const void *data, size_t len)
{
    if (!self || (len && !data) || reserve (self, len))
        return -1;
    if (len)
        memcpy (self->buf + self->nbuf, data, len);
    self->nbuf += len;
    return 0;
}

int
qc_jfile_commit (qc_jfile_t *self, bool sync)
{
    if (!self) {
        errno = EINVAL;
        return -1;
    }
    size_t done = 0;
    while (done < self->nbuf) {
        ssize_t w = pwrite (self->fd, self->buf + done, self->nbuf - done,
                            (off_t) (self->size + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            /* a record is on disk whole or not at all: cut what this
             * commit wrote, keep the buffer for the next try */
            if (ftruncate (self->fd, (off_t) self->size)) {
                /* nothing better to do: the next read of the file drops
                 * the torn tail */
            }
            errno = e;
            return -1;
        }
        done += (size_t) w;
    }
    if (sync && fdatasync (self->fd)) {
        int e = errno;
        if (ftruncate (self->fd, (off_t) self->size)) {
            /* as above */
        }
        errno = e;
        return -1;
    }
    self->size += self->nbuf;
    self->nbuf = 0;
    if (self->capbuf > 16u << 20) {
        /* a burst of large results: do not keep its buffer for ever */
        free (self->buf);
        self->buf = NULL;
        self->capbuf = 0;
    }
    return 0;
}

void
qc_jfile_release_buffer (qc_jfile_t *self)
{
    if (!self || self->nbuf)
        return;
    free (self->buf);
    self->buf = NULL;
    self->capbuf = 0;
}

size_t
qc_jfile_pending (const qc_jfile_t *self)
{
    return self ? self->nbuf : 0;
}

size_t
qc_jfile_drop_pending (qc_jfile_t *self, const uint8_t *drop, size_t ndrop)
{
    if (!self)
        return 0;
    size_t in = self->size == 0 && self->nbuf >= QC_JFILE_MAGIC_LEN ? QC_JFILE_MAGIC_LEN : 0;
    size_t out = in, dropped = 0;
    qc_jrec_t rec;
    while (qc_jrec_parse (self->buf, self->nbuf, in, false, &rec) == 1) {
        bool kill = false;
        for (size_t i = 0; i < ndrop; i++)
            kill |= rec.type == drop[i];
        size_t n = (size_t) (rec.next - rec.off);
        if (kill)
            dropped++;
        else {
            memmove (self->buf + out, self->buf + in, n);
            out += n;
        }
        in += n;
    }
    self->nbuf = out;
    return dropped;
}

uint64_t
qc_jfile_size (const qc_jfile_t *self)
{
    return self ? self->size : 0;
}

int
qc_jfile_read (qc_jfile_t *self, uint64_t off, void *buf, size_t len)
{
    if (!self || (len && !buf) || off > self->size + self->nbuf
        || len > self->size + self->nbuf - off)
        return -1;
    uint8_t *p = buf;
    while (len && off < self->size) {
        size_t n = self->size - off < len ? (size_t) (self->size - off) : len;
        ssize_t r = pread (self->fd, p, n, (off_t) off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        off += (uint64_t) r;
        len -= (size_t) r;
    }
    if (len)
        memcpy (p, self->buf + (off - self->size), len);
    return 0;
}

int
qc_jfile_truncate (qc_jfile_t *self, uint64_t size)
{
    if (!self || size > self->size || self->nbuf)
        return -1;
    if (ftruncate (self->fd, (off_t) size) || fdatasync (self->fd))
        return -1;
    self->size = size;
    return 0;
}

int
qc_jfile_map (const qc_jfile_t *self, const uint8_t **data, size_t *len,
              char *err, size_t errlen)
{
    if (!self || !data || !len)
        return -1;
    *data = NULL;
    *len = (size_t) self->size;
    if (!self->size)
        return 0;
    void *p = mmap (NULL, *len, PROT_READ, MAP_PRIVATE, self->fd, 0);
    if (p == MAP_FAILED) {
        if (err) snprintf (err, errlen, "cannot read %s: %s", self->path, strerror (errno));
        return -1;
    }
    madvise (p, *len, MADV_SEQUENTIAL);
    *data = p;
    return 0;
}

void
qc_jfile_unmap (const uint8_t *data, size_t len)
{
    if (data && len)
        munmap ((void *) data, len);
}
