/* Tests of the HistoQC config.ini parser (shared/config.c): the format as
 * HistoQC users write it, configparser's corner cases, and malformed or
 * hostile input that must be refused with a line number, never crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/config.h"
#include "tests/unit/check.h"

/* check.h prints CHECK's optional message with fprintf (stderr, "" ...):
 * a CHECK without one is a zero-length format, which -Werror refuses. */
#pragma GCC diagnostic ignored "-Wformat-zero-length"

static char err[512];

static qc_config_t *
parse (const char *text)
{
    return qc_config_parse (text, strlen (text), err, sizeof err, NULL);
}

/* Parses text that must fail; returns the reported line. */
#define FAILS(lit) parse_fails (lit, sizeof (lit) - 1)
static int
parse_fails (const char *text, size_t len)
{
    int line = -1;
    err[0] = '\0';
    qc_config_t *cfg = qc_config_parse (text, len, err, sizeof err, &line);
    CHECK (cfg == NULL, "accepted bad config: %.60s", text);
    CHECK (err[0] != '\0', "no message for: %.60s", text);
    qc_config_destroy (&cfg);
    return line;
}

static const char *
str (const qc_config_section_t *sec, const char *key)
{
    const char *v = NULL;
    if (qc_config_get_string (sec, key, NULL, &v, err, sizeof err) != 0)
        return "<error>";
    return v ? v : "<absent>";
}

/* A config the way a HistoQC user writes one (our own example, in the
 * shape of HistoQC's config.ini). */
static const char histoqc_style[] =
    "; quality control for the 2024 cohort\n"
    "[pipeline]\n"
    "steps= BasicModule.getBasicStats\n"
    "    LightDarkModule.getIntensityThresholdPercent:tissue\n"
    "#    ClassificationModule.byExampleWithFeatures:pen_markings\n"
    "    BasicModule.finalComputations\n"
    "\n"
    "\n"
    "[BaseImage.BaseImage]\n"
    "image_work_size = 1.25x\n"
    "\n"
    "#not used yet\n"
    "confirm_base_mag: False\n"
    "Mask_Statistics = relative2mask\n"
    "\n"
    "[LightDarkModule.getIntensityThresholdPercent:tissue]\n"
    "name: bright\n"
    "upper_threshold: .9\n"
    "lower_std: 10\n"
    "examples: ./pen/green.png:./pen/green_mask.png\n"
    "features:  frangi\n"
    "           laplace\n"
    "           #lbp\n"
    "           rgb\n"
    "\n"
    "empty_value =\n"
    "note = 5 # not a comment: configparser has no inline comments\n"
    "\n"
    "[BasicModule.finalComputations]\n"
    "\n"
    "[DeconvolutionModule.separateStains]\n"
    ";hed_from_rgb: Hematoxylin + Eosin + DAB\n"
    "stain: hed_from_rgb\n"
    "use_mask: True\n";

