/* See log.h. stderr lines are written with one fputs so that lines from
 * several threads do not interleave. */
#include "shared/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

static int s_stderr_level = -1;      /* -1: not yet read from environment */
static int s_stderr_enabled = 1;
static char s_process[QC_LOG_MAX_FIELD] = "";

static _Thread_local char t_slide[QC_LOG_MAX_FIELD];
static _Thread_local uint64_t t_job;
static _Thread_local qc_log_sink_fn *t_sink;
static _Thread_local void *t_sink_arg;
static _Thread_local char t_worker[QC_LOG_MAX_FIELD];

static const char *const s_level_names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};

const char *
qc_log_level_name (qc_log_level_t level)
{
    if ((int) level < 0 || level > QC_LOG_ERROR)
        return "?";
    return s_level_names[level];
}

int
qc_log_level_parse (const char *name)
{
    if (!name)
        return -1;
    if (strcasecmp (name, "debug") == 0) return QC_LOG_DEBUG;
    if (strcasecmp (name, "info") == 0) return QC_LOG_INFO;
    if (strcasecmp (name, "warning") == 0 || strcasecmp (name, "warn") == 0)
        return QC_LOG_WARNING;
    if (strcasecmp (name, "error") == 0) return QC_LOG_ERROR;
    return -1;
}

void
qc_log_set_stderr_level (qc_log_level_t level)
{
    s_stderr_level = level;
}

void
qc_log_set_stderr_enabled (int enabled)
{
    s_stderr_enabled = enabled;
}

void
qc_log_set_process (const char *name)
{
    snprintf (s_process, sizeof s_process, "%s", name ? name : "");
}

void
qc_log_set_slide (const char *slide)
{
    snprintf (t_slide, sizeof t_slide, "%s", slide ? slide : "");
}

const char *
qc_log_slide (void)
{
    return t_slide;
}

void
qc_log_set_job (uint64_t job)
{
    t_job = job;
}

uint64_t
qc_log_job (void)
{
    return t_job;
}

void
qc_log_set_sink (qc_log_sink_fn *fn, void *arg, const char *worker)
{
    t_sink = fn;
    t_sink_arg = arg;
    snprintf (t_worker, sizeof t_worker, "%s", worker ? worker : "");
}

void
qc_log_to_sink (const qc_log_record_t *rec)
{
    if (!rec || !t_sink || rec->level < QC_LOG_INFO || rec->level > QC_LOG_ERROR)
        return;
    qc_log_record_t own = *rec;
    own.worker = t_worker[0] ? t_worker : s_process;
    own.slide = rec->slide ? rec->slide : "";
    own.module = rec->module ? rec->module : "";
    own.message = rec->message ? rec->message : "";
    t_sink (&own, t_sink_arg);
}

static int
stderr_level (void)
{
    if (s_stderr_level < 0) {
        int l = qc_log_level_parse (getenv ("QC_LOG_LEVEL"));
        s_stderr_level = l >= 0 ? l : QC_LOG_INFO;
    }
    return s_stderr_level;
}

/* The length of the valid UTF-8 sequence at s (n bytes left), 0 when s
 * starts none: RFC 3629's table of lead bytes and the range of the byte
 * after each (no overlong form, surrogate or code point past U+10FFFF). */
static size_t
utf8_length (const unsigned char *s, size_t n)
{
    static const struct {
        unsigned char lead_lo, lead_hi;
        size_t len;
        unsigned char next_lo, next_hi;
    } forms[] = {
        { 0xC2, 0xDF, 2, 0x80, 0xBF }, { 0xE0, 0xE0, 3, 0xA0, 0xBF },
        { 0xE1, 0xEC, 3, 0x80, 0xBF }, { 0xED, 0xED, 3, 0x80, 0x9F },
        { 0xEE, 0xEF, 3, 0x80, 0xBF }, { 0xF0, 0xF0, 4, 0x90, 0xBF },
        { 0xF1, 0xF3, 4, 0x80, 0xBF }, { 0xF4, 0xF4, 4, 0x80, 0x8F },
    };
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
        if (s[0] < forms[f].lead_lo || s[0] > forms[f].lead_hi)
            continue;
        if (n < forms[f].len || s[1] < forms[f].next_lo || s[1] > forms[f].next_hi)
            return 0;
        for (size_t k = 2; k < forms[f].len; k++)
            if (s[k] < 0x80 || s[k] > 0xBF)
                return 0;
        return forms[f].len;
    }
    return 0;
}

