/* qc-worker --slides-root (worker/slides_root.c) on a real folder tree:
 * what lies inside passes, by its real path (a link from outside into a
 * root too, as a cohort folder of links does); what lies outside is
 * refused with one answer whether or not it exists, by a plain path, a
 * link to a file or into a folder outside, so that a client cannot learn
 * which files the worker's machine holds; a path with a ".." segment is
 * refused by its words; a missing file inside the root says so. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "worker/slides_root.h"

static char s_tmp[PATH_MAX];

static void
touch (const char *rel)
{
    char p[PATH_MAX * 2];
    snprintf (p, sizeof p, "%s/%s", s_tmp, rel);
    FILE *f = fopen (p, "w");
    CHECK (f != NULL, "create %s", p);
    if (f)
        fclose (f);
}

static void
dir (const char *rel)
{
    char p[PATH_MAX * 2];
    snprintf (p, sizeof p, "%s/%s", s_tmp, rel);
    CHECK (mkdir (p, 0755) == 0, "mkdir %s", p);
}

static void
link_to (const char *target_rel, const char *rel)
{
    char t[PATH_MAX * 2], p[PATH_MAX * 2];
    snprintf (t, sizeof t, "%s/%s", s_tmp, target_rel);
    snprintf (p, sizeof p, "%s/%s", s_tmp, rel);
    CHECK (symlink (t, p) == 0, "symlink %s", p);
}

/* The check of s_tmp/rel: its return, and its reason in why. */
static int
check (const slides_roots_t *roots, const char *rel, char *why, size_t len, char **real)
{
    char p[PATH_MAX * 2];
    snprintf (p, sizeof p, "%s/%s", s_tmp, rel);
    why[0] = 0;
    return slides_roots_check (roots, p, real, why, len);
}

static void
refused_alike_as (const slides_roots_t *roots, const char *a, const char *b, const char *as)
{
    char wa[1024], wb[1024];
    char *ra = NULL, *rb = NULL;
    int ca = check (roots, a, wa, sizeof wa, &ra), cb = check (roots, b, wb, sizeof wb, &rb);
    CHECK (ca == -1 && cb == -1 && !ra && !rb, "%s: %d, %s: %d", a, ca, b, cb);
    CHECK (strcmp (wa, wb) == 0, "%s and %s answered apart: '%s' / '%s'", a, b, wa, wb);
    CHECK (strstr (wa, as) && !strstr (wa, "secret") && !strstr (wa, "elsewhere"),
           "%s: '%s'", a, wa);
    free (ra);
    free (rb);
}

static void
refused_alike (const slides_roots_t *roots, const char *a, const char *b)
{
    refused_alike_as (roots, a, b, "outside every --slides-root");
}

/* The reason a URL outside every --slides-url is refused fits the
 * HTTP client's 512 bytes however long the URL: a redirect's Location
 * is the server's to choose, and a reason cut off after the URL alone
 * said what was refused but not why. */
static void
test_url_why (void)
{
    const char *urls[] = {"https://slides.example.org/cohort/"};
    slides_roots_t roots;
    char err[512], url[700], why[512];
    CHECK (slides_roots_init (&roots, NULL, 0, urls, 1, err, sizeof err) == 0, "%s", err);
    int n = snprintf (url, sizeof url, "https://elsewhere.example.org/");
    while (n < 600)
        n += snprintf (url + n, sizeof url - (size_t) n, "long-folder-name/");
    snprintf (url + n, sizeof url - (size_t) n, "a.svs");
    CHECK (slides_url_admit (&roots, url, why, sizeof why) == -1);
    CHECK (strstr (why, "outside every --slides-url") && strstr (why, "not fetched"),
           "the reason survives a long URL: %s", why);
    slides_roots_free (&roots);
    /* several prefixes: each named, as far as the reason holds them */
    const char *three[] = {"https://a.example.org/x/", "http://b.example.org:8080/y/",
                           "https://c.example.org/z/"};
    CHECK (slides_roots_init (&roots, NULL, 0, three, 3, err, sizeof err) == 0, "%s", err);
    CHECK (slides_url_admit (&roots, "https://d.example.org/a.svs", why, sizeof why) == -1
           && strstr (why, "(https://a.example.org:443/x/, http://b.example.org:8080/y/, "
                      "https://c.example.org:443/z/): not fetched"), "three prefixes: %s", why);
    slides_roots_free (&roots);
    CHECK (slides_roots_init (&roots, NULL, 0, urls, 1, err, sizeof err) == 0, "%s", err);
    /* a dot segment: its own reason, as whole */
    snprintf (url, sizeof url, "https://slides.example.org/cohort/");
    n = (int) strlen (url);
    while (n < 600)
        n += snprintf (url + n, sizeof url - (size_t) n, "long-folder-name/");
    snprintf (url + n, sizeof url - (size_t) n, "../a.svs");
    CHECK (slides_url_admit (&roots, url, why, sizeof why) == -1);
    CHECK (strstr (why, "not fetched"), "the dot segment's reason survives: %s", why);
    slides_roots_free (&roots);
}

