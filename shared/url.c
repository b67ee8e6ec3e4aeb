/* Cohort entries by URL: classification, redaction, file:// paths and
 * cache file names (contract in url.h).
 *
 * Parsing is by hand, not curl_url (): the only parts needed are the
 * scheme, the authority and where the query starts, and redaction must
 * work on strings curl would reject (a message about a malformed entry
 * must still hide its secrets). */
#include "shared/url.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "shared/err.h"

/* Accepted schemes: one row each. */
static const struct {
    const char *name;
    qc_url_kind_t kind;
} schemes[] = {
    { "file", QC_URL_FILE },
    { "http", QC_URL_HTTP },
    { "https", QC_URL_HTTPS },
};

/* Length of "scheme" when s starts with "scheme://", else 0. */
static size_t
scheme_len (const char *s)
{
    if (!s || !isalpha ((unsigned char) s[0]))
        return 0;
    size_t i = 1;
    while (isalnum ((unsigned char) s[i]) || s[i] == '+' || s[i] == '-'
           || s[i] == '.')
        i++;
    return strncmp (s + i, "://", 3) == 0 ? i : 0;
}

/* The parts of a URL, as offsets into it. */
typedef struct {
    size_t scheme_end;        /* the ':' of "://" */
    size_t auth_start;        /* after "//" */
    size_t host_start;        /* after "user:pass@", or auth_start */
    size_t auth_end;          /* first '/', '?' or '#' after the authority */
    size_t path_end;          /* first '?' or '#' after auth_end */
    size_t query_end;         /* first '#' after path_end */
} url_parts_t;

static int
split (const char *url, url_parts_t *p)
{
    size_t n = scheme_len (url);
    if (!n)
        return -1;
    p->scheme_end = n;
    p->auth_start = n + 3;
    size_t i = p->auth_start;
    while (url[i] && url[i] != '/' && url[i] != '?' && url[i] != '#')
        i++;
    p->auth_end = i;
    p->host_start = p->auth_start;
    for (size_t k = p->auth_start; k < p->auth_end; k++)
        if (url[k] == '@')
            p->host_start = k + 1;   /* the last '@' ends the user info */
    while (url[i] && url[i] != '?' && url[i] != '#')
        i++;
    p->path_end = i;
    while (url[i] && url[i] != '#')
        i++;
    p->query_end = i;
    return 0;
}

char *
qc_url_redact (const char *entry, char *out, size_t outlen)
{
    if (!out || !outlen)
        return out;
    if (!entry) {
        snprintf (out, outlen, "(null)");
        return out;
    }
    url_parts_t p;
    if (split (entry, &p) < 0) {
        snprintf (out, outlen, "%s", entry);
        return out;
    }
    snprintf (out, outlen, "%.*s://%.*s", (int) p.scheme_end, entry,
              (int) (p.path_end - p.host_start), entry + p.host_start);
    return out;
}

static int host_port_of (const char *url, const url_parts_t *p, size_t *host_end,
                         unsigned *port);

/* "[ADDR]" (no zone) in its one text form (RFC 5952, inet_ntop's) into
 * out (which may be in); 0, or -1 when ADDR is no IPv6 address or out is
 * too small. */
static int
v6_canonical (const char *in, char *out, size_t outlen)
{
    size_t n = strlen (in);
    char addr[INET6_ADDRSTRLEN + 8], text[INET6_ADDRSTRLEN];
    struct in6_addr a;
    if (n < 3 || in[0] != '[' || in[n - 1] != ']' || n - 2 >= sizeof addr)
        return -1;
    memcpy (addr, in + 1, n - 2);
    addr[n - 2] = '\0';
    if (inet_pton (AF_INET6, addr, &a) != 1 || !inet_ntop (AF_INET6, &a, text, sizeof text)
        || strlen (text) + 3 > outlen)
        return -1;
    snprintf (out, outlen, "[%s]", text);
    return 0;
}

/* Whether host (n bytes, as written: no port) is one a request can name:
 * an [IPv6] address (a zone, "%25eth0", after it), or a name of ASCII
 * letters, digits, '-', '_' in labels joined by '.' (none empty; one
 * '.' may end it). libcurl converts an internationalised name only in a
 * UTF-8 locale, which no program here runs in ("URL using bad/illegal
 * format" on the worker), and resolves a percent escape as it stands:
 * both are refused before the job (qc_url_classify says which). */
