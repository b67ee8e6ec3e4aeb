/* See mpread.h. Format reference: the msgpack specification. */
#include "shared/mpread.h"

#include <string.h>

void
mp_reader_init (mp_reader_t *r, const void *data, size_t len)
{
    r->p = data;
    r->end = data ? r->p + len : r->p;    /* NULL + 0 is undefined in C */
    r->failed = 0;
}

static int
fail (mp_reader_t *r)
{
    r->failed = 1;
    return -1;
}

static int
take (mp_reader_t *r, size_t n, const uint8_t **out)
{
    if (r->failed || mp_left (r) < n)
        return fail (r);
    *out = r->p;
    r->p += n;
    return 0;
}

static uint64_t
be (const uint8_t *b, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | b[i];
    return v;
}

static int
read_be (mp_reader_t *r, int n, uint64_t *v)
{
    const uint8_t *b;
    if (take (r, (size_t) n, &b))
        return -1;
    *v = be (b, n);
    return 0;
}

static int
peek (mp_reader_t *r, uint8_t *tag)
{
    if (r->failed || r->p >= r->end)
        return fail (r);
    *tag = *r->p;
    return 0;
}

/* A container of count elements needs at least count (map: 2*count)
 * more bytes; refusing early keeps callers from sizing arrays on lies. */
static int
container (mp_reader_t *r, uint8_t fix_lo, uint8_t fix_hi, uint8_t t16,
           uint8_t t32, uint32_t per, uint32_t *count)
{
    uint8_t tag;
    uint64_t n;
    if (peek (r, &tag))
        return -1;
    if (tag >= fix_lo && tag <= fix_hi) {
        r->p++;
        n = tag - fix_lo;
    } else if (tag == t16) {
        r->p++;
        if (read_be (r, 2, &n))
            return -1;
    } else if (tag == t32) {
        r->p++;
        if (read_be (r, 4, &n))
            return -1;
    } else
        return fail (r);
    if (n * per > mp_left (r))
        return fail (r);
    *count = (uint32_t) n;
    return 0;
}

int
mp_read_map (mp_reader_t *r, uint32_t *count)
{
    return container (r, 0x80, 0x8f, 0xde, 0xdf, 2, count);
}

int
mp_read_array (mp_reader_t *r, uint32_t *count)
{
    return container (r, 0x90, 0x9f, 0xdc, 0xdd, 1, count);
}

int
mp_read_str (mp_reader_t *r, const char **s, uint32_t *len)
{
    uint8_t tag;
    uint64_t n;
    if (peek (r, &tag))
        return -1;
    r->p++;
    if (tag >= 0xa0 && tag <= 0xbf)
        n = tag & 0x1f;
    else if (tag == 0xd9) {
        if (read_be (r, 1, &n)) return -1;
    } else if (tag == 0xda) {
        if (read_be (r, 2, &n)) return -1;
    } else if (tag == 0xdb) {
        if (read_be (r, 4, &n)) return -1;
    } else
        return fail (r);
    const uint8_t *b;
    if (take (r, (size_t) n, &b))
        return -1;
    *s = (const char *) b;
    *len = (uint32_t) n;
    return 0;
}

int
mp_read_bin (mp_reader_t *r, const uint8_t **out, uint32_t *len)
{
    uint8_t tag;
    uint64_t n;
    if (peek (r, &tag))
        return -1;
    r->p++;
    int w = tag == 0xc4 ? 1 : tag == 0xc5 ? 2 : tag == 0xc6 ? 4 : 0;
    if (!w)
        return fail (r);
    if (read_be (r, w, &n) || take (r, (size_t) n, out))
        return -1;
    *len = (uint32_t) n;
    return 0;
}

int
mp_read_int (mp_reader_t *r, int64_t *v)
{
    uint8_t tag;
    uint64_t u;
    if (peek (r, &tag))
        return -1;
    r->p++;
    if (tag <= 0x7f) { *v = tag; return 0; }
    if (tag >= 0xe0) { *v = (int8_t) tag; return 0; }
    switch (tag) {
    case 0xcc: if (read_be (r, 1, &u)) return -1; *v = (int64_t) u; return 0;
    case 0xcd: if (read_be (r, 2, &u)) return -1; *v = (int64_t) u; return 0;
    case 0xce: if (read_be (r, 4, &u)) return -1; *v = (int64_t) u; return 0;
    case 0xcf:
        if (read_be (r, 8, &u)) return -1;
        if (u > INT64_MAX) return fail (r);
        *v = (int64_t) u; return 0;
    case 0xd0: if (read_be (r, 1, &u)) return -1; *v = (int8_t) u; return 0;
    case 0xd1: if (read_be (r, 2, &u)) return -1; *v = (int16_t) u; return 0;
    case 0xd2: if (read_be (r, 4, &u)) return -1; *v = (int32_t) u; return 0;
    case 0xd3: if (read_be (r, 8, &u)) return -1; *v = (int64_t) u; return 0;
    default: return fail (r);
    }
}

