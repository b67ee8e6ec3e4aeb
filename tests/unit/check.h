/* Minimal test harness shared by the unit test programs: CHECK records a
 * failure with file and line and goes on; check_done() prints a summary
 * and gives the exit code. QC_SHARED_DIR locates ../shared (test slides). */
#ifndef QC_CHECK_H
#define QC_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "shared/err.h"   /* qc_mapped_bytes, for tests that lower RLIMIT_AS */

/* 1 in an ASan build, gcc's or clang's (which does not define
 * __SANITIZE_ADDRESS__): tests that lower RLIMIT_AS skip that part, as
 * ASan needs its address space unlimited. */
#if defined(__SANITIZE_ADDRESS__)
#define QC_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QC_TEST_ASAN 1
#endif
#endif
#ifndef QC_TEST_ASAN
#define QC_TEST_ASAN 0
#endif

static int check_total_, check_failed_;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        check_total_++;                                                    \
        if (!(cond)) {                                                     \
            check_failed_++;                                               \
            fprintf (stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf (stderr, " " __VA_ARGS__);                             \
            fputc ('\n', stderr);                                          \
        }                                                                  \
    } while (0)

static inline const char *
check_shared_dir (void)
{
    const char *d = getenv ("QC_SHARED_DIR");
    return d && *d ? d : "../shared";
}

static inline int
check_done (const char *name)
{
    printf ("%s %s: %d checks, %d failed\n", check_failed_ ? "FAIL" : "PASS",
            name, check_total_, check_failed_);
    return check_failed_ ? 1 : 0;
}

#endif