static bool
host_plain (const char *host, size_t n)
{
    if (n >= 2 && host[0] == '[') {
        if (host[n - 1] != ']')
            return false;
        char addr[64];
        size_t len = n - 2;
        const char *zone = memchr (host + 1, '%', len);
        if (zone)
            len = (size_t) (zone - host - 1);
        if (len >= sizeof addr)
            return false;
        memcpy (addr, host + 1, len);
        addr[len] = '\0';
        struct in6_addr a;
        return inet_pton (AF_INET6, addr, &a) == 1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) host[i];
        if (c == '.' ? i == 0 || host[i - 1] == '.'
                     : c >= 0x80 || (!isalnum (c) && c != '-' && c != '_'))
            return false;
    }
    return true;
}

int
qc_url_classify (const char *entry, char *err, size_t errlen)
{
    if (!entry || !*entry)
        return qc_fail (err, errlen, "an empty cohort entry (expected a path or a URL)");
    char shown[512];
    qc_url_redact (entry, shown, sizeof shown);
    if (strlen (entry) > QC_URL_MAX)
        return qc_fail (err, errlen, "'%.200s...': longer than %d characters",
                        shown, QC_URL_MAX);
    url_parts_t p;
    if (split (entry, &p) < 0)
        return QC_URL_PATH;
    int kind = -1;
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
        if (strlen (schemes[i].name) == p.scheme_end
            && strncasecmp (entry, schemes[i].name, p.scheme_end) == 0)
            kind = (int) schemes[i].kind;
    if (kind < 0)
        return qc_fail (err, errlen,
                        "'%s': the URL scheme '%.*s' is not supported "
                        "(use a path, file://, http:// or https://)",
                        shown, (int) p.scheme_end, entry);
    if (kind == QC_URL_FILE) {
        char path[4096], why[256];
        if (qc_url_file_path (entry, path, sizeof path, why, sizeof why) < 0)
            return qc_fail (err, errlen, "'%s': %s", shown, why);
        return kind;
    }
    if (p.auth_end == p.host_start)
        return qc_fail (err, errlen, "'%s': the URL has no host", shown);
    for (size_t i = 0; entry[i]; i++)
        if ((unsigned char) entry[i] <= ' ')
            return qc_fail (err, errlen,
                            "'%s': the URL holds a space or control character "
                            "(percent-encode it as %%20 etc.)", shown);
    /* a host or port no worker could reach is said here, before the
       job, naming the entry: it failed on a worker, in curl's words
       ("URL using bad/illegal format or missing URL"), or was tried five
       times (port 0: "Couldn't connect"; a user's review) */
    size_t host_end;
    unsigned port;
    if (host_port_of (entry, &p, &host_end, &port) == 0 && entry[p.host_start] != '[') {
        const char *h = entry + p.host_start;
        size_t n = host_end - p.host_start;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char) h[i] >= 0x80)
                return qc_fail (err, errlen, "'%s': the URL's host is not ASCII: give its "
                                "ASCII form (xn--..., which 'idn2 %.*s' prints)", shown,
                                (int) n, h);
        if (memchr (h, '%', n))
            return qc_fail (err, errlen, "'%s': the URL's host holds a percent escape: "
                            "write its characters as they are", shown);
    }
    if (host_port_of (entry, &p, &host_end, &port) != 0 || host_end == p.host_start
        || !host_plain (entry + p.host_start, host_end - p.host_start))
        return qc_fail (err, errlen, "'%s': the URL's host or port is malformed (a host "
                        "name, an IPv4 or [IPv6] address, and a port from 1 to 65535)",
                        shown);
    return kind;
}

int
qc_url_is_remote (const char *entry)
{
    int k = qc_url_classify (entry, NULL, 0);
    return k == QC_URL_HTTP || k == QC_URL_HTTPS;
}

