/* A whole small file into memory (file_read.h). */
#include "shared/file_read.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/err.h"
#include "shared/url.h"

int
qc_file_read_regular (const char *path, size_t max, unsigned char **data, size_t *size,
                      char *err, size_t errlen)
{
    return qc_file_read_regular_stat (path, max, data, size, NULL, err, errlen);
}

int
qc_file_read_regular_stat (const char *path, size_t max, unsigned char **data,
                           size_t *size, struct stat *st_out, char *err, size_t errlen)
{
    if (!path || !data || !size)
        return qc_fail (err, errlen, "no file named");
    *data = NULL;
    *size = 0;
    if (max > SIZE_MAX / 2)
        max = SIZE_MAX / 2;     /* max + 1 must not wrap */
    /* O_NONBLOCK: a FIFO (or a device) of that name would block the open
     * itself until a writer came, before fstat could refuse it; a
     * regular file reads the same either way */
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno != ENOENT && errno != ENOTDIR)
            return qc_fail (err, errlen, "cannot read '%s': %s", path, strerror (errno));
        return 0;           /* errno, untouched, says which (file_read.h) */
    }
    struct stat st;
    unsigned char *buf = NULL;
    int rc = -1;
    if (fstat (fd, &st) != 0)
        qc_fail (err, errlen, "cannot read '%s': %s", path, strerror (errno));
    else {
        if (st_out)
            *st_out = st;       /* noted, whatever comes of the read */
        if (!S_ISREG (st.st_mode))
            qc_fail (err, errlen, "'%s' is not a regular file", path);
        else
            rc = 0;
    }
    if (rc != 0) {
        close (fd);
        return -1;
    }
    rc = -1;
    /* to its end, whatever its size said (a file still growing; a
       /proc file says 0): at most max bytes, one more tells "larger" */
    size_t cap = (uint64_t) st.st_size < max ? (size_t) st.st_size + 1 : max + 1;
    size_t n = 0;
    buf = malloc (cap ? cap : 1);
    for (;;) {
        if (!buf) {
            qc_fail (err, errlen, "out of memory reading '%s'", path);
            break;
        }
        if (n == cap) {
            if (cap > max) {
                qc_fail (err, errlen, "'%s' is larger than %zu MiB", path, max >> 20);
                break;
            }
            size_t grown = cap > max / 2 ? max + 1 : 2 * cap;
            unsigned char *b = realloc (buf, grown);
            if (!b) {
                qc_fail (err, errlen, "out of memory reading '%s'", path);
                break;
            }
            buf = b;
            cap = grown;
        }
        ssize_t got = read (fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            qc_fail (err, errlen, "cannot read '%s': %s", path, strerror (errno));
            break;
        }
        if (got == 0) {
            *data = buf;
            *size = n;
            buf = NULL;
            rc = 1;
            break;
        }
        n += (size_t) got;
        if (n > max) {
            qc_fail (err, errlen, "'%s' is larger than %zu MiB", path, max >> 20);
            break;
        }
    }
    free (buf);
    close (fd);
    return rc;
}

/* The folder of the local path into folder (4096 bytes): false for
 * NULL, a URL, a bare name, one too long. */
static bool
folder_of (const char *path, char *folder)
{
    if (!path || qc_url_is_remote (path) || strncmp (path, "file:", 5) == 0)
        return false;
    const char *slash = strrchr (path, '/');
    if (!slash)
        return false;
    size_t len = slash == path ? 1 : (size_t) (slash - path);
    if (len >= 4096)
        return false;
    memcpy (folder, path, len);
    folder[len] = '\0';
    return true;
}

bool
qc_file_folder_there (const char *path)
{
    char folder[4096];
    struct stat st;
    return folder_of (path, folder) && stat (folder, &st) == 0 && S_ISDIR (st.st_mode)
           && access (folder, X_OK) == 0;
}

bool
qc_file_folder_empty (const char *path)
{
    char folder[4096];
    DIR *d = folder_of (path, folder) ? opendir (folder) : NULL;
    if (!d)
        return false;
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir (d));)
        empty = strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0;
    closedir (d);
    return empty;
}
