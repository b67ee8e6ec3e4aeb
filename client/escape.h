/* Text that goes into results.tsv, error.log and qc.log, escaped so that
 * any byte a slide's name or a worker's message may hold keeps the files
 * one record a line and one cell a field, and can be read back exactly:
 *   tab \t, line feed \n, carriage return \r, backslash \\,
 *   other control bytes (below 0x20, 0x7f) and bytes that are not part
 *   of valid UTF-8 as \xNN (two lower-case hex digits).
 * Valid UTF-8 is written as it is, so names in any script read as they
 * are. */
#ifndef QC_CLIENT_ESCAPE_H
#define QC_CLIENT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes s escaped; returns what fputs would (EOF on error). NULL
 * writes nothing. */
int qc_escape_put (FILE *f, const char *s);
/* s escaped, malloc'd (NULL on memory). */
char *qc_escape_dup (const char *s);
/* The inverse: \t \n \r \\ \xNN back to bytes (other backslashes stay
 * as they are); malloc'd. */
char *qc_unescape_dup (const char *s);
/* true when s holds nothing that qc_escape would change. */
bool qc_escape_clean (const char *s);
/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes
 * there are not one (or s[0] is NUL). */
size_t qc_utf8_seq (const unsigned char *s);

#endif
