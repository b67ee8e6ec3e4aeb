/* PNG encodes held back and done together on several threads.
 *
 * Why: a GPU lane runs one slide at a time, and its PNGs (~20 a slide)
 * were encoded one after the other on the lane's thread: on an H100
 * machine at 1.25x the three steps that mostly write PNGs took ~50 ms
 * of the lane's 128 ms a slide while its GPU waited. A run that has threads to spare (a GPU
 * lane's read threads) queues each image's host copy instead; the
 * queue's encoders start on it at once on threads of their own, and the
 * end of the slide (or a flush when the copies would pass max_bytes)
 * waits only for what is left. The PNG bytes are the
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

/* One image to write as a PNG, of any kind the encoders take
 * (png_io.h), borrowed: a mask (0/255 gray), an RGB image, a float image
 * in [0, 1] (qc_png_encode_fimg), or w x h gray bytes. */
typedef enum { QC_PNG_MASK, QC_PNG_RGB, QC_PNG_FIMG, QC_PNG_GRAY8 } qc_png_kind_t;
typedef struct {
    qc_png_kind_t kind;
    const qc_mask_t *mask;
    const qc_rgb_t *rgb;
    const qc_fimg_t *fimg;
    const uint8_t *gray;
    int w, h;                 /* QC_PNG_GRAY8's size */
} qc_png_image_t;

static inline qc_png_image_t
qc_png_of_mask (const qc_mask_t *m)
{
    return (qc_png_image_t) { .kind = QC_PNG_MASK, .mask = m };
}
static inline qc_png_image_t
qc_png_of_rgb (const qc_rgb_t *img)
{
    return (qc_png_image_t) { .kind = QC_PNG_RGB, .rgb = img };
}
static inline qc_png_image_t
qc_png_of_fimg (const qc_fimg_t *img)
{
    return (qc_png_image_t) { .kind = QC_PNG_FIMG, .fimg = img };
}
static inline qc_png_image_t
qc_png_of_gray8 (const uint8_t *px, int w, int h)
{
    return (qc_png_image_t) { .kind = QC_PNG_GRAY8, .gray = px, .w = w, .h = h };
}

/* 1 when img names a valid image of its kind. */
int qc_png_image_valid (const qc_png_image_t *img);
/* Encodes img now with its kind's encoder: 0 with the PNG in *data (the
 * caller frees it), or -1 with why ("invalid mask", "invalid image", or
 * the encoder's reason). */
int qc_png_encode_image (const qc_png_image_t *img, unsigned char **data,
                         size_t *size, char *why, size_t whylen);

/* Queues an encode of img under name (copied), with tag (the caller's,
 * handed back with the result: the step that saved it, say): a host
 * copy of its current bytes is made now, so the caller may change or
 * free the image at once. 0, or -1 (memory, an invalid image, a name of
 * 256 bytes or more). */
int qc_png_queue_image (qc_png_queue_t *self, const char *name, const void *tag,
                        const qc_png_image_t *img);

/* How many of the queued images are encoded already: the queue's
 * encoders (nthreads - 1 threads of their own) start on each image as
 * it is queued, while the run goes on; a flush encodes the rest and
 * waits for those in hand. */
size_t qc_png_queue_encoded (qc_png_queue_t *self);

/* 1 when the copies held pass max_bytes: the owner should flush. */
int qc_png_queue_due (const qc_png_queue_t *self);
size_t qc_png_queue_length (const qc_png_queue_t *self);

/* Encodes what no encoder has taken (on the calling thread), waits for
 * the images the encoders hold, then hands each result to done in the
 * order queued: rc 0 with the PNG, or -1 with why; done owns data
 * either way. After the first failure (an encode's,
 * or done returning -1) the rest are freed unseen, as a run stops at
 * its first failed save. Empties the queue. 0, or -1 after a failure. */
typedef int (qc_png_done_fn) (void *arg, const char *name, const void *tag,
                              int rc, unsigned char *data, size_t size,
                              const char *why);
int qc_png_queue_flush (qc_png_queue_t *self, qc_png_done_fn *done, void *arg);

#endif
