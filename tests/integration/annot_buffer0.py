#!/usr/bin/env python3
"""Annotations that cross themselves, drawn as HistoQC draws them.

HistoQC's AnnotationModule.saveAnnotationMask mends an invalid polygon
with shapely's buffer(0) and draws what that gives. This writes random
polygons (most of them crossing themselves, some with a hole) as QuPath
GeoJSON files, one beside each slide, and then checks the masks the
pipeline drew (_annot_json.png) against shapely itself, pixel by pixel:

  annot_buffer0.py make DIR N SEED     DIR/r<i>.json for i < N
  annot_buffer0.py check DIR N OUT W0  OUT/r<i>.svs/r<i>.svs_annot_json.png,
                                       the slide W0 pixels wide at level 0

A pixel (px, py) of the mask is the point (px, py) / scale at level 0
(kernels/annot/annot_raster.h); one less than a mask pixel from an edge
of the polygon is left out (the outline's, and PIL's border pixels).
Every other pixel must be set exactly when the mended polygon holds its
point. Said too: how many of the pixels checked the even-odd rule would
have drawn otherwise (the check must be able to tell the two apart).
"""
import json
import os
import random
import sys

from shapely.geometry import Point, Polygon

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_read import png_read  # noqa: E402


def polygon_of(rng, i):
    """A ring of 5 to 9 points over the slide, every third with a hole
    (a small ring, crossing itself or not) somewhere over it."""
    n = rng.randint(5, 9)
    outer = [[rng.randint(100, 2100), rng.randint(100, 2800)] for _ in range(n)]
    rings = [outer + [outer[0]]]
    if i % 3 == 2:
        cx, cy = rng.randint(400, 1800), rng.randint(400, 2500)
        hole = [[cx + rng.randint(-300, 300), cy + rng.randint(-300, 300)]
                for _ in range(rng.randint(3, 5))]
        rings.append(hole + [hole[0]])
    return rings


def make(folder, n, seed):
    rng = random.Random(seed)
    for i in range(n):
        feature = {"type": "Feature", "properties": {"objectType": "annotation"},
                   "geometry": {"type": "Polygon", "coordinates": polygon_of(rng, i)}}
        with open(os.path.join(folder, "r%d.json" % i), "w") as f:
            json.dump([feature], f)


def odd(ring, x, y):
    inside = False
    for (ax, ay), (bx, by) in zip(ring, ring[1:]):
        if (ay <= y) != (by <= y) and ax + (y - ay) * (bx - ax) / (by - ay) <= x:
            inside = not inside
    return inside


def even_odd(rings, x, y):
    """The earlier drawing: the outer ring even-odd, less each hole's."""
    return odd(rings[0], x, y) and not any(odd(r, x, y) for r in rings[1:])


def check(folder, n, out, width0):
    wrong = checked = inside = differ = 0
    for i in range(n):
        with open(os.path.join(folder, "r%d.json" % i)) as f:
            rings = json.load(f)[0]["geometry"]["coordinates"]
        mended = Polygon(rings[0], rings[1:]).buffer(0)
        edges = Polygon(rings[0], rings[1:]).boundary
        name = "r%d.svs" % i
        w, h, rows = png_read(os.path.join(out, name, name + "_annot_json.png"), channels=1)
        scale = w / width0
        for py in range(h):
            for px in range(w):
                p = Point(px / scale, py / scale)
                if edges.distance(p) * scale < 1.0:
                    continue
                want = mended.contains(p)
                got = rows[py][px] > 127
                checked += 1
                inside += want
                differ += want != even_odd(rings, p.x, p.y)
                if got != want:
                    wrong += 1
                    if wrong <= 5:
                        print("%s: pixel (%d, %d) %s, shapely's buffer(0) %s" % (
                            name, px, py, "set" if got else "clear",
                            "holds it" if want else "does not"))
    print("%d pixels of %d masks checked (%d inside), %d wrong; even-odd would "
          "differ on %d" % (checked, n, inside, wrong, differ))
    return 1 if wrong or checked < 1000 or inside < 100 or differ < 50 else 0


def main(argv):
    if len(argv) == 5 and argv[1] == "make":
        make(argv[2], int(argv[3]), int(argv[4]))
        return 0
    if len(argv) == 6 and argv[1] == "check":
        return check(argv[2], int(argv[3]), argv[4], float(argv[5]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
