/* Shared fixtures of the QC pipeline tests (test_pipeline_*.c): the
 * error buffer, a result lookup that never gives NULL, and the path of a
 * test slide under QC_SHARED_DIR. Header-only (the Makefile builds each
 * tests/unit/test_*.c into its own program and compiles nothing else
 * here), so every function is static and marked unused for the programs
 * that do not call it. */
#ifndef QC_PIPELINE_FIXTURES_H
#define QC_PIPELINE_FIXTURES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/module.h"
#include "kernels/pipeline/pipeline.h"
#include "shared/log.h"
#include "shared/result.h"
#include "tests/unit/check.h"

/* check.h prints CHECK's optional message with fprintf (stderr, "" ...):
 * a CHECK without one is a zero-length format, which -Werror refuses. */
#pragma GCC diagnostic ignored "-Wformat-zero-length"

static __attribute__ ((unused)) char err[1024];

static __attribute__ ((unused)) const char *
get (const qc_result_t *r, const char *key)
{
    const char *v = qc_result_get (r, key);
    return v ? v : "<unset>";
}

static __attribute__ ((unused)) void
slide_path (char *buf, size_t len, const char *dir, const char *name)
{
    snprintf (buf, len, "%s/slides/%s/%s", check_shared_dir (), dir, name);
}

/* Failures of odd slides are logged as errors by design; keep a test's
 * output to what matters (QC_TEST_VERBOSE shows them). Call first, before
 * any thread starts. */
static __attribute__ ((unused)) void
quiet_logs (void)
{
    qc_log_set_stderr_level (QC_LOG_ERROR);
    qc_log_set_stderr_enabled (getenv ("QC_TEST_VERBOSE") != NULL);
}

/* Runs p on every file of ../shared/slides/odd: each must end ok, or
 * failed with a reason, and never crash; there must be at least five.
 * Prints each outcome. */
static __attribute__ ((unused)) void
fx_run_odd_files (const qc_pipeline_t *p, qc_result_t *r)
{
    char dir[1024];
    snprintf (dir, sizeof dir, "%s/slides/odd", check_shared_dir ());
    DIR *d = opendir (dir);
    CHECK (d != NULL, "%s", dir);
    int n = 0;
    for (struct dirent *e; d && r && (e = readdir (d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[2048];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        int rc = qc_pipeline_run (p, path, r);
        CHECK (rc == 0 ? r->ok && !r->error : !r->ok && r->error && *r->error,
               "%s", e->d_name);
        printf ("odd %s: %s\n", e->d_name, rc ? r->error : "ok");
        n++;
    }
    if (d)
        closedir (d);
    CHECK (n >= 5, "%d odd files", n);
}

#endif
