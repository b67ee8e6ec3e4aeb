/* The annotation readers of AnnotationModule (kernels/annot/annot_parse.c):
 * ImageScope XML as ElementTree's findall walks it (only direct
 * children on the path, <Attributes> and text ignored, comments,
 * entities, CDATA), coordinates as int (float (v)), short rings left
 * out and counted, as are rings whose points lie on one line (the
 * region, or only the hole, left out; exact at 1e12) and rings whose
 * edges cancel (spikes traced back, an outline traced out and back, in
 * pieces of other lengths; a figure eight and an outline traced twice
 * kept; the bound on points checked); GeoJSON as an array of features, one feature or a
 * FeatureCollection, Polygons with holes, MultiPolygons, LineStrings,
 * unsupported geometries skipped and counted; and every refusal (broken
 * XML with GMarkup's words, a Vertex without Y, broken or truncated
 * JSON, a nesting bomb, coordinates out of range or not numbers with
 * the feature named, too many points, bad arguments) said without a
 * crash or a leak (run it under SAN=1 too). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/annot/annot_line.h"
#include "kernels/annot/annot_parse.h"
#include "tests/unit/check.h"

#pragma GCC diagnostic ignored "-Wformat-zero-length"

#define XML QC_ANNOT_XML
#define GEO QC_ANNOT_GEOJSON

static char err[512];
static qc_annot_t a;

static int
parse (const char *s, qc_annot_format_t fmt, size_t max_points)
{
    err[0] = '\0';
    qc_annot_free (&a);
    return qc_annot_parse (s, strlen (s), fmt, max_points, &a, err, sizeof err);
}

/* Whether r holds the n points xy (x0, y0, x1, y1, ...). */
static bool
ring_is (const qc_annot_ring_t *r, const int64_t *xy, size_t n)
{
    if (r->n != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (r->pts[i].x != xy[2 * i] || r->pts[i].y != xy[2 * i + 1])
            return false;
    return true;
}

/* A refusal whose text holds want, with nothing left in a. */
static void
refused (const char *s, qc_annot_format_t fmt, const char *want, int line)
{
    int rc = parse (s, fmt, 1000);
    CHECK (rc == -1 && strstr (err, want) && a.n == 0 && !a.regions,
           "line %d: rc %d, err \"%s\", want \"%s\"", line, rc, err, want);
}
#define REFUSED(s, fmt, want) refused (s, fmt, want, __LINE__)

/* ---- ImageScope XML --------------------------------------------------- */

static const char imagescope[] =
    "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!-- exported by ImageScope -->\n"
    "<Annotations MicronsPerPixel=\"0.252100\">\n"
    "<Annotation Id=\"1\" Name=\"tumor &amp; stroma\" ReadOnly=\"0\">\n"
    "  <Attributes><Attribute Name=\"Description\" Id=\"0\" Value=\"\"/></Attributes>\n"
    "  <Regions>\n"
    "    <RegionAttributeHeaders>\n"
    "      <AttributeHeader Id=\"9999\" Name=\"Region\" ColumnWidth=\"-1\"/>\n"
    "    </RegionAttributeHeaders>\n"
    "    <Region Id=\"1\" Type=\"0\" Text=\"a &lt;b&gt;\">\n"
    "      <Attributes/>\n"
    "      <Vertices>\n"
    "        <Vertex X=\"56657.4765625\" Y=\"78147.3984375\"/>\n"
    "        <Vertex X=\"56657.4765625\" Y=\"78147.3984375\" Z=\"0\"/>\n"
    "        <Vertex X=\"56664.46875\" Y=\"78147.3984375\"></Vertex>\n"
    "        <Vertex Y=\"&#51;.5\" X=\" 1_000.9 \"/>\n"
    "      </Vertices>\n"
    "    </Region>\n"
    "    <Region Id=\"2\">\n"
    "      <Vertices><Vertex X=\"1\" Y=\"2\"/><Vertex X=\"3\" Y=\"4\"/></Vertices>\n"
    "      <Vertices><Vertex X=\"10\" Y=\"10\"/><Vertex X=\"20\" Y=\"10\"/>"
    "<Vertex X=\"20\" Y=\"20\"/></Vertices>\n"
    "    </Region>\n"
    "  </Regions>\n"
    "</Annotation>\n"
    "<Annotation Id=\"2\" Name=\"second\">\n"
    "  <Regions><Region><Vertices>\n"
    "    <![CDATA[ <Vertex X=\"0\" Y=\"0\"/> ]]>\n"
    "    <Vertex X=\"-3.7\" Y=\"-0.5\"/><Vertex X=\"1e2\" Y=\"0\"/>"
    "<Vertex X=\"100\" Y=\"+100.99\"/>\n"
    "    <Vertex X=\"1\" Y=\"1\"><Vertex X=\"7\" Y=\"7\"/></Vertex>\n"
    "  </Vertices></Region></Regions>\n"
    "  <Region><Vertices><Vertex X=\"9\" Y=\"9\"/><Vertex X=\"9\" Y=\"9\"/>"
    "<Vertex X=\"9\" Y=\"9\"/></Vertices></Region>\n"
    "</Annotation>\n"
    "<Other><Annotation><Regions><Region><Vertices><Vertex X=\"5\" Y=\"5\"/>"
    "<Vertex X=\"5\" Y=\"5\"/><Vertex X=\"5\" Y=\"5\"/></Vertices></Region></Regions>"
    "</Annotation></Other>\n"
    "</Annotations>\n";

static void
test_xml (void)
{
    CHECK (parse (imagescope, XML, 1000) == 0, "%s", err);
    /* a Region's <Vertices> each a region; the 2-point one dropped; the
       Region not under <Regions>, the Annotation not under the root, the
       Vertex inside a Vertex and the CDATA's text are not on the path */
    CHECK (a.n == 3 && a.dropped == 1 && a.skipped == 0, "%zu regions, %zu dropped",
           a.n, a.dropped);
    if (a.n == 3) {
        const int64_t r0[] = { 56657, 78147, 56657, 78147, 56664, 78147, 1000, 3 };
        const int64_t r1[] = { 10, 10, 20, 10, 20, 20 };
        const int64_t r2[] = { -3, 0, 100, 0, 100, 100, 1, 1 };
        CHECK (ring_is (&a.regions[0].outer, r0, 4) && a.regions[0].nholes == 0
               && !a.regions[0].holes);
        CHECK (ring_is (&a.regions[1].outer, r1, 3));
        CHECK (ring_is (&a.regions[2].outer, r2, 4), "%zu points", a.regions[2].outer.n);
    }
    /* the same file ends where max_points says: 4 + 2 + 3 + 4 read */
    CHECK (parse (imagescope, XML, 13) == 0, "%s", err);
    CHECK (parse (imagescope, XML, 12) == -1 && strstr (err, "more than 12 points")
           && strstr (err, "line 29"), "%s", err);

    /* no annotation at all: nothing, no error */
    CHECK (parse ("<Annotations/>", XML, 10) == 0 && a.n == 0 && a.dropped == 0);
    CHECK (parse ("<Annotations><Annotation/></Annotations>", XML, 10) == 0
           && a.n == 0);

    const char *no_y = "<Annotations><Annotation><Regions><Region><Vertices>\n"
                       "<Vertex X=\"1\" Y=\"1\"/><Vertex X=\"2\"/>"
                       "</Vertices></Region></Regions></Annotation></Annotations>";
    REFUSED (no_y, XML, "a <Vertex> without Y");
    REFUSED (no_y, XML, "line 2");
    /* a Vertex off the path is not read: no error */
    CHECK (parse ("<A><Annotation><Vertex/></Annotation></A>", XML, 10) == 0);

    const char *v = "<Annotations><Annotation><Regions><Region><Vertices>"
                    "<Vertex X=\"%s\" Y=\"1\"/></Vertices></Region></Regions>"
                    "</Annotation></Annotations>";
    const char *not_numbers[] = { "abc", "", " ", "0x10", "1,5", "1__0", "_1", "1e",
                                  "--1" };
    for (size_t i = 0; i < sizeof not_numbers / sizeof *not_numbers; i++) {
        char doc[512];
        snprintf (doc, sizeof doc, v, not_numbers[i]);
        REFUSED (doc, XML, "is not a number");
    }
    const char *out_of_range[] = { "1e13", "-1000000000001", "nan", "inf", "-Infinity",
                                   "1e999" };
    for (size_t i = 0; i < sizeof out_of_range / sizeof *out_of_range; i++) {
        char doc[512];
        snprintf (doc, sizeof doc, v, out_of_range[i]);
        REFUSED (doc, XML, "not finite or beyond");
    }
    char doc[512];
    snprintf (doc, sizeof doc, v, "1000000000000");      /* 1e12 itself is taken */
    CHECK (parse (doc, XML, 10) == 0 && a.n == 0 && a.dropped == 1, "%s", err);
    REFUSED ("<a><Annotation><Regions><Region><Vertices><Vertex X=\"1\" X=\"2\" Y=\"3\"/>"
             "</Vertices></Region></Regions></Annotation></a>", XML,
             "two X attributes");

    /* what GMarkup refuses, in its words with the place */
    REFUSED ("<Annotations><Annotation></Annotations>", XML,
             "Error on line 1 char");
    REFUSED ("<Annotations><Annotation></Annotations>", XML, "was closed");
    REFUSED ("<Annotations>&nbsp;</Annotations>", XML, "nbsp");
    REFUSED ("<Annotations", XML, "annotation XML: Error on line 1");
    REFUSED ("", XML, "empty");
    REFUSED ("not xml", XML, "annotation XML: ");
    REFUSED ("<a>\xff</a>", XML, "UTF-8");
    REFUSED ("<Annotations/><Annotations/>", XML, "a second root element");
    /* GMarkup takes a document of no element; ElementTree does not */
    REFUSED ("<?xml version=\"1.0\"?>\n<!-- c -->\n", XML, "no root element");
    /* a region open when the document breaks is freed (ASan) */
    REFUSED ("<a><Annotation><Regions><Region><Vertices><Vertex X=\"1\" Y=\"2\"/>"
             "<Vertex X=\"1\" Y=\"2\"/><Vertex X=\"1\" Y=\"2\"/>"
             "<Vertex X=\"1\" Y=\"2\"/>",
             XML, "Error on line 1");
    /* every cut of the sample file is refused, nothing leaked */
    size_t n = strlen (imagescope), cut_ok = 0;
    for (size_t k = 0; k < n - 1; k++) {
        int rc = qc_annot_parse (imagescope, k, XML, 1000, &a, err, sizeof err);
        cut_ok += rc == 0;
        qc_annot_free (&a);
    }
    CHECK (cut_ok == 0, "%zu cuts taken", cut_ok);

    /* deep nesting refused at QC_ANNOT_XML_DEPTH, not by running out */
    size_t deep = 100000;
    char *bomb = malloc (deep * 3 + 1);
    CHECK (bomb != NULL);
    if (bomb) {
        for (size_t i = 0; i < deep; i++)
            memcpy (bomb + 3 * i, "<a>", 3);
        bomb[3 * deep] = '\0';
        REFUSED (bomb, XML, "nested more than 256 deep");
        free (bomb);
    }
}

/* ---- GeoJSON ---------------------------------------------------------- */

static const char features[] =
    "\xef\xbb\xbf[\n"
    " {\"type\": \"Feature\", \"id\": \"a\",\n"
    "  \"geometry\": {\"type\": \"Polygon\", \"coordinates\": [\n"
    "    [[0, 0], [100, 0], [100, 100], [0, 100], [0, 0]],\n"
    "    [[10, 10], [20, 10], [20, 20], [10, 10]],\n"
    "    [[1, 1], [2, 2]]]},\n"
    "  \"properties\": {\"name\": \"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\\\ \\/ "
    "\\b\\f\\n\\r\\t \\ud800 \\uDC00x \xc3\xa9\",\n"
    "    \"classification\": {\"name\": \"Tumor\", \"colorRGB\": -3670016},\n"
    "    \"isLocked\": false, \"m\": [1.5e3, -0, 0.25E-2, null, true, NaN, Infinity,\n"
    "    -Infinity, {}, [], \"\"]}},\n"
    " {\"type\": \"Feature\", \"geometry\": {\"coordinates\": [\n"
    "    [[[1.9, 2.9, 7], [-3.7, -4.2], [5, 6]]],\n"
    "    [[[7, 8], [9, 10]]],\n"
    "    []], \"type\": \"MultiPolygon\"}},\n"
    " {\"type\": \"Feature\", \"geometry\": {\"type\": \"LineString\",\n"
    "    \"coordinates\": [[1, 1], [2, 2], [3, 1e2]]}},\n"
    " {\"type\": \"Feature\", \"geometry\": {\"type\": \"Point\",\n"
    "    \"coordinates\": [5, 5]}},\n"
    " {\"type\": \"Feature\", \"geometry\": null, \"properties\": {}},\n"
    " {\"geometry\": {\"type\": \"Polygon\",\n"
    "    \"coordinates\": [[[0, 0], [1, 0], [1, 1]]]},\n"
    "  \"geometry\": {\"\\u0074ype\": \"Polygon\",\n"
    "    \"coordinates\": [[[5, 5], [6, 5], [6, 6]]]}}\n"
    "]\r\n";

static const char one_feature[] =
    "{\"type\": \"Feature\", \"geometry\": {\"type\": \"Polygon\",\n"
    " \"coordinates\": [[[0, 0], [1, 0], [1, 1]]]}, \"properties\": {}}";

static void
test_geojson (void)
{
    CHECK (parse (features, GEO, 1000) == 0, "%s", err);
    /* the hole of 2 points, the MultiPolygon's polygon of 2 points and
       its polygon of no rings dropped; the Point and the null skipped;
       of two "geometry" keys the last */
    CHECK (a.n == 4 && a.dropped == 3 && a.skipped == 2
           && strcmp (a.skipped_type, "Point") == 0, "%zu regions, %zu dropped, "
           "%zu skipped (%s)", a.n, a.dropped, a.skipped, a.skipped_type);
    if (a.n == 4) {
        const int64_t outer[] = { 0, 0, 100, 0, 100, 100, 0, 100, 0, 0 };
        const int64_t hole[] = { 10, 10, 20, 10, 20, 20, 10, 10 };
        const int64_t multi[] = { 1, 2, -3, -4, 5, 6 };
        const int64_t line[] = { 1, 1, 2, 2, 3, 100 };
        const int64_t last[] = { 5, 5, 6, 5, 6, 6 };
        CHECK (ring_is (&a.regions[0].outer, outer, 5) && a.regions[0].nholes == 1
               && ring_is (&a.regions[0].holes[0], hole, 4));
        CHECK (ring_is (&a.regions[1].outer, multi, 3) && a.regions[1].nholes == 0);
        CHECK (ring_is (&a.regions[2].outer, line, 3) && a.regions[2].nholes == 0);
        CHECK (ring_is (&a.regions[3].outer, last, 3));
    }
    /* every point read counts: 5 + 4 + 2 + 3 + 2 + 3 + 3 */
    CHECK (parse (features, GEO, 22) == 0, "%s", err);
    CHECK (parse (features, GEO, 21) == -1 && strstr (err, "more than 21 points")
           && strstr (err, "feature 5"), "%s", err);

    CHECK (parse (one_feature, GEO, 10) == 0 && a.n == 1
           && a.regions[0].outer.n == 3, "%s", err);
    char fc[1024];
    snprintf (fc, sizeof fc, "{\"features\": [%s, %s], \"type\": \"FeatureCollection\"}",
              one_feature, one_feature);
    CHECK (parse (fc, GEO, 10) == 0 && a.n == 2, "%s", err);
    CHECK (parse (" [ ] ", GEO, 10) == 0 && a.n == 0);
    CHECK (parse ("{\"type\": \"FeatureCollection\", \"features\": []}", GEO,
                  10) == 0 && a.n == 0);
    CHECK (parse ("[{\"geometry\": {\"type\": \"GeometryCollection\", "
                  "\"geometries\": []}}]", GEO, 10) == 0 && a.skipped == 1
           && strcmp (a.skipped_type, "GeometryCollection") == 0, "%s", a.skipped_type);
    CHECK (parse ("[{\"geometry\": null}, {\"geometry\": {\"type\": \"A\\nB\"}}]",
                  GEO, 10) == 0 && a.skipped == 2
           && strcmp (a.skipped_type, "null") == 0);
    CHECK (parse ("[{\"geometry\": {\"type\": \"A\\nB\"}}]", GEO, 10) == 0
           && strcmp (a.skipped_type, "A?B") == 0, "%s", a.skipped_type);
    /* 0.5 and -0.99 truncate to 0 */
    CHECK (parse ("[{\"geometry\": {\"type\": \"LineString\", \"coordinates\": "
                  "[[0.5, -0.99], [-1e0, 2.999999], [-123456789012.9, 1e-300]]}}]",
                  GEO, 10) == 0 && a.n == 1, "%s", err);
    if (a.n == 1) {
        const int64_t want[] = { 0, 0, -1, 2, -123456789012, 0 };
        CHECK (ring_is (&a.regions[0].outer, want, 3));
    }

    /* broken JSON, said with the place */
    REFUSED ("", GEO, "the text ends where a value should be");
    REFUSED ("[] x", GEO, "more text after the JSON value (line 1, column 4)");
    REFUSED ("[1,]", GEO, "expected a value");
    REFUSED ("[1 2]", GEO, "expected ',' or ']'");
    REFUSED ("{'a': 1}", GEO, "expected a key");
    REFUSED ("{\"a\" 1}", GEO, "expected ':'");
    REFUSED ("[01]", GEO, "expected ',' or ']'");
    const char *bad_numbers[] = { "[1.]", "[.5]", "[-]", "[1e]", "[1e+]", "[+1]",
                                  "[-NaN]", "[nan]", "[Inf]", "[0x1]" };
    for (size_t i = 0; i < sizeof bad_numbers / sizeof *bad_numbers; i++)
        REFUSED (bad_numbers[i], GEO, "annotation JSON: ");
    REFUSED ("[\"\\x\"]", GEO, "a bad escape");
    REFUSED ("[\"\\u12G4\"]", GEO, "a bad \\u escape");
    REFUSED ("[\"\\u12", GEO, "a bad \\u escape");
    REFUSED ("[\"a\tb\"]", GEO, "a control character");
    REFUSED ("[\"\xc0\x80\"]", GEO, "not UTF-8");       /* overlong */
    REFUSED ("[\"\xed\xa0\x80\"]", GEO, "not UTF-8");   /* a surrogate */
    REFUSED ("[\"\xe2\x82\"]", GEO, "not UTF-8");       /* cut short */
    REFUSED ("[\"abc", GEO, "a string that does not end");
    REFUSED ("[tru]", GEO, "expected a value");
    REFUSED ("[\n\n  x]", GEO, "(line 3, column 3)");
    CHECK (qc_annot_parse ("[]\0", 3, GEO, 10, &a, err, sizeof err) == -1
           && strstr (err, "more text"), "%s", err);

    /* every cut of the sample file is refused, nothing leaked */
    size_t n = strlen (features), cut_ok = 0;
    for (size_t k = 0; k + 2 < n; k++) {
        int rc = qc_annot_parse (features, k, GEO, 1000, &a, err, sizeof err);
        cut_ok += rc == 0;
        qc_annot_free (&a);
    }
    CHECK (cut_ok == 0, "%zu cuts taken", cut_ok);

    /* nesting bombs refused at QC_ANNOT_JSON_DEPTH, no stack overflow */
    size_t deep = 100000;
    char *bomb = malloc (deep * 5 + 1);
    CHECK (bomb != NULL);
    if (bomb) {
        memset (bomb, '[', deep);
        bomb[deep] = '\0';
        REFUSED (bomb, GEO, "nested more than 128 deep");
        for (size_t i = 0; i < deep; i++)
            memcpy (bomb + 5 * i, "{\"a\":", 5);
        bomb[5 * deep] = '\0';
        REFUSED (bomb, GEO, "nested more than 128 deep");
        free (bomb);
    }
    /* 128 deep is JSON read (then refused as GeoJSON), 129 is not */
    char deep_ok[300];
    memset (deep_ok, '[', 128);
    memset (deep_ok + 128, ']', 128);
    deep_ok[256] = '\0';
    REFUSED (deep_ok, GEO, "annotation GeoJSON: feature 0: not an object");
    memset (deep_ok, '[', 129);
    memset (deep_ok + 129, ']', 129);
    deep_ok[258] = '\0';
    REFUSED (deep_ok, GEO, "annotation JSON: arrays and objects nested more "
             "than 128 deep (line 1, column 129)");

    /* GeoJSON structure wrong: the feature named */
    REFUSED ("5", GEO, "neither an array of features nor an object");
    REFUSED ("\"x\"", GEO, "neither an array");
    REFUSED ("[1]", GEO, "feature 0: not an object");
    REFUSED ("[{}]", GEO, "feature 0: no \"geometry\"");
    REFUSED ("{\"type\": \"FeatureCollection\"}", GEO,
             "a FeatureCollection without a \"features\" array");
    REFUSED ("{\"type\": \"FeatureCollection\", \"features\": {}}", GEO,
             "without a \"features\" array");
    REFUSED ("[{\"geometry\": []}]", GEO, "a geometry that is not an object");
    REFUSED ("[{\"geometry\": {\"coordinates\": []}}]", GEO,
             "without a \"type\" string");
    REFUSED ("[{\"geometry\": {\"type\": 3}}]", GEO, "without a \"type\"");
    REFUSED ("[{\"geometry\": {\"type\": \"Polygon\"}}]", GEO,
             "feature 0: a Polygon without \"coordinates\"");
    char two[512];
    snprintf (two, sizeof two, "[%s,\n{\"geometry\": {\"type\": \"Polygon\", "
              "\"coordinates\": [[[0, 0], [1, \"2\"], [1, 1]]]}}]", one_feature);
    REFUSED (two, GEO, "feature 1: a coordinate that is not a number "
             "(line 3, column ");
    REFUSED ("[{\"geometry\": {\"type\": \"Polygon\", "
             "\"coordinates\": [[[0, 0], [1]]]}}]", GEO,
             "a position of fewer than 2 numbers");
    REFUSED ("[{\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [[[0, 0], 1]]}}]",
             GEO, "a position is not an array");
    REFUSED ("[{\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [[0, 0]]}}]",
             GEO, "a position is not an array");
    REFUSED ("[{\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [5]}}]",
             GEO, "a polygon's ring is not an array");
    REFUSED ("[{\"geometry\": {\"type\": \"Polygon\", \"coordinates\": {}}}]",
             GEO, "a polygon is not an array of rings");
    REFUSED ("[{\"geometry\": {\"type\": \"MultiPolygon\", \"coordinates\": 1}}]",
             GEO, "not an array of polygons");
    REFUSED ("[{\"geometry\": {\"type\": \"LineString\", \"coordinates\": null}}]",
             GEO, "a LineString's coordinates is not an array");
    const char *far[] = { "1e13", "-1.000001e12", "NaN", "Infinity", "-Infinity",
                          "1e400" };
    for (size_t i = 0; i < sizeof far / sizeof *far; i++) {
        char doc[256];
        snprintf (doc, sizeof doc, "[{\"geometry\": {\"type\": \"LineString\", "
                  "\"coordinates\": [[1, 1], [%s, 2]]}}]", far[i]);
        REFUSED (doc, GEO, "feature 0: a coordinate (");
    }
    /* a long number is read whole */
    char longnum[512];
    snprintf (longnum, sizeof longnum, "[{\"geometry\": {\"type\": \"LineString\", "
              "\"coordinates\": [[1.%0200d9, 2], [3, 4], [5, 7]]}}]", 0);
    CHECK (parse (longnum, GEO, 10) == 0 && a.n == 1
           && a.regions[0].outer.pts[0].x == 1, "%s", err);
}

/* ---- rings of no area ------------------------------------------------ */

static void
test_on_line (void)
{
    /* an outer ring on a line drops its region, holes and all; a hole on
       a line drops only that hole; a closed LineString back and forth
       and three of one point are left out; each counts once */
    static const char doc[] =
        "[{\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [\n"
        "   [[0, 0], [50, 50], [100, 100], [0, 0]], [[10, 10], [20, 10], [20, 20]]]}},\n"
        " {\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [\n"
        "   [[0, 0], [100, 0], [100, 100], [0, 100]],\n"
        "   [[10, 10], [20, 20], [30, 30], [10, 10]],\n"
        "   [[40, 40], [60, 40], [60, 60]]]}},\n"
        " {\"geometry\": {\"type\": \"LineString\", \"coordinates\":\n"
        "   [[5, 5], [9, 1], [5, 5]]}},\n"
        " {\"geometry\": {\"type\": \"LineString\", \"coordinates\":\n"
        "   [[7, 7], [7, 7], [7, 7], [7, 7]]}}]";
    CHECK (parse (doc, GEO, 1000) == 0 && a.n == 1 && a.dropped == 4, "%zu regions, "
           "%zu dropped: %s", a.n, a.dropped, err);
    if (a.n == 1)
        CHECK (a.regions[0].outer.n == 4 && a.regions[0].nholes == 1
               && a.regions[0].holes[0].pts[0].x == 40, "%zu holes", a.regions[0].nholes);
    /* exactly, at the coordinates' ends: one unit off the line of
       (-1e12, -1e12) and (1e12, 1e12) is a triangle (products of 4e24,
       beyond 64 bits) */
    static const char far[] =
        "<A><Annotation><Regions><Region><Vertices>"
        "<Vertex X=\"-1e12\" Y=\"-1e12\"/><Vertex X=\"999999999999\" "
        "Y=\"999999999999\"/><Vertex X=\"1e12\" Y=\"1e12\"/></Vertices>"
        "<Vertices><Vertex X=\"-1e12\" Y=\"-1e12\"/><Vertex X=\"999999999999\" "
        "Y=\"1e12\"/><Vertex X=\"1e12\" Y=\"1e12\"/></Vertices>"
        "</Region></Regions></Annotation></A>";
    CHECK (parse (far, XML, 1000) == 0 && a.n == 1 && a.dropped == 1
           && a.regions[0].outer.pts[1].y == 1000000000000, "%zu regions: %s", a.n, err);
}

static void
test_edges_cancel (void)
{
    /* kept: a figure eight (signed area 0, two lobes), an outline traced
       twice the same way, a spike out of a triangle that has area */
    static const char kept[] =
        "[{\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [\n"
        "   [[0, 0], [10, 10], [10, 0], [0, 10]]]}},\n"
        " {\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [\n"
        "   [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0], [10, 0], [10, 10], [0, 10]]]}},\n"
        " {\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [\n"
        "   [[0, 0], [10, 0], [10, 10], [10, 5]]]}}]";
    CHECK (parse (kept, GEO, 1000) == 0 && a.n == 3 && a.dropped == 0, "%zu regions, "
           "%zu dropped: %s", a.n, a.dropped, err);
    /* left out: a spike from a line's end traced back (the region); the
       same in pieces of other lengths; an outline out and back; a spike
       on a slant whose edges reduce to one direction (3, 6) and (-1, -2),
       as a hole (only the hole) */
    static const char gone[] =
        "[{\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [\n"
        "   [[0, 0], [10, 0], [10, 10], [10, 0]]]}},\n"
        " {\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [\n"
        "   [[0, 0], [10, 0], [10, 10], [10, 4], [10, 0], [4, 0]]]}},\n"
        " {\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [\n"
        "   [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0], [0, 10], [10, 10], [10, 0]]]}},\n"
        " {\"geometry\": {\"type\": \"Polygon\", \"coordinates\": [\n"
        "   [[0, 0], [100, 0], [100, 100], [0, 100]],\n"
        "   [[20, 20], [23, 26], [26, 20], [24, 24], [23, 26], [21, 22]]]}}]";
    CHECK (parse (gone, GEO, 1000) == 0 && a.n == 1 && a.dropped == 4, "%zu regions, "
           "%zu dropped: %s", a.n, a.dropped, err);
    if (a.n == 1)
        CHECK (a.regions[0].outer.n == 4 && a.regions[0].nholes == 0, "%zu holes",
               a.regions[0].nholes);
    /* exactly at the coordinates' ends: a spike up to (1e12, 1e12) and
       back, and one whose way back ends one unit off (which has area) */
    static const char far[] =
        "<A><Annotation><Regions><Region><Vertices>"
        "<Vertex X=\"-1e12\" Y=\"-1e12\"/><Vertex X=\"1e12\" Y=\"-1e12\"/>"
        "<Vertex X=\"1e12\" Y=\"1e12\"/><Vertex X=\"1e12\" Y=\"-1e12\"/>"
        "</Vertices><Vertices>"
        "<Vertex X=\"-1e12\" Y=\"-1e12\"/><Vertex X=\"1e12\" Y=\"-1e12\"/>"
        "<Vertex X=\"1e12\" Y=\"1e12\"/><Vertex X=\"1e12\" Y=\"0\"/>"
        "<Vertex X=\"999999999999\" Y=\"-1e12\"/>"
        "</Vertices></Region></Regions></Annotation></A>";
    CHECK (parse (far, XML, 1000) == 0 && a.n == 1 && a.dropped == 1
           && a.regions[0].outer.n == 5, "%zu regions: %s", a.n, err);
    /* a ring built elsewhere: beyond the parser's range, or of more
       points than the bound, is taken to have area */
    qc_annot_point_t big[] = { { 0, 0 }, { INT64_MAX, 0 }, { INT64_MAX, 5 }, { INT64_MAX, 0 } };
    CHECK (!qc_annot_ring_no_area (&(qc_annot_ring_t) { big, 4 }));
    big[1].x = big[2].x = big[3].x = 7;
    CHECK (qc_annot_ring_no_area (&(qc_annot_ring_t) { big, 4 }));
    /* up from (0, 0) to (0, 1), then right to (1, 1) and back, again
       and again, ending at (0, 1): it cancels; short, it is found to */
    qc_annot_point_t ell[] = { { 0, 0 }, { 0, 1 }, { 1, 1 }, { 0, 1 } };
    CHECK (qc_annot_ring_no_area (&(qc_annot_ring_t) { ell, 4 }));
    size_t n = QC_ANNOT_CANCEL_POINTS + 2 + QC_ANNOT_CANCEL_POINTS % 2;    /* even */
    qc_annot_point_t *zig = calloc (n, sizeof *zig);
    CHECK (zig != NULL);
    if (zig) {
        for (size_t i = 1; i < n; i++)
            zig[i] = (qc_annot_point_t) { i % 2 ? 0 : 1, 1 };
        CHECK (zig[n - 1].x == 0);
        CHECK (!qc_annot_ring_no_area (&(qc_annot_ring_t) { zig, n }));
        free (zig);
    }
}

/* ---- the interface ---------------------------------------------------- */

static void
test_args (void)
{
    qc_annot_format_t f = GEO;
    CHECK (qc_annot_format_parse ("xml", &f) == 0 && f == XML);
    CHECK (qc_annot_format_parse ("JSON", &f) == 0 && f == GEO);
    CHECK (qc_annot_format_parse ("xMl", &f) == 0 && f == XML);
    CHECK (qc_annot_format_parse ("GeoJson", &f) == 0 && f == GEO);
    CHECK (qc_annot_format_parse ("yaml", &f) == -1
           && qc_annot_format_parse ("", &f) == -1
           && qc_annot_format_parse (" xml", &f) == -1
           && qc_annot_format_parse (NULL, &f) == -1
           && qc_annot_format_parse ("xml", NULL) == -1);

    qc_annot_free (&a);       /* qc_annot_parse fills *out afresh: free it first */
    CHECK (qc_annot_parse (NULL, 5, XML, 10, &a, err, sizeof err) == -1
           && strstr (err, "bad arguments"), "%s", err);
    CHECK (qc_annot_parse ("[]", 2, GEO, 10, NULL, err, sizeof err) == -1);
    CHECK (qc_annot_parse ("[]", 2, (qc_annot_format_t) 7, 10, &a, err, sizeof err)
           == -1);
    CHECK (qc_annot_parse (NULL, 0, GEO, 10, &a, err, sizeof err) == -1
           && strstr (err, "ends where a value"), "%s", err);
    CHECK (qc_annot_parse (NULL, 0, XML, 10, &a, err, sizeof err) == -1);
    CHECK (qc_annot_parse ("[x", 2, GEO, 10, &a, NULL, 0) == -1);
    CHECK (qc_annot_parse (one_feature, strlen (one_feature), GEO, 10, &a,
                           NULL, 0) == 0 && a.n == 1);
    qc_annot_free (&a);
    char tiny[8];
    CHECK (qc_annot_parse ("[x", 2, GEO, 10, &a, tiny, sizeof tiny) == -1
           && strlen (tiny) < sizeof tiny);
    /* max_points 0: no point at all */
    CHECK (qc_annot_parse (one_feature, strlen (one_feature), GEO, 0, &a, err,
                           sizeof err) == -1 && strstr (err, "more than 0 points"),
           "%s", err);
    qc_annot_free (NULL);
    qc_annot_free (&a);
    qc_annot_free (&a);
    CHECK (a.n == 0 && !a.regions);
}

int
main (void)
{
    test_xml ();
    test_geojson ();
    test_on_line ();
    test_edges_cancel ();
    test_args ();
    qc_annot_free (&a);
    return check_done ("annot_parse");
}
