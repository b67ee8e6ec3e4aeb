#!/bin/bash
# Runs every unit test binary given on the command line, then every
# integration script tests/integration/test_*.sh (unless --unit-only), and
# prints the closing line "N passed, N failed" (", N skipped" when a test
# exited 77: it cannot run here, and says why). Each binary or script is
# one test; its output goes to build/test-logs/NAME.log and is shown when
# it fails.
set -u
cd "$(dirname "$0")/.." || exit 2
unit_only=0
if [ "${1:-}" = "--unit-only" ]; then unit_only=1; shift; fi
export QC_SHARED_DIR="${QC_SHARED_DIR:-$(cd .. && pwd)/shared}"
logs=build/test-logs
mkdir -p "$logs"
passed=0; failed=0; skipped=0; failures=()
run_one() {
    local name=$1; shift
    local start=$SECONDS
    timeout 900 "$@" >"$logs/$name.log" 2>&1
    local rc=$?
    if [ $rc = 0 ]; then
        passed=$((passed + 1)); echo "ok   $name ($((SECONDS - start)) s)"
    elif [ $rc = 77 ]; then
        # a test that cannot run here says why; never a silent pass
        skipped=$((skipped + 1)); echo "SKIP $name: $(grep -m1 '^SKIPPED:' "$logs/$name.log" | cut -c10-)"
    else
        failed=$((failed + 1)); failures+=("$name")
        echo "FAIL $name ($((SECONDS - start)) s)"; tail -n 40 "$logs/$name.log" | sed 's/^/     /'
    fi
}
for t in "$@"; do run_one "$(basename "$t")" "$t"; done
if [ $unit_only = 0 ]; then
    for s in tests/integration/test_*.sh; do
        [ -e "$s" ] || continue
        run_one "$(basename "$s" .sh)" bash "$s"
    done
fi
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
if [ $skipped -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
