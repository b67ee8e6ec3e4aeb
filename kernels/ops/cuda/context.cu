/* The CUDA backend's per-device state: which device a thread is bound
 * to, and a pool of device buffers per device bounded by a byte limit.
 *
 * The pool keeps freed buffers for reuse (cudaMalloc and cudaFree
 * synchronise the device, and the ops of one slide ask for the same
 * sizes again and again). A request takes the smallest free buffer that
 * fits without wasting more than half of it; otherwise it allocates when
 * the limit allows, after giving cached buffers back if needed; otherwise
 * it fails, logged, and the op returns -1. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "shared/log.h"
}
#include "kernels/ops/cuda/cuda_internal.h"

#define MAX_DEVICES 64
/* a resident lane holds a slide's images as well as each op's buffers */
#define MAX_BLOCKS 1024

typedef struct {
    void *p;
    size_t size;
    int used;
} block_t;

typedef struct {
    int ready;
    int limit_given;          /* by --gpu-mem (qc_cuda_set_mem_limit) */
    size_t limit, held;
    size_t in_use, peak;      /* bytes of the used blocks; their most */
    block_t blocks[MAX_BLOCKS];
    int nblocks;
} pool_t;

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pool_t s_pools[MAX_DEVICES];
static __thread int t_device = -1;

int
qc_cuda_failed (cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess)
        return 0;
    qc_log (QC_LOG_ERROR, "cuda", "%s failed at %s:%d: %s (%s)", what, file,
            line, cudaGetErrorString (e), cudaGetErrorName (e));
    return 1;
}

extern "C" int
qc_cuda_built (void)
{
    return 1;
}

extern "C" int
qc_cuda_device_count (char *err, size_t errlen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount (&n);
    if (e != cudaSuccess || n < 1) {
        if (err && errlen)
            snprintf (err, errlen, "no usable CUDA device: %s",
                      e == cudaErrorInsufficientDriver
                          ? "no NVIDIA driver, or one older than this program's "
                            "CUDA runtime"
                          : e != cudaSuccess ? cudaGetErrorString (e) : "none found");
        /* a failed query leaves a sticky-free error; clear it */
        cudaGetLastError ();
        return -1;
    }
    return n;
}

extern "C" int
qc_cuda_bind (int device, int resident)
{
    char why[256];
    int n = qc_cuda_device_count (why, sizeof why);
    if (n < 0) {
        qc_log (QC_LOG_ERROR, "cuda", "GPU %d: %s", device, why);
        return -1;
    }
    if (device < 0 || device >= n || device >= MAX_DEVICES) {
        qc_log (QC_LOG_ERROR, "cuda", "no GPU %d: this machine has %d", device, n);
        return -1;
    }
    if (qc_cuda_failed (cudaSetDevice (device), "cudaSetDevice", __FILE__, __LINE__))
        return -1;
    /* A resident lane keeps every image of a slide on the GPU (at 10x a
     * 60,000 x 45,000 slide's planes are 0.2-0.7 GB each): unless
     * --gpu-mem said otherwise, its pool may take 85% of the GPU. */
    size_t free_b = 0, total_b = 0;
    if (resident && cudaMemGetInfo (&free_b, &total_b) != cudaSuccess) {
        cudaGetLastError ();
        total_b = 0;
    }
    pthread_mutex_lock (&s_lock);
    pool_t *pl = &s_pools[device];
    int first = !pl->ready;
    if (first) {
        if (!pl->limit)
            pl->limit = QC_CUDA_DEFAULT_MEM;
        pl->ready = 1;
    }
    if (!pl->limit_given && total_b / 100 * 85 > pl->limit)
        pl->limit = total_b / 100 * 85;
    size_t limit = pl->limit;
    pthread_mutex_unlock (&s_lock);
    cudaDeviceProp prop;
    /* Once per device and process: which GPU runs the CUDA backend, in
     * the worker's log (a lab checks that its GPU lanes are real). */
    if (first && cudaGetDeviceProperties (&prop, device) == cudaSuccess)
        qc_log (QC_LOG_INFO, "cuda", "GPU %d: %s, %.1f GiB, compute capability %d.%d: "
                "CUDA backend ready (%s lane, buffer pool up to %.1f GiB)", device,
                prop.name, (double) prop.totalGlobalMem / (1 << 30), prop.major,
                prop.minor, resident ? "resident" : "copying",
                (double) limit / (1 << 30));
    cudaGetLastError ();
    t_device = device;
    return 0;
}

extern "C" const qc_ops_t *
qc_ops_cuda_resident (int device)
{
    return qc_cuda_bind (device, 1) == 0 ? qc_ops_cuda_resident_table () : NULL;
}

extern "C" const qc_ops_t *
qc_ops_cuda (int device)
{
    /* the resident lane unless the environment asks for the copying one */
    const char *r = getenv ("QC_GPU_RESIDENT");
    if (r && strcmp (r, "0") == 0)
        return qc_cuda_bind (device, 0) == 0 ? qc_ops_cuda_table () : NULL;
    return qc_ops_cuda_resident (device);
}

