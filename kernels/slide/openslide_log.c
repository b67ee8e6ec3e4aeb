/* See openslide_log.h. */
#include "kernels/slide/openslide_log.h"

#include <pthread.h>
#include <stdio.h>

#include <glib.h>

#include "shared/log.h"

/* OpenSlide opens and reads a slide in the calling thread: the message
 * belongs to the slide that thread works on. */
static _Thread_local char s_last[256];
/* GLib's own complaints while OpenSlide works (an empty field of an
 * Aperio description: "g_strchug: assertion 'string != NULL' failed"),
 * since the slide was opened: printed on stderr, one slide's 4 million
 * empty fields wrote 8 million lines (756 MB) in 86 s (a tester's
 * review). The first few of a slide go to the log at DEBUG, the rest
 * nowhere. */
static _Thread_local unsigned s_glib;
#define GLIB_LOGGED 3

static void
on_message (const gchar *domain, GLogLevelFlags level, const gchar *message,
            gpointer data)
{
    (void) domain, (void) data;
    snprintf (s_last, sizeof s_last, "%s", message ? message : "");
    /* a g_warning is OpenSlide's word on a slide it refuses or reads
       with trouble: worth a line in qc.log; the rest is for debugging */
    qc_log (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING)
            ? QC_LOG_WARNING : QC_LOG_DEBUG, "openslide", "%s", s_last);
}

static void
on_glib (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
    (void) domain, (void) level, (void) data;
    if (s_glib++ < GLIB_LOGGED)
        qc_log (QC_LOG_DEBUG, "openslide", "GLib: %s%s", message ? message : "",
                s_glib == GLIB_LOGGED ? " (more such messages of this slide are not logged)"
                                      : "");
}

static void
install (void)
{
    g_log_set_handler ("GLib", G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING, on_glib, NULL);
    g_log_set_handler ("Openslide", G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL
                       | G_LOG_FLAG_RECURSION, on_message, NULL);
}

void
qc_openslide_log_init (void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once (&once, install);
}

void
qc_openslide_log_clear (void)
{
    s_last[0] = '\0';
    s_glib = 0;
}

const char *
qc_openslide_log_last (void)
{
    return s_last[0] ? s_last : NULL;
}
