/* The client's text and names (client/escape.c, client/names.c,
 * client/shell_word.c): a word of a command the user is told to run
 * reaches a shell's program as it was; any
 * byte a slide's name may hold is escaped reversibly and keeps a TSV
 * line one line; output names are one safe path component under the
 * length limit, unique per folder, and a slide keeps its name. */
#include <string.h>

#include "client/escape.h"
#include "client/names.h"
#include "client/shell_word.h"
#include "tests/unit/check.h"

static void
test_escape (void)
{
    static const struct { const char *in, *out; } cases[] = {
        {"plain.svs", "plain.svs"},
        {"a\tb", "a\\tb"},
        {"line\nbreak\r", "line\\nbreak\\r"},
        {"back\\slash", "back\\\\slash"},
        {"bell\a del\x7f", "bell\\x07 del\\x7f"},
        {"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac"},
        {"latin1 \xe9t\xe9", "latin1 \\xe9t\\xe9"},            /* not UTF-8 */
        {"overlong \xc0\xaf", "overlong \\xc0\\xaf"},
        {"surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80"},
        {"cut \xe6\x97", "cut \\xe6\\x97"},
        {"emoji \xf0\x9f\x94\xac", "emoji \xf0\x9f\x94\xac"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *e = qc_escape_dup (cases[i].in);
        CHECK (e && strcmp (e, cases[i].out) == 0, "escape case %zu: '%s'", i, e ? e : "(null)");
        CHECK (e && !strpbrk (e, "\t\n\r"), "escaped text has no tab or line break (%zu)", i);
        char *u = e ? qc_unescape_dup (e) : NULL;
        CHECK (u && strcmp (u, cases[i].in) == 0, "unescape gives the bytes back (%zu)", i);
        CHECK (qc_escape_clean (cases[i].in) == (strcmp (cases[i].in, cases[i].out) == 0),
               "clean agrees with escape (%zu)", i);
        free (e);
        free (u);
    }
    /* every byte value survives the round trip */
    char all[256];
    for (int i = 1; i < 256; i++)
        all[i - 1] = (char) i;
    all[255] = '\0';
    char *e = qc_escape_dup (all), *u = e ? qc_unescape_dup (e) : NULL;
    CHECK (u && strcmp (u, all) == 0, "bytes 1..255 round-trip");
    free (e);
    free (u);
    /* a backslash not starting an escape stays as it is */
    u = qc_unescape_dup ("a\\qb\\x0g\\");
    CHECK (u && strcmp (u, "a\\qb\\x0g\\") == 0, "unknown escapes kept: %s", u ? u : "");
    free (u);
    /* written to a file as well */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    CHECK (qc_escape_put (f, "x\ty\n") == 0);
    fclose (f);
    CHECK (buf && strcmp (buf, "x\\ty\\n") == 0);
    free (buf);
}

static void
test_safe (void)
{
    static const struct { const char *in, *out; } cases[] = {
        {"slide.svs", "slide.svs"},
        {"a\tb\nc\rd.svs", "a_b_c_d.svs"},
        {"back\\slash.svs", "back_slash.svs"},
        {"latin1 \xe9.svs", "latin1 _.svs"},
        {"\xe6\x97\xa5\xe6\x9c\xac.ndpi", "\xe6\x97\xa5\xe6\x9c\xac.ndpi"},
        {".", "_."}, {"..", "_.."}, {"", "_"},
        {".hidden.svs", ".hidden.svs"},
        {"#17.svs", "_17.svs"}, {"a#1.svs", "a#1.svs"},
        {"\"quoted\".svs", "_quoted\".svs"}, {"a\"b.svs", "a\"b.svs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = qc_names_safe (cases[i].in);
        CHECK (s && strcmp (s, cases[i].out) == 0, "safe case %zu: '%s'", i, s ? s : "(null)");
        free (s);
    }
    /* 250 bytes: cut to the limit, extension kept, distinct for names
     * that share their first 150 bytes */
    char a[251], b[251];
    memset (a, 'x', 246);
    strcpy (a + 246, ".svs");
    memcpy (b, a, sizeof a);
    b[200] = 'y';
    char *sa = qc_names_safe (a), *sb = qc_names_safe (b);
    CHECK (sa && strlen (sa) <= QC_NAME_MAX, "long name cut: %zu bytes", sa ? strlen (sa) : 0);
    CHECK (sa && strcmp (sa + strlen (sa) - 4, ".svs") == 0, "extension kept");
    CHECK (sa && sb && strcmp (sa, sb) != 0, "two long names stay apart");
    CHECK (sa && strchr (sa, '~'), "the cut is marked: %s", sa ? sa : "");
    free (sa);
    free (sb);
    /* a cut never splits a character: 100 three-byte characters */
    char cjk[400] = "";
    for (int i = 0; i < 100; i++)
        strcat (cjk, "\xe6\x97\xa5");
    char *sc = qc_names_safe (cjk);
    CHECK (sc && strlen (sc) <= QC_NAME_MAX && qc_escape_clean (sc), "UTF-8 cut whole");
    free (sc);
}

/* A slide by URL is named by its redacted URL's file name, percent-
 * decoded; two on one server in different folders get their folders. */
static void
test_urls (void)
{
    qc_names_t *n = qc_names_new ();
    char *a = qc_names_assign (n, "http://h:8080/x/TCGA%20A.svs");
    char *b = qc_names_assign (n, "https://h/y/TCGA%20A.svs");
    char *c = qc_names_assign (n, "https://h/");
    char *d = qc_names_assign (n, "http://127.0.0.1:24601/TCGA%20A.svs");
    char *e = qc_names_assign (n, "http://h:8080/");
    CHECK (e && strcmp (e, "h_8080") == 0, "no file name, a port: %s", e ? e : "");
    free (e);
    CHECK (a && strcmp (a, "TCGA A.svs") == 0, "decoded file name: %s", a ? a : "");
    CHECK (b && strcmp (b, "y__TCGA A.svs") == 0, "its folder then: %s", b ? b : "");
    CHECK (c && strcmp (c, "h") == 0, "no file name: the host: %s", c ? c : "");
    /* the server's host:port as the folder: no ':' (SMB, exFAT, NTFS) */
    CHECK (d && strcmp (d, "127.0.0.1_24601__TCGA A.svs") == 0, "host and port: %s",
           d ? d : "");
    /* a path that ends in '/': the segment before it, then its folder;
       a second with no file name on one server: no ':' from the port */
    char *f = qc_names_assign (n, "http://h:8080/ok/sub1/");
    char *g = qc_names_assign (n, "http://h:9090/ok/sub1/");
    char *k = qc_names_assign (n, "http://127.0.0.1:47100/");
    char *l = qc_names_assign (n, "http://127.0.0.1:47100/?x=1");
    CHECK (f && strcmp (f, "sub1") == 0, "a path ending in '/': %s", f ? f : "");
    CHECK (g && strcmp (g, "ok__sub1") == 0, "the same name on another server: %s",
           g ? g : "");
    CHECK (k && l && strcmp (k, "127.0.0.1_47100") == 0 && !strchr (l, ':'),
           "no ':' in a host's name, nor its second: %s, %s", k ? k : "", l ? l : "");
    free (a);
    free (b);
    free (c);
    free (d);
    free (f);
    free (g);
    free (k);
    free (l);
    qc_names_destroy (&n);
}

/* A slide named as one of the output folder's own files gets another
 * name: its folder was made over the file, and every run stopped there
 * (exit 5), the rest of its cohort not run (a user's review). */
static void
test_folder_own (void)
{
    qc_names_t *n = qc_names_new ();
    static const char *const own[][2] = {
        {"/data/p/qc.log", "p__qc.log"}, {"http://h/q/results.tsv?sig=1", "q__results.tsv"},
        {"/data/p/ERROR.LOG", "p__ERROR.LOG"}, {"/data/p/results.tsv.3", "p__results.tsv.3"},
        {"/data/p/.qc-config", "p__.qc-config"}, {"/data/p/.QC-lock", "p__.QC-lock"},
        {"/qc.log", "qc.log-2"},
    };
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
        char *a = qc_names_assign (n, own[i][0]);
        CHECK (a && strcmp (a, own[i][1]) == 0, "%s: named %s, expected %s", own[i][0],
               a ? a : "(null)", own[i][1]);
        free (a);
    }
    /* names that only begin so are a slide's own */
    static const char *const fine[] = {"/d/qc.log.svs", "/d/results.tsv.x", "/d/error.log.",
                                       "/d/qc.logs", "/d/.qc", "/d/x.qc-config"};
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
        char *a = qc_names_assign (n, fine[i]);
        CHECK (a && strcmp (a, strrchr (fine[i], '/') + 1) == 0, "%s: named %s", fine[i],
               a ? a : "(null)");
        free (a);
    }
    qc_names_destroy (&n);
}

