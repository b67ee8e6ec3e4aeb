#!/bin/bash
# No one let in (issue 14), against a real broker with CurveZMQ on
# 127.0.0.1: a peer without a certificate, one whose certificate is not
# admitted, one that knows only the broker's public key, a worker
# certificate sending SUBMIT, a client attaching to, acknowledging or
# cancelling another's job, RESULTs from peers the attempt was not
# dispatched to (unregistered or registered), RESULTs naming "..", "/x"
# or an empty file, a RESULT naming another path, a certificate removed
# while its client is connected (its next message on the same
# connection) and while its worker runs, a slide outside --slides-root
# (a link out, a .. path), a job's owner after a broker restart, an
# admin seeing and cancelling another's job. Each refusal is logged
# with the peer, and nothing of the job or its output folder changes
# (its qc-status line and the folder's files, compared before and
# after). The strangers are tests/tools/qc_stranger.c; the rest are the
# real programs. Mutations checked once by hand: a ZAP handler that
# admits every key, an owner not restored from the journal.
. "$(dirname "$0")/lib.sh"

STRANGER=$TOOLS/qc_stranger
[ -x "$STRANGER" ] || fail "$STRANGER not built (make test builds it)"
K=$T/keys
mkdir -p "$K/allowed"

# ---------------------------------------------------------------- qc-keygen
for r in broker:broker worker:w1 worker:w2 worker:w3 worker:w4 client:alice client:bob client:carol \
         admin:admin worker:outsider; do
    "$BIN/qc-keygen" --role "${r%%:*}" --name "${r#*:}@test" -o "$K" "${r#*:}" >/dev/null \
        || fail "qc-keygen ${r#*:}"
done
[ "$(stat -c %a "$K/alice.cert_secret")" = 600 ] || fail "secret certificate not 0600"
[ "$(stat -c %a "$K/alice.cert")" = 644 ] || fail "public certificate not 0644"
grep -q 'role = "client"' "$K/alice.cert" && grep -q 'name = "alice@test"' "$K/alice.cert" \
    || fail "metadata missing: $(cat "$K/alice.cert")"
! grep -q secret-key "$K/alice.cert" || fail "the public certificate holds the secret key"
before=$(md5sum "$K/alice.cert" "$K/alice.cert_secret")
"$BIN/qc-keygen" --role client -o "$K" alice >"$T/kg.log" 2>&1
[ $? -eq 2 ] || fail "qc-keygen over an existing pair should exit 2"
grep -q "exists: not replaced" "$T/kg.log" || fail "qc-keygen message: $(cat "$T/kg.log")"
[ "$(md5sum "$K/alice.cert" "$K/alice.cert_secret")" = "$before" ] || fail "pair overwritten"
"$BIN/qc-keygen" --role root -o "$K" x >/dev/null 2>&1; [ $? -eq 2 ] || fail "--role root accepted"
"$BIN/qc-keygen" -o "$K" ../x >/dev/null 2>&1; [ $? -eq 2 ] || fail "NAME with / accepted"
pass "qc-keygen: public 0644 and secret 0600 with role and name; no overwrite; bad role, name: exit 2"
# --force over a pair, where nothing can be written (a file size limit of
# 0; SIGXFSZ ignored, as a full disk fails a write): the pair there was
# stays whole, no temporary file is left, the reason is said
"$BIN/qc-keygen" --role client -o "$T/kf" spare >/dev/null || fail "qc-keygen spare"
was=$(md5sum "$T/kf/spare.cert" "$T/kf/spare.cert_secret")
(trap '' XFSZ; ulimit -f 0; exec "$BIN/qc-keygen" --role client --force -o "$T/kf" spare) \
    >/dev/null 2>"$T/kf.err"
rc=$?
[ $rc -eq 2 ] || fail "qc-keygen --force that could not write: exit $rc"
[ "$(md5sum "$T/kf/spare.cert" "$T/kf/spare.cert_secret")" = "$was" ] \
    || fail "qc-keygen --force that could not write lost the pair there was"
[ "$(ls -A "$T/kf" | wc -l)" = 2 ] || fail "qc-keygen left files behind: $(ls -A "$T/kf")"
"$BIN/qc-keygen" --role client --force -o "$T/kf" spare >/dev/null || fail "qc-keygen --force"
[ "$(md5sum "$T/kf/spare.cert" "$T/kf/spare.cert_secret")" != "$was" ] \
    && [ "$(stat -c %a "$T/kf/spare.cert_secret")" = 600 ] || fail "--force did not replace the pair"
pass "qc-keygen --force: a pair that cannot be written leaves the old one whole; one that can replaces it"

# --days N: the end of its life in its metadata
"$BIN/qc-keygen" --role client --name dave@test --days 30 -o "$K" dave >"$T/kd.log" 2>&1 \
    || fail "qc-keygen --days 30: $(cat "$T/kd.log")"
grep -q "expires = \"$(date -u -d '+30 days' +%Y-%m-%d)T" "$K/dave.cert" \
    && grep -q "expires = " "$K/dave.cert_secret" \
    || fail "--days 30 wrote no end 30 days on: $(grep expires "$K/dave.cert")"
"$BIN/qc-keygen" --days 0 -o "$K" never >/dev/null 2>&1; [ $? -eq 2 ] || fail "--days 0 accepted"
pass "qc-keygen --days 30: the certificate expires 30 days on; --days 0 refused"

# erin's ends in 5 days: within the 14 the broker and her programs warn
"$BIN/qc-keygen" --role client --name erin@test --days 5 -o "$K" erin >/dev/null \
    || fail "qc-keygen --days 5"

for c in w1 w2 w3 w4 alice bob carol admin dave erin; do cp "$K/$c.cert" "$K/allowed/"; done

# ---------------------------------------------------------------- the broker
port=$(free_port)
EP=tcp://127.0.0.1:$port
# (each must exit at once: timeout bounds a broker that would listen)
timeout 10 "$BIN/qc-broker" --bind "tcp://*:$port" --state none >"$T/open.log" 2>&1
[ $? -eq 2 ] || fail "a non-loopback bind without keys should exit 2"
grep -q -- "--insecure" "$T/open.log" || fail "no hint at --insecure: $(cat "$T/open.log")"
timeout 10 "$BIN/qc-broker" --bind "$EP" --state none --allow "$K/allowed" >"$T/open.log" 2>&1
[ $? -eq 2 ] || fail "--allow without --cert should exit 2"
timeout 10 "$BIN/qc-broker" --bind "$EP" --state none --cert "$K/broker.cert" --allow "$K/allowed" \
    >"$T/open.log" 2>&1
[ $? -eq 2 ] || fail "--cert with a public certificate should exit 2"
grep -q "no secret key" "$T/open.log" || fail "message: $(cat "$T/open.log")"
timeout 10 "$BIN/qc-broker" --bind "$EP" --state none --cert "$K/alice.cert_secret" --allow "$K/allowed" \
    >"$T/open.log" 2>&1
[ $? -eq 2 ] && grep -q "has the role client, not broker: the broker's key would be that client's" "$T/open.log" \
    || fail "--cert with a client's key pair: $(cat "$T/open.log")"
