/* OpenSlide's own messages (GLib's g_warning, domain "Openslide"): they
 * went straight to stderr, through qc-submit's progress line, and the
 * reason they gave for refusing a slide ("Downsampled images not
 * correctly ordered") never reached the slide's result. */
#ifndef QC_OPENSLIDE_LOG_H
#define QC_OPENSLIDE_LOG_H

#include <stddef.h>

/* Routes OpenSlide's messages into the project's log (qc_log, module
 * "openslide"), each remembered for the thread that caused it. Once per
 * process; any thread may call it. */
void qc_openslide_log_init (void);
/* Forgets this thread's last message (before an OpenSlide call). */
void qc_openslide_log_clear (void);
/* This thread's last OpenSlide message since the clear, or NULL. */
const char *qc_openslide_log_last (void);

#endif
