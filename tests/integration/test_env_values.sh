#!/bin/bash
# The QC_* variables an operator sets in a container's or a unit's
# environment: a value no reader takes is refused (exit 2, the variable
# named) by every program, as the option that sets the same is, not
# taken silently as the default (QC_IMAGE_CACHE_MB=512MB left the cache
# at its default, QC_DIRECT_READ=false read directly). Empty is unset.
. "$(dirname "$0")/lib.sh"

refused() {   # refused VAR=VALUE PROGRAM ARGS...: exit 2 naming VAR
    local assign=$1 prog=$2 rc; shift 2
    env "$assign" timeout 20 "$BIN/$prog" "$@" >"$T/out.log" 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "$assign $prog: exit $rc, expected 2: $(tail -2 "$T/out.log")"
    grep -q "${assign%%=*} in the environment" "$T/out.log" \
        || fail "$assign $prog: the variable is not named: $(tail -2 "$T/out.log")"
}
port=$(free_port)
ep=tcp://127.0.0.1:$port
slide=$SHARED/slides/real/CMU-1-Small-Region.svs
refused QC_LOG_LEVEL=verbose qc-broker --bind $ep --state none
refused QC_ASSET_STORE_MB=lots qc-broker --bind $ep --state none
refused QC_IMAGE_CACHE_MB=512MB qc-worker --connect $ep --timeout 1
refused QC_IMAGE_CACHE_MB=-1 qc-worker --connect $ep --timeout 1
refused QC_GPU_RESIDENT=false qc-worker --connect $ep --timeout 1
refused QC_GPU_DECODE=yes qc-worker --connect $ep --timeout 1
refused QC_NVJPEG_BACKEND=nvidia qc-worker --connect $ep --timeout 1
refused QC_NVJPEG_LIB=$T/no-such-libnvjpeg.so.13 qc-worker --connect $ep --timeout 1
refused QC_DIRECT_READ=no qc-submit -o "$T/out-a" "$slide"
[ -e "$T/out-a" ] && fail "a refused qc-submit made its output folder"
refused QC_ASSET_STORE_MB=0 qc-submit -o "$T/out-a" "$slide"
refused QC_LOG_LEVEL=trace qc-status --broker $ep --timeout 1
pass "bad QC_* values refused by every program, the variable named"

# values the readers take, and empty ones, run as before
env QC_LOG_LEVEL=warning QC_IMAGE_CACHE_MB=64 QC_ASSET_STORE_MB=128 QC_DIRECT_READ=0 \
    QC_GPU_RESIDENT= QC_GPU_DECODE=0 QC_NVJPEG_BACKEND=hardware QC_NVJPEG_LIB=libnvjpeg.so.13 "$BIN/qc-submit" -o "$T/out-b" "$slide" >"$T/b.log" 2>&1 \
    || fail "good values: qc-submit exit $?: $(tail -3 "$T/b.log")"
[ "$(grep -vc '^#' "$T/out-b/results.tsv")" -eq 1 ] || fail "good values: no result row"
env QC_LOG_LEVEL= QC_IMAGE_CACHE_MB= "$BIN/qc-status" --broker $ep --timeout 1 >"$T/c.log" 2>&1
[ $? -eq 3 ] || fail "empty values: qc-status did not go on to the broker: $(tail -2 "$T/c.log")"
pass "good and empty values taken"
