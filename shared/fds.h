/* How many file descriptors this process has left: told before a
 * socket is made (shared/socket_new.h), before a worker starts as many
 * slots as asked, and after a slide failed, when whether descriptors ran
 * out decides if it is the slide's fault or the machine's. */
#ifndef QC_FDS_H
#define QC_FDS_H

#include <stdbool.h>

/* Whether n more file descriptors can be opened now (each opened and
 * closed again: a check, not a reservation); true too when the check
 * fails for another reason than a lack of them. n is at most 16. */
bool qc_fds_free (int n);

/* At most this many descriptors or threads are probed at once (fds.c,
 * socket_new.c). */
#define QC_PROBE_MAX 16

/* How many more file descriptors this process may open (its limit less
 * those open now), at most 1 << 20; -1 when that cannot be told. */
long qc_fds_unused (void);

#endif
