/* Where an image's current bytes are: in host memory (px), in a device's
 * memory (a GPU's, or the test backend's), or both; and the one place
 * that copies them from one side to the other, only when the side that
 * was not written last is read.
 *
 * Why: a GPU lane that copies every op's inputs up and its outputs down
 * moves ~2 GB a call at 10x (issue 18). With a place per image, an op of
 * a device backend reads and writes device bytes, and a plane crosses
 * only when host code (a PNG, a module's own loop) reads it.
 *
 * The state of one image's bytes, in one place (image_place.c):
 *
 *               host write                 device write
 *     HOST ----------------------- BOTH ------------------------ DEVICE
 *      |  device read: upload  ->   ^   <- host read: download    |
 *      +----------------------------+-----------------------------+
 *     UNIFORM (every byte one value: a new image, or qc_mask_fill):
 *     either side is made by a fill, never by a copy.
 *
 * An image made on a thread whose home is a device (qc_place_set_home:
 * the pipeline sets it for the steps of a GPU lane) gets no host bytes
 * at all until host code asks for them; px is NULL until then. Every
 * host access therefore goes through qc_*_host / _host_edit /
 * _host_rewrite (image.h), which are a flag test for an image that has
 * never been on a device: the CPU backend pays nothing else.
 *
 * Not thread-safe per image: an image belongs to the run (thread) that
 * made it, as it always did. */
#ifndef QC_IMAGE_PLACE_H
#define QC_IMAGE_PLACE_H

#include <stddef.h>
#include <stdint.h>

/* A device's memory, as the images see it: a backend with device memory
 * (ops/cuda, ops/sim) fills one of these. Every function returns 0 on
 * success, -1 (logged by the device) on failure. */
typedef struct qc_device {
    const char *name;
    void *(*alloc) (size_t bytes);          /* NULL when out of memory */
    void (*release) (void *dev);
    int (*upload) (void *dev, const void *host, size_t bytes);
    int (*download) (void *host, const void *dev, size_t bytes);
    int (*copy) (void *dev_dst, const void *dev_src, size_t bytes);
    int (*fill) (void *dev, int byte, size_t bytes);
} qc_device_t;

/* One image's placement. All zero (what calloc gives) is a host image:
 * px is current and there is no device copy. */
typedef struct qc_place {
    const qc_device_t *device;   /* the device dev belongs to */
    void *dev;                   /* the device copy, or NULL */
    uint8_t host_stale;          /* px is missing or older than dev */
    uint8_t dev_stale;           /* dev is older than px (or unfilled) */
    uint8_t uniform;             /* every byte is value, whatever px and
                                    dev hold: a side is made by a fill */
    uint8_t value;
    uint64_t version;            /* new at every write through the doors
                                    below, unique in the process: what a
                                    cache of results of an image keys on
                                    (0: never written through them) */
} qc_place_t;

/* How the caller uses the bytes it asks for: READ them; EDIT them (read
 * and write: the other side becomes stale); REWRITE every byte without
 * reading (nothing is copied in; the other side becomes stale). */
typedef enum { QC_READ = 0, QC_EDIT, QC_REWRITE } qc_access_t;

/* An image's bytes as the functions below see them, whatever its type
 * (QC_SPAN in image.h makes one). */
typedef struct qc_span {
    qc_place_t *at;
    void **px;                   /* the image's px field */
    size_t bytes;                /* w * h * bytes per pixel */
    size_t npix;                 /* w * h */
} qc_span_t;

/* The host bytes, current, for access a: allocated when missing, copied
 * down when the device holds the newer ones. NULL (logged) when memory
 * or the copy fails. */
void *qc_span_host (qc_span_t s, qc_access_t a);
/* The bytes on device d, current, for access a: allocated there when
 * missing, copied up when the host holds the newer ones; a copy on
 * another device is brought to the host and dropped first. NULL when d
 * is NULL or memory or the copy fails. */
void *qc_span_device (qc_span_t s, const qc_device_t *d, qc_access_t a);
/* After a write the caller made to the device bytes of s (EDIT access
 * asked beforehand already says so; for a caller that wrote through a
 * pointer it had kept). */
void qc_span_device_wrote (qc_span_t s);
/* A new version for s, whose owner wrote px itself (a new image). */
void qc_span_touch (qc_span_t s);
/* Every byte of s is value from now on, on no side yet. */
void qc_span_set_uniform (qc_span_t s, int value);
/* 1 when the newest bytes of s are on device d (so an op of d reads
 * them without a copy). */
int qc_span_on_device (qc_span_t s, const qc_device_t *d);
/* Bytes [offset, offset + bytes) of s's newest copy into out, from
 * whichever side holds it, leaving where s is as it was (no host copy
 * made): for host code that looks at a few rows of a device image (a
 * sample of its pixels). Counted as peek_bytes, not as a copy. 0, or -1
 * (bad range, no current copy, the device's read failed). */
int qc_span_peek (qc_span_t s, size_t offset, size_t bytes, void *out);
/* Frees the device copy (the host bytes are the image's to free). */
void qc_span_drop_device (qc_span_t s);

/* ---- the thread's home: where images made on this thread start ---- */
void qc_place_set_home (const qc_device_t *d);
const qc_device_t *qc_place_home (void);

/* ---- a device that ran out of memory ---- */
/* A device backend calls this when it refuses memory because the device
 * (or the limit set on its pool) is full, not the host: the pipeline
 * reads it after a failed slide, and runs a slide whose images did not
 * fit a resident lane again on a lane that holds less (qc_ops_t's
 * when_full). Per thread, as the ops of a run are. */
void qc_place_note_full (void);
/* 1 when a device said so on this thread since the last call; clears it. */
int qc_place_take_full (void);

/* ---- counting copies (for tests and benchmarks) ---- */
typedef struct {
    uint64_t up, down;           /* copies host -> device, device -> host */
    uint64_t up_bytes, down_bytes;
    uint64_t peek_bytes;         /* read in part from a device (qc_span_peek) */
} qc_place_count_t;
/* Copies made on the calling thread since it started (never reset:
 * callers subtract). */
void qc_place_counts (qc_place_count_t *out);
/* Called after every copy the calling thread makes (up: 1 host to
 * device, 0 device to host); NULL stops it. For tests that name what
 * crossed. */
typedef void (*qc_place_observer_t) (void *ctx, int up, size_t npix,
                                     size_t bytes);
void qc_place_observe (qc_place_observer_t fn, void *ctx);

#endif
