/* The list of slides to submit, given the ways HistoQC takes them:
 *
 *   - a slide file path;
 *   - a folder: its slide files (by extension), searched recursively,
 *     at most QC_COHORT_MAX_DEPTH folders deep, each folder visited once
 *     (so symbolic-link loops end), hidden folders skipped;
 *   - a quoted glob pattern: '*', '?' and '[...]' in any path component
 *     ("slides/ *.svs" without the blank), and a component that is only
 *     two stars for any number of folders, none included (as Python's
 *     glob with recursive=True, which HistoQC uses); a match that is a
 *     folder, or a pattern ending in the two stars, is searched as
 *     above;
 *   - a .tsv file (a positional argument ending in .tsv, or any --list
 *     file): the first column of each line names a slide; lines starting
 *     with '#' are skipped, and so is a header row whose first cell is
 *     "filename". HistoQC's results.tsv works (with -p, the folder its
 *     slides are in); the project's own results.tsv, whose original_path
 *     column keeps each slide's whole path, is read from that column
 *     when no base path is given. A plain list (one path a line) is the
 *     same thing with one column. A .csv (any case; an argument or a
 *     --list file) is a spreadsheet's: its first cell of each record, as
 *     spreadsheets quote one ("a, b.svs", a quote doubled, a line break
 *     inside quotes), separated by commas or semicolons (told from its
 *     first rows: cohort_list.c). A first row with a cell "filename",
 *     "file name", "path", "file" or "slide" (any case) is a header:
 *     that column names the slides (a LIMS export's), in a .tsv too; in
 *     a .csv, rows before it that name no slide (a title) are skipped.
 *
 * Relative entries are taken relative to the base path (-p), else to the
 * working directory; every path becomes absolute (not through symbolic
 * links: a link's own name is the slide's name), with "//" and "/./"
 * folded. The same path given twice counts once.
 *
 *   - a URL (shared/url.h): http:// and https:// are kept as given (the
 *     workers fetch them; a query or credentials in them reach the
 *     workers, and no output shows them); a file:// URL is the path it
 *     names. Any other scheme is refused, naming the entry, before any
 *     slide is touched. Outputs know a URL by its redacted form, so two
 *     entries whose URLs differ only in their query or credentials are
 *     one slide: the second is refused (unless it is the same URL). */
#ifndef QC_COHORT_H
#define QC_COHORT_H

#include <stdbool.h>
#include <stddef.h>

#define QC_COHORT_MAX_DEPTH 32

typedef struct {
    char **paths;
    size_t n, cap;
    const char *basepath;      /* -p: relative entries start here */
    size_t duplicates;         /* entries naming a slide already given */
    size_t too_long;           /* paths over the protocol's 4096 bytes */
    char *note;                /* the first thing worth telling the user
                                  about the search (depth limit, a folder
                                  that could not be read), or NULL */
    char **folders;            /* the folders given and searched: not
                                  slides, so a record of one (a run before
                                  the folder was there took it for one)
                                  is dropped (rerun.c) */
    size_t nfolders;
    void *seen;                /* private: paths already in the list, as
                                  given and with their folder resolved */
    void *shown;               /* private: redacted URL -> the URL */
} qc_cohort_t;

/* Adds one command-line argument: a file, a folder, a pattern or a .tsv
 * list. -1 with a message in err only when the input itself cannot be
 * read (a list file, memory); a slide file that does not exist is added
 * all the same (the check below names it). A pattern that matches
 * nothing is an error naming it. */
int qc_cohort_add (qc_cohort_t *c, const char *arg, char *err, size_t errlen);
/* Adds the slides a list or .tsv file names ('-': standard input). */
int qc_cohort_add_list (qc_cohort_t *c, const char *listfile, char *err,
                        size_t errlen);

/* Why path cannot be read by this machine now ("No such file or
 * directory", "Permission denied", "is a folder with no slides"), or
 * NULL when it can. Returns a static string. */
const char *qc_cohort_unreadable (const char *path);

/* The first slide of c whose results could not go in folder dir (the
 * output folder), or NULL (none; dir not there or NULL): a slide's
 * results go in a folder of its file name there, so one that lies in
 * dir itself (*in set true; folders told by device and inode, a link
 * or another spelling of one the same) or whose name a file in dir
 * already has (*in false: the slide itself, given through a link from
 * elsewhere) would fail at its first result. */
const char *qc_cohort_slide_in (const qc_cohort_t *c, const char *dir, bool *in);

void qc_cohort_free (qc_cohort_t *c);

/* Walks (cohort_walk.c): every slide file under dir, or every match of
 * an absolute pattern, handed to add in sorted order. */
typedef int (qc_cohort_add_fn) (void *arg, const char *path);
int qc_cohort_walk_folder (const char *dir, qc_cohort_add_fn *add, void *arg,
                           char **note);
int qc_cohort_walk_glob (const char *pattern, qc_cohort_add_fn *add, void *arg,
                         char **note);
/* 1 when the argument has glob characters. */
int qc_cohort_is_pattern (const char *arg);
/* 1 when the file name has a slide extension (what OpenSlide opens). */
int qc_cohort_is_slide_name (const char *name);
/* Within the cohort's files: whether name is a spreadsheet's list
 * (name.csv, in any case: Windows' .CSV), and path made absolute as
 * entries are (under -p when relative; malloc'd, NULL on memory). */
bool qc_cohort_is_csv (const char *name);
char *qc_cohort_absolute (const qc_cohort_t *c, const char *path);
/* An absolute path with its folder resolved (links, "..", another
 * spelling of the same folder) and its file name as it is: a link to a
 * slide stays a slide of its own. malloc'd; NULL when the folder is not
 * there (or no memory, or path is not absolute). */
char *qc_cohort_folder_resolved (const char *path);

#endif
