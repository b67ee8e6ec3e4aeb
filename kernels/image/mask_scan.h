/* Scanning a mask row for the end of a run, eight bytes at a time
 * across long runs (a tissue mask at 1.25x has a few runs per row of
 * thousands of pixels): shared by the run-length PNG writer
 * (png_runs.c) and the run-based components (cpu/component_runs.c). */
#ifndef QC_MASK_SCAN_H
#define QC_MASK_SCAN_H

#include <stdint.h>
#include <string.h>

/* The first x' >= x (at most w) whose pixel p[x'] is not set when set,
 * or set when not (a pixel is set when nonzero). */
static inline int
qc_mask_run_end (const uint8_t *p, int x, int w, int set)
{
    while (x + 8 <= w) {
        uint64_t word;
        memcpy (&word, p + x, sizeof word);
        if (set) {
            /* any zero byte ends a run of set pixels */
            uint64_t t = (word - 0x0101010101010101ull) & ~word
                         & 0x8080808080808080ull;
            if (t)
                break;
        } else if (word != 0) {
            break;
        }
        x += 8;
    }
    while (x < w && (p[x] != 0) == set)
        x++;
    return x;
}

#endif