# a client's own certificate given as --server-key: said at once, by its
# role (it timed out with a guess)
timeout 10 "$BIN/qc-status" --broker "$EP" --cert "$K/alice.cert_secret" --server-key "$K/alice.cert" \
    >"$T/wrongsk.log" 2>&1
[ $? -eq 2 ] && grep -q "server-key $K/alice.cert is the certificate of a client, alice@test, not of the broker" "$T/wrongsk.log" \
    || fail "a client's certificate as --server-key: $(cat "$T/wrongsk.log")"
pass "a non-loopback bind needs --cert or --insecure; --cert needs the broker's secret certificate (not a client's) and --allow"
# no --bind and no keys: this machine only (tcp://127.0.0.1:5555), said
"$BIN/qc-broker" --state none >"$T/bare.log" 2>&1 &
bare=$!
PIDS+=($bare)
wait_for "the bare broker listening or refused" 10 "grep -q 'listening on\\|cannot bind' '$T/bare.log'"
if grep -q 'cannot bind' "$T/bare.log"; then
    echo "note: port 5555 is taken here: the default bind not checked"
else
    grep -q "listening on tcp://127.0.0.1:5555" "$T/bare.log" \
        && grep -q "no --bind: workers and clients of this machine only; for other machines give --cert" \
            "$T/bare.log" || fail "bare qc-broker: $(cat "$T/bare.log")"
    kill -TERM $bare; wait $bare; rc=$?
    [ $rc -eq 0 ] || fail "bare qc-broker stopped: exit $rc"
    pass "qc-broker with no --bind and no keys listens on tcp://127.0.0.1:5555 only, and says so"
fi
# IPv6 loopback is loopback: [::1] is bound without keys, and each
# program reaches it
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
    p6=$(free_port)
    "$BIN/qc-broker" --bind "tcp://[::1]:$p6" --state none >"$T/v6.log" 2>&1 &
    v6=$!
    PIDS+=($v6)
    wait_for "the [::1] broker" 10 "grep -q 'listening on\\|cannot bind' '$T/v6.log'"
    grep -q "listening on tcp://\[::1\]:$p6" "$T/v6.log" || fail "[::1] bind: $(cat "$T/v6.log")"
    "$BIN/qc-worker" --connect "tcp://[::1]:$p6" --name v6w --slots 1 >"$T/v6w.log" 2>&1 &
    v6w=$!
    PIDS+=($v6w)
    timeout 60 "$BIN/qc-submit" --broker "tcp://[::1]:$p6" -o "$T/v6out" "$SHARED/slides/real/CMU-1-Small-Region.svs" --timeout 20 \
        >"$T/v6s.log" 2>&1 || fail "qc-submit through [::1]: $(tail -3 "$T/v6s.log")"
    "$BIN/qc-status" --broker "tcp://[::1]:$p6" --timeout 5 | grep -q '^v6w ' || fail "qc-status through [::1]"
    kill -TERM $v6w $v6; wait $v6w $v6
    pass "tcp://[::1]: bound without keys (loopback), reached by qc-worker, qc-submit and qc-status"
else
    echo "note: no IPv6 loopback here: [::1] not checked"
fi

start_broker $port --cert "$K/broker.cert_secret" --allow "$K/allowed" --heartbeat-ms 500
LOG=$T/broker.log
SK=$K/broker.cert
grep -q "certificate erin@test (key .*) expires on $(date -u -d '+5 days' +%Y-%m-%d)T.*, in 4 days" \
    "$LOG" || fail "the broker did not warn of erin's near end: $(grep erin "$LOG")"
"$BIN/qc-status" --broker "tcp://127.0.0.1:$port" --cert "$K/erin.cert_secret" --server-key "$SK" \
    --timeout 3 >"$T/erin.log" 2>&1 || fail "erin's qc-status: $(tail -3 "$T/erin.log")"
grep -q "erin.cert_secret expires on .*, in 4 days: make a new pair" "$T/erin.log" \
    || fail "qc-status did not warn of its certificate's near end: $(cat "$T/erin.log")"
pass "a certificate 5 days from its end: the broker and its holder's program warn; it is admitted"
# loopback is no boundary between a machine's users: a keyless TCP
# broker says so at start, with what to do; one with keys does not
grep -q "listening on tcp://127.0.0.1:$port\$" "$LOG" || fail "the keyed broker: $(grep listening "$LOG")"
pk=$(free_port)
"$BIN/qc-broker" --bind "tcp://127.0.0.1:$pk" --state none >"$T/keyless.log" 2>&1 &
keyless=$!
PIDS+=($keyless)
wait_for "the keyless broker" 10 "grep -q 'listening on' '$T/keyless.log'"
grep -q "listening on tcp://127.0.0.1:$pk without keys: every user of this machine may submit, list and cancel jobs (on a shared machine, --bind ipc://DIR/broker" \
    "$T/keyless.log" || fail "the keyless broker: $(grep listening "$T/keyless.log")"
kill -TERM $keyless; wait $keyless
pass "a broker on loopback without keys says every user of the machine may use it, and what to do"
as() { local who=$1; shift; "$STRANGER" --connect "$EP" --cert "$K/$who.cert_secret" --server-key "$SK" "$@"; }
admin_status() { "$BIN/qc-status" --broker "$EP" --cert "$K/admin.cert_secret" --server-key "$SK" --timeout 3; }
# refused REGEX WHAT / refused_key TEXT WHAT: the broker logged, within
# 5 s, a refusal matching "refused REGEX" / a line holding TEXT and
# "refused" (keys hold regex characters)
# a certificate's connections are said at INFO once an hour: a probe's
# qc-status every 10 s made 8,600 lines a day (an operator's review)
for _ in 1 2 3; do admin_status >/dev/null 2>&1; done
said=$(grep -c "INFO .*authenticated as admin" "$LOG")
[ "$said" -eq 1 ] || fail "admin's 3 qc-status calls said $said times at INFO: $(grep 'authenticated as admin' "$LOG")"
pass "a certificate's connections: said at INFO once an hour, not at each qc-status"
refused() {
    for _ in $(seq 1 50); do grep -q -- "refused $1" "$LOG" && return 0; sleep 0.1; done
    tail -5 "$LOG" >&2; fail "no refusal logged: $2"
}
refused_key() {
    for _ in $(seq 1 50); do grep -F -- "$1" "$LOG" | grep -q refused && return 0; sleep 0.1; done
    tail -5 "$LOG" >&2; fail "no refusal logged: $2"
}

# a peer without a certificate
"$STRANGER" --connect "$EP" status >"$T/s1.log" 2>&1
grep -q "^got" "$T/s1.log" && fail "a peer without a certificate got an answer: $(cat "$T/s1.log")"
# (its address when the broker could read it before libzmq closed the
# connection: the handshake fails within microseconds; and the broker
# sees the mismatch itself, or the peer saw it first and closed)
refused "a connection from [^:]*: \(it does not speak CurveZMQ\|its handshake failed\)" \
    "no certificate"
