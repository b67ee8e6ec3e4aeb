/* libFuzzer target: the client's output writer (client/output.c): a
 * RESULT message from the input (decoded as qc-submit decodes what the
 * broker sends) written into an output folder on /dev/shm, as a result
 * and as a log record. The folder is made again every few thousand
 * inputs so the disk does not fill. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/output.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char s_dir[64];
static qc_output_t *s_out;
static unsigned s_count;

static void
reopen (void)
{
    qc_output_close (&s_out);
    if (s_dir[0]) {
        char cmd[128];
        snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
        if (system (cmd)) {
            /* the next mkdtemp makes another folder anyway */
        }
    }
    snprintf (s_dir, sizeof s_dir, "%s/qc-fuzz-out-XXXXXX",
              access ("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp (s_dir))
        abort ();
    static const char *cols[] = {"filename", "base_mag", "comments", "warnings"};
    qc_output_config_t oc = {.outdir = s_dir, .pipeline = "fuzz", .config_file = "default",
                             .command_line = "fuzz", .columns = cols, .ncolumns = 4};
    char err[512];
    if (!(s_out = qc_output_open (&oc, false, NULL, err, sizeof err)))
        abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (!s_out || ++s_count % 2000 == 0)
        reopen ();
    uint8_t hdr[4] = {'Q', 'C', QC_PROTO_VERSION, QC_RESULT};
    char err[512];
    qc_msg_t *m = qc_msg_decode_bytes (hdr, 4, data, size, err, sizeof err);
    if (!m)
        return 0;
    /* as many index values as the writer's bitmap may meet */
    m->idx %= 1u << 20;
    qc_output_result (s_out, m, err, sizeof err);
    m->command = QC_LOG;
    m->message = m->path ? strdup (m->path) : strdup ("x");
    qc_output_log (s_out, m);
    qc_msg_destroy (&m);
    return 0;
}
