/* libFuzzer target: the HistoQC config.ini parser (shared/config.c).
 * Whatever parses is walked as the pipeline builder walks it: every
 * section, every key, every value through each typed getter and the
 * interpolation check, and each key asked whether a %(key)s names it. */
#include <stdint.h>

#include "shared/config.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char err[512];
    int line;
    qc_config_t *c = qc_config_parse ((const char *) data, size, err, sizeof err, &line);
    if (!c)
        return 0;
    for (size_t i = 0; i < qc_config_nsections (c); i++) {
        const qc_config_section_t *sec = qc_config_section_at (c, i);
        const char *name = qc_config_section_name (sec);
        if (qc_config_section (c, name) == NULL)
            __builtin_trap ();    /* a section is found by its own name */
        qc_config_section_check (sec, err, sizeof err);
        for (size_t k = 0; k < qc_config_section_nkeys (sec); k++) {
            const char *key = qc_config_section_key (sec, k);
            const char *s;
            long long ll;
            double d;
            int b;
            qc_config_key_line (sec, key);
            qc_config_has_key (sec, key);
            qc_config_get_string (sec, key, NULL, &s, err, sizeof err);
            qc_config_get_int (sec, key, 0, &ll, err, sizeof err);
            qc_config_get_double (sec, key, 0, &d, err, sizeof err);
            qc_config_get_bool (sec, key, 0, &b, err, sizeof err);
            /* whether it is a %(key)s helper, with and without excepts */
            const char *except[] = {key, name, NULL};
            qc_config_key_referenced (sec, key, NULL);
            qc_config_key_referenced (sec, key, except);
        }
    }
    qc_config_destroy (&c);
    return 0;
}
