/* The identity of a run's config (client/config_id.c), which keeps two
 * configs' rows out of one results.tsv: what never changes a result
 * (line endings, a BOM, trailing blanks, blank and comment lines) leaves
 * it as it is; any value, key, section or file reference changes it. */
#include <string.h>

#include "client/config_id.h"
#include "tests/unit/check.h"

static const char base[] =
    "[pipeline]\n"
    "steps= BasicModule.getBasicStats\n"
    "    LightDarkModule.getIntensityThresholdPercent:tissue\n"
    "\n"
    "[LightDarkModule.getIntensityThresholdPercent:tissue]\n"
    "upper_threshold: .9\n"
    "examples: asset/sha256/" "0123456789abcdef0123456789abcdef"
    "0123456789abcdef0123456789abcdef/pen.png\n";

static void
id_of (const char *text, char hex[QC_ASSET_HEX_LEN + 1])
{
    memset (hex, 0, QC_ASSET_HEX_LEN + 1);
    CHECK (qc_config_id (text, hex) == 0 && strlen (hex) == QC_ASSET_HEX_LEN,
           "an identity for '%.30s...'", text);
}

int
main (void)
{
    char want[QC_ASSET_HEX_LEN + 1], got[QC_ASSET_HEX_LEN + 1];
    id_of (base, want);
    static const char *const same[] = {
        /* CRLF, a BOM, trailing blanks, comments, blank lines, no last newline */
        "[pipeline]\r\nsteps= BasicModule.getBasicStats\r\n"
        "    LightDarkModule.getIntensityThresholdPercent:tissue\r\n\r\n"
        "[LightDarkModule.getIntensityThresholdPercent:tissue]\r\nupper_threshold: .9\r\n"
        "examples: asset/sha256/0123456789abcdef0123456789abcdef"
        "0123456789abcdef0123456789abcdef/pen.png\r\n",
        "\xef\xbb\xbf# saved elsewhere\n[pipeline]  \nsteps= BasicModule.getBasicStats\t\n"
        "    LightDarkModule.getIntensityThresholdPercent:tissue\n"
        "   ; an indented comment\n\n\n"
        "[LightDarkModule.getIntensityThresholdPercent:tissue]\nupper_threshold: .9\n"
        "examples: asset/sha256/0123456789abcdef0123456789abcdef"
        "0123456789abcdef0123456789abcdef/pen.png",
    };
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        id_of (same[i], got);
        CHECK (strcmp (got, want) == 0, "variant %zu is the same config", i);
    }
    static const struct { const char *from, *to; } edits[] = {
        { "upper_threshold: .9", "upper_threshold: .8" },
        { "getBasicStats", "finalComputations" },
        { "0123456789abcdef/pen.png", "0123456789abcdee/pen.png" },   /* another file */
        { "upper_threshold:", "lower_threshold:" },
        { "[pipeline]", "[pipeline2]" },
        { "    LightDark", "LightDark" },      /* a continuation made a key */
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        char text[sizeof base + 64];
        const char *at = strstr (base, edits[i].from);
        CHECK (at != NULL, "edit %zu applies", i);
        if (!at)
            continue;
        size_t pre = (size_t) (at - base);
        snprintf (text, sizeof text, "%.*s%s%s", (int) pre, base, edits[i].to,
                  at + strlen (edits[i].from));
        id_of (text, got);
        CHECK (strcmp (got, want) != 0, "edit %zu ('%s' -> '%s') is another config", i,
               edits[i].from, edits[i].to);
    }
    CHECK (qc_config_id (NULL, got) == -1, "no text: -1");
    CHECK (qc_config_id (base, NULL) == -1, "no output: -1");
    id_of ("", got);
    return check_done ("test_config_id");
}