static void
test_histoqc_format (void)
{
    qc_config_t *cfg = parse (histoqc_style);
    CHECK (cfg != NULL, "%s", err);
    if (!cfg)
        return;
    CHECK (qc_config_nsections (cfg) == 5);
    CHECK (strcmp (qc_config_section_name (qc_config_section_at (cfg, 0)),
                   "pipeline") == 0);
    CHECK (strcmp (qc_config_section_name (qc_config_section_at (cfg, 4)),
                   "DeconvolutionModule.separateStains") == 0);
    CHECK (qc_config_section_at (cfg, 5) == NULL);

    const qc_config_section_t *p = qc_config_section (cfg, "pipeline");
    CHECK (p && qc_config_section_line (p) == 2);
    CHECK (strcmp (str (p, "steps"),
                   "BasicModule.getBasicStats\n"
                   "LightDarkModule.getIntensityThresholdPercent:tissue\n"
                   "BasicModule.finalComputations") == 0, "steps = [%s]",
           str (p, "steps"));
    CHECK (qc_config_key_line (p, "steps") == 3);
    /* each line of the value at its own file line, past the comment */
    CHECK (qc_config_value_line (p, "steps", 0) == 3);
    CHECK (qc_config_value_line (p, "steps", 1) == 4);
    CHECK (qc_config_value_line (p, "steps", 2) == 6, "%d",
           qc_config_value_line (p, "steps", 2));
    CHECK (qc_config_value_line (p, "steps", 9) == 3);
    CHECK (qc_config_value_line (p, "nosuch", 1) == 0);

    const qc_config_section_t *b = qc_config_section (cfg, "BaseImage.BaseImage");
    CHECK (b && qc_config_section_nkeys (b) == 3);
    /* configparser lower-cases keys; lookups ignore case. */
    CHECK (strcmp (qc_config_section_key (b, 2), "mask_statistics") == 0);
    CHECK (strcmp (str (b, "MASK_statistics"), "relative2mask") == 0);
    CHECK (strcmp (str (b, "image_work_size"), "1.25x") == 0);
    int flag = 7;
    CHECK (qc_config_get_bool (b, "confirm_base_mag", 1, &flag, err, sizeof err) == 0
           && flag == 0);
    /* Section names are case-sensitive, as in configparser. */
    CHECK (qc_config_section (cfg, "baseimage.baseimage") == NULL);

    const qc_config_section_t *t =
        qc_config_section (cfg, "LightDarkModule.getIntensityThresholdPercent:tissue");
    CHECK (t != NULL);
    CHECK (strcmp (str (t, "examples"), "./pen/green.png:./pen/green_mask.png") == 0);
    CHECK (strcmp (str (t, "features"), "frangi\nlaplace\nrgb") == 0, "[%s]",
           str (t, "features"));
    CHECK (strcmp (str (t, "empty_value"), "") == 0);
    CHECK (strcmp (str (t, "note"),
                   "5 # not a comment: configparser has no inline comments") == 0);
    double d = 0;
    CHECK (qc_config_get_double (t, "upper_threshold", 0, &d, err, sizeof err) == 0
           && d == 0.9);
    long long i = 0;
    CHECK (qc_config_get_int (t, "lower_std", 0, &i, err, sizeof err) == 0 && i == 10);
    CHECK (qc_config_get_int (t, "note", 0, &i, err, sizeof err) == -1);
    CHECK (strstr (err, "note") && strstr (err, "line 27"), "%s", err);

    const qc_config_section_t *f = qc_config_section (cfg, "BasicModule.finalComputations");
    CHECK (f && qc_config_section_nkeys (f) == 0);
    const qc_config_section_t *s = qc_config_section (cfg, "DeconvolutionModule.separateStains");
    CHECK (s && qc_config_section_nkeys (s) == 2);
    CHECK (qc_config_get_bool (s, "use_mask", 0, &flag, err, sizeof err) == 0 && flag == 1);
    qc_config_destroy (&cfg);
    CHECK (cfg == NULL);
    qc_config_destroy (&cfg);
    qc_config_destroy (NULL);
}

