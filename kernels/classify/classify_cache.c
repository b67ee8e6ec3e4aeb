/* The process-wide cache of trained ClassificationModule classifiers,
 * the per-thread cache of feature planes, and prediction; see
 * classify_cache.h. */
#include "kernels/classify/classify_cache.h"
#include "shared/err.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the cache ---- */

/* Least recently used first out: a worker that sees config after config
 * keeps the newest QC_CLASSIFIER_CACHE_MAX models; one in use by a slide
 * (refs > 0) stays until it is put back. */
typedef struct {
    char *key;
    qc_classifier_t *clf;
    unsigned refs;            /* slides using it now */
    uint64_t used;            /* when last handed out (s_clock) */
} entry_t;

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t s_cache[QC_CLASSIFIER_CACHE_MAX];
static size_t s_ncache;
static uint64_t s_clock;

/* A free place: an empty one, or the least recently used model no slide
 * uses, destroyed. -1 when every place is in use. Under s_lock. */
static int
free_place (void)
{
    if (s_ncache < QC_CLASSIFIER_CACHE_MAX)
        return (int) s_ncache++;
    int lru = -1;
    for (size_t i = 0; i < s_ncache; i++)
        if (!s_cache[i].refs && (lru < 0 || s_cache[i].used < s_cache[lru].used))
            lru = (int) i;
    if (lru >= 0) {
        free (s_cache[lru].key);
        qc_classifier_destroy (&s_cache[lru].clf);
    }
    return lru;
}

/* Every value that shapes the model, "key=value\n" (absent keys as
 * "key\n"); NULL when memory runs out. */
static char *
cache_key (const qc_config_section_t *sec)
{
    size_t len = 1;
    for (const char *const *k = qc_classifier_params; *k; k++) {
        const char *v = NULL;
        if (qc_config_get_string (sec, *k, NULL, &v, NULL, 0) != 0)
            v = NULL;
        len += strlen (*k) + (v ? strlen (v) + 1 : 0) + 1;
    }
    char *key = malloc (len), *p = key;
    if (!key)
        return NULL;
    for (const char *const *k = qc_classifier_params; *k; k++) {
        const char *v = NULL;
        if (qc_config_get_string (sec, *k, NULL, &v, NULL, 0) != 0)
            v = NULL;
        p += sprintf (p, v ? "%s=%s\n" : "%s\n", *k, v ? v : "");
    }
    return key;
}

qc_classifier_t *
qc_classifier_get (const qc_config_section_t *sec, const qc_ops_t *ops,
                   int *owned, char *err, size_t errlen)
{
    if (!owned || !ops) {
        qc_fail (err, errlen, "qc_classifier_get: bad arguments");
        return NULL;
    }
    *owned = 0;
    char *key = cache_key (sec);
    if (!key) {
        qc_fail (err, errlen, "out of memory");
        return NULL;
    }
    qc_classifier_t *c = NULL;
    /* One lock for all, held while training (as HistoQC's): a second
     * thread asking for the same model waits for it instead of training
     * it again. */
    pthread_mutex_lock (&s_lock);
    for (size_t i = 0; i < s_ncache && !c; i++)
        if (strcmp (s_cache[i].key, key) == 0) {
            c = s_cache[i].clf;
            s_cache[i].refs++;
            s_cache[i].used = ++s_clock;
        }
    if (!c) {
        c = qc_classifier_train (sec, ops, err, errlen);
        int at = c ? free_place () : -1;
        if (at >= 0) {
            s_cache[at] = (entry_t) {.key = key, .clf = c, .refs = 1, .used = ++s_clock};
            key = NULL;
        } else if (c) {
            *owned = 1;       /* every model is in use: this one is the caller's */
        }
    }
    pthread_mutex_unlock (&s_lock);
    free (key);
    return c;
}

void
qc_classifier_put (qc_classifier_t *clf, int owned)
{
    if (!clf)
        return;
    if (owned) {
        qc_classifier_destroy (&clf);
        return;
    }
    pthread_mutex_lock (&s_lock);
    for (size_t i = 0; i < s_ncache; i++)
        if (s_cache[i].clf == clf && s_cache[i].refs) {
            s_cache[i].refs--;
            break;
        }
    pthread_mutex_unlock (&s_lock);
}

size_t
qc_classifier_cached (void)
{
    pthread_mutex_lock (&s_lock);
    size_t n = s_ncache;
    pthread_mutex_unlock (&s_lock);
    return n;
}

/* ---- feature planes, shared by consecutive steps ---- */

