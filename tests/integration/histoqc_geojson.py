#!/usr/bin/python3
"""Checks a GeoJSON file SaveModule.saveMask2Geojson wrote, the way QuPath
would read it: with GEOS (shapely; GEOS is the C++ port of JTS, which
QuPath uses), not with the project's own code.

  histoqc_geojson.py FILE.geojson SLIDE_BBOX [MASK.png]

SLIDE_BBOX is results.tsv's image_bounding_box, "(x, y, w, h)" in level-0
pixels. Checks: a FeatureCollection of Features with distinct ids, each a
Polygon that GEOS calls valid, properties {"objectType": "annotation"}.
With MASK.png (the same mask as the 0/255 PNG the pipeline wrote), also:
  - drawn back at the mask's size (even-odd, each pixel's centre scaled
    to level 0), the polygons give the mask, pixel for pixel;
  - their total area (holes taken out, as GEOS measures it) is the mask's
    pixel count times the level-0 area of one mask pixel, within half a
    level-0 pixel per unit of outline length (vertices are rounded to
    whole level-0 pixels).
Prints one line of figures; exit 0 when every check holds, 1 otherwise.
Needs Debian's python3-shapely (tests/install-deps.sh).
"""
import json
import os
import sys

from shapely.geometry import shape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_read import png_read  # noqa: E402


def rings_of(features):
    for f in features:
        for ring in f["geometry"]["coordinates"]:
            yield ring


def drawn_back(features, w, h, x0, y0, sx, sy):
    """Rows of 0/1: pixel centres inside the rings (even-odd)."""
    edges = []
    for ring in rings_of(features):
        for (ax, ay), (bx, by) in zip(ring, ring[1:]):
            if ay != by:
                edges.append((ax, ay, bx, by))
    rows = []
    for y in range(h):
        yc = y0 + (y + 0.5) * sy
        xs = sorted(ax + (yc - ay) * (bx - ax) / (by - ay)
                    for ax, ay, bx, by in edges
                    if (ay <= yc < by) or (by <= yc < ay))
        row, k = bytearray(w), 0
        for x in range(w):
            xc = x0 + (x + 0.5) * sx
            while k < len(xs) and xs[k] < xc:
                k += 1
            row[x] = k % 2
        rows.append(row)
    return rows


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    problems = []
    with open(argv[1]) as f:
        doc = json.load(f)
    x0, y0, bw, bh = (float(v) for v in argv[2].strip("()").split(","))
    if doc.get("type") != "FeatureCollection":
        problems.append("not a FeatureCollection")
    features = doc.get("features", [])
    ids, area, length = set(), 0.0, 0.0
    for i, f in enumerate(features):
        geom = shape(f["geometry"])
        if f.get("type") != "Feature" or f["geometry"]["type"] != "Polygon":
            problems.append("feature %d is not a Polygon Feature" % i)
        if not geom.is_valid:
            from shapely.validation import explain_validity
            problems.append("feature %d invalid: %s" % (i, explain_validity(geom)))
        if f.get("properties") != {"objectType": "annotation"}:
            problems.append("feature %d properties %r" % (i, f.get("properties")))
        ids.add(f.get("id"))
        area += geom.area
        length += geom.length
    if len(ids) != len(features):
        problems.append("ids not distinct")
    line = "%d polygons, area %.0f" % (len(features), area)
    if len(argv) == 4:
        w, h, rows = png_read(argv[3], channels=1)
        sx, sy = bw / w, bh / h
        mask = [bytearray(1 if v else 0 for v in row) for row in rows]
        count = sum(sum(row) for row in mask)
        want = count * sx * sy
        tolerance = 0.5 * length + 1.0
        line += ", mask %d x %d with %d pixels = %.0f, tolerance %.0f" % (
            w, h, count, want, tolerance)
        if abs(area - want) > tolerance:
            problems.append("area %.1f, mask %.1f (tolerance %.1f)"
                            % (area, want, tolerance))
        back = drawn_back(features, w, h, x0, y0, sx, sy)
        differ = sum(1 for y in range(h) for x in range(w)
                     if back[y][x] != mask[y][x])
        line += ", %d pixels differ drawn back" % differ
        if differ:
            problems.append("%d pixels differ from the mask drawn back" % differ)
    print(line)
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
