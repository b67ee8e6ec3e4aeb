#!/bin/bash
# A worker that may read only some slides (qc-worker --slides-root and
# --slides-url), against a real broker, real qc-submit and the project's
# HTTP fault server (tests/http/fault_server.py, which counts every path
# asked for) on 127.0.0.1:
#  1. --slides-url admits the URLs under its folder; a URL outside it, a
#     URL with a '..' or encoded '..' segment, and a redirect from inside
#     to outside each fail with the reason, and the server was never
#     asked for the outside file; two prefixes let the redirect through;
#  2. each option confines its own kind: with only --slides-root a URL
#     is fetched, with only --slides-url a path outside the root is
#     opened, and the worker warns of the open kind at start; with both,
#     each kind is held to its own option;
#  3. a prefix qc-worker cannot use is refused at start (exit 2);
#  4. beside a worker that admits them, the URLs one keeps out run there;
#     alone, its refusal stands, marked for a rerun.
source "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || fail "python3 is not installed (run tests/install-deps.sh)"
mkdir -p "$T/www" "$T/slides"
ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/www/a.svs"
cp "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/slides/p.svs"   # a copy: a link would resolve outside
python3 "$ROOT/tests/http/fault_server.py" --root "$T/www" --port-file "$T/fault.port" \
    >"$T/fault.log" 2>&1 &
PIDS+=($!)
wait_for "the fault server" 10 "[ -s '$T/fault.port' ]" "$T/fault.log"
fport=$(cat "$T/fault.port")
base=http://127.0.0.1:$fport
asked() {   # asked PATH: how many requests the fault server had for PATH
    python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
        "$base/_count/$1"
}

port=$(free_port)
start_broker $port
# run_on WORKER_ARGS OUT ENTRY...: one job on a fresh worker with those
# options; the worker is stopped after
n=0
run_on() {
    local args=$1 out=$2; shift 2
    n=$((n + 1))
    # shellcheck disable=SC2086
    start_worker $port "w$n" --slots 1 $args
    local w=$WORKER_PID
    timeout 120 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -o "$T/$out" "$@" \
        >"$T/$out.log" 2>&1
    kill -TERM $w 2>/dev/null; wait $w 2>/dev/null
}
# reason OUT NAME: the error a slide's row gave (error.log)
reason() { grep -F "$2" "$T/$1/error.log" 2>/dev/null | head -1; }
passed() { grep -v '^#' "$T/$1/results.tsv" 2>/dev/null | grep -c .; }

# 1. one prefix
# (qc-submit resolves a literal '..' before it sends the URL, as curl
# would: files/../novalid/b.svs reaches the worker as novalid/b.svs; the
# worker's own refusal of a literal '..' is test_fetch_url's)
run_on "--slides-url $base/files/" one \
    "$base/files/a.svs" "$base/novalid/a.svs" "$base/files/../novalid/b.svs" \
    "$base/files/%2e%2E/novalid/a.svs" "$base/redirect/a.svs"
[ "$(passed one)" = 1 ] || fail "one slide under the prefix should pass: $(cat "$T/one.log")"
grep -q "outside every --slides-url of this worker ($base/files/)" "$T/one/error.log" \
    || fail "no reason for a URL outside the prefix: $(cat "$T/one/error.log")"
grep -qF "$base/novalid/b.svs	" "$T/one/error.log" \
    || fail "files/../novalid/b.svs not resolved: $(cat "$T/one/error.log")"
[ "$(grep -c 'outside every --slides-url' "$T/one/error.log")" = 3 ] \
    && [ "$(grep -c "holds a '.' or '..' segment" "$T/one/error.log")" = 1 ] \
    || fail "the outside, '..', encoded '..' and redirect URLs were not all refused: $(cat "$T/one/error.log")"
[ "$(asked novalid/a.svs)" = 0 ] && [ "$(asked novalid/b.svs)" = 0 ] \
    || fail "the server was asked for a file outside the prefix"
[ "$(asked redirect/a.svs)" = 0 ] || fail "a URL outside the prefix was asked for"
pass "--slides-url admits its folder only; outside, '..' and encoded '..' URLs fail, never asked for"

before=$(asked files/a.svs)
run_on "--slides-url $base/redirect/" redir "$base/redirect/a.svs"
[ "$(passed redir)" = 0 ] || fail "a redirect out of the prefix was followed"
grep -q "redirected to $base/files/a.svs, not followed" "$T/redir/error.log" \
    || fail "no reason for the refused redirect: $(cat "$T/redir/error.log" "$T/redir.log")"
[ "$(asked redirect/a.svs)" -ge 1 ] && [ "$(asked files/a.svs)" = "$before" ] \
    || fail "the redirect's target was asked for: files/a.svs $before -> $(asked files/a.svs) times"
run_on "--slides-url $base/redirect/ --slides-url $base/files/" redir2 "$base/redirect/a.svs"
[ "$(passed redir2)" = 1 ] || fail "a redirect between two prefixes failed: $(cat "$T/redir2/error.log")"
pass "a redirect out of the prefixes is not followed (the target never asked for); between two prefixes it is"

