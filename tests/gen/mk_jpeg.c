/* libjpeg tile encoder writing into growable memory buffers. libjpeg
 * reports errors through error_exit, which must not return: it longjmps
 * back to the call that started the work. */
#include "tests/gen/mk_jpeg.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

struct mk_jpeg {
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr jerr;
    struct jpeg_destination_mgr dest;
    jmp_buf jmp;
    int tile_w, tile_h;
    uint8_t **buf;          /* the caller's buffer while encoding */
    size_t *cap;
    size_t len;
    uint8_t *tables;        /* mk_jpeg_tables' output while it is built */
    size_t tables_cap;
    int oom;
    char error[JMSG_LENGTH_MAX + 32];
    JSAMPROW *rows;
};

static void
on_error_exit (j_common_ptr cinfo)
{
    mk_jpeg_t *self = (mk_jpeg_t *) cinfo->client_data;
    char msg[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message) (cinfo, msg);
    snprintf (self->error, sizeof self->error, "libjpeg: %s",
              self->oom ? "out of memory" : msg);
    longjmp (self->jmp, 1);
}

static void
on_output_message (j_common_ptr cinfo)
{
    (void) cinfo;            /* warnings: nothing the caller can act on */
}

static boolean dest_grow (j_compress_ptr cinfo);

static void
dest_init (j_compress_ptr cinfo)
{
    mk_jpeg_t *self = (mk_jpeg_t *) cinfo->client_data;
    /* libjpeg stores a byte before it checks for room: start non-empty. */
    if (*self->cap == 0) {
        dest_grow (cinfo);
        cinfo->dest->next_output_byte = *self->buf;
        cinfo->dest->free_in_buffer = *self->cap;
        return;
    }
    cinfo->dest->next_output_byte = *self->buf;
    cinfo->dest->free_in_buffer = *self->cap;
}

static boolean
dest_grow (j_compress_ptr cinfo)
{
    mk_jpeg_t *self = (mk_jpeg_t *) cinfo->client_data;
    size_t used = *self->cap;  /* libjpeg calls this only when full */
    size_t ncap = used ? used * 2 : 65536;
    uint8_t *nb = realloc (*self->buf, ncap);
    if (!nb) {
        self->oom = 1;   /* on_error_exit reports it and never returns */
        (*cinfo->err->error_exit) ((j_common_ptr) cinfo);
    }
    *self->buf = nb;
    *self->cap = ncap;
    cinfo->dest->next_output_byte = nb + used;
    cinfo->dest->free_in_buffer = ncap - used;
    return TRUE;
}

static void
dest_term (j_compress_ptr cinfo)
{
    mk_jpeg_t *self = (mk_jpeg_t *) cinfo->client_data;
    self->len = *self->cap - cinfo->dest->free_in_buffer;
}

/* Everything libjpeg may fail in, behind its own setjmp so that the
 * caller's locals are never live across a longjmp. */
static int
configure (mk_jpeg_t *self, int quality)
{
    if (setjmp (self->jmp))
        return -1;
    jpeg_create_compress (&self->cinfo);
    self->dest.init_destination = dest_init;
    self->dest.empty_output_buffer = dest_grow;
    self->dest.term_destination = dest_term;
    self->cinfo.dest = &self->dest;
    self->cinfo.image_width = (JDIMENSION) self->tile_w;
    self->cinfo.image_height = (JDIMENSION) self->tile_h;
    self->cinfo.input_components = 3;
    self->cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults (&self->cinfo);
    /* YCbCr with 2x2 chroma subsampling (the defaults) matches the TIFF's
     * Photometric YCbCr and YCbCrSubsampling 2,2. No JFIF or Adobe
     * markers: TIFF says what the colour space is. */
    self->cinfo.write_JFIF_header = FALSE;
    self->cinfo.write_Adobe_marker = FALSE;
    jpeg_set_quality (&self->cinfo, quality, TRUE);
    return 0;
}

mk_jpeg_t *
mk_jpeg_new (int quality, int tile_w, int tile_h)
{
    mk_jpeg_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->tile_w = tile_w;
    self->tile_h = tile_h;
    self->rows = malloc (sizeof *self->rows * (size_t) tile_h);
    self->cinfo.err = jpeg_std_error (&self->jerr);
    self->jerr.error_exit = on_error_exit;
    self->jerr.output_message = on_output_message;
    self->cinfo.client_data = self;
    if (!self->rows || configure (self, quality) != 0)
        mk_jpeg_destroy (&self);
    return self;
}

void
mk_jpeg_destroy (mk_jpeg_t **self_p)
{
    mk_jpeg_t *self = *self_p;
    if (!self)
        return;
    jpeg_destroy_compress (&self->cinfo);
    free (self->rows);
    free (self);
    *self_p = NULL;
}

int
mk_jpeg_tables (mk_jpeg_t *self, uint8_t **data, size_t *len)
{
    /* The buffer lives in self, not in a local, so that its value is
     * still known after a longjmp. */
    self->tables = NULL;
    self->tables_cap = 0;
    self->buf = &self->tables;
    self->cap = &self->tables_cap;
    self->oom = 0;
    if (setjmp (self->jmp)) {
        jpeg_abort_compress (&self->cinfo);
        free (self->tables);
        self->tables = NULL;
        return -1;
    }
    /* Writes the tables and marks them sent, so the tiles that follow
     * leave them out. */
    jpeg_write_tables (&self->cinfo);
    *data = self->tables;
    *len = self->len;
    self->tables = NULL;
    return 0;
}

int
mk_jpeg_encode (mk_jpeg_t *self, const uint8_t *rgb, uint8_t **buf,
                size_t *cap, size_t *len)
{
    self->buf = buf;
    self->cap = cap;
    self->oom = 0;
    if (setjmp (self->jmp)) {
        jpeg_abort_compress (&self->cinfo);
        return -1;
    }
    /* Tables are left out of every tile: they live in JPEGTables. */
    jpeg_suppress_tables (&self->cinfo, TRUE);
    jpeg_start_compress (&self->cinfo, FALSE);
    for (int y = 0; y < self->tile_h; y++)
        self->rows[y] = (JSAMPROW) (rgb + (size_t) y * self->tile_w * 3);
    JDIMENSION done = 0;
    while (done < (JDIMENSION) self->tile_h)
        done += jpeg_write_scanlines (&self->cinfo, self->rows + done,
                                      (JDIMENSION) self->tile_h - done);
    jpeg_finish_compress (&self->cinfo);
    *len = self->len;
    return 0;
}

const char *
mk_jpeg_error (const mk_jpeg_t *self)
{
    return self->error;
}