/* Control bytes in a record become '?' (a tab a space): names, paths
 * and reasons in messages come from peers, and a newline in one forged
 * a whole log line, an escape sequence drove the operator's terminal.
 * So do C1 controls written in UTF-8 (U+0080..U+009F: U+009B is a
 * terminal's CSI, as ESC [ is) and every byte that is not valid UTF-8,
 * a byte a '?': journald keeps a line with one as a blob that journalctl
 * does not show, and a Latin-1 file name is no text a terminal shows
 * either. Lengths stay as they are. */
static void
scrub (char *text, size_t n)
{
    if (!text)
        return;
    unsigned char *s = (unsigned char *) text;
    for (size_t i = 0; i < n && s[i];) {
        if (s[i] < 0x80) {
            if (s[i] == '\t')
                s[i] = ' ';
            else if (s[i] < 0x20 || s[i] == 0x7f)
                s[i] = '?';
            i++;
            continue;
        }
        size_t len = utf8_length (s + i, n - i);
        if (len == 0 || (len == 2 && s[i] == 0xC2 && s[i + 1] <= 0x9F)) {
            len = len ? len : 1;
            memset (s + i, '?', len);
        }
        i += len;
    }
}

void
qc_logv (qc_log_level_t level, const char *module, const char *fmt, va_list ap)
{
    if (!fmt)
        return;
    if ((int) level < 0 || level > QC_LOG_ERROR)
        level = QC_LOG_ERROR;
    int to_stderr = s_stderr_enabled && (int) level >= stderr_level ();
    int to_sink = t_sink && level >= QC_LOG_INFO;
    if (!to_stderr && !to_sink)
        return;
    char message[QC_LOG_MAX_MESSAGE];
    vsnprintf (message, sizeof message, fmt, ap);
    scrub (message, strlen (message));
    struct timeval tv;
    gettimeofday (&tv, NULL);
    qc_log_record_t rec = {
        .time = (double) tv.tv_sec + tv.tv_usec / 1e6,
        .level = level,
        .worker = t_worker[0] ? t_worker : s_process,
        .slide = t_slide,
        .module = module ? module : "",
        .message = message,
    };
    if (to_sink)
        t_sink (&rec, t_sink_arg);
    if (to_stderr) {
        char stamp[32];
        struct tm tm;
        time_t secs = tv.tv_sec;
        localtime_r (&secs, &tm);
        strftime (stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
        /* "time LEVEL worker [job N: slide] module: message" */
        char job[32] = "";
        if (t_job && rec.slide[0])
            snprintf (job, sizeof job, "job %" PRIu64 ": ", t_job);
        char line[QC_LOG_MAX_MESSAGE + 4 * QC_LOG_MAX_FIELD];
        int n = snprintf (line, sizeof line, "%s %-7s %s%s%s%s%s%s%s: %s\n", stamp,
                          qc_log_level_name (level), rec.worker,
                          rec.slide[0] ? " [" : "", job, rec.slide,
                          rec.slide[0] ? "]" : "", rec.module[0] ? " " : "",
                          rec.module, message);
        /* a worker's or a slide's name came from a peer too */
        if (n > 1)
            scrub (line, (size_t) n < sizeof line ? (size_t) n - 1 : sizeof line - 2);
        fputs (line, stderr);
    }
}

void
qc_log (qc_log_level_t level, const char *module, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    qc_logv (level, module, fmt, ap);
    va_end (ap);
}

char *
qc_scrub_controls (char *s)
{
    if (s)
        scrub (s, strlen (s));
    return s;
}
