#!/bin/bash
# Slides by URL when the default slide cache folder cannot be made (a
# cron job's or service account's HOME that is read-only or missing):
# the one-process qc-submit says so and exits 2 before the folder is
# touched (it used to fail each URL slide "no slide cache", with no
# reason and for good: a rerun skipped it); a qc-worker without a cache
# fails such a slide marked for a rerun, naming its log and --cache.
# No slide is fetched: the URL's port is never connected to.
. "$(dirname "$0")/lib.sh"

: >"$T/file"                    # a file where the cache's parent should be
export CACHE_DIRECTORY=$T/file/cache
url=http://127.0.0.1:47499/x.svs

out=$("$BIN/qc-submit" -o "$T/o1" "$url" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "one process, default cache unusable: exit $rc, expected 2: $out"
echo "$out" | grep -q "the default one cannot be used: $T/file/cache: .*(give --cache DIR)" \
    || fail "one process, default cache unusable: no reason: $out"
[ ! -e "$T/o1" ] || fail "one process, default cache unusable: $T/o1 was made"
pass "one process: an unusable default cache is refused before the run (exit 2)"

# a cohort of paths needs no cache: it runs as before
"$BIN/qc-submit" -q -o "$T/o2" "$SHARED/slides/real/CMU-1-Small-Region.svs" \
    || fail "one process, paths only, default cache unusable: exit $?"
pass "one process: paths need no cache"

mkdir -p "$T/st"
"$BIN/qc-broker" --bind "ipc://$T/broker" --state "$T/st" >"$T/broker.log" 2>&1 &
broker=$!
PIDS+=($broker)
"$BIN/qc-worker" --connect "ipc://$T/broker" --slots 1 >"$T/worker.log" 2>&1 &
worker=$!
PIDS+=($worker)
wait_for "the worker to register" 20 "grep -q registered '$T/worker.log'" "$T/worker.log"
grep -q "slides by URL cannot be read: .*$T/file/cache" "$T/worker.log" \
    || fail "the worker did not say why it has no cache: $(cat "$T/worker.log")"
timeout 60 "$BIN/qc-submit" -q --broker "ipc://$T/broker" -o "$T/o3" "$url"; rc=$?
[ $rc -eq 1 ] || fail "worker without a cache: exit $rc, expected 1"
grep -q "its log says why; give it --cache DIR; a rerun tries again)$" "$T/o3/error.log" \
    || fail "worker without a cache: error.log: $(cat "$T/o3/error.log")"
out=$(timeout 60 "$BIN/qc-submit" --broker "ipc://$T/broker" -o "$T/o3" "$url" 2>&1); rc=$?
[ $rc -eq 1 ] && ! echo "$out" | grep -q "skipped" \
    || fail "worker without a cache: the rerun did not try the slide again (exit $rc): $out"
pass "worker without a cache: the slide fails marked for a rerun"
kill -TERM $worker $broker
wait $worker $broker 2>/dev/null
