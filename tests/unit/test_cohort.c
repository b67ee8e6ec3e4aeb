/* The cohort as HistoQC takes it (client/cohort.c, cohort_walk.c), on a
 * real folder tree made in /tmp: folders searched recursively with a
 * depth limit and symbolic-link loops survived, glob patterns with "**",
 * .tsv lists (HistoQC's results.tsv and the project's own), -p base
 * paths, duplicates, and the readability check. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/cohort.h"
#include "client/rerun.h"
#include "tests/unit/check.h"

static char s_root[PATH_MAX];

static void
touch (const char *rel)
{
    char p[PATH_MAX * 2];
    snprintf (p, sizeof p, "%s/%s", s_root, rel);
    FILE *f = fopen (p, "w");
    CHECK (f != NULL, "create %s", p);
    if (f) {
        fputs ("x", f);
        fclose (f);
    }
}

static void
mkdirs (const char *rel)
{
    char p[PATH_MAX * 2];
    snprintf (p, sizeof p, "%s/%s", s_root, rel);
    for (char *s = p + strlen (s_root) + 1; (s = strchr (s, '/')); s++) {
        *s = '\0';
        mkdir (p, 0755);
        *s = '/';
    }
    mkdir (p, 0755);
}

static bool
has (const qc_cohort_t *c, const char *rel)
{
    char p[PATH_MAX * 2];
    snprintf (p, sizeof p, "%s/%s", s_root, rel);
    for (size_t i = 0; i < c->n; i++)
        if (strcmp (c->paths[i], p) == 0)
            return true;
    return false;
}

static void
make_tree (void)
{
    mkdirs ("a/sub");
    touch ("a/s1.svs");
    touch ("a/S2.NDPI");
    touch ("a/readme.txt");
    touch ("a/sub/s3.tiff");
    mkdirs ("a/.hidden");
    touch ("a/.hidden/h.svs");
    mkdirs ("b");
    touch ("b/s1.svs");
    /* a loop: a/sub/up -> a, and b/self -> b */
    char p[PATH_MAX * 2], t[PATH_MAX * 2];
    snprintf (p, sizeof p, "%s/a/sub/up", s_root);
    snprintf (t, sizeof t, "%s/a", s_root);
    CHECK (symlink (t, p) == 0, "symlink loop");
    snprintf (p, sizeof p, "%s/b/self", s_root);
    CHECK (symlink (".", p) == 0, "symlink to itself");
    /* 40 folders deep */
    char deep[PATH_MAX] = "c";
    for (int i = 0; i < 40; i++)
        strcat (deep, "/d");
    mkdirs (deep);
    strcat (deep, "/deep.svs");
    touch (deep);
    touch ("c/top.svs");
}

static void
test_folders (void)
{
    char err[1024] = "", p[PATH_MAX * 2];
    qc_cohort_t c = {0};
    snprintf (p, sizeof p, "%s/a", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0, "%s", err);
    CHECK (c.n == 3 && has (&c, "a/s1.svs") && has (&c, "a/S2.NDPI")
               && has (&c, "a/sub/s3.tiff"),
           "folder searched recursively, loop survived: %zu slides", c.n);
    CHECK (!has (&c, "a/.hidden/h.svs") && !has (&c, "a/readme.txt"),
           "hidden folders and other files skipped");
    /* sorted: S2 before s1 (byte order), sub/ last */
    CHECK (c.n == 3 && strstr (c.paths[0], "S2.NDPI") && strstr (c.paths[2], "sub/s3"));
    /* TIFF names of other scanners and converters: found too */
    CHECK (qc_cohort_is_slide_name ("x.qptiff") && qc_cohort_is_slide_name ("x.BTF")
           && qc_cohort_is_slide_name ("x.tf8") && qc_cohort_is_slide_name ("x.tf2")
           && !qc_cohort_is_slide_name ("x.txt") && !qc_cohort_is_slide_name (".qptiff"));
    snprintf (p, sizeof p, "%s/b", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 4 && has (&c, "b/s1.svs"),
           "b: a link to itself ends");
    /* the same folder again: nothing twice */
    snprintf (p, sizeof p, "%s/a/", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 4 && c.duplicates == 3,
           "duplicates counted once: %zu, %zu", c.n, c.duplicates);
    qc_cohort_free (&c);

    qc_cohort_t d = {0};
    snprintf (p, sizeof p, "%s/c", s_root);
    CHECK (qc_cohort_add (&d, p, err, sizeof err) == 0);
    CHECK (d.n == 1 && has (&d, "c/top.svs"), "deep slide past the limit not listed");
    CHECK (d.note && strstr (d.note, "32 levels"), "the limit is said: %s",
           d.note ? d.note : "(none)");
    qc_cohort_free (&d);
}

