#!/bin/bash
# qc-broker --max-jobs-per-client: one client certificate cannot fill the
# broker for everyone. A real broker with CurveZMQ and no worker (jobs
# stay queued), limit 2: alice's two jobs are accepted and held after her
# client goes; her third is refused (exit 2) with the reason, and the
# broker's log says so; bob's job is still accepted; once a worker has
# run one and alice has fetched it, her next is accepted again.
source "$(dirname "$0")/lib.sh"

K=$T/keys
mkdir -p "$K/allowed"
for r in client:alice client:bob worker:w1; do
    "$BIN/qc-keygen" --role "${r%%:*}" --name "${r#*:}@test" -o "$K" "${r#*:}" >/dev/null \
        || fail "qc-keygen ${r#*:}"
    cp "$K/${r#*:}.cert" "$K/allowed/"
done
"$BIN/qc-keygen" --role broker -o "$K" broker >/dev/null || fail "qc-keygen broker"
port=$(free_port)
EP=tcp://127.0.0.1:$port
start_broker $port --cert "$K/broker.cert_secret" --allow "$K/allowed" --max-jobs-per-client 2
slide=$SHARED/slides/real/CMU-1-Small-Region.svs

# submit WHO OUT: a job of one slide; the client is stopped once the job
# is accepted (no worker: it stays queued, held for its owner)
submit() {
    local who=$1 out=$2
    "$BIN/qc-submit" --broker "$EP" --cert "$K/$who.cert_secret" --server-key "$K/broker.cert" \
        -o "$T/$out" "$slide" >"$T/$out.log" 2>&1 &
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
timeout 30 "$BIN/qc-submit" --broker "$EP" --cert "$K/alice.cert_secret" --server-key "$K/broker.cert" \
    -o "$T/a3" "$slide" >"$T/a3.log" 2>&1
rc=$?
[ $rc = 2 ] || fail "alice's third job: exit $rc, expected 2: $(cat "$T/a3.log")"
grep -q "your certificate (alice@test) holds 2 jobs at this broker, its limit (qc-broker --max-jobs-per-client 2)" \
    "$T/a3.log" || fail "no reason for the refusal: $(cat "$T/a3.log")"
grep -q "refused alice@test: a new job: it holds 2 jobs (--max-jobs-per-client 2)" "$T/broker.log" \
    || fail "the broker did not log the refusal: $(tail -3 "$T/broker.log")"
pass "a certificate's third job with --max-jobs-per-client 2: refused (exit 2) with the reason, logged"

submit bob b1 || fail "bob's job was refused: $(cat "$T/b1.log")"
pass "another certificate's job is still accepted"

# a worker runs the held jobs; alice fetches one: a finished job whose
# results are all fetched holds no place, so her next is accepted
start_worker $port w1 --slots 1 --heartbeat-ms 500 --cert "$K/w1.cert_secret" --server-key "$K/broker.cert"
job=$(awk '/^job /{print $2; exit}' "$T/a1/.qc-job")
timeout 60 "$BIN/qc-submit" --broker "$EP" --cert "$K/alice.cert_secret" --server-key "$K/broker.cert" \
    --attach "$job" -o "$T/a1" >"$T/fetch.log" 2>&1 || fail "fetching job $job: $(cat "$T/fetch.log")"
submit alice a4 || fail "after one job was fetched, alice's next was refused: $(cat "$T/a4.log")"
pass "once one of her jobs is done and fetched, her next is accepted"
# and a job she cancels frees its place at once (w1 is stopped first so
# that the job stays queued until then)
kill -TERM $WORKER_PID; wait $WORKER_PID 2>/dev/null
submit alice a5 && fail "a third held job was accepted"
job=$(awk '/^job /{print $2; exit}' "$T/a4/.qc-job")
timeout 30 "$BIN/qc-submit" --broker "$EP" --cert "$K/alice.cert_secret" --server-key "$K/broker.cert" \
    --cancel "$job" >"$T/cancel.log" 2>&1 || fail "cancel: $(cat "$T/cancel.log")"
submit alice a6 || fail "after she cancelled one, alice's next was refused: $(cat "$T/a6.log")"
pass "a job she cancels frees its place"