static void
test_assign (void)
{
    qc_names_t *n = qc_names_new ();
    CHECK (n != NULL);
    char *a = qc_names_assign (n, "/data/a/slide.svs");
    char *b = qc_names_assign (n, "/data/b/slide.svs");
    char *c = qc_names_assign (n, "/other/b/slide.svs");
    char *d = qc_names_assign (n, "/x/b/slide.svs");
    char *a2 = qc_names_assign (n, "/data/a/slide.svs");
    CHECK (a && strcmp (a, "slide.svs") == 0, "first keeps its file name: %s", a ? a : "");
    CHECK (b && strcmp (b, "b__slide.svs") == 0, "second gets its folder: %s", b ? b : "");
    CHECK (c && strcmp (c, "other__b__slide.svs") == 0, "then two folders: %s", c ? c : "");
    CHECK (d && strcmp (d, "x__b__slide.svs") == 0, "and again: %s", d ? d : "");
    CHECK (a2 && strcmp (a2, a) == 0, "a slide keeps its name");
    CHECK (strcmp (qc_names_of (n, "/data/b/slide.svs"), "b__slide.svs") == 0);
    CHECK (qc_names_of (n, "/nope.svs") == NULL);
    free (a);
    free (b);
    free (c);
    free (d);
    free (a2);
    /* names already in the folder: a row naming its slide keeps the
     * name for that slide; a row that does not blocks it for all */
    qc_names_t *m = qc_names_new ();
    CHECK (qc_names_claim (m, "s.svs", "/old/s.svs") == 0);
    CHECK (qc_names_claim (m, "t.svs", NULL) == 0);
    char *s1 = qc_names_assign (m, "/old/s.svs");
    char *s2 = qc_names_assign (m, "/new/s.svs");
    char *t = qc_names_assign (m, "/t.svs");
    CHECK (s1 && strcmp (s1, "s.svs") == 0, "kept: %s", s1 ? s1 : "");
    CHECK (s2 && strcmp (s2, "new__s.svs") == 0, "other slide, new name: %s", s2 ? s2 : "");
    CHECK (t && strcmp (t, "t.svs-2") == 0, "no folder to add: a number: %s", t ? t : "");
    free (s1);
    free (s2);
    free (t);
    /* names that differ only in case are one folder where results are
     * shared (SMB, exFAT, macOS): the second gets its folder's name */
    char *u1 = qc_names_assign (m, "/scan/A/Case1.svs");
    char *u2 = qc_names_assign (m, "/scan/B/case1.SVS");
    char *u3 = qc_names_assign (m, "/scan/C/\xc3\x89t\xc3\xa9.svs");
    char *u4 = qc_names_assign (m, "/scan/D/\xc3\xa9T\xc3\x89.svs");
    char *u5 = qc_names_assign (m, "/scan/E/S.SVS");       /* "s.svs" was claimed */
    char *u6 = qc_names_assign (m, "/scan/F/x\xc3\x97.svs");
    char *u7 = qc_names_assign (m, "/scan/G/x\xc3\xb7.svs"); /* x and the division sign */
    CHECK (u1 && strcmp (u1, "Case1.svs") == 0, "first keeps its name: %s", u1 ? u1 : "");
    CHECK (u2 && strcmp (u2, "B__case1.SVS") == 0, "case only: %s", u2 ? u2 : "");
    CHECK (u4 && strcmp (u4, "D__\xc3\xa9T\xc3\x89.svs") == 0, "accented capitals: %s",
           u4 ? u4 : "");
    CHECK (u3 && strcmp (u3, "\xc3\x89t\xc3\xa9.svs") == 0, "%s", u3 ? u3 : "");
    CHECK (u5 && strcmp (u5, "E__S.SVS") == 0, "against a claimed name: %s", u5 ? u5 : "");
    CHECK (u6 && u7 && strcmp (u7, "x\xc3\xb7.svs") == 0, "not letters, not one: %s",
           u7 ? u7 : "");
    CHECK (qc_names_claim (m, "CASE1.svs", "/scan/A/Case1.svs") == 0
           && strcmp (qc_names_of (m, "/scan/A/Case1.svs"), "Case1.svs") == 0,
           "a claim in another case does not rename");
    /* a folder made where case counts holds "K.svs" and "k.svs": each
     * row's slide keeps its name, and a new slide avoids both */
    qc_names_t *k = qc_names_new ();
    CHECK (k && qc_names_claim (k, "K.svs", "/p/K.svs") == 0
           && qc_names_claim (k, "k.svs", "/q/k.svs") == 0);
    char *k1 = k ? qc_names_assign (k, "/q/k.svs") : NULL;
    char *k2 = k ? qc_names_assign (k, "/r/K.SVS") : NULL;
    CHECK (k1 && strcmp (k1, "k.svs") == 0, "an old row keeps its name: %s", k1 ? k1 : "");
    CHECK (k2 && strcmp (k2, "r__K.SVS") == 0, "a new slide: %s", k2 ? k2 : "");
    free (k1);
    free (k2);
    /* an older build named a slide "#9.svs" in .qc-slides (its row read
       as a comment line): the name is not kept, the slide gets "_9.svs" */
    CHECK (k && qc_names_claim (k, "#9.svs", "/s/#9.svs") == 0);
    char *k3 = k ? qc_names_assign (k, "/s/#9.svs") : NULL;
    CHECK (k3 && strcmp (k3, "_9.svs") == 0, "an old '#' name is given anew: %s",
           k3 ? k3 : "");
    free (k3);
    qc_names_destroy (&k);
    free (u1);
    free (u2);
    free (u3);
    free (u4);
    free (u5);
    free (u6);
    free (u7);
    /* other scripts' capitals too: Greek, Cyrillic, Latin Extended-A,
       and the letters with two small forms (final sigma, long s), as
       file systems' case folding has them; scripts without case stay
       apart */
    static const struct {
        const char *first, *second, *expect;
    } scripts[] = {
        {"/g/A/\xce\x94\xce\x95\xce\x99\xce\x93\xce\x9c\xce\x91.svs",   /* ΔΕΙΓΜΑ */
         "/g/B/\xce\xb4\xce\xb5\xce\xb9\xce\xb3\xce\xbc\xce\xb1.svs",   /* δειγμα */
         "B__\xce\xb4\xce\xb5\xce\xb9\xce\xb3\xce\xbc\xce\xb1.svs"},
        {"/s/A/\xce\xa3\xce\xa4\xce\x91\xce\xa3.svs",   /* ΣΤΑΣ, στας: final sigma */
         "/s/B/\xcf\x83\xcf\x84\xce\xb1\xcf\x82.svs",
         "B__\xcf\x83\xcf\x84\xce\xb1\xcf\x82.svs"},
        {"/ls/A/\xc5\xbf" "ea.svs", "/ls/B/SEA.svs", "B__SEA.svs"},   /* long s: ſea, SEA */
        {"/c/A/\xd0\x9f\xd0\xa0\xd0\x9e\xd0\x91\xd0\x90.svs",             /* ПРОБА */
         "/c/B/\xd0\xbf\xd1\x80\xd0\xbe\xd0\xb1\xd0\xb0.svs",             /* проба */
         "B__\xd0\xbf\xd1\x80\xd0\xbe\xd0\xb1\xd0\xb0.svs"},
        {"/l/A/\xc5\x81\xc3\xb3" "d\xc5\xba.svs", "/l/B/\xc5\x82\xc3\x93" "D\xc5\xb9.svs",  /* Łódź */
         "B__\xc5\x82\xc3\x93" "D\xc5\xb9.svs"},
        {"/j/A/\xe6\x97\xa5\xe6\x9c\xac.svs", "/j/B/\xe6\x9c\xac\xe6\x97\xa5.svs",  /* 日本, 本日 */
         "\xe6\x9c\xac\xe6\x97\xa5.svs"},
        /* bytes that are not UTF-8 (names show them as _) */
        {"/b/A/x\xff\xc3.svs", "/b/B/X\xff\xc3.SVS", "B__X__.SVS"},
        {"/b/A/y\xc3\xbf.svs", "/b/B/y\xff.svs", "y_.svs"},  /* ÿ, and a lone byte */
    };
    for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++) {
        char *a = qc_names_assign (m, scripts[i].first);
        char *b = qc_names_assign (m, scripts[i].second);
        CHECK (a && b && strcmp (b, scripts[i].expect) == 0 && strcmp (a, b) != 0,
               "script %zu: %s then %s", i, a ? a : "", b ? b : "");
        free (a);
        free (b);
    }
    /* many slides of one name in one folder name: all distinct */
    char seen[64][QC_NAME_MAX + 1];
    bool distinct = true;
    for (int i = 0; i < 64; i++) {
        char p[64];
        snprintf (p, sizeof p, "/r%d/same/x.svs", i);
        char *x = qc_names_assign (m, p);
        CHECK (x && strlen (x) <= QC_NAME_MAX && !strchr (x, '/'));
        snprintf (seen[i], sizeof seen[i], "%s", x ? x : "");
        for (int j = 0; j < i; j++)
            distinct = distinct && strcmp (seen[i], seen[j]) != 0;
        free (x);
    }
    CHECK (distinct, "64 slides named x.svs get 64 names");
    qc_names_destroy (&m);
    CHECK (m == NULL);
    /* a long, odd name: safe and short whatever its folder */
    char lp[600] = "/data/\n\t/";
    memset (lp + strlen (lp), 'z', 300);
    char *z1 = qc_names_assign (n, lp);
    char *z2 = qc_names_assign (n, strcat (strcpy ((char[700]) {0}, "/e"), lp));
    CHECK (z1 && z2 && strlen (z1) <= QC_NAME_MAX && strlen (z2) <= QC_NAME_MAX
               && strcmp (z1, z2) != 0 && qc_escape_clean (z1) && qc_escape_clean (z2),
           "long names: %s / %s", z1 ? z1 : "", z2 ? z2 : "");
    free (z1);
    free (z2);
    qc_names_destroy (&n);
}

