/* Slides by URL, a cohort at a time (issue 16): a real qc-broker and
 * qc-worker (one slot) run a cohort whose slides nginx serves on
 * 127.0.0.1, with the worker fetching the next task's slide while its
 * slot computes and without (--no-fetch-ahead), at loopback speed and
 * at a rate nginx limits each connection to (a network link), against
 * the same cohort read by path; then what each slide cost in bytes
 * fetched against its size (tests/bench/url_cohort.sh does the runs).
 *
 * The cohort: COPIES of a generated 20,000 x 15,000 slide (read by range
 * requests: its directories, the 1.25x level, the 10x tiles the focus
 * step reads) and of ../shared's NDPI (read whole: downloaded into a
 * fresh cache each run). Then, one slide at a time, the share of a
 * 60,000 x 45,000 slide's bytes its QC fetches: the default config, and
 * HistoQC's config.ini (everything at 1.25x).
 *
 * Usage: bench_url [--quick] [--data DIR] [--copies N] [--repeat N]
 *                  [--rate R]
 * Reports, asserts nothing; exit 1 only when a run could not complete. */
#include <limits.h>
#include <string.h>

#include "tests/bench/bench_slides.h"
#include "tests/unit/check.h"

/* One slide over HTTP through a one-process qc-submit with config (NULL:
 * the default; "HISTOQC": HistoQC's config.ini from ../shared): prints
 * the bytes its QC fetched (tests/bench/url_share.sh). */
static int
share_run (const char *slide, const char *config, const char *label)
{
    char cmd[4096];
    /* the label goes inside single quotes: it must hold none */
    snprintf (cmd, sizeof cmd, "tests/bench/url_share.sh '%s' '%s' '%s'", slide,
              config ? config : "", label);
    return run (cmd);
}

int
main (int argc, char **argv)
{
    const char *data = "build/bench-data";
    int quick = 0, copies = 4, repeat = 2;
    const char *rate = "20m";
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv[i], "--quick"))
            quick = 1;
        else if (!strcmp (argv[i], "--data") && i + 1 < argc)
            data = argv[++i];
        else if (!strcmp (argv[i], "--copies") && i + 1 < argc)
            copies = atoi (argv[++i]);
        else if (!strcmp (argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi (argv[++i]);
        else if (!strcmp (argv[i], "--rate") && i + 1 < argc)
            rate = argv[++i];
        else {
            fprintf (stderr, "usage: bench_url [--quick] [--data DIR] [--copies N] [--repeat N] "
                             "[--rate R]\n  a cohort over HTTP with and without fetching ahead; "
                             "bytes fetched per slide\n  R: nginx's limit_rate, e.g. 20m\n");
            return !strcmp (argv[i], "--help") || !strcmp (argv[i], "-h") ? 0 : 2;
        }
    }
    if (copies < 1 || copies > 100 || repeat < 1 || strspn (rate, "0123456789km") != strlen (rate)) {
        fprintf (stderr, "bench_url: bad --copies, --repeat or --rate\n");
        return 2;
    }
    if (quick) {
        copies = 2;
        repeat = 1;
    }
    char tiff[600], full[600], ndpi[600];
    int w = quick ? 8000 : 20000, h = quick ? 6000 : 15000;
    if (bench_full_slide (data, w, h, tiff, sizeof tiff) < 0
        || (!quick && bench_full_slide (data, 60000, 45000, full, sizeof full) < 0))
        return 1;
    snprintf (ndpi, sizeof ndpi, "%s/slides/real/test3-DAPI-2.ndpi", check_shared_dir ());
    char cmd[4096];
    snprintf (cmd, sizeof cmd, "tests/bench/url_cohort.sh '%s' '%s' %d %d '0 %s'", tiff, ndpi,
              copies, repeat, rate);
    printf ("cohort: %d x %s (%d x %d, range reads) and %d x test3-DAPI-2.ndpi (read whole)\n",
            copies, strrchr (tiff, '/') + 1, w, h, copies);
    fflush (stdout);
    if (run (cmd) != 0)
        return 1;
    if (quick)
        return 0;
    printf ("\none 60,000 x 45,000 slide's QC over HTTP, bytes fetched against its size:\n");
    fflush (stdout);
    if (share_run (full, NULL, "default config (focus step at 10x)") != 0
        || share_run (full, "HISTOQC", "HistoQC config.ini (all at 1.25x)") != 0)
        return 1;
    return 0;
}
