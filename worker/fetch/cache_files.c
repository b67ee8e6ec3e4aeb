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
 * it never pairs one version's validators with another's bytes. */
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

int
meta_write (const char *path, const char *shown, const qc_http_file_t *file, uint64_t ino)
{
    char tmp[PATH_MAX + 64];
    snprintf (tmp, sizeof tmp, "%s" TMP_MARK "%ld.%lx", path, (long) getpid (),
              (unsigned long) pthread_self ());
    FILE *f = fopen (tmp, "w");
    if (!f)
        return -1;
    /* a validator never holds a newline (curl splits headers on them) */
    fprintf (f, "qc-cache 1\nurl %s\nsize %lld\netag %s\nlast-modified %s\ninode %llu\n",
             shown, (long long) file->size, file->etag[0] ? file->etag : "-",
             file->last_modified[0] ? file->last_modified : "-", (unsigned long long) ino);
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

int
entry_valid (const char *data, const char *meta, qc_http_file_t *file)
{
    uint64_t ino;
    struct stat st;
    return meta_read (meta, file, &ino) == 0 && stat (data, &st) == 0
           && (uint64_t) st.st_ino == ino && st.st_size == file->size;
}
