/* Reasons for a caller's error buffer. Functions that can fail take
 * (char *err, size_t errlen) and write why there; err may be NULL or
 * errlen 0, and the text is cut to fit. */
#ifndef QC_SHARED_ERR_H
#define QC_SHARED_ERR_H

#include <stdbool.h>
#include <stddef.h>

void qc_set_err (char *err, size_t errlen, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* qc_set_err, then -1: for `return qc_fail (err, errlen, ...);`. */
int qc_fail (char *err, size_t errlen, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Allocations of large buffers that failed, in this process so far: a
 * slide that fails while the count grows failed for this machine's
 * memory, not for what it holds (kernels/run/run_report.c marks it for a
 * rerun). Noted where images and a classifier's buffers are allocated. */
void qc_oom_note (void);
unsigned qc_oom_count (void);

/* Whether errno e is a disk refusing every write, not this file's own
 * trouble: full (ENOSPC, a quota's EDQUOT, a file-size limit's EFBIG),
 * failing (EIO), or read-only (EROFS). A run stops on it (the client's
 * output folder); the broker starts again on it, bar EROFS. */
bool qc_errno_disk_refused (int e);

/* Whether memory is short now: QC_MEMORY_PROBE_MB of address space
 * cannot be had (an address-space limit, ulimit -v, nearly reached; a
 * reservation only, so it costs no memory, and a strict overcommit
 * limit, which counts no reservation, is not seen). Asked after a
 * failure whose reason does not say (a library's "Invalid TIFF", a
 * pipeline that could not be built): a slide needs that much, so such a
 * failure is this machine's, not the slide's or the configuration's. */
#define QC_MEMORY_PROBE_MB 128
bool qc_memory_short (void);
/* Whether mb MB of address space can be reserved now (reserved and
 * dropped by system calls, no allocator: safe in a signal handler). */
bool qc_address_space_free (unsigned long mb);
/* The address space this process maps now, in bytes (/proc/self/statm;
 * 0 when it cannot be read): what counts against ulimit -v. */
unsigned long long qc_mapped_bytes (void);

/* "s" unless n is 1, for counts in messages: "%zu slide%s", n, qc_plural (n). */
static inline const char *
qc_plural (unsigned long long n)
{
    return n == 1 ? "" : "s";
}

#endif
