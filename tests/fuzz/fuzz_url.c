/* libFuzzer target: a cohort entry as qc-submit and the worker take it
 * (shared/url.c): classified, redacted, named, and spelt canonically
 * into buffers of several sizes. What comes back fits its buffer, a
 * canonical spelling spelt again is the same (one slide, one spelling),
 * and an entry taken as a --slides-url folder admits itself, as written
 * and as spelt canonically. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/url.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *entry = malloc (size + 1);
    if (!entry)
        return 0;
    memcpy (entry, data, size);
    entry[size] = '\0';
    char err[256], out[2 * QC_URL_MAX + 1], again[2 * QC_URL_MAX + 1], small[64];
    qc_url_classify (entry, err, sizeof err);
    qc_url_redact (entry, small, sizeof small);
    qc_url_name (entry, small, sizeof small);
    qc_url_path_ambiguous (entry);
    static const size_t caps[] = {1, 9, sizeof small};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        if (qc_url_canonical (entry, small, caps[i]) == 0 && strlen (small) >= caps[i])
            __builtin_trap ();
    if (qc_url_canonical (entry, out, sizeof out) == 0 && qc_url_is_remote (out)
        && (qc_url_canonical (out, again, sizeof again) != 0 || strcmp (out, again) != 0))
        __builtin_trap ();
    /* a folder the worker admits (--slides-url) admits itself in the
       spelling qc-submit sends */
    qc_url_prefix_t prefix;
    if (qc_url_prefix_parse (entry, &prefix, err, sizeof err) == 0
        && (qc_url_canonical (entry, out, sizeof out) != 0 || !qc_url_prefix_match (&prefix, out)
            || !qc_url_prefix_match (&prefix, entry)))
        __builtin_trap ();
    free (entry);
    return 0;
}
