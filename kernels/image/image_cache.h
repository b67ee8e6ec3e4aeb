/* A process-wide cache of large pixel buffers, reused across images.
 *
 * Why: a buffer above glibc's mmap threshold (always, on threads other
 * than the main one) is mapped afresh by every calloc and faulted in page
 * by page on first touch. At 10x a slide's planes are hundreds of MB
 * each and a slide makes dozens, and faulting pages in is far slower
 * than clearing a reused buffer (tests/bench/README.md, "Figures behind
 * the code"). The image constructors (image.c) take buffers from here and
 * the destructors give them back; small buffers (under
 * QC_IMAGE_CACHE_MIN) go straight to calloc and free, which serve them
 * from the heap anyway.
 *
 * Bounded: at most QC_IMAGE_CACHE_SLOTS buffers and a byte limit are
 * kept: QC_IMAGE_CACHE_DEFAULT, or less, an eighth of the machine's
 * memory (or of a control group's memory limit, shared/cgroup_limits.h)
 * or a quarter of what RLIMIT_AS allows (the environment variable
 * QC_IMAGE_CACHE_MB overrides it at the first use, 0 turns the cache
 * off). A buffer given back to a full cache takes the place of those
 * given back longest ago (a larger slide's planes fit no smaller
 * slide's; kept, they pinned the largest slide's memory for good). When
 * a new buffer cannot be had, the cached ones are freed and it is asked
 * for again. Built out under AddressSanitizer, whose use-after-free
 * checks need every free to be a real one. Thread-safe. */
#ifndef QC_IMAGE_CACHE_H
#define QC_IMAGE_CACHE_H

#include <stddef.h>

#define QC_IMAGE_CACHE_MIN      ((size_t) 4 << 20)
#define QC_IMAGE_CACHE_SLOTS    64
#define QC_IMAGE_CACHE_DEFAULT  ((size_t) 4 << 30)

/* A zero-filled buffer of bytes (calloc's contract): a cached one of at
 * least bytes (and at most a quarter more) when there is one, else
 * calloc's. NULL when memory runs out. */
void *qc_image_cache_take (size_t bytes);

/* As qc_image_cache_take, but the bytes are not cleared (malloc's
 * contract): for the copies image.c makes, which write every byte. */
void *qc_image_cache_take_uninit (size_t bytes);

/* Gives back p, a buffer of at least bytes from qc_image_cache_take (or
 * malloc): kept for reuse when bytes is large and the cache has room,
 * else freed. p may be NULL. */
void qc_image_cache_give (void *p, size_t bytes);

/* The byte limit now (0: off), set at the first use. */
size_t qc_image_cache_limit (void);
/* Sets the byte limit (0: off) and frees what no longer fits. */
void qc_image_cache_set_limit (size_t bytes);

/* Buffers and bytes held now (for tests). */
void qc_image_cache_held (size_t *buffers, size_t *bytes);

/* Bytes of the buffers taken and not given back (the pixels of every
 * host image alive in the process, and of the simulated device's images
 * on a test's simulated GPU, kernels/ops/sim), now and at most since
 * the last qc_image_cache_reset_peak (or the start): what a slide's
 * images cost, for the per-step debug log and the memory tests. */
void qc_image_cache_in_use (size_t *now, size_t *peak);
void qc_image_cache_reset_peak (void);

/* Frees every cached buffer: a worker with nothing to run gives its
 * memory back (worker/exec_pipeline.c), and leak checkers at exit. */
void qc_image_cache_release (void);

#endif
