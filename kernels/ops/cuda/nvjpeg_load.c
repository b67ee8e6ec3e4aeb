/* nvJPEG loaded at run time (nvjpeg_api.h says why). Plain C with
 * dlopen: built in every build, CPU-only ones too, so that its unit test
 * (tests/unit/test_nvjpeg_load.c) runs on machines without CUDA. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cuda/nvjpeg_api.h"
#include "shared/err.h"

/* dlsym's void * to a function pointer: POSIX defines it; ISO C's
 * pedantry about the cast is avoided by copying the bytes. */
static int
bind (void *dl, const char *name, void *field, size_t size, char *err, size_t errlen)
{
    dlerror ();
    void *sym = dlsym (dl, name);
    if (!sym)
        return qc_fail (err, errlen, "it has no %s: not nvJPEG, or one too old", name);
    memcpy (field, &sym, size);
    return 0;
}

int
qc_nvjpeg_open (const char *path, qc_nvjpeg_api_t *api, char *err, size_t errlen)
{
    if (!api)
        return qc_fail (err, errlen, "no api to fill");
    memset (api, 0, sizeof *api);
    if (!path || !*path)
        return qc_fail (err, errlen, "no library named");
    if (strlen (path) >= sizeof api->path)
        return qc_fail (err, errlen, "%.64s...: name too long", path);
    dlerror ();
    void *dl = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror ();
        return qc_fail (err, errlen, "%s", why ? why : path);
    }
#define QC_NVJPEG_BIND(name, field, ret, params)                                 \
    if (bind (dl, #name, &api->field, sizeof api->field, err, errlen) != 0) {   \
        dlclose (dl);                                                           \
        memset (api, 0, sizeof *api);                                           \
        return -1;                                                              \
    }
    QC_NVJPEG_FUNCTIONS (QC_NVJPEG_BIND)
#undef QC_NVJPEG_BIND
    static const int what[3] = {
        QC_NVJPEG_PROPERTY_MAJOR, QC_NVJPEG_PROPERTY_MINOR, QC_NVJPEG_PROPERTY_PATCH,
    };
    for (int i = 0; i < 3; i++) {
        if (api->get_property (what[i], &api->version[i]) != QC_NVJPEG_STATUS_SUCCESS) {
            dlclose (dl);
            memset (api, 0, sizeof *api);
            return qc_fail (err, errlen, "%s: nvjpegGetProperty did not say its version",
                            path);
        }
    }
    if (api->version[0] < QC_NVJPEG_MIN_MAJOR) {
        int v = api->version[0];
        dlclose (dl);
        memset (api, 0, sizeof *api);
        return qc_fail (err, errlen, "%s is nvJPEG %d; %d or later is needed (CUDA %d)",
                        path, v, QC_NVJPEG_MIN_MAJOR, QC_NVJPEG_MIN_MAJOR);
    }
    api->dl = dl;
    snprintf (api->path, sizeof api->path, "%s", path);
    return 0;
}

/* Appends "; " and what to err (the reasons of every try, in order). */
static void
add_reason (char *err, size_t errlen, const char *what)
{
    if (!err || !errlen)
        return;
    size_t n = strlen (err);
    if (n + 1 < errlen)
        snprintf (err + n, errlen - n, "%s%s", n ? "; " : "", what);
}

int
qc_nvjpeg_find (int cuda_major, const char *cuda_root, qc_nvjpeg_api_t *api, char *err,
                size_t errlen)
{
    if (!api)
        return qc_fail (err, errlen, "no api to fill");
    memset (api, 0, sizeof *api);
    if (err && errlen)
        err[0] = '\0';
    char why[768];
    const char *env = getenv ("QC_NVJPEG_LIB");
    if (env && *env) {
        if (qc_nvjpeg_open (env, api, why, sizeof why) == 0)
            return 0;
        return qc_fail (err, errlen, "QC_NVJPEG_LIB=%s: %s", env, why);
    }
    /* the name the loader's paths may know, then the toolkit's folders */
    static const char *const dirs[] = {"", "/lib64/", "/targets/x86_64-linux/lib/"};
    char name[64], path[512];
    if (cuda_major > 0)
        snprintf (name, sizeof name, "libnvjpeg.so.%d", cuda_major);
    else
        snprintf (name, sizeof name, "libnvjpeg.so");
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (i > 0 && (!cuda_root || !*cuda_root))
            break;
        int n = i == 0 ? snprintf (path, sizeof path, "%s", name)
                       : snprintf (path, sizeof path, "%s%s%s", cuda_root, dirs[i], name);
        if (n < 0 || (size_t) n >= sizeof path)
            continue;
        if (qc_nvjpeg_open (path, api, why, sizeof why) == 0) {
            if (err && errlen)
                err[0] = '\0';
            return 0;
        }
        add_reason (err, errlen, why);
    }
    return -1;
}

void
qc_nvjpeg_close (qc_nvjpeg_api_t *api)
{
    if (!api)
        return;
    if (api->dl)
        dlclose (api->dl);
    memset (api, 0, sizeof *api);
}
