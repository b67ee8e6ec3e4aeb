/* PNG encodes held back and done together on several threads.
 *
 * Why: a GPU lane runs one slide at a time, and its PNGs (~20 a slide)
 * were encoded one after the other on the lane's thread, ~50 ms of
 * deflate at 1.25x on an H100 machine: a third of the lane's time per
 * slide while its GPU waited. A run that has threads to spare (a GPU
 * lane's read threads) queues each image's host copy instead and
 * encodes the queue on those threads at the end of the slide, or
 * sooner when the copies would pass max_bytes. The PNG bytes are the
 * encoder's own, and the results come back in the order the images
 * were queued, so what a run returns does not change.
 *
 * One queue belongs to one run (one thread adds and flushes). */
#ifndef QC_PNG_QUEUE_H
#define QC_PNG_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"

typedef struct qc_png_queue qc_png_queue_t;

/* nthreads encoders (1..16), copies held up to max_bytes (> 0) before a
 * flush is due (qc_png_queue_due). NULL on bad arguments or memory. */
qc_png_queue_t *qc_png_queue_new (int nthreads, size_t max_bytes);
/* Frees the queue and whatever is still in it (not encoded). */
void qc_png_queue_destroy (qc_png_queue_t **self_p);

/* Queues an encode of the image under name (copied), with tag (the
 * caller's, handed back with the result: the step that saved it, say):
 * a host copy of its current bytes is made now, so the caller may
 * change or free the image at once. fimg images are encoded as
 * qc_png_encode_fimg does. 0, or -1 (memory, a bad image, a name of 256
 * bytes or more). */
int qc_png_queue_mask (qc_png_queue_t *self, const char *name, const void *tag,
                       const qc_mask_t *m);
int qc_png_queue_rgb (qc_png_queue_t *self, const char *name, const void *tag,
                      const qc_rgb_t *img);
int qc_png_queue_fimg (qc_png_queue_t *self, const char *name, const void *tag,
                       const qc_fimg_t *img);
int qc_png_queue_gray8 (qc_png_queue_t *self, const char *name, const void *tag,
                        const uint8_t *px, int w, int h);

/* 1 when the copies held pass max_bytes: the owner should flush. */
int qc_png_queue_due (const qc_png_queue_t *self);
size_t qc_png_queue_length (const qc_png_queue_t *self);

/* Encodes everything queued on the queue's threads, then hands each
 * result to done in the order queued: rc 0 with the PNG, or -1 with
 * why; done owns data either way. After the first failure (an encode's,
 * or done returning -1) the rest are freed unseen, as a run stops at
 * its first failed save. Empties the queue. 0, or -1 after a failure. */
typedef int (qc_png_done_fn) (void *arg, const char *name, const void *tag,
                              int rc, unsigned char *data, size_t size,
                              const char *why);
int qc_png_queue_flush (qc_png_queue_t *self, qc_png_done_fn *done, void *arg);

#endif
