/* See names.h. */
#include "client/names.h"

#include <czmq.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wctype.h>

#include "client/escape.h"
#include "shared/asset_store.h"
#include "shared/url.h"

#define EXT_MAX 16            /* an extension longer than this is not one */

struct qc_names {
    zhashx_t *by_name;        /* name, case folded (fold_case) -> path
                                 ("" when not known) */
    zhashx_t *by_path;        /* path -> name */
};

qc_names_t *
qc_names_new (void)
{
    qc_names_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->by_name = zhashx_new ();
    self->by_path = zhashx_new ();
    if (!self->by_name || !self->by_path) {
        qc_names_destroy (&self);
        return NULL;
    }
    /* both hold copies of their strings */
    zhashx_set_duplicator (self->by_name, (zhashx_duplicator_fn *) strdup);
    zhashx_set_destructor (self->by_name, (zhashx_destructor_fn *) zstr_free);
    zhashx_set_duplicator (self->by_path, (zhashx_duplicator_fn *) strdup);
    zhashx_set_destructor (self->by_path, (zhashx_destructor_fn *) zstr_free);
    return self;
}

void
qc_names_destroy (qc_names_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    zhashx_destroy (&(*self_p)->by_name);
    zhashx_destroy (&(*self_p)->by_path);
    free (*self_p);
    *self_p = NULL;
}

/* The C library's letter cases of every script (a UTF-8 locale: glibc
 * builds C.UTF-8 in from 2.35), without touching the process's locale;
 * (locale_t) 0 when none can be had, which is said once: names then
 * fold in A-Z and Latin-1 only, and a run elsewhere may name differently. */
static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void
open_utf8_locale (void)
{
    static const char *const names[] = {"C.UTF-8", "C.utf8", "en_US.UTF-8"};
    for (size_t i = 0; !utf8_locale && i < sizeof names / sizeof *names; i++)
        utf8_locale = newlocale (LC_CTYPE_MASK, names[i], (locale_t) 0);
    if (!utf8_locale)
        fprintf (stderr, "qc-submit: note: no UTF-8 locale (C.UTF-8) on this machine: "
                 "slide names that differ only in the case of letters beyond Latin-1 "
                 "are taken as different\n");
}

/* The code point of the UTF-8 sequence at p (its length into *len), or
 * -1 when p holds no well-formed one (a byte that then stands alone). */
static long
utf8_decode (const unsigned char *p, int *len)
{
    size_t n = qc_utf8_seq (p);
    if (!n)
        return -1;
    long c = n == 1 ? p[0] : p[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++)
        c = (c << 6) | (p[i] & 0x3f);
    *len = (int) n;
    return c;
}

/* c as UTF-8 into out (4 bytes at most); its length. */
static int
utf8_encode (long c, unsigned char *out)
{
    if (c < 0x80) {
        out[0] = (unsigned char) c;
        return 1;
    }
    int n = c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    for (int i = n - 1; i > 0; i--, c >>= 6)
        out[i] = (unsigned char) (0x80 | (c & 0x3f));
    out[0] = (unsigned char) ((0xf00 >> n) | c);
    return n;
}

/* name with its letters in one case, in every script (Greek, Cyrillic
 * and the rest, as the C library knows them; where it cannot, A-Z and
 * the accented Latin-1 capitals): two names that differ only so are one
 * folder on the file systems labs share results on (SMB/CIFS, exFAT,
 * macOS's APFS and HFS+, NTFS), where the second slide's images would
 * overwrite the first's. Bytes that are not UTF-8 stay as they are.
 * malloc'd; NULL on memory. */
static char *
fold_case (const char *name)
{
    pthread_once (&utf8_once, open_utf8_locale);
    size_t n = strlen (name);
    /* a folded letter takes at most 4 bytes, and is never longer than
       its capital by more than that */
    unsigned char *f = malloc (4 * n + 1), *o = f;
    for (const unsigned char *p = (const unsigned char *) name; f && *p;) {
        int len = 1;
        long c = utf8_decode (p, &len);
        if (c < 0) {
            *o++ = *p++;
            continue;
        }
        long low = c >= 'A' && c <= 'Z' ? c + 32 : c;
        if (c >= 0x80) {
            /* lower of upper: the letters with two small forms (final
               sigma, long s, the Greek symbol forms) become one, as the
               file systems' case folding has them */
            if (utf8_locale)
                low = (long) towlower_l (towupper_l ((wint_t) c, utf8_locale),
                                         utf8_locale);
            else if (c >= 0xc0 && c <= 0xde && c != 0xd7)
                low = c + 0x20;
        }
        o += low >= 0 && low <= 0x10ffff ? utf8_encode (low, o) : utf8_encode (c, o);
        p += len;
    }
    if (o)
        *o = 0;
    return (char *) f;
}

