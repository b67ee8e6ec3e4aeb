#!/bin/sh
# Installs the Debian 12 packages that building, `make demo`, `make test`
# and `make bench` need: libraries and every command the scripts call.
# Does nothing when they are all there; needs root (or sudo) otherwise.
#   tests/install-deps.sh           install what is missing
#   tests/install-deps.sh --list    print the package names, one a line
#   tests/install-deps.sh --list build   only those the build needs (the
#                                   Ansible roles install these on hosts)
#   tests/install-deps.sh --check   print the missing ones; exit 1 if any
# tests/deps/check_deps.py (run by `make test`) checks that every command
# the scripts call comes from a package named here (or an Essential one).
set -e

# Build: compiler, make, ar, pkg-config and the libraries' -dev packages
# (GLib's: OpenSlide speaks through GLib's log, which the slide reader
# takes over, kernels/slide/openslide_log.c).
BUILD="build-essential gcc make binutils pkg-config
    libzmq3-dev libczmq-dev libmsgpack-dev libopenslide-dev
    libcurl4-openssl-dev libpng-dev zlib1g-dev libjpeg-dev libtiff-dev
    libsodium-dev libglib2.0-dev"
# Tests and benchmarks: OpenSlide's command-line tools (test_mkslide.sh
# checks generated slides with them), awk, python3 (the dependency check,
# the fault server of test_fetch_http), python3-shapely (GEOS, the C++
# twin of the JTS that QuPath reads GeoJSON with: test_histoqc_configs.sh
# checks saveMask2Geojson's polygons with it), python3-numpy (the same
# test redoes skimage's equalize_hist with it); nginx (a real HTTP server
# that honours Range, for the slides-by-URL tests and bench_fetch); clang
# and its libFuzzer runtime (make fuzz, test_fuzz.sh); Ansible
# (ansible-core has ansible-playbook), ansible-lint and systemd-analyze
# (test_ansible.sh runs deploy/ansible for real); a one-node Slurm cluster
# with munge (slurm-client has sbatch), and pgrep to see what
# a job left running (test_slurm.sh); faketime (libfaketime steps the
# broker's wall clock in test_disk_full.sh); gdb (test_client_stops.sh
# holds a broker still between a SUBMIT and its ACCEPTED); python3-zmq
# and python3-msgpack (test_foreign_client.sh, test_foreign_worker.sh: a
# client and a worker written from PROTOCOL.md alone, in another
# language); openssl (test_slides_https.sh makes a certificate authority
# and a server certificate with it); e2fsprogs (test_state_readonly.sh
# makes an ext4 file system for a broker's state folder; test_state_disk_full.sh
# fills one, test_output_sync_fails.sh an ext2 for an output folder)
# and mount (losetup: test_output_sync_fails.sh cuts a loop device under
# it); util-linux (fsfreeze, nsenter: test_output_hangs.sh freezes an
# output folder's file system mid-job); apt for this script itself.
TESTS="openslide-tools mawk python3 python3-shapely python3-numpy python3-zmq python3-msgpack
    nginx clang libclang-rt-14-dev
    ansible ansible-core ansible-lint systemd slurm-wlm slurm-client slurmctld slurmd munge
    procps faketime gdb apt openssl e2fsprogs mount util-linux"
PKGS="$BUILD $TESTS"

case "${1:-}" in
    --list)
        case "${2:-all}" in
            build) list=$BUILD ;;
            all) list=$PKGS ;;
            *) echo "install-deps.sh: --list takes 'build' or nothing" >&2; exit 2 ;;
        esac
        for p in $list; do echo "$p"; done; exit 0 ;;
    --check|"") ;;
    -h|--help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac

missing=""
for p in $PKGS; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ "${1:-}" = "--check" ]; then
    [ -z "$missing" ] && exit 0
    echo "missing:$missing"; exit 1
fi
[ -z "$missing" ] && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
        echo "install-deps.sh: not root and no sudo; as root run: apt-get install$missing" >&2; exit 2; }
    SUDO=sudo
fi
echo "installing:$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
