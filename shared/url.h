/* Cohort entries that name a slide by URL: which are accepted, how a URL
 * is shown in logs and results, and where file:// points.
 *
 * An entry is a URL when it starts with "scheme://" (RFC 3986 scheme
 * letters); anything else is a path, so a file named "a:b.svs" stays a
 * path. Accepted: http://, https:// (a presigned S3 or GCS URL is one)
 * and file://. Any other scheme is refused by qc_url_classify with the
 * entry named, which the client calls for every entry before any slide
 * is touched.
 *
 * Redaction: a URL may carry secrets in its user:password@ part and in
 * its query (a presigned URL's signature), so every message and result
 * shows qc_url_redact's form: scheme://host[:port]/path, with both
 * removed, and nothing after '#'. */
#ifndef QC_SHARED_URL_H
#define QC_SHARED_URL_H

#include <stddef.h>

#include "shared/proto.h"

typedef enum {
    QC_URL_PATH = 0,          /* a local path, as before */
    QC_URL_FILE = 1,          /* file:///abs/path or file://localhost/... */
    QC_URL_HTTP = 2,          /* http:// */
    QC_URL_HTTPS = 3          /* https:// */
} qc_url_kind_t;

/* Longest entry accepted: what a task's path may hold on the wire (a
 * presigned URL is 1-2 KB). */
#define QC_URL_MAX QC_PROTO_MAX_PATH

/* The kind of entry, or -1 when it is refused: an unsupported scheme,
 * an http(s) URL without a host, a file:// URL that is not an absolute
 * local path, an empty entry or one longer than QC_URL_MAX. err then
 * names the entry (redacted) and says what is accepted. */
int qc_url_classify (const char *entry, char *err, size_t errlen);

/* qc_url_redact into a buffer that lives to the end of the enclosing
 * block, for a log line's argument: qc_log (..., "%s", QC_URL_SHOWN (p)).
 * Cut at 511 bytes. */
#define QC_URL_SHOWN(entry) qc_url_redact ((entry), (char[512]) { 0 }, 512)

/* The one spelling of an http(s) URL that names a slide, into out: the
 * scheme and host in lower case, the scheme's default port dropped,
 * "." and ".." path segments resolved (as curl does before it sends
 * the request), in the path bytes over 0x7f percent-encoded (%C3%BC
 * for a raw "ü"), escapes of a letter, digit, '-', '_' or '~' decoded
 * and other escapes in upper case (RFC 3986 6.2.2: every server reads
 * them so; "%2E" is kept); the user info, the query and the fragment as
 * written (a presigned URL's signature covers them). So
 * "HTTP://Host:80/a/../%62.svs" and "http://host/b.svs" are one slide:
 * it runs once, and a rerun knows it. Any other entry is copied
 * as it is. 0, or -1 when out is too small (out then empty). */
int qc_url_canonical (const char *url, char *out, size_t outlen);

/* 1 for http:// and https:// (the slide is fetched), else 0. */
int qc_url_is_remote (const char *entry);

/* Writes entry's redacted form into out (cut to fit, always
 * terminated) and returns out; a path is copied as it is. Never fails:
 * a NULL entry gives "(null)". */
char *qc_url_redact (const char *entry, char *out, size_t outlen);

/* The slide's file name an entry gives (for output names and log
 * lines): a path's last component; a URL's last path segment,
 * percent-decoded, without query or credentials (the segment before a
 * '/' that ends the path; its host when it has none). Cut to fit out;
 * returns out. Never fails: NULL gives "(null)". */
char *qc_url_name (const char *entry, char *out, size_t outlen);

/* name as one URL path segment into out: every byte but letters,
 * digits and "-._~" percent-encoded (a name qc_url_name decoded,
 * "Slide 01.svs", put back into a URL: its space, '?', '%' or '/' would
 * end or change the segment). 0, or -1 when it does not fit out. */
int qc_url_encode_segment (const char *name, char *out, size_t outlen);

/* The local path a file:// URL names, percent-decoded. 0, or -1 with
 * the reason in err. */
int qc_url_file_path (const char *url, char *out, size_t outlen, char *err,
                      size_t errlen);

/* A file name for url in a cache folder: its last path segment
 * (letters, digits, '.', '-', '_' kept, the rest '_'; at most 96
 * characters), '-', and 32 hex digits of a hash of the URL without
 * credentials and without the query parameters that only sign or
 * expire it (X-Amz-*, X-Goog-*, Signature, Expires, an Azure SAS's
 * sv/se/sig/...), so that a fresh presigned URL for the same object
 * finds the same entry. At most 130 characters (the file-system limit
 * is 255). 0, or -1 when out is too small or url is not http(s). */
int qc_url_cache_name (const char *url, char *out, size_t outlen);

/* An admitted URL prefix (qc-worker --slides-url): a scheme, a host, a
 * port and a folder on that server. */
typedef struct {
    qc_url_kind_t kind;       /* QC_URL_HTTP or QC_URL_HTTPS */
    char host[256];           /* lower case; an IPv6 address in [] */
    unsigned port;            /* the URL's, else 80 or 443 */
    char path[1024];          /* starts with '/' */
} qc_url_prefix_t;

/* Parses http(s)://HOST[:PORT][/PATH] into out. Refused, with the reason
 * in err: another scheme, user info, a query or fragment, a host with
 * other than letters, digits, '.', '-' (or an [IPv6] address), a port
 * outside 1-65535, a dot segment in the path. */
int qc_url_prefix_parse (const char *text, qc_url_prefix_t *out, char *err,
                         size_t errlen);

/* 1 when url lies under prefix: the same scheme, host (any case) and
 * port (the scheme's default when none is written), and a path that is
 * the prefix's or below it, the prefix's path taken as a folder
 * ("/wsi" admits "/wsi/a.svs", not "/wsi2/a.svs"), bytes over 0x7f
 * compared percent-encoded on both sides (as qc_url_canonical spells
 * them). The query and the user info do not count. A URL that a server could read as another
 * path never matches: a "." or ".." segment, also percent-encoded, an
 * encoded '/' or '\', a '\', or a host that is not plain. Else 0. */
int qc_url_prefix_match (const qc_url_prefix_t *prefix, const char *url);

/* 1 when an http(s) url's path holds what a server could read as
 * another path (the dot segments and encodings above), else 0. */
int qc_url_path_ambiguous (const char *url);

#endif
