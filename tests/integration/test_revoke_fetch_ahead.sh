#!/bin/bash
# A task taken back before it started (its job cancelled) stops the
# download of its slide that the worker had begun ahead of it. A worker
# with one slot and two tasks queued beyond it; a cohort of two slides
# by path (8 s each: --task-delay-ms), then one by URL from nginx at
# 200 KB/s (the NDPI is downloaded whole, 3.5 MB: some 17 s). While the
# second runs, the third is fetched ahead (it has been queued since the
# start); the job cancelled, its partial download stops growing (it
# stays, to be resumed), where it ran to its end for no slot.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/www"
for i in 1 2 3; do ln -s "$SHARED/slides/real/test3-DAPI-2.ndpi" "$T/www/n$i.ndpi"; done
nginx_start "$T/www" 200k
port=$(free_port)
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 1 --prefetch 2 --heartbeat-ms 200 --cache "$T/cache" \
    --task-delay-ms 8000
wait_for "worker registered" 10 "workers_registered $port 1"

urls=("$SHARED/slides/real/CMU-1-Small-Region.svs" "$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs"
      "http://127.0.0.1:$NGINX_PORT/slow/n3.ndpi")
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --detach "${urls[@]}" \
    >"$T/submit.log" 2>&1 || fail "submit: $(cat "$T/submit.log")"
job=$(awk '/^job /{print $2; exit}' "$T/out/.qc-job")
# part SLIDE: the bytes of SLIDE in the cache so far, as the disk holds
# them (a range read's blocks file is sparse: its length is the slide's)
part() { find "$T/cache" -name "$1*" -type f ! -name '*.meta' ! -name '*.lock' -printf '%b\n' 2>/dev/null \
             | awk '{ s += $1 * 512 } END { print s + 0 }'; }
wait_for "n3 fetched ahead" 30 "[ \$(part n3.ndpi) -gt 300000 ]" "$T/worker-w1.log"
grep -q "n3.ndpi\] worker: build" "$T/worker-w1.log" && fail "n3 ran in the slot already: no fetch ahead to stop"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --cancel "$job" >"$T/cancel.log" 2>&1 \
    || fail "cancel: $(cat "$T/cancel.log")"
wait_for "n3's task taken back" 10 "grep -q 'took back job $job task 2 before it started' '$T/worker-w1.log'" "$T/worker-w1.log"
sleep 1
a=$(part n3.ndpi)
sleep 3
b=$(part n3.ndpi)
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$b" -lt 3544235 ] \
    || fail "the download ahead of a task taken back went on: $a, then $b bytes"
pass "a task taken back before it started: its slide's download ahead stopped at $b bytes (kept, to be resumed)"
