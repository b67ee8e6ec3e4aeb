/* What the pipeline benchmarks share: running a command,
 * and the generated slides they time, made by bin/qc-mkslide once and
 * reused from the cache folder. Header of static functions (each
 * tests/bench/bench_*.c is one program). */
#ifndef QC_BENCH_SLIDES_H
#define QC_BENCH_SLIDES_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/clock.h"

/* system (cmd)'s exit status, -1 when it did not exit. */
static __attribute__ ((unused)) int
run (const char *cmd)
{
    int rc = system (cmd);
    return WIFEXITED (rc) ? WEXITSTATUS (rc) : -1;
}

/* Makes the slide unless it is already there; 0 when it is. */
static __attribute__ ((unused)) int
ensure_slide (const char *path, int w, int h, int seed)
{
    struct stat st;
    if (stat (path, &st) == 0 && st.st_size > 0)
        return 0;
    char cmd[2048];
    int len = snprintf (cmd, sizeof cmd, "bin/qc-mkslide -o '%s' --width %d --height %d --seed %d",
                        path, w, h, seed);
    if (len < 0 || (size_t) len >= sizeof cmd)
        return -1;
    fprintf (stderr, "generating %s (%d x %d) ...\n", path, w, h);
    double t0 = qc_clock_s ();
    int rc = run (cmd);
    fprintf (stderr, "  %.1f s\n", qc_clock_s () - t0);
    return rc;
}

/* The full-size slide the benchmarks time, dir/full-WxH.svs (seed 7),
 * made in the cache folder dir (created when missing) unless it is
 * there; its path into path. 0, or -1 with the reason on stderr. */
static __attribute__ ((unused)) int
bench_full_slide (const char *dir, int w, int h, char *path, size_t len)
{
    if (mkdir (dir, 0777) && access (dir, W_OK)) {
        fprintf (stderr, "cannot use %s\n", dir);
        return -1;
    }
    int n = snprintf (path, len, "%s/full-%dx%d.svs", dir, w, h);
    if (n < 0 || (size_t) n >= len) {
        fprintf (stderr, "path too long: %s\n", dir);
        return -1;
    }
    if (ensure_slide (path, w, h, 7) != 0) {
        fprintf (stderr, "qc-mkslide could not write %s\n", path);
        return -1;
    }
    return 0;
}

#endif
