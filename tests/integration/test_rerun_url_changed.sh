#!/bin/bash
# A slide rescanned and put back under the same URL kept its old record:
# a rerun skipped it as done. Workers now report the version of the file
# they read (size, ETag, Last-Modified: RESULT's `src`), qc-submit notes
# it in .qc-stamps, and a rerun asks each done slide's server whether the
# file changed since (one ranged GET, conditional on the ETag):
#  1. a first run (one process) stamps every slide by URL with the
#     version its server gave, and none holds the URL's query;
#  2. a rerun with nothing changed asks each server once and skips every
#     slide, also on a server whose ETag differs on each answer (a load
#     balancer) and one with Last-Modified alone; a server with no
#     validator is said not to be told; --no-check asks nothing;
#  3. slides replaced on their server run again, said, each named with
#     what differs, in qc.log too, their old records kept as .N: a
#     rescan on nginx, a failed one replaced by a slide, one of another
#     size on a server with no validator, and one replaced by an OLDER
#     file on a server that takes If-Modified-Since as "newer than"
#     (python's http.server, Apache without ETags: a 304 there read as
#     "unchanged"; the worker's cache then served the old scan even to -f);
#  4. servers that cannot be reached: skipped as done, said on the
#     terminal and in qc.log (-q: a cron job's only account), soon;
#  5. through a real broker and worker: the version travels in the
#     RESULT, and a rerun there finds a changed slide too.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || fail "python3 is not installed (run tests/install-deps.sh)"
R=$SHARED/slides/real
mkdir -p "$T/www"
for n in a b d e f g; do cp "$R/CMU-1-Small-Region.svs" "$T/www/$n.svs"; done
cp "$SHARED/slides/odd/not-a-slide.svs" "$T/www/c.svs"
nginx_start "$T/www" 1m
port=$NGINX_PORT
python3 "$ROOT/tests/http/fault_server.py" --root "$T/www" --port-file "$T/fault.port" \
    >"$T/fault.log" 2>&1 &
FAULT_PID=$!
PIDS+=($FAULT_PID)
wait_for "the fault server" 10 "[ -s '$T/fault.port' ]" "$T/fault.log"
fport=$(cat "$T/fault.port")

# a, c by nginx with a signing query; by the fault server: b with ETag
# and Last-Modified (requests counted), d with neither, e with
# Last-Modified alone ("newer than" semantics), as g, f with an ETag per
# answer
cat >"$T/list" <<EOF
http://127.0.0.1:$port/a.svs?X-Amz-Signature=SECRET1
http://127.0.0.1:$fport/files/b.svs
http://127.0.0.1:$port/c.svs?X-Amz-Signature=SECRET1
http://127.0.0.1:$fport/novalid/d.svs
http://127.0.0.1:$fport/lmonly/e.svs
http://127.0.0.1:$fport/etagvary/f.svs
http://127.0.0.1:$fport/lmonly/g.svs
EOF
count() {  # count PATH: how many requests the fault server had for PATH
    python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
        "http://127.0.0.1:$fport/_count/$1"
}
stamp_of() { grep "^$1	v	" "$2/.qc-stamps" | tail -1; }
levels_of() {   # levels_of OUT NAME: the levels column of NAME's row
    awk -F'\t' -v n="$2" '/^#dataset:/ { for (i = 1; i <= NF; i++) if ($i == "levels") k = i; next }
        !/^#/ && $1 == n { print $k }' "$1/results.tsv"
}

# 1. the first run stamps each slide by URL
"$BIN/qc-submit" -o "$T/out" --cache "$T/cache" --list "$T/list" >"$T/run1.log" 2>&1
[ $? -eq 1 ] || fail "run 1: exit not 1 (c.svs is not a slide): $(tail -3 "$T/run1.log")"
st=$(stamp_of "http://127.0.0.1:$port/a.svs" "$T/out")
size=$(stat -c %s "$T/www/a.svs")
echo "$st" | grep -q "	v	$size	\"[0-9a-f]*-[0-9a-f]*\"	[A-Z][a-z][a-z], " \
    || fail "a.svs's stamp is not its size, nginx's ETag and Last-Modified: '$st' in $(cat "$T/out/.qc-stamps")"
stamp_of "http://127.0.0.1:$port/c.svs" "$T/out" | grep -q "	v	$(stat -c %s "$T/www/c.svs")	\"" \
    || fail "c.svs (failed: not a slide) has no stamp of the file read: $(cat "$T/out/.qc-stamps")"
