/* What differs between two configs, in words, for a rerun refused
 * because its folder holds another config's results: "another config"
 * alone sent a lab to diff .qc-config (whose files are asset references)
 * against its own file by hand, and a changed example image showed as
 * nothing at all.
 *
 * Both texts are parsed as configs (shared/config.h); each section and
 * key present in one and not the other, and each value that differs, is
 * one difference, said as "[section] key: was -> now". A file the
 * config names (kernels/assets/asset.h: asset/sha256/HEX/NAME) is shown
 * by its name and the start of its hash, and a value whose only change
 * is such a file's bytes says "NAME changed (sha256 OLD... -> NEW...)".
 * Multi-line values (the steps of [pipeline]) say what was added or
 * left out. A value whose files one config names as sent and the other
 * as written (a section of a step only one of them runs: only the
 * steps' files are sent) counts, but is said only when nothing else
 * is. At most QC_CONFIG_DIFF_SHOWN differences are written, then
 * how many more. */
#ifndef QC_CLIENT_CONFIG_DIFF_H
#define QC_CLIENT_CONFIG_DIFF_H

#include <stddef.h>

#define QC_CONFIG_DIFF_SHOWN 4

/* The differences between the configs was and now into out ("; "
 * between them). Returns how many there are (0: none a parser sees,
 * e.g. only the order of sections), or -1 when either does not parse
 * or an argument is NULL (out then says why, when cap allows). */
int qc_config_diff (const char *was, const char *now, char *out, size_t cap);

#endif
