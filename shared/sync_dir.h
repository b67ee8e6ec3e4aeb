/* Making a rename or a new file's name durable: on Linux a file's name
 * lives in its folder, so after rename() or creat() the folder itself must
 * be fsync'd before a crash can be survived. Used by the broker's state
 * folder and the worker's slide cache. */
#ifndef QC_SYNC_DIR_H
#define QC_SYNC_DIR_H

/* fsyncs the folder dir; 0, or -1 with errno (a folder that cannot be
 * opened or synced: the callers go on, the data itself is already
 * synced). */
int qc_sync_dir (const char *dir);

#endif