static void
test_getters (void)
{
    qc_config_t *cfg = parse ("[s]\n"
                              "i1 = 42\ni2 = -7\ni3 = +3\ni4 = 10.0\ni5 = 0x10\n"
                              "i6 = 99999999999999999999999\ni7 =\n"
                              "d1 = .5\nd2 = 1e3\nd3 = nan\nd4 = inf\nd5 = 1e999\n"
                              "d6 = 0x1p3\nd7 = abc\nd8 = -2.25\nd9 = 1.2.3\n"
                              "b1 = YES\nb2 = off\nb3 = t\nb4 = 0\nb5 = maybe\n");
    CHECK (cfg != NULL, "%s", err);
    const qc_config_section_t *s = qc_config_section (cfg, "s");
    long long i = 0;
    CHECK (qc_config_get_int (s, "i1", 0, &i, err, sizeof err) == 0 && i == 42);
    CHECK (qc_config_get_int (s, "i2", 0, &i, err, sizeof err) == 0 && i == -7);
    CHECK (qc_config_get_int (s, "i3", 0, &i, err, sizeof err) == 0 && i == 3);
    CHECK (qc_config_get_int (s, "i4", 0, &i, err, sizeof err) == -1);
    CHECK (strstr (err, "[s] i4 = '10.0' (line 5): not an integer") != NULL, "%s", err);
    CHECK (qc_config_get_int (s, "i5", 0, &i, err, sizeof err) == -1);
    CHECK (qc_config_get_int (s, "i6", 0, &i, err, sizeof err) == -1);
    CHECK (strstr (err, "range") != NULL, "%s", err);
    CHECK (qc_config_get_int (s, "i7", 0, &i, err, sizeof err) == -1);
    CHECK (qc_config_get_int (s, "absent", 5, &i, err, sizeof err) == 0 && i == 5);
    double d = 0;
    CHECK (qc_config_get_double (s, "d1", 0, &d, err, sizeof err) == 0 && d == 0.5);
    CHECK (qc_config_get_double (s, "d2", 0, &d, err, sizeof err) == 0 && d == 1000);
    CHECK (qc_config_get_double (s, "d8", 0, &d, err, sizeof err) == 0 && d == -2.25);
    const char *bad_d[] = { "d3", "d4", "d5", "d6", "d7", "d9" };
    for (size_t k = 0; k < sizeof bad_d / sizeof *bad_d; k++)
        CHECK (qc_config_get_double (s, bad_d[k], 0, &d, err, sizeof err) == -1,
               "%s accepted", bad_d[k]);
    CHECK (qc_config_get_double (s, "absent", 1.5, &d, err, sizeof err) == 0 && d == 1.5);
    int b = -1;
    CHECK (qc_config_get_bool (s, "b1", 0, &b, err, sizeof err) == 0 && b == 1);
    CHECK (qc_config_get_bool (s, "b2", 1, &b, err, sizeof err) == 0 && b == 0);
    CHECK (qc_config_get_bool (s, "b3", 0, &b, err, sizeof err) == 0 && b == 1);
    CHECK (qc_config_get_bool (s, "b4", 1, &b, err, sizeof err) == 0 && b == 0);
    CHECK (qc_config_get_bool (s, "b5", 1, &b, err, sizeof err) == -1);
    CHECK (strstr (err, "b5") && strstr (err, "maybe"), "%s", err);
    CHECK (qc_config_get_bool (s, "absent", 1, &b, err, sizeof err) == 0 && b == 1);
    /* A step with no section has no parameters: every getter gives the
     * default, as HistoQC does with params = {}. */
    const char *v = "x";
    CHECK (qc_config_get_string (NULL, "k", "dflt", &v, err, sizeof err) == 0
           && strcmp (v, "dflt") == 0);
    CHECK (qc_config_get_int (NULL, "k", 9, &i, err, sizeof err) == 0 && i == 9);
    /* Bad arguments are refused, not dereferenced. */
    CHECK (qc_config_get_string (s, NULL, NULL, &v, err, sizeof err) == -1);
    CHECK (qc_config_get_int (s, "i1", 0, NULL, err, sizeof err) == -1);
    CHECK (qc_config_get_bool (s, "", 0, &b, NULL, 0) == -1);
    CHECK (qc_config_section_nkeys (NULL) == 0 && qc_config_section_key (s, 999) == NULL);
    CHECK (qc_config_section (NULL, "s") == NULL && qc_config_section (cfg, NULL) == NULL);
    CHECK (qc_config_nsections (NULL) == 0 && qc_config_section_name (NULL) == NULL);
    CHECK (qc_config_has_key (s, "I1") && !qc_config_has_key (s, "nope"));
    qc_config_destroy (&cfg);
}

