/* The block cache (contract in block_cache.h). Slots are an array; a
 * slot is in the hash chain of its block and in the LRU list while it
 * holds a block, in the free list otherwise. */
#include "worker/fetch/block_cache.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t block;
    uint8_t *data;            /* block_size bytes, allocated on first use */
    size_t len;
    int prev, next;           /* LRU list (or free list: next only) */
    int hnext;                /* hash chain */
} slot_t;

struct qc_block_cache {
    size_t block_size;
    size_t nslots;
    slot_t *slots;
    int *buckets;             /* nbuckets heads of hash chains, -1 empty */
    size_t nbuckets;          /* a power of two */
    int head, tail;           /* most and least recently used, -1 none */
    int free_head;
    size_t count;
};

static size_t
bucket_of (const qc_block_cache_t *self, uint64_t block)
{
    uint64_t h = block * 0x9e3779b97f4a7c15ULL;
    return (size_t) (h >> 32) & (self->nbuckets - 1);
}

qc_block_cache_t *
qc_block_cache_new (size_t block_size, size_t max_bytes)
{
    if (block_size == 0 || block_size > (1u << 30))
        return NULL;
    size_t n = max_bytes / block_size;
    if (n < 1)
        n = 1;
    if (n > (1u << 24))
        return NULL;
    qc_block_cache_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->block_size = block_size;
    self->nslots = n;
    self->nbuckets = 16;
    while (self->nbuckets < 2 * n)
        self->nbuckets *= 2;
    self->slots = calloc (n, sizeof *self->slots);
    self->buckets = malloc (self->nbuckets * sizeof *self->buckets);
    if (!self->slots || !self->buckets) {
        qc_block_cache_destroy (&self);
        return NULL;
    }
    for (size_t i = 0; i < self->nbuckets; i++)
        self->buckets[i] = -1;
    for (size_t i = 0; i < n; i++)
        self->slots[i].next = i + 1 < n ? (int) i + 1 : -1;
    self->free_head = 0;
    self->head = self->tail = -1;
    return self;
}

void
qc_block_cache_destroy (qc_block_cache_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_block_cache_t *self = *self_p;
    if (self->slots)
        for (size_t i = 0; i < self->nslots; i++)
            free (self->slots[i].data);
    free (self->slots);
    free (self->buckets);
    free (self);
    *self_p = NULL;
}

static int
find (const qc_block_cache_t *self, uint64_t block)
{
    for (int i = self->buckets[bucket_of (self, block)]; i >= 0;
         i = self->slots[i].hnext)
        if (self->slots[i].block == block)
            return i;
    return -1;
}

static void
lru_unlink (qc_block_cache_t *self, int i)
{
    slot_t *s = &self->slots[i];
    if (s->prev >= 0)
        self->slots[s->prev].next = s->next;
    else
        self->head = s->next;
    if (s->next >= 0)
        self->slots[s->next].prev = s->prev;
    else
        self->tail = s->prev;
}

static void
lru_push_front (qc_block_cache_t *self, int i)
{
    slot_t *s = &self->slots[i];
    s->prev = -1;
    s->next = self->head;
    if (self->head >= 0)
        self->slots[self->head].prev = i;
    self->head = i;
    if (self->tail < 0)
        self->tail = i;
}

static void
hash_unlink (qc_block_cache_t *self, int i)
{
    int *link = &self->buckets[bucket_of (self, self->slots[i].block)];
    while (*link != i)
        link = &self->slots[*link].hnext;
    *link = self->slots[i].hnext;
}

const uint8_t *
qc_block_cache_get (qc_block_cache_t *self, uint64_t block, size_t *len)
{
    if (!self)
        return NULL;
    int i = find (self, block);
    if (i < 0)
        return NULL;
    if (self->head != i) {
        lru_unlink (self, i);
        lru_push_front (self, i);
    }
    if (len)
        *len = self->slots[i].len;
    return self->slots[i].data;
}

int
qc_block_cache_has (const qc_block_cache_t *self, uint64_t block)
{
    return self && find (self, block) >= 0;
}

int
qc_block_cache_put (qc_block_cache_t *self, uint64_t block, const uint8_t *data,
                    size_t len)
{
    if (!self || (!data && len) || len > self->block_size)
        return -1;
    int i = find (self, block);
    if (i >= 0)
        lru_unlink (self, i);
    else {
        if (self->free_head >= 0) {
            i = self->free_head;
            self->free_head = self->slots[i].next;
        } else {
            i = self->tail;   /* evict the least recently used */
            lru_unlink (self, i);
            hash_unlink (self, i);
            self->count--;
        }
        slot_t *s = &self->slots[i];
        /* only a never-used slot has no memory yet */
        if (!s->data && !(s->data = malloc (self->block_size))) {
            s->next = self->free_head;
            self->free_head = i;
            return -1;
        }
        s->block = block;
        size_t b = bucket_of (self, block);
        s->hnext = self->buckets[b];
        self->buckets[b] = i;
        self->count++;
    }
    slot_t *s = &self->slots[i];
    if (len)
        memcpy (s->data, data, len);
    s->len = len;
    lru_push_front (self, i);
    return 0;
}

size_t
qc_block_cache_block_size (const qc_block_cache_t *self)
{
    return self ? self->block_size : 0;
}

size_t
qc_block_cache_capacity (const qc_block_cache_t *self)
{
    return self ? self->nslots : 0;
}

size_t
qc_block_cache_count (const qc_block_cache_t *self)
{
    return self ? self->count : 0;
}

size_t
qc_block_cache_order (const qc_block_cache_t *self, uint64_t *out, size_t max)
{
    size_t n = 0;
    if (!self || !out)
        return 0;
    for (int i = self->head; i >= 0 && n < max; i = self->slots[i].next)
        out[n++] = self->slots[i].block;
    return n;
}