static int
hexval (int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower (c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *
qc_url_name (const char *entry, char *out, size_t outlen)
{
    if (!out || !outlen)
        return out;
    url_parts_t p;
    if (!entry || split (entry, &p) < 0) {
        const char *slash = entry ? strrchr (entry, '/') : NULL;
        snprintf (out, outlen, "%s", !entry ? "(null)"
                  : slash && slash[1] ? slash + 1 : entry);
        return out;
    }
    size_t start = p.auth_end, end = p.path_end;
    /* a path that ends in '/' is named by its last segment ("sub1" of
       http://h/ok/sub1/, not the host) */
    while (end > p.auth_end + 1 && entry[end - 1] == '/')
        end--;
    for (size_t i = p.auth_end; i < end; i++)
        if (entry[i] == '/')
            start = i + 1;
    if (start >= end) {         /* no file name: the host names it */
        start = p.host_start;
        end = p.auth_end;
    }
    size_t o = 0;
    for (size_t i = start; i < end && o + 1 < outlen; i++) {
        int c = (unsigned char) entry[i];
        int hi = c == '%' && i + 2 < end ? hexval (entry[i + 1]) : -1;
        int lo = hi < 0 ? -1 : hexval (entry[i + 2]);
        if (lo >= 0 && hi * 16 + lo != 0) {
            c = hi * 16 + lo;
            i += 2;
        }
        out[o++] = (char) c;
    }
    out[o] = '\0';
    return out;
}

int
qc_url_encode_segment (const char *name, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    if (!name || !out || !outlen)
        return -1;
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *) name; *c; c++) {
        bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')
                     || (*c >= '0' && *c <= '9') || strchr ("-._~", *c);
        if (o + (plain ? 1 : 3) >= outlen) {
            out[0] = '\0';
            return -1;
        }
        if (plain)
            out[o++] = (char) *c;
        else {
            out[o++] = '%';
            out[o++] = hex[*c >> 4];
            out[o++] = hex[*c & 15];
        }
    }
    out[o] = '\0';
    return 0;
}

int
qc_url_file_path (const char *url, char *out, size_t outlen, char *err,
                  size_t errlen)
{
    url_parts_t p;
    if (!url || !out || !outlen || split (url, &p) < 0
        || strncasecmp (url, "file", p.scheme_end) != 0 || p.scheme_end != 4)
        return qc_fail (err, errlen, "not a file:// URL");
    size_t hostlen = p.auth_end - p.auth_start;
    if (hostlen && !(hostlen == 9 && strncasecmp (url + p.auth_start, "localhost", 9) == 0))
        return qc_fail (err, errlen, "a file:// URL must name a local file "
                        "(file:///path or file://localhost/path)");
    if (p.path_end == p.auth_end || url[p.auth_end] != '/')
        return qc_fail (err, errlen, "a file:// URL needs an absolute path");
    if (url[p.path_end])
        return qc_fail (err, errlen, "a file:// URL cannot have a query or fragment");
    size_t o = 0;
    for (size_t i = p.auth_end; i < p.path_end; i++) {
        int c = (unsigned char) url[i];
        if (c == '%') {
            int hi = hexval (url[i + 1]), lo = hi < 0 ? -1 : hexval (url[i + 2]);
            if (hi < 0 || lo < 0)
                return qc_fail (err, errlen, "a bad %%-escape in the path");
            c = hi * 16 + lo;
            if (c == 0)
                return qc_fail (err, errlen, "%%00 in the path");
            i += 2;
        }
        if (o + 1 >= outlen)
            return qc_fail (err, errlen, "the path is too long");
        out[o++] = (char) c;
    }
    out[o] = '\0';
    return 0;
}

/* Query parameters that sign a URL or say when it expires: left out of
 * the cache key, so a re-signed URL for the same object keeps its entry.
 * A name matches when equal (case-insensitive) or, ending in '*', when
 * it starts with the rest. */
static const char *const signing_params[] = {
    "x-amz-*", "x-goog-*", "signature", "expires", "awsaccesskeyid",
    "googleaccessid", "sig", "se", "st", "sp", "sv", "sr", "spr", "sip",
    "skoid", "sktid", "skt", "ske", "sks", "skv", "ss", "srt",
};

static int
is_signing_param (const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof signing_params / sizeof signing_params[0]; i++) {
        const char *s = signing_params[i];
        size_t n = strlen (s);
        if (s[n - 1] == '*') {
            if (len >= n - 1 && strncasecmp (name, s, n - 1) == 0)
                return 1;
        } else if (len == n && strncasecmp (name, s, n) == 0)
            return 1;
    }
    return 0;
}