/* Each word, as qc_shell_word_add writes it, given to /bin/sh: the
 * program it runs gets the word back byte for byte. */
static void
test_shell_words (void)
{
    static const char *words[] = {
        "plain/path-1.svs", "a folder/with space", "it's", "'''", "$HOME `id` \\ \"q\"",
        "tab\there", "line\nbreak", "caf\xc3\xa9", "*.svs", "", "--cert", "a;b|c&d>e",
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        char cmd[512] = "printf %s";
        CHECK (qc_shell_word_add (cmd, sizeof cmd, words[i]) == 0, "word %zu fits", i);
        FILE *p = popen (cmd, "r");
        char got[256] = "";
        size_t n = p ? fread (got, 1, sizeof got - 1, p) : 0;
        got[n] = '\0';
        CHECK (p && pclose (p) == 0 && strcmp (got, words[i]) == 0,
               "word %zu through sh: '%s' gave '%s' (%s)", i, words[i], got, cmd);
    }
    char one[4] = "", small[8] = "ab";
    CHECK (qc_shell_word_add (one, sizeof one, "x") == 0 && strcmp (one, "x") == 0,
           "the first word has no space before it: '%s'", one);
    CHECK (qc_shell_word_add (small, sizeof small, "a b c") == -1 && strcmp (small, "ab") == 0,
           "a word that does not fit leaves the line as it was: '%s'", small);
    CHECK (qc_shell_word_add (NULL, 4, "x") == -1 && qc_shell_word_add (one, sizeof one, NULL) == -1,
           "NULL refused");
}

