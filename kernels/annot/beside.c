/* Files beside a slide; see beside.h. */
#include "kernels/annot/beside.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/err.h"
#include "shared/file_read.h"
#include "shared/url.h"

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static qc_beside_reader_fn *s_fn;
static void *s_ctx;

void
qc_beside_set_reader (qc_beside_reader_fn *fn, void *ctx)
{
    pthread_mutex_lock (&s_lock);
    s_fn = fn;
    s_ctx = fn ? ctx : NULL;
    pthread_mutex_unlock (&s_lock);
}

void
qc_beside_clear_reader (void *ctx)
{
    pthread_mutex_lock (&s_lock);
    if (s_ctx == ctx) {
        s_fn = NULL;
        s_ctx = NULL;
    }
    pthread_mutex_unlock (&s_lock);
}

int
qc_beside_read_local (const char *where, size_t max, unsigned char **data,
                      size_t *size, qc_result_source_t *version, char *err, size_t errlen)
{
    if (version)
        *version = (qc_result_source_t) { .size = -1 };
    if (!where || !data || !size)
        return qc_fail (err, errlen, "no file named");
    if (qc_url_is_remote (where))
        return qc_fail (err, errlen, "%s: this program reads no file by URL (a "
                        "worker does)", QC_URL_SHOWN (where));
    char path[4096];
    if (strncmp (where, "file:", 5) == 0) {
        if (qc_url_file_path (where, path, sizeof path, err, errlen) != 0)
            return -1;
    } else if ((size_t) snprintf (path, sizeof path, "%s", where) >= sizeof path)
        return qc_fail (err, errlen, "%.200s...: path too long", where);
    struct stat st = { 0 };
    int rc = qc_file_read_regular_stat (path, max, data, size, &st, err, errlen);
    /* read, or opened and refused (too large, a folder): its version */
    if (rc != 0 && st.st_mode != 0 && version) {
        version->size = (int64_t) st.st_size;
        snprintf (version->last_modified, sizeof version->last_modified,
                  "%lld.%09ld", (long long) st.st_mtim.tv_sec, (long) st.st_mtim.tv_nsec);
    }
    return rc;
}

int
qc_beside_read (const char *where, size_t max, unsigned char **data, size_t *size,
                qc_result_source_t *version, char *err, size_t errlen)
{
    if (version)
        *version = (qc_result_source_t) { .size = -1 };
    pthread_mutex_lock (&s_lock);
    qc_beside_reader_fn *fn = s_fn;
    void *ctx = s_ctx;
    pthread_mutex_unlock (&s_lock);
    if (fn)
        return fn (ctx, where, max, data, size, version, err, errlen);
    return qc_beside_read_local (where, max, data, size, version, err, errlen);
}

static bool
is_url (const char *entry)
{
    return qc_url_is_remote (entry) || strncmp (entry, "file:", 5) == 0;
}

/* The length of entry's folder part: up to its last '/' (a URL's before
 * its query or fragment, and never into its scheme and host); 0 for a
 * bare name. */
static size_t
folder_len (const char *entry)
{
    size_t end = strlen (entry), start = 0;
    if (is_url (entry)) {
        end = strcspn (entry, "?#");
        const char *host = strstr (entry, "://");
        start = host ? (size_t) (host - entry) + 3 : 0;
        const char *path = memchr (entry + start, '/', end - start);
        start = path ? (size_t) (path - entry) : end;
    }
    for (size_t i = end; i > start; i--)
        if (entry[i - 1] == '/')
            return i - 1;
    return 0;
}


int
qc_beside_where (const char *origin, const char *folder, const char *name, char *out,
                 size_t outlen)
{
    if (!origin || !name || !out || !outlen)
        return -1;
    out[0] = '\0';
    const char *base = folder && *folder ? folder : origin;
    if (base == folder && folder[0] != '/' && !qc_url_is_remote (folder))
        return -1;
    char encoded[3 * 1024 + 1];
    if (is_url (base)) {
        if (qc_url_encode_segment (name, encoded, sizeof encoded) != 0)
            return -1;
        name = encoded;
    }
    int n;
    if (base == folder) {
        size_t len = strlen (folder);
        while (len > 1 && folder[len - 1] == '/')
            len--;
        n = snprintf (out, outlen, "%.*s/%s", (int) len, folder, name);
    } else {
        size_t len = folder_len (origin);
        n = len ? snprintf (out, outlen, "%.*s/%s", (int) len, origin, name)
                : origin[0] == '/' ? snprintf (out, outlen, "/%s", name)
                                   : snprintf (out, outlen, "%s", name);
    }
    if (n < 0 || (size_t) n >= outlen) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}
