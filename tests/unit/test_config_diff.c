/* What differs between two configs, said (client/config_diff.h): a rerun
 * refused for "another config" now names the values, steps and files
 * that differ. Table of config pairs and what must be said. */
#include <string.h>

#include "client/config_diff.h"
#include "tests/unit/check.h"

#define H1 "1111111111111111111111111111111111111111111111111111111111111111"
#define H2 "2222222222222222222222222222222222222222222222222222222222222222"

int
main (void)
{
    static const struct {
        const char *what, *was, *now;
        int n;                  /* differences; -1: does not parse */
        const char *says[3];    /* each must be in the text */
    } cases[] = {
        {"the same", "[a]\nx = 1\n", "[a]\nx = 1\n", 0, {""}},
        {"comments and blank lines only", "[a]\nx = 1\n", "# note\n[a]\n\n; more\nx = 1\n", 0, {""}},
        {"a value", "[a]\nx = 1\ny = 2\n", "[a]\nx = 1\ny = 3\n", 1, {"[a] y: '2' -> '3'"}},
        {"a key added and one left out", "[a]\nx = 1\n", "[a]\nz = 9\n", 2,
         {"[a] x: left out (was '1')", "[a] z: added ('9')"}},
        {"sections", "[a]\nx = 1\n[b]\ny = 2\n", "[a]\nx = 1\n[c]\ny = 2\n", 2,
         {"[b] left out", "[c] added"}},
        {"an example image's bytes",
         "[p]\nexamples: asset/sha256/" H1 "/pen.png:asset/sha256/" H1 "/mask.png\n",
         "[p]\nexamples: asset/sha256/" H2 "/pen.png:asset/sha256/" H1 "/mask.png\n", 1,
         {"[p] examples: pen.png changed (sha256 11111111... -> 22222222...)"}},
        {"another image", "[p]\nexamples: asset/sha256/" H1 "/pen.png\n",
         "[p]\nexamples: asset/sha256/" H1 "/ink.png\n", 1,
         {"'pen.png (sha256 11111111...)' -> 'ink.png (sha256 11111111...)'"}},
        {"a step left out and one added", "[pipeline]\nsteps = A\n    B\n    C\n",
         "[pipeline]\nsteps = A\n    C\n    D\n", 1,
         {"[pipeline] steps: adds 'D', leaves out 'B'"}},
        {"steps in another order", "[pipeline]\nsteps = A\n    B\n",
         "[pipeline]\nsteps = B\n    A\n", 1, {"steps: the same lines in another order"}},
        {"many", "[a]\np=1\nq=1\nr=1\ns=1\nt=1\nu=1\n", "[a]\np=2\nq=2\nr=2\ns=2\nt=2\nu=2\n", 6,
         {"[a] p: '1' -> '2'", "[a] s: '1' -> '2'", "; and 2 more"}},
        {"a long value is cut",
         "[a]\nx = 0123456789012345678901234567890123456789012345678901234567890123456789\n",
         "[a]\nx = 1\n", 1, {"'012345678901234567890123456789012345678901234567890123456789...' -> '1'"}},
        /* a step taken out: its section's files as written, where the
           folder's config had them as sent; only the step is said */
        {"a step taken out, its files as written",
         "[pipeline]\nsteps = A\n    P\n[P]\nexamples: asset/sha256/" H1 "/pen.png:asset/sha256/"
         H2 "/mask.png\n", "[pipeline]\nsteps = A\n[P]\nexamples: ./pen/1k/pen.png:mask.png\n", 2,
         {"[pipeline] steps: leaves out 'P'"}},
        {"files as sent against as written, alone",
         "[P]\nexamples: asset/sha256/" H1 "/pen.png\n", "[P]\nexamples: /data/pen.png\n", 1,
         {"[P] examples: its files as sent in one, as written in the other"}},
        {"as written, another file's name", "[P]\nexamples: asset/sha256/" H1 "/pen.png\n",
         "[P]\nexamples: /data/ink.png\n", 1,
         {"[P] examples: 'pen.png (sha256 11111111...)' -> '/data/ink.png'"}},
        {"as written, one more file", "[P]\nexamples: asset/sha256/" H1 "/pen.png\n",
         "[P]\nexamples: /data/pen.png:/data/mask.png\n", 1, {"-> '/data/pen.png:/data/mask.png'"}},
        /* a section reads [DEFAULT]'s keys as its own: a changed default
           is a difference (two configs' rows went into one results.tsv,
           once a diff that finds nothing made them the same config) */
        {"a [DEFAULT] value", "[DEFAULT]\nt = .9\n[a]\nx = 1\n",
         "[DEFAULT]\nt = .5\n[a]\nx = 1\n", 1, {"[a] t: '.9' -> '.5'"}},
        {"a key moved to [DEFAULT]", "[a]\nx = 1\nt = .9\n", "[DEFAULT]\nt = .9\n[a]\nx = 1\n",
         0, {""}},
        /* a value that does not interpolate, compared as written (its
           NULL crashed qc-submit on a rerun) */
        {"a lone % alike", "[n]\nk = 100%\n", "[n]\nk=100%\n", 0, {""}},
        {"a lone % changed", "[n]\nk = 100%\n", "[n]\nk = 90%\n", 1, {"[n] k: '100%' -> '90%'"}},
        /* an empty item beside a file (a doubled ':') */
        {"files as written beside an empty item",
         "[P]\nexamples: asset/sha256/" H1 "/pen.png::x\n", "[P]\nexamples: /d/pen.png::x\n", 1,
         {"[P] examples: its files as sent in one, as written in the other"}},
        {"the folder's does not parse", "[a\nx", "[a]\nx = 1\n", -1, {"does not parse"}},
        {"this one does not parse", "[a]\nx = 1\n", "x = 1\n[", -1, {"this config does not parse"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[1024];
        memset (out, 'x', sizeof out);
        int n = qc_config_diff (cases[i].was, cases[i].now, out, sizeof out);
        CHECK (n == cases[i].n, "%s: %d differences, want %d (%s)", cases[i].what, n,
               cases[i].n, out);
        CHECK (memchr (out, 0, sizeof out) != NULL, "%s: not terminated", cases[i].what);
        for (int k = 0; k < 3 && cases[i].says[k]; k++)
            CHECK (strstr (out, cases[i].says[k]) != NULL, "%s: '%s' lacks '%s'", cases[i].what,
                   out, cases[i].says[k]);
        if (cases[i].n == 0)
            CHECK (out[0] == 0, "%s: something said: %s", cases[i].what, out);
    }
    /* a small buffer: cut, terminated; bad arguments */
    /* the step taken out is all that is said: not its unchanged files */
    char said[1024];
    CHECK (qc_config_diff ("[pipeline]\nsteps = A\n    P\n[P]\nexamples: asset/sha256/" H1
                           "/pen.png\n", "[pipeline]\nsteps = A\n[P]\nexamples: pen/pen.png\n",
                           said, sizeof said) == 2
           && strcmp (said, "[pipeline] steps: leaves out 'P'") == 0, "said: %s", said);
    char small[16];
    CHECK (qc_config_diff ("[a]\nx = 1\n", "[a]\nx = 2\n", small, sizeof small) == 1
               && strlen (small) == sizeof small - 1, "a small buffer: %s", small);
    CHECK (qc_config_diff (NULL, "[a]\n", small, sizeof small) == -1, "NULL was");
    CHECK (qc_config_diff ("[a]\n", NULL, small, sizeof small) == -1, "NULL now");
    CHECK (qc_config_diff ("[a]\n", "[a]\n", NULL, 4) == -1, "NULL out");
    CHECK (qc_config_diff ("[a]\n", "[a]\n", small, 0) == -1, "no room");
    return check_done ("test_config_diff");
}
