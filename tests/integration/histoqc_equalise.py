#!/usr/bin/python3
"""Checks LightDarkModule.saveEqualisedImage against HistoQC's own code
path written out with numpy, the arithmetic of scikit-image 0.19 (the
version HistoQC's reference outputs were made with):

  img_as_float (uint8)  = np.multiply (img, 1. / 255, dtype=float64)
  rgb2gray              = that @ [0.2125, 0.7154, 0.0721]
  (img * 255).astype (np.uint8)
  equalize_hist (int)   = np.interp (img, arange (min, max + 1),
                          cumsum (bincount) / total)
  img_as_ubyte (float)  = clip (rint (x * 255), 0, 255)

  histoqc_equalise.py THUMB.png EQUALIZED.png

THUMB.png is the image the step equalised (_thumb.png, at the same
image_work_size). Exit 0 when every pixel matches, 1 otherwise.
Needs Debian's python3-numpy (tests/install-deps.sh).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_read import png_read  # noqa: E402


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    w, h, rows = png_read(argv[1], channels=3)
    img = np.frombuffer(b"".join(rows), np.uint8).reshape(h, w, 3)
    gray = np.multiply(img, 1. / 255, dtype=np.float64) @ np.array([0.2125, 0.7154, 0.0721])
    u8 = (gray * 255).astype(np.uint8)
    lo, hi = int(u8.min()), int(u8.max())
    hist = np.bincount(u8.ravel(), minlength=hi + 1)[lo:hi + 1]
    cdf = hist.cumsum() / float(hist.sum())
    out = np.interp(u8.ravel(), np.arange(lo, hi + 1), cdf).reshape(u8.shape)
    want = np.clip(np.rint(out * 255), 0, 255).astype(np.uint8)
    ew, eh, erows = png_read(argv[2], channels=1)
    if (ew, eh) != (w, h):
        print("equalised image is %d x %d, the thumbnail %d x %d" % (ew, eh, w, h))
        return 1
    got = np.frombuffer(b"".join(erows), np.uint8).reshape(h, w)
    differ = int((got != want).sum())
    print("%d x %d, %d gray levels, %d pixels differ from skimage's" % (
        w, h, hi - lo + 1, differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