/* A slide moved (rerun.c): the slide at its new path takes the name its
 * record had; the old path has none; a third file of that name gets
 * another. */
static void
test_move (void)
{
    qc_names_t *n = qc_names_new ();
    CHECK (n && qc_names_claim (n, "a.svs", "/inc/a.svs") == 0);
    CHECK (qc_names_move (n, "/inc/a.svs", "/arch/a.svs") == 0, "moved");
    const char *got = qc_names_of (n, "/arch/a.svs");
    CHECK (got && strcmp (got, "a.svs") == 0, "the new path has the name: %s",
           got ? got : "-");
    CHECK (!qc_names_of (n, "/inc/a.svs"), "the old path has none");
    char *other = qc_names_assign (n, "/copy/a.svs");
    CHECK (other && strcmp (other, "a.svs") != 0, "another file of that name: %s",
           other ? other : "-");
    free (other);
    CHECK (qc_names_move (n, "/nowhere/x.svs", "/y/x.svs") == 1, "no name to move");
    CHECK (qc_names_move (n, "/arch/a.svs", "/copy/a.svs") == 1, "to has a name");
    CHECK (qc_names_move (NULL, "/a", "/b") == -1 && qc_names_move (n, "/a", "") == -1);
    qc_names_destroy (&n);
}

int
main (void)
{
    test_shell_words ();
    test_escape ();
    test_safe ();
    test_assign ();
    test_folder_own ();
    test_urls ();
    test_move ();
    return check_done ("test_client_names");
}
