/* BasicModule.getBasicStats: the slide's metadata as HistoQC records it
 * (scanner vendor, pyramid levels, full-resolution size, microns per
 * pixel, the scanner's comment). */
#include "kernels/modules/module.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pixel sizes a scan can have, in µm: a 100x objective's camera
 * pixels are ~0.05 µm, a glass slide's overview photograph's ~50 µm. A
 * value outside is a damaged or hand-edited tag (a lab's review saw
 * 1e308 recorded without a word). */
#define MPP_PLAUSIBLE_MIN 0.01
#define MPP_PLAUSIBLE_MAX 100.0

/* HistoQC prints mpp as a Python float, "NA" when the slide has none. */
static int
set_mpp (qc_run_t *run, const char *column, const char *prop, int *missing,
         double *value)
{
    const char *s = qc_slide_property (run->slide, prop);
    char buf[QC_PYFLOAT_LEN];
    char *end = NULL;
    double v = 0;
    if (s && *s) {
        errno = 0;
        v = strtod (s, &end);
        if (errno || *end || !(v > 0) || !isfinite (v)) {
            qc_run_warn (run, "%s '%.40s' is not a positive number; recorded as NA", prop, s);
            v = 0;
        }
    }
    *value = v;
    if (v == 0 && !(s && *s))
        *missing = 1;             /* one there but no number was said above */
    return qc_run_set (run, column, "%s",
                       v > 0 ? qc_pyfloat (v, buf, sizeof buf) : "NA");
}

/* The scanner's free-text comment on one line: HistoQC turns CR and LF into
 * spaces; tabs and other control bytes would break results.tsv, so they
 * become spaces too. Cut to what a result value may hold. */
static int
set_comment (qc_run_t *run)
{
    const char *s = qc_slide_property (run->slide, "openslide.comment");
    if (!s)
        return qc_run_set (run, "comment", "NA");
    size_t n = strlen (s);
    int cut = 0;
    if (n > QC_RESULT_MAX_VALUE) {
        n = QC_RESULT_MAX_VALUE;
        while (n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80)
            n--;
        cut = 1;
    }
    char *line = malloc (n + 1);
    if (!line)
        return qc_run_fail (run, "out of memory");
    for (size_t i = 0; i < n; i++)
        line[i] = (unsigned char) s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
    line[n] = '\0';
    int rc = qc_run_set (run, "comment", "%s", line);
    free (line);
    if (rc == 0 && cut)
        qc_run_warn (run, "openslide.comment is longer than %d bytes; cut",
                     QC_RESULT_MAX_VALUE);
    return rc;
}

static int
run_basic_stats (qc_run_t *run)
{
    const char *vendor = qc_slide_property (run->slide, "openslide.vendor");
    int64_t w = 0, h = 0;
    qc_slide_level_size (run->slide, 0, &w, &h);
    int no_mpp = 0;
    double mx = 0, my = 0;
    if (qc_run_set (run, "type", "%s", vendor && *vendor ? vendor : "NA")
        || qc_run_set (run, "levels", "%d", qc_slide_level_count (run->slide))
        || qc_run_set (run, "height", "%lld", (long long) h)
        || qc_run_set (run, "width", "%lld", (long long) w)
        || set_mpp (run, "mpp_x", "openslide.mpp-x", &no_mpp, &mx)
        || set_mpp (run, "mpp_y", "openslide.mpp-y", &no_mpp, &my)
        || set_comment (run))
        return -1;
    /* Recorded, not refused: a step that needs physical sizes says so. */
    if (no_mpp)
        qc_run_warn (run, "Unknown microns per pixel (no openslide.mpp-x/mpp-y "
                     "in the slide's metadata)");
    /* recorded as the slide says (HistoQC does), but said; one that is
       no number (0 here) was said by set_mpp */
    else if (mx > 0 && my > 0
             && (mx < MPP_PLAUSIBLE_MIN || mx > MPP_PLAUSIBLE_MAX
                 || my < MPP_PLAUSIBLE_MIN || my > MPP_PLAUSIBLE_MAX))
        qc_run_warn (run, "microns per pixel %g x %g (openslide.mpp-x, mpp-y) is no scan's "
                     "pixel size (%g to %g µm): recorded as the slide says; its metadata is "
                     "likely damaged", mx, my, MPP_PLAUSIBLE_MIN, MPP_PLAUSIBLE_MAX);
    return 0;
}

/* HistoQC's own config gives this step an image_work_size it never uses;
 * accepting it keeps those configs working. */
static const char *const params[] = { "image_work_size", NULL };

static const char *const columns[] = {
    "type", "levels", "height", "width", "mpp_x", "mpp_y", "comment", NULL
};

static int
check_basic_stats (const qc_config_section_t *sec, char *err, size_t errlen)
{
    const char *ws;
    qc_work_size_t parsed;
    if (qc_config_get_string (sec, "image_work_size", NULL, &ws, err, errlen))
        return -1;
    if (ws && qc_work_size_parse (ws, &parsed) != 0) {
        snprintf (err, errlen, "[%s] image_work_size = '%.64s' (line %d): not a "
                  "magnification (1.25x), downscale factor, level or size",
                  qc_config_section_name (sec), ws,
                  qc_config_key_line (sec, "image_work_size"));
        return -1;
    }
    return 0;
}

const qc_module_t qc_module_basic_stats = {
    .name = "BasicModule.getBasicStats",
    .run = run_basic_stats,
    .check = check_basic_stats,
    .params = params,
    .columns = columns,
};
