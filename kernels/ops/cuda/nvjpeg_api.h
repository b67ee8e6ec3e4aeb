/* The part of nvJPEG's C API that decode_jpeg's CUDA op calls
 * (jpeg_tiles.cu), declared here and loaded at run time (nvjpeg_load.c),
 * not linked: one build of the programs then runs on every GPU machine,
 * decoding a slide's JPEG tiles on the GPU where CUDA's libnvjpeg is
 * installed and on the host where it is not (ops.h: a table without
 * decode_jpeg), and a build machine needs no nvJPEG (a toolkit without
 * it, this project's CI's, still compiles and checks the op).
 *
 * The names, values and layouts are nvJPEG's (CUDA 11 and later: the
 * library keeps them from version to version, adding at the ends), in
 * our own spelling so that nvjpeg_abi_check.cu can include the real
 * nvjpeg.h beside this file and assert, where a toolkit has it, that
 * every value, the image's layout and each function's parameters are
 * the same. nvJPEG 10 (CUDA 10) laid nvjpegImage_t out with 32-bit
 * pitches: the loader refuses versions before 11.
 *
 * C, for nvjpeg_load.c and its unit test, and C++ for the .cu. */
#ifndef QC_NVJPEG_API_H
#define QC_NVJPEG_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QC_NVJPEG_MAX_COMPONENT 4

typedef enum {
    QC_NVJPEG_STATUS_SUCCESS = 0,
    QC_NVJPEG_STATUS_NOT_INITIALIZED = 1,
    QC_NVJPEG_STATUS_INVALID_PARAMETER = 2,
    QC_NVJPEG_STATUS_BAD_JPEG = 3,
    QC_NVJPEG_STATUS_JPEG_NOT_SUPPORTED = 4,
    QC_NVJPEG_STATUS_ALLOCATOR_FAILURE = 5,
    QC_NVJPEG_STATUS_EXECUTION_FAILED = 6,
    QC_NVJPEG_STATUS_ARCH_MISMATCH = 7,
    QC_NVJPEG_STATUS_INTERNAL_ERROR = 8,
    QC_NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED = 9,
    QC_NVJPEG_STATUS_INCOMPLETE_BITSTREAM = 10,
} qc_nvjpeg_status_t;

/* A stream's chroma sampling as nvjpegGetImageInfo names it. */
typedef enum {
    QC_NVJPEG_CSS_444 = 0,
    QC_NVJPEG_CSS_422 = 1,
    QC_NVJPEG_CSS_420 = 2,
    QC_NVJPEG_CSS_440 = 3,
    QC_NVJPEG_CSS_411 = 4,
    QC_NVJPEG_CSS_410 = 5,
    QC_NVJPEG_CSS_GRAY = 6,
    QC_NVJPEG_CSS_410V = 7,
    QC_NVJPEG_CSS_UNKNOWN = -1,
} qc_nvjpeg_css_t;

/* Only UNCHANGED is used: each component as stored, not upsampled. */
typedef enum {
    QC_NVJPEG_OUTPUT_UNCHANGED = 0,
} qc_nvjpeg_output_t;

/* The decoders (QC_NVJPEG_BACKEND's names, shared/cli.h's
 * qc_cli_nvjpeg_backend, are these values' indices). */
typedef enum {
    QC_NVJPEG_BACKEND_DEFAULT = 0,
    QC_NVJPEG_BACKEND_HYBRID = 1,
    QC_NVJPEG_BACKEND_GPU_HYBRID = 2,
    QC_NVJPEG_BACKEND_HARDWARE = 3,
} qc_nvjpeg_backend_t;

/* nvjpegCreateEx's flags */
#define QC_NVJPEG_FLAGS_DEFAULT 0u
#define QC_NVJPEG_FLAGS_BITSTREAM_STRICT (1u << 2)

/* libraryPropertyType (library_types.h), nvjpegGetProperty's question */
#define QC_NVJPEG_PROPERTY_MAJOR 0
#define QC_NVJPEG_PROPERTY_MINOR 1
#define QC_NVJPEG_PROPERTY_PATCH 2

/* Where a decode writes each component: device addresses and pitches. */
typedef struct {
    unsigned char *channel[QC_NVJPEG_MAX_COMPONENT];
    size_t pitch[QC_NVJPEG_MAX_COMPONENT];
} qc_nvjpeg_image_t;

