/* nvJPEG's loader (kernels/ops/cuda/nvjpeg_load.c): the CUDA backend
 * loads CUDA's libnvjpeg at run time, so a GPU machine without it
 * decodes slides' JPEG tiles on the host, and the reason is said.
 *
 * Checks, with real files: a library that is not there, a file that is
 * not a library and a real library that is not nvJPEG (zlib) are each
 * refused with their reason and leave nothing loaded; QC_NVJPEG_LIB
 * alone is tried when set, and named in the reason; without it the
 * build's soname, then the toolkit's two folders, in that order, each
 * try's reason kept; no toolkit folder: one try. Where this machine has
 * nvJPEG (a GPU machine), it loads, of version 11 or later, with every
 * function. QC_NVJPEG_BACKEND's names are nvJPEG's numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/ops/cuda/nvjpeg_api.h"
#include "shared/cli.h"
#include "tests/unit/check.h"

/* 1 when api holds nothing (the loader's promise after a failure) */
static int
api_empty (const qc_nvjpeg_api_t *api)
{
    static const qc_nvjpeg_api_t zero;
    return memcmp (api, &zero, sizeof zero) == 0;
}

static void
check_open_refusals (void)
{
    qc_nvjpeg_api_t api;
    char err[1024];
    CHECK (qc_nvjpeg_open ("libnvjpeg.so", NULL, err, sizeof err) == -1);
    CHECK (qc_nvjpeg_open (NULL, &api, err, sizeof err) == -1 && api_empty (&api));
    CHECK (qc_nvjpeg_open ("", &api, err, sizeof err) == -1 && api_empty (&api));

    CHECK (qc_nvjpeg_open ("/nonexistent/libnvjpeg.so.13", &api, err, sizeof err) == -1
               && api_empty (&api) && strstr (err, "/nonexistent/libnvjpeg.so.13")
               && strstr (err, "No such file"),
           "a library that is not there: %s", err);

    /* a file that is not a library */
    char path[] = "/tmp/qc-nvjpeg-XXXXXX";
    int fd = mkstemp (path);
    CHECK (fd >= 0);
    if (fd >= 0) {
        CHECK (write (fd, "not a library\n", 14) == 14);
        close (fd);
        CHECK (qc_nvjpeg_open (path, &api, err, sizeof err) == -1 && api_empty (&api)
                   && strstr (err, path),
               "not a library: %s", err);
        unlink (path);
    }

    /* a real library that is not nvJPEG: its first missing function */
    CHECK (qc_nvjpeg_open ("libz.so.1", &api, err, sizeof err) == -1 && api_empty (&api)
               && strstr (err, "no nvjpegGetProperty") && strstr (err, "not nvJPEG"),
           "zlib: %s", err);

    char longname[700];
    memset (longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK (qc_nvjpeg_open (longname, &api, err, sizeof err) == -1 && api_empty (&api)
               && strstr (err, "too long"),
           "%s", err);

    qc_nvjpeg_close (NULL);
    qc_nvjpeg_close (&api);     /* never loaded: nothing */
    CHECK (api_empty (&api));
}

/* the reasons in err, in order, one per try */
static int
tried_in_order (const char *err, const char *const *names, size_t n)
{
    const char *p = err;
    for (size_t i = 0; i < n; i++) {
        const char *q = strstr (p, names[i]);
        if (!q)
            return 0;
        p = q + strlen (names[i]);
    }
    return 1;
}

static void
check_find (void)
{
    qc_nvjpeg_api_t api;
    char err[2048];
    CHECK (qc_nvjpeg_find (13, "/usr/local/cuda", NULL, err, sizeof err) == -1);

    setenv ("QC_NVJPEG_LIB", "/nonexistent/nvjpeg.so", 1);
    CHECK (qc_nvjpeg_find (13, "/usr/local/cuda", &api, err, sizeof err) == -1
               && api_empty (&api)
               && strncmp (err, "QC_NVJPEG_LIB=/nonexistent/nvjpeg.so: ", 38) == 0
               && !strstr (err, "libnvjpeg.so.13"),
           "QC_NVJPEG_LIB alone is tried: %s", err);
    setenv ("QC_NVJPEG_LIB", "libz.so.1", 1);
    CHECK (qc_nvjpeg_find (13, NULL, &api, err, sizeof err) == -1 && strstr (err, "not nvJPEG"),
           "%s", err);
    unsetenv ("QC_NVJPEG_LIB");

    /* a CUDA major no library has, a toolkit folder that is not there */
    static const char *const three[] = {
        "libnvjpeg.so.99", "/nonexistent-cuda/lib64/libnvjpeg.so.99",
        "/nonexistent-cuda/targets/x86_64-linux/lib/libnvjpeg.so.99",
    };
    CHECK (qc_nvjpeg_find (99, "/nonexistent-cuda", &api, err, sizeof err) == -1
               && api_empty (&api) && tried_in_order (err, three, 3),
           "three tries in order: %s", err);
    CHECK (qc_nvjpeg_find (99, NULL, &api, err, sizeof err) == -1
               && tried_in_order (err, three, 1) && !strstr (err, "/lib64/"),
           "no toolkit folder, one try: %s", err);
    /* a short err keeps a whole string */
    char tiny[8];
    CHECK (qc_nvjpeg_find (99, "/nonexistent-cuda", &api, tiny, sizeof tiny) == -1
               && strlen (tiny) < sizeof tiny);

    /* the real library, where this machine has one */
    const char *root = getenv ("CUDA_HOME") ? getenv ("CUDA_HOME") : "/usr/local/cuda";
    int found = 0;
    for (int major = 11; major <= 20 && !found; major++)
        found = qc_nvjpeg_find (major, root, &api, err, sizeof err) == 0;
    if (!found) {
        printf ("  no nvJPEG on this machine (CUDA 11 to 20, %s): its loading is "
                "checked where one is (a GPU machine)\n", root);
        return;
    }
    printf ("  nvJPEG %d.%d.%d loaded from %s\n", api.version[0], api.version[1],
            api.version[2], api.path);
    CHECK (api.dl && api.version[0] >= QC_NVJPEG_MIN_MAJOR);
#define QC_NVJPEG_SET(name, field, ret, params) CHECK (api.field != NULL, #name);
    QC_NVJPEG_FUNCTIONS (QC_NVJPEG_SET)
#undef QC_NVJPEG_SET
    qc_nvjpeg_close (&api);
    CHECK (api_empty (&api));
}

static void
check_backend_names (void)
{
    CHECK (qc_cli_nvjpeg_backend ("default") == QC_NVJPEG_BACKEND_DEFAULT);
    CHECK (qc_cli_nvjpeg_backend ("hybrid") == QC_NVJPEG_BACKEND_HYBRID);
    CHECK (qc_cli_nvjpeg_backend ("gpu") == QC_NVJPEG_BACKEND_GPU_HYBRID);
    CHECK (qc_cli_nvjpeg_backend ("hardware") == QC_NVJPEG_BACKEND_HARDWARE);
    CHECK (qc_cli_nvjpeg_backend (NULL) == QC_NVJPEG_BACKEND_GPU_HYBRID);
    CHECK (qc_cli_nvjpeg_backend ("") == QC_NVJPEG_BACKEND_GPU_HYBRID);
    CHECK (qc_cli_nvjpeg_backend ("GPU") == -1);
    CHECK (qc_cli_nvjpeg_backend ("gpu ") == -1);
}

int
main (void)
{
    unsetenv ("QC_NVJPEG_LIB");
    check_open_refusals ();
    check_find ();
    check_backend_names ();
    return check_done ("test_nvjpeg_load");
}