/* HistoQC's default pipeline classifies the same working image twice
 * (pen_markings, coverslip_edge) with the same features; computing them
 * is most of a step's time. Each thread keeps the planes of the last
 * image it classified, keyed by the image's version (image_place.h: new
 * at each write, never reused, and known without reading the pixels,
 * which may be on a GPU), its size, the feature spec and the ops
 * backend. An image of version 0 (pixels set by hand, outside the
 * constructors) is never taken from the cache. The pipeline drops the
 * planes at the end of each slide (qc_classifier_forget_planes). */
typedef struct {
    uint64_t hash;
    int w, h;
    const qc_ops_t *ops;
    qc_feature_spec_t spec;
    int n;
    qc_fimg_t *planes[QC_FEAT_MAX_PLANES];
} planes_cache_t;

static pthread_key_t s_planes_key;
static pthread_once_t s_planes_once = PTHREAD_ONCE_INIT;
static int s_planes_ok;

static void
planes_cache_free (void *p)
{
    planes_cache_t *pc = p;
    if (pc)
        qc_feature_planes_free (pc->planes, pc->n);
    free (pc);
}

static void
planes_key_init (void)
{
    s_planes_ok = pthread_key_create (&s_planes_key, planes_cache_free) == 0;
}

/* The planes for img: from this thread's cache or computed into it.
 * Valid until the thread's next call. NULL when memory runs out. */
static qc_fimg_t **
planes_for (const qc_ops_t *ops, const qc_rgb_t *img,
            const qc_feature_spec_t *spec)
{
    pthread_once (&s_planes_once, planes_key_init);
    planes_cache_t *pc = s_planes_ok ? pthread_getspecific (s_planes_key) : NULL;
    if (s_planes_ok && !pc) {
        pc = calloc (1, sizeof *pc);
        if (pc && pthread_setspecific (s_planes_key, pc) != 0) {
            free (pc);
            pc = NULL;
        }
    }
    if (!pc)
        return NULL;
    /* the image's version (image_place.h): unique to these pixels in
     * the process, and known without reading them, wherever they are */
    uint64_t h = img->at.version;
    if (h != 0 && pc->n > 0 && pc->hash == h && pc->w == img->w && pc->h == img->h
        && pc->ops == ops && memcmp (&pc->spec, spec, sizeof *spec) == 0)
        return pc->planes;
    qc_feature_planes_free (pc->planes, pc->n);
    pc->n = 0;
    if (qc_features_compute (ops, img, spec, pc->planes) != 0)
        return NULL;
    pc->n = qc_feature_spec_planes (spec);
    pc->hash = h;
    pc->w = img->w;
    pc->h = img->h;
    pc->ops = ops;
    memcpy (&pc->spec, spec, sizeof *spec);   /* padding too: memcmp above */
    return pc->planes;
}

void
qc_classifier_forget_planes (void)
{
    pthread_once (&s_planes_once, planes_key_init);
    planes_cache_t *pc = s_planes_ok ? pthread_getspecific (s_planes_key) : NULL;
    if (!pc)
        return;
    qc_feature_planes_free (pc->planes, pc->n);
    pc->n = 0;
}

int
qc_classifier_predict (const qc_classifier_t *self, const qc_ops_t *ops,
                       const qc_rgb_t *img, qc_fimg_t *prob)
{
    if (!self || !self->model || !ops || !qc_rgb_valid (img)
        || !qc_fimg_valid (prob) || prob->w != img->w || prob->h != img->h)
        return -1;
    int n = qc_feature_spec_planes (&self->spec);
    qc_fimg_t **planes = planes_for (ops, img, &self->spec);
    if (!planes)
        return -1;
    return ops->trees_predict (self->model, (const qc_fimg_t *const *) planes,
                               n, prob);
}

int
qc_classifier_classify (const qc_classifier_t *self, const qc_ops_t *ops,
                        const qc_rgb_t *img, double threshold,
                        qc_mask_t *found)
{
    if (!self || !self->model || !ops || !qc_rgb_valid (img)
        || !qc_mask_valid (found) || found->w != img->w || found->h != img->h
        || threshold != threshold)
        return -1;
    if (!ops->trees_classify) {
        qc_fimg_t *prob = qc_fimg_new (img->w, img->h);
        int rc = !prob || qc_classifier_predict (self, ops, img, prob)
                 || ops->threshold (prob, threshold, INFINITY, found) ? -1 : 0;
        qc_fimg_destroy (&prob);
        return rc;
    }
    int n = qc_feature_spec_planes (&self->spec);
    qc_fimg_t **planes = planes_for (ops, img, &self->spec);
    if (!planes)
        return -1;
    return ops->trees_classify (self->model, (const qc_fimg_t *const *) planes,
                                n, threshold, found);
}
