/* See slide_why.h. */
#include "kernels/slide/slide_why.h"
#include "kernels/slide/slide.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openslide.h>
#include <tiffio.h>

#include "shared/err.h"
#include "shared/fds.h"
#include "shared/result.h"

/* Errors of this machine or its share, not of the slide: out of file
 * descriptors or memory (this machine's: another may run the slide now),
 * a network file system that went away. A slide failed by one is marked
 * so that a rerun tries it again. */
#define MACHINE_OR_SHARE "this machine's or its share's trouble, not the slide's"
static const struct {
    int e;
    const char *whose;
} s_passing[] = {
    {EMFILE, "this process " QC_RESULT_NO_FDS ": this machine's trouble, not the slide's"},
    {ENFILE, "this machine " QC_RESULT_NO_FDS ": this machine's trouble, not the slide's"},
    {ENOMEM, QC_RESULT_MEMORY_SHORT ", not the slide's fault"},
    {EAGAIN, MACHINE_OR_SHARE}, {EIO, MACHINE_OR_SHARE}, {ESTALE, MACHINE_OR_SHARE},
    {ENOTCONN, MACHINE_OR_SHARE}, {ETIMEDOUT, MACHINE_OR_SHARE}, {EHOSTDOWN, MACHINE_OR_SHARE},
};

int
qc_slide_fail_open (int e, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof s_passing / sizeof s_passing[0]; i++)
        if (e == s_passing[i].e)
            return qc_fail (err, errlen, "cannot open file: %s (%s%s", strerror (e),
                            s_passing[i].whose, QC_RESULT_RETRY_MARK);
    return qc_fail (err, errlen, "cannot open file: %s", strerror (e));
}

/* Whether this process is (nearly) out of file descriptors now:
 * OpenSlide then fails a good slide with a reason of its own ("Cannot
 * set TIFF directory 0", or no slide at all), which would read as a
 * damaged file. Nearly: by the time its failure is judged, another
 * slot may have closed a slide and freed one, so fewer left than a slide
 * holds counts too (a damaged slide judged so under such a limit is
 * only tried again by a rerun). */
bool
qc_slide_out_of_descriptors (void)
{
    long unused = qc_fds_unused ();
    if (unused >= 0)
        return unused < QC_SLIDE_FDS;
    int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        close (fd);
        return false;
    }
    return errno == EMFILE || errno == ENFILE;
}

int
qc_slide_fail_openslide (const char *what, const char *oe, char *err, size_t errlen)
{
    if (qc_slide_out_of_descriptors ())
        return qc_fail (err, errlen, "%s: %s (this process " QC_RESULT_NO_FDS ": this "
                        "machine's trouble, not the slide's%s", what ? what : "OpenSlide",
                        oe ? oe : "?", QC_RESULT_RETRY_MARK);
    if (qc_memory_short ())
        return qc_fail (err, errlen, "%s: %s (" QC_RESULT_MEMORY_SHORT ", not the slide's "
                        "fault%s", what ? what : "OpenSlide", oe ? oe : "?",
                        QC_RESULT_RETRY_MARK);
    return qc_fail (err, errlen, "%s: %s", what ? what : "OpenSlide", oe ? oe : "?");
}

/* openslide_open also returns NULL for a file that is missing or is a
 * folder; those get the system's reason instead of "not a slide". */
int
qc_slide_check_file (const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat (path, &st) != 0)
        return qc_slide_fail_open (errno, err, errlen);
    if (!S_ISREG (st.st_mode)) {
        qc_set_err (err, errlen, "not a regular file");
        return -1;
    }
    if (st.st_size == 0) {
        /* a copy that never happened, or a disk that filled up */
        qc_set_err (err, errlen, "the file is empty (0 bytes)");
        return -1;
    }
    FILE *f = fopen (path, "rb");
    if (!f)
        return qc_slide_fail_open (errno, err, errlen);
    fclose (f);
    return 0;
}

/* Why OpenSlide did not recognise path, where its first bytes say more:
 * a TIFF (classic or BigTIFF, either byte order) whose first directory
 * lies past the end of the file was cut short (a copy that stopped). */
int
qc_slide_fail_unrecognised (const char *path, char *err, size_t errlen)
{
    unsigned char h[16] = {0};
    struct stat st;
    FILE *f = fopen (path, "rb");
    size_t n = f ? fread (h, 1, sizeof h, f) : 0;
    if (f)
        fclose (f);
    bool le = h[0] == 'I' && h[1] == 'I', be = h[0] == 'M' && h[1] == 'M';
    unsigned kind = le ? h[2] | h[3] << 8 : be ? h[2] << 8 | h[3] : 0;
    if (n == sizeof h && (kind == 42 || kind == 43) && stat (path, &st) == 0) {
        /* the first directory's offset: 4 bytes at 4, or BigTIFF's 8 at 8 */
        uint64_t at = 0;
        int len = kind == 42 ? 4 : 8, from = kind == 42 ? 4 : 8;
        for (int i = 0; i < len; i++)
            at |= (uint64_t) h[from + (le ? i : len - 1 - i)] << (8 * i);
        if (at >= (uint64_t) st.st_size)
            return qc_fail (err, errlen, "the file is cut short (a copy that stopped?): "
                            "it is a TIFF whose first directory lies at byte %llu, past "
                            "its end (%lld bytes)", (unsigned long long) at,
                            (long long) st.st_size);
        return qc_fail (err, errlen, "OpenSlide %s does not read this TIFF as a slide "
                        "(a format it cannot read, or a damaged file)",
                        openslide_get_version ());
    }
    return qc_fail (err, errlen, "OpenSlide %s does not recognise this file as a "
                    "slide (not a slide, or a format it cannot read)",
                    openslide_get_version ());
}

/* libtiff's words while a level's directory is looked for: not the
 * user's business (a damaged file fails where its pixels are read). */
static int
quiet (TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void) tif, (void) user, (void) module, (void) fmt, (void) ap;
    return 1;
}

unsigned
qc_slide_tiff_level_compression (const char *path, int64_t w, int64_t h)
{
    if (!path || w < 1 || h < 1)
        return 0;
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();
    if (!opts)
        return 0;
    TIFFOpenOptionsSetErrorHandlerExtR (opts, quiet, NULL);
    TIFFOpenOptionsSetWarningHandlerExtR (opts, quiet, NULL);
    TIFF *tif = TIFFOpenExt (path, "rO", opts);   /* O: no offset tables */
    TIFFOpenOptionsFree (opts);
    if (!tif)
        return 0;
    unsigned found = 0;
    int dirs = 0;       /* slides have a handful; this bounds a damaged one */
    do {
        uint32_t dw = 0, dh = 0;
        uint16_t comp = 0;
        if (TIFFIsTiled (tif) && TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &dw)
            && TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &dh) && dw == w && dh == h
            && TIFFGetFieldDefaulted (tif, TIFFTAG_COMPRESSION, &comp))
            found = comp;
    } while (!found && ++dirs < 256 && TIFFReadDirectory (tif));
    TIFFClose (tif);
    return found;
}
