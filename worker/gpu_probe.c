/* See gpu_probe.h. Only the handful of driver entry points needed to name
 * devices and their memory are looked up. */
#include "worker/gpu_probe.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

typedef int (*cu_init_fn) (unsigned);
typedef int (*cu_count_fn) (int *);
typedef int (*cu_get_fn) (int *, int);
typedef int (*cu_name_fn) (char *, int, int);
typedef int (*cu_mem_fn) (size_t *, int);

static int
parse_list (const char *spec, int count, int *idx, size_t *n, char *err,
            size_t errlen)
{
    *n = 0;
    if (strcmp (spec, "all") == 0) {
        for (int i = 0; i < count && *n < QC_PROTO_MAX_GPUS; i++)
            idx[(*n)++] = i;
        return 0;
    }
    const char *p = spec;
    while (*p) {
        char *end;
        long v = strtol (p, &end, 10);
        if (end == p || v < 0 || (*end && *end != ',')) {
            snprintf (err, errlen, "not a list of GPUs: expected I[,J...] or all");
            return -1;
        }
        if (v >= count) {
            snprintf (err, errlen, "no GPU %ld: this machine has %d", v, count);
            return -1;
        }
        for (size_t i = 0; i < *n; i++)
            if (idx[i] == v) {
                snprintf (err, errlen, "GPU %ld listed twice", v);
                return -1;
            }
        if (*n >= QC_PROTO_MAX_GPUS) {
            snprintf (err, errlen, "too many GPUs listed");
            return -1;
        }
        idx[(*n)++] = (int) v;
        p = *end ? end + 1 : end;
    }
    if (*n == 0) {
        snprintf (err, errlen, "empty --gpu list");
        return -1;
    }
    return 0;
}

int
qc_gpu_spec_check (const char *spec, char *err, size_t errlen)
{
    int idx[QC_PROTO_MAX_GPUS];
    size_t n;
    if (!spec || !err)
        return -1;
    return parse_list (spec, INT_MAX, idx, &n, err, errlen);
}

int
qc_gpu_probe (const char *spec, qc_gpu_t **gpus, size_t *ngpus, char *err,
              size_t errlen)
{
    if (!spec || !gpus || !ngpus || !err)
        return -1;
    *gpus = NULL;
    *ngpus = 0;
    void *lib = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf (err, errlen, "no usable GPU: the NVIDIA driver (libcuda.so.1) "
                               "is not installed on this machine");
        return -1;
    }
    cu_init_fn init = (cu_init_fn) dlsym (lib, "cuInit");
    cu_count_fn count = (cu_count_fn) dlsym (lib, "cuDeviceGetCount");
    cu_get_fn get = (cu_get_fn) dlsym (lib, "cuDeviceGet");
    cu_name_fn name = (cu_name_fn) dlsym (lib, "cuDeviceGetName");
    cu_mem_fn mem = (cu_mem_fn) dlsym (lib, "cuDeviceTotalMem_v2");
    int n = 0, rc;
    if (!init || !count || !get || !name || !mem) {
        snprintf (err, errlen, "no usable GPU: the NVIDIA driver library lacks "
                               "the device query functions");
        goto fail;
    }
    if ((rc = init (0)) != 0 || (rc = count (&n)) != 0 || n == 0) {
        snprintf (err, errlen, "no usable GPU: the CUDA driver found %s (error %d)",
                  n == 0 ? "no device" : "a problem", rc);
        goto fail;
    }
    int idx[QC_PROTO_MAX_GPUS];
    size_t k;
    if (parse_list (spec, n, idx, &k, err, errlen))
        goto fail;
    *gpus = calloc (k, sizeof **gpus);
    if (!*gpus) {
        snprintf (err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < k; i++) {
        int dev;
        char buf[256] = "";
        size_t bytes = 0;
        if (get (&dev, idx[i]) || name (buf, sizeof buf, dev) || mem (&bytes, dev)) {
            snprintf (err, errlen, "no usable GPU: cannot query GPU %d", idx[i]);
            goto fail;
        }
        (*gpus)[i].index = (uint32_t) idx[i];
        (*gpus)[i].name = strdup (buf);
        (*gpus)[i].memory_mb = bytes >> 20;
        (*ngpus)++;
        if (!(*gpus)[i].name) {
            snprintf (err, errlen, "out of memory");
            goto fail;
        }
    }
    /* the library stays loaded: the CUDA backend will use the driver */
    return 0;
fail:
    for (size_t i = 0; *gpus && i < *ngpus; i++)
        free ((*gpus)[i].name);
    free (*gpus);
    *gpus = NULL;
    *ngpus = 0;
    dlclose (lib);
    return -1;
}

int
qc_gpu_simulated (unsigned count, qc_gpu_t **gpus, size_t *ngpus)
{
    if (!gpus || !ngpus || count == 0 || count > QC_PROTO_MAX_GPUS)
        return -1;
    *gpus = calloc (count, sizeof **gpus);
    if (!*gpus)
        return -1;
    for (unsigned i = 0; i < count; i++) {
        (*gpus)[i].index = i;
        (*gpus)[i].name = strdup ("simulated");
        (*gpus)[i].memory_mb = 0;
        if (!(*gpus)[i].name) {
            *ngpus = i;
            return -1;
        }
    }
    *ngpus = count;
    return 0;
}
