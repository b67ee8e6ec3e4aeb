/* Minimal test harness shared by the unit test programs: CHECK records a
 * failure with file and line and goes on; check_done() prints a summary
 * and gives the exit code. QC_SHARED_DIR locates ../shared (test slides). */
#ifndef QC_CHECK_H
#define QC_CHECK_H

#include <stdio.h>
#include <stdlib.h>

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