/* A folder whose path passes PATH_MAX (20 folders of 240 bytes, made
 * one below the other with mkdirat): not searched, and said. */
static void
test_long_paths (void)
{
    char p[PATH_MAX * 2], name[241];
    memset (name, 'n', 240);
    name[240] = '\0';
    snprintf (p, sizeof p, "%s/e", s_root);
    CHECK (mkdir (p, 0755) == 0);
    int fd = open (p, O_RDONLY | O_DIRECTORY);
    for (int i = 0; i < 20 && fd >= 0; i++) {
        CHECK (mkdirat (fd, name, 0755) == 0, "mkdirat level %d", i);
        int next = openat (fd, name, O_RDONLY | O_DIRECTORY);
        close (fd);
        fd = next;
    }
    if (fd >= 0) {
        int s = openat (fd, "far.svs", O_WRONLY | O_CREAT, 0644);
        if (s >= 0)
            close (s);
        close (fd);
    }
    touch ("e/near.svs");
    char err[1024] = "";
    qc_cohort_t c = {0};
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0, "%s", err);
    CHECK (c.n == 1 && has (&c, "e/near.svs"), "%zu slides", c.n);
    CHECK (c.note && strstr (c.note, "a folder whose path is longer than the system allows"),
           "the folder left out is said: %s", c.note ? c.note : "(none)");
    qc_cohort_free (&c);
}

static void
test_patterns (void)
{
    char err[1024] = "", p[PATH_MAX * 2];
    qc_cohort_t c = {0};
    snprintf (p, sizeof p, "%s/*/s1.svs", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 2
               && has (&c, "a/s1.svs") && has (&c, "b/s1.svs"),
           "*/s1.svs: %zu (%s)", c.n, err);
    qc_cohort_free (&c);

    snprintf (p, sizeof p, "%s/**/*.tiff", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 1
               && has (&c, "a/sub/s3.tiff"),
           "** through folders (and the loop): %zu", c.n);
    qc_cohort_free (&c);

    snprintf (p, sizeof p, "%s/**/s1.svs", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 2,
           "** matching zero folders too: %zu", c.n);
    qc_cohort_free (&c);

    /* relative to the base path, as -p does it */
    c.basepath = s_root;
    CHECK (qc_cohort_add (&c, "a/[sS][0-9]*", err, sizeof err) == 0 && c.n == 2
               && has (&c, "a/s1.svs") && has (&c, "a/S2.NDPI"),
           "[sS][0-9]* under -p: %zu", c.n);
    CHECK (qc_cohort_add (&c, "b/**", err, sizeof err) == 0 && c.n == 3
               && has (&c, "b/s1.svs"),
           "a final ** searches the folder: %zu", c.n);
    qc_cohort_free (&c);

    snprintf (p, sizeof p, "%s/nothing/*.svs", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == -1 && strstr (err, "no slide matches"),
           "a pattern that matches nothing is an error: %s", err);
    qc_cohort_free (&c);
}

