#!/bin/bash
# Slides by URL end to end: a cohort of http:// URLs through qc-submit's
# one-process mode and through a real broker and qc-worker, against
# nginx from Debian on 127.0.0.1 (a private configuration in the test's
# folder, a port from free_port, stopped by its PID) and the project's
# fault server (tests/http/fault_server.py), both serving ../shared's
# real slides in place and generated ones:
#  1. results by URL equal results by path: results.tsv's rows but their
#     original_path column, and every PNG's bytes; the tiled TIFFs are
#     read by range requests, the NDPI downloaded whole into the cache;
#     the QC of a 24,000 x 18,000 slide fetches a small share of its file;
#  2. a second run with the same cache downloads nothing: the slide read
#     whole and the slides read by ranges (their blocks kept in the
#     cache) each make one conditional request, answered 304;
#  3. through a broker and a worker started in an empty folder (it sees
#     none of the slides' files), with simulated GPU lanes (read-ahead:
#     the pipeline's two halves) beside its CPU slot: the same results;
#  4. a worker killed (kill -9) mid-download: the next one resumes it;
#  5. 404, 500, a stalled server, a truncated body, a redirect loop and a
#     body that is not a slide: one clean error line each, naming the
#     redacted URL and the reason, while the rest of the cohort passes;
#  6. an unsupported scheme is refused before any slide is touched (exit
#     2, the entry named); a rerun with fresh presigned URLs skips the
#     slides already done;
#  7. no output file, log or cache file holds a URL's credentials or
#     query.
source "$(dirname "$0")/lib.sh"

command -v nginx >/dev/null || fail "nginx is not installed (run tests/install-deps.sh)"
command -v python3 >/dev/null || fail "python3 is not installed (run tests/install-deps.sh)"

mkdir -p "$T/www" "$T/nginx" "$T/empty"
for f in CMU-1-Small-Region.svs TCGA-CR-7395-pyramid.svs test3-DAPI-2.ndpi; do
    ln -s "$SHARED/slides/real/$f" "$T/www/$f"
done
"$BIN/qc-mkslide" -o "$T/www/gen.svs" --width 6000 --height 4500 --seed 3 >"$T/mk.log" 2>&1 \
    && "$BIN/qc-mkslide" -o "$T/www/big.svs" --width 24000 --height 18000 --seed 4 >>"$T/mk.log" 2>&1 \
    || fail "qc-mkslide: $(tail -2 "$T/mk.log")"

# /slow/: the same files at 1 MB/s, so a download lasts long enough to kill
nginx_start "$T/www" 1m
port=$NGINX_PORT
python3 "$ROOT/tests/http/fault_server.py" --root "$T/www" --port-file "$T/fault.port" \
    --stall 60 >"$T/fault.log" 2>&1 &
PIDS+=($!)
wait_for "the fault server" 10 "[ -s '$T/fault.port' ]" "$T/fault.log"
fport=$(cat "$T/fault.port")

url() { echo "http://127.0.0.1:$port/$1"; }
# a URL with credentials and a signing query (nginx ignores both)
secret() { echo "http://carol:PASSWORD1@127.0.0.1:$port/$1?X-Amz-Signature=SIGNATURE2&token=TOKEN3"; }
fault() { echo "http://carol:PASSWORD1@127.0.0.1:$fport/$1?X-Amz-Signature=SIGNATURE2"; }
shown_fault() { echo "http://127.0.0.1:$fport/$1"; }