/* Opaque: the library's own structure tags, so that the check's types
 * are the real header's. */
struct nvjpegHandle;
struct nvjpegJpegState;
struct CUstream_st;     /* cudaStream_t is a pointer to it */
typedef struct nvjpegHandle *qc_nvjpeg_handle_t;
typedef struct nvjpegJpegState *qc_nvjpeg_state_t;

/* The functions: X (name in the library, field, return, parameters).
 * One list for the table's fields, the loader's dlsym and the check. */
#define QC_NVJPEG_FUNCTIONS(X)                                                  \
    X (nvjpegGetProperty, get_property, qc_nvjpeg_status_t,                     \
       (int type, int *value))                                                  \
    X (nvjpegCreateEx, create_ex, qc_nvjpeg_status_t,                           \
       (qc_nvjpeg_backend_t backend, void *dev_allocator,                       \
        void *pinned_allocator, unsigned int flags, qc_nvjpeg_handle_t *handle)) \
    X (nvjpegDestroy, destroy, qc_nvjpeg_status_t, (qc_nvjpeg_handle_t handle)) \
    X (nvjpegJpegStateCreate, state_create, qc_nvjpeg_status_t,                 \
       (qc_nvjpeg_handle_t handle, qc_nvjpeg_state_t *state))                   \
    X (nvjpegJpegStateDestroy, state_destroy, qc_nvjpeg_status_t,               \
       (qc_nvjpeg_state_t state))                                               \
    X (nvjpegGetImageInfo, get_image_info, qc_nvjpeg_status_t,                  \
       (qc_nvjpeg_handle_t handle, const unsigned char *data, size_t length,    \
        int *ncomponents, qc_nvjpeg_css_t *subsampling, int *widths,            \
        int *heights))                                                          \
    X (nvjpegDecodeBatchedInitialize, batched_init, qc_nvjpeg_status_t,         \
       (qc_nvjpeg_handle_t handle, qc_nvjpeg_state_t state, int batch_size,     \
        int max_cpu_threads, qc_nvjpeg_output_t format))                        \
    X (nvjpegDecodeBatched, batched, qc_nvjpeg_status_t,                        \
       (qc_nvjpeg_handle_t handle, qc_nvjpeg_state_t state,                     \
        const unsigned char *const *data, const size_t *lengths,                \
        qc_nvjpeg_image_t *destinations, struct CUstream_st *stream))

#define QC_NVJPEG_FIELD(name, field, ret, params) ret (*field) params;
/* A loaded library: its functions, where it came from, its version. */
typedef struct {
    QC_NVJPEG_FUNCTIONS (QC_NVJPEG_FIELD)
    void *dl;               /* dlopen's handle */
    char path[512];         /* the name dlopen was given */
    int version[3];         /* major, minor, patch */
} qc_nvjpeg_api_t;
#undef QC_NVJPEG_FIELD

/* Oldest nvJPEG whose layouts are these (above). */
#define QC_NVJPEG_MIN_MAJOR 11

/* Loads the library file or name path (as dlopen takes it) into api: 0,
 * or -1 with why in err (it did not open; a function is missing: not
 * nvJPEG; a version before QC_NVJPEG_MIN_MAJOR) and api zeroed. */
int qc_nvjpeg_open (const char *path, qc_nvjpeg_api_t *api, char *err,
                    size_t errlen);

/* The library this process uses: QC_NVJPEG_LIB in the environment
 * alone when set (a file or a name), else libnvjpeg.so.MAJOR (the CUDA
 * major the backend was built with, cuda_major > 0) on the loader's
 * paths, then in cuda_root's lib64 and targets/x86_64-linux/lib (where
 * the toolkit installs it, often not on those paths; root NULL: not
 * looked in). 0, or -1 with every try's reason in err. */
int qc_nvjpeg_find (int cuda_major, const char *cuda_root, qc_nvjpeg_api_t *api,
                    char *err, size_t errlen);

/* Unloads api (zeroed); NULL or an api never loaded: nothing. */
void qc_nvjpeg_close (qc_nvjpeg_api_t *api);

#ifdef __cplusplus
}
#endif

#endif /* QC_NVJPEG_API_H */