/* configparser's less obvious rules, which HistoQC configs inherit. */
static void
test_configparser_rules (void)
{
    /* Both separators; the first one wins; spaces around are dropped. */
    qc_config_t *cfg = parse ("[s]\na=1\nb : 2\nc = x=y:z\nd: e = f\n");
    CHECK (cfg != NULL, "%s", err);
    const qc_config_section_t *s = qc_config_section (cfg, "s");
    CHECK (strcmp (str (s, "a"), "1") == 0 && strcmp (str (s, "b"), "2") == 0);
    CHECK (strcmp (str (s, "c"), "x=y:z") == 0 && strcmp (str (s, "d"), "e = f") == 0);
    qc_config_destroy (&cfg);

    /* An indented key right after a header is a key (nothing to continue);
     * a blank line inside a value is kept when more follows; trailing
     * blank lines are dropped. */
    cfg = parse ("[s]\n  a = 1\n\n    more\n\n  b = 2\n\n\n");
    CHECK (cfg != NULL, "%s", err);
    s = qc_config_section (cfg, "s");
    CHECK (strcmp (str (s, "a"), "1\n\nmore") == 0, "[%s]", str (s, "a"));
    CHECK (strcmp (str (s, "b"), "2") == 0);
    qc_config_destroy (&cfg);

    /* A first line that is empty, then the list. */
    cfg = parse ("[pipeline]\nsteps =\n  A.b\n  C.d\n");
    CHECK (cfg && strcmp (str (qc_config_section (cfg, "pipeline"), "steps"),
                          "\nA.b\nC.d") == 0);
    qc_config_destroy (&cfg);

    /* [DEFAULT] reaches every section, but is not listed as its keys. */
    cfg = parse ("[DEFAULT]\nlimit_to_mask = True\n[a]\nx = 1\n[b]\nlimit_to_mask = False\n");
    CHECK (cfg != NULL, "%s", err);
    CHECK (qc_config_nsections (cfg) == 2);
    int flag = -1;
    const qc_config_section_t *a = qc_config_section (cfg, "a");
    CHECK (qc_config_get_bool (a, "limit_to_mask", 0, &flag, err, sizeof err) == 0
           && flag == 1);
    CHECK (qc_config_section_nkeys (a) == 1);
    CHECK (qc_config_get_bool (qc_config_section (cfg, "b"), "limit_to_mask", 1,
                               &flag, err, sizeof err) == 0 && flag == 0);
    CHECK (qc_config_section (cfg, "DEFAULT") == NULL);
    qc_config_destroy (&cfg);

    /* Interpolation: %% and %(key)s, from the section or DEFAULT. */
    cfg = parse ("[DEFAULT]\nroot = /data\n[s]\npct = 50%%\n"
                 "path = %(ROOT)s/pen/%(name)s.png\nname = green\n");
    CHECK (cfg != NULL, "%s", err);
    s = qc_config_section (cfg, "s");
    CHECK (strcmp (str (s, "pct"), "50%") == 0);
    CHECK (strcmp (str (s, "path"), "/data/pen/green.png") == 0, "[%s]", str (s, "path"));
    CHECK (qc_config_section_check (s, err, sizeof err) == 0);
    /* which keys a %(key)s reference names (helpers), any case; the
     * value of except is not looked at; a key's own value does not
     * count, nor does %% (a literal '%') */
    CHECK (qc_config_key_referenced (s, "name", NULL) == 1);
    CHECK (qc_config_key_referenced (s, "root", NULL) == 1);
    CHECK (qc_config_key_referenced (s, "name", (const char *[]) {"path", NULL}) == 0);
    CHECK (qc_config_key_referenced (s, "pct", NULL) == 0);
    CHECK (qc_config_key_referenced (s, "path", NULL) == 0);
    CHECK (qc_config_key_referenced (NULL, "name", NULL) == 0);
    qc_config_destroy (&cfg);
    cfg = parse ("[s]\nk = 1\nv = %%(k)s and %%%(k)s\nw = %%(k)s\nself = %(self)s\n");
    s = cfg ? qc_config_section (cfg, "s") : NULL;
    CHECK (s && qc_config_key_referenced (s, "k", NULL) == 1
               && qc_config_key_referenced (s, "k", (const char *[]) {"v", NULL}) == 0,
           "only v's %%%%%%(k)s names k");
    qc_config_destroy (&cfg);

    /* CRLF line ends, a UTF-8 BOM, a comment after a header, non-ASCII. */
    cfg = parse ("\xEF\xBB\xBF[s]   # the only section\r\nname = caf\xC3\xA9\r\n\r\n");
    CHECK (cfg != NULL, "%s", err);
    CHECK (cfg && strcmp (str (qc_config_section (cfg, "s"), "name"), "caf\xC3\xA9") == 0);
    qc_config_destroy (&cfg);

    /* Empty text and comment-only text are valid configs without sections. */
    cfg = parse ("");
    CHECK (cfg && qc_config_nsections (cfg) == 0);
    qc_config_destroy (&cfg);
    cfg = parse ("# nothing\n; here\n\n");
    CHECK (cfg && qc_config_nsections (cfg) == 0);
    qc_config_destroy (&cfg);
}

