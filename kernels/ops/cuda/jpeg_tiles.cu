/* decode_jpeg on the GPU with nvJPEG (ops.h; the CPU's is
 * kernels/ops/cpu/jpeg_tiles.c). nvJPEG decodes each tile's components
 * as they are stored (NVJPEG_OUTPUT_UNCHANGED: the IDCT's samples, no
 * upsampling, no colour conversion); the upsampling and the YCbCr to
 * RGB are kernels/ops/jpeg_math.h's, which are libjpeg's, so that a
 * tile's pixels differ from libtiff's only where nvJPEG's IDCT rounds
 * apart from libjpeg's islow. nvJPEG's own conversions (RGB output)
 * upsample its own way (replication, or another interpolation with
 * NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION), not libjpeg's.
 *
 * Batched: nvjpegDecodeBatched takes one output format for the whole
 * batch and its header puts no limit on which (outputs are sized "as
 * for single image decoding"), so NVJPEG_OUTPUT_UNCHANGED batches well:
 * up to BATCH tiles a call, into one device buffer of planes made once
 * per op, then one kernel a batch places them in dst. One nvjpegDecode a
 * tile would cost a call, its host work and its launches per tile.
 *
 * The backend is NVJPEG_BACKEND_GPU_HYBRID: it takes the compressed
 * streams in host memory and, in batches of more than 50 baseline
 * tiles (a slide level's, BATCH a call), decodes their Huffman codes on
 * the GPU; the default (hybrid) backend decodes them on the calling
 * thread, which is the lane's one CPU thread, and a 10x level's ~2,600
 * tiles would keep it busy longer than 16 threads of libjpeg take. Its
 * page-locked buffers are its own (its default pinned allocator), so the
 * streams are not copied here (placement.cu's staging buffers are for
 * images). QC_NVJPEG_BACKEND=default, hybrid, gpu or hardware (the
 * NVJPG engines of an A100, H100 or H200: baseline, one scan) chooses
 * another, to measure them (tests/bench/README.md); a backend this GPU
 * or library refuses falls back to the default one, logged.
 *
 * Off unless QC_GPU_DECODE=1 (the CUDA tables' decode_by_default is 0,
 * ops.h): on an H200 (2026-11-30) its pixels moved a slide's results
 * past test_cuda_equiv's bounds (a few small regions more or fewer, 1-4%
 * of a thumbnail's pixels a level apart) and it was no faster than the
 * CPU's threads (tests/bench/README.md, "nvJPEG").
 *
 * State: one handle per device and process (handles and states are
 * bound to the device current at their creation), made at a lane's
 * first decode and kept until qc_cuda_release_all (which destroys them,
 * so that compute-sanitizer's leak check sees nvJPEG's memory freed);
 * one decoding state per thread (a GPU lane is one thread, and nvJPEG's
 * states are not to be shared between threads), made at its first
 * decode and destroyed when the thread exits, by a key destructor as
 * placement.cu frees the thread's staging buffers.
 *
 * The library is loaded at run time (nvjpeg_api.h, nvjpeg_load.c): at
 * the tables' first use (ops_table.c), once a process; where it is not
 * found, the tables have no decode_jpeg and the host decodes (ops.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "shared/cli.h"
#include "shared/log.h"
}
#include "kernels/ops/cuda/cuda_internal.h"
#include "kernels/ops/cuda/nvjpeg_api.h"
#include "kernels/ops/jpeg_frame.h"
#include "kernels/ops/jpeg_math.h"

/* The toolkit the backend was built with (the Makefile): where its
 * libnvjpeg is installed, when the loader's paths do not have it. */
#ifndef QC_CUDA_ROOT
#define QC_CUDA_ROOT NULL
#endif

