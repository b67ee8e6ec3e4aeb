/* Log records hold names, paths and reasons that came from peers: no
 * control byte of theirs reaches a log line or a terminal (a newline
 * forged a whole broker log line; an escape sequence drove the
 * operator's terminal through qc-status), nor a C1 control written in
 * UTF-8 or a byte that is not UTF-8 (journald keeps such a line as a
 * blob journalctl does not show); valid UTF-8 is kept. */
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
    char utf8[] = "Gewebe \xc3\xa4 \xe2\x9c\x93 \xf0\x9f\x94\xac \xef\xbf\xbd \xf4\x8f\xbf\xbf";
    qc_scrub_controls (utf8);
    CHECK (strcmp (utf8, "Gewebe \xc3\xa4 \xe2\x9c\x93 \xf0\x9f\x94\xac \xef\xbf\xbd "
                   "\xf4\x8f\xbf\xbf") == 0, "UTF-8 is kept: %s", utf8);
    /* a C1 control in UTF-8 (U+009B, CSI: a terminal's ESC [) and bytes
     * that are no UTF-8: Latin-1, a lone continuation byte, an overlong
     * '/', a surrogate, past U+10FFFF, a sequence cut short by the end;
     * each byte a '?', the length kept */
    char bad[] = "\xc2\x9b" "2J|Gewebe\xe4.svs|\x80|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x9c";
    size_t before = strlen (bad);
    qc_scrub_controls (bad);
    CHECK (strcmp (bad, "??2J|Gewebe?.svs|?|??|???|????|??") == 0 && strlen (bad) == before,
           "not UTF-8, C1: %s", bad);
    /* the byte after a bad one is judged on its own */
    char resync[] = "\xff\xc3\xa4\xe2\x9c\xc3\xa4";
    qc_scrub_controls (resync);
    CHECK (strcmp (resync, "?\xc3\xa4??\xc3\xa4") == 0, "resync: %s", resync);

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
