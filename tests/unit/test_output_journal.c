/* The client's journal of what it wrote (OUTDIR/.qc-job, client/output.c):
 * a result is "begin IDX TSV ERR" (the tables' sizes before it), its row
 * or error line and files, then "done IDX". A crash between the two (a
 * row on disk, no "done") is cut back on attach, so the result written
 * again leaves no duplicate row; an image that cannot be written for its
 * own reasons (a file where the slide's folder goes) is said in qc.log
 * and the result is still done. The job line keeps the job's id and
 * identity key. Real files in a temporary folder. */
#include "client/output.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/check.h"

static char s_dir[] = "/tmp/qc-outjournal-XXXXXX";
static const char *s_cols[] = {"filename", "base_mag", "warnings"};

static qc_output_t *
open_out (bool attach)
{
    qc_output_config_t oc = {.outdir = s_dir, .pipeline = "p", .config_file = "default",
                             .command_line = "test", .columns = s_cols, .ncolumns = 3,
                             .attach_job = attach ? 7 : 0};
    char err[512];
    qc_output_t *o = qc_output_open (&oc, attach, NULL, err, sizeof err);
    CHECK (o != NULL, "%s", err);
    return o;
}

static qc_msg_t *
result (uint64_t idx, const char *path, bool ok)
{
    qc_msg_t *m = qc_msg_new (QC_RESULT);
    m->idx = idx;
    qc_msg_set_str (&m->path, path);
    m->result = qc_result_new ();
    if (ok)
        qc_result_set (m->result, "base_mag", "40.0");
    else
        qc_result_fail (m->result, "bad slide");
    return m;
}

static int
count_lines (const char *name, const char *with)
{
    char p[256], line[1024];
    snprintf (p, sizeof p, "%s/%s", s_dir, name);
    FILE *f = fopen (p, "r");
    int n = 0;
    while (f && fgets (line, sizeof line, f))
        n += strstr (line, with) != NULL;
    if (f)
        fclose (f);
    return n;
}

int
main (void)
{
    if (!mkdtemp (s_dir))
        return 1;
    char err[512];
    qc_output_t *o = open_out (false);
    /* the job's slides by task index: names come from here, not from
     * what a result says */
    const char *paths[] = {"/s/a.svs", "/s/b.svs", "/s/c.svs", "/s/d.svs"};
    for (int i = 0; i < 4; i++)
        CHECK (qc_output_plan (o, paths[i]) == 0);
    CHECK (qc_output_set_job (o, 7, 0xabcdef0123456789ull, "tcp://h:1", err, sizeof err) == 0,
           "%s", err);
    qc_msg_t *a = result (0, "/s/a.svs", true), *b = result (1, "/s/b.svs", false);
    CHECK (qc_output_result (o, a, err, sizeof err) == 0, "%s", err);
    CHECK (qc_output_result (o, b, err, sizeof err) == 0, "%s", err);
    qc_output_close (&o);
    /* a crash after c's row and before its "done" line: the journal says
     * begin, the row is there */
    char p[256];
    snprintf (p, sizeof p, "%s/results.tsv", s_dir);
    struct stat st;
    stat (p, &st);
    long long tsv = (long long) st.st_size;
    snprintf (p, sizeof p, "%s/error.log", s_dir);
    stat (p, &st);
    snprintf (p, sizeof p, "%s/.qc-job", s_dir);
    FILE *j = fopen (p, "a");
    fprintf (j, "begin 2 %lld %lld\n", tsv, (long long) st.st_size);
    fclose (j);
    snprintf (p, sizeof p, "%s/results.tsv", s_dir);
    FILE *t = fopen (p, "a");
    fprintf (t, "c.svs\t40.0\t\n");
    fclose (t);
    CHECK (count_lines ("results.tsv", "c.svs") == 1);
    o = open_out (true);
    uint64_t key = 0;
    CHECK (o && qc_output_job (o, &key) == 7 && key == 0xabcdef0123456789ull,
           "the job line keeps id and key");
    CHECK (count_lines ("results.tsv", "c.svs") == 0, "the interrupted row was cut back");
    CHECK (qc_output_written (o) == 2 && qc_output_has (o, 0) && qc_output_has (o, 1)
           && !qc_output_has (o, 2));
    qc_msg_t *c = result (2, "/s/c.svs", true);
    CHECK (qc_output_result (o, c, err, sizeof err) == 0, "%s", err);
    CHECK (qc_output_result (o, c, err, sizeof err) == 0, "a second time is skipped");
    CHECK (count_lines ("results.tsv", "c.svs") == 1, "written once");
    CHECK (count_lines ("error.log", "b.svs") == 1);
    /* files that cannot be written: no "done", the caller stops */
    qc_msg_t *d = result (3, "/s/d.svs", true);
    qc_result_add_file (d->result, "_thumb.png", "x", 1);
    snprintf (p, sizeof p, "%s/d.svs", s_dir);
    FILE *block = fopen (p, "w");     /* a file where the folder should go */
    if (block)
        fclose (block);
    /* refused, as a full disk is: no row without its images (a row
       here said "ok" over images lost: an operator's review) */
    CHECK (qc_output_result (o, d, err, sizeof err) == -1
           && strstr (err, "a file of that name is in the way"), "%s", err);
    CHECK (!qc_output_has (o, 3) && count_lines (".qc-job", "done 3") == 0
           && count_lines ("results.tsv", "d.svs") == 0, "no row, the result not done");
    CHECK (count_lines ("qc.log", "cannot create the folder of /s/d.svs: Not a directory") == 1,
           "qc.log says which image folder could not be made");
    qc_output_close (&o);
    qc_msg_destroy (&a);
    qc_msg_destroy (&b);
    qc_msg_destroy (&c);
    qc_msg_destroy (&d);
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    CHECK (system (cmd) == 0);
    return check_done ("test_output_journal");
}
