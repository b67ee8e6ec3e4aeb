#!/bin/bash
# Slides by URL, process by process, against nginx from Debian on
# 127.0.0.1 (a private configuration in the test's folder, a port from
# free_port, stopped by its PID) serving ../shared's real slides in place
# and a generated 24,000 x 18,000 slide:
#  - reading the 1.25x level of the generated slide over HTTP fetches
#    under 5% of its bytes (the range reader: directories and one level);
#  - five processes getting one slide into one shared cache folder at
#    once download it once; a sixth finds it there and downloads nothing;
#  - a download killed mid-way (SIGKILL, on a rate-limited location) is
#    resumed by the next process: only the rest comes;
#  - a missing slide fails with the redacted URL named;
#  - no output line, cache file name or .meta file holds the URL's
#    credentials or query (every run at debug log level).
# The unit tests test_fetch_http and test_fetch_cache cover the faults
# (5xx, stalls, truncation, redirect loops) and the eviction order.
source "$(dirname "$0")/lib.sh"

command -v nginx >/dev/null || fail "nginx is not installed (run tests/install-deps.sh)"
HTTP_TOOL=$ROOT/build/tests/test_fetch_http
CACHE_TOOL=$ROOT/build/tests/test_fetch_cache
[ -x "$HTTP_TOOL" ] && [ -x "$CACHE_TOOL" ] || fail "build the unit tests first (make test builds them)"
export QC_LOG_LEVEL=debug

mkdir -p "$T/www" "$T/nginx" "$T/cache" "$T/out"
for f in "$SHARED"/slides/real/*; do ln -s "$f" "$T/www/"; done
"$BIN/qc-mkslide" -o "$T/www/gen.svs" --width 24000 --height 18000 --seed 3 >"$T/mkslide.log" 2>&1 \
    || fail "qc-mkslide: $(tail -2 "$T/mkslide.log")"

# /slow/: the same files at 4 MB/s, so a download lasts long enough to kill
nginx_start "$T/www" 4m
port=$NGINX_PORT

secret() {  # secret PATH: a URL with credentials and a signing query
    echo "http://dave:PASSWORD1@127.0.0.1:$port/$1?X-Amz-Signature=SIGNATURE2&X-Amz-Credential=KEY3"
}
shown() { echo "http://127.0.0.1:$port/$1"; }
size_of() { stat -L -c %s "$1"; }

# 1. The share of the file the 1.25x level costs.
"$HTTP_TOOL" --level-share "$(secret gen.svs)" >"$T/out/share.log" 2>&1 \
    || fail "level read over HTTP: $(tail -3 "$T/out/share.log")"
share=$(sed -n 's/.* = \([0-9.]*\)% in .*/\1/p' "$T/out/share.log")
[ -n "$share" ] || fail "no share in: $(cat "$T/out/share.log")"
awk -v s="$share" 'BEGIN { exit !(s < 5) }' || fail "the 1.25x level fetched $share% of the file (goal: under 5%)"
pass "1.25x level of a 24000x18000 slide over HTTP: $(cat "$T/out/share.log")"

# 2. Five processes at once, one shared folder: one download.
size=$(size_of "$T/www/test3-DAPI-2.ndpi")
for i in 1 2 3 4 5; do
    "$CACHE_TOOL" --get "$T/cache" 100000000 "$(secret test3-DAPI-2.ndpi)" >"$T/out/get-$i.log" 2>&1 &
    pids[$i]=$!
done
for i in 1 2 3 4 5; do
    wait ${pids[$i]} || fail "process $i: $(cat "$T/out/get-$i.log")"
