/* Says which path qc-submit waits on when a file system call has not
 * returned for a while. A hard-mounted NFS or SMB share whose server
 * went away blocks stat, open and readdir for as long as it is gone
 * (Ctrl-C too, on a hard mount), and qc-submit then sat silent while it
 * listed the cohort or checked its slides.
 *
 * The thread that walks files says where it is (qc_stall_watch_at)
 * before each call that may block, and when the walk is over
 * (qc_stall_watch_done); a watcher thread says once, on stderr, when the
 * same path has stood for after_s seconds. The output folder is watched
 * too, from its first look before the job to the session's writes and
 * syncs: on a share that went away qc-submit sat silent there as well. */
#ifndef QC_CLIENT_STALL_WATCH_H
#define QC_CLIENT_STALL_WATCH_H

/* Starts the watcher: after_s seconds on one path before it is said (0:
 * no watcher). prog names the program in what is said. 0, or -1 when
 * no thread could start (nothing is then said; the calls below do no
 * harm). */
int qc_stall_watch_start (const char *prog, unsigned after_s);
/* About to touch path (NULL: nothing). Copies it. */
void qc_stall_watch_at (const char *path);
/* About to write to or look at the output folder at path (its own words:
 * -o's file system, not a slide's). Copies it. */
void qc_stall_watch_output (const char *path);
/* No file system call under way for now. */
void qc_stall_watch_done (void);
/* Stops and joins the watcher (it may be blocked on nothing: it only
 * prints). */
void qc_stall_watch_stop (void);

#endif
