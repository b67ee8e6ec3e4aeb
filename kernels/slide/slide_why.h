/* Why a slide could not be opened or read, in words a lab can act on:
 * the system's reason for a file that is missing, empty or not a file;
 * a TIFF cut short; and the machine's own trouble (out of descriptors, a
 * share gone), marked so that a rerun tries the slide again. Used by
 * slide.c, which opens slides; qc_slide_fail_openslide is in slide.h. */
#ifndef QC_KERNELS_SLIDE_WHY_H
#define QC_KERNELS_SLIDE_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The reason for errno e opening a slide, marked for a rerun when e is
 * the machine's trouble; returns -1. */
int qc_slide_fail_open (int e, char *err, size_t errlen);
/* Descriptors one slide may hold at once (OpenSlide's TIFF handles, our
 * own reader, an image being written): fewer left counts as out of them
 * (and a worker fits its slots to its limit by it, worker/worker.c). */
#define QC_SLIDE_FDS 8
/* Whether this process has (nearly) no file descriptor free now. */
bool qc_slide_out_of_descriptors (void);
/* Whether path, opened once, cannot be reached now for a reason of its
 * machine or share (missing, a share gone: the table of slide_why.c),
 * said in why ("the file cannot be reached now: No such file or
 * directory (the file is not there now: ...; a rerun tries again)"): a read that failed on such a file
 * is not the slide's fault. false for NULL (a slide read by URL). */
bool qc_slide_file_gone (const char *path, char *why, size_t whylen);
/* What a failure's reason said gets after it when the slide's file is
 * gone (qc_slide_file_gone): "; the file cannot be reached now: ...",
 * into note; "" when it is there, or said already marks a rerun.
 * Returns note. */
const char *qc_slide_gone_note (const char *path, const char *said, char *note,
                                size_t len);
/* 0 when path is a non-empty regular file that opens, else -1 and why. */
int qc_slide_check_file (const char *path, char *err, size_t errlen);
/* Why OpenSlide did not recognise path (the file may say more: a TIFF
 * cut short, or not tiled; said: OpenSlide's own message, or NULL);
 * returns -1. */
int qc_slide_fail_unrecognised (const char *path, const char *said, char *err,
                                size_t errlen);
/* A tiled slide's side images (untiled directories after its first:
 * Aperio's thumbnail, label and macro) whose strips are damaged. OpenSlide
 * opens such a slide without reading them, and reads its levels; reading
 * one of them fails and leaves OpenSlide's handle failing every later
 * read, so the slide's reader must not ask for them (slide_side.c). */
#define QC_SIDE_DAMAGED_MAX 8
typedef struct {
    int n;                    /* those kept (a file may have more) */
    struct qc_side_damaged {
        int dir;              /* the TIFF directory */
        uint32_t w, h;
        char aperio_name[32]; /* its name by Aperio's rule (directory 1
                                 "thumbnail", else its description's second
                                 line's first word: "label", "macro"); "" */
        char why[200];        /* "its strip 5 of 4294967280 bytes is more than ..." */
    } img[QC_SIDE_DAMAGED_MAX];
} qc_side_damaged_t;

/* -1 with why when path is a TIFF that OpenSlide would read into a
 * crash or for minutes: a tile or strip past the file's end (a byte
 * count no file holds made GLib abort the whole process), a table of
 * tiles shorter than its image (OpenSlide drew the missing tiles from
 * each other at full CPU), a tiled image none of whose tiles has bytes
 * (it passed as blank glass). 0 otherwise, and for a file that is no
 * TIFF libtiff reads (OpenSlide's to read or refuse). Such damage in a
 * tiled slide's side images does not refuse it: they are listed in side
 * (may be NULL; n is 0 when there are none). */
int qc_slide_check_tiff (const char *path, qc_side_damaged_t *side, char *err,
                         size_t errlen);
/* -1 with why when OpenSlide refused path (said: its words, "Invalid
 * TIFF: PATH" for one) and libtiff tells the damage: it cannot read the
 * file's first directory (a TileWidth of 0, an image of a million
 * pixels a side over a table of a few tiles), its directories loop, or
 * it stops after some of them; its words then, and OpenSlide's after
 * them. 0 for no TIFF, or one libtiff reads whole (OpenSlide's reason
 * is the one to give). */
int qc_slide_fail_tiff_damaged (const char *path, const char *said, char *err,
                                size_t errlen);
/* The compression (TIFFTAG_COMPRESSION) of path's tiled TIFF directory
 * of w x h pixels: what OpenSlide decodes a level of that size from. 0
 * when path is no TIFF or has no such directory. */
unsigned qc_slide_tiff_level_compression (const char *path, int64_t w, int64_t h);

#endif