/* Two 64-bit FNV-1a streams with different bases, each finished by a
 * splitmix64 step: 128 bits to name a cache entry. Not cryptographic:
 * a collision would only make two URLs share a name, and an entry is
 * validated against the server's size and ETag before any reuse. */
typedef struct {
    uint64_t a, b;
} hash128_t;

static void
hash_bytes (hash128_t *h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h->a = (h->a ^ (unsigned char) s[i]) * 0x100000001b3ULL;
        h->b = (h->b ^ (unsigned char) tolower ((unsigned char) s[i]))
               * 0x100000001b3ULL;
        h->b ^= h->b >> 29;
    }
}

static uint64_t
finish (uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int
qc_url_cache_name (const char *url, char *out, size_t outlen)
{
    url_parts_t p;
    int kind = qc_url_classify (url, NULL, 0);
    if ((kind != QC_URL_HTTP && kind != QC_URL_HTTPS) || split (url, &p) < 0
        || !out || outlen < 131)
        return -1;
    hash128_t h = { 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL };
    /* scheme and host are case-insensitive; the path is not */
    char lower[8];
    for (size_t i = 0; i < p.scheme_end && i < sizeof lower; i++)
        lower[i] = (char) tolower ((unsigned char) url[i]);
    hash_bytes (&h, lower, p.scheme_end < sizeof lower ? p.scheme_end : sizeof lower);
    hash_bytes (&h, "://", 3);
    for (size_t i = p.host_start; i < p.auth_end; i++) {
        char c = (char) tolower ((unsigned char) url[i]);
        hash_bytes (&h, &c, 1);
    }
    hash_bytes (&h, url + p.auth_end, p.path_end - p.auth_end);
    /* the query's own parameters, in order, without the signing ones */
    size_t i = p.path_end < p.query_end ? p.path_end + 1 : p.query_end;
    while (i < p.query_end) {
        size_t j = i;
        while (j < p.query_end && url[j] != '&')
            j++;
        size_t name = i;
        while (name < j && url[name] != '=')
            name++;
        if (j > i && !is_signing_param (url + i, name - i)) {
            hash_bytes (&h, "&", 1);
            hash_bytes (&h, url + i, j - i);
        }
        i = j + 1;
    }
    /* the readable part: the last path segment */
    size_t seg = p.path_end;
    while (seg > p.auth_end && url[seg - 1] != '/')
        seg--;
    char base[97];
    size_t n = 0;
    for (size_t k = seg; k < p.path_end && n < sizeof base - 1; k++) {
        int c = (unsigned char) url[k];
        base[n++] = (char) (isalnum (c) || c == '.' || c == '-' || c == '_' ? c : '_');
    }
    base[n] = '\0';
    if (n == 0 || base[0] == '.')   /* no hidden or empty names */
        snprintf (base, sizeof base, "slide");
    snprintf (out, outlen, "%s-%016llx%016llx", base,
              (unsigned long long) finish (h.a), (unsigned long long) finish (h.b));
    return 0;
}

/* ---- host and port ---- */

/* Where url's host ends and the port written after it: the host is
 * [p->host_start, *host_end), an [IPv6] address through its ']' or a
 * name up to the first ':'; *port is 0 when no port or an empty one is
 * written (the scheme's own). -1 when the authority has no such shape:
 * a '[' without its ']' or with more than ":port" after it, a port that
 * is not 1-65535 in at most five digits. One reading for both callers,
 * so what the worker admits (authority_of) and the one spelling of a
 * slide (qc_url_canonical) never take a port two ways ("080" is 80). */
static int
host_port_of (const char *url, const url_parts_t *p, size_t *host_end, unsigned *port)
{
    size_t h = p->host_start, e = p->auth_end, colon;
    if (url[h] == '[') {
        const char *close = memchr (url + h, ']', e - h);
        if (!close)
            return -1;
        colon = (size_t) (close - url) + 1;
        if (colon < e && url[colon] != ':')
            return -1;
    } else {
        const char *c = memchr (url + h, ':', e - h);
        colon = c ? (size_t) (c - url) : e;
    }
    *host_end = colon;
    *port = 0;
    if (colon + 1 >= e)
        return 0;
    if (e - colon - 1 > 5)
        return -1;
    unsigned long v = 0;
    for (size_t k = colon + 1; k < e; k++) {
        if (!isdigit ((unsigned char) url[k]))
            return -1;
        v = v * 10 + (unsigned long) (url[k] - '0');
    }
    if (v < 1 || v > 65535)
        return -1;
    *port = (unsigned) v;
    return 0;
}

/* ---- admitted prefixes (qc-worker --slides-url) ---- */

/* The scheme, host and port of url's authority (user info skipped) and
 * where its path lies; -1 when any part is not plain enough to compare:
 * a host that is not letters, digits, '.', '-' or an [IPv6] address, a
 * second '@', a port that is not 1-65535. */
static int
authority_of (const char *url, qc_url_kind_t *kind, char *host, size_t hostlen,
              unsigned *port, size_t *path_start, size_t *path_end)
{
    url_parts_t p;
    if (!url || split (url, &p) < 0)
        return -1;
    if (p.scheme_end == 4 && strncasecmp (url, "http", 4) == 0)
        *kind = QC_URL_HTTP;
    else if (p.scheme_end == 5 && strncasecmp (url, "https", 5) == 0)
        *kind = QC_URL_HTTPS;
    else
        return -1;
    size_t ats = 0;
    for (size_t k = p.auth_start; k < p.auth_end; k++)
        ats += url[k] == '@';
    size_t h = p.host_start, host_end;
    if (ats > 1 || host_port_of (url, &p, &host_end, port) < 0
        || (host_end < p.auth_end && !*port))   /* "host:" names no port to compare */
        return -1;
    /* an [IPv6] address of hex digits, ':' and '.' (no zone), or a name */
    bool v6 = url[h] == '[';
    for (size_t k = h + v6; k < host_end - v6; k++) {
        int c = (unsigned char) url[k];
        if (v6 ? !isxdigit (c) && c != ':' && c != '.' : !isalnum (c) && c != '.' && c != '-')
            return -1;
    }
    if (host_end == h + 2 * v6 || host_end - h >= hostlen)
        return -1;
    size_t n = 0;
    for (size_t k = h; k < host_end; k++)
        host[n++] = (char) tolower ((unsigned char) url[k]);
    host[n] = '\0';
    /* an address in its one text form, as qc_url_canonical spells it:
       "[0::1e0]" and "[::1e0]" are one host */
    if (v6 && v6_canonical (host, host, hostlen) != 0)
        return -1;
    if (!*port)
        *port = *kind == QC_URL_HTTPS ? 443 : 80;
    *path_start = p.auth_end;
    *path_end = p.path_end;
    return 0;
}

/* 1 when the path [s, e) holds what a server could read as another
 * path: a segment of one or two dots, also percent-encoded, with spaces
 * after them (IIS trims those) or ";params" (Tomcat, Jetty and Spring
 * drop those, then resolve the dots); an encoded '/', '\', '%' (a second
 * decoding), NUL, or an overlong UTF-8 lead byte (%C0, %C1, also raw:
 * old servers decoded "%C0%AE" as a dot); or a '\' (some servers take it
 * for '/'). */
static int
path_unsafe (const char *s, const char *e)
{
    size_t dots = 0, other = 0;    /* in the segment so far, decoded */
    int params = 0;                /* past the segment's ';' */
    for (const char *c = s; c <= e; c++) {
        if (c == e || *c == '/') {
            if (dots && dots <= 2 && !other)
                return 1;
            dots = other = 0;
            params = 0;
            continue;
        }
        int ch = (unsigned char) *c;
        if (ch == '%' && c + 2 < e && hexval (c[1]) >= 0 && hexval (c[2]) >= 0) {
            ch = hexval (c[1]) * 16 + hexval (c[2]);
            c += 2;
            if (ch == '/' || ch == '%' || ch == 0 || ch == 0xc0 || ch == 0xc1)
                return 1;
        }
        if (ch == '\\' || ch == 0xc0 || ch == 0xc1)   /* raw too: spelt %C0 it is unsafe */
            return 1;
        if (ch == ';')
            params = 1;
        if (params)
            continue;
        if (ch == '.')
            dots++;
        else if (ch != ' ')
            other++;
    }
    return 0;
}

/* The path [s, s + n) into out (cap bytes) in one spelling (RFC 3986
 * 6.2.2), as qc_url_canonical spells it: raw bytes over 0x7f
 * percent-encoded; an escape of a letter, digit, '-', '_' or '~' (which
 * every server reads as the character) decoded, "%73%30%34.svs" being
 * "s04.svs"; other escapes' hex digits upper case. "%2E" stays (a
 * server may or may not take it for a dot: qc_url_path_ambiguous), and
 * a '%' that starts no escape stays as written. "/" when empty. -1 when it does not fit. */
static int
encode_path (const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    if (n == 0)
        s = "/", n = 1;
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char) s[k];
        bool encode = c > 0x7f;
        if (c == '%' && k + 2 < n && hexval (s[k + 1]) >= 0 && hexval (s[k + 2]) >= 0) {
            c = (unsigned char) (hexval (s[k + 1]) * 16 + hexval (s[k + 2]));
            k += 2;
            bool unreserved = (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z')
                              || c == '-' || c == '_' || c == '~';
            /* kept as an escape after a stray '%' ("%3%34"): decoded, it
               would make a new escape ("%34"), another spelling again */
            bool stray = (o >= 1 && out[o - 1] == '%')
                         || (o >= 2 && out[o - 2] == '%' && hexval (out[o - 1]) >= 0);
            encode = !unreserved || stray;
        }
        if (o + (encode ? 3 : 1) + 1 > cap)
            return -1;
        if (encode)
            o += (size_t) snprintf (out + o, cap - o, "%%%02X", c);
        else
            out[o++] = (char) c;
    }
    out[o] = '\0';
    return 0;
}

