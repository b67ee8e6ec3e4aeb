#include "client/progress.h"

#include "client/escape.h"
#include "shared/result.h"

#include <czmq.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void
qc_progress_init (qc_progress_t *p, uint64_t total, bool quiet)
{
    p->tty = isatty (STDERR_FILENO) && !quiet;
    p->quiet = quiet;
    p->total = total;
    p->done = p->failed = p->cancelled = 0;
    p->start_ms = zclock_mono ();
    p->last_draw_ms = 0;
}

static void
draw (qc_progress_t *p, bool force)
{
    int64_t now = zclock_mono ();
    if (!p->tty || (!force && now - p->last_draw_ms < 100))
        return;
    p->last_draw_ms = now;
    uint64_t n = p->done + p->failed;
    double secs = (double) (now - p->start_ms) / 1000.0;
    double rate = secs > 0 ? (double) n / secs : 0;
    int width = 30;
    int fill = p->total ? (int) ((double) width * (double) n / (double) p->total) : 0;
    char bar[64];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    double eta = rate > 0 && p->total > n ? (double) (p->total - n) / rate : 0;
    fprintf (stderr, "\r[%s] %" PRIu64 " of %" PRIu64 ": %" PRIu64 " passed, %" PRIu64
             " failed, %.1f slides/s, ETA %d:%02d ", bar, n, p->total, p->done, p->failed,
             rate, (int) eta / 60, (int) eta % 60);
    fflush (stderr);
}

void
qc_progress_slide (qc_progress_t *p, bool ok, const char *name,
                   const char *worker, const char *reason)
{
    if (ok) p->done++; else p->failed++;
    if (ok && reason)
        p->noted++;
    if (!ok && qc_result_cancelled (reason))
        p->cancelled++;
    if (p->quiet)
        return;
    /* names and reasons may hold any byte: escaped for the terminal */
    char *n = qc_escape_dup (name), *w = worker ? qc_escape_dup (worker) : NULL;
    char *r = reason ? qc_escape_dup (reason) : NULL;
    if (p->tty) {
        if (!ok || r) {
            fprintf (stderr, "\r\033[K%s %s: %s\n", ok ? "ok" : "FAILED", n ? n : "?",
                     r ? r : "?");
            draw (p, true);
        } else
            draw (p, false);
    } else
        fprintf (stderr, "%s %" PRIu64 "/%" PRIu64 " %s%s%s%s%s%s\n", ok ? "ok" : "FAILED",
                 p->done + p->failed, p->total, n ? n : "?", w ? " (" : "",
                 w ? w : "", w ? ")" : "", ok && !r ? "" : ": ", r ? r : ok ? "" : "?");
    free (n);
    free (w);
    free (r);
}

void
qc_progress_print (qc_progress_t *p, const char *line)
{
    if (p->tty)
        fprintf (stderr, "\r\033[K%s\n", line);
    else
        fprintf (stderr, "%s\n", line);
    draw (p, true);
}

void
qc_progress_finish (qc_progress_t *p)
{
    draw (p, true);
    if (p->tty)
        fputc ('\n', stderr);
}
