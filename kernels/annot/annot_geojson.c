/* GeoJSON into regions (annot_parse.h says what is read): a JSON reader
 * of its own that checks the text once and then walks it by offsets,
 * and the GeoJSON shapes over it. */
#include <glib.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/annot/annot_build.h"
#include "shared/err.h"

#define NUMBER_BUF 64           /* numbers longer than this go to the heap */

/* ---- JSON, read in place ---------------------------------------------- */

/* The whole text is checked once (jvalue), then walked by offsets: a
 * key looked up skips the values before it, so memory stays that of the
 * regions whatever the file's size, and a deep file costs no stack
 * beyond QC_ANNOT_JSON_DEPTH frames. */
typedef struct {
    const char *s;
    size_t n;
    size_t at;                     /* where the error is */
    char why[160];
    long feature;                  /* the feature being read, or -1 */
} json_t;

static int jfail (json_t *j, size_t at, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
jfail (json_t *j, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (j->why, sizeof j->why, fmt, ap);
    va_end (ap);
    j->at = at;
    return -1;
}

static size_t
jws (const json_t *j, size_t p)
{
    while (p < j->n && (j->s[p] == ' ' || j->s[p] == '\t' || j->s[p] == '\n'
                        || j->s[p] == '\r'))
        p++;
    return p;
}

static bool
jlit (const json_t *j, size_t p, const char *word)
{
    size_t n = strlen (word);
    return p <= j->n && j->n - p >= n && memcmp (j->s + p, word, n) == 0;
}

static bool
jdigit (const json_t *j, size_t p)
{
    return p < j->n && j->s[p] >= '0' && j->s[p] <= '9';
}

static int
hex4 (const json_t *j, size_t p, unsigned *out)
{
    unsigned v = 0;
    if (p > j->n || j->n - p < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        int d = g_ascii_xdigit_value (j->s[p + (size_t) i]);
        if (d < 0)
            return -1;
        v = v * 16 + (unsigned) d;
    }
    *out = v;
    return 0;
}

/* The string at *p (its opening quote), checked and decoded as UTF-8
 * into buf (cap bytes with the NUL; NULL: checked only), whole
 * characters while they fit; *len its decoded length, SIZE_MAX when it
 * did not fit. *p moves past it. A lone surrogate, which Python keeps,
 * becomes U+FFFD. */
static int
jstring (json_t *j, size_t *p, char *buf, size_t cap, size_t *len)
{
    size_t q = *p + 1, k = 0;
    bool fits = buf && cap > 0;
    for (;;) {
        if (q >= j->n)
            return jfail (j, *p, "a string that does not end");
        unsigned char c = (unsigned char) j->s[q];
        char u[8];
        size_t ulen = 1;
        if (c == '"') {
            q++;
            break;
        }
        if (c < 0x20)
            return jfail (j, q, "a control character in a string");
        if (c == '\\') {
            char e = q + 1 < j->n ? j->s[q + 1] : '\0';
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            const char *hit = e ? strchr (from, e) : NULL;
            if (hit) {
                u[0] = to[hit - from];
                q += 2;
            } else if (e == 'u') {
                unsigned cp, lo;
                if (hex4 (j, q + 2, &cp) != 0)
                    return jfail (j, q, "a bad \\u escape");
                q += 6;
                if (cp >= 0xd800 && cp <= 0xdbff && jlit (j, q, "\\u")
                    && hex4 (j, q + 2, &lo) == 0 && lo >= 0xdc00 && lo <= 0xdfff) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    q += 6;
                } else if (cp >= 0xd800 && cp <= 0xdfff)
                    cp = 0xfffd;
                ulen = (size_t) g_unichar_to_utf8 (cp, u);
            } else
                return jfail (j, q, "a bad escape in a string");
        } else if (c < 0x80) {
            u[0] = (char) c;
            q++;
        } else {
            gunichar cp = g_utf8_get_char_validated (j->s + q, (gssize) (j->n - q));
            if (cp == (gunichar) -1 || cp == (gunichar) -2)
                return jfail (j, q, "a string that is not UTF-8");
            ulen = (size_t) g_unichar_to_utf8 (cp, NULL);   /* no overlong forms */
            memcpy (u, j->s + q, ulen);
            q += ulen;
        }
        if (fits && k + ulen < cap) {
            memcpy (buf + k, u, ulen);
            k += ulen;
        } else
            fits = false;
    }
    if (buf && cap > 0)
        buf[k] = '\0';
    if (len)
        *len = fits ? k : SIZE_MAX;
    *p = q;
    return 0;
}

