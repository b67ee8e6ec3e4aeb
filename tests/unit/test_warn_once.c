/* client/warn_once.c: a warning repeated slide after slide is printed
 * once and summed up by the slides it came from; a slide that ran twice
 * (a broker restart runs it again) counts once. A failed slide's error
 * printed already in its ERROR line is known as such (its FAILED line
 * need not repeat it); one not printed (the same error of another
 * slide, printed once) is not. HistoQC's "NO tissue remains", one line
 * a step, is one warning a slide. */
#include <string.h>

#include "client/warn_once.h"
#include "shared/log.h"
#include "tests/unit/check.h"

static qc_msg_t
record (uint64_t idx, const char *slide)
{
    static char text[128];
    snprintf (text, sizeof text, "%s- saveMacro Can't Read 'macro' Image", slide);
    return (qc_msg_t) {.command = QC_LOG, .gpu = -1, .job = 1, .task = idx + 1,
                       .level = QC_LOG_WARNING, .slide = (char *) slide,
                       .module = "SaveModule.saveMacro", .message = text};
}

int
main (void)
{
    qc_warn_once_t *w = qc_warn_once_new ();
    CHECK (w != NULL);
    static const char *names[] = {"a.svs", "b.svs", "c.svs"};
    int printed = 0;
    for (int i = 0; i < 3; i++) {
        qc_msg_t m = record ((uint64_t) i, names[i]);
        printed += qc_warn_once_first (w, &m);
    }
    qc_msg_t again = record (1, "b.svs");           /* b.svs ran again */
    printed += qc_warn_once_first (w, &again);
    qc_msg_t same_name = record (7, "a.svs");       /* another slide named a.svs */
    printed += qc_warn_once_first (w, &same_name);
    CHECK (printed == 1, "printed %d times", printed);
    char out[1024] = "";
    FILE *f = fmemopen (out, sizeof out - 1, "w");
    qc_warn_once_summary (w, f);
    fclose (f);
    CHECK (strstr (out, "warning for 4 slides (printed once above; each is in qc.log): "
                        "SaveModule.saveMacro: <slide>- saveMacro Can't Read 'macro' Image"),
           "summary: %s", out);
    qc_warn_once_destroy (&w);
    CHECK (w == NULL);
    /* records that do not say their task (an older worker: task 0) each
       count, as before: two slides of one name are not taken for one */
    w = qc_warn_once_new ();
    for (int i = 0; i < 2; i++) {
        qc_msg_t m = record (0, "HE.svs");
        m.task = 0;
        qc_warn_once_first (w, &m);
    }
    f = fmemopen (out, sizeof out - 1, "w");
    qc_warn_once_summary (w, f);
    fclose (f);
    CHECK (strstr (out, "warning for 2 slides"), "without task: %s", out);
    qc_warn_once_destroy (&w);
    /* errors of attempts whose slides passed when run again (a worker
       killed under them) say so: "error for 3 slides" beside "3
       passed" read as results lost; a warning says nothing of it */
    w = qc_warn_once_new ();
    for (int i = 0; i < 3; i++) {
        qc_msg_t m = record ((uint64_t) i, names[i]);
        m.level = QC_LOG_ERROR;
        qc_warn_once_first (w, &m);
        qc_msg_t warn = record ((uint64_t) i, names[i]);
        qc_warn_once_first (w, &warn);
    }
    qc_warn_once_result (w, 0, true);
    qc_warn_once_result (w, 1, false);
    qc_warn_once_result (w, 1, true);      /* the last result counts */
    qc_warn_once_result (w, 2, false);
    f = fmemopen (out, sizeof out - 1, "w");
    qc_warn_once_summary (w, f);
    fclose (f);
    CHECK (strstr (out, "error for 3 slides (printed once above; each is in qc.log; 2 "
                        "passed when run again): SaveModule"), "errors: %s", out);
    CHECK (strstr (out, "warning for 3 slides (printed once above; each is in qc.log): "),
           "warnings: %s", out);
    qc_warn_once_result (w, 2, true);
    f = fmemopen (out, sizeof out - 1, "w");
    qc_warn_once_summary (w, f);
    fclose (f);
    CHECK (strstr (out, "qc.log; all 3 passed when run again)"), "all passed: %s", out);
    qc_warn_once_result (NULL, 0, true);
    qc_warn_once_destroy (&w);

    w = qc_warn_once_new ();
    for (int i = 0; i < 2; i++) {
        qc_msg_t m = record ((uint64_t) i, names[i]);
        m.level = QC_LOG_ERROR;
        CHECK (qc_warn_once_first (w, &m) == (i == 0), "the error printed once");
    }
    char err0[256], err1[256];
    snprintf (err0, sizeof err0, "a.svs: SaveModule.saveMacro: %s", record (0, "a.svs").message);
    snprintf (err1, sizeof err1, "b.svs: SaveModule.saveMacro: %s", record (1, "b.svs").message);
    CHECK (!qc_warn_once_error_shown (w, 0, "a.svs: another error"), "another text: not shown");
    qc_msg_t m0 = record (0, "a.svs");
    m0.level = QC_LOG_ERROR;
    qc_warn_once_first (w, &m0);    /* printed? no: a kind seen; still not shown */
    CHECK (!qc_warn_once_error_shown (w, 0, err0), "a line not printed again is not shown");
    CHECK (!qc_warn_once_error_shown (w, 1, err1), "b.svs's error was not printed");
    qc_msg_t c = record (2, "c.svs");
    c.level = QC_LOG_ERROR;
    c.module = "BaseImage.BaseImage";
    CHECK (qc_warn_once_first (w, &c), "another kind printed");
    char err2[256];
    snprintf (err2, sizeof err2, "c.svs: BaseImage.BaseImage: %s", c.message);
    CHECK (qc_warn_once_error_shown (w, 2, err2), "c.svs's error printed in its ERROR line");
    CHECK (!qc_warn_once_error_shown (w, 2, err2), "forgotten once asked");
    CHECK (!qc_warn_once_error_shown (NULL, 2, err2) && !qc_warn_once_error_shown (w, 2, NULL),
           "NULLs");
    qc_warn_once_destroy (&w);

    /* HistoQC's "NO tissue remains", in each step's words: one line a
       slide (its first step's), one kind for the summary, counted by
       slides; another warning of the same steps is its own kind */
    w = qc_warn_once_new ();
    static const struct { const char *module, *message; } steps[] = {
        {"MorphologyModule.removeFatlikeTissue", "After MorphologyModule.removeFatlikeTissue: "
         "NO tissue remains detectable! Downstream modules likely to be incorrect/fail"},
        {"HistogramModule.compareToTemplates", "HistogramModule.compareToTemplates NO tissue "
         "remains detectable in mask!"},
        {"BrightContrastModule.getContrast", "After BrightContrastModule.getContrast: NO tissue "
         "remains detected, statistics are impossible to compute, defaulting to -100 !"},
    };
    int lines = 0;
    for (int slide = 0; slide < 2; slide++)
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
            qc_msg_t m = {.command = QC_LOG, .gpu = -1, .job = 1, .task = (uint64_t) slide + 1,
                          .level = QC_LOG_WARNING, .slide = (char *) names[slide],
                          .module = (char *) steps[i].module,
                          .message = (char *) steps[i].message};
            bool first = qc_warn_once_first (w, &m);
            CHECK (first == (slide == 0 && i == 0), "slide %d step %zu printed: %d", slide,
                   i, first);
            lines += first;
        }
    qc_msg_t other = {.command = QC_LOG, .gpu = -1, .job = 1, .task = 1,
                      .level = QC_LOG_WARNING, .slide = (char *) "a.svs",
                      .module = (char *) "BaseImage.BaseImage",
                      .message = (char *) "the slide's glass is dark"};
    CHECK (qc_warn_once_first (w, &other), "another warning printed");
    CHECK (lines == 1, "no-tissue lines: %d", lines);
    f = fmemopen (out, sizeof out - 1, "w");
    qc_warn_once_summary (w, f);
    fclose (f);
    CHECK (strstr (out, "warning for 2 slides (printed once above; each is in qc.log): NO "
                        "tissue remains detectable after one of the steps (HistoQC's warning; "
                        "each step's own is in qc.log)\n") && !strstr (out, "glass"),
           "no-tissue summary: %s", out);
    qc_warn_once_destroy (&w);
    CHECK (qc_warn_once_first (NULL, &again), "NULL table: printed");
    return check_done ("test_warn_once");
}