"$BIN/qc-worker" --connect "$EP" --name keyless --timeout 6 >"$T/keyless.log" 2>&1
[ $? -eq 3 ] || fail "a worker without keys should exit 3"
# (which side sees the mismatch first is a race: either reason says it)
grep -q "this program has no keys.*a broker started with --cert takes only peers that give --cert and --server-key" \
    "$T/keyless.log" || fail "keyless worker, no clear reason: $(cat "$T/keyless.log")"
grep -q "is --server-key the public" "$T/keyless.log" && fail "a keyless worker asked about its --server-key"
pass "a peer without a certificate: no answer; refused and logged; a keyless worker says it has no keys"

# a well-formed certificate that is not admitted
"$STRANGER" --connect "$EP" --cert "$K/outsider.cert_secret" --server-key "$SK" status >"$T/s2.log" 2>&1
grep -q "^got" "$T/s2.log" && fail "an outsider got an answer: $(cat "$T/s2.log")"
okey=$(sed -n 's/.*public-key = "\(.*\)"/\1/p' "$K/outsider.cert")
refused_key "a connection from 127.0.0.1 (key $okey): unknown key" "outsider's key"
"$BIN/qc-worker" --connect "$EP" --cert "$K/outsider.cert_secret" --server-key "$SK" --name outsider \
    --timeout 5 >"$T/outsider.log" 2>&1
[ $? -eq 3 ] || fail "a worker whose certificate is not admitted should exit 3"
grep -q "refused this certificate" "$T/outsider.log" || fail "no reason: $(cat "$T/outsider.log")"
! admin_status | grep -q outsider || fail "the outsider was registered"
pass "a certificate not in the folder: refused at the handshake, logged with its key; qc-worker --timeout 5 exits 3 saying why"

# one that knows only the broker's public key: the ZAP handler is asked
"$STRANGER" --connect "$EP" --ephemeral --server-key "$SK" status >"$T/s3.log" 2>&1
grep -q "^got" "$T/s3.log" && fail "an ephemeral key got an answer: $(cat "$T/s3.log")"
ekey=$(sed -n 's/^key //p' "$T/s3.log")
[ -n "$ekey" ] || fail "no ephemeral key printed"
refused_key "a connection from 127.0.0.1 (key $ekey): unknown key" "ephemeral key"
pass "knowing only the broker's public key is not enough: the ZAP handler refused key $ekey"

# the broker's secret certificate given as --server-key works (its public
# key is in it), but the secret should not be spread: said
"$BIN/qc-status" --broker "$EP" --cert "$K/admin.cert_secret" --server-key "$K/broker.cert_secret" \
    --timeout 3 >"$T/sk.log" 2>&1 || fail "qc-status with the broker's secret file: $(cat "$T/sk.log")"
grep -q "server-key $K/broker.cert_secret holds the broker's secret key" "$T/sk.log" \
    || fail "the secret --server-key not said: $(head -3 "$T/sk.log")"
"$BIN/qc-status" --broker "$EP" --cert "$K/admin.cert_secret" --server-key "$SK" --timeout 3 \
    >"$T/sk2.log" 2>&1 && ! grep -q "secret key" "$T/sk2.log" || fail "the public --server-key: $(head -3 "$T/sk2.log")"
pass "the broker's secret certificate as --server-key: warned of; its public one: not"

# ---------------------------------------------------------------- alice's job
make_cohort "$T/cohort" 8 >/dev/null
cheap_config "$T/cheap.ini"
"$BIN/qc-submit" --broker "$EP" --cert "$K/alice.cert_secret" --server-key "$SK" -c "$T/cheap.ini" \
    -o "$T/alice" --list "$T/cohort/list" --timeout 20 >"$T/alice.log" 2>&1 &
alice=$!
PIDS+=($alice)
wait_for "alice's job accepted" 10 "grep -q '^job' '$T/alice/.qc-job' 2>/dev/null" "$T/alice.log"
job=$(awk '/^job /{print $2; exit}' "$T/alice/.qc-job")
key=0x$(sed -n 's/.*key=\([0-9a-f]*\).*/\1/p' "$T/alice/.qc-job")
[ "$key" != 0x ] || fail "no key in .qc-job"
job_line() { admin_status | awk -v j="$job" '$1 == j {print $1, $2, $3, $4}'; }
folder() { (cd "$T/alice" && find . -type f ! -name qc.log | sort | xargs md5sum); }
s0=$(job_line)
f0=$(folder)
[ -n "$s0" ] || fail "the admin does not see job $job"
# ... and whose it is: an admin sees every job, and could not tell
# whose was whose (a hospital admin's probe). The certificate's name,
# then the user qc-submit said ($USER)
admin_status | grep -q "^$job .*  alice@test ($(id -un))\$" \
    || fail "the admin's table does not say job $job is alice's: $(admin_status | grep -A3 '^JOB')"
"$BIN/qc-status" --tsv --broker "$EP" --cert "$K/admin.cert_secret" --server-key "$SK" --timeout 3 \
    | grep -q "^job	$job	.*	alice@test ($(id -un))\$" || fail "qc-status --tsv: no owner on job $job's line"
same() {        # same WHAT: the job's counts and the folder as before
    [ "$(job_line)" = "$s0" ] || fail "$1: job $job changed: '$s0' -> '$(job_line)'"
    [ "$(folder)" = "$f0" ] || fail "$1: alice's folder changed"
}

# a worker certificate sending SUBMIT
as w2 submit /etc/passwd >"$T/s4.log" 2>&1
grep -q "got ERROR.*SUBMIT may not be sent with a certificate of the role worker" "$T/s4.log" \
    || fail "worker SUBMIT: $(cat "$T/s4.log")"
refused "peer [0-9a-f]* (certificate w2@test, role worker, key .*): SUBMIT may not" "worker SUBMIT"
[ "$(admin_status | grep -c '^[0-9]')" -eq 1 ] || fail "a job was created: $(admin_status)"
same "worker SUBMIT"
pass "a worker certificate sending SUBMIT: refused (ERROR), logged with its certificate; no job made"

# bob: attach, acknowledge, cancel alice's job; and he does not see it
for what in "attach $job $key" "ack $job $key 1" "cancel $job $key"; do
    as bob $what >"$T/s5.log" 2>&1
    grep -q "got ERROR job=$job .*is not yours" "$T/s5.log" || fail "bob $what: $(cat "$T/s5.log")"
    verb=$(echo "${what%% *}" | tr a-z A-Z)
    refused "peer [0-9a-f]* (certificate bob@test, role client, key .*): $verb for job $job: it belongs to another certificate" "bob $verb"
    same "bob $what"
done
as bob status >"$T/s6.log" 2>&1
grep -q "got STATUS_REPLY .*jobs=0" "$T/s6.log" || fail "bob sees alice's job: $(cat "$T/s6.log")"
as alice status >"$T/s6.log" 2>&1
grep -q "got STATUS_REPLY .*jobs=1" "$T/s6.log" || fail "alice does not see her job: $(cat "$T/s6.log")"
pass "another client attaching to, acknowledging, cancelling the job: each refused (ERROR) and logged; it sees no job of hers"

