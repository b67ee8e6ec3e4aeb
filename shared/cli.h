/* Small helpers every program's command line uses: exit codes, number
 * parsing with range checks, signal flags. */
#ifndef QC_CLI_H
#define QC_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

enum {
    QC_EXIT_OK = 0,
    QC_EXIT_FAILED = 1,       /* some slides failed */
    QC_EXIT_USAGE = 2,
    QC_EXIT_NO_BROKER = 3,    /* cannot reach (or be) the broker */
    QC_EXIT_INCOMPLETE = 5,   /* qc-submit stopped before every slide had a
                                 result (the output folder refused a write,
                                 the broker lost or cut the job): what was
                                 written is kept; the same command again
                                 goes on. Not 1: a batch script that takes
                                 0 and 1 for "the cohort is done" must not
                                 drop what it needs to go on (4 is
                                 deploy/slurm's "the broker did not start") */
    QC_EXIT_BUSY = 6,         /* qc-submit: another qc-submit writes into
                                 OUTDIR now; nothing was done. Not 2: the
                                 same command later goes on, which a
                                 workflow manager may retry on, and must
                                 not on a usage error */
    QC_EXIT_TROUBLE = 7,      /* qc-status: the broker answered, and has
                                 trouble of its own (its state folder
                                 cannot be written): a readiness probe
                                 goes by the code */
    QC_EXIT_INTERRUPTED = 130 /* stopped by SIGINT/SIGTERM (128 + SIGINT) */
};

/* Said after "no answer from broker EP in N s" when nothing more is
 * known (the handshake gave no reason): the usual causes. */
#define QC_CLI_NO_BROKER_HINT \
    "is a qc-broker running there (listening where its --bind says), of this program's version (--version), and its port open to this machine?"

/* Parses a whole decimal number in [min, max]; -1 with a message on
 * stderr naming the option otherwise. */
int qc_cli_uint (const char *prog, const char *opt, const char *text,
                 unsigned long min, unsigned long max, unsigned long *out);

/* Parses a size in gigabytes (10^9 bytes), a decimal number above 0
 * ("0.5", "200"), into *bytes; -1 with a message on stderr naming the
 * option otherwise. */
int qc_cli_gb (const char *prog, const char *opt, const char *text, uint64_t *bytes);

/* --memory-gb G (qc-worker, qc-submit): G gigabytes as bytes, "0" as 0
 * (no limit); -1 with a message on stderr otherwise. */
int qc_cli_memory_gb (const char *prog, const char *text, int64_t *bytes);

/* Opens /dev/null on whichever of descriptors 0, 1 and 2 the process
 * was started without (a script's `2>&-`, a scheduler that closes
 * them): otherwise the next file opened takes that number and every
 * message meant for stderr is written into it (qc-submit's OUTDIR/
 * .qc-lock, or an eventfd of libzmq's). Call first in main. */
void qc_cli_std_fds (void);
/* Whether qc_cli_std_fds found standard output closed (`>&-`): what a
 * program prints there for a script (qc-submit --detach's job id,
 * qc-status) would go nowhere, unheard. */
bool qc_cli_stdout_closed (void);

/* Raises this process's open-file limit to its hard limit: a cohort's
 * slides, sockets and output files each take descriptors, and a soft
 * limit of 1024 (or less, under a batch system) is far under what the
 * machine allows. Quiet: what cannot be raised stays as it was. */
void qc_cli_raise_open_files (void);

/* Raises the limit as above; when even then fewer than least files may
 * be open, says so on stderr (what for, how to raise it) and returns -1.
 * Below such a floor libzmq itself asserts (binding an address needs a
 * descriptor it does not check for). */
int qc_cli_need_open_files (const char *prog, unsigned long least, const char *for_what);

/* When ulimit -v leaves less than mb MB of address space now: says so on
 * stderr and returns -1 (below such a floor libzmq's C++ throws
 * std::bad_alloc, an abort, and no slide could be read anyway). */
int qc_cli_need_address_space (const char *prog, unsigned long mb, const char *for_what);

/* Counts SIGINT/SIGTERM/SIGHUP in qc_cli_signals; disables czmq's own
 * handler so that polling loops are not interrupted behind our back;
 * ignores SIGPIPE and SIGXFSZ (their writes fail with an error instead). */
extern volatile sig_atomic_t qc_cli_signals;
void qc_cli_install_signals (void);

void qc_cli_version (const char *prog);

/* This build's version: VERSION and the commit it was built from
 * ("0.1.0+g1a2b3c4d"; VERSION alone outside a git tree). Workers send it
 * in READY; the broker warns when it differs from its own. */
const char *qc_version_full (void);

/* After getopt has said what is wrong with an option: one line on
 * where the options are, not the whole help. Returns QC_EXIT_USAGE. */
int qc_cli_bad_option (const char *prog);

/* The QC_* variables an operator sets in a program's environment (a
 * container's, a unit's): QC_LOG_LEVEL, QC_IMAGE_CACHE_MB,
 * QC_ASSET_STORE_MB, QC_DIRECT_READ, QC_GPU_RESIDENT, QC_GPU_DECODE,
 * QC_NVJPEG_BACKEND, QC_NVJPEG_LIB (a path must be a readable file).
 * Their readers
 * take a value they cannot parse as if the variable were unset, so
 * QC_IMAGE_CACHE_MB=512MB left the cache at its default and
 * QC_DIRECT_READ=false read directly: a value none of them takes is
 * refused here, as the option that sets the same is (an empty one is
 * unset). 0, or -1 with a message on stderr. Call before any work. */
int qc_cli_check_env (const char *prog);

/* A path option's value with a leading "~" or "~user" made the home
 * folder, as a shell does and HistoQC does to its -o and -p
 * (os.path.expanduser): a value given as --outdir=~/x, or passed on
 * unexpanded by a workflow manager, would otherwise name a folder "~" in
 * the working directory. arg itself when there is nothing to expand (or
 * no such home); else a copy, kept until the process exits. */
const char *qc_cli_home (const char *arg);

/* QC_NVJPEG_BACKEND's value name (NULL or empty: unset): the index of
 * name in "default", "hybrid", "gpu" (unset), "hardware", which are
 * nvJPEG's own numbers of those decoders (kernels/ops/cuda/jpeg_tiles.cu
 * passes them on); -1 when it is none of them. */
int qc_cli_nvjpeg_backend (const char *name);

/* A per-user folder, DIR/name: DIR is $xdg_var when absolute (the XDG
 * rules: a relative one is ignored, as is an empty one), else
 * $HOME/home_rel when HOME is absolute and not "/" (a container's user
 * without a home has HOME=/, which gave "//.cache"). NULL when neither,
 * or when it does not fit buf. */
const char *qc_cli_user_dir (const char *xdg_var, const char *home_rel, const char *name,
                             char *buf, size_t len);

/* --log-level: sets the stderr threshold from "debug", "info", "warning"
 * or "error"; -1 with a message on stderr otherwise. */
int qc_cli_log_level (const char *prog, const char *text);

#endif