static bool
jnumber_start (char c)
{
    return c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I';
}

/* The number at *p as RFC 8259 writes it, or Python's NaN, Infinity or
 * -Infinity; *p moves past it. Its value in *v when v is not NULL. */
static int
jnumber (json_t *j, size_t *p, double *v)
{
    size_t q = *p, start = q;
    double special = 0;
    bool is_special = true;
    if (jlit (j, q, "NaN"))
        q += 3, special = NAN;
    else if (jlit (j, q, "Infinity"))
        q += 8, special = INFINITY;
    else if (jlit (j, q, "-Infinity"))
        q += 9, special = -INFINITY;
    else {
        is_special = false;
        if (q < j->n && j->s[q] == '-')
            q++;
        if (!jdigit (j, q))
            return jfail (j, start, "a bad number");
        if (j->s[q++] != '0')
            while (jdigit (j, q))
                q++;
        if (q < j->n && j->s[q] == '.') {
            if (!jdigit (j, ++q))
                return jfail (j, start, "a bad number");
            while (jdigit (j, q))
                q++;
        }
        if (q < j->n && (j->s[q] == 'e' || j->s[q] == 'E')) {
            q++;
            if (q < j->n && (j->s[q] == '+' || j->s[q] == '-'))
                q++;
            if (!jdigit (j, q))
                return jfail (j, start, "a bad number");
            while (jdigit (j, q))
                q++;
        }
    }
    *p = q;
    if (!v)
        return 0;
    if (is_special) {
        *v = special;
        return 0;
    }
    /* the text is not NUL-terminated: the number copied out to read */
    size_t n = q - start;
    char small[NUMBER_BUF], *buf = n < sizeof small ? small : malloc (n + 1);
    if (!buf)
        return jfail (j, start, "out of memory");
    memcpy (buf, j->s + start, n);
    buf[n] = '\0';
    *v = g_ascii_strtod (buf, NULL);
    if (buf != small)
        free (buf);
    return 0;
}

/* Checks the value at *p (whitespace before it skipped) and moves *p
 * past it; depth: how deep it lies. */
static int
jvalue (json_t *j, size_t *p, int depth)
{
    size_t q = jws (j, *p);
    if (q >= j->n)
        return jfail (j, q, "the text ends where a value should be");
    char c = j->s[q];
    if (c == '{' || c == '[') {
        if (depth >= QC_ANNOT_JSON_DEPTH)
            return jfail (j, q, "arrays and objects nested more than %d deep",
                          QC_ANNOT_JSON_DEPTH);
        char close = c == '{' ? '}' : ']';
        q = jws (j, q + 1);
        if (q < j->n && j->s[q] == close) {
            *p = q + 1;
            return 0;
        }
        for (;;) {
            if (c == '{') {
                q = jws (j, q);
                if (q >= j->n || j->s[q] != '"')
                    return jfail (j, q, "expected a key (a string)");
                if (jstring (j, &q, NULL, 0, NULL) != 0)
                    return -1;
                q = jws (j, q);
                if (q >= j->n || j->s[q] != ':')
                    return jfail (j, q, "expected ':'");
                q++;
            }
            if (jvalue (j, &q, depth + 1) != 0)
                return -1;
            q = jws (j, q);
            if (q < j->n && j->s[q] == ',') {
                q++;
                continue;
            }
            if (q < j->n && j->s[q] == close) {
                *p = q + 1;
                return 0;
            }
            return jfail (j, q, "expected ',' or '%c'", close);
        }
    }
    if (c == '"') {
        *p = q;
        return jstring (j, p, NULL, 0, NULL);
    }
    const char *words[] = { "true", "false", "null" };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (jlit (j, q, words[i])) {
            *p = q + strlen (words[i]);
            return 0;
        }
    if (!jnumber_start (c))
        return jfail (j, q, "expected a value");
    *p = q;
    return jnumber (j, p, NULL);
}

/* Whether the string at p (checked) is word. */
static bool
jis (json_t *j, size_t p, const char *word)
{
    char buf[32];
    size_t len;
    return p < j->n && j->s[p] == '"' && jstring (j, &p, buf, sizeof buf, &len) == 0
           && len == strlen (word) && memcmp (buf, word, len) == 0;
}

/* The value of key in the (checked) object at p: 1 with *val at its
 * first character, 0 when the object has none, -1 on error. The last of
 * duplicate keys, as a Python dict keeps. */
