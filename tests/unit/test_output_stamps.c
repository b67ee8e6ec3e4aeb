/* .qc-stamps (client/output_stamps.h): a file's lines and a slide by
 * URL's lines live in one file and are read apart; a URL's version (an
 * ETag with a backslash and quotes, a Last-Modified with commas) comes
 * back byte for byte; the later line of a slide wins, one that says the
 * version is not known included; damaged lines are skipped, not taken
 * for another slide's. The lines of the files beside a slide (its
 * annotation) are read apart from both: a file not there is size -1,
 * keyed by slide and file (a tab in either cannot join two keys), the
 * later line winning; a file there that is no file to read (a folder)
 * is -2; a file or URL reader takes none of them. A file only its worker
 * saw ("w": the worker's version, from RESULT's `in`) is read into the
 * same table, marked, the later of its "i" and "w" lines winning, one
 * its worker found not there included; a "w" line of -2 is damaged. The lines of files by URL beside
 * slides by URL the same, with a URL's version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/output_stamps.h"
#include "tests/unit/check.h"

static char dir[] = "/tmp/qc-test-stamps.XXXXXX";

static FILE *
open_stamps (const char *mode)
{
    char path[256];
    snprintf (path, sizeof path, "%s/%s", dir, QC_STAMPS_FILE);
    return fopen (path, mode);
}

static void
test_read_apart (void)
{
    FILE *f = open_stamps ("w");
    CHECK (f != NULL);
    if (!f)
        return;
    qc_stamp_t st = {.size = 1938955, .mtime_s = 1764496000, .mtime_ns = 7};
    qc_result_t r = { 0 };
    CHECK (qc_result_set_source (&r, 1938955, "W/\"6b0d-1d96\\0b\"",
                                 "Mon, 30 Nov 2026 10:25:07 GMT") == 0);
    qc_result_t later = { 0 };
    CHECK (qc_result_set_source (&later, 77, "\"new\"", "") == 0);
    CHECK (qc_stamps_put (f, "/slides/a b\t.svs", &st) > 0);
    CHECK (qc_url_stamps_put (f, "http://h:8080/a.svs", &r.source) == 0);
    CHECK (qc_url_stamps_put (f, "http://h:8080/b.svs", &r.source) == 0);
    CHECK (qc_url_stamps_put (f, "http://h:8080/b.svs", &later.source) == 0);
    CHECK (qc_url_stamps_put (f, "http://h:8080/c.svs", &r.source) == 0);
    CHECK (qc_url_stamps_put (f, "http://h:8080/c.svs", NULL) == 0);
    /* damaged: cut short, a size that is no number, a field too many */
    fputs ("http://h:8080/d.svs\tv\t12\n", f);
    fputs ("http://h:8080/e.svs\tv\tx1\t\"e\"\t\n", f);
    fputs ("http://h:8080/f.svs\tv\t1\t\"f\"\tlm\textra\n", f);
    fputs ("\tv\t1\t\"g\"\t\n", f);
    CHECK (fclose (f) == 0);
    CHECK (qc_url_stamps_put (NULL, "u", NULL) == -1 && qc_url_stamps_put (stdout, NULL, NULL) == -1);

    zhashx_t *files = qc_stamps_read (dir), *urls = qc_url_stamps_read (dir);
    CHECK (files && zhashx_size (files) == 1, "file lines: %zu",
           files ? zhashx_size (files) : 0);
    const qc_stamp_t *a = files ? zhashx_lookup (files, "/slides/a b\t.svs") : NULL;
    CHECK (a && qc_stamp_same (a, &st), "a file's stamp read back");
    CHECK (urls && zhashx_size (urls) == 3, "URL lines: %zu", urls ? zhashx_size (urls) : 0);
    const qc_result_source_t *va = urls ? zhashx_lookup (urls, "http://h:8080/a.svs") : NULL;
    CHECK (va && va->size == 1938955 && strcmp (va->etag, "W/\"6b0d-1d96\\0b\"") == 0
           && strcmp (va->last_modified, "Mon, 30 Nov 2026 10:25:07 GMT") == 0,
           "a URL's version read back byte for byte");
    CHECK (qc_url_stamp_checkable (va));
    const qc_result_source_t *vb = urls ? zhashx_lookup (urls, "http://h:8080/b.svs") : NULL;
    CHECK (vb && vb->size == 77 && strcmp (vb->etag, "\"new\"") == 0
           && vb->last_modified[0] == 0, "the later line wins");
    const qc_result_source_t *vc = urls ? zhashx_lookup (urls, "http://h:8080/c.svs") : NULL;
    CHECK (vc && vc->size == -1 && !qc_url_stamp_checkable (vc),
           "a later 'not known' line replaces a version");
    CHECK (urls && !zhashx_lookup (urls, "http://h:8080/d.svs")
           && !zhashx_lookup (urls, "http://h:8080/e.svs")
           && !zhashx_lookup (urls, "http://h:8080/f.svs"), "damaged lines skipped");
    CHECK (!qc_url_stamp_checkable (NULL));
    zhashx_destroy (&files);
    zhashx_destroy (&urls);
}