static void
test_interpolation_errors (void)
{
    const char *cases[] = {
        "[s]\nv = 50%\n",                     /* lone '%' */
        "[s]\nv = %(nope)s\n",                /* unknown key */
        "[s]\nv = %(v\n",                     /* unterminated */
        "[s]\nv = %(w)d\nw = 1\n",            /* not ')s' */
        "[s]\na = %(b)s\nb = %(a)s\n",        /* loop */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        qc_config_t *cfg = parse (cases[i]);
        /* The config parses (configparser only fails on use)... */
        CHECK (cfg != NULL, "%s", err);
        const qc_config_section_t *s = qc_config_section (cfg, "s");
        const char *v = NULL;
        /* ...but the value cannot be read and the section check fails. */
        CHECK (qc_config_get_string (s, qc_config_section_key (s, 0), NULL, &v, err,
                                     sizeof err) == -1, "case %zu", i);
        CHECK (strstr (err, "[s]") && strstr (err, "line 2"), "%s", err);
        CHECK (qc_config_section_check (s, err, sizeof err) == -1);
        qc_config_destroy (&cfg);
    }
    /* References that double at each level are cut off, not expanded to
     * gigabytes. */
    char text[4096] = "[s]\nk0 = ";
    for (int i = 0; i < 200; i++)
        strcat (text, "x");
    for (int i = 1; i <= 10; i++) {
        char line[64];
        snprintf (line, sizeof line, "\nk%d = %%(k%d)s%%(k%d)s%%(k%d)s%%(k%d)s", i,
                  i - 1, i - 1, i - 1, i - 1);
        strcat (text, line);
    }
    strcat (text, "\n");
    qc_config_t *cfg = parse (text);
    CHECK (cfg != NULL, "%s", err);
    const char *v;
    CHECK (qc_config_get_string (qc_config_section (cfg, "s"), "k10", NULL, &v, err,
                                 sizeof err) == -1);
    CHECK (strstr (err, "too long") != NULL, "%s", err);
    qc_config_destroy (&cfg);
}