static int
jget (json_t *j, size_t p, const char *key, size_t *val)
{
    size_t q = jws (j, p + 1);
    int found = 0;
    if (q < j->n && j->s[q] == '}')
        return 0;
    for (;;) {
        bool hit = jis (j, q, key);
        if (jstring (j, &q, NULL, 0, NULL) != 0)
            return -1;
        q = jws (j, jws (j, q) + 1);            /* past the ':' */
        if (hit) {
            *val = q;
            found = 1;
        }
        if (jvalue (j, &q, 0) != 0)
            return -1;
        q = jws (j, q);
        if (q >= j->n || j->s[q] != ',')
            return found;
        q = jws (j, q + 1);
    }
}

/* Walks the (checked) array at p: jnext gives each element's offset. */
typedef struct {
    size_t p;
    bool done;
} jiter_t;

static void
jiter (json_t *j, size_t p, jiter_t *it)
{
    it->p = jws (j, p + 1);
    it->done = it->p >= j->n || j->s[it->p] == ']';
}

/* 1 with *elem at the next element, 0 after the last, -1 on error. */
static int
jnext (json_t *j, jiter_t *it, size_t *elem)
{
    if (it->done)
        return 0;
    size_t q = jws (j, it->p);
    *elem = q;
    if (jvalue (j, &q, 0) != 0)
        return -1;
    q = jws (j, q);
    if (q < j->n && j->s[q] == ',')
        it->p = q + 1;
    else
        it->done = true;
    return 1;
}

static bool
jarray (const json_t *j, size_t p)
{
    return p < j->n && j->s[p] == '[';
}

/* ---- GeoJSON ---------------------------------------------------------- */

/* [x, y, ...]: one point. */
static int
geo_position (json_t *j, size_t p, build_t *b)
{
    if (!jarray (j, p))
        return jfail (j, p, "a position is not an array of numbers");
    jiter_t it;
    jiter (j, p, &it);
    int64_t v[2];
    for (int k = 0; k < 2; k++) {
        size_t e;
        double d;
        int r = jnext (j, &it, &e);
        if (r < 0)
            return -1;
        if (r == 0)
            return jfail (j, p, "a position of fewer than 2 numbers");
        if (!jnumber_start (j->s[e]))
            return jfail (j, e, "a coordinate that is not a number");
        size_t q = e;
        if (jnumber (j, &q, &d) != 0)
            return -1;
        if (annot_to_coord (d, &v[k]) != 0)
            return jfail (j, e, "a coordinate (%g) that is not finite or beyond %g", d,
                          QC_ANNOT_MAX_COORD);
    }
    if (annot_build_point (b, v[0], v[1]) != 0)
        return jfail (j, p, "%s", b->why);
    return 0;
}

/* An array of positions: one ring of the region at hand. */
static int
geo_ring (json_t *j, size_t p, build_t *b, const char *what)
{
    if (!jarray (j, p))
        return jfail (j, p, "%s is not an array of positions", what);
    jiter_t it;
    jiter (j, p, &it);
    size_t e;
    int r;
    while ((r = jnext (j, &it, &e)) == 1)
        if (geo_position (j, e, b) != 0)
            return -1;
    if (r < 0)
        return -1;
    if (annot_build_ring_end (b) != 0)
        return jfail (j, p, "%s", b->why);
    return 0;
}

/* An array of rings: one region, the first ring outer. */
static int
geo_polygon (json_t *j, size_t p, build_t *b)
{
    if (!jarray (j, p))
        return jfail (j, p, "a polygon is not an array of rings");
    jiter_t it;
    jiter (j, p, &it);
    size_t e;
    int r;
    while ((r = jnext (j, &it, &e)) == 1)
        if (geo_ring (j, e, b, "a polygon's ring") != 0)
            return -1;
    if (r < 0)
        return -1;
    if (annot_build_region_end (b) != 0)
        return jfail (j, p, "%s", b->why);
    return 0;
}

static int
geo_multipolygon (json_t *j, size_t p, build_t *b)
{
    if (!jarray (j, p))
        return jfail (j, p, "a MultiPolygon's coordinates are not an array of polygons");
    jiter_t it;
    jiter (j, p, &it);
    size_t e;
    int r;
    while ((r = jnext (j, &it, &e)) == 1)
        if (geo_polygon (j, e, b) != 0)
            return -1;
    return r;
}

