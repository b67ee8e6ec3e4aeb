/* See argv_secrets.h. */
#include "client/argv_secrets.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
qc_argv_url_secrets (const char *s, size_t *user_at, size_t *user_len, size_t *query_at)
{
    if (!s || !user_at || !user_len || !query_at)
        return -1;
    size_t scheme = strncasecmp (s, "http://", 7) == 0 ? 7
                    : strncasecmp (s, "https://", 8) == 0 ? 8 : 0;
    if (!scheme)
        return -1;
    /* the authority ends at the first '/', '?' or '#' (RFC 3986 3.2); the
       user info is what it has before its last '@' */
    size_t auth_end = scheme + strcspn (s + scheme, "/?#");
    const char *at = NULL;
    for (const char *p = s + scheme; p < s + auth_end; p++)
        if (*p == '@')
            at = p;
    *user_at = scheme;
    *user_len = at ? (size_t) (at - (s + scheme)) : 0;
    const char *q = strpbrk (s + auth_end, "?#");
    *query_at = q ? (size_t) (q - s) : strlen (s);
    return 0;
}

/* s's secrets overwritten in place, the URL's shape kept ("xxxx@host",
   "?xxxx"): ps shows which slide, not its key */
static void
hide_in (char *s)
{
    size_t user_at, user_len, query_at;
    if (qc_argv_url_secrets (s, &user_at, &user_len, &query_at) != 0)
        return;
    memset (s + user_at, 'x', user_len);
    size_t len = strlen (s);
    if (query_at + 1 < len)
        memset (s + query_at + 1, 'x', len - query_at - 1);
}

char **
qc_argv_hide_secrets (int argc, char **argv)
{
    if (argc < 0 || !argv)
        return NULL;
    char **copy = calloc ((size_t) argc + 1, sizeof *copy);
    for (int i = 0; copy && i < argc; i++)
        if (!(copy[i] = strdup (argv[i] ? argv[i] : ""))) {
            while (i--)
                free (copy[i]);
            free (copy);
            copy = NULL;
        }
    if (!copy)
        return NULL;
    /* an option's value too (--opt=URL), wherever a URL starts in it */
    for (int i = 1; i < argc; i++)
        for (char *p = argv[i]; p && (p = strstr (p, "://")); p += 3) {
            char *start = p;
            while (start > argv[i] && ((start[-1] >= 'a' && start[-1] <= 'z')
                                       || (start[-1] >= 'A' && start[-1] <= 'Z')))
                start--;
            hide_in (start);
        }
    return copy;
}
