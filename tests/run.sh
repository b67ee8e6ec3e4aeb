#!/bin/bash
# Runs every unit test binary given on the command line and every
# integration script tests/integration/test_*.sh (unless --unit-only), and
# prints the closing line "N passed, N failed" (", N skipped" when a test
# exited 77: it cannot run here, and says why). Each binary or script is
# one test; its output goes to build/test-logs/NAME.log and is shown when
# it fails.
#
# Tests run QC_TEST_JOBS at a time (default: the CPU count, at most 4;
# 1 runs them one by one). They were written to run at once: each has its
# own temporary folder and its own ports (lib.sh's free_port). The
# integration scripts start first, test_ansible (the longest, ~10 min)
# at their head, so the short unit tests fill in at the end.
set -u
cd "$(dirname "$0")/.." || exit 2
unit_only=0
if [ "${1:-}" = "--unit-only" ]; then unit_only=1; shift; fi
export QC_SHARED_DIR="${QC_SHARED_DIR:-$(cd .. && pwd)/shared}"
logs=build/test-logs
mkdir -p "$logs"

jobs=${QC_TEST_JOBS:-}
if [ -z "$jobs" ]; then
    jobs=$(nproc 2>/dev/null || echo 1)
    [ "$jobs" -gt 4 ] && jobs=4
fi
case $jobs in
    ''|*[!0-9]*|0) echo "tests/run.sh: QC_TEST_JOBS=$jobs: give a number of tests to run at once, 1 or more" >&2
                   exit 2;;
esac
# waiting for whichever test ends first (wait -n -p) needs bash 5.1;
# before it, each test runs in the foreground
in_foreground=0
if [ "${BASH_VERSINFO[0]}" -lt 5 ] || { [ "${BASH_VERSINFO[0]}" = 5 ] && [ "${BASH_VERSINFO[1]}" -lt 1 ]; }; then
    [ "$jobs" -gt 1 ] && echo "tests/run.sh: bash $BASH_VERSION runs the tests one by one (at once needs bash 5.1)"
    in_foreground=1
fi

passed=0; failed=0; skipped=0; failures=()
declare -A job_name=() job_start=()   # by PID of the running test
report() {      # report NAME RC SECONDS
    local name=$1 rc=$2 secs=$3
    if [ "$rc" = 0 ]; then
        passed=$((passed + 1)); echo "ok   $name ($secs s)"
    elif [ "$rc" = 77 ]; then
        # a test that cannot run here says why; never a silent pass
        skipped=$((skipped + 1)); echo "SKIP $name: $(grep -m1 '^SKIPPED:' "$logs/$name.log" | cut -c10-)"
    else
        failed=$((failed + 1)); failures+=("$name")
        if [ "$rc" = 124 ]; then
            echo "FAIL $name ($secs s): still running after $(limit_of "$name") s, stopped"
        else
            echo "FAIL $name ($secs s)"
        fi
        tail -n 40 "$logs/$name.log" | sed 's/^/     /'
    fi
}
reap_one() {    # waits for any running test to end and reports it
    local pid rc
    wait -n -p pid
    rc=$?
    [ -n "${pid:-}" ] || return 1
    report "${job_name[$pid]}" $rc $((SECONDS - job_start[$pid]))
    unset "job_name[$pid]" "job_start[$pid]"
}
# (timeout -k: a test hung in a program that catches SIGTERM, as czmq's
# handler does, is killed 30 s after it)
# How long a test may run: 900 s; test_ansible, which provisions
# machines, 1800 s: ~10 min on a quiet 2-core machine, it took 881 s
# beside the other tests (2026-11-30) and had hit 900 once before.
declare -A time_limit=([test_ansible]=1800)
limit_of() { echo "${time_limit[$1]:-900}"; }
start_one() {   # start_one NAME COMMAND...: once a place is free
    local name=$1; shift
    if [ $in_foreground = 1 ]; then
        local start=$SECONDS rc
        timeout -k 30 "$(limit_of "$name")" "$@" >"$logs/$name.log" 2>&1
        rc=$?
        report "$name" $rc $((SECONDS - start))
        return
    fi
    while [ ${#job_name[@]} -ge "$jobs" ]; do reap_one || break; done
    timeout -k 30 "$(limit_of "$name")" "$@" >"$logs/$name.log" 2>&1 &
    job_name[$!]=$name
    job_start[$!]=$SECONDS
}
drain() { while [ ${#job_name[@]} -gt 0 ]; do reap_one || break; done; }
# run.sh stopped (Ctrl-C, a CI timeout): the tests it started stop too
# (timeout passes the signal on to its test)
stop_all() {
    for p in "${!job_name[@]}"; do kill -TERM "$p" 2>/dev/null; done
    exit 130
}
trap stop_all INT TERM

scripts=()
if [ $unit_only = 0 ]; then
    for s in tests/integration/test_ansible.sh tests/integration/test_*.sh; do
        [ -e "$s" ] || continue
        case " ${scripts[*]} " in *" $s "*) continue;; esac
        scripts+=("$s")
    done
fi
for s in "${scripts[@]}"; do start_one "$(basename "$s" .sh)" bash "$s"; done
for t in "$@"; do start_one "$(basename "$t")" "$t"; done
drain
# a test that ended unseen is a failure, never a silent pass
for p in "${!job_name[@]}"; do
    failed=$((failed + 1)); failures+=("${job_name[$p]}")
    echo "FAIL ${job_name[$p]}: its end was not seen (tests/run.sh)"
done

[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
if [ $skipped -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
