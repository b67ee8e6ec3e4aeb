/* The secrets of slide URLs given on qc-submit's command line kept out
 * of `ps`: a presigned URL's signature (its query) and a user:password@
 * part were there for every user of the machine to read, for the whole
 * run (/proc/PID/cmdline is the process's own argument memory; a
 * hospital admin's probe). The arguments are copied, and in the
 * original memory those parts are overwritten, as database clients do
 * with a password given as an argument. Seen for the moment between
 * exec and this call: a list file (--list) keeps them off the command
 * line altogether (README, "Slides anywhere"). */
#ifndef QC_CLIENT_ARGV_SECRETS_H
#define QC_CLIENT_ARGV_SECRETS_H

#include <stddef.h>

/* A copy of argv (argc strings and a NULL, each malloc'd, to live as
 * long as the process), and in argv itself each http(s) URL's user
 * info and query (after '?', with its fragment) overwritten with 'x'.
 * NULL when there is no memory for the copy: argv is then left as it
 * is. */
char **qc_argv_hide_secrets (int argc, char **argv);

/* How many bytes of s, from its start, are an http(s) URL's secret
 * parts (for the caller's own use and a test): the offsets of the user
 * info and the query written to *user_at, *user_len, *query_at (the
 * lengths 0 when there is none). -1 when s is no http(s) URL, else 0. */
int qc_argv_url_secrets (const char *s, size_t *user_at, size_t *user_len,
                         size_t *query_at);

#endif
