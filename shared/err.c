/* Reasons for a caller's error buffer; see err.h. */
#include "shared/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static void
set_errv (char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (err && errlen)
        vsnprintf (err, errlen, fmt, ap);
}

void
qc_set_err (char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    set_errv (err, errlen, fmt, ap);
    va_end (ap);
}

int
qc_fail (char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    set_errv (err, errlen, fmt, ap);
    va_end (ap);
    return -1;
}

static atomic_uint s_oom;

void
qc_oom_note (void)
{
    atomic_fetch_add (&s_oom, 1);
}

unsigned
qc_oom_count (void)
{
    return atomic_load (&s_oom);
}

unsigned long long
qc_mapped_bytes (void)
{
    unsigned long long pages = 0;
    FILE *f = fopen ("/proc/self/statm", "r");
    if (f) {
        if (fscanf (f, "%llu", &pages) != 1)
            pages = 0;
        fclose (f);
    }
    long page = sysconf (_SC_PAGESIZE);
    return pages * (unsigned long long) (page > 0 ? page : 4096);
}

bool
qc_address_space_free (unsigned long mb)
{
    size_t len = (size_t) mb << 20;
    void *p = mmap (NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return false;
    munmap (p, len);
    return true;
}

bool
qc_errno_disk_refused (int e)
{
    return e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO || e == EROFS;
}

bool
qc_memory_short (void)
{
    return !qc_address_space_free (QC_MEMORY_PROBE_MB);
}
