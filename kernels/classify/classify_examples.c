/* Example files for ClassificationModule; see classify_examples.h. */
#include "kernels/classify/classify_examples.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/assets/asset.h"
#include "kernels/image/pixel_math.h"
#include "kernels/png/png_io.h"

static int
is_word (int c)
{
    return isalnum (c) || c == '_';
}

static int
copy_trimmed (const char *s, size_t n, char *out, size_t cap)
{
    while (n && isspace ((unsigned char) *s))
        s++, n--;
    while (n && isspace ((unsigned char) s[n - 1]))
        n--;
    if (n == 0 || n >= cap)
        return -1;
    memcpy (out, s, n);
    out[n] = '\0';
    return 0;
}

int
qc_example_split (const char *line, size_t len, char *image, char *mask,
                  size_t cap)
{
    if (!line || !image || !mask || cap == 0)
        return -1;
    size_t cut[3];
    int ncut = 0;
    for (size_t i = 0; i < len && ncut < 3; i++) {
        if (line[i] != ':')
            continue;
        /* (?<!\W[A-Za-z]): not after a non-word character and a letter */
        if (i >= 2 && !is_word ((unsigned char) line[i - 2])
            && isalpha ((unsigned char) line[i - 1]))
            continue;
        /* (?!\\): not before a backslash */
        if (i + 1 < len && line[i + 1] == '\\')
            continue;
        cut[ncut++] = i;
    }
    if (ncut != 1)
        return -1;
    return copy_trimmed (line, cut[0], image, cap) != 0
        || copy_trimmed (line + cut[0] + 1, len - cut[0] - 1, mask, cap) != 0
        ? -1 : 0;
}

static const qc_example_file_t *
builtin (const char *path)
{
    if (strncmp (path, QC_EXAMPLE_PREFIX, strlen (QC_EXAMPLE_PREFIX)) != 0)
        return NULL;
    for (size_t i = 0; i < qc_example_nfiles; i++)
        if (strcmp (qc_example_files[i].name, path) == 0)
            return &qc_example_files[i];
    return NULL;
}

int
qc_example_exists (const char *path)
{
    if (!path || !*path)
        return 0;
    if (strncmp (path, QC_EXAMPLE_PREFIX, strlen (QC_EXAMPLE_PREFIX)) == 0)
        return builtin (path) != NULL;
    return qc_asset_exists (path);
}

static int
b64_value (int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes base64 (padding optional; anything else is an error). */
static unsigned char *
b64_decode (const char *s, size_t len, size_t *out_len)
{
    unsigned char *out = malloc (len / 4 * 3 + 3);
    if (!out)
        return NULL;
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '=')
            break;
        int v = b64_value ((unsigned char) s[i]);
        if (v < 0) {
            free (out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned) v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char) (acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    *out_len = n;
    return out;
}

qc_rgb_t *
qc_example_read_rgb (const char *path, char *err, size_t errlen)
{
    if (!path || !*path) {
        if (err && errlen)
            snprintf (err, errlen, "no example path");
        return NULL;
    }
    if (strncmp (path, QC_EXAMPLE_PREFIX, strlen (QC_EXAMPLE_PREFIX)) != 0) {
        unsigned char *bytes = NULL;
        size_t nbytes = 0;
        if (qc_asset_read (path, &bytes, &nbytes, err, errlen) != 0)
            return NULL;
        qc_rgb_t *img = qc_png_decode_rgb (bytes, nbytes, err, errlen);
        free (bytes);
        return img;
    }
    const qc_example_file_t *f = builtin (path);
    if (!f) {
        if (err && errlen)
            snprintf (err, errlen, "%.200s: no such built-in example (the "
                      "project has %zu, e.g. %s)", path, qc_example_nfiles,
                      qc_example_nfiles ? qc_example_files[0].name : "none");
        return NULL;
    }
    size_t n = 0;
    unsigned char *png = b64_decode (f->base64, f->len, &n);
    if (!png) {
        if (err && errlen)
            snprintf (err, errlen, "%s: corrupt built-in example", path);
        return NULL;
    }
    qc_rgb_t *img = qc_png_decode_rgb (png, n, err, errlen);
    free (png);
    return img;
}

qc_mask_t *
qc_example_read_mask (const char *path, char *err, size_t errlen)
{
    qc_rgb_t *img = qc_example_read_rgb (path, err, errlen);
    if (!img)
        return NULL;
    qc_mask_t *m = qc_mask_new (img->w, img->h);
    uint8_t *out = m ? qc_mask_host_rewrite (m) : NULL;
    if (!out) {
        if (err && errlen)
            snprintf (err, errlen, "out of memory");
        qc_mask_destroy (&m);
    } else {
        size_t n = qc_npix (img->w, img->h);
        for (size_t i = 0; i < n; i++) {
            const uint8_t *p = img->px + 3 * i;   /* decoded: host bytes */
            out[i] = qc_px_gray (p[0], p[1], p[2]) > 0.5;
        }
    }
    qc_rgb_destroy (&img);
    return m;
}
