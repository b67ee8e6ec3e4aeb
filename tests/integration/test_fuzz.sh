#!/bin/bash
# A short run of each libFuzzer target (tests/fuzz/README.md): the
# protocol decoder, the config parser, the broker's journal reader, the
# client's output writer, the slide readers on a slide's bytes (as
# served over HTTP), a cohort entry's URL handling and an annotation
# file beside a slide, built with clang,
# ASan and UBSan by `make fuzz`.
# Each runs a few seconds from its seeds; any crash, leak or sanitizer
# report fails the test (the input is kept in $T, shown below).
. "$(dirname "$0")/lib.sh"

command -v clang >/dev/null || fail "clang is not installed (tests/install-deps.sh)"
make -s fuzz >"$T/build.log" 2>&1 || fail "make fuzz failed: $(tail -5 "$T/build.log")"
secs=${QC_FUZZ_SECONDS:-5}
for t in proto config journal output slide url annot; do
    bin=$ROOT/build-fuzz/fuzz/fuzz_$t
    [ -x "$bin" ] || fail "$bin not built"
    mkdir -p "$T/corpus-$t"
    ( cd "$T" && "$bin" -max_total_time=$secs -print_final_stats=1 "$T/corpus-$t" \
          "$ROOT/build-fuzz/fuzz/corpus/$t" ) >"$T/fuzz-$t.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$T/fuzz-$t.log")
    [ $rc -eq 0 ] || { ls "$T"/crash-* "$T"/leak-* 2>/dev/null; \
        fail "fuzz_$t found a failure: $(grep -m3 -E 'ERROR|SUMMARY|runtime error' "$T/fuzz-$t.log")"; }
    # inputs really ran (a target that fails at start runs a handful);
    # how many depends on the load: other tests run beside this one
    [ "${runs:-0}" -ge 200 ] || fail "fuzz_$t ran only ${runs:-0} inputs in $secs s"
    pass "fuzz_$t: $runs inputs in $secs s, no failure"
done