static void
test_lists (void)
{
    char err[1024] = "", p[PATH_MAX * 2];
    /* HistoQC's results.tsv: '#' lines, file names in the first column */
    snprintf (p, sizeof p, "%s/histoqc.tsv", s_root);
    FILE *f = fopen (p, "w");
    fprintf (f, "#start_time:\t2024-01-01\n#dataset:filename\tcomments\tbase_mag\n"
                "s1.svs\t\t40.0\nS2.NDPI\tx\t20.0\r\n\n");
    fclose (f);
    qc_cohort_t c = {0};
    char base[PATH_MAX * 2];
    snprintf (base, sizeof base, "%s/a", s_root);
    c.basepath = base;
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 2
               && has (&c, "a/s1.svs") && has (&c, "a/S2.NDPI"),
           "HistoQC's results.tsv with -p: %zu (%s)", c.n, err);
    qc_cohort_free (&c);

    /* a plain .tsv with a header row, and a path holding a tab in the
     * project's own results.tsv (escaped in original_path) */
    snprintf (p, sizeof p, "%s/list.tsv", s_root);
    f = fopen (p, "w");
    fprintf (f, "filename\tnote\n%s/b/s1.svs\tfirst\n  \n# a comment\n", s_root);
    fclose (f);
    CHECK (qc_cohort_add_list (&c, p, err, sizeof err) == 0 && c.n == 1
               && has (&c, "b/s1.svs"),
           "header row skipped, first column read: %zu", c.n);
    qc_cohort_free (&c);

    snprintf (p, sizeof p, "%s/ours.tsv", s_root);
    f = fopen (p, "w");
    fprintf (f, "#dataset:filename\tbase_mag\twarnings\toriginal_path\n"
                "t\\tb.svs\t40\t\t%s/odd\\tname.svs\n", s_root);
    fclose (f);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 1
               && has (&c, "odd\tname.svs"),
           "original_path read and unescaped: %s", c.n ? c.paths[0] : "none");
    qc_cohort_free (&c);

    CHECK (qc_cohort_add_list (&c, "/no/such/list", err, sizeof err) == -1
               && strstr (err, "cannot read list"), "missing list: %s", err);
    qc_cohort_free (&c);

    /* a slide named *.tsv (a TIFF, either byte order, BigTIFF too) is a
       slide, not a list: it was read as text ("no slide matches 'II*'") */
    static const char *const magic[] = {"II*", "MM\0*", "II+", "MM\0+"};
    for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++) {
        snprintf (p, sizeof p, "%s/scan%zu.tsv", s_root, i);
        f = fopen (p, "wb");
        fwrite (magic[i], 1, 4, f);
        fputs ("\x08\0\0\0 the rest of a slide\n", f);
        fclose (f);
        CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 1
                   && strcmp (c.paths[0], p) == 0,
               "a TIFF named .tsv is a slide (%zu): %zu (%s)", i, c.n, err);
        qc_cohort_free (&c);
    }
}