extern "C" int
qc_cuda_set_mem_limit (int device, size_t bytes)
{
    if (device < 0 || device >= MAX_DEVICES)
        return -1;
    pthread_mutex_lock (&s_lock);
    s_pools[device].limit = bytes ? bytes : QC_CUDA_DEFAULT_MEM;
    s_pools[device].limit_given = bytes != 0;
    pthread_mutex_unlock (&s_lock);
    return 0;
}

int
qc_cuda_begin (void)
{
    if (t_device < 0) {
        qc_log (QC_LOG_ERROR, "cuda", "CUDA op called on a thread that no "
                "qc_ops_cuda (device) call bound to a device");
        return -1;
    }
    return qc_cuda_failed (cudaSetDevice (t_device), "cudaSetDevice",
                           __FILE__, __LINE__) ? -1 : 0;
}

/* Frees the unused buffers of pl (lock held, device current). */
static void
trim (pool_t *pl)
{
    int k = 0;
    for (int i = 0; i < pl->nblocks; i++) {
        if (pl->blocks[i].used) {
            pl->blocks[k++] = pl->blocks[i];
            continue;
        }
        qc_cuda_failed (cudaFree (pl->blocks[i].p), "cudaFree", __FILE__, __LINE__);
        pl->held -= pl->blocks[i].size;
    }
    pl->nblocks = k;
}

void *
qc_cuda_alloc (size_t bytes)
{
    if (t_device < 0)
        return NULL;
    /* 256-byte granules: the kernels' vector loads stay aligned */
    size_t want = (bytes + 255) & ~(size_t) 255;
    if (want < bytes)
        return NULL;
    pool_t *pl = &s_pools[t_device];
    void *out = NULL;
    pthread_mutex_lock (&s_lock);
    int best = -1;
    for (int i = 0; i < pl->nblocks; i++) {
        block_t *b = &pl->blocks[i];
        if (!b->used && b->size >= want && b->size / 2 <= want
            && (best < 0 || b->size < pl->blocks[best].size))
            best = i;
    }
    if (best >= 0) {
        pl->blocks[best].used = 1;
        out = pl->blocks[best].p;
        pl->in_use += pl->blocks[best].size;
    } else {
        if (pl->held + want > pl->limit || pl->nblocks == MAX_BLOCKS)
            trim (pl);
        if (pl->held + want > pl->limit || pl->nblocks == MAX_BLOCKS) {
            /* the pipeline runs the slide again on the copying lane
             * (qc_place_take_full), which holds one op's images */
            qc_place_note_full ();
            qc_log (QC_LOG_WARNING, "cuda", "GPU %d: %zu bytes more would "
                    "pass the device memory limit (%zu of %zu held): the "
                    "slide's images do not fit this GPU at this working "
                    "size (a resident lane holds ~36 bytes a pixel of its working size); "
                    "--gpu-mem raises the limit if the GPU has more",
                    t_device, want, pl->held, pl->limit);
        } else {
            cudaError_t e = cudaMalloc (&out, want);
            if (e == cudaErrorMemoryAllocation) {
                cudaGetLastError ();
                trim (pl);
                e = cudaMalloc (&out, want);
            }
            if (e == cudaErrorMemoryAllocation)
                qc_place_note_full ();   /* another process holds the rest */
            if (qc_cuda_failed (e, "cudaMalloc", __FILE__, __LINE__)) {
                out = NULL;
            } else {
                pl->blocks[pl->nblocks++] = block_t {out, want, 1};
                pl->held += want;
                pl->in_use += want;
            }
        }
    }
    if (pl->in_use > pl->peak)
        pl->peak = pl->in_use;
    pthread_mutex_unlock (&s_lock);
    return out;
}

void
qc_cuda_release (void *p)
{
    if (!p || t_device < 0)
        return;
    pool_t *pl = &s_pools[t_device];
    pthread_mutex_lock (&s_lock);
    for (int i = 0; i < pl->nblocks; i++)
        if (pl->blocks[i].p == p && pl->blocks[i].used) {
            pl->blocks[i].used = 0;
            pl->in_use -= pl->blocks[i].size;
        }
    pthread_mutex_unlock (&s_lock);
}

extern "C" size_t
qc_cuda_mem_peak (int device, int reset)
{
    if (device < 0 || device >= MAX_DEVICES)
        return 0;
    pthread_mutex_lock (&s_lock);
    pool_t *pl = &s_pools[device];
    size_t peak = pl->peak;     /* raised at each alloc: never under in_use */
    if (reset)
        pl->peak = pl->in_use;
    pthread_mutex_unlock (&s_lock);
    return peak;
}

extern "C" void
qc_cuda_release_all (void)
{
    pthread_mutex_lock (&s_lock);
    for (int d = 0; d < MAX_DEVICES; d++) {
        if (!s_pools[d].ready || !s_pools[d].nblocks)
            continue;
        if (cudaSetDevice (d) == cudaSuccess)
            trim (&s_pools[d]);
    }
    pthread_mutex_unlock (&s_lock);
    qc_cuda_jpeg_release ();    /* nvJPEG's handles hold device memory */
    if (t_device >= 0)
        cudaSetDevice (t_device);
    qc_cuda_stage_release ();
}