# registered workers answering a real TASK with image names that could
# leave the folder: the message is refused whole, logged with the peer
for bad in ".." "/x" ""; do
    as w2 --wait-ms 800 work "$bad" >"$T/s7.log" 2>&1
    grep -q "^task $job " "$T/s7.log" || fail "the stranger got no task: $(cat "$T/s7.log")"
    refused "peer [0-9a-f]* (certificate w2@test, role worker, key .*): malformed message dropped" "image named '$bad'"
    wait_for "task back in the queue" 10 "[ \"\$(job_line)\" = \"$s0\" ]"
    same "a RESULT naming '$bad'"
done
pass "RESULTs naming '..', '/x' or an empty image: refused and logged; job and folder unchanged"

# ---------------------------------------------------------------- w1 runs
start_worker $port w1 --cert "$K/w1.cert_secret" --server-key "$SK" --slots 1 --prefetch 0 \
    --task-delay-ms 5000 --heartbeat-ms 500
w1=$WORKER_PID
wait_for "w1 running a task" 10 "admin_status | awk -v j=$job '\$1 == j && \$6 == 1' | grep -q ."
s0=$(job_line)
f0=$(folder)
# every slide at its first attempts, from w4 (which was never given
# one), unregistered and registered: w1's running attempt among them (a
# fresh state folder's first life numbers them from 65537; lower ones
# are no attempt of this job and are dropped unjudged)
as w4 --wait-ms 300 result "$job" "$key" 0-7 65537-65540 >/dev/null 2>&1
refused "peer [0-9a-f]* (certificate w4@test, role worker, key .*): RESULT for job $job slide [0-9]* attempt [0-9]* from a peer not registered as a worker: that attempt was not dispatched to this certificate" "unregistered RESULT"
# registered, w4 is given a slide itself (its own RESULT for that one
# would count): w1's slide only
as w4 --wait-ms 300 forge "$job" "$key" 0 65537-65540 >/dev/null 2>&1
refused "peer [0-9a-f]* (certificate w4@test, role worker, key .*): RESULT for job $job slide [0-9]* attempt [0-9]*: that attempt was not dispatched" "forged RESULT"
same "RESULTs from a certificate the attempts were not dispatched to"
pass "RESULTs for w1's (and the strangers') attempts from another certificate, unregistered or registered: refused and logged; nothing changed"

# a certificate removed while its holder is connected: its next message
# on the same connection (no new handshake) is refused
as carol --wait-ms 200 --repeat 50 status >"$T/s9.log" 2>&1 &
carol=$!
PIDS+=($carol)
wait_for "carol's first answer" 10 "grep -q 'got STATUS_REPLY' '$T/s9.log'" "$T/s9.log"
rm "$K/allowed/carol.cert"
refused "peer [0-9a-f]*: certificate carol@test (key .*) was revoked: it is no longer in" \
    "carol's next message"
wait $carol
grep -q "got DISCONNECT .*reason=refused: certificate carol@test" "$T/s9.log" \
    || fail "carol was not told: $(tail -3 "$T/s9.log")"
[ "$(sed -n '/got DISCONNECT/,$p' "$T/s9.log" | grep -c STATUS_REPLY)" -eq 0 ] \
    || fail "carol got answers after her certificate was removed"
grep -q "refused a connection .*carol" "$LOG" && fail "carol made a new handshake: not the per-message check"
pass "a client's certificate removed mid-run: its next message on the same connection refused and logged; no answer after"

# a certificate that expires while its holder is connected: refused from
# its next message, as a removed one, and at its next handshake; its
# holder is told why, and warned by its own program
as dave --wait-ms 200 --repeat 50 status >"$T/s9d.log" 2>&1 &
dave=$!
PIDS+=($dave)
wait_for "dave's first answer" 10 "grep -q 'got STATUS_REPLY' '$T/s9d.log'" "$T/s9d.log"
grep -q "admitted certificate dave@test (role client, key .*, until $(date -u -d '+30 days' +%Y-%m-%d)" \
    "$LOG" || fail "the broker did not say until when dave is admitted"
sed -i 's/expires = .*/expires = "2020-01-01T00:00:00Z"/' "$K/allowed/dave.cert"
refused "peer [0-9a-f]*: certificate dave@test expired on 2020-01-01T00:00:00Z" \
    "dave's next message"
# the folder reread: an expired certificate is a warning, not "admitted"
grep -q "WARNING.*certificate dave@test (role client, key .*) expired on 2020-01-01T00:00:00Z: its holder is refused" \
    "$LOG" || fail "the expired certificate in the folder is not warned of: $(grep dave "$LOG" | tail -3)"
grep -q "admitted certificate dave@test .*expired" "$LOG" && fail "an expired certificate said to be admitted"
wait $dave
grep -q "got DISCONNECT .*reason=refused: certificate dave@test expired on 2020-01-01" \
    "$T/s9d.log" || fail "dave was not told: $(tail -3 "$T/s9d.log")"
[ "$(sed -n '/got DISCONNECT/,$p' "$T/s9d.log" | grep -c STATUS_REPLY)" -eq 0 ] \
    || fail "dave got answers after his certificate expired"
sed -i 's/expires = .*/expires = "2020-01-01T00:00:00Z"/' "$K/dave.cert_secret"
"$BIN/qc-status" --broker "$EP" --cert "$K/dave.cert_secret" --server-key "$SK" --timeout 2 \
    >"$T/s9e.log" 2>&1
[ $? -eq 3 ] || fail "qc-status with an expired certificate: not exit 3: $(tail -3 "$T/s9e.log")"
grep -q "dave.cert_secret expired on 2020-01-01T00:00:00Z: a broker refuses it" "$T/s9e.log" \
    || fail "qc-status did not warn of its expired certificate: $(cat "$T/s9e.log")"
# the refusal it is told names the end too, not only the --allow folder
# (an expired worker was sent to look there: an operator's review)
grep -q "refused this certificate: .*or has come to its end" "$T/s9e.log" \
    || fail "the refusal does not name a certificate's end: $(cat "$T/s9e.log")"
refused_key "certificate dave@test expired on 2020-01-01T00:00:00Z" "dave's new connection"
# an end no one can read is refused, not taken as none
sed -i 's/expires = .*/expires = "next spring"/' "$K/allowed/dave.cert"
wait_for "dave's unreadable end" 10 "grep -q 'certificate dave@test has \"expires = next spring\", which is no time' '$LOG'" "$LOG"
as dave --wait-ms 800 status >"$T/s9f.log" 2>&1
grep -q "got STATUS_REPLY" "$T/s9f.log" && fail "a certificate whose end is no time was admitted"
pass "a certificate that expires mid-run: refused from its next message and at its next handshake, logged, its holder told and warned; an end that is no time refused"

# a certificate removed while its worker runs: refused from its next
# message; its tasks go to the others; it cannot come back
start_worker $port w3 --cert "$K/w3.cert_secret" --server-key "$SK" --slots 1 --prefetch 0 \
    --task-delay-ms 5000 --heartbeat-ms 500 --timeout 5
