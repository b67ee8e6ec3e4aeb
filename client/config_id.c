/* See config_id.h. */
#include "client/config_id.h"

#include <stdlib.h>
#include <string.h>

/* A line that never changes a result: blank, or a comment. */
static int
ignored (const char *line, size_t len)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    return i == len || line[i] == '#' || line[i] == ';';
}

int
qc_config_id (const char *text, char hex[QC_ASSET_HEX_LEN + 1])
{
    if (!text || !hex)
        return -1;
    size_t n = strlen (text);
    char *canon = malloc (n + 1);
    if (!canon)
        return -1;
    if (strncmp (text, "\xef\xbb\xbf", 3) == 0)
        text += 3;
    size_t out = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn (p, "\n");
        const char *next = p[len] ? p + len + 1 : p + len;
        while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' '
                           || p[len - 1] == '\t'))
            len--;
        if (!ignored (p, len)) {
            memcpy (canon + out, p, len);
            out += len;
            canon[out++] = '\n';
        }
        p = next;
    }
    qc_asset_hash (canon, out, hex);
    free (canon);
    return 0;
}
