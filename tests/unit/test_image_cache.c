/* The large-buffer cache behind the image constructors (image_cache.h):
 * a destroyed large image's buffer serves the next image of about its
 * size, zero-filled as a new image must be; small ones and ones that
 * do not fit the limit are freed; the limit and QC_IMAGE_CACHE_MB are
 * obeyed; a buffer given back to a full cache takes the place of the
 * oldest; when memory runs short the cached buffers go first. Under
 * AddressSanitizer the cache is built out: nothing is kept, and the
 * constructors still give zeroed images. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/image/image.h"
#include "kernels/image/image_cache.h"
#include "tests/unit/check.h"

#if defined(__SANITIZE_ADDRESS__)
#define CACHE_ON 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CACHE_ON 0
#endif
#endif
#ifndef CACHE_ON
#define CACHE_ON 1
#endif

static size_t
held_buffers (void)
{
    size_t n = 0;
    qc_image_cache_held (&n, NULL);
    return n;
}

static int
all_zero (const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

/* The address space this process takes now, in bytes. */
static size_t
vm_bytes (void)
{
    FILE *f = fopen ("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf (f, "%lu", &pages) != 1)
            pages = 0;
        fclose (f);
    }
    return (size_t) pages * (size_t) sysconf (_SC_PAGESIZE);
}

/* Under an address-space limit (ulimit -v), a buffer that fits only
 * without the cached ones is had all the same: they are freed first.
 * (A worker that cached its largest slide's planes failed every later
 * slide that needed them.) In a child: the limit stays there. */
static void
test_short_of_memory (void)
{
    if (!CACHE_ON)
        return;
    fflush (NULL);
    pid_t pid = fork ();
    if (pid == 0) {
        qc_image_cache_set_limit ((size_t) 256 << 20);
        const size_t big = (size_t) 40 << 20;   /* over glibc's mmap threshold */
        void *held[3];
        for (int i = 0; i < 3; i++)
            held[i] = qc_image_cache_take (big);
        for (int i = 0; i < 3; i++)
            qc_image_cache_give (held[i], big);
        size_t cached = 0;
        qc_image_cache_held (NULL, &cached);
        size_t cap = vm_bytes () + ((size_t) 48 << 20);
        struct rlimit r = {cap, cap};
        if (cached != 3 * big || setrlimit (RLIMIT_AS, &r) != 0)
            _exit (2);
        void *p = qc_image_cache_take_uninit ((size_t) 100 << 20);
        qc_image_cache_held (NULL, &cached);
        _exit (p && cached == 0 ? 0 : 1);
    }
    int status = 0;
    CHECK (pid > 0 && waitpid (pid, &status, 0) == pid && WIFEXITED (status)
           && WEXITSTATUS (status) == 0, "short of memory: child status %d", status);
}

int
main (void)
{
    /* the environment's limit is read at the first use */
    setenv ("QC_IMAGE_CACHE_MB", "64", 1);
    const int w = 2000, h = 1500;               /* 12 MB of floats */
    size_t bytes = (size_t) w * h * sizeof (float);

    qc_fimg_t *a = qc_fimg_new (w, h);
    CHECK (a != NULL && all_zero (a->px, bytes));
    void *first = a ? a->px : NULL;
    for (size_t i = 0; a && i < (size_t) w * h; i++)
        a->px[i] = 1.5f;                        /* dirty it */
    qc_fimg_destroy (&a);
    CHECK (held_buffers () == (CACHE_ON ? 1u : 0u), "held %zu", held_buffers ());

    /* a mask of the same byte count reuses it, cleared */
    qc_mask_t *m = qc_mask_new (w * 4, h);
    CHECK (m != NULL && all_zero (m->px, bytes), "reused buffer not zeroed");
    if (CACHE_ON)
        CHECK (m && (void *) m->px == first, "the cached buffer was not reused");
    CHECK (held_buffers () == 0);
    qc_mask_destroy (&m);

    /* far smaller requests do not take a far larger buffer */
    qc_fimg_t *small = qc_fimg_new (w, h / 2);
    CHECK (small != NULL && (!CACHE_ON || (void *) small->px != first));
    CHECK (held_buffers () == (CACHE_ON ? 1u : 0u));
    qc_fimg_destroy (&small);

    /* small images never enter the cache */
    size_t before = held_buffers ();
    qc_fimg_t *tiny = qc_fimg_new (100, 100);
    qc_fimg_destroy (&tiny);
    CHECK (held_buffers () == before);

    /* the 64 MB limit from the environment holds: of eight 12 MB
     * buffers given back, those that fit are kept, the rest freed */
    qc_fimg_t *many[8];
    for (int i = 0; i < 8; i++)
        many[i] = qc_fimg_new (w, h);
    for (int i = 0; i < 8; i++) {
        CHECK (many[i] != NULL);
        qc_fimg_destroy (&many[i]);
    }
    size_t held_bytes = 0;
    qc_image_cache_held (NULL, &held_bytes);
    CHECK (held_bytes <= ((size_t) 64 << 20), "held %zu bytes over the limit", held_bytes);
    if (CACHE_ON)
        CHECK (held_buffers () >= 4, "held %zu", held_buffers ());

    /* limit 0 frees everything and keeps nothing after */
    qc_image_cache_set_limit (0);
    CHECK (held_buffers () == 0);
    a = qc_fimg_new (w, h);
    qc_fimg_destroy (&a);
    CHECK (held_buffers () == 0);

    /* labels go through it as well */
    qc_image_cache_set_limit ((size_t) 64 << 20);
    qc_labels_t *l = qc_labels_new (w, h);
    CHECK (l != NULL && all_zero (l->px, bytes));
    qc_labels_destroy (&l);
    CHECK (held_buffers () == (CACHE_ON ? 1u : 0u));
    qc_image_cache_release ();
    CHECK (held_buffers () == 0);

    /* a full cache keeps the buffer given back last, in place of the
       oldest: a larger slide's planes no longer pin the cache */
    for (int i = 0; i < 5; i++)
        many[i] = qc_fimg_new (w, h);
    for (int i = 0; i < 5; i++)
        qc_fimg_destroy (&many[i]);               /* 60 of the 64 MB */
    qc_fimg_t *other = qc_fimg_new (w, h * 2);    /* 24 MB: another size */
    void *px = other ? other->px : NULL;
    qc_fimg_destroy (&other);
    other = qc_fimg_new (w, h * 2);
    if (CACHE_ON)
        CHECK (other && (void *) other->px == px, "the newest buffer was not kept");
    qc_image_cache_held (NULL, &held_bytes);
    CHECK (held_bytes <= ((size_t) 64 << 20), "held %zu bytes over the limit", held_bytes);
    qc_fimg_destroy (&other);
    qc_image_cache_release ();

    test_short_of_memory ();
    return check_done ("image_cache");
}
