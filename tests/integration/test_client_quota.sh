#!/bin/bash
# qc-broker --max-jobs-per-client: one client certificate cannot fill the
# broker for everyone. A real broker with CurveZMQ and no worker (jobs
# stay queued), limit 2: alice's two jobs are accepted and held after her
# client goes; her third is refused (exit 2) with the reason, and the
# broker's log says so; bob's job is still accepted; once a worker has
# run one and alice has fetched it, her next is accepted again. Then
# --max-mb-per-client, and last both limits on a broker without keys,
# where they hold for all clients together.
source "$(dirname "$0")/lib.sh"

make_keys client:alice client:bob worker:w1
port=$(free_port)
EP=tcp://127.0.0.1:$port
start_broker $port --cert "$K/broker.cert_secret" --allow "$K/allowed" --max-jobs-per-client 2
slide=$SHARED/slides/real/CMU-1-Small-Region.svs

keys() {    # keys WHO: qc-submit's options for WHO's certificate; WHO -: none
    [ "$1" = - ] || echo "--cert $K/$1.cert_secret --server-key $K/broker.cert"
}
as() {      # as WHO ARGS...: qc-submit with WHO's certificate (30 s at most)
    local who=$1; shift
    timeout 30 "$BIN/qc-submit" --broker "$EP" $(keys "$who") "$@"
}
# expect_refused WHO OUT REASON LOGGED ARGS...: WHO's qc-submit -o OUT
# ARGS exits 2 saying REASON, and the broker's log has LOGGED (grep
# patterns; LOGGED "" checks no log)
expect_refused() {
    local who=$1 out=$2 reason=$3 logged=$4 rc
    shift 4
    as "$who" -o "$T/$out" "$@" >"$T/$out.log" 2>&1
    rc=$?
    [ $rc = 2 ] || fail "$out: exit $rc, expected 2: $(tail -3 "$T/$out.log")"
    grep -q "$reason" "$T/$out.log" || fail "$out: no reason for the refusal: $(tail -3 "$T/$out.log")"
    [ -z "$logged" ] || grep -q "$logged" "$T/broker.log" \
        || fail "$out: the broker did not log the refusal: $(tail -3 "$T/broker.log")"
}

