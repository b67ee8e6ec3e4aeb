/* Output names: the folder OUTDIR/NAME/ of a slide's images, the prefix
 * of each image's file name (NAME_thumb.png) and the `filename` value of
 * its results.tsv row, which HistoQC's UI maps to that folder. Names come
 * only from the client's own cohort (never from what a worker sends):
 *
 *   - the slide's file name, made safe: '/', '\', control bytes and bytes
 *     that are not valid UTF-8 become '_', and "." / ".." get a '_' in
 *     front, so a name is one path component that nothing can escape; a
 *     leading '#' becomes '_' (a row starting with '#' is read as a
 *     comment by every reader of results.tsv, HistoQC's too);
 *   - at most QC_NAME_MAX bytes: a longer one keeps its start (cut at a
 *     character boundary) and its extension, with "~" and 8 hex digits of
 *     the whole name's SHA-256 between, so the image files it prefixes
 *     stay under the file system's 255-byte limit;
 *   - unique in the folder, whatever the case of its letters (in every
 *     script the C library's C.UTF-8 knows: the file systems results are
 *     shared on take "A.svs" and "a.svs", or "Σ.svs" and "σ.svs", for one
 *     file): a name another slide already has
 *     (in this run or in the results already there) gets the name of the
 *     folder the slide is in before it ("b__slide.svs"), then two folders,
 *     and then
 *     "-2", "-3"... at its end. A slide keeps the name it already has in
 *     the folder's results. The folder's own files' names (results.tsv,
 *     error.log, qc.log, their ".N" copies, ".qc-...") are taken too.
 * Two slides are the same slide when their absolute paths are equal. A
 * slide by URL goes by its redacted URL (shared/url.h: no credentials,
 * no query) in place of a path, and its file name is the URL's last
 * path segment, percent-decoded. */
#ifndef QC_CLIENT_NAMES_H
#define QC_CLIENT_NAMES_H

#define QC_NAME_MAX 150

typedef struct qc_names qc_names_t;

qc_names_t *qc_names_new (void);
void qc_names_destroy (qc_names_t **self_p);

/* Records a name in use: by the slide at path, or (path NULL) by a row
 * that does not say which slide it is. A name starting with '#' (an
 * older build's, in .qc-slides: its row read as a comment line) is not
 * recorded: the slide gets a name anew. -1 on memory. */
int qc_names_claim (qc_names_t *self, const char *name, const char *path);
/* Gives the slide at path the name a row that does not say which slide
 * it is holds (HistoQC's rows name a slide by its file name alone):
 * that row goes (-f), and its slide must keep the name HistoQC's UI and
 * the lab's scripts know it by, not get another beside it. 0 when
 * given; 1 when the name is not such a row's, or path has a name; -1
 * on memory. */
int qc_names_adopt (qc_names_t *self, const char *name, const char *path);
/* Gives the slide at to the name the slide at from has (a slide moved:
 * client/rerun.c), from then without one. 0 when given; 1 when from has
 * no name or to has one; -1 on a bad argument or memory. */
int qc_names_move (qc_names_t *self, const char *from, const char *to);
/* The name of the slide at path (absolute): the one it already has, or a
 * new one, claimed. malloc'd; NULL on memory. */
char *qc_names_assign (qc_names_t *self, const char *path);
/* The name path already has, or NULL. */
const char *qc_names_of (const qc_names_t *self, const char *path);

/* A file name made safe and short as above (no uniqueness); malloc'd. */
char *qc_names_safe (const char *file_name);

#endif
