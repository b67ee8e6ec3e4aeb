/* A whole small file read into memory, as the files a config or a slide
 * names are read (a config's data files by qc-submit, an annotation
 * beside a slide by a worker): refused rather than blocked on or
 * half-read. */
#ifndef QC_FILE_READ_H
#define QC_FILE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Reads the regular file at path, of at most max bytes, into *data
 * (malloc'd, the caller frees) and *size. 1 read; 0 not there (no such
 * file or folder), err untouched and errno ENOENT or ENOTDIR (a file
 * stands where the path wants a folder) for a caller to whom that is an
 * error; -1 there but unusable, with err naming path and why:
 * not a regular file (a FIFO or device is refused without waiting on
 * it), larger than max, a read error, no memory, or bad arguments. It is
 * read to its end, whatever size it said it had. */
int qc_file_read_regular (const char *path, size_t max, unsigned char **data,
                          size_t *size, char *err, size_t errlen);

/* The same, and the file's status as it was opened into *st (NULL: not
 * wanted), on 1 and on a -1 after it was opened (not a regular file,
 * too large; *st untouched otherwise): the size and modification time
 * of what was read, from the descriptor read, not the name (which may
 * be another file by now). A file written while it is read has a later
 * time than this. */
int qc_file_read_regular_stat (const char *path, size_t max, unsigned char **data,
                               size_t *size, struct stat *st, char *err, size_t errlen);

/* Whether the folder of the local path (not a URL: http(s) or file:) is
 * there, a folder this process can look into: a file not there in a
 * folder that is was looked for; one in a folder not there may be on
 * another machine's disk (a folder only qc-submit's workers have).
 * false for NULL, a URL, a bare name (the working folder's, which is no
 * config's). */
bool qc_file_folder_there (const char *path);
/* Whether that folder is there and holds nothing: an unmounted share's
 * mount point looks so, where the workers have the share mounted. */
bool qc_file_folder_empty (const char *path);

#endif