done
downloaded=$(cat "$T/out"/get-[1-5].log | sed -n 's/^ok hit [01] bytes \([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
hits=$(grep -c '^ok hit 1 bytes 0 ' "$T/out"/get-[1-5].log | awk -F: '{ s += $2 } END { print s + 0 }')
[ "$downloaded" = "$size" ] && [ "$hits" = 4 ] \
    || fail "five processes downloaded $downloaded bytes in all ($size expected), $hits hits: $(cat "$T/out"/get-*.log)"
[ -z "$(ls "$T"/cache/*.part* 2>/dev/null)" ] || fail "a partial file was left: $(ls "$T/cache")"
"$CACHE_TOOL" --get "$T/cache" 100000000 "$(secret test3-DAPI-2.ndpi)" >"$T/out/get-6.log" 2>&1 \
    || fail "sixth: $(cat "$T/out/get-6.log")"
grep -q '^ok hit 1 bytes 0 ' "$T/out/get-6.log" || fail "the sixth process downloaded again: $(cat "$T/out/get-6.log")"
cached=$(sed -n 's/.* path \(.*\)$/\1/p' "$T/out/get-6.log")
cmp -s "$cached" "$SHARED/slides/real/test3-DAPI-2.ndpi" || fail "the cached copy differs from the slide"
pass "five processes, one folder: $size bytes downloaded once; a sixth process downloaded nothing"

# 3. A download killed mid-way resumes in the next process.
gen_size=$(size_of "$T/www/gen.svs")
"$CACHE_TOOL" --get "$T/cache" 1000000000 "$(secret slow/gen.svs)" >"$T/out/killed.log" 2>&1 &
victim=$!
part=""
for _ in $(seq 1 100); do
    part=$(ls "$T"/cache/gen.svs-*.part 2>/dev/null | head -1)
    [ -n "$part" ] && [ "$(size_of "$part")" -gt 1000000 ] && break
    sleep 0.1
done
kill -9 $victim 2>/dev/null
wait $victim 2>/dev/null
[ -n "$part" ] || fail "no partial download appeared"
had=$(size_of "$part")
[ "$had" -lt "$gen_size" ] || fail "the download finished before it could be killed"
"$CACHE_TOOL" --get "$T/cache" 1000000000 "$(secret slow/gen.svs)" >"$T/out/resumed.log" 2>&1 \
    || fail "resume: $(cat "$T/out/resumed.log")"
grep -q "^ok hit 0 bytes $((gen_size - had)) size $gen_size resumed 1 from $had " "$T/out/resumed.log" \
    || fail "expected the last $((gen_size - had)) of $gen_size bytes from $had: $(cat "$T/out/resumed.log")"
cached=$(sed -n 's/.* path \(.*\)$/\1/p' "$T/out/resumed.log")
cmp -s "$cached" "$T/www/gen.svs" || fail "the resumed copy differs from the slide"
[ -z "$(ls "$T"/cache/*.part* 2>/dev/null)" ] || fail "a partial file was left: $(ls "$T/cache")"
pass "killed at $had of $gen_size bytes; the next process fetched only the other $((gen_size - had))"

# 4. A missing slide: a clean failure that names the redacted URL.
if "$CACHE_TOOL" --get "$T/cache" 100000000 "$(secret missing.svs)" >"$T/out/missing.log" 2>&1; then
    fail "a missing slide was fetched"
fi
grep -q "$(shown missing.svs): the server answered 404 Not Found (not retried now; a rerun tries again)" "$T/out/missing.log" \
    || fail "the 404 message: $(cat "$T/out/missing.log")"
pass "missing slide: $(grep -o 'GET .*' "$T/out/missing.log" | head -1)"

# 5. No secret anywhere.
secrets='PASSWORD1|SIGNATURE2|KEY3|dave'
leaks=$(cat "$T"/out/*.log "$T"/cache/*.meta | grep -E "$secrets")
[ -z "$leaks" ] || fail "a secret leaked: $leaks"
leaks=$(ls -a "$T/cache" | grep -E "$secrets")
[ -z "$leaks" ] || fail "a secret leaked into a file name: $leaks"
grep -q "url $(shown test3-DAPI-2.ndpi)\$" "$T"/cache/*.meta || fail ".meta does not name the redacted URL"
pass "no credentials or query in $(cat "$T"/out/*.log | wc -l) output lines, the cache's file names or its .meta files"