w3=$WORKER_PID
wait_for "w3 registered" 10 "grep -q 'registered with broker' '$T/worker-w3.log'"
rm "$K/allowed/w3.cert"
wait_for "w3 revoked" 10 "grep -q 'revoked certificate w3@test' '$LOG'" "$LOG"
refused "peer [0-9a-f]*: certificate w3@test (key .*) was revoked" "w3's next message"
refused_key "(key $(sed -n 's/.*public-key = "\(.*\)"/\1/p' "$K/w3.cert")): certificate w3@test was revoked" "w3's new connection"
for _ in $(seq 1 150); do kill -0 $w3 2>/dev/null || break; sleep 0.1; done
kill -0 $w3 2>/dev/null && fail "the revoked worker did not give up (--timeout 5)"
wait $w3; rc=$?
[ $rc -eq 3 ] || fail "revoked worker exit $rc, expected 3: $(tail -3 "$T/worker-w3.log")"
grep -q "refused" "$T/worker-w3.log" || fail "the revoked worker does not say why"
! admin_status | grep -q '^w3 ' || fail "w3 still registered"
pass "a certificate removed mid-run: refused from its next message and its next handshake, logged; qc-worker --timeout 5 exits 3 saying why"

# w1 without its delay finishes the job
kill -9 $w1
wait $w1 2>/dev/null
start_worker $port w1 --cert "$K/w1.cert_secret" --server-key "$SK" --slots 2 --heartbeat-ms 500
w1=$WORKER_PID
# alice's job ends with w1 alone: each slide once, nothing forged in it
for _ in $(seq 1 600); do kill -0 $alice 2>/dev/null || break; sleep 0.1; done
kill -0 $alice 2>/dev/null && fail "alice's job did not finish: $(tail -3 "$T/alice.log")"
wait $alice; rc=$?
[ $rc -le 1 ] || fail "alice's qc-submit exit $rc: $(tail -3 "$T/alice.log")"
check_exactly_once "$T/alice" "$T/cohort/list"
! grep -rq FORGED "$T/alice" || fail "a forged value reached alice's folder"
[ -z "$(find "$T" -name 'x' -o -name '*FORGED*' -o -name 'escape*')" ] || fail "stray files"
pass "alice's job: every slide exactly once, nothing forged in her folder"

# a second worker under w1's name (another certificate): it runs, and the
# broker says that their results cannot be told apart
start_worker $port w1 --cert "$K/w2.cert_secret" --server-key "$SK" --slots 1 --heartbeat-ms 500
twin=$WORKER_PID
wait_for "the twin's warning" 10 "grep -q 'worker w1 joined from .*, certificate w2@test while another worker of that name runs (from .*, certificate w1@test).*give each qc-worker its own --name' '$LOG'"
kill -TERM $twin
for _ in $(seq 1 100); do kill -0 $twin 2>/dev/null || break; sleep 0.1; done
pass "a second worker of one name (another certificate): warned of"

# a RESULT from the assignee naming another path: the client names the
# files from its own cohort and index, never from the message
kill -TERM $w1                      # the stranger gets bob's task
for _ in $(seq 1 100); do kill -0 $w1 2>/dev/null || break; sleep 0.1; done
"$BIN/qc-submit" --broker "$EP" --cert "$K/bob.cert_secret" --server-key "$SK" -c "$T/cheap.ini" \
    -o "$T/bob" "$(head -1 "$T/cohort/list")" --timeout 20 >"$T/bob.log" 2>&1 &
bob=$!
PIDS+=($bob)
# first a hoarder: READY with a prefetch no qc-worker sends (it would
# take every queued task), and a name that would forge a log line and
# drive a terminal; it is ignored, so bob's task waits for the next
as w2 --wait-ms 800 --prefetch 4000000000 --name "$(printf 'hoard\n2001-01-01 00:00:00 ERROR broker: forged\033[2J')" \
    work x >"$T/s7b.log" 2>&1
grep -q "^no task" "$T/s7b.log" || fail "a READY with prefetch 4000000000 got a task: $(cat "$T/s7b.log")"
grep -q "READY from hoard?2001-01-01 00:00:00 ERROR broker: forged?\[2J with 1 slots, prefetch 4000000000 .*ignored" "$LOG" \
    || fail "the hoarder's READY was not logged as ignored, on one scrubbed line: $(grep -a -A1 hoard "$LOG" | head -3)"
grep -q "^2001-01-01" "$LOG" && fail "a peer's name forged a log line"
grep -q $'\033' "$LOG" && fail "an escape sequence reached the broker's log"
pass "a READY asking for 4000000000 tasks is ignored; a newline or escape in its name is scrubbed from the log"
# a worker named "broker": its results would look like the broker's own
as w2 --wait-ms 800 --name broker work x >"$T/s7c.log" 2>&1
grep -q "^got DISCONNECT .*reason=refused: the worker name 'broker' is the broker's own" "$T/s7c.log" \
    && ! grep -q "^task " "$T/s7c.log" \
    || fail "a READY named broker was not refused: $(cat "$T/s7c.log")"
pass "a READY named 'broker' is refused, with the reason"
as w2 --wait-ms 1500 --log "FORGEDLOG" --fetch 20 work "_thumb.png" "../../$(basename "$T")-escape" >"$T/s8.log" 2>&1
grep -q "^task " "$T/s8.log" || fail "no task for the stranger: $(cat "$T/s8.log")"
for _ in $(seq 1 100); do kill -0 $bob 2>/dev/null || break; sleep 0.1; done
wait $bob
name=$(basename "$(head -1 "$T/cohort/list")")
[ -f "$T/bob/$name/${name}_thumb.png" ] || fail "the image is not under the cohort's name: $(find "$T/bob")"
[ "$(cat "$T/bob/$name/${name}_thumb.png")" = FORGED ] || fail "not the stranger's image"
[ -z "$(find "$T" /tmp -maxdepth 2 -name '*-escape' 2>/dev/null)" ] || fail "a file named from the message"
grep -q "^ok 1/1 .*(stranger)" "$T/bob.log" \
    || fail "the RESULT that said it was the broker's is not named after its sender: $(grep '^ok' "$T/bob.log")"
pass "a RESULT naming another path: its image written as $name/${name}_thumb.png, named from the cohort; one that says it is the broker's is named after its sender"
# its LOG record said it was the broker's, from a time no clock gives: the
# broker names the worker that sent it and gives it the time it came
logline=$(grep -a FORGEDLOG "$T/bob/qc.log")
[ -n "$logline" ] || fail "the stranger's LOG record did not reach bob's qc.log"
echo "$logline" | cut -f1 | grep -q "^$(date +%Y)-" || fail "the record kept a time no clock gives: $logline"
echo "$logline" | grep -q "	stranger	" || fail "the record's sender is not the worker that sent it: $logline"
pass "a worker's LOG record names the worker that sent it, at the time it came"
# 20 FETCHes of the job's files at once: one answer (each is the job's
# files, up to 256 MB, for a few bytes asked)
[ "$(grep -c '^got ASSETS' "$T/s8.log")" = 1 ] \
    || fail "20 FETCHes at once got $(grep -c '^got ASSETS' "$T/s8.log") answers, not 1"