int
qc_url_prefix_parse (const char *text, qc_url_prefix_t *out, char *err, size_t errlen)
{
    if (!text || !out)
        return qc_fail (err, errlen, "no URL prefix given");
    memset (out, 0, sizeof *out);
    size_t ps, pe;
    url_parts_t p;
    if (split (text, &p) < 0
        || authority_of (text, &out->kind, out->host, sizeof out->host, &out->port, &ps, &pe) < 0)
        return qc_fail (err, errlen, "'%.300s': write http(s)://HOST[:PORT]/FOLDER/ "
                        "(a host name or address, a port from 1 to 65535)", text);
    if (p.host_start != p.auth_start)
        return qc_fail (err, errlen, "'%.300s': a prefix holds no user name or password", text);
    if (text[pe])
        return qc_fail (err, errlen, "'%.300s': a prefix holds no query (?...) or "
                        "fragment (#...)", text);
    if (path_unsafe (text + ps, text + pe))
        return qc_fail (err, errlen, "'%.300s': a prefix's folder holds no '.', '..', "
                        "'\\' or encoded '/' segment", text);
    /* the folder as a slide's one spelling has it (raw bytes over 0x7f
       percent-encoded), so that it is compared with slides spelt so */
    if (encode_path (text + ps, pe - ps, out->path, sizeof out->path) < 0)
        return qc_fail (err, errlen, "'%.300s': the folder is longer than %zu characters "
                        "(each byte over 0x7f counted as its %%XX)", text,
                        sizeof out->path - 2);
    return 0;
}