int
mp_read_uint (mp_reader_t *r, uint64_t *v)
{
    uint8_t tag;
    if (peek (r, &tag))
        return -1;
    if (tag == 0xcf) {
        r->p++;
        return read_be (r, 8, v);
    }
    int64_t s;
    if (mp_read_int (r, &s))
        return -1;
    if (s < 0)
        return fail (r);
    *v = (uint64_t) s;
    return 0;
}

int
mp_read_bool (mp_reader_t *r, bool *v)
{
    uint8_t tag;
    if (peek (r, &tag))
        return -1;
    if (tag != 0xc2 && tag != 0xc3)
        return fail (r);
    r->p++;
    *v = tag == 0xc3;
    return 0;
}

int
mp_read_double (mp_reader_t *r, double *v)
{
    uint8_t tag;
    uint64_t u;
    if (peek (r, &tag))
        return -1;
    if (tag == 0xca) {
        r->p++;
        if (read_be (r, 4, &u)) return -1;
        uint32_t u32 = (uint32_t) u;
        float f;
        memcpy (&f, &u32, sizeof f);
        *v = f;
        return 0;
    }
    if (tag == 0xcb) {
        r->p++;
        if (read_be (r, 8, &u)) return -1;
        memcpy (v, &u, sizeof *v);
        return 0;
    }
    if (tag == 0xcf) {
        if (mp_read_uint (r, &u)) return -1;
        *v = (double) u;
        return 0;
    }
    int64_t s;
    if (mp_read_int (r, &s))
        return -1;
    *v = (double) s;
    return 0;
}

bool
mp_read_nil (mp_reader_t *r)
{
    if (!r->failed && r->p < r->end && *r->p == 0xc0) {
        r->p++;
        return true;
    }
    return false;
}

int
mp_skip (mp_reader_t *r, int depth)
{
    uint8_t tag;
    if (depth < 0)
        return fail (r);
    if (peek (r, &tag))
        return -1;
    const uint8_t *b;
    uint32_t n, len;
    const char *s;
    uint64_t u;
    if (tag <= 0x7f || tag >= 0xe0 || tag == 0xc0 || tag == 0xc2 || tag == 0xc3) {
        r->p++;
        return 0;
    }
    if ((tag >= 0xa0 && tag <= 0xbf) || (tag >= 0xd9 && tag <= 0xdb))
        return mp_read_str (r, &s, &len);
    if (tag >= 0xc4 && tag <= 0xc6)
        return mp_read_bin (r, &b, &len);
    if ((tag >= 0x90 && tag <= 0x9f) || tag == 0xdc || tag == 0xdd) {
        if (mp_read_array (r, &n)) return -1;
        for (uint32_t i = 0; i < n; i++)
            if (mp_skip (r, depth - 1)) return -1;
        return 0;
    }
    if ((tag >= 0x80 && tag <= 0x8f) || tag == 0xde || tag == 0xdf) {
        if (mp_read_map (r, &n)) return -1;
        for (uint32_t i = 0; i < 2 * n; i++)
            if (mp_skip (r, depth - 1)) return -1;
        return 0;
    }
    r->p++;
    switch (tag) {
    case 0xcc: case 0xd0: return take (r, 1, &b);
    case 0xcd: case 0xd1: return take (r, 2, &b);
    case 0xca: case 0xce: case 0xd2: return take (r, 4, &b);
    case 0xcb: case 0xcf: case 0xd3: return take (r, 8, &b);
    case 0xd4: return take (r, 2, &b);          /* fixext 1 */
    case 0xd5: return take (r, 3, &b);
    case 0xd6: return take (r, 5, &b);
    case 0xd7: return take (r, 9, &b);
    case 0xd8: return take (r, 17, &b);
    case 0xc7: if (read_be (r, 1, &u)) return -1; return take (r, (size_t) u + 1, &b);
    case 0xc8: if (read_be (r, 2, &u)) return -1; return take (r, (size_t) u + 1, &b);
    case 0xc9: if (read_be (r, 4, &u)) return -1; return take (r, (size_t) u + 1, &b);
    default: return fail (r);             /* 0xc1: never used */
    }
}
