/* See sync_dir.h. */
#include "shared/sync_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int
qc_sync_dir (const char *dir)
{
    if (!dir) {
        errno = EINVAL;
        return -1;
    }
    int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync (fd);
    int e = errno;
    close (fd);
    errno = e;
    return rc;
}
