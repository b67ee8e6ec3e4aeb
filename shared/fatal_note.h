/* A last word before a program dies of a crash signal: which signal,
 * what it most often means here, and that what it wrote is kept and the
 * same command run again goes on. Without it a one-process run stopped
 * by GLib when memory ran out (inside OpenSlide: SIGTRAP) left only
 * GLib's own line. The process still dies of that signal (its exit
 * status and core as before). */
#ifndef QC_SHARED_FATAL_NOTE_H
#define QC_SHARED_FATAL_NOTE_H

/* Installs the handlers; the message names prog and ends with advice
 * (what to run again), both copied. Call once, before the work starts. */
void qc_fatal_note_install (const char *prog, const char *advice);

#endif
