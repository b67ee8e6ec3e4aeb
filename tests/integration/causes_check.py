"""Checks a slide folder's _causes.png (SaveModule.saveFinalMask's review
image) against the files beside it, reading every PNG with png_read.py,
not the project's code:
  - above the legend, the image is the mask's size; tissue kept
    (_mask_use.png) is _thumb.png's pixel, untouched (where _thumb.png is
    the mask's size);
  - a pixel taken out is the colour of the cause of the first of the
    given step masks (pipeline order) that holds it, shaded by the
    thumbnail's gray (colour * (0.45 + 0.55 * gray)); in none of them,
    or in _bright.png first (glass): gray * 0.45;
  - the legend's swatches, row by row below the image, are exactly the
    causes present, in the order of their first step; nothing after.
Usage: causes_check.py FOLDER SLIDE MASK... (MASK: a step's file suffix,
e.g. pen_markings). Prints a line of figures; exit 1 with the reason."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_read import png_read  # noqa: E402

# The cause of each step mask: (label, colour); None = background. Kept
# apart from the project's table on purpose: a change there shows here.
CAUSES = {
    "bright": None,
    "nonwhite": None,
    "bubble": ("bubble", (0, 158, 115)),
    "pen_markings": ("pen ink", (0, 114, 178)),
    "coverslip_edge": ("coverslip edge", (86, 180, 233)),
    "dark": ("dark tissue", (0, 200, 190)),
    "folds": ("fold", (213, 94, 0)),
    "blurry": ("blur", (240, 228, 66)),
    "flat": ("bubble", (0, 158, 115)),
    "fatlike": ("fat-like", (230, 159, 0)),
    "small_remove": ("small piece", (170, 220, 50)),
    "areathresh": ("small piece", (170, 220, 50)),
    "spur": ("thin spur", (170, 120, 70)),
}
STRIP = (248, 248, 246)


def u8(v):
    return 0 if v <= 0 else 255 if v >= 255 else int(v + 0.5)


def main():
    folder, slide, masks = sys.argv[1], sys.argv[2], sys.argv[3:]
    path = lambda s: os.path.join(folder, slide + "_" + s + ".png")  # noqa: E731
    W, H, img = png_read(path("causes"), 3)
    w, h, use = png_read(path("mask_use"), 1)
    tw, th, thumb = png_read(path("thumb"), 3)
    if W < w or H <= h:
        sys.exit("_causes.png is %d x %d, the mask %d x %d" % (W, H, w, h))
    steps = []
    for m in masks:
        if not os.path.exists(path(m)):
            continue
        mw, mh, rows = png_read(path(m), 1)
        if (mw, mh) != (w, h):
            sys.exit("_%s.png is %d x %d, the mask %d x %d" % (m, mw, mh, w, h))
        steps.append((m, rows))
    same_thumb = (tw, th) == (w, h)
    kept = bad_kept = bad = taken = 0
    present = []       # the colours of the pixels taken for a cause
    for y in range(h):
        for x in range(w):
            got = tuple(img[y][3 * x:3 * x + 3])
            if use[y][x]:
                kept += 1
                if same_thumb and got != tuple(thumb[y][3 * x:3 * x + 3]):
                    bad_kept += 1
                continue
            first = next((m for m, rows in steps if rows[y][x]), None)
            cause = CAUSES.get(first) if first else None
            if same_thumb:
                p = thumb[y][3 * x:3 * x + 3]
                g = (0.2125 * p[0] + 0.7154 * p[1] + 0.0721 * p[2]) / 255.0
                if cause:
                    want = tuple(u8(c * (0.45 + 0.55 * g)) for c in cause[1])
                else:
                    want = (u8(255 * g * 0.45),) * 3
                bad += max(abs(a - b) for a, b in zip(got, want)) > 1
            if cause:
                taken += 1
                present.append(cause[1])
    order = [CAUSES[m][1] for m, _ in steps if CAUSES.get(m)]
    present = sorted(set(present), key=order.index)
    n = w * h
    if bad_kept:
        sys.exit("%d of %d kept pixels differ from _thumb.png" % (bad_kept, kept))
    # a pixel a later step put back and another took again is the first
    # step's in the image, and may lie in neither step's PNG: a few
    if bad > n // 200:
        sys.exit("%d of %d pixels taken out are not their first step's colour" % (bad, n - kept))
    # the legend: swatch k at x pad, y h + pad + k * row (row 0: text)
    s = 2 if w >= 600 else 1
    pad, row = 6 * s, 13 * s
    swatches = []
    for k in range(1, 64):
        top = h + pad + k * row
        if top + 9 * s > H:
            break
        c = tuple(img[top + 4 * s][3 * (pad + 8 * s):3 * (pad + 8 * s) + 3])
        if c == STRIP:
            break
        swatches.append(c)
    if swatches != present:
        sys.exit("legend swatches %s, causes present %s" % (swatches, present))
    print("%s: %d x %d, %d kept = thumbnail, %d taken for %d causes (%d off colour), "
          "legend rows match" % (slide, w, h, kept, taken, len(present), bad))


main()