# 2. each option confines its own kind
run_on "--slides-root $T/slides" rootonly "$T/slides/p.svs" "$base/files/a.svs"
[ "$(passed rootonly)" = 2 ] || fail "--slides-root only: the path and the URL should pass: $(cat "$T/rootonly.log")"
grep -q "this worker fetches any http(s) URL a client sends; --slides-url" "$T/worker-w$n.log" \
    || fail "no warning that URLs are open: $(head -5 "$T/worker-w$n.log")"
run_on "--slides-url $base/files/" urlonly "$SHARED/slides/real/CMU-1-Small-Region.svs"
[ "$(passed urlonly)" = 1 ] || fail "--slides-url only: a path should open: $(cat "$T/urlonly.log")"
grep -q "this worker opens any slide path a client sends; --slides-root" "$T/worker-w$n.log" \
    || fail "no warning that paths are open: $(head -5 "$T/worker-w$n.log")"
run_on "--slides-root $T/slides --slides-url $base/files/" both "$T/slides/p.svs" "$base/files/a.svs" \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" "$base/novalid/a.svs"
[ "$(passed both)" = 2 ] || fail "both options: 2 of 4 should pass: $(cat "$T/both.log")"
grep -q "outside every --slides-root" "$T/both/error.log" && grep -q "outside every --slides-url" "$T/both/error.log" \
    || fail "both options: $(cat "$T/both/error.log")"
grep -q "confines .* only" "$T/worker-w$n.log" && fail "a warning with both options given"
pass "each option confines its own kind (the other kind open, with a warning at start); with both, both are held"

# 4. beside a worker that admits them, the URLs a worker keeps out run
# there: its refusal is the worker's, not the slide's (before, it stood
# for good, and a rerun skipped the slides, a user's review); alone, it
# stands, marked, so a rerun runs it once a worker admits it
start_worker $port narrow --slots 1 --slides-url "$base/files/"
narrow=$WORKER_PID
start_worker $port open --slots 1 --task-delay-ms 400
open=$WORKER_PID
wait_for "both workers registered" 10 "workers_registered $port 2"
timeout 120 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -o "$T/mixed" "$base/novalid/a.svs" \
    "$base/busy/a.svs" "$base/files/a.svs" "$base/redirect/a.svs" "$base/norange/a.svs" \
    >"$T/mixed.log" 2>&1 || fail "mixed: exit $?: $(tail -3 "$T/mixed.log"; cat "$T/mixed/error.log")"
[ "$(passed mixed)" = 5 ] || fail "mixed: not all 5 passed: $(cat "$T/mixed.log")"
grep -q "worker narrow refused http://127.0.0.1:$fport/[a-z]*/a.svs (job [0-9]*): its URL is outside this worker's --slides-url, not the slide's fault; the slide runs again (1 of 2), and narrow takes no new slide for 10 s" \
    "$T/broker.log" || fail "the narrow worker never refused one, or not said: $(grep 'worker narrow' "$T/broker.log" | head -3)"
grep -E '^ok .*(novalid|busy|norange|redirect).*\(narrow\)$' "$T/mixed.log" \
    && fail "a URL outside the prefix passed on the narrow worker: $(cat "$T/mixed.log")"
kill -TERM $open; wait $open 2>/dev/null
wait_for "the open worker gone" 10 "! workers_registered $port 2"
timeout 120 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -o "$T/alone" "$base/novalid/a.svs" \
    >"$T/alone.log" 2>&1
grep -q "outside every --slides-url of this worker ($base/files/): not fetched (no worker that admits it could take it: widen that --slides-url, or start a worker without it; a rerun tries again)" \
    "$T/alone/error.log" || fail "alone: $(cat "$T/alone/error.log" "$T/alone.log")"
kill -TERM $narrow; wait $narrow 2>/dev/null
run_on "" alone "$base/novalid/a.svs"
[ "$(passed alone)" = 1 ] || fail "the rerun with a worker that admits it: $(cat "$T/alone.log")"
pass "URLs a worker keeps out ran on the worker beside it that admits them; alone, the refusal stood marked, and the rerun ran it on a worker that admits it"

# 3. prefixes the worker cannot use
for bad in "ftp://h/x/" "https://u:pw@h/x/" "https://h/x/?sig=1" "https://h/../x" "https://h:99999/"; do
    "$BIN/qc-worker" --connect "tcp://127.0.0.1:$port" --slides-url "$bad" >"$T/bad.log" 2>&1
    rc=$?
    [ $rc = 2 ] || fail "--slides-url $bad: exit $rc, expected 2"
    grep -q -- "--slides-url '" "$T/bad.log" || fail "--slides-url $bad: no reason: $(cat "$T/bad.log")"
done
pass "a prefix with another scheme, user info, a query, a '..' or a bad port stops qc-worker (exit 2)"