namespace {

/* Tiles one nvjpegDecodeBatched call takes: more than 50, where the
 * GPU-assisted Huffman decoding of NVJPEG_BACKEND_GPU_HYBRID starts
 * (nvjpeg.h), the backend a lane uses by default; and no more planes than
 * BATCH_BYTES (3 bytes a pixel at most, 4:4:4) unless one tile is
 * larger. */
const int BATCH = 64;
const size_t BATCH_BYTES = (size_t) 256 << 20;
const int MAX_DEVICES = 64;

/* One tile on the device: its components (device addresses), where its
 * top-left pixel lands in dst, and how much of it is picture. */
struct tile_dev {
    qc_jpeg_planes_t pl;
    long long x, y;
    int w, h;
};

__global__ void
k_fill (uint8_t *dst, size_t n, uint8_t r, uint8_t g, uint8_t b)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    dst[i * 3] = r;
    dst[i * 3 + 1] = g;
    dst[i * 3 + 2] = b;
}

/* Tile blockIdx.y of the batch, one thread a pixel of its frame: the
 * pixels of its picture inside dst (w x h) get jpeg_math.h's pixel of
 * the tile's components. */
__global__ void
k_tiles (const tile_dev *tiles, int tw, int th, int ycbcr, uint8_t *dst,
         int w, int h)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (unsigned) tw * (unsigned) th)
        return;
    const tile_dev *t = &tiles[blockIdx.y];
    int tx = (int) (i % (unsigned) tw), ty = (int) (i / (unsigned) tw);
    long long x = t->x + tx, y = t->y + ty;
    if (tx >= t->w || ty >= t->h || x < 0 || y < 0 || x >= w || y >= h)
        return;
    qc_jpeg_pixel (&t->pl, ycbcr, tx, ty, dst + ((size_t) y * w + x) * 3);
}

const char *
status_name (qc_nvjpeg_status_t s)
{
    switch (s) {
    case QC_NVJPEG_STATUS_SUCCESS: return "success";
    case QC_NVJPEG_STATUS_NOT_INITIALIZED: return "not initialized";
    case QC_NVJPEG_STATUS_INVALID_PARAMETER: return "invalid parameter";
    case QC_NVJPEG_STATUS_BAD_JPEG: return "bad JPEG";
    case QC_NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "JPEG not supported";
    case QC_NVJPEG_STATUS_ALLOCATOR_FAILURE: return "allocator failure";
    case QC_NVJPEG_STATUS_EXECUTION_FAILED: return "execution failed";
    case QC_NVJPEG_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case QC_NVJPEG_STATUS_INTERNAL_ERROR: return "internal error";
    case QC_NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "not implemented";
    case QC_NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "incomplete bitstream";
    default: return "unknown status";
    }
}

/* Logs a failed nvJPEG call; 0 on success. A failure is the caller's cue
 * to read the slide on the host (ops.h), not a fault of this process:
 * a warning. */
int
nv_failed (qc_nvjpeg_status_t s, const char *what)
{
    if (s == QC_NVJPEG_STATUS_SUCCESS)
        return 0;
    qc_log (QC_LOG_WARNING, "cuda", "nvJPEG: %s failed: %s (%d); the host "
            "decodes these tiles", what, status_name (s), (int) s);
    return 1;
}

/* ---- the handle of each device ---- */

/* The backend QC_NVJPEG_BACKEND names (the top of this file; checked
 * at the programs' start, shared/cli.c), else GPU_HYBRID. */
qc_nvjpeg_backend_t
chosen_backend (void)
{
    const char *env = getenv ("QC_NVJPEG_BACKEND");
    int b = qc_cli_nvjpeg_backend (env);
    if (b >= 0)
        return static_cast<qc_nvjpeg_backend_t> (b);
    qc_log (QC_LOG_WARNING, "cuda", "QC_NVJPEG_BACKEND=%s: not default, hybrid, "
            "gpu or hardware; the gpu backend decodes", env);
    return QC_NVJPEG_BACKEND_GPU_HYBRID;
}

/* ---- the library ---- */

qc_nvjpeg_api_t s_api;
int s_api_ok;
pthread_once_t s_api_once = PTHREAD_ONCE_INIT;

/* Loads nvJPEG, once a process, and says what decodes a GPU lane's
 * JPEG tiles. Never unloaded: its handles come and go with
 * qc_cuda_release_all, the library stays. */
