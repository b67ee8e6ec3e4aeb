/* The private folder of the one-process mode's ipc socket (client/local.c):
 * made for each run, and the ones earlier runs left behind removed. */
#ifndef QC_CLIENT_LOCAL_DIRS_H
#define QC_CLIENT_LOCAL_DIRS_H

#include <stddef.h>

/* Makes a folder of mode 0700 named qc-submit-XXXXXX in $TMPDIR, else
 * /tmp, else $XDG_RUNTIME_DIR, into dir (cap bytes); first removes, in
 * that folder, this user's qc-submit-XXXXXX folders whose qc-submit is
 * gone (a kill -9, a machine's crash: nothing else removes them). 0, or
 * -1 with errno (dir is then ""). */
int qc_local_private_dir (char *dir, size_t cap);

/* Of the folders in base named as qc_local_private_dir names them and
 * owned by this user: removes each whose socket "broker" is no one's
 * (a connection to it is refused) and older than a few seconds, or that
 * holds no socket and is over an hour old. Looks at no more than a few
 * thousand names. Returns how many it removed. */
int qc_local_sweep_dirs (const char *base);

#endif
