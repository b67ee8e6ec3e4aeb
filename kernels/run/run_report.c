/* Helpers every module uses to report: failures, warnings, columns. */
#include "kernels/run/run.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/slide/slide.h"
#include "kernels/slide/slide_why.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/result.h"

static const char *
step_name (const qc_run_t *run)
{
    return run && run->step ? run->step : "pipeline";
}

int
qc_run_fail (qc_run_t *run, const char *fmt, ...)
{
    if (!run || !run->out || !fmt)
        return -1;
    char msg[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof msg, fmt, ap);
    va_end (ap);
    qc_log (QC_LOG_ERROR, step_name (run), "%s", msg);
    /* memory ran out meanwhile (here or in another slot), or the step
       says that is what failed (its "(out of memory?)": allocations not
       noted one by one): this machine's trouble, which a rerun, maybe
       with fewer slots, gets past */
    bool oom = qc_oom_count () != run->oom_at_start || strstr (msg, "out of memory");
    /* or the file went away while it was read (its share unmounted, a
       USB disk pulled): whatever the reader said, not the slide's fault */
    char gone[512] = "";
    if (!oom)
        qc_slide_gone_note (qc_slide_path (run->slide), msg, gone, sizeof gone);
    qc_result_fail (run->out, "%s: %s: %s%s%s", run->filename ? run->filename : "?",
                    step_name (run), msg, oom ? " (" QC_RESULT_MEMORY_SHORT ", not the "
                    "slide's fault" QC_RESULT_RETRY_MARK : "", gone);
    return -1;
}

int
qc_run_warn (qc_run_t *run, const char *fmt, ...)
{
    if (!run || !run->out || !fmt)
        return -1;
    char msg[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof msg, fmt, ap);
    va_end (ap);
    for (char *c = msg; *c; c++)
        if (*c == '|' || *c == '\t' || *c == '\n' || *c == '\r')
            *c = ' ';
    qc_log (QC_LOG_WARNING, step_name (run), "%s", msg);
    /* A warning that does not fit is logged above and dropped: losing it
     * must not fail a slide. */
    qc_result_add_warning (run->out, "%s", msg);
    return 0;
}

int
qc_run_set (qc_run_t *run, const char *column, const char *fmt, ...)
{
    if (!run || !run->out || !column || !fmt)
        return -1;
    char *value = NULL;
    va_list ap;
    va_start (ap, fmt);
    int n = vasprintf (&value, fmt, ap);
    va_end (ap);
    if (n < 0)
        return qc_run_fail (run, "out of memory");
    int rc = qc_result_set (run->out, column, "%s", value);
    free (value);
    if (rc != 0)
        return qc_run_fail (run, "cannot record column %s (value of %d bytes)",
                            column, n);
    return 0;
}

int
qc_run_require_mag (qc_run_t *run)
{
    if (!run)
        return -1;
    if (run->base_mag > 0)
        return 0;
    return qc_run_fail (run, "needs the slide's base magnification, which its "
                        "metadata does not give (no openslide.objective-power "
                        "or aperio.AppMag); set base_mag in "
                        "[BaseImage.BaseImage] to process it");
}