void
api_load (void)
{
    char err[2048];
    if (qc_nvjpeg_find (CUDART_VERSION / 1000, QC_CUDA_ROOT, &s_api, err, sizeof err) == 0) {
        s_api_ok = 1;
        qc_log (QC_LOG_INFO, "cuda", "nvJPEG %d.%d.%d (%s): %s", s_api.version[0],
                s_api.version[1], s_api.version[2], s_api.path,
                qc_jpeg_decode_wanted (QC_CUDA_DECODE_BY_DEFAULT)
                    ? "GPU lanes decode the slides' JPEG tiles with it (QC_GPU_DECODE=1)"
                    : "loaded; the CPU decodes the slides' JPEG tiles unless "
                      "QC_GPU_DECODE=1 (off by default: no faster, and its results "
                      "drift from libjpeg's)");
        return;
    }
    const char *env = getenv ("QC_NVJPEG_LIB");
    qc_log (env && *env ? QC_LOG_WARNING : QC_LOG_INFO, "cuda",
            "no nvJPEG (%s): GPU lanes' JPEG tiles are decoded on the host, "
            "also with QC_GPU_DECODE=1; CUDA's libnvjpeg on the loader's paths, "
            "in %s/lib64, or named by QC_NVJPEG_LIB=FILE lets the GPU decode "
            "them", err,
            QC_CUDA_ROOT ? QC_CUDA_ROOT : "the toolkit's folder");
}

pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
qc_nvjpeg_handle_t s_handle[MAX_DEVICES];
int s_handle_failed[MAX_DEVICES];   /* tried once: no log at every op */

/* The handle of device (current), made at its first use; NULL (logged
 * once) when nvJPEG cannot start on it. */
qc_nvjpeg_handle_t
device_handle (int device)
{
    if (device < 0 || device >= MAX_DEVICES)
        return NULL;
    pthread_mutex_lock (&s_lock);
    qc_nvjpeg_handle_t h = s_handle[device];
    if (!h && !s_handle_failed[device]) {
        /* Strict first: a stream with errors fails, as libjpeg's warnings
         * fail a tile on the CPU (and libtiff's read on the host), instead
         * of decoding what nvJPEG can of it; a library that refuses the
         * flag (its header once said flags "must be 0") gets none. The
         * backend asked for, then the default one (logged). */
        const qc_nvjpeg_backend_t want = chosen_backend ();
        const struct { qc_nvjpeg_backend_t backend; unsigned flags; } tries[] = {
            { want, QC_NVJPEG_FLAGS_BITSTREAM_STRICT },
            { want, QC_NVJPEG_FLAGS_DEFAULT },
            { QC_NVJPEG_BACKEND_DEFAULT, QC_NVJPEG_FLAGS_BITSTREAM_STRICT },
            { QC_NVJPEG_BACKEND_DEFAULT, QC_NVJPEG_FLAGS_DEFAULT },
        };
        qc_nvjpeg_status_t s = QC_NVJPEG_STATUS_NOT_INITIALIZED, refused = s;
        for (size_t i = 0; i < sizeof tries / sizeof *tries; i++) {
            if (i >= 2 && want == QC_NVJPEG_BACKEND_DEFAULT)
                break;
            if (i == 2)
                qc_log (QC_LOG_WARNING, "cuda", "nvJPEG: backend %d refused on GPU %d "
                        "(%s): the default backend decodes", (int) want, device,
                        status_name (refused));
            h = NULL;
            s = s_api.create_ex (tries[i].backend, NULL, NULL, tries[i].flags, &h);
            if (s == QC_NVJPEG_STATUS_SUCCESS)
                break;
            refused = s;
        }
        if (nv_failed (s, "nvjpegCreateEx")) {
            h = NULL;
            s_handle_failed[device] = 1;
        }
        s_handle[device] = h;
    }
    pthread_mutex_unlock (&s_lock);
    return h;
}

/* ---- the state of each thread ---- */

/* Bumped by qc_cuda_jpeg_release, which destroys the handles: a
 * thread's state made before is then forgotten, not destroyed (its
 * handle is gone). */