int
qc_url_prefix_match (const qc_url_prefix_t *prefix, const char *url)
{
    if (!prefix || !url)
        return 0;
    qc_url_kind_t kind;
    char host[256];
    unsigned port;
    size_t ps, pe;
    if (authority_of (url, &kind, host, sizeof host, &port, &ps, &pe) < 0
        || kind != prefix->kind || port != prefix->port || strcmp (host, prefix->host) != 0
        || path_unsafe (url + ps, url + pe))
        return 0;
    char path[3 * QC_URL_MAX + 2];
    if (encode_path (url + ps, pe - ps, path, sizeof path) < 0)
        return 0;
    size_t plen = strlen (path);
    size_t n = strlen (prefix->path);
    if (plen < n || strncmp (path, prefix->path, n) != 0)
        return 0;
    /* the prefix's path is a folder: it ends at a '/' of the URL's */
    return prefix->path[n - 1] == '/' || plen == n || path[n] == '/';
}

int
qc_url_path_ambiguous (const char *url)
{
    url_parts_t p;
    if (!url || split (url, &p) < 0)
        return 0;
    return path_unsafe (url + p.auth_end, url + p.path_end);
}

/* Appends n bytes to out (cap bytes, *len used); -1 when they do not fit. */
static int
put (char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len + n + 1 > cap)
        return -1;
    memcpy (out + *len, s, n);
    *len += n;
    out[*len] = '\0';
    return 0;
}