grep -q "refused stranger: FETCH of job [0-9]*'s config files again within 4000 ms: dropped" "$LOG" \
    || fail "the repeated FETCHes were not logged"
pass "20 FETCHes of a job's files at once: one answer, the rest dropped and logged once"
# 40 STATUS on one connection, 20 ms apart: answered at most once in
# 250 ms (each answer lists every worker and job; unread, they piled up)
as alice --wait-ms 20 --repeat 40 status >"$T/s10.log" 2>&1
n=$(grep -c '^got STATUS_REPLY' "$T/s10.log")
[ "$n" -ge 1 ] && [ "$n" -lt 40 ] || fail "40 STATUS 20 ms apart got $n answers"
refused "peer [0-9a-f]*: STATUS again within 250 ms: dropped" "repeated STATUS"
pass "40 STATUS 20 ms apart on one connection: $n answered, the rest dropped and logged once"
# a worker of another build (the stranger says version "0") is warned of;
# this build's own workers are not
full=$("$BIN/qc-broker" --version | awk '{print $2}')
grep -q "worker stranger runs qc 0, this broker qc $full: its results may differ" "$LOG" \
    || fail "no warning for a worker of another build: $(grep stranger "$LOG" | tail -2)"
grep -q "worker w1 runs qc" "$LOG" && fail "a worker of this build was warned of"
pass "a worker of another build is warned of in the broker's log; one of this build ($full) is not"

# ---------------------------------------------------------------- other protocol versions
# a peer of another protocol version is answered in its own version
# (ERROR and DISCONNECT keep their encoding in every version) with why,
# and logged with its address, not dropped in silence
as alice --proto-version 1 --wait-ms 1500 status >"$T/v1.log" 2>&1
grep -q "^got ERROR .*reason=this broker speaks protocol version 2 (qc [^)]*), this program 1: run the same version" \
    "$T/v1.log" || fail "a protocol-1 client: $(cat "$T/v1.log")"
as bob --proto-version 1 --wait-ms 1500 status >"$T/v1b.log" 2>&1   # at once, same address
grep -q "^got ERROR .*this program 1" "$T/v1b.log" || fail "a second protocol-1 client at once: $(cat "$T/v1b.log")"
as w2 --proto-version 3 --wait-ms 1500 work x >"$T/v3.log" 2>&1
grep -q "^got DISCONNECT .*reason=refused: this broker speaks protocol version 2 .*, this program 3" \
    "$T/v3.log" || fail "a protocol-3 worker: $(cat "$T/v3.log")"
refused "a peer at 127.0.0.1: it speaks protocol version 1, this broker 2" "protocol 1 peer"
pass "a peer of another protocol version: told why in its own version, logged with its address"

# ---------------------------------------------------------------- slides root
mkdir -p "$T/root" "$T/outside"
for f in root/in root/in2 outside/out; do
    "$BIN/qc-mkslide" -o "$T/$f.svs" --width 1200 --height 900 --seed 1 >/dev/null 2>&1 \
        || fail "qc-mkslide"
done
# reached as root/sub/../out3.svs, root/sub a link to outside/deep: a
# ".." path qc-submit cannot fold (it is not root/out3.svs), so the
# worker gets it as it is and refuses it by its words
cp "$T/outside/out.svs" "$T/outside/out3.svs"
mkdir -p "$T/outside/deep" && ln -s "$T/outside/deep" "$T/root/sub"
mkfifo "$T/outside/fifo.svs"        # opening it would hang: it must not be opened
ln -s "$T/outside/fifo.svs" "$T/root/link.svs"
start_worker $port w1 --cert "$K/w1.cert_secret" --server-key "$SK" --slots 2 \
    --slides-root "$T/root" --heartbeat-ms 500
"$BIN/qc-submit" --broker "$EP" --cert "$K/bob.cert_secret" --server-key "$SK" -c "$T/cheap.ini" \
    -o "$T/roots" --no-check --timeout 20 "$T/root/in.svs" "$T/root/link.svs" \
    "$T/root/sub/../out3.svs" "$T/outside/fifo.svs" "file://$T/root/in2.svs" \
    "file://$T/outside/out.svs" >"$T/roots.log" 2>&1 &
sub=$!
PIDS+=($sub)
for _ in $(seq 1 300); do kill -0 $sub 2>/dev/null || break; sleep 0.1; done
kill -0 $sub 2>/dev/null && fail "a slide outside --slides-root was opened (it hangs): $(tail -3 "$T/roots.log")"
grep -q "^in.svs" "$T/roots/results.tsv" || fail "the slide inside the root did not pass"
grep -q "^in2.svs" "$T/roots/results.tsv" || fail "the file:// slide inside the root did not pass"
[ "$(grep -c 'outside every --slides-root of this worker ('"$T"'/root): not opened$' "$T/roots/error.log")" -eq 3 ] \
    && grep -q "out3.svs.*holds a '..' segment, which this worker does not follow under --slides-root: not opened (give the path without it; an older qc-submit sends a path as typed, this build's folds '..' where it can; a rerun tries again)" \
        "$T/roots/error.log" \
    || fail "expected 3 slides refused as outside, 1 for its '..': $(cat "$T/roots/error.log")"
grep -q "outside/\|fifo" <(cut -f2- "$T/roots/error.log") \
    && fail "a refusal names what lies outside: $(cat "$T/roots/error.log")"
pass "--slides-root: the slides inside pass (path, file://); a link out, a .. path, a path outside and a file:// URL outside fail, never opened"

# ---------------------------------------------------------------- owners across a restart
# bob's job waits (no worker); the broker restarts on its --state: the
# owner comes back from the journal
kill -TERM $WORKER_PID
for _ in $(seq 1 100); do kill -0 $WORKER_PID 2>/dev/null || break; sleep 0.1; done
as bob --wait-ms 800 submit "$T/root/in.svs" >"$T/s10.log" 2>&1
bjob=$(sed -n 's/^got ACCEPTED job=\([0-9]*\).*/\1/p' "$T/s10.log" | head -1)
[ -n "$bjob" ] || fail "bob's SUBMIT: $(cat "$T/s10.log")"
kill -TERM $BROKER_PID
for _ in $(seq 1 100); do kill -0 $BROKER_PID 2>/dev/null || break; sleep 0.1; done
kill -0 $BROKER_PID 2>/dev/null && fail "the broker did not stop"
start_broker $port --cert "$K/broker.cert_secret" --allow "$K/allowed" --heartbeat-ms 500
status_as() { "$BIN/qc-status" --broker "$EP" --cert "$K/$1.cert_secret" --server-key "$SK" --timeout 3; }
wait_for "bob's job restored" 10 "status_as admin | awk '\$1 == $bjob' | grep -q ."
status_as bob | awk -v j=$bjob '$1 == j' | grep -q . || fail "bob does not see his job after the restart"
! status_as alice | awk -v j=$bjob '$1 == j' | grep -q . || fail "alice sees bob's job after the restart"
as alice attach "$bjob" 0x5757 >"$T/s11.log" 2>&1
grep -q "got ERROR job=$bjob .*is not yours" "$T/s11.log" || fail "alice attach after restart: $(cat "$T/s11.log")"
refused "peer [0-9a-f]* (certificate alice@test, role client, key .*): ATTACH for job $bjob: it belongs to another certificate" \
    "alice ATTACH after the restart"
