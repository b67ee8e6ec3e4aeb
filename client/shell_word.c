/* See shell_word.h. */
#include "client/shell_word.h"

#include <stdbool.h>
#include <string.h>

static bool
plain (const char *w)
{
    if (!*w)
        return false;           /* an empty word must be quoted to exist */
    for (const char *p = w; *p; p++)
        if (!strchr ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789_./:@%+=,-", *p))
            return false;
    return true;
}

int
qc_shell_word_add (char *dst, size_t cap, const char *word)
{
    if (!dst || !word || cap == 0)
        return -1;
    size_t len = strnlen (dst, cap);
    if (len == cap)
        return -1;
    size_t at = len;
    bool quote = !plain (word);
#define PUT(c) do { if (at + 1 >= cap) { dst[len] = '\0'; return -1; } dst[at++] = (c); } while (0)
    if (len)
        PUT (' ');
    if (quote)
        PUT ('\'');
    for (const char *p = word; *p; p++) {
        if (quote && *p == '\'') {
            PUT ('\''); PUT ('\\'); PUT ('\''); PUT ('\'');
        } else
            PUT (*p);
    }
    if (quote)
        PUT ('\'');
#undef PUT
    dst[at] = '\0';
    return 0;
}
