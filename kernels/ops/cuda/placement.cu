/* The CUDA device as a place for images (image_place.h) and the doors
 * each op goes through to its images (cuda_internal.h: QC_IN, QC_OUT,
 * QC_FINISH).
 *
 * Copies between host and device that remain (the slide's pixels going
 * up, a PNG's coming down) go through two page-locked staging buffers
 * per thread, STAGE bytes each, alternating so that one chunk's memcpy
 * on the CPU overlaps the other's DMA: pageable memory copies at about
 * half the speed (the driver stages it itself, one chunk at a time).
 * A thread's buffers are freed when it exits (a key destructor) or by
 * qc_cuda_release_all on it. Checked on an H100 (test_cuda_equiv and
 * compute-sanitizer memcheck, 2026-11-27). */
#include <pthread.h>
#include <string.h>

extern "C" {
#include "shared/log.h"
}
#include "kernels/ops/cuda/cuda_internal.h"

#define STAGE ((size_t) 16 << 20)

typedef struct {
    void *buf[2];
    cudaEvent_t done[2];
    int ready;                /* 0 not tried, 1 made, -1 failed */
} stage_t;

static __thread stage_t t_stage;
static pthread_key_t s_stage_key;
static pthread_once_t s_stage_once = PTHREAD_ONCE_INIT;
static int s_stage_key_ok;

static void
stage_free (stage_t *s)
{
    for (int i = 0; i < 2; i++) {
        if (s->buf[i])
            cudaFreeHost (s->buf[i]);
        if (s->done[i])
            cudaEventDestroy (s->done[i]);
    }
    cudaGetLastError ();
    memset (s, 0, sizeof *s);
}

/* At a thread's exit (the key's value is its stage_t). */
static void
stage_at_exit (void *arg)
{
    stage_free ((stage_t *) arg);
}

static void
stage_key_make (void)
{
    s_stage_key_ok = pthread_key_create (&s_stage_key, stage_at_exit) == 0;
    if (!s_stage_key_ok)
        qc_log (QC_LOG_WARNING, "cuda", "no thread key: staging buffers are "
                "freed only by qc_cuda_release_all");
}

extern "C" void
qc_cuda_stage_release (void)
{
    stage_free (&t_stage);
}

/* The thread's staging buffers, made at first use: 0, or -1 (then the
 * copies go straight from pageable memory). */
static int
stage_ready (void)
{
    stage_t *s = &t_stage;
    if (s->ready)
        return s->ready > 0 ? 0 : -1;
    pthread_once (&s_stage_once, stage_key_make);
    s->ready = -1;
    for (int i = 0; i < 2; i++)
        if (cudaMallocHost (&s->buf[i], STAGE) != cudaSuccess
            || cudaEventCreateWithFlags (&s->done[i], cudaEventDisableTiming)
                   != cudaSuccess) {
            cudaGetLastError ();
            qc_log (QC_LOG_WARNING, "cuda", "no page-locked staging buffers: "
                    "copies go from pageable memory (slower)");
            stage_free (s);
            s->ready = -1;
            return -1;
        }
    if (s_stage_key_ok)
        pthread_setspecific (s_stage_key, s);
    s->ready = 1;
    return 0;
}

static int
dev_upload (void *dev, const void *host, size_t bytes)
{
    if (qc_cuda_begin ())
        return -1;
    if (stage_ready () != 0) {
        QC_CK (cudaMemcpyAsync (dev, host, bytes, cudaMemcpyHostToDevice,
                                QC_STREAM));
        QC_SYNC ();
        return 0;
    }
    stage_t *s = &t_stage;
    for (size_t off = 0, k = 0; off < bytes; off += STAGE, k ^= 1) {
        size_t n = bytes - off < STAGE ? bytes - off : STAGE;
        /* the buffer's last copy up must be done before it is refilled */
        QC_CK (cudaEventSynchronize (s->done[k]));
        memcpy (s->buf[k], (const char *) host + off, n);
        QC_CK (cudaMemcpyAsync ((char *) dev + off, s->buf[k], n,
                                cudaMemcpyHostToDevice, QC_STREAM));
        QC_CK (cudaEventRecord (s->done[k], QC_STREAM));
    }
    QC_SYNC ();
    return 0;
}