static void
test_malformed (void)
{
    CHECK (FAILS ("[pipeline\nsteps = A.b\n") == 1);
    CHECK (strstr (err, "unterminated section") != NULL, "%s", err);
    CHECK (FAILS ("steps = A.b\n[pipeline]\n") == 1);
    CHECK (strstr (err, "outside any section") != NULL, "%s", err);
    CHECK (FAILS ("[a]\nx = 1\n[b]\n[a]\n") == 4);
    CHECK (strstr (err, "[a] appears twice") && strstr (err, "line 1"), "%s", err);
    CHECK (FAILS ("[a]\nx = 1\nX: 2\n") == 3);
    CHECK (strstr (err, "'x' appears twice") != NULL, "%s", err);
    CHECK (FAILS ("[a]\n= 1\n") == 2);
    CHECK (FAILS ("[a]\njust words\n") == 2);
    CHECK (strstr (err, "just words") != NULL, "%s", err);
    CHECK (FAILS ("[]\n") == 1);
    CHECK (FAILS ("[a] b\n") == 1);
    CHECK (FAILS ("[a]\nx = 1\0 2\n") == 2);
    CHECK (strstr (err, "NUL") != NULL, "%s", err);
    CHECK (FAILS ("[a]\nx = \xC3\x28\n") == 2);
    CHECK (strstr (err, "UTF-8") != NULL, "%s", err);
    CHECK (FAILS ("[a]\nx = \xED\xA0\x80\n") == 2);   /* surrogate */
    CHECK (FAILS ("[a]\nx = \xC0\xAF\n") == 2);       /* overlong */
    CHECK (qc_config_parse (NULL, 5, err, sizeof err, NULL) == NULL);
    qc_config_t *cfg = qc_config_parse (NULL, 0, err, sizeof err, NULL);
    CHECK (cfg != NULL);    /* no text at all is an empty config */
    qc_config_destroy (&cfg);

    /* A line over 64 KiB. */
    size_t n = QC_CONFIG_MAX_LINE + 20;
    char *big = malloc (n + 1);
    memcpy (big, "[a]\nx = ", 8);
    memset (big + 8, 'v', n - 8);
    big[n] = '\0';
    CHECK (parse_fails (big, n) == 2);
    CHECK (strstr (err, "longer than") != NULL, "%s", err);
    /* Exactly at the limit is fine. */
    big[4 + QC_CONFIG_MAX_LINE] = '\n';
    cfg = qc_config_parse (big, 4 + QC_CONFIG_MAX_LINE + 1, err, sizeof err, NULL);
    CHECK (cfg != NULL, "%s", err);
    qc_config_destroy (&cfg);
    free (big);

    /* Text over 1 MiB, even if every line is fine. */
    n = QC_CONFIG_MAX_TEXT + 1;
    big = malloc (n);
    memset (big, '#', n);
    for (size_t i = 100; i < n; i += 100)
        big[i] = '\n';
    CHECK (parse_fails (big, n) == 0);
    CHECK (strstr (err, "larger than") != NULL, "%s", err);
    free (big);

    /* Many sections and keys stay bounded. */
    size_t cap = 8u << 20, len = 0;
    big = malloc (cap);
    for (int i = 0; i <= QC_CONFIG_MAX_SECTIONS && len < QC_CONFIG_MAX_TEXT - 64; i++)
        len += (size_t) snprintf (big + len, cap - len, "[s%d]\n", i);
    CHECK (parse_fails (big, len) > 0);
    CHECK (strstr (err, "sections") != NULL, "%s", err);
    free (big);
}

/* Random bytes and mutated configs: every outcome is fine except a crash
 * or a sanitizer report. */
/* UTF-16 (Notepad's "Unicode"), with its byte order mark or without,
 * either byte order, is named as such; a NUL byte in UTF-8 text is not
 * taken for it. */
static void
test_utf16 (void)
{
    static const char le_bom[] = "\xff\xfe[\0p\0]\0\n\0";
    static const char be[] = "\0[\0p\0]\0\n";
    static const char le[] = "[\0p\0]\0\n\0";
    const char *texts[] = {le_bom, be, le};
    size_t lens[] = {sizeof le_bom - 1, sizeof be - 1, sizeof le - 1};
    for (size_t i = 0; i < 3; i++) {
        CHECK (parse_fails (texts[i], lens[i]) == 1, "UTF-16 %zu: line", i);
        CHECK (strstr (err, "UTF-16 text (Notepad's \"Unicode\"); save the config as UTF-8"),
               "UTF-16 %zu: %s", i, err);
    }
    CHECK (FAILS ("[a]\nx = ab\0cd\n") == 2 && strstr (err, "NUL byte"), "NUL: %s", err);
}