# rows OUT: results.tsv's rows without original_path (the last column)
rows() { grep -v '^#' "$1/results.tsv" | awk -F'\t' -v OFS='\t' '{ NF--; print }' | sort; }
# pngs OUT: every image's name and SHA-256
pngs() { (cd "$1" && find . -name '*.png' | sort | xargs -r sha256sum); }
same_outputs() {  # same_outputs OUT_A OUT_B WHAT
    local n
    n=$(rows "$1" | grep -c .)
    [ "$n" -ge 4 ] || fail "$3: only $n rows in $1: $(cat "$1/error.log" 2>/dev/null)"
    diff <(rows "$1") <(rows "$2") >"$T/rows.diff" \
        || fail "$3: results.tsv rows differ: $(head -c 600 "$T/rows.diff")"
    diff <(pngs "$1") <(pngs "$2") >"$T/png.diff" \
        || fail "$3: images differ: $(head -c 600 "$T/png.diff")"
    [ "$(pngs "$1" | grep -c .)" -ge 20 ] || fail "$3: too few images in $1"
}
# fetched OUT NAME: the fetch line of a slide in qc.log
fetched() { grep -a "fetch	http://127.0.0.1:$port/$2: " "$1/qc.log" | cut -f6 | tail -1; }

# 1. by path and by URL, one process each
slides="gen.svs CMU-1-Small-Region.svs TCGA-CR-7395-pyramid.svs test3-DAPI-2.ndpi big.svs"
paths=() urls=()
for s in $slides; do paths+=("$T/www/$s"); urls+=("$(url "$s")"); done
urls[1]=$(secret CMU-1-Small-Region.svs)
"$BIN/qc-submit" -q -w 2 -o "$T/by-path" "${paths[@]}" >"$T/by-path.log" 2>&1 \
    || fail "by path: exit $?: $(tail -3 "$T/by-path.log")"
"$BIN/qc-submit" -q -w 2 -o "$T/by-url" --cache "$T/cache" "${urls[@]}" >"$T/by-url.log" 2>&1 \
    || fail "by URL: exit $?: $(tail -3 "$T/by-url.log"; cat "$T/by-url/error.log" 2>/dev/null)"
same_outputs "$T/by-path" "$T/by-url" "one process"
for s in gen.svs CMU-1-Small-Region.svs TCGA-CR-7395-pyramid.svs big.svs; do
    fetched "$T/by-url" "$s" | grep -q "read by range requests" \
        || fail "$s was not read by range requests: $(fetched "$T/by-url" "$s")"
done
# (its download may have been the prefetch's: the slot then finds it cached)
fetched "$T/by-url" test3-DAPI-2.ndpi | grep -q "read whole" \
    || fail "the NDPI was not read whole: $(fetched "$T/by-url" test3-DAPI-2.ndpi)"
cmp -s "$(ls "$T"/cache/test3-DAPI-2.ndpi-* | grep -v '\.meta$' | grep -v '\.blocks$')" "$T/www/test3-DAPI-2.ndpi" \
    || fail "the NDPI's copy in the cache differs from the slide: $(ls "$T/cache")"
grep -q "$(url CMU-1-Small-Region.svs)\$" "$T/by-url/results.tsv" \
    || fail "original_path does not hold the redacted URL"
share=$(fetched "$T/by-url" big.svs | sed -n 's/.*(\([0-9.]*\)%).*/\1/p')
[ -n "$share" ] && awk -v s="$share" 'BEGIN { exit !(s < 15) }' \
    || fail "the QC of big.svs fetched ${share:-?}% of its file"
pass "by URL = by path (rows, $(pngs "$T/by-url" | grep -c .) images); big.svs: $(fetched "$T/by-url" big.svs)"

# 1b. a QC all at 1.25x (the default config without its 10x focus step)
"$BIN/qc-submit" --write-default-config - | grep -v '^ *BlurDetectionModule.identifyFocusFaults$' \
    >"$T/at-1.25x.ini"
"$BIN/qc-submit" -q -w 1 -c "$T/at-1.25x.ini" -o "$T/share" --cache "$T/cache-share" "$(url big.svs)" \
    >"$T/share.log" 2>&1 || fail "1.25x config: exit $?: $(tail -3 "$T/share.log")"
share=$(fetched "$T/share" big.svs | sed -n 's/.*(\([0-9.]*\)%).*/\1/p')
[ -n "$share" ] && awk -v s="$share" 'BEGIN { exit !(s < 5) }' \
    || fail "a QC at 1.25x of big.svs fetched ${share:-?}% of its file (goal: under 5%)"