/* RFC 3986 5.2.4 on path (n bytes), in place; returns its new length.
 * Only literal "." and ".." segments: encoded ones stay (a server may
 * read them either way; qc_url_path_ambiguous says so). */
static size_t
remove_dots (char *path, size_t n)
{
    size_t o = 0;                 /* output length, always a prefix of path */
    size_t i = 0;
    while (i < n) {
        size_t seg_end = i + 1;   /* path[i] is '/' */
        while (seg_end < n && path[seg_end] != '/')
            seg_end++;
        size_t len = seg_end - i - 1;
        const char *seg = path + i + 1;
        if (len == 1 && seg[0] == '.') {
            if (seg_end == n)
                path[o++] = '/';  /* "/a/." is "/a/" */
        } else if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            while (o > 0 && path[--o] != '/')
                ;                 /* drop the last output segment */
            if (seg_end == n)
                path[o++] = '/';
        } else {
            memmove (path + o, path + i, seg_end - i);
            o += seg_end - i;
        }
        i = seg_end;
    }
    return o ? o : (path[0] = '/', 1);
}

int
qc_url_canonical (const char *url, char *out, size_t outlen)
{
    if (!out || !outlen)
        return -1;
    out[0] = '\0';
    if (!url)
        return -1;
    url_parts_t p;
    int kind = split (url, &p) < 0 ? -1 : qc_url_is_remote (url) ? 1 : 0;
    size_t len = 0;
    if (kind != 1) {
        if (put (out, outlen, &len, url, strlen (url)))
            return out[0] = '\0', -1;
        return 0;
    }
    bool https = p.scheme_end == 5;
    const char *scheme = https ? "https://" : "http://";
    /* an authority of no usual shape is kept as written */
    size_t host_end;
    unsigned port;
    bool plain = host_port_of (url, &p, &host_end, &port) == 0;
    if (!plain)
        host_end = p.auth_end;
    if (put (out, outlen, &len, scheme, strlen (scheme))
        || put (out, outlen, &len, url + p.auth_start, p.host_start - p.auth_start))
        return out[0] = '\0', -1;
    /* an [IPv6] address in its one text form (RFC 5952: "[::1]" for
       "[0:0:0:0:0:0:0:1]"), or one slide spelt two ways ran twice (a
       user's review); one with a zone is kept as written */
    char v6[INET6_ADDRSTRLEN + 8] = "";
    if (plain && url[p.host_start] == '[' && host_end - p.host_start < sizeof v6
        && !memchr (url + p.host_start, '%', host_end - p.host_start)) {
        memcpy (v6, url + p.host_start, host_end - p.host_start);
        v6[host_end - p.host_start] = '\0';
        if (v6_canonical (v6, v6, sizeof v6) != 0)
            v6[0] = '\0';
    }
    if (v6[0] && put (out, outlen, &len, v6, strlen (v6)))
        return out[0] = '\0', -1;
    bool zone = false;        /* an IPv6 zone ("%25eth0"): a case-sensitive name */
    for (size_t k = v6[0] ? host_end : p.host_start; k < host_end; k++) {
        zone = zone || url[k] == '%' || !plain;
        char c = zone ? url[k] : (char) tolower ((unsigned char) url[k]);
        if (put (out, outlen, &len, &c, 1))
            return out[0] = '\0', -1;
    }
    char port_text[16] = "";
    if (plain && port && port != (https ? 443u : 80u))
        snprintf (port_text, sizeof port_text, ":%u", port);
    if (put (out, outlen, &len, port_text, strlen (port_text)))
        return out[0] = '\0', -1;
    size_t path_start = len;
    if (encode_path (url + p.auth_end, p.path_end - p.auth_end, out + len, outlen - len) < 0)
        return out[0] = '\0', -1;
    len += strlen (out + len);
    len = path_start + remove_dots (out + path_start, len - path_start);
    out[len] = '\0';
    if (put (out, outlen, &len, url + p.path_end, strlen (url + p.path_end)))
        return out[0] = '\0', -1;
    return 0;
}
