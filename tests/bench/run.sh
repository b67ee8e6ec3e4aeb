#!/bin/bash
# Runs every benchmark binary given on the command line (make bench passes
# build/bench/bench_*), one after the other, and prints their output as
# it comes. Builds nothing. Benchmarks report numbers and assert no
# timings: a benchmark fails only when one of its runs could not complete.
# Exit status: 0 when every benchmark ran and exited 0, 1 otherwise,
# 2 when called with nothing to run.
#   BENCH_ARGS="--quick" make bench     extra arguments for every binary
#   BENCH_TIMEOUT=1800                  seconds allowed per binary (1800)
set -u
cd "$(dirname "$0")/../.." || exit 2
if [ $# -eq 0 ]; then
    echo "usage: tests/bench/run.sh BENCH_BINARY..." >&2
    exit 2
fi
limit=${BENCH_TIMEOUT:-1800}
read -r -a extra <<<"${BENCH_ARGS:-}"
failed=()
for b in "$@"; do
    name=$(basename "$b")
    if [ ! -x "$b" ]; then
        echo "== $name: not built ($b)"
        failed+=("$name")
        continue
    fi
    echo "== $name ${extra[*]}"
    start=$SECONDS
    timeout --kill-after=30 "$limit" "$b" "${extra[@]}"
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "== $name: done in $((SECONDS - start)) s"
    else
        [ $rc -eq 124 ] && echo "== $name: stopped after $limit s"
        echo "== $name: FAILED (exit $rc) after $((SECONDS - start)) s"
        failed+=("$name")
    fi
    echo
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "benchmarks that did not complete: ${failed[*]}"
    exit 1
fi
echo "$# benchmark(s) ran"
exit 0