static void
test_absent (void)
{
    zhashx_t *t = qc_url_stamps_read ("/nonexistent/folder");
    CHECK (t && zhashx_size (t) == 0, "no file: an empty table");
    zhashx_destroy (&t);
    t = qc_url_stamps_read (NULL);
    CHECK (t && zhashx_size (t) == 0);
    zhashx_destroy (&t);
}

static void
test_inputs (void)
{
    char path[256];
    snprintf (path, sizeof path, "%s/beside.xml", dir);
    FILE *w = fopen (path, "w");
    CHECK (w && fputs ("<Annotations/>\n", w) >= 0 && fclose (w) == 0);
    qc_stamp_t there, gone, now;
    CHECK (qc_input_stamp_take (path, &there) && there.size == 15, "a file there: its size");
    CHECK (qc_input_stamp_take ("/nonexistent/folder/a.xml", &gone) && gone.size == -1,
           "a file not there: size -1");
    CHECK (qc_input_stamp_take ("/etc/passwd/a.xml", &now) && now.size == -1,
           "under a file (ENOTDIR): not there");
    CHECK (qc_input_stamp_take (dir, &now) && now.size == -2 && !qc_stamp_same (&now, &gone)
           && !qc_stamp_same (&now, &there), "a folder: -2, another stamp than a file's");
    CHECK (!qc_input_stamp_take (NULL, &now) && !qc_input_stamp_take (path, NULL));
    CHECK (!qc_stamp_same (&there, &gone));

    FILE *f = open_stamps ("w");
    CHECK (f != NULL);
    if (!f)
        return;
    qc_stamp_t st = {.size = 5, .mtime_s = 1764496000, .mtime_ns = 12};
    CHECK (qc_stamps_put (f, "/s/a.svs", &st) > 0);
    CHECK (qc_input_stamps_put (f, "/s/a.svs", "/s/a.xml", &gone) == 0);
    CHECK (qc_input_stamps_put (f, "/s/a.svs", "/s/a.xml", &there) == 0);
    CHECK (qc_input_stamps_put (f, "/s/a\tb.svs", "c.xml", &gone) == 0);
    CHECK (qc_input_stamps_put (f, "/s/a", "b\tc.xml", &there) == 0);
    qc_stamp_t odd = {.size = -2};
    CHECK (qc_input_stamps_put (f, "/s/o.svs", "/s/o.xml", &odd) == 0);
    CHECK (qc_url_stamps_put (f, "http://h/a.svs", NULL) == 0);
    /* damaged: cut short, a size under -2, a time of 3 digits */
    fputs ("/s/d.svs\ti\t/s/d.xml\t5\n", f);
    fputs ("/s/e.svs\ti\t/s/e.xml\t-3\t1.000000000\n", f);
    fputs ("/s/g.svs\ti\t/s/g.xml\t5\t1.000\n", f);
    CHECK (fclose (f) == 0);
    CHECK (qc_input_stamps_put (NULL, "a", "b", &st) == -1
           && qc_input_stamps_put (stdout, "a", NULL, &st) == -1);

    zhashx_t *in = qc_input_stamps_read (dir), *files = qc_stamps_read (dir),
             *urls = qc_url_stamps_read (dir);
    CHECK (in && zhashx_size (in) == 4, "input lines: %zu", in ? zhashx_size (in) : 0);
    char *ko = qc_input_stamp_key ("/s/o.svs", "/s/o.xml");
    const qc_stamp_t *o = in && ko ? zhashx_lookup (in, ko) : NULL;
    CHECK (o && o->size == -2, "a file there but not readable read back");
    free (ko);
    CHECK (files && zhashx_size (files) == 1, "file lines: %zu (input lines taken for "
           "files?)", files ? zhashx_size (files) : 0);
    CHECK (urls && zhashx_size (urls) == 1, "URL lines: %zu", urls ? zhashx_size (urls) : 0);
    char *k = qc_input_stamp_key ("/s/a.svs", "/s/a.xml");
    const qc_stamp_t *a = in && k ? zhashx_lookup (in, k) : NULL;
    CHECK (a && qc_stamp_same (a, &there), "the later line of a file wins");
    free (k);
    k = qc_input_stamp_key ("/s/a\tb.svs", "c.xml");
    const qc_stamp_t *b = in && k ? zhashx_lookup (in, k) : NULL;
    CHECK (b && b->size == -1 && qc_stamp_same (b, &gone), "a file not there read back");
    free (k);
    k = qc_input_stamp_key ("/s/a", "b\tc.xml");
    CHECK (in && k && zhashx_lookup (in, k), "a tab in the file's name");
    free (k);
    CHECK (!qc_input_stamp_key (NULL, "x") && !qc_input_stamp_key ("x", NULL));
    zhashx_destroy (&in);
    zhashx_destroy (&files);
    zhashx_destroy (&urls);
    unlink (path);
}