stamp_of "http://127.0.0.1:$fport/novalid/d.svs" "$T/out" | grep -q "	v	$size		$" \
    || fail "d.svs's stamp is not its size alone: $(cat "$T/out/.qc-stamps")"
stamp_of "http://127.0.0.1:$fport/lmonly/e.svs" "$T/out" | grep -q "	v	$size		[A-Z]" \
    || fail "e.svs's stamp is not its size and Last-Modified: $(cat "$T/out/.qc-stamps")"
! grep -q SECRET1 "$T/out/.qc-stamps" || fail ".qc-stamps holds a URL's query"
pass "a first run stamps each slide by URL with the version its worker read"

# 2. nothing changed: one request each, every slide skipped
before=$(count files/b.svs)
"$BIN/qc-submit" -o "$T/out" --cache "$T/cache" --list "$T/list" >"$T/run2.log" 2>&1
[ $? -eq 1 ] || fail "run 2: exit not 1 (c.svs failed before): $(cat "$T/run2.log")"
grep -q "nothing to run: every slide of the cohort is accounted for" "$T/run2.log" \
    || fail "run 2, nothing changed: $(cat "$T/run2.log")"
[ "$(count files/b.svs)" -eq $((before + 1)) ] \
    || fail "run 2 asked b.svs's server $(( $(count files/b.svs) - before )) times, not once"
grep -q "^1 slide by URL could not be checked against its server: whether it changed since its results were made is not known, so it is skipped as done (-f runs it again):" "$T/run2.log" \
    && grep -q "^  http://127.0.0.1:$fport/novalid/d.svs: its server gives no ETag or Last-Modified, and its size is the same as when its record was made" \
    "$T/run2.log" || fail "run 2 does not say d.svs cannot be told: $(cat "$T/run2.log")"
! grep -q "changed on" "$T/run2.log" || fail "run 2 took an unchanged slide for changed: $(cat "$T/run2.log")"
before=$(count files/b.svs)
"$BIN/qc-submit" -o "$T/out" --cache "$T/cache" --no-check --list "$T/list" >"$T/run2n.log" 2>&1
[ "$(count files/b.svs)" -eq "$before" ] || fail "--no-check asked b.svs's server"
grep -q "nothing to run" "$T/run2n.log" && ! grep -q "could not be checked" "$T/run2n.log" \
    || fail "run 2 with --no-check: $(cat "$T/run2n.log")"
pass "nothing changed: each server asked once, every slide skipped (ETags per answer too); --no-check asks none"

# 3. a rescan: a.svs is now a pyramid, c.svs a slide, d.svs another
# size; e.svs another slide with an OLDER date; g.svs the same bytes put
# back with an older date; b and f untouched
sleep 1.1       # a Last-Modified (whole seconds) that differs
cp "$R/CMU-1-Small-Region-pyramid.svs" "$T/www/a.svs"
cp "$R/CMU-1-Small-Region.svs" "$T/www/c.svs"
cp "$R/CMU-1-Small-Region-pyramid.svs" "$T/www/d.svs"
cp "$R/CMU-1-Small-Region-pyramid.svs" "$T/www/e.svs"
touch -d '2025-01-01 12:00:00 UTC' "$T/www/e.svs" "$T/www/g.svs"
"$BIN/qc-submit" -o "$T/out" --cache "$T/cache" --list "$T/list" >"$T/run3.log" 2>&1 \
    || fail "run 3: exit $?: $(tail -3 "$T/run3.log")"
grep -q "^5 slides by URL changed on their server since their results in $T/out were made (rescanned? or their annotation redrawn): run again (the old results.tsv and error.log are kept as .N):" \
    "$T/run3.log" || fail "run 3 does not say what changed: $(cat "$T/run3.log")"
grep -q "^  http://127.0.0.1:$fport/lmonly/g.svs: Last-Modified .* when its record was made, Wed, 01 Jan 2025 12:00:00 GMT now" "$T/run3.log" \
    && grep -q "^  http://127.0.0.1:$fport/novalid/d.svs: $size bytes when its record was made, $(stat -c %s "$T/www/d.svs") now" "$T/run3.log" \
    || fail "run 3 does not name what differs: $(cat "$T/run3.log")"
grep -q "running 5 of 7 slides" "$T/run3.log" || fail "run 3: $(cat "$T/run3.log")"
for n in a.svs d.svs e.svs; do
    [ "$(levels_of "$T/out" $n)" -gt 1 ] \
        || fail "$n: the row is not of the new file (levels '$(levels_of "$T/out" $n)'; the worker's cache served the old one?)"