as bob --wait-ms 800 attach "$bjob" 0x5757 >"$T/s12.log" 2>&1
grep -q "got ERROR" "$T/s12.log" && fail "bob cannot attach to his own job: $(cat "$T/s12.log")"
pass "a job's owner survives a broker restart: the owner and the admin see it (qc-status), another client neither sees nor attaches to it"
# RESULTs naming attempts of the life before the restart that were never
# dispatched to w4 (the journal says whom each went to: here none was
# dispatched at all): none is taken, and none is called a forgery; said
# at INFO once a second at most (any number may come)
before=$(grep -c 'dispatched before this broker started' "$LOG")
as w4 --wait-ms 300 result "$bjob" 0x5757 0 65537-65556 >/dev/null 2>&1
wait_for "the earlier life said" 5 "[ \$(grep -c 'dispatched before this broker started' '$LOG') -gt $before ]"
said=$(( $(grep -c 'dispatched before this broker started' "$LOG") - before ))
[ "$said" -le 2 ] || fail "20 RESULTs of an earlier life logged $said lines"
grep -q "refused .*certificate w4@test.*attempt 6555" "$LOG" && fail "an earlier life's RESULT logged as a refusal"
status_as admin | awk -v j=$bjob '$1 == j' | grep -q . || fail "bob's job is gone"
pass "RESULTs of attempts before the restart: not taken, not called forgeries, said once a second at most"

# an admin may cancel any job
as admin --wait-ms 800 cancel "$bjob" 0x5757 >"$T/s13.log" 2>&1
grep -q "got ERROR" "$T/s13.log" && fail "the admin cannot cancel: $(cat "$T/s13.log")"
wait_for "job $bjob cancelled" 10 "grep -q 'job $bjob cancelled' '$LOG'" "$LOG"
# its owner is told an admin did it (it read "cancelled by the client",
# taken by the owner for its own doing)
wait_for "job $bjob's queued slides failed" 10 "grep -q 'job $bjob: .* failed: ' '$LOG'" "$LOG"
grep "job $bjob: .* failed: " "$LOG" | grep -vq "failed: not run: an admin cancelled the job (qc-submit --cancel with an admin's certificate; the broker's log names it; a rerun tries again)" \
    && fail "the slides of a job an admin cancelled: $(grep "job $bjob: .* failed: " "$LOG" | head -2)"
pass "an admin certificate cancels another client's job; its slides say an admin did"

# ---------------------------------------------------------------- how to go on, with keys
# a client interrupted says how to fetch its job: the command it prints
# carries its keys (without them a keyed broker never answers) and a
# folder with a space quoted, so it works as pasted
mkdir -p "$T/keyed dir"
"$BIN/qc-submit" --broker "$EP" --cert "$K/bob.cert_secret" --server-key "$SK" -c "$T/cheap.ini" \
    -o "$T/keyed dir/out" "$T/root/in.svs" --timeout 20 >"$T/keyed.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "the job accepted" 20 "grep -q '^job ' '$T/keyed dir/out/.qc-job' 2>/dev/null"
kill -INT $sub; wait $sub; rc=$?
[ $rc -eq 130 ] || fail "interrupted: exit $rc: $(tail -3 "$T/keyed.log")"
advice=$(sed -n 's/^  qc-submit \(.*--attach.*\)$/\1/p' "$T/keyed.log")
case "$advice" in
    *"--cert $K/bob.cert_secret --server-key $SK --attach "*" -o '$T/keyed dir/out'") ;;
    *) fail "the --attach advice lacks the keys or the quoted folder: $(tail -4 "$T/keyed.log")" ;;
esac
# another client's --attach to it (the folder at hand): refused as not
# its own, and not told the job is gone (that advice ran the slides
# again); the folder stays bob's to fetch into
kjob=$(awk '$1 == "job" {print $2; exit}' "$T/keyed dir/out/.qc-job")
timeout 30 "$BIN/qc-submit" --broker "$EP" --cert "$K/alice.cert_secret" --server-key "$SK" \
    --attach "$kjob" -o "$T/keyed dir/out" >"$T/alice-attach.log" 2>&1
grep -q "job $kjob is not yours" "$T/alice-attach.log" && ! grep -q "no longer holds" "$T/alice-attach.log" \
    || fail "another client's --attach: $(cat "$T/alice-attach.log")"
start_worker $port w1 --cert "$K/w1.cert_secret" --server-key "$SK" --slots 1 --heartbeat-ms 500
eval "timeout 60 \"\$BIN/qc-submit\" $advice" >"$T/keyed2.log" 2>&1; rc=$?
[ $rc -eq 0 ] || fail "the advice as pasted: exit $rc: $(tail -3 "$T/keyed2.log")"
grep -q "^in.svs" "$T/keyed dir/out/results.tsv" || fail "the advice did not fetch the slide"
pass "an interrupted client's --attach advice carries its keys and quotes its folder: pasted, it fetches the job"

# ---------------------------------------------------------------- a worker's key pair rotated
# the pair replaced in the file the worker was started with, the new
# public admitted and the old one removed: the broker refuses the old
# key, and the worker presents the new one from its next connection (a
# service is not restarted: it retried the old key for ever)
mkdir -p "$T/rot"
for r in rot1 rot2; do
    "$BIN/qc-keygen" --role worker --name "$r@test" -o "$T/rot" "$r" >/dev/null || fail "keygen $r"
done
cp "$T/rot/rot1.cert_secret" "$T/rot/live.cert_secret"
cp "$T/rot/rot1.cert" "$K/allowed/"
start_worker $port rot --cert "$T/rot/live.cert_secret" --server-key "$SK" --slots 1 --heartbeat-ms 500
rot=$WORKER_PID
wait_for "rot joined" 10 "grep -q 'worker rot joined' '$LOG'"
cp "$T/rot/rot2.cert_secret" "$T/rot/live.cert_secret"
cp "$T/rot/rot2.cert" "$K/allowed/"
rm "$K/allowed/rot1.cert"
wait_for "rot back with its new key" 30 "[ \$(grep -c 'worker rot joined' '$LOG') -ge 2 ]" "$T/worker-rot.log"
grep -q "the certificate files changed: presenting key" "$T/worker-rot.log" || fail "the reload not said"
admin_status | grep -q '^rot ' || fail "rot not registered after the rotation"
kill -TERM $rot; wait $rot 2>/dev/null
pass "a worker's key pair rotated while it runs: refused with the old key, back with the new one, no restart"