pass "QC at 1.25x: $(fetched "$T/share" big.svs)"

# 2. a second run, the same cache: nothing is downloaded; the slides
# read by ranges come from the blocks the first run kept. The cache
# folder open to others (an older build made it so): said once, on the
# terminal (the one-process mode's check ran while its records went
# nowhere: not said at all, a user's review)
chmod 755 "$T/cache"
"$BIN/qc-submit" -q -w 2 -o "$T/again" --cache "$T/cache" "${urls[@]}" >"$T/again.log" 2>&1 \
    || fail "second run: exit $?: $(tail -3 "$T/again.log")"
chmod 700 "$T/cache"
[ "$(grep -c "$T/cache: other users may read the cached slides (mode 755)" "$T/again.log")" = 1 ] \
    || fail "the cache folder's mode not said once: $(head -5 "$T/again.log")"
fetched "$T/again" test3-DAPI-2.ndpi | grep -q "in the worker's cache, unchanged): 0 bytes" \
    || fail "the second run downloaded: $(fetched "$T/again" test3-DAPI-2.ndpi)"
for s in gen.svs CMU-1-Small-Region.svs TCGA-CR-7395-pyramid.svs big.svs; do
    fetched "$T/again" "$s" | grep -q "read by range requests: 0 bytes of .* in 1 requests; .* from the worker's cache" \
        || fail "the second run fetched $s again: $(fetched "$T/again" "$s")"