static void
test_paths_and_check (void)
{
    char err[1024] = "", p[PATH_MAX * 2];
    qc_cohort_t c = {0};
    snprintf (p, sizeof p, "%s//a/./s1.svs", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 1
               && has (&c, "a/s1.svs"), "// and /./ folded: %s", c.n ? c.paths[0] : "");
    /* ".." folded where it names the same file: the same slide once */
    snprintf (p, sizeof p, "%s/a/sub/../s1.svs", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 1 && c.duplicates == 1,
           "a/sub/../s1.svs is a/s1.svs: %zu slides, %zu duplicates", c.n, c.duplicates);
    /* through a folder that is a link (a/sub/up -> a), "up/.." is the
     * link's target's parent, not a/sub: kept as given */
    qc_cohort_t l = {0};
    snprintf (p, sizeof p, "%s/a/sub/up/../b/s1.svs", s_root);
    CHECK (qc_cohort_add (&l, p, err, sizeof err) == 0 && l.n == 1
               && has (&l, "a/sub/up/../b/s1.svs"), "'..' after a link kept: %s",
           l.n ? l.paths[0] : "");
    qc_cohort_free (&l);
    /* the same where the lexical fold names a file that is there, but
     * another one: fold/lnk -> fold/real/in, so fold/lnk/../s.svs is
     * fold/real/s.svs, not fold/s.svs */
    mkdirs ("fold/real/in");
    touch ("fold/real/s.svs");
    touch ("fold/s.svs");
    char t[PATH_MAX * 2];
    snprintf (p, sizeof p, "%s/fold/lnk", s_root);
    snprintf (t, sizeof t, "%s/fold/real/in", s_root);
    CHECK (symlink (t, p) == 0, "symlink fold/lnk");
    snprintf (p, sizeof p, "%s/fold/lnk/../s.svs", s_root);
    CHECK (qc_cohort_add (&l, p, err, sizeof err) == 0 && l.n == 1
               && has (&l, "fold/lnk/../s.svs"), "another file of the folded name: "
           "kept as given: %s", l.n ? l.paths[0] : "");
    qc_cohort_free (&l);
    /* the same folder through a link (a/sub/up -> a): the same slide
     * once, as a rerun's records take it; a link to a slide file stays a
     * slide of its own (its own name, as HistoQC runs it) */
    snprintf (p, sizeof p, "%s/a/s1.svs", s_root);
    CHECK (qc_cohort_add (&l, p, err, sizeof err) == 0 && l.n == 1, "a/s1.svs: %s", err);
    snprintf (p, sizeof p, "%s/a/sub/up/s1.svs", s_root);
    CHECK (qc_cohort_add (&l, p, err, sizeof err) == 0 && l.n == 1 && l.duplicates == 1,
           "a/sub/up/s1.svs (a linked folder) is a/s1.svs: %zu slides, %zu duplicates",
           l.n, l.duplicates);
    snprintf (p, sizeof p, "%s/a/alias.svs", s_root);
    snprintf (t, sizeof t, "%s/a/s1.svs", s_root);
    CHECK (symlink (t, p) == 0, "symlink a/alias.svs");
    CHECK (qc_cohort_add (&l, p, err, sizeof err) == 0 && l.n == 2 && l.duplicates == 1,
           "a link to a slide file is a slide of its own: %zu slides", l.n);
    qc_cohort_free (&l);
    /* a folder without slides is said, not an error */
    mkdirs ("empty/sub");
    snprintf (p, sizeof p, "%s/empty", s_root);
    CHECK (qc_cohort_add (&l, p, err, sizeof err) == 0 && l.n == 0 && l.note
               && strstr (l.note, "no slide file in folder") && strstr (l.note, "/empty"),
           "an empty folder: %s", l.note ? l.note : "no note");
    qc_cohort_free (&l);
    snprintf (p, sizeof p, "%s/missing.svs", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 2,
           "a missing slide is listed (the check names it)");
    CHECK (qc_cohort_unreadable (c.paths[0]) == NULL, "readable");
    CHECK (qc_cohort_unreadable (c.paths[1]) != NULL
               && strstr (qc_cohort_unreadable (c.paths[1]), "No such file"),
           "missing: %s", qc_cohort_unreadable (c.paths[1]));
    snprintf (p, sizeof p, "%s/a", s_root);
    CHECK (qc_cohort_unreadable (p) && strstr (qc_cohort_unreadable (p), "folder"));
    char longp[5000];
    memset (longp, 'l', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    CHECK (qc_cohort_add (&c, longp, err, sizeof err) == 0 && c.too_long == 1 && c.n == 3,
           "a path over 4096 bytes is listed and counted");
    CHECK (qc_cohort_unreadable (longp) && strstr (qc_cohort_unreadable (longp), "4096"));
    qc_cohort_free (&c);
    /* relative paths start at the working directory */
    char cwd[PATH_MAX];
    CHECK (getcwd (cwd, sizeof cwd) != NULL);
    CHECK (chdir (s_root) == 0);
    CHECK (qc_cohort_add (&c, "b/s1.svs", err, sizeof err) == 0 && c.n == 1
               && has (&c, "b/s1.svs"), "relative: %s", c.n ? c.paths[0] : "");
    CHECK (chdir (cwd) == 0);
    qc_cohort_free (&c);
    CHECK (c.paths == NULL && c.n == 0, "free empties");
}

/* URLs: kept in one spelling (http, https), file:// made a path, other
 * schemes refused naming the entry, a '?' no pattern, two URLs of one
 * redacted form refused, the same URL twice counted once. */
static void
test_urls (void)
{
    char err[1024] = "", p[PATH_MAX * 2];
    qc_cohort_t c = {0};
    const char *u = "https://ann:PW@host.example/b/x.svs?X-Amz-Signature=abc&t=1";
    CHECK (qc_cohort_add (&c, u, err, sizeof err) == 0 && c.n == 1
           && strcmp (c.paths[0], u) == 0, "an https URL is kept whole: %s", err);
    CHECK (qc_cohort_add (&c, u, err, sizeof err) == 0 && c.n == 1 && c.duplicates == 1,
           "the same URL twice counts once");
    err[0] = '\0';
    CHECK (qc_cohort_add (&c, "https://host.example/b/x.svs?X-Amz-Signature=other", err,
                          sizeof err) == -1 && strstr (err, "https://host.example/b/x.svs")
           && !strstr (err, "other") && !strstr (err, "PW"),
           "one redacted URL, two queries: refused: %s", err);
    snprintf (p, sizeof p, "file://%s/a/s1.svs", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && has (&c, "a/s1.svs"),
           "file:// is its path: %s", err);
    err[0] = '\0';
    CHECK (qc_cohort_add (&c, "ftp://bob:PW@host/y.svs?k=SECRET", err, sizeof err) == -1
           && strstr (err, "'ftp://host/y.svs'") && strstr (err, "not supported")
           && !strstr (err, "SECRET") && !strstr (err, "PW"), "ftp refused, named: %s", err);
    CHECK (qc_cohort_add (&c, "http://h/q?id=1", err, sizeof err) == 0 && c.n == 3,
           "a URL's '?' is not a pattern: %s", err);
    /* one spelling: another case and a dot segment are the same slide */
    CHECK (qc_cohort_add (&c, "HTTPS://ann:PW@Host.Example:443/b/./x.svs?X-Amz-Signature=abc&t=1",
                          err, sizeof err) == 0 && c.n == 3 && c.duplicates == 2,
           "another spelling counts once: %s", err);
    /* a spelling that would grow past the limit (raw bytes encoded 3x)
     * stays as given: still a URL, under the limit */
    char longu[3200];
    int n = snprintf (longu, sizeof longu, "http://h/");
    while (n + 3 < (int) sizeof longu - 8)
        n += snprintf (longu + n, sizeof longu - (size_t) n, "\xC3\xBC");
    snprintf (longu + n, sizeof longu - (size_t) n, ".svs");
    CHECK (qc_cohort_add (&c, longu, err, sizeof err) == 0 && c.n == 4
           && strcmp (c.paths[3], longu) == 0, "a long raw URL kept as given: %s", err);
    qc_cohort_free (&c);
}

/* The failures fetched from a folder's job that are no slide of the
 * cohort (client/rerun.h): one whose file is gone counts; one of the
 * cohort, also spelled otherwise (an older qc-submit kept "a/../a" as
 * typed), does not. */
static void
test_count_gone (void)
{
    char err[1024] = "", p[PATH_MAX * 2], other[PATH_MAX * 2], gone[PATH_MAX * 2];
    qc_cohort_t c = {0};
    snprintf (p, sizeof p, "%s/a/s1.svs", s_root);
    CHECK (qc_cohort_add (&c, p, err, sizeof err) == 0 && c.n == 1, "%s", err);
    snprintf (other, sizeof other, "%s/b/../a/s1.svs", s_root);
    snprintf (gone, sizeof gone, "%s/a/went-away.svs", s_root);
    zlistx_t *failed = zlistx_new ();
    zlistx_add_end (failed, p);
    zlistx_add_end (failed, other);
    zlistx_add_end (failed, gone);
    zlistx_add_end (failed, (void *) "http://127.0.0.1:1/never.svs");
    qc_rerun_t r = {0};
    CHECK (qc_rerun_count_gone (&r, &c, failed) == 0 && r.failed_gone == 2,
           "2 failures of slides not in the cohort: %zu", r.failed_gone);
    CHECK (qc_rerun_count_gone (&r, &c, NULL) == 0 && r.failed_gone == 0);
    CHECK (qc_rerun_count_gone (NULL, &c, failed) == -1);
    zlistx_destroy (&failed);
    qc_cohort_free (&c);
}

int
main (void)
{
    snprintf (s_root, sizeof s_root, "/tmp/qc-cohort-XXXXXX");
    if (!mkdtemp (s_root)) {
        perror ("mkdtemp");
        return 1;
    }
    make_tree ();
    test_folders ();
    test_long_paths ();
    test_patterns ();
    test_lists ();
    test_paths_and_check ();
    test_count_gone ();
    test_urls ();
    char cmd[PATH_MAX + 16];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_root);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_root);
    return check_done ("test_cohort");
}