# ---------------------------------------------------------------- a broker secured later
# a job submitted while the broker had no keys has no owner; restarted
# with --cert, its submitter (showing the job's key, kept in its folder)
# becomes its owner and fetches it: it was refused ("submitted with
# another certificate") and its slides ran a second time
kill -TERM $BROKER_PID; wait $BROKER_PID 2>/dev/null
kill -TERM $WORKER_PID 2>/dev/null; wait $WORKER_PID 2>/dev/null
p7=$(free_port)
"$BIN/qc-broker" --bind tcp://127.0.0.1:$p7 --state "$T/state-later" >"$T/later-b1.log" 2>&1 &
lb=$!
PIDS+=($lb)
wait_for "keyless broker" 10 "grep -q 'listening on' '$T/later-b1.log'"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$p7 -c "$T/cheap.ini" -o "$T/later" --list "$T/cohort/list" \
    --timeout 20 >"$T/later1.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "the job accepted" 20 "grep -q '^job ' '$T/later/.qc-job' 2>/dev/null"
kill -INT $sub; wait $sub
kill -TERM $lb; wait $lb
"$BIN/qc-broker" --bind tcp://127.0.0.1:$p7 --state "$T/state-later" --cert "$K/broker.cert_secret" \
    --allow "$K/allowed" >"$T/later-b2.log" 2>&1 &
lb=$!
PIDS+=($lb)
wait_for "secured broker" 10 "grep -q 'listening on' '$T/later-b2.log'"
# the key is this user's alone; an admin (who may use an unowned job
# anyway) showing it does not take the job from its submitter
[ "$(stat -c %a "$T/later/.qc-job")" = 600 ] || fail ".qc-job mode $(stat -c %a "$T/later/.qc-job")"
lkey=0x$(sed -n 's/.* key=\([0-9a-f]*\).*/\1/p' "$T/later/.qc-job" | head -1)
"$STRANGER" --connect tcp://127.0.0.1:$p7 --cert "$K/admin.cert_secret" --server-key "$SK" \
    --wait-ms 800 attach 1 "$lkey" >"$T/later-admin.log" 2>&1
grep -q "got ACCEPTED job=1" "$T/later-admin.log" || fail "the admin's attach: $(cat "$T/later-admin.log")"
grep -q "now owned by certificate admin" "$T/later-b2.log" && fail "the admin claimed the job"
"$BIN/qc-worker" --connect tcp://127.0.0.1:$p7 --cert "$K/w1.cert_secret" --server-key "$SK" \
    --name later-w --slots 2 >"$T/later-w.log" 2>&1 &
lw=$!
PIDS+=($lw)
timeout 120 "$BIN/qc-submit" --broker tcp://127.0.0.1:$p7 --cert "$K/bob.cert_secret" --server-key "$SK" \
    -c "$T/cheap.ini" -o "$T/later" --list "$T/cohort/list" >"$T/later2.log" 2>&1
rc=$?
[ $rc -le 1 ] || fail "the same command on the secured broker: exit $rc: $(tail -3 "$T/later2.log")"
grep -q "submitted before this broker had keys; now owned by certificate bob" "$T/later-b2.log" \
    || fail "not claimed: $(grep -i 'job 1' "$T/later-b2.log" | tail -3)"
[ "$(grep -c 'job [0-9]* submitted' "$T/later-b2.log")" = 0 ] || fail "a second job: $(grep submitted "$T/later-b2.log")"
check_exactly_once "$T/later" "$T/cohort/list"
# another certificate showing the key after the claim is told who
# claimed it, not "submitted with another certificate" (which told the
# submitter, had another claimed it first, that it was never theirs)
"$STRANGER" --connect tcp://127.0.0.1:$p7 --cert "$K/alice.cert_secret" --server-key "$SK" \
    --wait-ms 800 attach 1 "$lkey" >"$T/later-alice.log" 2>&1
grep -q "got ERROR job=1 .*it was submitted before this broker had keys, and certificate bob@test has since claimed it by showing the job's key (ATTACH refused)" \
    "$T/later-alice.log" || fail "a refused claim does not say who claimed the job: $(cat "$T/later-alice.log")"
"$BIN/qc-status" --broker tcp://127.0.0.1:$p7 --cert "$K/admin.cert_secret" --server-key "$SK" --timeout 5 \
    | grep -q "^1 .*  bob@test ($(id -un))\$" || fail "the admin does not see the claimed job as bob's"
"$BIN/qc-status" --broker tcp://127.0.0.1:$p7 --cert "$K/alice.cert_secret" --server-key "$SK" --timeout 5 \
    | awk '$1 == 1' | grep -q . && fail "alice sees bob's claimed job"
kill -TERM $lw $lb; wait $lw $lb
pass "a job from before the broker had keys: its submitter's certificate claims it with the job's key and fetches it; no second job"

# ---------------------------------------------------------------- an id reused by another's job
# a broker without its state numbers jobs from 1 again: bob's folder
# names job 1, now alice's. His rerun is told it is not his folder's job
# (before whose it is), so it runs his slides in a new job; told "not
# yours", it stopped, and did so for as long as alice's job stayed
p8=$(free_port)
ep8=tcp://127.0.0.1:$p8
secured8() { "$BIN/qc-broker" --bind $ep8 --state none --cert "$K/broker.cert_secret" \
    --allow "$K/allowed" >>"$T/reuse-b.log" 2>&1 & rb=$!; PIDS+=($rb); }
secured8
wait_for "the broker" 10 "grep -q 'listening on' '$T/reuse-b.log'"
timeout 20 "$BIN/qc-submit" --broker $ep8 --cert "$K/bob.cert_secret" --server-key "$SK" \
    -c "$T/cheap.ini" -o "$T/reuse-bob" "$T/root/in.svs" >"$T/reuse-bob1.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "bob's job 1" 10 "grep -q '^job 1 ' '$T/reuse-bob/.qc-job' 2>/dev/null" "$T/reuse-bob1.log"
kill -INT $sub; wait $sub
kill -TERM $rb; wait $rb
secured8
wait_for "the broker again" 10 "[ \$(grep -c 'listening on' '$T/reuse-b.log') = 2 ]"
"$STRANGER" --connect $ep8 --cert "$K/alice.cert_secret" --server-key "$SK" --wait-ms 800 \
    submit "$T/root/in.svs" >"$T/reuse-alice.log" 2>&1
grep -q "got ACCEPTED job=1" "$T/reuse-alice.log" || fail "alice's job: $(cat "$T/reuse-alice.log")"
timeout 10 "$BIN/qc-submit" --broker $ep8 --cert "$K/bob.cert_secret" --server-key "$SK" \
    -c "$T/cheap.ini" -o "$T/reuse-bob" "$T/root/in.svs" >"$T/reuse-bob2.log" 2>&1
grep -q "job 1 cannot be fetched: its slides without a result here run in a new job" "$T/reuse-bob2.log" \
    && grep -q "^job 2 on $ep8" "$T/reuse-bob2.log" \
    || fail "bob's rerun after the id was reused: $(head -5 "$T/reuse-bob2.log")"
kill -TERM $rb; wait $rb
pass "a job id reused by another certificate's job (a broker without its state): the rerun runs the slides in a new job"