static int
geo_linestring (json_t *j, size_t p, build_t *b)
{
    if (geo_ring (j, p, b, "a LineString's coordinates") != 0)
        return -1;
    if (annot_build_region_end (b) != 0)
        return jfail (j, p, "%s", b->why);
    return 0;
}

/* A feature of no geometry HistoQC reads: counted, its type kept (the
 * first one's) for the caller's warning, control characters made '?'. */
static void
geo_skip (qc_annot_t *a, const char *type)
{
    if (a->skipped++ > 0)
        return;
    g_strlcpy (a->skipped_type, type, sizeof a->skipped_type);
    for (char *c = a->skipped_type; *c; c++)
        if ((unsigned char) *c < 0x20 || *c == 0x7f)
            *c = '?';
}

static int
geo_feature (json_t *j, size_t p, build_t *b)
{
    if (p >= j->n || j->s[p] != '{')
        return jfail (j, p, "not an object (a Feature)");
    size_t g, t, c;
    int r = jget (j, p, "geometry", &g);
    if (r <= 0)
        return r < 0 ? -1 : jfail (j, p, "no \"geometry\"");
    if (jlit (j, g, "null")) {
        geo_skip (b->a, "null");
        return 0;
    }
    if (j->s[g] != '{')
        return jfail (j, g, "a geometry that is not an object");
    r = jget (j, g, "type", &t);
    if (r < 0)
        return -1;
    if (r == 0 || j->s[t] != '"')
        return jfail (j, g, "a geometry without a \"type\" string");
    char type[sizeof b->a->skipped_type];
    size_t q = t;
    if (jstring (j, &q, type, sizeof type, NULL) != 0)
        return -1;
    int (*reader) (json_t *, size_t, build_t *) =
        jis (j, t, "Polygon") ? geo_polygon
        : jis (j, t, "MultiPolygon") ? geo_multipolygon
        : jis (j, t, "LineString") ? geo_linestring : NULL;
    if (!reader) {
        geo_skip (b->a, type);
        return 0;
    }
    r = jget (j, g, "coordinates", &c);
    if (r <= 0)
        return r < 0 ? -1 : jfail (j, g, "a %s without \"coordinates\"", type);
    return reader (j, c, b);
}

/* The top value at p: an array of features, a FeatureCollection, or one
 * feature. */
static int
geo_top (json_t *j, size_t p, build_t *b)
{
    size_t list = p, t;
    if (j->s[p] == '{') {
        int r = jget (j, p, "type", &t);
        if (r < 0)
            return -1;
        if (r == 0 || !jis (j, t, "FeatureCollection")) {
            j->feature = 0;
            return geo_feature (j, p, b);
        }
        r = jget (j, p, "features", &list);
        if (r < 0)
            return -1;
        if (r == 0 || !jarray (j, list))
            return jfail (j, p, "a FeatureCollection without a \"features\" array");
    } else if (!jarray (j, p))
        return jfail (j, p, "neither an array of features nor an object");
    jiter_t it;
    jiter (j, list, &it);
    size_t e;
    int r;
    for (long i = 0; (r = jnext (j, &it, &e)) == 1; i++) {
        j->feature = i;
        if (geo_feature (j, e, b) != 0)
            return -1;
    }
    j->feature = -1;
    return r;
}

int
annot_parse_geojson (const char *data, size_t len, build_t *b, char *err, size_t errlen)
{
    if (len >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
        data += 3, len -= 3;          /* a byte order mark, which RFC 8259 lets us skip */
    json_t j = { .s = data, .n = len, .feature = -1 };
    size_t p = 0;
    bool syntax = jvalue (&j, &p, 0) != 0;
    if (!syntax && (p = jws (&j, p)) < len)
        syntax = jfail (&j, p, "more text after the JSON value") != 0;
    if (!syntax && geo_top (&j, jws (&j, 0), b) == 0)
        return 0;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < j.at && i < len; i++, col++)
        if (data[i] == '\n')
            line++, col = 0;
    if (syntax)
        return qc_fail (err, errlen, "annotation JSON: %s (line %zu, column %zu)", j.why,
                        line, col);
    if (j.feature >= 0)
        return qc_fail (err, errlen, "annotation GeoJSON: feature %ld: %s (line %zu, "
                        "column %zu)", j.feature, j.why, line, col);
    return qc_fail (err, errlen, "annotation GeoJSON: %s (line %zu, column %zu)", j.why,
                    line, col);
}