static void
test_workers_inputs (void)
{
    /* a worker's version of a local file: size and "secs.nanos" */
    qc_result_source_t v = { .size = 42 };
    snprintf (v.last_modified, sizeof v.last_modified, "1764496000.000000123");
    qc_stamp_t w;
    CHECK (qc_input_stamp_of_version (&v, &w) && w.workers && w.size == 42
           && w.mtime_s == 1764496000 && w.mtime_ns == 123);
    /* not one: a URL's (an ETag, an HTTP date), no size, no time */
    qc_result_source_t url = v;
    snprintf (url.etag, sizeof url.etag, "\"x\"");
    qc_result_source_t date = { .size = 42 };
    snprintf (date.last_modified, sizeof date.last_modified, "Wed, 02 Dec 2026 10:00:00 GMT");
    qc_result_source_t nosize = v, notime = { .size = 42 };
    nosize.size = -1;
    CHECK (!qc_input_stamp_of_version (&url, &w) && !qc_input_stamp_of_version (&date, &w)
           && !qc_input_stamp_of_version (&nosize, &w)
           && !qc_input_stamp_of_version (&notime, &w)
           && !qc_input_stamp_of_version (NULL, &w) && !qc_input_stamp_of_version (&v, NULL));

    FILE *f = open_stamps ("w");
    CHECK (f != NULL);
    if (!f)
        return;
    qc_stamp_t here = {.size = -1};
    CHECK (qc_input_stamp_of_version (&v, &w));
    /* sent: not seen here; the result: the worker's; another slide the
       other way round; a "w" line of no file to read (-2) is damaged,
       one of a file its worker found not there is not */
    CHECK (qc_input_stamps_put (f, "/s/a.svs", "/w/a.xml", &here) == 0);
    CHECK (qc_input_stamps_put (f, "/s/a.svs", "/w/a.xml", &w) == 0);
    CHECK (qc_input_stamps_put (f, "/s/b.svs", "/w/b.xml", &w) == 0);
    CHECK (qc_input_stamps_put (f, "/s/b.svs", "/w/b.xml", &here) == 0);
    fputs ("/s/c.svs\tw\t/w/c.xml\t-2\t0.000000000\n", f);
    qc_stamp_t none = {.size = -1, .workers = true};
    CHECK (qc_input_stamps_put (f, "/s/d.svs", "/w/d.xml", &none) == 0);
    CHECK (fclose (f) == 0);
    zhashx_t *in = qc_input_stamps_read (dir), *files = qc_stamps_read (dir);
    CHECK (in && zhashx_size (in) == 3, "input lines: %zu", in ? zhashx_size (in) : 0);
    char *kd = qc_input_stamp_key ("/s/d.svs", "/w/d.xml");
    const qc_stamp_t *d = in && kd ? zhashx_lookup (in, kd) : NULL;
    CHECK (d && d->workers && d->size == -1, "a file its worker found not there read back");
    free (kd);
    CHECK (files && zhashx_size (files) == 0);
    char *ka = qc_input_stamp_key ("/s/a.svs", "/w/a.xml"),
         *kb = qc_input_stamp_key ("/s/b.svs", "/w/b.xml");
    const qc_stamp_t *a = in && ka ? zhashx_lookup (in, ka) : NULL,
                     *b = in && kb ? zhashx_lookup (in, kb) : NULL;
    CHECK (a && a->workers && qc_stamp_same (a, &w), "the worker's line, later, wins");
    CHECK (b && !b->workers && b->size == -1, "a later line of this machine's wins");
    free (ka);
    free (kb);
    zhashx_destroy (&in);
    zhashx_destroy (&files);
}

