/* Log records hold names, paths and reasons that came from peers: no
 * control byte of theirs reaches a log line or a terminal (a newline
 * forged a whole broker log line; an escape sequence drove the
 * operator's terminal through qc-status). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared/log.h"
#include "tests/unit/check.h"

static char seen[4096];

static void
sink (const qc_log_record_t *rec, void *arg)
{
    (void) arg;
    snprintf (seen, sizeof seen, "%s", rec->message);
}

int
main (void)
{
    char s[] = "w\x1b[2J\x1b]0;pwned\a\tname\n2026-11-28 WARNING forged\x7f";
    CHECK (qc_scrub_controls (s) == s, "returns its argument");
    CHECK (strcmp (s, "w?[2J?]0;pwned? name?2026-11-28 WARNING forged?") == 0, "scrubbed: %s", s);
    CHECK (qc_scrub_controls (NULL) == NULL, "NULL");
    char utf8[] = "Gewebe \xc3\xa4 \xe2\x9c\x93";
    qc_scrub_controls (utf8);
    CHECK (strcmp (utf8, "Gewebe \xc3\xa4 \xe2\x9c\x93") == 0, "UTF-8 is kept: %s", utf8);

    /* a record: the message as the sink gets it, and the stderr line */
    qc_log_set_sink (sink, NULL, "w1");
    int fds[2];
    CHECK (pipe (fds) == 0, "pipe");
    int saved = dup (2);
    dup2 (fds[1], 2);
    qc_log_set_stderr_enabled (1);
    qc_log_set_slide ("a\nb.svs");
    qc_log (QC_LOG_WARNING, "test", "worker %s joined", "evil\n2001-01-01 ERROR broker: x\x1b[31m");
    fflush (stderr);
    dup2 (saved, 2);
    close (fds[1]);
    char line[4096] = "";
    ssize_t n = read (fds[0], line, sizeof line - 1);
    line[n > 0 ? n : 0] = '\0';
    close (fds[0]);
    CHECK (strcmp (seen, "worker evil?2001-01-01 ERROR broker: x?[31m joined") == 0,
           "the sink's message: %s", seen);
    CHECK (n > 0 && strchr (line, '\n') == line + n - 1 && !strchr (line, '\x1b'),
           "one line on stderr, no escape: %s", line);
    CHECK (strstr (line, "[a?b.svs]") != NULL, "the slide's name scrubbed too: %s", line);
    return check_done ("test_log_scrub");
}
