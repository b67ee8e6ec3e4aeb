/* The rewrite of results.tsv and error.log (client/output_records.c)
 * when the disk refuses the new file: -1 with the reason, the old file
 * left as it was, no NAME.tmp left behind, and no descriptor kept open
 * (a rerun that drops slides rewrites on each start; a leaked stream
 * per refusal used to add up in a long qc-submit). The file-size limit
 * stands in for a full disk, as in test_journal. Real files in a
 * temporary folder. */
#include "client/output_records.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/names.h"
#include "tests/unit/check.h"

static char s_dir[] = "/tmp/qc-rewrite-XXXXXX";

static int
open_fds (void)
{
    DIR *d = opendir ("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir (d))
        n++;
    closedir (d);
    return n;
}

static char *
path_of (const char *name)
{
    static char p[128];
    snprintf (p, sizeof p, "%s/%s", s_dir, name);
    return p;
}

/* results.tsv with text; true when written */
static bool
write_results (const char *text)
{
    FILE *f = fopen (path_of ("results.tsv"), "w");
    CHECK (f != NULL);
    if (!f)
        return false;
    fputs (text, f);
    CHECK (fclose (f) == 0);
    return true;
}

/* results.tsv's first cap - 1 bytes into buf */
static void
read_results (char *buf, size_t cap)
{
    FILE *f = fopen (path_of ("results.tsv"), "r");
    size_t n = f ? fread (buf, 1, cap - 1, f) : 0;
    if (f)
        fclose (f);
    buf[n] = 0;
}

static void
test_refused (void)
{
    /* a results.tsv larger than the limit set below, smaller than the
     * stream's buffer: each line goes into the buffer, and the flush at
     * the end is what the disk refuses */
    FILE *f = fopen (path_of ("results.tsv"), "w");
    CHECK (f != NULL);
    if (!f)
        return;
    fputs ("#dataset:filename\toriginal_path\n", f);
    for (int i = 0; i < 100; i++)
        fprintf (f, "s%04d.svs\t/slides/s%04d.svs\n", i, i);
    CHECK (fclose (f) == 0);
    struct stat before;
    CHECK (stat (path_of ("results.tsv"), &before) == 0);
    zhashx_t *drop = zhashx_new ();
    zhashx_insert (drop, "/slides/s0001.svs", (void *) 1);
    signal (SIGXFSZ, SIG_IGN);
    struct rlimit old, small;
    CHECK (getrlimit (RLIMIT_FSIZE, &old) == 0);
    small = (struct rlimit) {.rlim_cur = 1000, .rlim_max = old.rlim_max};
    int fds = open_fds ();
    char err[512] = "";
    for (int i = 0; i < 3; i++) {
        CHECK (setrlimit (RLIMIT_FSIZE, &small) == 0);
        int rc = qc_records_rewrite (s_dir, drop, NULL, NULL, err, sizeof err);
        CHECK (setrlimit (RLIMIT_FSIZE, &old) == 0);
        CHECK (rc == -1 && strstr (err, "cannot rewrite"), "try %d refused: %s", i, err);
    }
    CHECK (open_fds () == fds, "no descriptor kept: %d open before, %d after", fds,
           open_fds ());
    struct stat after;
    CHECK (stat (path_of ("results.tsv"), &after) == 0 && after.st_size == before.st_size,
           "the old file stands");
    CHECK (access (path_of ("results.tsv.tmp"), F_OK) != 0 && errno == ENOENT,
           "no results.tsv.tmp left");
    /* with room again it goes through, the old file kept as NAME.1 */
    CHECK (qc_records_rewrite (s_dir, drop, NULL, NULL, err, sizeof err) == 0, "%s", err);
    CHECK (access (path_of ("results.tsv.1"), F_OK) == 0);
    CHECK (open_fds () == fds);
    zhashx_destroy (&drop);
}

/* A failure a rerun tries again goes without a copy (a slide retried
 * each night left one error.log.N a night); one to keep (-f, a file that
 * changed) is kept as error.log.N, also beside a transient one. */
static void
test_transient (void)
{
    FILE *f = fopen (path_of ("error.log"), "w");
    CHECK (f != NULL);
    if (!f)
        return;
    fputs ("/slides/a.svs\tGET http://h/a.svs: 404 (a rerun tries again)\n"
           "/slides/b.svs\tnot a slide\n/slides/c.svs\tcancelled\n", f);
    CHECK (fclose (f) == 0);
    zhashx_t *drop = zhashx_new ();
    zhashx_insert (drop, "/slides/a.svs", QC_DROP_TRANSIENT);
    char err[512] = "";
    for (int night = 0; night < 3; night++)
        CHECK (qc_records_rewrite (s_dir, drop, NULL, NULL, err, sizeof err) == 0, "%s", err);
    CHECK (access (path_of ("error.log.1"), F_OK) != 0, "no error.log.N for a retried failure");
    f = fopen (path_of ("error.log"), "r");
    char buf[512] = "";
    size_t n = f ? fread (buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose (f);
    buf[n] = 0;
    CHECK (!strstr (buf, "a.svs") && strstr (buf, "b.svs") && strstr (buf, "c.svs"),
           "the retried line is gone, the others stay: %s", buf);
    zhashx_insert (drop, "/slides/c.svs", QC_DROP_TRANSIENT);
    zhashx_insert (drop, "/slides/b.svs", QC_DROP_KEEP);
    CHECK (qc_records_rewrite (s_dir, drop, NULL, NULL, err, sizeof err) == 0, "%s", err);
    CHECK (access (path_of ("error.log.1"), F_OK) == 0, "a record to keep is kept as .1");
    zhashx_destroy (&drop);
}

/* HistoQC's rows name their slides by file name alone: one dropped by
 * name goes (-f on HistoQC's folder), kept in results.tsv.N; the other
 * rows, and a name that is part of another, stay. */
static void
test_named_rows (void)
{
    if (!write_results ("#dataset:filename\tbase_mag\na.svs\t40\nb.svs\t20\nxb.svs\t20\n"))
        return;
    qc_names_t *names = qc_names_new ();
    qc_records_t r;
    char err[512] = "";
    CHECK (names && qc_records_read (&r, s_dir, names, err, sizeof err) == 0, "%s", err);
    const char *named = qc_records_named_only (&r, "/slides/b.svs");
    CHECK (named && strcmp (named, "b.svs") == 0, "b.svs's row names it by file name");
    CHECK (!qc_records_named_only (&r, "/slides/c.svs"), "no row for c.svs");
    CHECK (qc_names_adopt (names, "b.svs", "/slides/b.svs") == 0
           && strcmp (qc_names_of (names, "/slides/b.svs"), "b.svs") == 0,
           "the slide takes the row's name");
    char *other = qc_names_assign (names, "/other/b.svs");
    CHECK (other && strcmp (other, "b.svs") != 0, "another b.svs gets another name: %s",
           other ? other : "?");
    free (other);
    qc_records_free (&r);
    qc_names_destroy (&names);
    zhashx_t *drop = zhashx_new (), *drop_names = zhashx_new ();
    zhashx_insert (drop_names, "b.svs", QC_DROP_KEEP);
    CHECK (qc_records_rewrite (s_dir, drop, drop_names, NULL, err, sizeof err) == 0, "%s", err);
    char buf[512];
    read_results (buf, sizeof buf);
    CHECK (strcmp (buf, "#dataset:filename\tbase_mag\na.svs\t40\nxb.svs\t20\n") == 0,
           "b.svs's row gone, the others stay: %s", buf);
    zhashx_destroy (&drop);
    zhashx_destroy (&drop_names);
}

/* Rows whose cells are not the header's columns (two glued into one,
 * one cut short) are no record and go at a rewrite (kept in .N); a
 * HistoQC-layout row that lost only its empty last warnings cell (a
 * spreadsheet's save) is still one. */
static void
test_damaged_rows (void)
{
    if (!write_results ("#dataset:filename\tbase_mag\twarnings\n"
                        "a.svs\t40\t|w\n"
                        "b.svs\t20\n"                 /* warnings cell dropped */
                        "c.svs\t20\t|wd.svs\t40\t\n" /* c and d glued */
                        "e.svs\n"))                    /* cut short */
        return;
    qc_names_t *names = qc_names_new ();
    qc_records_t r;
    char err[512] = "";
    CHECK (names && qc_records_read (&r, s_dir, names, err, sizeof err) == 0, "%s", err);
    CHECK (r.damaged == 2 && r.damaged_line == 4 && r.damaged_cells == 5,
           "two damaged rows, the first on line 4 with 5 cells: %zu, %zu, %zu", r.damaged,
           r.damaged_line, r.damaged_cells);
    CHECK (qc_records_named_only (&r, "/s/a.svs") && qc_records_named_only (&r, "/s/b.svs"),
           "a.svs and b.svs (its empty warnings cell dropped) are records");
    CHECK (!qc_records_named_only (&r, "/s/c.svs") && !qc_records_named_only (&r, "/s/d.svs")
           && !qc_records_named_only (&r, "/s/e.svs"), "the glued and cut rows are none");
    qc_records_free (&r);
    qc_names_destroy (&names);
    int kept = 1;
    while (kept < 100) {
        char name[32];
        snprintf (name, sizeof name, "results.tsv.%d", kept);
        if (access (path_of (name), F_OK) != 0)
            break;
        kept++;
    }
    zhashx_t *drop = zhashx_new ();
    CHECK (qc_records_rewrite (s_dir, drop, NULL, NULL, err, sizeof err) == 0, "%s", err);
    zhashx_destroy (&drop);
    char keep[32];
    snprintf (keep, sizeof keep, "results.tsv.%d", kept);
    CHECK (access (path_of (keep), F_OK) == 0, "the file as it was kept as %s", keep);
    char buf[512];
    read_results (buf, sizeof buf);
    CHECK (strcmp (buf, "#dataset:filename\tbase_mag\twarnings\na.svs\t40\t|w\nb.svs\t20\n")
           == 0, "the damaged rows gone: %s", buf);
}

/* What a rerun does with each kind of error line: an older build's
 * failure after every retry ("(5 attempts)", unmarked then) runs again,
 * as a marked one does; a slide's own failure stands. */
static void
test_kinds (void)
{
    FILE *f = fopen (path_of ("error.log"), "w");
    CHECK (f != NULL);
    if (!f)
        return;
    fputs ("/s/old503.svs\tGET http://h/a.svs: the server answered 503 (5 attempts)\n"
           "/s/old1.svs\tGET http://h/b.svs: Couldn't connect to server (1 attempt)\n"
           "/s/new.svs\tGET http://h/c.svs: 503 (5 attempts; a rerun tries again)\n"
           "/s/bad.svs\tthe file is a text file, not an image\n"
           "/s/odd.svs\tnot a slide (see attempts)\n"
           "/s/odd2.svs\t(attempts)\n", f);
    CHECK (fclose (f) == 0);
    qc_records_t r;
    char err[256] = "";
    qc_names_t *names = qc_names_new ();
    CHECK (names && qc_records_read (&r, s_dir, names, err, sizeof err) == 0, "%s", err);
    CHECK (qc_records_of (&r, "/s/old503.svs") == QC_REC_RETRY
           && qc_records_of (&r, "/s/old1.svs") == QC_REC_RETRY
           && qc_records_of (&r, "/s/new.svs") == QC_REC_RETRY,
           "failures after every retry run again, an older build's too");
    CHECK (qc_records_of (&r, "/s/bad.svs") == QC_REC_FAILED
           && qc_records_of (&r, "/s/odd.svs") == QC_REC_FAILED
           && qc_records_of (&r, "/s/odd2.svs") == QC_REC_FAILED, "a slide's own failure stands");
    qc_records_free (&r);
    qc_names_destroy (&names);
    unlink (path_of ("error.log"));
}

int
main (void)
{
    if (!mkdtemp (s_dir)) {
        perror ("mkdtemp");
        return 1;
    }
    test_refused ();
    test_transient ();
    test_named_rows ();
    test_kinds ();
    test_damaged_rows ();
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_dir);
    return check_done ("test_records_rewrite");
}