static void
test_garbage (void)
{
    uint32_t seed = 12345;
    size_t nbuf = 4096;
    char *buf = malloc (nbuf);
    int parsed = 0, refused = 0;
    for (int round = 0; round < 3000; round++) {
        size_t n;
        if (round % 2) {
            n = (size_t) (seed % nbuf);
            for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                buf[i] = (char) (seed >> 16);
            }
        } else {
            n = strlen (histoqc_style);
            memcpy (buf, histoqc_style, n);
            for (int k = 0; k < 4; k++) {
                seed = seed * 1103515245u + 12345u;
                size_t at = (seed >> 8) % n;
                static const char pick[] = "[]=:#;% \n\t\x01\xC3x";
                buf[at] = pick[(seed >> 20) % (sizeof pick - 1)];
            }
        }
        seed = seed * 1103515245u + 12345u;
        qc_config_t *cfg = qc_config_parse (buf, n, err, sizeof err, NULL);
        if (cfg) {
            parsed++;
            for (size_t i = 0; i < qc_config_nsections (cfg); i++) {
                const qc_config_section_t *s = qc_config_section_at (cfg, i);
                for (size_t k = 0; k < qc_config_section_nkeys (s); k++) {
                    const char *v;
                    long long ll;
                    qc_config_get_string (s, qc_config_section_key (s, k), NULL, &v,
                                          err, sizeof err);
                    qc_config_get_int (s, qc_config_section_key (s, k), 0, &ll, err,
                                       sizeof err);
                }
                qc_config_section_check (s, err, sizeof err);
            }
        } else {
            refused++;
            CHECK (err[0] != '\0');
        }
        qc_config_destroy (&cfg);
    }
    free (buf);
    CHECK (parsed > 0 && refused > 0, "parsed %d refused %d", parsed, refused);
}

static void
test_load (void)
{
    CHECK (qc_config_load ("/nonexistent/config.ini", err, sizeof err) == NULL);
    CHECK (strstr (err, "No such file") != NULL, "%s", err);
    CHECK (qc_config_load (NULL, err, sizeof err) == NULL);

    char path[] = "/tmp/qc_test_config_XXXXXX";
    int fd = mkstemp (path);
    CHECK (fd >= 0);
    if (fd < 0)
        return;
    FILE *f = fdopen (fd, "w");
    fputs (histoqc_style, f);
    fclose (f);
    qc_config_t *cfg = qc_config_load (path, err, sizeof err);
    CHECK (cfg && qc_config_nsections (cfg) == 5, "%s", err);
    qc_config_destroy (&cfg);

    f = fopen (path, "w");
    fputs ("[a]\nx = 1\n[a]\n", f);
    fclose (f);
    CHECK (qc_config_load (path, err, sizeof err) == NULL);
    CHECK (strstr (err, path) && strstr (err, "line 3"), "%s", err);

    f = fopen (path, "w");
    for (unsigned i = 0; i <= QC_CONFIG_MAX_TEXT / 16; i++)
        fputs ("# padding......\n", f);
    fclose (f);
    CHECK (qc_config_load (path, err, sizeof err) == NULL);
    CHECK (strstr (err, "larger than") != NULL, "%s", err);
    unlink (path);
}

int
main (void)
{
    test_histoqc_format ();
    test_getters ();
    test_configparser_rules ();
    test_interpolation_errors ();
    test_malformed ();
    test_garbage ();
    test_utf16 ();
    test_load ();
    return check_done ("test_config");
}
