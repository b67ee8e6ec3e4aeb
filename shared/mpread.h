/* A bounded msgpack reader over a byte buffer. Unlike a general unpacker
 * it never allocates: every length is checked against the bytes that are
 * left before anything is trusted, so a hostile header cannot make us
 * reserve memory for four billion array elements. Strings come back as
 * pointers into the buffer (not NUL-terminated). */
#ifndef QC_MPREAD_H
#define QC_MPREAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
    int failed;                /* sticky: after one error every read fails */
} mp_reader_t;

void mp_reader_init (mp_reader_t *r, const void *data, size_t len);
int mp_read_map (mp_reader_t *r, uint32_t *count);
int mp_read_array (mp_reader_t *r, uint32_t *count);
int mp_read_str (mp_reader_t *r, const char **s, uint32_t *len);
int mp_read_bin (mp_reader_t *r, const uint8_t **b, uint32_t *len);
/* Any non-negative integer that fits in 64 bits. */
int mp_read_uint (mp_reader_t *r, uint64_t *v);
/* Any integer in int64 range. */
int mp_read_int (mp_reader_t *r, int64_t *v);
int mp_read_bool (mp_reader_t *r, bool *v);
/* float32, float64, or an integer. */
int mp_read_double (mp_reader_t *r, double *v);
/* true and consumes it when the next value is nil. */
bool mp_read_nil (mp_reader_t *r);
/* Skips one value of any type, nested at most depth levels. */
int mp_skip (mp_reader_t *r, int depth);
static inline size_t mp_left (const mp_reader_t *r) { return (size_t) (r->end - r->p); }

#endif
