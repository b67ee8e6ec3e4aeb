/* The disk cache's entry paths and .meta files (cache_int.h). A .meta
 * file is a few "key value" lines, so that a person can read what a
 * cache folder holds:
 *     qc-cache 1
 *     url http://host/dir/a.ndpi          (redacted)
 *     size 3544235
 *     etag "5f2a-3614ab"                  (or -)
 *     last-modified Tue, 24 Nov 2026 ...  (or -)
 *     inode 1234567                       (the slide's; 0 for a partial)
 * The inode ties a .meta to one slide file: the .meta of a new download
 * is written before the slide is renamed into place, and a reader that
 * sees the new .meta beside the old slide (or the old .meta beside the
 * new one) finds the inodes differ and treats the entry as absent, so
 * it never pairs one version's validators with another's bytes.
 *
 * A .blocks.meta (block_store.h) is the same kind of file with its own
 * first line, so that neither is ever read as the other:
 *     qc-blocks 1
 *     url, size, etag, last-modified, inode   as above
 *     block-size 65536
 *     have 0 15                               blocks 0 to 15 are held
 *     have 212 240                            (one line per run)
 * The size and block size come before the first "have" line. */
#include "worker/fetch/cache_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/url.h"

int
cache_paths (const qc_disk_cache_t *self, const char *url, entry_paths_t *p)
{
    if (qc_url_cache_name (url, p->name, sizeof p->name) < 0)
        return -1;
    /* qc_disk_cache_open keeps dir 200 characters under PATH_MAX, and
       a name is at most 130 */
    if (strlen (self->dir) + strlen (p->name) + 16 >= sizeof p->data)
        return -1;
    snprintf (p->data, sizeof p->data, "%s/%s", self->dir, p->name);
    snprintf (p->meta, sizeof p->meta, "%s/%s%s", self->dir, p->name, META_SUFFIX);
    snprintf (p->part, sizeof p->part, "%s/%s%s", self->dir, p->name, PART_SUFFIX);
    snprintf (p->part_meta, sizeof p->part_meta, "%s/%s%s%s", self->dir, p->name,
              PART_SUFFIX, META_SUFFIX);
    snprintf (p->blocks, sizeof p->blocks, "%s/%s%s", self->dir, p->name, BLOCKS_SUFFIX);
    snprintf (p->blocks_meta, sizeof p->blocks_meta, "%s/%s%s%s", self->dir, p->name,
              BLOCKS_SUFFIX, META_SUFFIX);
    return 0;
}

/* A temporary name beside path for this process and thread. */
static void
tmp_name (const char *path, char *out, size_t outlen)
{
    snprintf (out, outlen, "%s" TMP_MARK "%ld.%lx", path, (long) getpid (),
              (unsigned long) pthread_self ());
}

/* Closes f and renames tmp to path; -1 (errno set, tmp removed) when
 * anything written or the rename failed. */
static int
commit (FILE *f, const char *tmp, const char *path)
{
    int bad = ferror (f);
    if (fflush (f) != 0 || fsync (fileno (f)) != 0)
        bad = 1;
    if (fclose (f) != 0 || bad || rename (tmp, path) != 0) {
        int e = errno;
        unlink (tmp);
        errno = e ? e : EIO;
        return -1;
    }
    return 0;
}

/* Copies the rest of line after "key " into out, without the newline;
 * "-" means empty. */
static int
value (const char *line, const char *key, char *out, size_t outlen)
{
    size_t k = strlen (key);
    if (strncmp (line, key, k) != 0 || line[k] != ' ')
        return 0;
    snprintf (out, outlen, "%s", line + k + 1);
    out[strcspn (out, "\n")] = '\0';
    if (strcmp (out, "-") == 0)
        out[0] = '\0';
    return 1;
}

int
meta_read (const char *path, qc_http_file_t *file, uint64_t *ino)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return -1;
    char line[512], size[64] = "", url[8], inode[32] = "0";
    *file = (qc_http_file_t) { .size = -1 };
    int magic = 0;
    while (fgets (line, sizeof line, f)) {
        if (strcmp (line, "qc-cache 1\n") == 0)
            magic = 1;
        else if (!value (line, "size", size, sizeof size)
                 && !value (line, "etag", file->etag, sizeof file->etag)
                 && !value (line, "last-modified", file->last_modified,
                            sizeof file->last_modified))
            if (!value (line, "inode", inode, sizeof inode))
                value (line, "url", url, sizeof url);   /* for people only */
    }
    fclose (f);
    char *end;
    long long n = strtoll (size, &end, 10);
    if (!magic || end == size || n < 0)
        return -1;
    file->size = n;
    *ino = strtoull (inode, NULL, 10);
    return 0;
}

/* path made (or emptied) for writing, mode 0600 whatever the umask:
 * a cache's files are this user's alone, as its slides are (a .meta
 * names the slide's URL). NULL with errno set. */
static FILE *
open_private (const char *path)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen (fd, "w");
    if (!f) {
        int e = errno;
        close (fd);
        errno = e;
    }
    return f;
}

int
meta_write (const char *path, const char *shown, const qc_http_file_t *file, uint64_t ino)
{
    char tmp[PATH_MAX + 64];
    tmp_name (path, tmp, sizeof tmp);
    FILE *f = open_private (tmp);
    if (!f)
        return -1;
    /* a validator never holds a newline (curl splits headers on them) */
    fprintf (f, "qc-cache 1\nurl %s\nsize %lld\netag %s\nlast-modified %s\ninode %llu\n",
             shown, (long long) file->size, file->etag[0] ? file->etag : "-",
             file->last_modified[0] ? file->last_modified : "-", (unsigned long long) ino);
    return commit (f, tmp, path);
}