unsigned s_generation;

struct lane_t {
    qc_nvjpeg_state_t state;
    unsigned generation;    /* s_generation when state was made */
    int device;             /* whose handle made state */
    int batch;              /* the batch size state was initialised for;
                               0: none (or the last batch failed) */
};

__thread lane_t t_lane;
pthread_key_t s_lane_key;
pthread_once_t s_lane_once = PTHREAD_ONCE_INIT;
int s_lane_key_ok;

void
lane_free (lane_t *l)
{
    pthread_mutex_lock (&s_lock);
    if (l->state && l->generation == s_generation)
        s_api.state_destroy (l->state);
    pthread_mutex_unlock (&s_lock);
    memset (l, 0, sizeof *l);
}

/* At a thread's exit (the key's value is its lane_t). */
void
lane_at_exit (void *arg)
{
    lane_free (static_cast<lane_t *> (arg));
}

void
lane_key_make (void)
{
    s_lane_key_ok = pthread_key_create (&s_lane_key, lane_at_exit) == 0;
    if (!s_lane_key_ok)
        qc_log (QC_LOG_WARNING, "cuda", "no thread key: nvJPEG decoding "
                "states stay until the process ends");
}

/* The calling thread's state for device (current, whose handle is h),
 * made at first use; NULL (logged) on failure. */
lane_t *
lane_for (qc_nvjpeg_handle_t h, int device)
{
    lane_t *l = &t_lane;
    pthread_mutex_lock (&s_lock);
    unsigned generation = s_generation;
    pthread_mutex_unlock (&s_lock);
    if (l->state && l->generation != generation)
        memset (l, 0, sizeof *l);       /* its handle was released */
    if (l->state && l->device == device)
        return l;
    if (l->state) {
        /* the thread was bound to another device since: its state is
         * bound to that one, and goes with it current */
        if (cudaSetDevice (l->device) == cudaSuccess)
            lane_free (l);
        cudaGetLastError ();
        memset (l, 0, sizeof *l);
        if (qc_cuda_failed (cudaSetDevice (device), "cudaSetDevice", __FILE__,
                            __LINE__))
            return NULL;
    }
    pthread_once (&s_lane_once, lane_key_make);
    if (nv_failed (s_api.state_create (h, &l->state), "nvjpegJpegStateCreate")) {
        l->state = NULL;
        return NULL;
    }
    l->device = device;
    l->generation = generation;
    l->batch = 0;
    if (s_lane_key_ok)
        pthread_setspecific (s_lane_key, l);
    return l;
}

/* ---- the tiles ---- */

/* 1 when tile t's picture has pixels inside a w x h dst (no sum that
 * overflows: x and y may be anything). */
int
covers (const qc_jpeg_tile_t *t, int w, int h)
{
    return t->x < w && t->y < h && t->x > -(int64_t) t->w
           && t->y > -(int64_t) t->h;
}

/* libjpeg's expansion of the chroma components (max_h_samp / h_samp,
 * max_v_samp / v_samp) for nvJPEG's name of a tile's sampling; -1 for
 * the others (4:1:1, 4:1:0, gray, unknown), which the host decodes. */
int
chroma_expansion (qc_nvjpeg_css_t s, int *he, int *ve)
{
    switch (s) {
    case QC_NVJPEG_CSS_444: *he = 1; *ve = 1; return 0;
    case QC_NVJPEG_CSS_422: *he = 2; *ve = 1; return 0;
    case QC_NVJPEG_CSS_420: *he = 2; *ve = 2; return 0;
    case QC_NVJPEG_CSS_440: *he = 1; *ve = 2; return 0;
    default: return -1;
    }
}

/* Tile t's components as libjpeg sees them (planes, px left NULL): 0,
 * or -1 when it is not a tile this op decodes as libjpeg does. The
 * frame's factors give libjpeg's layout (jpeg_frame.h); nvJPEG's image
 * info must say the same: its name for the sampling that expansion (the
 * luma whole, both chroma components alike), each component's size
 * libjpeg's, since the planes nvJPEG writes are laid out by it. */
