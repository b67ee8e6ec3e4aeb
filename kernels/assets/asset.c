/* See asset.h. */
#include "kernels/assets/asset.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/asset_store.h"
#include "shared/file_read.h"

#define MAX_FILE_BYTES ((size_t) 256 << 20)

static atomic_int s_disk = 1;

void
qc_asset_allow_disk (int allow)
{
    atomic_store (&s_disk, allow ? 1 : 0);
}

int
qc_asset_ref_parse (const char *path, char hex[65])
{
    size_t plen = strlen (QC_ASSET_REF_PREFIX);
    if (!path || strncmp (path, QC_ASSET_REF_PREFIX, plen) != 0)
        return 0;
    const char *h = path + plen;
    char buf[QC_ASSET_HEX_LEN + 1];
    if (strlen (h) < QC_ASSET_HEX_LEN + 2 || h[QC_ASSET_HEX_LEN] != '/')
        return 0;
    memcpy (buf, h, QC_ASSET_HEX_LEN);
    buf[QC_ASSET_HEX_LEN] = '\0';
    const char *name = h + QC_ASSET_HEX_LEN + 1;
    if (!qc_asset_name_valid (buf) || !*name || strchr (name, '/'))
        return 0;
    if (hex)
        memcpy (hex, buf, sizeof buf);
    return 1;
}

const char *
qc_asset_shown_name (const char *path)
{
    if (!qc_asset_ref_parse (path, NULL))
        return path;
    return path + strlen (QC_ASSET_REF_PREFIX) + QC_ASSET_HEX_LEN + 1;
}

int
qc_file_read_all (const char *path, size_t max, unsigned char **data, size_t *size,
                  char *err, size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    /* one reader for every whole file (shared/file_read.c); here a file
     * that is not there is an error like any other */
    int r = qc_file_read_regular (path, max, data, size, err, errlen);
    if (r == 0)     /* errno says why (file_read.h) */
        snprintf (err, errlen, "%s: %s", path, strerror (errno));
    return r == 1 ? 0 : -1;
}

int
qc_asset_read (const char *path, unsigned char **data, size_t *size,
               char *err, size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    if (!path || !*path || !data || !size) {
        snprintf (err, errlen, "no file named");
        return -1;
    }
    char hex[QC_ASSET_HEX_LEN + 1];
    if (qc_asset_ref_parse (path, hex)) {
        if (qc_asset_store_get (hex, data, size) == 0)
            return 0;
        snprintf (err, errlen, "%.300s: this job's file is not on this "
                  "machine (it travels with the job: was it submitted by "
                  "qc-submit?)", path);
        return -1;
    }
    if (!atomic_load (&s_disk)) {
        snprintf (err, errlen, "%.300s: not read from this machine's disk "
                  "(workers read config files only from the job's assets, "
                  "which qc-submit sends)", path);
        return -1;
    }
    return qc_file_read_all (path, MAX_FILE_BYTES, data, size, err, errlen);
}

int
qc_asset_exists (const char *path)
{
    char hex[QC_ASSET_HEX_LEN + 1];
    if (!path || !*path)
        return 0;
    if (qc_asset_ref_parse (path, hex))
        return qc_asset_store_has (hex);
    return atomic_load (&s_disk) && access (path, R_OK) == 0;
}