done
grep -q "INFO.*changed on its server since its record was made, run again: http://127.0.0.1:$port/a.svs" "$T/out/qc.log" \
    || fail "qc.log does not name a changed slide: $(grep -i changed "$T/out/qc.log")"
[ "$(grep -vc '^#' "$T/out/results.tsv")" -eq 7 ] || fail "results.tsv: not 7 rows"
! grep -q "c.svs" "$T/out/error.log" && grep -q "c.svs" "$T/out/error.log.1" \
    && [ "$(awk -F'\t' '$1 == "a.svs"' "$T/out/results.tsv.1" | wc -l)" -eq 1 ] \
    || fail "the old records are not kept as .N: $(ls -a "$T/out")"
"$BIN/qc-submit" -o "$T/out" --cache "$T/cache" --list "$T/list" >"$T/run3b.log" 2>&1 \
    || fail "run 3b: exit $?"
grep -q "nothing to run" "$T/run3b.log" && ! grep -q "changed on" "$T/run3b.log" \
    || fail "run 3b ran again: $(cat "$T/run3b.log")"
pass "slides replaced on their server (an older file on a 'newer than' server too) run again, each named with what differs; the old records kept"

# 4. the servers cannot be reached: skipped as done, said, soon; -q
# leaves the account in qc.log
kill "$FAULT_PID" "$NGINX_PID"
wait "$FAULT_PID" "$NGINX_PID" 2>/dev/null
t0=$(date +%s)
timeout 120 "$BIN/qc-submit" -o "$T/out" --cache "$T/cache" --list "$T/list" >"$T/run4.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "run 4 (servers gone): exit $rc: $(cat "$T/run4.log")"
[ $(( $(date +%s) - t0 )) -lt 60 ] || fail "run 4 took $(( $(date +%s) - t0 )) s to find the servers gone"
grep -q "^7 slides by URL could not be checked against their server: whether they changed since their results were made is not known, so they are skipped as done (-f runs them again):" \
    "$T/run4.log" && grep -q "^  .*Couldn't connect to server (not reached from this machine)" "$T/run4.log" \
    && grep -q "^  (a server the workers reach but this machine does not: --no-check skips the check, -f runs the slides again)" "$T/run4.log" \
    && grep -q "nothing to run" "$T/run4.log" \
    || fail "run 4 does not say the slides could not be checked: $(cat "$T/run4.log")"
"$BIN/qc-submit" -q -o "$T/out" --cache "$T/cache" --list "$T/list" >"$T/run4q.log" 2>&1
[ ! -s "$T/run4q.log" ] || fail "-q said: $(cat "$T/run4q.log")"
[ "$(tail -8 "$T/out/qc.log" | grep -c "WARNING.*not known whether it changed since its record was made, skipped as done: .*http://127.0.0.1:")" -eq 7 ] \
    || fail "qc.log has no line for each slide not checked: $(tail -9 "$T/out/qc.log")"
pass "servers that cannot be reached: the slides skipped as done, said (in qc.log too, under -q)"

# 5. through a broker and a worker: the version travels in the RESULT
nginx_start "$T/www" 1m
port=$NGINX_PORT
bport=$(free_port)
start_broker "$bport"
start_worker "$bport" w1 --slots 1 --cache "$T/cache-w"
printf '%s\n' "http://127.0.0.1:$port/a.svs?sig=SECRET2" "http://127.0.0.1:$port/b.svs" >"$T/list5"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$bport" -o "$T/out5" --list "$T/list5" >"$T/run5.log" 2>&1 \
    || fail "run 5 (broker): exit $?: $(tail -3 "$T/run5.log")"
stamp_of "http://127.0.0.1:$port/b.svs" "$T/out5" | grep -q "	v	$size	\"" \
    || fail "the broker's result has no version: $(cat "$T/out5/.qc-stamps")"
sleep 1.1
cp "$R/CMU-1-Small-Region-pyramid.svs" "$T/www/b.svs"
"$BIN/qc-submit" --broker "tcp://127.0.0.1:$bport" -o "$T/out5" --list "$T/list5" >"$T/run6.log" 2>&1 \
    || fail "run 6 (broker): exit $?: $(tail -3 "$T/run6.log")"
grep -q "1 slide by URL changed on its server since its results in $T/out5 were made" "$T/run6.log" \
    && grep -q "running 1 of 2 slides" "$T/run6.log" \
    || fail "run 6 does not rerun the changed slide: $(cat "$T/run6.log")"
pass "through a broker and a worker: the version travels, a changed slide runs again"