int
main (void)
{
    snprintf (s_tmp, sizeof s_tmp, "/tmp/qc-slides-root.XXXXXX");
    if (!mkdtemp (s_tmp)) {
        perror ("mkdtemp");
        return 1;
    }
    dir ("root");
    dir ("root/sub");
    dir ("elsewhere");
    touch ("root/in.svs");
    touch ("root/sub/deep.svs");
    touch ("root/..dots.svs");
    touch ("root/dots...");
    touch ("elsewhere/secret.svs");
    link_to ("elsewhere/secret.svs", "root/to-file.svs");
    link_to ("elsewhere", "root/to-dir");
    link_to ("root/in.svs", "root/alias.svs");
    link_to ("root", "via");            /* the root given through a link */
    link_to ("root/in.svs", "elsewhere/into.svs");   /* links from outside in */
    link_to ("root/sub", "elsewhere/into-sub");
    link_to ("elsewhere/gone.svs", "root/dangling.svs");   /* to nothing outside */
    link_to ("root/loop-b", "root/loop-a");
    link_to ("root/loop-a", "root/loop-b");

    char root[PATH_MAX * 2], via[PATH_MAX * 2], err[512];
    snprintf (root, sizeof root, "%s/root", s_tmp);
    snprintf (via, sizeof via, "%s/via", s_tmp);
    const char *dirs[] = {via};
    slides_roots_t roots;
    CHECK (slides_roots_init (&roots, dirs, 1, NULL, 0, err, sizeof err) == 0, "%s", err);

    /* inside: by its path, a link inside, the root's link name, ".",
       names with ".." inside a segment */
    static const char *const in[][2] = {
        {"root/in.svs", "in.svs"}, {"root/alias.svs", "in.svs"},
        {"via/sub/deep.svs", "sub/deep.svs"}, {"root/./sub//deep.svs", "sub/deep.svs"},
        {"root/..dots.svs", "..dots.svs"}, {"root/dots...", "dots..."},
        {"elsewhere/into.svs", "in.svs"}, {"elsewhere/into-sub/deep.svs", "sub/deep.svs"}};
    char *r = realpath (root, NULL);
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        char why[1024], *real = NULL, want[PATH_MAX * 2];
        CHECK (check (&roots, in[i][0], why, sizeof why, &real) == 0 && real, "%s: %s",
               in[i][0], why);
        snprintf (want, sizeof want, "%s/%s", r ? r : "?", in[i][1]);
        CHECK (real && strcmp (real, want) == 0, "%s opens %s, not %s", in[i][0],
               real ? real : "(null)", want);
        free (real);
    }
    free (r);

    /* outside: one answer, there or not */
    refused_alike (&roots, "elsewhere/secret.svs", "elsewhere/nothere.svs");
    /* "..": by its words, inside or out, there or not */
    refused_alike_as (&roots, "root/../elsewhere/secret.svs", "root/../elsewhere/nothere.svs",
                      "'..' segment");
    refused_alike_as (&roots, "root/sub/../in.svs", "gone/../root/in.svs", "'..' segment");
    refused_alike_as (&roots, "root/to-dir/..", "root/sub/..", "'..' segment");
    refused_alike (&roots, "root/to-file.svs", "root/to-dir/nothere.svs");
    refused_alike (&roots, "root/to-dir/secret.svs", "root/to-dir/nothere/x.svs");
    refused_alike (&roots, "elsewhere", "nothere");
    /* links in the root that lead nowhere: answered as one to a file out */
    refused_alike (&roots, "root/dangling.svs", "root/to-file.svs");
    refused_alike (&roots, "root/loop-a", "root/dangling.svs");
    refused_alike (&roots, "root/dangling.svs/x", "root/to-dir/nothere.svs");

    /* missing inside: said as such */
    char why[1024], *real = NULL;
    CHECK (check (&roots, "root/nothere.svs", why, sizeof why, &real) == SLIDES_ROOTS_MISSING
           && !real
           && strstr (why, "cannot resolve the slide path: No such file"), "%s", why);
    CHECK (check (&roots, "root/sub/no/such.svs", why, sizeof why, &real) == SLIDES_ROOTS_MISSING
           && strstr (why, "No such file"), "%s", why);
    CHECK (check (&roots, "elsewhere/into-sub/no.svs", why, sizeof why, &real)
           == SLIDES_ROOTS_MISSING
           && strstr (why, "No such file"), "missing under a link into the root: %s", why);

    /* a relative path is taken from the working folder */
    CHECK (chdir (root) == 0, "chdir");
    real = NULL;
    CHECK (slides_roots_check (&roots, "sub/deep.svs", &real, why, sizeof why) == 0 && real,
           "relative inside: %s", why);
    free (real);
    real = NULL;
    CHECK (chdir ("sub") == 0, "chdir sub");
    CHECK (slides_roots_check (&roots, "deep.svs", &real, why, sizeof why) == 0 && real,
           "relative inside: %s", why);
    free (real);
    real = NULL;
    CHECK (chdir (s_tmp) == 0, "chdir");
    CHECK (slides_roots_check (&roots, "elsewhere/secret.svs", &real, why, sizeof why) == -1
           && strstr (why, "outside every --slides-root"), "relative outside: %s", why);
    CHECK (chdir ("/") == 0, "chdir /");

    /* a root of "/" admits every path, missing ones with their error */
    const char *slash[] = {"/"};
    slides_roots_t all;
    CHECK (slides_roots_init (&all, slash, 1, NULL, 0, err, sizeof err) == 0, "%s", err);
    real = NULL;
    CHECK (check (&all, "elsewhere/secret.svs", why, sizeof why, &real) == 0 && real, "%s", why);
    free (real);
    CHECK (check (&all, "nothere/x.svs", why, sizeof why, &real) == SLIDES_ROOTS_MISSING
           && strstr (why, "No such file"), "%s", why);
    slides_roots_free (&all);
    slides_roots_free (&roots);
    test_url_why ();

    char cmd[PATH_MAX * 2 + 16];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_tmp);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_tmp);
    return check_done ("test_slides_root");
}
