/* See fds.h. */
#include "shared/fds.h"

#include <dirent.h>
#include <errno.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

bool
qc_fds_free (int n)
{
    if (n <= 0)
        return true;
    if (n > QC_PROBE_MAX)
        n = QC_PROBE_MAX;
    int fds[QC_PROBE_MAX], got = 0, e = 0;
    while (got < n) {
        int fd = eventfd (0, EFD_CLOEXEC);
        if (fd < 0) {
            e = errno;
            break;
        }
        fds[got++] = fd;
    }
    for (int i = 0; i < got; i++)
        close (fds[i]);
    /* only a lack of descriptors refuses: another failure (no eventfd in
       this kernel or sandbox) is libzmq's to work around (socketpair) */
    if (got == n || (e != EMFILE && e != ENFILE))
        return true;
    errno = e;
    return false;
}

long
qc_fds_unused (void)
{
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl))
        return -1;
    long cap = 1L << 20;
    long limit = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t) cap ? cap
                                                                           : (long) rl.rlim_cur;
    DIR *d = opendir ("/proc/self/fd");
    if (!d)
        return -1;
    long open_now = -1;             /* the listing's own descriptor */
    while (readdir (d))
        open_now++;
    closedir (d);
    open_now -= 2;                  /* . and .. */
    return limit > open_now ? limit - open_now : 0;
}
