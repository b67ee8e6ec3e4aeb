/* Raster plotting for HistogramModule.getHistogram's _hist.png: the
 * figure HistoQC draws with matplotlib (640 x 480, title "Color
 * Distribution for <file>", axes "Pixel Val" / "Density", a grid, and
 * the red, green and blue density histograms as step lines), drawn here
 * with a small bitmap font and straight lines. */
#ifndef QC_HIST_PLOT_H
#define QC_HIST_PLOT_H

#include <stdint.h>

#include "kernels/image/image.h"

#define QC_PLOT_W 640
#define QC_PLOT_H 480
#define QC_PLOT_CELL_W 5     /* glyph cell, scale 1 */
#define QC_PLOT_CELL_H 9     /* 7 above the baseline, 2 below */
#define QC_PLOT_ADVANCE 6    /* pen advance per character, scale 1 */

/* Width in pixels of s drawn at scale. */
int qc_plot_text_width (const char *s, int scale);
/* Draws s with its first cell's top-left at (x, y); pixels outside img
 * are skipped. */
void qc_plot_text (qc_rgb_t *img, int x, int y, const char *s, int scale,
                   const uint8_t rgb[3]);
/* Draws s reading upwards (a y-axis label) starting at (x, y), the
 * bottom-left of the text. */
void qc_plot_text_up (qc_rgb_t *img, int x, int y, const char *s, int scale,
                      const uint8_t rgb[3]);

/* The histogram figure: density is bins x 3 (HistoQC's computeHistogram
 * layout, row-major), the channels drawn in red, green, blue over the
 * range 0..255; title is drawn as given (cut to fit). A density with no
 * finite value (no pixel selected) gives the empty axes and a note.
 * NULL on a bad argument or when memory runs out. */
qc_rgb_t *qc_hist_plot (const double *density, int bins, const char *title);

#endif
