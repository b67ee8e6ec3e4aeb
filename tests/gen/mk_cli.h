/* qc-mkslide's command line: parsing into mk_opts_t and the help text. */
#ifndef MK_CLI_H
#define MK_CLI_H

#include <stdio.h>

#include "tests/gen/mk_opts.h"

/* Parses argv into opts. Returns 0 to go on, 1 when --help was printed
 * (exit 0), 2 on a usage error (a message naming the problem has been
 * printed to stderr; exit 2). */
int mk_cli_parse (int argc, char **argv, mk_opts_t *opts);
void mk_cli_help (FILE *fp);

#endif
