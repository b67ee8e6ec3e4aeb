/* See escape.h. */
#include "client/escape.h"

#include <stdlib.h>
#include <string.h>

size_t
qc_utf8_seq (const unsigned char *s)
{
    unsigned c = s[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    /* no overlong forms, no surrogates, nothing above U+10FFFF */
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f)
        || (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
        return 0;
    return n;
}

/* Calls put for each piece of the escaped form of s. */
static int
escape_each (const char *s, int (*put) (void *, const char *, size_t), void *arg)
{
    const unsigned char *p = (const unsigned char *) s;
    while (p && *p) {
        size_t n = qc_utf8_seq (p);
        char esc[5];
        const char *piece = (const char *) p;
        size_t len = n;
        if (n == 1 && (*p < 0x20 || *p == 0x7f || *p == '\\')) {
            if (*p == '\t') piece = "\\t";
            else if (*p == '\n') piece = "\\n";
            else if (*p == '\r') piece = "\\r";
            else if (*p == '\\') piece = "\\\\";
            else {
                snprintf (esc, sizeof esc, "\\x%02x", *p);
                piece = esc;
            }
            len = strlen (piece);
        } else if (n == 0) {
            snprintf (esc, sizeof esc, "\\x%02x", *p);
            piece = esc;
            len = 4;
            n = 1;
        }
        if (put (arg, piece, len))
            return -1;
        p += n;
    }
    return 0;
}

static int
put_file (void *arg, const char *s, size_t n)
{
    return fwrite (s, 1, n, arg) == n ? 0 : -1;
}

int
qc_escape_put (FILE *f, const char *s)
{
    if (!f)
        return EOF;
    return escape_each (s, put_file, f) ? EOF : 0;
}

typedef struct {
    char *buf;
    size_t len, cap;
} sbuf_t;

static int
put_buf (void *arg, const char *s, size_t n)
{
    sbuf_t *b = arg;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *g = realloc (b->buf, cap);
        if (!g)
            return -1;
        b->buf = g;
        b->cap = cap;
    }
    memcpy (b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return 0;
}

char *
qc_escape_dup (const char *s)
{
    sbuf_t b = {0};
    if (escape_each (s ? s : "", put_buf, &b) || put_buf (&b, "", 0)) {
        free (b.buf);
        return NULL;
    }
    return b.buf;
}

bool
qc_escape_clean (const char *s)
{
    for (const unsigned char *p = (const unsigned char *) s; p && *p;) {
        size_t n = qc_utf8_seq (p);
        if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f || *p == '\\')))
            return false;
        p += n;
    }
    return true;
}

static int
hexval (int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

char *
qc_unescape_dup (const char *s)
{
    if (!s)
        return NULL;
    char *out = malloc (strlen (s) + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = s; *p; p++) {
        if (*p != '\\' || !p[1]) {
            *o++ = *p;
            continue;
        }
        char c = p[1];
        if (c == 't' || c == 'n' || c == 'r' || c == '\\') {
            *o++ = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : '\\';
            p++;
        } else if (c == 'x' && hexval (p[2]) >= 0 && hexval (p[3]) >= 0
                   && (hexval (p[2]) || hexval (p[3]))) {
            *o++ = (char) (hexval (p[2]) * 16 + hexval (p[3]));
            p += 3;
        } else
            *o++ = *p;
    }
    *o = '\0';
    return out;
}
