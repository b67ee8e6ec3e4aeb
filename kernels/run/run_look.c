/* What a slide's first image says of the slide as a whole, where the
 * steps would not: a slide this QC cannot judge runs every step and
 * passed with a row of "NO tissue" warnings, nothing saying why. Two
 * such slides, each a warning of its own (run_state.h):
 *
 * - no colour: a greyscale scan or export (one sample a pixel, or three
 *   equal ones). The steps that look for colour (tissue, pen, stain,
 *   coverslip) find nothing real in it. Grey when no more than 1 pixel
 *   in 10,000 has channels more than 2 levels apart (JPEG's rounding),
 *   and only with content (at least 1% darker than 200): blank glass is
 *   no grey slide, its own warnings say it has no tissue.
 * - dark glass: a fluorescence slide (DAPI nuclei on black). This QC,
 *   as HistoQC's, is for brightfield slides, whose glass is bright.
 *   Dark when at least half the pixels are near black (every channel
 *   under 50): a brightfield slide's glass alone is more than that
 *   bright, and its darkest tissue is not that dark.
 *
 * At most ~1 M pixels of the image are looked at, evenly spread. */
#include "kernels/run/run_state.h"

#include <math.h>
#include <stdlib.h>

const char *
qc_run_look_warning (const qc_rgb_t *img)
{
    if (!qc_rgb_valid (img) || (size_t) img->w * (size_t) img->h < 64)
        return NULL;
    size_t stride = (size_t) sqrt ((double) img->w * img->h / 1e6) + 1;
    size_t seen = 0, coloured = 0, dark = 0, black = 0;
    /* a row at a time from wherever the image is: a GPU lane's image
     * decoded on its device is not brought down whole for a sample */
    const size_t row_bytes = (size_t) img->w * 3;
    uint8_t *row = malloc (row_bytes);
    if (!row)
        return NULL;
    for (size_t y = 0; y < (size_t) img->h; y += stride) {
        if (qc_span_peek (QC_SPAN (img), y * row_bytes, row_bytes, row) != 0) {
            free (row);
            return NULL;
        }
        for (size_t x = 0; x < (size_t) img->w; x += stride) {
            int r = row[3 * x], g = row[3 * x + 1], b = row[3 * x + 2];
            coloured += abs (r - g) > 2 || abs (g - b) > 2 || abs (r - b) > 2;
            dark += r + g + b < 3 * 200;
            black += r < 50 && g < 50 && b < 50;
            seen++;
        }
    }
    free (row);
    if (black * 2 >= seen)
        return "the slide's glass is dark (a fluorescence slide?): this QC is for "
               "brightfield slides (H&E, IHC), whose glass is bright; its tissue, "
               "pen, stain and blur measures mean nothing on it";
    if (coloured * 10000 <= seen && dark * 100 >= seen)
        return "the slide has no colour (its pixels are grey): the steps that look "
               "for colour (tissue, pen, stain, coverslip) measure nothing real on "
               "it; scan it, or export it, in colour";
    return NULL;
}