static int
dev_download (void *host, const void *dev, size_t bytes)
{
    if (qc_cuda_begin ())
        return -1;
    if (stage_ready () != 0) {
        QC_CK (cudaMemcpyAsync (host, dev, bytes, cudaMemcpyDeviceToHost,
                                QC_STREAM));
        QC_SYNC ();
        return 0;
    }
    stage_t *s = &t_stage;
    size_t nchunks = (bytes + STAGE - 1) / STAGE;
    /* chunk i + 1 comes down while chunk i is copied out */
    for (size_t i = 0; i < nchunks + 1; i++) {
        if (i < nchunks) {
            size_t off = i * STAGE, n = bytes - off < STAGE ? bytes - off : STAGE;
            QC_CK (cudaMemcpyAsync (s->buf[i & 1], (const char *) dev + off, n,
                                    cudaMemcpyDeviceToHost, QC_STREAM));
            QC_CK (cudaEventRecord (s->done[i & 1], QC_STREAM));
        }
        if (i > 0) {
            size_t j = i - 1, off = j * STAGE;
            size_t n = bytes - off < STAGE ? bytes - off : STAGE;
            QC_CK (cudaEventSynchronize (s->done[j & 1]));
            memcpy ((char *) host + off, s->buf[j & 1], n);
        }
    }
    return 0;
}

static int
dev_copy (void *dst, const void *src, size_t bytes)
{
    if (qc_cuda_begin ())
        return -1;
    QC_CK (cudaMemcpyAsync (dst, src, bytes, cudaMemcpyDeviceToDevice,
                            QC_STREAM));
    QC_SYNC ();
    return 0;
}

static int
dev_fill (void *dev, int byte, size_t bytes)
{
    if (qc_cuda_begin ())
        return -1;
    QC_CK (cudaMemsetAsync (dev, byte, bytes, QC_STREAM));
    QC_SYNC ();
    return 0;
}

static void *
dev_alloc (size_t bytes)
{
    return qc_cuda_begin () ? NULL : qc_cuda_alloc (bytes);
}

const qc_device_t qc_cuda_device_mem = {
    "cuda", dev_alloc, qc_cuda_release, dev_upload, dev_download, dev_copy,
    dev_fill,
};

/* 1 when an op should keep img on the device: its newest bytes are
 * there already, or the thread's home is the device. */
static int
keeps (qc_span_t s)
{
    return qc_span_on_device (s, &qc_cuda_device_mem)
           || qc_place_home () == &qc_cuda_device_mem;
}

void *
qc_cuda_in (QcScope &sc, qc_span_t s)
{
    void *d = NULL;
    if (keeps (s))
        d = qc_span_device (s, &qc_cuda_device_mem, QC_READ);
    else {
        const void *h = qc_span_host (s, QC_READ);
        d = h ? sc.get<unsigned char> (s.bytes) : NULL;
        if (d && qc_cuda_failed (cudaMemcpyAsync (d, h, s.bytes,
                                                  cudaMemcpyHostToDevice,
                                                  QC_STREAM),
                                 "cudaMemcpyAsync", __FILE__, __LINE__))
            d = NULL;
    }
    if (d && sc.nins < QC_SCOPE_MAX)
        sc.ins[sc.nins++] = d;
    return d;
}

void *
qc_cuda_out (QcScope &sc, qc_span_t s)
{
    if (sc.nouts >= 8)
        return NULL;
    int down = !keeps (s);
    void *own = NULL;
    if (!down) {
        /* the bytes an in-place op reads are current before it writes */
        int aliased = 0;
        for (int i = 0; i < sc.nins; i++)
            aliased |= s.at->dev && sc.ins[i] == s.at->dev;
        if (!(own = qc_span_device (s, &qc_cuda_device_mem,
                                    aliased ? QC_EDIT : QC_REWRITE)))
            return NULL;
        if (!aliased)
            return own;
    }
    void *tmp = sc.get<unsigned char> (s.bytes);
    if (!tmp)
        return NULL;
    sc.outs[sc.nouts].span = s;
    sc.outs[sc.nouts].tmp = tmp;
    sc.outs[sc.nouts].down = down;
    sc.nouts++;
    return tmp;
}

cudaError_t
qc_cuda_finish_err (QcScope &sc)
{
    for (int i = 0; i < sc.nouts; i++) {
        qc_span_t s = sc.outs[i].span;
        void *to = sc.outs[i].down ? qc_span_host (s, QC_REWRITE)
                                   : qc_span_device (s, &qc_cuda_device_mem,
                                                     QC_EDIT);
        if (!to)
            return cudaErrorMemoryAllocation;
        cudaError_t e = cudaMemcpyAsync (to, sc.outs[i].tmp, s.bytes,
                                         sc.outs[i].down
                                             ? cudaMemcpyDeviceToHost
                                             : cudaMemcpyDeviceToDevice,
                                         QC_STREAM);
        if (e != cudaSuccess)
            return e;
    }
    return cudaStreamSynchronize (QC_STREAM);
}
