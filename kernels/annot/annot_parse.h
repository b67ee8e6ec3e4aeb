/* The annotation files of HistoQC's AnnotationModule.saveAnnotationMask
 * (histoqc/annotations/): the bytes of one file turned into polygons,
 * an outer ring and its holes, in integer level-0 pixels.
 *
 *  - Every coordinate is int (float (v)), as HistoQC's point_to_int:
 *    truncated toward zero (-3.7 -> -3). A coordinate that is not
 *    finite or is beyond +-1e12 is an error naming where it is.
 *  - A ring of fewer than 3 points is left out (HistoQC's
 *    _sanitized_points): a short outer ring drops its region, a short
 *    hole drops that hole; each short ring counts in `dropped`, as does
 *    a Polygon of no rings (HistoQC fails on one: coordinates[0]).
 *  - So is a ring of no area, in the integer coordinates: its points
 *    all on one line (a misclick, a ruler drawn as a polygon, a closed
 *    LineString), or its edges cancelling, each stretch traced out and
 *    back (a spike from a line's end; annot_line.h). HistoQC's shapely
 *    buffer(0) makes its polygon empty, and HistoQC then draws nothing
 *    of its region when it is the outer ring, and leaves the hole out
 *    when it is a hole.
 *
 * XML: Aperio ImageScope. The root element (any name; ImageScope's is
 * <Annotations>), its <Annotation> children, their <Regions>, their
 * <Region>, their <Vertices>, their <Vertex X=".." Y=".."/>: direct
 * children at each level, as ElementTree's findall, everything else
 * (<Attributes>, <RegionAttributeHeaders>, text) ignored. Each <Vertices>
 * is one region with no holes. X and Y are read as Python's float ()
 * reads a string. Parsed by glib's GMarkup, whose refusals are errors
 * with its message (line and character); it reads UTF-8 only (a byte
 * order mark skipped), so a file in another encoding, which
 * ElementTree would read, is refused. Like ElementTree, a document of
 * no element or of two root elements is refused.
 *
 * GeoJSON: a JSON array of Features (QuPath's "Export objects", what
 * HistoQC reads), a single Feature, or a FeatureCollection (HistoQC
 * fails on one; taken here as its "features"). A Feature's geometry:
 * "Polygon" (the first ring outer, the rest holes), "MultiPolygon" (each
 * polygon as one), "LineString" (its points one outer ring). A null
 * geometry or another type, which stops HistoQC ("Unsupported Geometry
 * Type"), is left out and counted in `skipped`. A position is [x, y,
 * ...], more numbers ignored. The JSON is read as Python's json module
 * reads it (RFC 8259, plus its NaN, Infinity and -Infinity literals, the
 * last of duplicate keys), nesting at most QC_ANNOT_JSON_DEPTH deep. */
#ifndef QC_ANNOT_PARSE_H
#define QC_ANNOT_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define QC_ANNOT_JSON_DEPTH 128
#define QC_ANNOT_XML_DEPTH 256
#define QC_ANNOT_MAX_COORD 1e12

typedef struct {
    int64_t x, y;
} qc_annot_point_t;

typedef struct {
    qc_annot_point_t *pts;
    size_t n;
} qc_annot_ring_t;

typedef struct {
    qc_annot_ring_t outer;             /* at least 3 points */
    qc_annot_ring_t *holes;            /* each at least 3 points */
    size_t nholes;
} qc_annot_region_t;

typedef struct {
    qc_annot_region_t *regions;        /* in the file's order */
    size_t n;
    size_t dropped;                    /* short rings, rings of no area (above) left out */
    size_t skipped;                    /* GeoJSON features of no usable geometry */
    char skipped_type[24];             /* the first one's type ("null"), cut to fit */
} qc_annot_t;

typedef enum { QC_ANNOT_XML, QC_ANNOT_GEOJSON } qc_annot_format_t;

/* HistoQC's `format` parameter: "xml", or "json" or "geojson", in any
 * case. 0, or -1 for anything else (NULL too). */
int qc_annot_format_parse (const char *s, qc_annot_format_t *out);

/* Reads len bytes of data (no terminating NUL needed) as fmt into *out,
 * which the caller frees with qc_annot_free. 0, or -1 with err (and *out
 * empty): bad arguments, a file the format refuses, a coordinate out of
 * range, more than max_points points (read, kept or not), no memory. */
int qc_annot_parse (const char *data, size_t len, qc_annot_format_t fmt,
                    size_t max_points, qc_annot_t *out, char *err, size_t errlen);

/* Frees what qc_annot_parse gave and empties *a; NULL is fine. */
void qc_annot_free (qc_annot_t *a);

#endif
