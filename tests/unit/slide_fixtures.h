/* Helpers the tests on generated slides share: run bin/qc-mkslide, read a
 * truth mask at the size of a result, and score a result with Dice.
 * Header-only (static functions): every tests/unit/test_*.c is its own
 * program. */
#ifndef QC_SLIDE_FIXTURES_H
#define QC_SLIDE_FIXTURES_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"
#include "kernels/png/png_io.h"

#define FX_MKSLIDE "bin/qc-mkslide"

/* Runs bin/qc-mkslide with argv (argv[0] included, NULL-terminated),
 * its output sent to /dev/null. 0 when it wrote the slide. */
static __attribute__ ((unused)) int
fx_mkslide (char *const argv[])
{
    pid_t pid = fork ();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open ("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2 (fd, 1), dup2 (fd, 2);
        execv (FX_MKSLIDE, argv);
        _exit (127);
    }
    int status;
    return waitpid (pid, &status, 0) == pid && WIFEXITED (status)
                   && WEXITSTATUS (status) == 0
               ? 0
               : -1;
}

/* A truth mask PNG resampled to w x h (area average, then over half), or
 * NULL with the reason on stderr. */
static __attribute__ ((unused)) qc_mask_t *
fx_truth_at (const char *path, int w, int h)
{
    char err[512] = "";
    qc_rgb_t *t = qc_png_read_rgb (path, err, sizeof err);
    qc_rgb_t *s = qc_rgb_new (w, h);
    qc_mask_t *m = qc_mask_new (w, h);
    if (!t || !s || !m || qc_ops_cpu ()->resize_rgb (t, QC_INTERP_AREA, s)) {
        fprintf (stderr, "truth %s: %s\n", path, err[0] ? err : "cannot resample");
        qc_mask_destroy (&m);
    }
    for (size_t i = 0; m && i < qc_npix (w, h); i++)
        m->px[i] = s->px[3 * i] > 127;
    qc_rgb_destroy (&t);
    qc_rgb_destroy (&s);
    return m;
}

/* Dice of found against truth over the pixels ignore leaves (NULL: all);
 * found's pixel i is px[i * step] and counts when above over. Both empty:
 * 1 (nothing to find, nothing found). */
static double
fx_dice_px (const uint8_t *found, size_t step, uint8_t over,
            const qc_mask_t *truth, const qc_mask_t *ignore)
{
    size_t a = 0, b = 0, ab = 0;
    for (size_t i = 0; i < qc_npix (truth->w, truth->h); i++) {
        if (ignore && ignore->px[i])
            continue;
        int x = found[i * step] > over, y = truth->px[i] != 0;
        a += (size_t) x, b += (size_t) y, ab += (size_t) (x && y);
    }
    return a + b ? 2.0 * (double) ab / (double) (a + b) : 1.0;
}

/* found: a mask (0/1). */
static __attribute__ ((unused)) double
fx_dice (const qc_mask_t *found, const qc_mask_t *truth, const qc_mask_t *ignore)
{
    return fx_dice_px (found->px, 1, 0, truth, ignore);
}

/* found: a result image as decoded from its PNG (set where red > 127). */
static __attribute__ ((unused)) double
fx_dice_rgb (const qc_rgb_t *found, const qc_mask_t *truth, const qc_mask_t *ignore)
{
    return fx_dice_px (found->px, 3, 127, truth, ignore);
}

#endif
