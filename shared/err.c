/* Reasons for a caller's error buffer; see err.h. */
#include "shared/err.h"

#include <stdarg.h>
#include <stdio.h>

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