int
qc_names_claim (qc_names_t *self, const char *name, const char *path)
{
    if (!self || !name || !*name)
        return -1;
    if (name[0] == '#')
        return 0;   /* no name this client gives (its row reads as a comment
                       line): a folder of an older build's, whose slide
                       gets a name of today's rule */
    char *key = fold_case (name);
    if (!key)
        return -1;
    int rc = 0;
    const char *owner = zhashx_lookup (self->by_name, key);
    const char *owners_name = owner && *owner ? zhashx_lookup (self->by_path, owner) : NULL;
    /* a name another row has (the first claim stands); but a row of a
       folder made where case counts ("a.svs" beside "A.svs") keeps its
       own name for its slide, so a rerun finds it */
    bool same = owner && (!owners_name || strcmp (owners_name, name) == 0);
    if (!owner && zhashx_insert (self->by_name, key, (void *) (path ? path : "")))
        rc = -1;
    free (key);
    if (rc)
        return -1;
    if (same)
        return 0;
    if (path && *path && !zhashx_lookup (self->by_path, path)
        && zhashx_insert (self->by_path, path, (void *) name))
        return -1;
    return 0;
}

int
qc_names_adopt (qc_names_t *self, const char *name, const char *path)
{
    if (!self || !name || !*name || !path || !*path)
        return -1;
    if (zhashx_lookup (self->by_path, path))
        return 1;
    char *key = fold_case (name);
    if (!key)
        return -1;
    const char *owner = zhashx_lookup (self->by_name, key);
    int rc = 1;
    if (owner && !*owner) {
        zhashx_update (self->by_name, key, (void *) path);
        rc = zhashx_insert (self->by_path, path, (void *) name) ? -1 : 0;
    }
    free (key);
    return rc;
}

int
qc_names_move (qc_names_t *self, const char *from, const char *to)
{
    if (!self || !from || !to || !*to)
        return -1;
    const char *name = zhashx_lookup (self->by_path, from);
    if (!name || zhashx_lookup (self->by_path, to))
        return 1;
    char *copy = strdup (name), *key = fold_case (name);
    int rc = copy && key ? 1 : -1;
    const char *owner = key ? zhashx_lookup (self->by_name, key) : NULL;
    if (rc == 1 && owner && strcmp (owner, from) == 0) {
        zhashx_update (self->by_name, key, (void *) to);
        rc = zhashx_insert (self->by_path, to, copy) ? -1 : 0;
        if (rc == 0)
            zhashx_delete (self->by_path, from);
    }
    free (copy);
    free (key);
    return rc;
}

const char *
qc_names_of (const qc_names_t *self, const char *path)
{
    return self && path ? zhashx_lookup (self->by_path, path) : NULL;
}

/* The start of s cut to at most max bytes, at a character boundary. */
static size_t
cut_utf8 (const char *s, size_t len, size_t max)
{
    size_t n = 0;
    while (n < len) {
        size_t k = qc_utf8_seq ((const unsigned char *) s + n);
        if (!k)
            k = 1;              /* already made safe: cannot happen */
        if (n + k > max)
            break;
        n += k;
    }
    return n;
}

char *
qc_names_safe (const char *file_name)
{
    const char *in = file_name ? file_name : "";
    size_t len = strlen (in);
    char *s = malloc (len + 2);
    if (!s)
        return NULL;
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *) in; *p;) {
        size_t k = qc_utf8_seq (p);
        if (k == 1 && (*p < 0x20 || *p == 0x7f || *p == '/' || *p == '\\'))
            k = 0;
        if (k == 0) {
            s[o++] = '_';
            p++;
        } else {
            memcpy (s + o, p, k);
            o += k;
            p += k;
        }
    }
    s[o] = '\0';
    /* its row would read as a comment line ('#'), or as a quoted field
       that swallows the tabs and lines after it (a leading '"': Python's
       csv module and pandas read TSV so unless told QUOTE_NONE) */
    if (s[0] == '#' || s[0] == '"')
        s[0] = '_';
    if (o == 0 || strcmp (s, ".") == 0 || strcmp (s, "..") == 0) {
        memmove (s + 1, s, o + 1);
        s[0] = '_';
        o++;
    }
    if (o <= QC_NAME_MAX)
        return s;
    char hex[QC_ASSET_HEX_LEN + 1];
    qc_asset_hash (in, len, hex);
    const char *dot = strrchr (s, '.');
    size_t ext = dot && dot != s && strlen (dot) <= EXT_MAX ? strlen (dot) : 0;
    size_t keep = cut_utf8 (s, o - ext, QC_NAME_MAX - 9 - ext);
    char *out = NULL;
    if (asprintf (&out, "%.*s~%.8s%s", (int) keep, s, hex, ext ? s + o - ext : "") < 0)
        out = NULL;
    free (s);
    return out;
}

/* Whether name is one of the output folder's own files, in any case:
 * results.tsv, error.log, qc.log and the copies a fresh start keeps of
 * them (".1", ".2"...), and the hidden ".qc-..." ones. A slide named so
 * (a file "qc.log" in a cohort, or a URL's) had its folder made over
 * that file: every run stopped there, exit 5, the rest of the cohort
 * not run (a user's review). */
