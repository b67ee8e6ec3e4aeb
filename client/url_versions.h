/* Whether slides by URL are still the files their records were made
 * from. A slide rescanned and put back under the same URL kept its old
 * record: a rerun skipped it as done (paths have stamps,
 * client/output_stamps.h; a URL's server is the one that knows). A rerun
 * now asks each done slide's server, with the URL the cohort gives
 * (credentials, a fresh signature), for the first byte of the file,
 * conditional on the ETag its worker read (If-None-Match:
 * worker/fetch/http.h). A 304 is the same file; otherwise the answer's
 * size and validators are compared with the record's: another size is
 * another file; the same ETag or Last-Modified is the same file (a load
 * balancer's ETag per machine); when every validator differs, another
 * (an older date too: a scan put back from a backup). A record with no
 * validator (a server that gives none) is told changed by its size
 * alone, and cannot be told the same.
 *
 * The workstation may not reach a server the workers reach, or may no
 * longer be let in (an expired signature): such a slide cannot be told
 * and is skipped as before, and the caller says so. The checks run a few
 * at a time, each tried once with short timeouts; once a host
 * cannot be reached, its other slides are not asked (a cohort of
 * thousands behind a firewall would otherwise take hours). */
#ifndef QC_CLIENT_URL_VERSIONS_H
#define QC_CLIENT_URL_VERSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "shared/result.h"

typedef enum {
    QC_URLV_SAME = 0,         /* the version the record was made from */
    QC_URLV_CHANGED,          /* another file now */
    QC_URLV_UNKNOWN,          /* could not be told: why says so */
} qc_urlv_verdict_t;

typedef struct {
    const char *url;          /* as the cohort gives it (secrets and all) */
    const qc_result_source_t *was;   /* the version recorded */
    bool optional;            /* a file whose absence is an answer (an
                                 annotation: a 404 is "not there", not a
                                 fault); was of size -1 and no validator
                                 says it was not there. Not there then
                                 and now is SAME; there now, or gone
                                 now, CHANGED */
    qc_urlv_verdict_t verdict;       /* set by qc_url_versions_check */
    bool unreached;           /* UNKNOWN as its server could not be reached
                                 from this machine */
    char why[512];            /* CHANGED: what differs; UNKNOWN: why it
                                 cannot be told; each naming the redacted
                                 URL */
} qc_urlv_item_t;

/* Asks the servers about items[0..n) and sets each verdict, with why
 * (what differs, for CHANGED; the reason, for UNKNOWN). threads: checks at
 * once (1..16; 0 for the default, 8). When the checks take more than a
 * few seconds, one line says so on say (NULL: nowhere). Never fails: an
 * item that cannot be checked (no memory, no libcurl) is UNKNOWN. */
void qc_url_versions_check (qc_urlv_item_t *items, size_t n, int threads, FILE *say);

#endif
