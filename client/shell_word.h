/* Words of a command line the user is told to run (how to go on after
 * an interruption), written so a shell gives the program the same word:
 * a folder with a space, a key file's path with a quote. */
#ifndef QC_SHELL_WORD_H
#define QC_SHELL_WORD_H

#include <stddef.h>

/* Appends word to dst (cap bytes, NUL-terminated; after a space unless
 * dst is empty), single-quoted when
 * it holds anything but letters, digits and _ . / : @ % + = , - (a '
 * inside becomes '\''). Returns 0, or -1 (dst left as it was) when it
 * does not fit or an argument is NULL. */
int qc_shell_word_add (char *dst, size_t cap, const char *word);

#endif