static bool
folder_own (const char *name)
{
    static const char *const own[] = {"results.tsv", "error.log", "qc.log"};
    if (strncasecmp (name, ".qc-", 4) == 0)
        return true;
    for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
        size_t n = strlen (own[i]);
        if (strncasecmp (name, own[i], n) != 0)
            continue;
        const char *rest = name + n;
        if (!*rest)
            return true;
        if (*rest == '.' && rest[1] && strspn (rest + 1, "0123456789") == strlen (rest + 1))
            return true;
    }
    return false;
}

/* Whether another slide has name (in any case: fold_case), or the folder
 * itself (folder_own); a name that cannot be folded (no memory) counts
 * as taken. */
static bool
taken (const qc_names_t *self, const char *name, const char *path)
{
    if (folder_own (name))
        return true;
    char *key = fold_case (name);
    const char *owner = key ? zhashx_lookup (self->by_name, key) : "";
    bool yes = owner && strcmp (owner, path) != 0;
    free (key);
    return yes;
}

/* "c__b__name" from the last levels folders of path's folder. */
static char *
with_folders (const char *path, const char *name, int levels)
{
    /* the folders before the name: a URL's path that ends in '/' is
       named by the segment before it (qc_url_name) */
    size_t len = strlen (path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    const char *end = NULL;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '/')
            end = path + i;
    const char *start = end;
    for (int i = 0; i < levels && start && start > path; i++) {
        const char *p = start - 1;
        while (p > path && *p != '/')
            p--;
        if (*p != '/' || p == start - 1)
            return NULL;        /* not that many folders */
        start = p;
    }
    if (!end || start == end)
        return NULL;
    char *prefix = strndup (start + 1, (size_t) (end - start - 1));
    for (char *p = prefix; p && *p; p++)
        if (*p == '/')
            *p = '\x01';        /* becomes "__" below */
        else if (strchr (":*?\"<>|", *p))
            /* a URL's host:port, a folder's odd name: names that SMB
               shares, exFAT and NTFS, where results are often copied,
               refuse (the slide's own file name stays as it is) */
            *p = '_';
    char *joined = NULL;
    if (!prefix || asprintf (&joined, "%s\x01%s", prefix, name) < 0)
        joined = NULL;
    free (prefix);
    /* "\x01" separators become "__" after the rest is made safe */
    size_t n = joined ? strlen (joined) : 0, extra = 0;
    for (size_t i = 0; i < n; i++)
        extra += joined[i] == '\x01';
    char *out = joined ? malloc (n + extra + 1) : NULL;
    size_t o = 0;
    for (size_t i = 0; out && i < n; i++)
        if (joined[i] == '\x01') {
            out[o++] = '_';
            out[o++] = '_';
        } else
            out[o++] = joined[i];
    if (out)
        out[o] = '\0';
    free (joined);
    char *safe = out ? qc_names_safe (out) : NULL;
    free (out);
    return safe;
}

char *
qc_names_assign (qc_names_t *self, const char *path)
{
    if (!self || !path)
        return NULL;
    const char *had = qc_names_of (self, path);
    if (had)
        return strdup (had);
    const char *slash = strrchr (path, '/');
    /* a URL's file name: its last path segment, percent-decoded */
    char url_name[QC_NAME_MAX * 4];
    const char *file = qc_url_classify (path, NULL, 0) > QC_URL_PATH
                       ? qc_url_name (path, url_name, sizeof url_name)
                       : slash ? slash + 1 : path;
    char *base = qc_names_safe (file);
    if (!base)
        return NULL;
    /* a URL's name (its file name, or "h:8080" when it has none): no ':',
       as in a folder part (SMB shares, exFAT and NTFS refuse it) */
    if (file == url_name)
        for (char *p = base; *p; p++)
            if (*p == ':')
                *p = '_';
    char *name = NULL;
    if (!taken (self, base, path))
        name = strdup (base);
    for (int levels = 1; !name && levels <= 2; levels++) {
        /* (a URL's name as made safe above: no ':' in it either) */
        char *c = with_folders (path, file == url_name ? base : file, levels);
        if (c && !taken (self, c, path))
            name = c;
        else
            free (c);
    }
    for (unsigned i = 2; !name && i < 1000000; i++) {
        char *c = NULL;
        char num[16];
        int nl = snprintf (num, sizeof num, "-%u", i);
        /* keep the suffix inside the length limit */
        size_t keep = cut_utf8 (base, strlen (base), QC_NAME_MAX - (size_t) nl);
        if (asprintf (&c, "%.*s%s", (int) keep, base, num) < 0)
            break;
        if (!taken (self, c, path))
            name = c;
        else
            free (c);
    }
    free (base);
    if (name && qc_names_claim (self, name, path) != 0) {
        free (name);
        name = NULL;
    }
    return name;
}
