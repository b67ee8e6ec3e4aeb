/* A whole small file into memory (file_read.h). */
#include "shared/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/err.h"

int
qc_file_read_regular (const char *path, size_t max, unsigned char **data, size_t *size,
                  char *err, size_t errlen)
{
    if (!path || !data || !size)
        return qc_fail (err, errlen, "no file named");
    *data = NULL;
    *size = 0;
    /* O_NONBLOCK: a FIFO (or a device) of that name would block the open
     * itself until a writer came, before fstat could refuse it; a
     * regular file reads the same either way */
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR
               ? 0 : qc_fail (err, errlen, "cannot read '%s': %s", path, strerror (errno));
    struct stat st;
    unsigned char *buf = NULL;
    int rc = -1;
    if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
        qc_fail (err, errlen, "'%s' is not a regular file", path);
    else if ((uint64_t) st.st_size > max)
        qc_fail (err, errlen, "'%s' is larger than %zu MiB", path, max >> 20);
    else if (!(buf = malloc (st.st_size ? (size_t) st.st_size : 1)))
        qc_fail (err, errlen, "out of memory reading '%s'", path);
    else {
        size_t n = 0;
        ssize_t got = 1;
        while (n < (size_t) st.st_size
               && (got = read (fd, buf + n, (size_t) st.st_size - n)) > 0)
            n += (size_t) got;
        if (got < 0 || n != (size_t) st.st_size)
            qc_fail (err, errlen, "cannot read '%s': %s", path,
                     got < 0 ? strerror (errno) : "it changed while read");
        else {
            *data = buf;
            *size = n;
            buf = NULL;
            rc = 1;
        }
    }
    free (buf);
    close (fd);
    return rc;
}