int
tile_planes (qc_nvjpeg_handle_t h, const qc_jpeg_batch_t *b,
             const qc_jpeg_tile_t *t, qc_jpeg_planes_t *pl)
{
    qc_jpeg_frame_t f;
    if (qc_jpeg_frame_read (t->data, t->size, &f) != 0
        || qc_jpeg_frame_planes (&f, b, pl) != 0)
        return -1;
    int nc = 0, ws[QC_NVJPEG_MAX_COMPONENT] = {0}, hs[QC_NVJPEG_MAX_COMPONENT] = {0};
    qc_nvjpeg_css_t css = QC_NVJPEG_CSS_UNKNOWN;
    int che = 0, cve = 0;
    if (s_api.get_image_info (h, t->data, t->size, &nc, &css, ws, hs)
            != QC_NVJPEG_STATUS_SUCCESS
        || nc != 3 || chroma_expansion (css, &che, &cve) != 0)
        return -1;
    for (int c = 0; c < 3; c++)
        if (pl->he[c] != (c ? che : 1) || pl->ve[c] != (c ? cve : 1)
            || ws[c] != pl->w[c] || hs[c] != pl->h[c])
            return -1;
    return 0;
}

/* Host memory freed on every way out. */
template <typename T> struct HostArray {
    T *p;
    explicit HostArray (size_t n)
        : p (static_cast<T *> (calloc (n ? n : 1, sizeof (T)))) {}
    ~HostArray () { free (p); }
    HostArray (const HostArray &) = delete;
    HostArray &operator= (const HostArray &) = delete;
};

/* Decodes k tiles into their planes (img) on the op's stream. */
int
decode_batch (qc_nvjpeg_handle_t h, lane_t *lane, const unsigned char *const *data,
              const size_t *len, qc_nvjpeg_image_t *img, int k)
{
    /* Initialised again only when the size changes (a call's last batch,
     * usually) or after a failure, which the header says it resets. */
    if (lane->batch != k) {
        lane->batch = 0;
        if (nv_failed (s_api.batched_init (h, lane->state, k, 1, QC_NVJPEG_OUTPUT_UNCHANGED),
                       "nvjpegDecodeBatchedInitialize"))
            return -1;
        lane->batch = k;
    }
    if (nv_failed (s_api.batched (h, lane->state, data, len, img, QC_STREAM),
                   "nvjpegDecodeBatched")) {
        lane->batch = 0;
        return -1;
    }
    return 0;
}

/* The op, in sc (the caller waits for the stream before sc gives the
 * buffers back, whichever way this returns). */
