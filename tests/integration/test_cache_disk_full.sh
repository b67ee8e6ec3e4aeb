#!/bin/bash
# A worker whose slide cache is on a disk that refuses writes (full, over
# quota; here a file-size limit, ulimit -f, which fails them with EFBIG
# as a full disk does with ENOSPC) does not fail the slides it fetches:
# their failure is its machine's, so the broker sends them to another
# worker and pauses this one; the partial download is removed (it kept a
# full disk full). Before, every slide by URL failed on it at once, for
# good (a rerun skipped them), while it kept taking slides from the
# healthy worker (a user's review).
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || fail "python3 is not installed (run tests/install-deps.sh)"
mkdir -p "$T/www"
for i in 1 2 3 4 5 6; do
    ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/www/s$i.svs"
done
python3 "$ROOT/tests/http/fault_server.py" --root "$T/www" --port-file "$T/fault.port" \
    >"$T/fault.log" 2>&1 &
PIDS+=($!)
wait_for "the fault server" 10 "[ -s '$T/fault.port' ]" "$T/fault.log"
fport=$(cat "$T/fault.port")
# /norange/: the server ignores Range, so each slide is downloaded whole
# into the worker's cache (a tiled TIFF read by ranges keeps only blocks)
for i in 1 2 3 4 5 6; do echo "http://127.0.0.1:$fport/norange/s$i.svs"; done >"$T/list"

port=$(free_port)
start_broker $port --heartbeat-ms 200
# its files may grow to 300 KB: a 1.9 MB slide does not fit
(ulimit -f 300 && exec "$BIN/qc-worker" --connect "tcp://127.0.0.1:$port" --name full \
    --slots 1 --heartbeat-ms 200 --cache "$T/cache-full" >>"$T/worker-full.log" 2>&1) &
PIDS+=($!)
wait_for "the full worker registered" 10 "workers_registered $port 1"
start_worker $port ok --slots 1 --heartbeat-ms 200 --cache "$T/cache-ok" --task-delay-ms 300
wait_for "both workers registered" 10 "workers_registered $port 2"
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/list" \
    >"$T/submit.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "qc-submit exit $rc, expected 0: $(tail -3 "$T/submit.log"; cat "$T/out/error.log" 2>/dev/null)"
check_exactly_once "$T/out" "$T/list"
[ "$(grep -c '(ok)$' "$T/submit.log")" -eq 6 ] \
    || fail "not every slide ran on the worker with room: $(grep -E '^(ok|FAILED)' "$T/submit.log")"
grep -q "worker full failed .* for its machine, not the slide: .*cannot write into the cache: File too large (this machine's cache disk refused a write" \
    "$T/broker.log" || fail "the broker did not take it as the machine's: $(grep 'worker full' "$T/broker.log" | head -3)"
[ -z "$(ls "$T/cache-full" | grep part)" ] || fail "a partial download was left: $(ls -l "$T/cache-full")"
pass "slides a worker could not cache (its disk refused the writes) ran on the other worker; it was paused, its partial download removed"
