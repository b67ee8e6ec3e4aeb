/* Aperio ImageScope XML into regions (annot_parse.h says what is read),
 * with glib's GMarkup. */
#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kernels/annot/annot_build.h"
#include "shared/err.h"

#define PY_FLOAT_MAX 128        /* longest coordinate text read */

/* ---- ImageScope XML --------------------------------------------------- */

/* Python's float () of an attribute's text: spaces around it allowed,
 * underscores between digits, no hexadecimal (which strtod takes).
 * g_ascii_strtod: the decimal point is '.' whatever the locale. */
static int
py_float (const char *s, double *out)
{
    size_t n = strlen (s);
    while (n && g_ascii_isspace (*s))
        s++, n--;
    while (n && g_ascii_isspace (s[n - 1]))
        n--;
    char buf[PY_FLOAT_MAX];
    if (n == 0 || n >= sizeof buf)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == 'x' || s[i] == 'X')
            return -1;
        if (s[i] == '_') {
            if (i == 0 || i + 1 == n || !g_ascii_isdigit (s[i - 1])
                || !g_ascii_isdigit (s[i + 1]))
                return -1;
            continue;
        }
        buf[k++] = s[i];
    }
    buf[k] = '\0';
    char *end;
    double v = g_ascii_strtod (buf, &end);
    if (end != buf + k)
        return -1;
    *out = v;
    return 0;
}

/* s when it is short plain text, fit to quote in a message. */
static const char *
shown (const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (n >= 32 || s[n] < 0x20 || s[n] > 0x7e || s[n] == '"')
            return "(not shown)";
    return s;
}

/* The path HistoQC's findall calls walk: below the root (any name), an
 * element at depth d counts when its parent counts and it is named
 * xml_path[d]. */
static const char *const xml_path[] = { NULL, "Annotation", "Regions", "Region",
                                        "Vertices", "Vertex" };
#define XML_VERTICES 4
#define XML_VERTEX 5

typedef struct {
    build_t *b;
    int depth;                     /* elements open */
    int path;                      /* how many of them are on the path */
    bool root_seen;
} xml_t;

static void
xml_vertex (xml_t *x, const char **names, const char **values, GError **error)
{
    const char *xy[2] = { NULL, NULL };
    for (size_t i = 0; names[i]; i++)
        for (int k = 0; k < 2; k++)
            if (strcmp (names[i], k ? "Y" : "X") == 0) {
                if (xy[k]) {            /* expat refuses it; GMarkup does not */
                    g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                                 "a <Vertex> with two %c attributes", k ? 'Y' : 'X');
                    return;
                }
                xy[k] = values[i];
            }
    int64_t v[2];
    for (int k = 0; k < 2; k++) {
        double d;
        const char *what = k ? "Y" : "X";
        if (!xy[k])
            g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                         "a <Vertex> without %s", what);
        else if (py_float (xy[k], &d) != 0)
            g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                         "a <Vertex> whose %s=\"%s\" is not a number", what,
                         shown (xy[k]));
        else if (annot_to_coord (d, &v[k]) != 0)
            g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                         "a <Vertex> whose %s=\"%s\" is not finite or beyond %g", what,
                         shown (xy[k]), QC_ANNOT_MAX_COORD);
        else
            continue;
        return;
    }
    if (annot_build_point (x->b, v[0], v[1]) != 0)
        g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "%s",
                     x->b->why);
}

static void
xml_start (GMarkupParseContext *ctx, const char *name, const char **names,
           const char **values, gpointer data, GError **error)
{
    xml_t *x = data;
    if (x->depth == 0) {
        /* GMarkup takes a second root; ElementTree does not */
        if (x->root_seen) {
            g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                         "a second root element <%s>", name);
            return;
        }
        x->root_seen = true;
        x->path = 1;
    } else if (x->path == x->depth && x->depth <= XML_VERTEX
               && strcmp (name, xml_path[x->depth]) == 0) {
        x->path++;
        if (x->depth == XML_VERTEX) {
            xml_vertex (x, names, values, error);
            if (*error)
                return;
        }
    }
    if (++x->depth > QC_ANNOT_XML_DEPTH)
        g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                     "elements nested more than %d deep", QC_ANNOT_XML_DEPTH);
}

static void
xml_end (GMarkupParseContext *ctx, const char *name, gpointer data, GError **error)
{
    xml_t *x = data;
    x->depth--;
    if (x->path <= x->depth)
        return;
    /* an element on the path closes: at Vertices' depth, a region is read */
    if (x->depth == XML_VERTICES
        && (annot_build_ring_end (x->b) != 0 || annot_build_region_end (x->b) != 0))
        g_set_error (error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT, "%s",
                     x->b->why);
    x->path = x->depth;
}

int
annot_parse_xml (const char *data, size_t len, build_t *b, char *err, size_t errlen)
{
    if (len >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
        data += 3, len -= 3;          /* a byte order mark: expat takes it, GMarkup not */
    if (len > G_MAXSSIZE)
        return qc_fail (err, errlen, "annotation XML: %zu bytes is too long", len);
    GMarkupParser parser = { xml_start, xml_end, NULL, NULL, NULL };
    xml_t x = { .b = b };
    GMarkupParseContext *ctx =
        g_markup_parse_context_new (&parser, G_MARKUP_PREFIX_ERROR_POSITION, &x, NULL);
    if (!ctx)
        return qc_fail (err, errlen, "annotation XML: out of memory");
    GError *e = NULL;
    bool ok = g_markup_parse_context_parse (ctx, data, (gssize) len, &e)
              && g_markup_parse_context_end_parse (ctx, &e);
    g_markup_parse_context_free (ctx);
    if (ok && !x.root_seen)     /* GMarkup takes a declaration or a comment alone */
        return qc_fail (err, errlen, "annotation XML: no root element");
    if (ok)
        return 0;
    qc_set_err (err, errlen, "annotation XML: %s", e ? e->message : "refused");
    g_clear_error (&e);
    return -1;
}