int
decode_jpeg (QcScope &sc, qc_nvjpeg_handle_t h, lane_t *lane,
             const qc_jpeg_batch_t *b, qc_rgb_t *dst)
{
    const int tw = b->tile_w, th = b->tile_h;
    /* The tiles dst shows (the CPU skips the rest too), each checked
     * before anything is written. */
    HostArray<tile_dev> td (b->n);
    HostArray<size_t> which (b->n);
    if (!td.p || !which.p)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < b->n; i++) {
        const qc_jpeg_tile_t *t = &b->tiles[i];
        if (!covers (t, dst->w, dst->h))
            continue;
        if (tile_planes (h, b, t, &td.p[n].pl) != 0) {
            qc_log (QC_LOG_DEBUG, "cuda", "nvJPEG: tile %zu is not a %d x %d "
                    "8-bit 3-component JPEG of the batch's sampling, one "
                    "decoded as libjpeg does: the host decodes these tiles",
                    i, tw, th);
            return -1;
        }
        td.p[n].x = (long long) t->x;
        td.p[n].y = (long long) t->y;
        td.p[n].w = t->w;
        td.p[n].h = t->h;
        which.p[n++] = i;
    }

    QC_OUT (sc, uint8_t, d_dst, dst);
    size_t npix = qc_npix (dst->w, dst->h);
    QC_LAUNCH (k_fill, npix, d_dst, npix, b->bg[0], b->bg[1], b->bg[2]);
    if (n == 0) {
        QC_FINISH (sc);
        return 0;
    }

    /* One slot of planes a tile of a batch, the size of 4:4:4's (a
     * subsampled tile uses part of it), reused batch after batch: the
     * stream orders a batch's decoding after the last one's kernel. */
    size_t slot = (size_t) 3 * (size_t) tw * (size_t) th;
    size_t per = BATCH_BYTES / slot;
    per = per < 1 ? 1 : per > (size_t) BATCH ? (size_t) BATCH : per;
    per = per > n ? n : per;
    QC_GET (sc, uint8_t, planes, slot * per);
    QC_GET (sc, tile_dev, d_td, n);
    for (size_t j = 0; j < n; j++) {
        qc_jpeg_planes_t *pl = &td.p[j].pl;
        uint8_t *base = planes + (j % per) * slot;
        pl->px[0] = base;
        pl->px[1] = base + (size_t) pl->w[0] * (size_t) pl->h[0];
        pl->px[2] = pl->px[1] + (size_t) pl->w[1] * (size_t) pl->h[1];
    }
    QC_UP (d_td, td.p, n);

    const unsigned char *data[BATCH];
    size_t len[BATCH];
    qc_nvjpeg_image_t img[BATCH];
    dim3 grid ((unsigned) (((size_t) tw * (size_t) th + 255) / 256), 1);
    for (size_t s = 0; s < n; s += per) {
        int k = (int) (n - s < per ? n - s : per);
        for (int j = 0; j < k; j++) {
            const qc_jpeg_tile_t *t = &b->tiles[which.p[s + j]];
            const qc_jpeg_planes_t *pl = &td.p[s + j].pl;
            data[j] = t->data;
            len[j] = t->size;
            memset (&img[j], 0, sizeof img[j]);
            for (int c = 0; c < 3; c++) {
                /* nvJPEG writes them: device bytes of ours */
                img[j].channel[c] = const_cast<uint8_t *> (pl->px[c]);
                img[j].pitch[c] = (size_t) pl->stride[c];
            }
        }
        if (decode_batch (h, lane, data, len, img, k) != 0)
            return -1;
        grid.y = (unsigned) k;
        k_tiles<<<grid, 256, 0, QC_STREAM>>> (d_td + s, tw, th, b->ycbcr,
                                              d_dst, dst->w, dst->h);
        QC_CK_LAUNCH ();
    }
    QC_FINISH (sc);
    return 0;
}

} // namespace

extern "C" int
qc_cuda_jpeg_available (void)
{
    pthread_once (&s_api_once, api_load);
    return s_api_ok;
}

extern "C" void
qc_cuda_jpeg_release (void)
{
    if (!qc_cuda_jpeg_available ())
        return;
    lane_free (&t_lane);
    pthread_mutex_lock (&s_lock);
    for (int d = 0; d < MAX_DEVICES; d++) {
        if (s_handle[d] && cudaSetDevice (d) == cudaSuccess)
            s_api.destroy (s_handle[d]);
        s_handle[d] = NULL;
        s_handle_failed[d] = 0;
    }
    s_generation++;
    pthread_mutex_unlock (&s_lock);
    cudaGetLastError ();
}

extern "C" int
qc_cuda_decode_jpeg (const qc_jpeg_batch_t *batch, qc_rgb_t *dst)
{
    if (qc_jpeg_batch_check (batch) != 0 || !qc_rgb_valid (dst) || qc_cuda_begin ())
        return -1;
    if (!qc_cuda_jpeg_available ())
        return -1;
    int device = -1;
    QC_CK (cudaGetDevice (&device));
    qc_nvjpeg_handle_t h = device_handle (device);
    lane_t *lane = h ? lane_for (h, device) : NULL;
    if (!lane)
        return -1;
    QcScope sc;
    if (decode_jpeg (sc, h, lane, batch, dst) == 0)
        return 0;
    /* nvJPEG's or a kernel's work may still be queued on the planes and
     * dst: done before the scope gives its buffers to other threads */
    cudaStreamSynchronize (QC_STREAM);
    cudaGetLastError ();
    return -1;
}