# submit WHO OUT: a job of one slide; the client is stopped once the job
# is accepted (no worker: it stays queued, held for its owner)
submit() {
    local who=$1 out=$2; shift 2
    [ $# -gt 0 ] || set -- "$slide"
    "$BIN/qc-submit" --broker "$EP" $(keys "$who") -o "$T/$out" "$@" >"$T/$out.log" 2>&1 &
    local pid=$!
    PIDS+=($pid)
    for _ in $(seq 1 100); do
        grep -q '^job ' "$T/$out/.qc-job" 2>/dev/null && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.1
    done
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    grep -q '^job ' "$T/$out/.qc-job" 2>/dev/null
}
submit alice a1 || fail "alice's first job: $(cat "$T/a1.log")"
submit alice a2 || fail "alice's second job: $(cat "$T/a2.log")"
expect_refused alice a3 \
    "your certificate (alice@test) holds 2 jobs at this broker, its limit (qc-broker --max-jobs-per-client 2)" \
    "refused alice@test: a new job: it holds 2 jobs (--max-jobs-per-client 2)" "$slide"
pass "a certificate's third job with --max-jobs-per-client 2: refused (exit 2) with the reason, logged"

submit bob b1 || fail "bob's job was refused: $(cat "$T/b1.log")"
pass "another certificate's job is still accepted"

# a worker runs the held jobs; alice fetches one: a finished job whose
# results are all fetched holds no place, so her next is accepted
start_worker $port w1 --slots 1 --heartbeat-ms 500 --cert "$K/w1.cert_secret" --server-key "$K/broker.cert"
job=$(awk '/^job /{print $2; exit}' "$T/a1/.qc-job")
timeout 60 "$BIN/qc-submit" --broker "$EP" --cert "$K/alice.cert_secret" --server-key "$K/broker.cert" \
    --attach "$job" -o "$T/a1" >"$T/fetch.log" 2>&1 || fail "fetching job $job: $(cat "$T/fetch.log")"
# (a4 waits for a GPU: no worker here has one, so it stays queued)
submit alice a4 --gpu-only "$slide" || fail "after one job was fetched, alice's next was refused: $(cat "$T/a4.log")"
pass "once one of her jobs is done and fetched, her next is accepted"
# and a job she cancels frees its place at once (w1 is stopped, so that
# no job of hers can end on its own)
kill -TERM $WORKER_PID; wait $WORKER_PID 2>/dev/null
submit alice a5 && fail "a third held job was accepted"
job=$(awk '/^job /{print $2; exit}' "$T/a4/.qc-job")
timeout 30 "$BIN/qc-submit" --broker "$EP" --cert "$K/alice.cert_secret" --server-key "$K/broker.cert" \
    --cancel "$job" >"$T/cancel.log" 2>&1 || fail "cancel: $(cat "$T/cancel.log")"
submit alice a6 || fail "after she cancelled one, alice's next was refused: $(cat "$T/a6.log")"
pass "a job she cancels frees its place"

# --max-mb-per-client 4 on a broker with a state folder: cohorts of URLs
# on a server that is not there (no worker runs them), 1024 slides to a
# SUBMIT batch, each ~1.5 kB held (a 1000-byte URL and its record). A
# job counts until the broker forgets it, a cancelled one too.
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
port=$(free_port)
EP=tcp://127.0.0.1:$port
start_broker $port --cert "$K/broker.cert_secret" --allow "$K/allowed" --max-mb-per-client 4
urls() {    # urls FILE N LEN: N URLs of about LEN bytes
    local pad=$(head -c "$3" /dev/zero | tr '\0' a)
    for i in $(seq 1 "$2"); do echo "http://127.0.0.1:9/$pad/$i.svs"; done >"$1"
}
urls "$T/big" 1024 3900         # ~4.5 MB in its first batch
urls "$T/mid" 1024 960          # ~1.5 MB
urls "$T/three" 3000 960        # ~4.5 MB: the third batch goes over
status_total() {    # status_total JOB: its TOTAL column in qc-status
    "$BIN/qc-status" --broker "$EP" --cert "$K/alice.cert_secret" --server-key "$K/broker.cert" \
        | awk -v j="$1" '$1 == j {print $4}'
}
expect_refused alice m1 \
    "your certificate (alice@test) would hold 4\.[0-9] MB of configs, their files and slide paths at this broker (0\.0 MB held, 4\.[0-9] MB more sent), over its limit (qc-broker --max-mb-per-client 4)" \
    "refused alice@test: 4\.[0-9] MB more: it holds 0\.0 MB (--max-mb-per-client 4)" --list "$T/big"
pass "a job of 4.5 MB of slide paths with --max-mb-per-client 4: refused (exit 2) with the reason, logged"

# batches 2 and 3 come in one burst: the second is applied, then the job
# is cancelled, and a restart brings back what ran before it
as alice -o "$T/m2" --list "$T/three" >"$T/m2.log" 2>&1
rc=$?
[ $rc = 5 ] || fail "a job whose third batch goes over: exit $rc, expected 5 (stopped short): $(tail -3 "$T/m2.log")"
job=$(awk '/^job /{print $2; exit}' "$T/m2/.qc-job")
grep -q "over its limit (qc-broker --max-mb-per-client 4).*; job $job is cancelled (the slides it runs finish)" \
    "$T/m2.log" || fail "no reason for the cut: $(tail -3 "$T/m2.log")"
grep -q "out of memory" "$T/m2.log" && fail "a batch before the cut was refused: $(tail -3 "$T/m2.log")"
wait_for "job $job cancelled" 10 "\"$BIN/qc-status\" --broker '$EP' --cert '$K/alice.cert_secret' --server-key '$K/broker.cert' | awk -v j=$job '\$1 == j' | grep -q cancelled"
before=$(status_total "$job")
[ "$before" = 2048 ] || fail "job $job holds $before slides, not its first two batches' 2048"
grep -q "job $job is cancelled: the slides it had started finish, the others do not run. Run the same qc-submit command again: it fetches what the job ran" \
    "$T/m2.log" || fail "no advice for the cut job: $(tail -3 "$T/m2.log")"
grep -q "job $job goes on" "$T/m2.log" && fail "a cancelled job was said to go on"
pass "a job whose third batch goes over: refused, the job cancelled (it cannot end otherwise) once the batches before are in, said"

# the same command again: the cut job's slides, cancelled, are fetched as
# failures a rerun tries again; the rest in a new job is over the limit
# too (the cut job counts until the broker lets it go)
as alice -o "$T/m2" --list "$T/three" >"$T/m2-again.log" 2>&1
rc=$?
[ $rc = 2 ] || fail "the rerun of the cut job: exit $rc, expected 2: $(tail -3 "$T/m2-again.log")"
grep -q "job $job at the broker holds 2048 of the 3000 slides it was sent (its submission was cut off)" \
    "$T/m2-again.log" || fail "the rerun did not see the cut: $(head -3 "$T/m2-again.log")"
n=$(grep -c "not run: the broker cancelled the job when its submission went over qc-broker --max-mb-per-client (give fewer slides a job; a rerun tries again)" "$T/m2/error.log")
[ "$n" = 2048 ] || fail "$n of the cut job's 2048 slides have its reason in error.log"
grep -q "2048 slides run again: they failed before for a cause that may have passed" \
    "$T/m2-again.log" || fail "the rerun did not try the cancelled slides again: $(tail -4 "$T/m2-again.log")"
grep -q "over its limit" "$T/m2-again.log" || fail "the new job was not refused: $(tail -3 "$T/m2-again.log")"
pass "the rerun fetches the cut job (its slides' reason: the limit; a rerun tries them again); its new job is refused while the cut one counts"

expect_refused alice m3 "(3\.[0-9] MB held, 1\.[0-9] MB more sent), over its limit" "" --list "$T/mid"
submit bob m4 --list "$T/mid" || fail "bob's 1.5 MB job was refused: $(tail -3 "$T/m4.log")"
pass "a cancelled job counts until it is forgotten; another certificate has its own 4 MB"

# the bytes held are restored with the jobs
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
start_broker $port --cert "$K/broker.cert_secret" --allow "$K/allowed" --max-mb-per-client 4
after=$(status_total "$job")
[ "$after" = "$before" ] || fail "job $job: $before slides before the restart, $after after"
expect_refused alice m5 "(3\.[0-9] MB held, 1\.[0-9] MB more sent), over its limit" "" --list "$T/mid"
pass "after a broker restart the cut job has the same slides and its bytes still count"

# a config's files count: HistoQC's config.ini sends its 8 (templates,
# pen and model images) with one slide
expect_refused bob m6 "(1\.[0-9] MB held, [4-9]\.[0-9] MB more sent), over its limit" "" \
    -c "$SHARED/reference/histoqc/configs/config.ini" --histoqc-data "$SHARED/reference/histoqc/data" \
    "$slide"
pass "a config's files count: bob's job with config.ini (8 files, 4.6 MB) is over his 4 MB"

# without keys no client can be told from another: the limits hold for
# all of them together (a loop of SUBMITs from anyone who could connect
# grew the broker without end)
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
port=$(free_port)
EP=tcp://127.0.0.1:$port
start_broker $port --max-jobs-per-client 2 --max-mb-per-client 4
expect_refused - n1 \
    "this broker's clients (it has no --cert, so they are one client to its limits) would hold 4\.[0-9] MB .*, over their limit (qc-broker --max-mb-per-client 4)" \
    "refused clients without a certificate: 4\.[0-9] MB more: they hold 0\.0 MB (--max-mb-per-client 4)" \
    --list "$T/big"
pass "without keys, a job over --max-mb-per-client: refused (exit 2) with the reason, logged"

# two clients' jobs held (no worker runs them); a third client's refused
submit - n2 || fail "without keys, a first job: $(cat "$T/n2.log")"
submit - n3 || fail "without keys, a second job: $(cat "$T/n3.log")"
expect_refused - n4 \
    "this broker's clients (it has no --cert, so they are one client to its limits) hold 2 jobs at this broker, their limit (qc-broker --max-jobs-per-client 2)" \
    "refused clients without a certificate: a new job: they hold 2 jobs (--max-jobs-per-client 2)" \
    "$slide"
pass "without keys, two clients' held jobs fill --max-jobs-per-client 2 for a third: refused with the reason, logged"