int
entry_valid (const char *data, const char *meta, qc_http_file_t *file)
{
    uint64_t ino;
    struct stat st;
    return meta_read (meta, file, &ino) == 0 && stat (data, &st) == 0
           && (uint64_t) st.st_ino == ino && st.st_size == file->size;
}

int
blocks_meta_alloc (blocks_meta_t *m, int64_t size, size_t block_size)
{
    if (size <= 0 || block_size < 512 || block_size > (16u << 20))
        return -1;
    uint64_t n = ((uint64_t) size + block_size - 1) / block_size;
    if (n > BLOCKS_MAX)
        return -1;
    free (m->have);
    m->have = calloc ((size_t) ((n + 7) / 8), 1);
    m->nblocks = m->have ? n : 0;
    return m->have ? 0 : -1;
}

void
blocks_meta_free (blocks_meta_t *m)
{
    if (m) {
        free (m->have);
        m->have = NULL;
        m->nblocks = 0;
    }
}

/* One "have FIRST LAST" line into m's bitmap; -1 when it is not one or
 * out of bounds. */
static int
have_line (const char *line, blocks_meta_t *m)
{
    unsigned long long a, b;
    char tail;
    if (!m->have || sscanf (line, "have %llu %llu%c", &a, &b, &tail) != 3 || tail != '\n'
        || a > b || b >= m->nblocks)
        return -1;
    for (uint64_t k = a; k <= b; k++)
        bit_set (m->have, k);
    return 0;
}

/* A decimal number that is the whole of text, into *out; -1 if not. */
static int
number (const char *text, unsigned long long *out)
{
    char *end;
    errno = 0;
    *out = strtoull (text, &end, 10);
    return text[0] >= '0' && text[0] <= '9' && end != text && !*end && !errno ? 0 : -1;
}

/* The header's numbers into m, its bitmap allocated; -1 when any is
 * missing or out of bounds. */
static int
header_done (blocks_meta_t *m, const char *size, const char *bs, const char *inode)
{
    unsigned long long sz, bsz, ino;
    if (number (size, &sz) < 0 || number (bs, &bsz) < 0 || number (inode, &ino) < 0
        || sz > (unsigned long long) INT64_MAX
        || blocks_meta_alloc (m, (int64_t) sz, (size_t) bsz) < 0)
        return -1;
    m->file.size = (int64_t) sz;
    m->file.ranges = 1;       /* only a server that honours Range gets a store */
    m->block_size = (size_t) bsz;
    m->ino = ino;
    return 0;
}

int
blocks_meta_read (const char *path, blocks_meta_t *m)
{
    *m = (blocks_meta_t) { .file.size = -1 };
    FILE *f = fopen (path, "r");
    if (!f)
        return -1;
    char *line = NULL, size[64] = "", bs[32] = "", inode[32] = "", url[8];
    size_t cap = 0;
    ssize_t n = getline (&line, &cap, f);
    int bad = n <= 0 || strcmp (line, "qc-blocks 1\n") != 0;
    /* the header: every line before the first "have" */
    while (!bad && (n = getline (&line, &cap, f)) > 0 && strncmp (line, "have ", 5) != 0) {
        if (n > 600)
            bad = 1;
        else if (!value (line, "size", size, sizeof size)
                 && !value (line, "etag", m->file.etag, sizeof m->file.etag)
                 && !value (line, "last-modified", m->file.last_modified,
                            sizeof m->file.last_modified)
                 && !value (line, "inode", inode, sizeof inode)
                 && !value (line, "block-size", bs, sizeof bs))
            value (line, "url", url, sizeof url);   /* for people only */
    }
    bad = bad || header_done (m, size, bs, inode) < 0;
    /* the runs: at most one per block */
    for (uint64_t runs = 0; !bad && n > 0; n = getline (&line, &cap, f))
        bad = ++runs > m->nblocks || have_line (line, m) < 0;
    free (line);
    fclose (f);
    if (bad) {
        blocks_meta_free (m);
        *m = (blocks_meta_t) { .file.size = -1 };
        return -1;
    }
    return 0;
}

int
blocks_meta_write (const char *path, const char *shown, const blocks_meta_t *m)
{
    if (!m->have) {
        errno = EINVAL;
        return -1;
    }
    char tmp[PATH_MAX + 64];
    tmp_name (path, tmp, sizeof tmp);
    FILE *f = open_private (tmp);
    if (!f)
        return -1;
    fprintf (f, "qc-blocks 1\nurl %s\nsize %lld\netag %s\nlast-modified %s\ninode %llu\n"
             "block-size %zu\n", shown, (long long) m->file.size,
             m->file.etag[0] ? m->file.etag : "-",
             m->file.last_modified[0] ? m->file.last_modified : "-",
             (unsigned long long) m->ino, m->block_size);
    for (uint64_t b = 0; b < m->nblocks; b++) {
        if (!bit_get (m->have, b))
            continue;
        uint64_t e = b;
        while (e + 1 < m->nblocks && bit_get (m->have, e + 1))
            e++;
        fprintf (f, "have %llu %llu\n", (unsigned long long) b, (unsigned long long) e);
        b = e;
    }
    return commit (f, tmp, path);
}