/* Files by URL beside slides ("u" lines): a version read back byte for
 * byte, "not there" as size -1 and no validator, the later line
 * winning, a forgetting line (-2) taking a stamp away until a later one;
 * a file read of which nothing is known gets no line; damaged lines
 * skipped; the other readers take none of them. */
static void
test_url_inputs (void)
{
    FILE *f = open_stamps ("w");
    CHECK (f != NULL);
    if (!f)
        return;
    qc_result_input_t there = { .where = "http://h:8080/s/a.xml", .there = true,
                                .v = { .size = 549 } };
    snprintf (there.v.etag, sizeof there.v.etag, "\"5f-22\\x\"");
    snprintf (there.v.last_modified, sizeof there.v.last_modified,
              "Wed, 02 Dec 2026 08:00:00 GMT");
    qc_result_input_t gone = { .where = "http://h:8080/s/b.xml", .there = false,
                               .v = { .size = 12 } };      /* ignored: not there */
    qc_result_input_t unknown = { .where = "http://h:8080/s/c.xml", .there = true,
                                  .v = { .size = -1 } };
    CHECK (qc_url_stamps_put (f, "http://h:8080/s/a.svs", NULL) == 0);
    CHECK (qc_url_input_stamps_put (f, "http://h:8080/s/a.svs", &gone) == 0);
    qc_result_input_t a_gone = gone;
    a_gone.where = there.where;
    CHECK (qc_url_input_stamps_put (f, "http://h:8080/s/a.svs", &a_gone) == 0);
    CHECK (qc_url_input_stamps_put (f, "http://h:8080/s/a.svs", &there) == 0);
    CHECK (qc_url_input_stamps_put (f, "http://h:8080/s/b.svs", &gone) == 0);
    long before = ftell (f);
    CHECK (qc_url_input_stamps_put (f, "http://h:8080/s/c.svs", &unknown) == 0
           && ftell (f) == before, "a file of no known version: no line");
    /* forgotten (a later record did not say), then stamped again; and
       forgotten for good */
    qc_result_input_t d2 = there;
    d2.where = "http://h:8080/s/d2.xml";
    CHECK (qc_url_input_stamps_put (f, "http://h:8080/s/a.svs", &d2) == 0
           && qc_url_input_stamps_forget (f, "http://h:8080/s/a.svs", d2.where) == 0
           && qc_url_input_stamps_put (f, "http://h:8080/s/b.svs", &d2) == 0
           && qc_url_input_stamps_forget (f, "http://h:8080/s/b.svs", d2.where) == 0
           && qc_url_input_stamps_put (f, "http://h:8080/s/b.svs", &d2) == 0);
    CHECK (qc_url_input_stamps_forget (f, "/slides/local.svs", "http://h/x.xml") == 0
           && qc_url_input_stamps_forget (NULL, "a", "b") == -1
           && qc_url_input_stamps_forget (f, "a", "") == -1);
    /* damaged: a field short, a size under -2, a field too many */
    fputs ("http://h/d.svs\tu\thttp://h/d.xml\t5\t\"e\"\n", f);
    fputs ("http://h/e.svs\tu\thttp://h/e.xml\t-3\t\t\n", f);
    fputs ("http://h/f.svs\tu\thttp://h/f.xml\t5\t\t\tx\n", f);
    CHECK (fclose (f) == 0);
    CHECK (qc_url_input_stamps_put (NULL, "a", &there) == -1
           && qc_url_input_stamps_put (stdout, NULL, &there) == -1
           && qc_url_input_stamps_put (stdout, "a", NULL) == -1);

    zhashx_t *t = qc_url_input_stamps_read (dir), *urls = qc_url_stamps_read (dir),
             *in = qc_input_stamps_read (dir), *files = qc_stamps_read (dir);
    CHECK (t && zhashx_size (t) == 4, "u lines: %zu", t ? zhashx_size (t) : 0);
    char *kd = qc_input_stamp_key ("http://h:8080/s/a.svs", d2.where);
    char *kd2 = qc_input_stamp_key ("http://h:8080/s/b.svs", d2.where);
    CHECK (t && kd && kd2 && !zhashx_lookup (t, kd) && zhashx_lookup (t, kd2),
           "a forgotten stamp gone, one stamped again after it kept");
    free (kd);
    free (kd2);
    char *k = qc_input_stamp_key ("http://h:8080/s/a.svs", there.where);
    const qc_result_source_t *a = t && k ? zhashx_lookup (t, k) : NULL;
    CHECK (a && a->size == 549 && strcmp (a->etag, there.v.etag) == 0
           && strcmp (a->last_modified, there.v.last_modified) == 0,
           "the later line of a file wins, its version byte for byte");
    free (k);
    k = qc_input_stamp_key ("http://h:8080/s/b.svs", gone.where);
    const qc_result_source_t *b = t && k ? zhashx_lookup (t, k) : NULL;
    CHECK (b && b->size == -1 && !qc_url_stamp_checkable (b), "not there read back");
    free (k);
    CHECK (urls && zhashx_size (urls) == 1 && in && zhashx_size (in) == 0 && files
           && zhashx_size (files) == 0, "u lines taken for other lines");
    zhashx_destroy (&t);
    zhashx_destroy (&urls);
    zhashx_destroy (&in);
    zhashx_destroy (&files);
}

int
main (void)
{
    if (!mkdtemp (dir)) {
        perror ("mkdtemp");
        return 1;
    }
    test_read_apart ();
    test_absent ();
    test_inputs ();
    test_workers_inputs ();
    test_url_inputs ();
    char path[256];
    snprintf (path, sizeof path, "%s/%s", dir, QC_STAMPS_FILE);
    unlink (path);
    rmdir (dir);
    return check_done ("test_output_stamps");
}