done
same_outputs "$T/by-path" "$T/again" "second run"
ls "$T"/cache/*.blocks >/dev/null 2>&1 || fail "no kept blocks in the cache: $(ls "$T/cache")"
ls "$T"/cache/test3-DAPI-2.ndpi-*.blocks* >/dev/null 2>&1 \
    && fail "the NDPI, read whole, still has kept blocks: $(ls "$T/cache")"
pass "second run: $(fetched "$T/again" test3-DAPI-2.ndpi); big.svs: $(fetched "$T/again" big.svs)"

# 3. a real broker, a worker in an empty folder (CPU slot and simulated GPU
# lanes) whose --slides-root is that folder: roots are for paths, URLs
# are fetched
bport=$(free_port)
start_broker $bport
(cd "$T/empty" && exec "$BIN/qc-worker" --connect "tcp://127.0.0.1:$bport" --name w1 \
    --slots 1 --simulate-gpus 1 --cache "$T/cache-w" --slides-root "$T/empty" \
    --heartbeat-ms 200 --log-level debug \
    --no-supervise >"$T/worker-w1.log" 2>&1) &
W1=$!
PIDS+=($W1)
wait_for "worker w1" 10 "workers_registered $bport 1"
"$BIN/qc-submit" -q --broker "tcp://127.0.0.1:$bport" -o "$T/via-broker" "${urls[@]}" \
    >"$T/via-broker.log" 2>&1 || fail "via the broker: exit $?: $(tail -3 "$T/via-broker.log")"
same_outputs "$T/by-path" "$T/via-broker" "through a broker"
kill -TERM $W1
for _ in $(seq 1 100); do kill -0 $W1 2>/dev/null || break; sleep 0.1; done
pass "through a broker and a worker that sees no slide file (--slides-root an empty folder): the same results"

# 4. a worker killed mid-download; the next one resumes it
(cd "$T/empty" && exec "$BIN/qc-worker" --connect "tcp://127.0.0.1:$bport" --name w2 --slots 1 \
    --cache "$T/cache-k" --heartbeat-ms 200 --no-supervise >"$T/worker-w2.log" 2>&1) &
W2=$!
PIDS+=($W2)
wait_for "worker w2" 10 "workers_registered $bport 1"
"$BIN/qc-submit" -q --broker "tcp://127.0.0.1:$bport" -o "$T/killed" \
    "$(secret slow/test3-DAPI-2.ndpi)" >"$T/killed.log" 2>&1 &
SUB=$!
PIDS+=($SUB)
part=""
for _ in $(seq 1 150); do
    part=$(ls "$T"/cache-k/*.part 2>/dev/null | head -1)
    [ -n "$part" ] && [ "$(stat -c %s "$part")" -gt 1000000 ] && break
    sleep 0.1
done
[ -n "$part" ] || fail "no partial download appeared in $T/cache-k"
# ps (any user's) showed the URL's password and signature for the whole
# run: overwritten in qc-submit's argument memory, the slide still named
shown_args=$(tr '\0' ' ' <"/proc/$SUB/cmdline")
echo "$shown_args" | grep -qE 'PASSWORD1|SIGNATURE2|TOKEN3|carol' \
    && fail "a URL's secrets are in qc-submit's command line, as ps shows it: $shown_args"
echo "$shown_args" | grep -q "http://x*@127.0.0.1:$port/slow/test3-DAPI-2.ndpi?x*\( \|$\)" \
    || fail "ps no longer shows which slide: $shown_args"
kill -9 $W2
wait $W2 2>/dev/null
had=$(stat -c %s "$part")
(cd "$T/empty" && exec "$BIN/qc-worker" --connect "tcp://127.0.0.1:$bport" --name w3 --slots 1 \
    --cache "$T/cache-k" --heartbeat-ms 200 --no-supervise >"$T/worker-w3.log" 2>&1) &
W3=$!
PIDS+=($W3)
wait $SUB || fail "after the kill: qc-submit exit $?: $(tail -3 "$T/killed.log")"
grep -q "test3-DAPI-2.ndpi	fetch	http://127.0.0.1:$port/slow/test3-DAPI-2.ndpi: download resumed from byte" \
    "$T/killed/qc.log" || fail "no resumed download in qc.log: $(grep -a fetch "$T/killed/qc.log")"
diff <(rows "$T/killed" | grep test3) <(rows "$T/by-path" | grep test3) >/dev/null \
    || fail "the resumed slide's row differs from the one read by path"
kill -TERM $W3              # the fault run below needs w4 alone
wait $W3 2>/dev/null
pass "ps shows no URL's secrets; killed at $had bytes; $(grep -a -o 'download resumed from byte [0-9]*' "$T/killed/qc.log")"

# 5. faults: one clean error each, the rest of the cohort passes
(cd "$T/empty" && exec "$BIN/qc-worker" --connect "tcp://127.0.0.1:$bport" --name w4 --slots 2 \
    --cache "$T/cache-f" --http-stall 2 --http-attempts 2 --heartbeat-ms 200 --log-level debug \
    --no-supervise >"$T/worker-w4.log" 2>&1) &
PIDS+=($!)
faults=("$(fault status/404)" "$(fault status/500)" "$(fault stall/gen.svs)" \
        "$(fault truncate/CMU-1-Small-Region.svs)" "$(fault loop)" "$(fault text)")
"$BIN/qc-submit" -q --broker "tcp://127.0.0.1:$bport" -o "$T/faults" --timeout 60 "${faults[@]}" \
    "$(url gen.svs)" "$(fault redirect/TCGA-CR-7395-pyramid.svs)" >"$T/faults.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "faults: exit $rc (1 expected): $(tail -3 "$T/faults.log")"
expect_error() {  # expect_error PATH REASON
    grep -q "^$(shown_fault "$1")	.*$2" "$T/faults/error.log" \
        || fail "no error line for $1 saying '$2': $(grep -F "$1" "$T/faults/error.log")"
}
expect_error status/404 "GET $(shown_fault status/404): the server answered 404 Not Found (not retried now; a rerun tries again)"
expect_error status/500 "GET $(shown_fault status/500): the server answered 500 Internal Server Error (2 attempts; a rerun tries again)"
expect_error stall/gen.svs "GET $(shown_fault stall/gen.svs): the server stalled mid-body"
expect_error truncate/CMU-1-Small-Region.svs "GET $(shown_fault truncate/CMU-1-Small-Region.svs): the body was cut short"
expect_error loop "GET $(shown_fault loop): more than 5 redirects"
expect_error text "the file is a text file, not an image"
[ "$(grep -c . "$T/faults/error.log")" -eq 6 ] || fail "faults: $(cat "$T/faults/error.log")"
[ "$(grep -v '^#' "$T/faults/results.tsv" | grep -c .)" -eq 2 ] \
    || fail "the two good slides did not pass: $(cat "$T/faults/error.log")"
count() {  # count PATH: how many requests the fault server had for PATH
    python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
        "http://127.0.0.1:$fport/_count/$1"
}
n500=$(count status/500)
n404=$(count status/404)
[ "$n404" = 1 ] && [ "$n500" = 2 ] \
    || fail "404 asked $n404 times (1), 500 asked $n500 times (2); w4: $(grep -a -e 'status/500' \
            -e 'status/404' "$T/worker-w4.log" | cut -c1-160); broker: $(grep -a 'w4' "$T/broker.log")"
pass "faults: $(cut -f2 "$T/faults/error.log" | sed 's/^[^:]*: //' | cut -c1-60 | paste -sd'|')"

# a rerun asks again only for what may pass another time (a server error,
# a stall, a cut body, each after its retries; a 404: a slide uploaded
# late); a redirect loop, a file that is no slide and the slides that
# passed are skipped
[ "$(grep -c 'a rerun tries again)' "$T/faults/error.log")" -eq 4 ] \
    || fail "not 4 marked to try again: $(cat "$T/faults/error.log")"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$bport" -o "$T/faults" --timeout 60 "${faults[@]}" \
    "$(url gen.svs)" "$(fault redirect/TCGA-CR-7395-pyramid.svs)" >"$T/faults2.log" 2>&1
grep -q "^4 slides run again: they failed before for a cause that may have passed" \
    "$T/faults2.log" || fail "the rerun: $(head -5 "$T/faults2.log")"
[ "$(count status/500)" = 4 ] && [ "$(count status/404)" = 2 ] \
    || fail "rerun: 500 asked $(count status/500) times (4), 404 $(count status/404) (2)"
[ "$(grep -c . "$T/faults/error.log")" -eq 6 ] || fail "rerun: $(cat "$T/faults/error.log")"
pass "a rerun asks again for the slides whose server failed them for now (500, stall, cut body, 404), not for the rest"

# the one-process mode takes a worker's --http-stall and --http-attempts:
# a stalled server costs their product, not 20 s x 5
"$BIN/qc-submit" -q -o "$T/faults-local" --cache "$T/cache-l" --http-stall 1 --http-attempts 1 \
    "$(fault stall/gen.svs)" >"$T/faults-local.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "the server stalled mid-body.*(1 attempt; a rerun tries again)" \
    "$T/faults-local/error.log" || fail "one process, --http-stall 1 --http-attempts 1: exit $rc: \
$(cat "$T/faults-local.log" "$T/faults-local/error.log" 2>&1 | tail -3)"
pass "the one-process mode takes --http-stall and --http-attempts"

# 6. an unsupported scheme, and a rerun with fresh presigned URLs
"$BIN/qc-submit" -q -o "$T/refused" "$(url gen.svs)" "ftp://dave:PASSWORD1@127.0.0.1/x.svs?token=TOKEN3" \
    >"$T/refused.log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "an ftp:// entry: exit $rc (2 expected)"
grep -q "'ftp://127.0.0.1/x.svs': the URL scheme 'ftp' is not supported" "$T/refused.log" \
    || fail "the refusal does not name the entry: $(cat "$T/refused.log")"
[ ! -e "$T/refused/results.tsv" ] || fail "a refused cohort wrote results"
fresh=("${urls[@]}")
fresh[1]="http://carol:PASSWORD1@127.0.0.1:$port/CMU-1-Small-Region.svs?X-Amz-Signature=OTHER4"
"$BIN/qc-submit" -w 2 -o "$T/by-url" --cache "$T/cache" "${fresh[@]}" >"$T/rerun.log" 2>&1 \
    || fail "rerun: exit $?: $(tail -3 "$T/rerun.log")"
grep -q "already has 5 of these 5 slides" "$T/rerun.log" \
    || fail "the rerun did not skip the slides done: $(cat "$T/rerun.log")"
pass "ftp:// refused (exit 2, named); a rerun with a fresh signature skipped all 5"

# 6b. one slide spelt two ways (scheme and host case, the default port,
#     a dot segment) runs once, and a rerun in a third spelling skips it
"$BIN/qc-submit" -w 1 -o "$T/spelt" "$(url gen.svs)" "HTTP://LOCALHOST:$port/./x/../gen.svs" \
    "http://localhost:$port/gen.svs" >"$T/spelt.log" 2>&1 || fail "spelt twice: $(tail -3 "$T/spelt.log")"
[ "$(grep -vc '^#' "$T/spelt/results.tsv")" -eq 2 ] \
    || fail "one slide spelt two ways ran twice: $(grep -v '^#' "$T/spelt/results.tsv" | cut -f1)"
grep -q "1 entry names a slide given before" "$T/spelt.log" || fail "the duplicate not said: $(head -3 "$T/spelt.log")"
"$BIN/qc-submit" -w 1 -o "$T/spelt" "http://127.0.0.1:$port/y/../gen.svs" "http://LocalHost:$port/gen.svs" \
    >"$T/spelt2.log" 2>&1 || fail "spelt, rerun: $(tail -3 "$T/spelt2.log")"
grep -q "already has 2 of these 2 slides" "$T/spelt2.log" \
    || fail "the rerun did not know the slides by another spelling: $(cat "$T/spelt2.log")"
# an old folder's line in another spelling ("cancelled": run again) is
# dropped when the slide runs again, as one of the same spelling is
printf 'HTTP://127.0.0.1:%s/./CMU-1-Small-Region.svs\tcancelled by the client\n' "$port" \
    >>"$T/spelt/error.log"
"$BIN/qc-submit" -w 1 -o "$T/spelt" "$(url CMU-1-Small-Region.svs)" >"$T/spelt3.log" 2>&1 \
    || fail "spelt, the cancelled one: $(tail -3 "$T/spelt3.log")"
grep -q "CMU-1-Small-Region" "$T/spelt/error.log" \
    && fail "the old spelling's line stayed in error.log: $(cat "$T/spelt/error.log")"
[ "$(grep -c 'CMU-1-Small-Region' "$T/spelt/results.tsv")" -eq 1 ] \
    || fail "the cancelled slide's row: $(grep CMU "$T/spelt/results.tsv")"
pass "a URL's spellings are one slide: it runs once, a rerun in another spelling skips it, and an old spelling's line is replaced"

# 7. no secret anywhere: outputs, logs, cache names and .meta files
secrets='PASSWORD1|SIGNATURE2|TOKEN3|OTHER4|carol'
leaks=$(grep -rIlE "$secrets" "$T"/by-url "$T"/again "$T"/via-broker "$T"/killed "$T"/faults \
        "$T"/refused "$T"/cache* "$T"/worker-*.log "$T"/broker.log "$T"/*.log 2>/dev/null \
        | grep -v "$T/by-path")
[ -z "$leaks" ] || fail "a secret leaked into: $leaks ($(grep -rhoIE ".{0,40}($secrets).{0,20}" $leaks | head -3))"
leaks=$(find "$T"/by-url "$T"/via-broker "$T"/faults "$T"/cache* | grep -E "$secrets")
[ -z "$leaks" ] || fail "a secret leaked into a file name: $leaks"
pass "no credentials or query in any output, log or cache file ($(find "$T" -type f | wc -l) files)"
