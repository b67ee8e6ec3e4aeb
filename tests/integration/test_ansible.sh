#!/bin/bash
# deploy/ansible for real, against this machine (connection: local), into
# a test prefix: ansible-lint passes; site.yml installs packages, builds
# and installs the programs, makes and distributes CurveZMQ certificates
# and writes the units; a second run changes nothing; systemd-analyze
# verify accepts the units; the broker and a worker started exactly as
# the units say (no systemd here: PID 1 is not systemd in CI) QC a slide
# over CURVE; remove-worker.yml revokes the worker (the broker refuses it
# from then on) and site.yml brings it back, admitting a client
# certificate added since; qc_cert_days renews key pairs near their end.
# Nine playbook runs in all (~50 s each here).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (the playbook's apt step)"
A=$ROOT/deploy/ansible
export ANSIBLE_CONFIG=$A/ansible.cfg ANSIBLE_NOCOLOR=1 ANSIBLE_LOCAL_TEMP=$T/ansible-tmp \
    ANSIBLE_HOME=$T/ansible-home ANSIBLE_FORCE_COLOR=0

(cd "$A" && ansible-lint --offline --nocolor) >"$T/lint.log" 2>&1 \
    || { cat "$T/lint.log"; fail "ansible-lint"; }
pass "ansible-lint: $(tail -1 "$T/lint.log")"

port=$(free_port)
cat >"$T/inventory.ini" <<INV
[qc_broker]
localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3
[qc_workers]
localhost
[all:vars]
qc_prefix=$T/prefix
qc_etc_dir=$T/etc
qc_state_dir=$T/state
qc_build_root=$T/build
qc_systemd_dir=$T/units
qc_dist_dir=$T/dist
qc_cert_cache=$T/certs
qc_client_certs_dir=$T/client-certs
qc_create_user=false
qc_user=$(id -un)
qc_group=$(id -gn)
qc_become=false
qc_make_flags=CUDA=0
qc_broker_port=$port
qc_broker_bind=tcp://127.0.0.1:$port
qc_broker_address=127.0.0.1
qc_cpu_slots=2
qc_curve=true
qc_slides_roots='["$(realpath "$SHARED/slides/real")"]'
qc_slides_urls='["http://127.0.0.1:9/slides/"]'
INV
playbook() {  # playbook LOG PLAYBOOK [args...]: runs it, fails on error
    local log=$1; shift
    (cd "$A" && timeout 900 ansible-playbook -i "$T/inventory.ini" "$@") >"$T/$log" 2>&1 \
        || { tail -40 "$T/$log"; fail "ansible-playbook $* failed (log $T/$log)"; }
}
changed() { sed -n 's/.*localhost *: ok=[0-9]* *changed=\([0-9]*\).*/\1/p' "$T/$1" | tail -1; }

# A client certificate the admin puts on the controller before the first
# run (another comes before a later run, below)
mkdir -p "$T/client-certs"
"$BIN/qc-keygen" --role client --name "alice" -o "$T/alice" alice >/dev/null || fail "qc-keygen"
cp "$T/alice/alice.cert" "$T/client-certs/"
playbook run1.log site.yml
[ "$(changed run1.log)" -gt 0 ] || fail "first run changed nothing"
for p in qc-broker qc-worker qc-submit qc-status qc-keygen; do
    "$T/prefix/bin/$p" --version >/dev/null || fail "$p was not installed or does not run"
done
pass "site.yml built and installed the programs ($(changed run1.log) changes)"
[ -f "$T/etc/keys/broker.cert_secret" ] && [ -f "$T/etc/keys/worker.cert_secret" ] || fail "no key pairs made"
[ "$(stat -c %a "$T/etc/keys/worker.cert_secret")" = 600 ] || fail "secret key not 0600"
[ -f "$T/etc/allowed/worker-localhost.cert" ] || fail "the worker's certificate was not admitted"
cmp -s "$T/etc/keys/broker.cert" "$T/certs/broker/localhost.cert" || fail "broker certificate not distributed"
[ -f "$T/etc/allowed/client-alice.cert" ] || fail "the client certificate on the controller was not admitted"
pass "key pairs made on the host, secrets 0600, worker and client admitted, broker's certificate distributed"

# A second run with nothing new changes nothing; it leaves qc_curve to its
# documented default (true), so the one run shows both: the same cluster.
sed '/^qc_curve=/d' "$T/inventory.ini" >"$T/inventory-nocurve.ini"
(cd "$A" && timeout 900 ansible-playbook -i "$T/inventory-nocurve.ini" site.yml) >"$T/run3.log" 2>&1 \
    || { tail -20 "$T/run3.log"; fail "an inventory without qc_curve failed"; }
[ "$(changed run3.log)" = 0 ] || { grep -B3 'changed:' "$T/run3.log" | head -30; fail "a second run (qc_curve left to its default) changed $(changed run3.log) things"; }
pass "a run with nothing new changes nothing, qc_curve left to its default included"

# An address the broker or a worker would refuse stops the play at its
# first tasks: no package, build or file is touched.
md5sum "$T/units/qc-broker.service" "$T/etc/worker.env" >"$T/unit.md5"
for bad in "qc_broker_bind=tcp://localhost:$port|qc_broker_bind = tcp://localhost:$port: write tcp://ADDRESS:PORT" \
           "qc_broker_connect=tcp://127.0.0.1:99999|qc_broker_connect = tcp://127.0.0.1:99999: write tcp://HOST:PORT" \
           '{"qc_slides_urls": ["ftp://h/x/"]}|must be http(s)://HOST[:PORT]/FOLDER/ prefixes'; do
    setting=${bad%%|*} words=${bad#*|}
    (cd "$A" && timeout 900 ansible-playbook -i "$T/inventory.ini" site.yml -e "$setting") >"$T/badbind.log" 2>&1 \
        && fail "$setting was taken"
    grep -qF "$words" "$T/badbind.log" || { tail -20 "$T/badbind.log"; fail "no clear word on $setting"; }
    ! grep -q 'TASK \[qc_\(deps\|build\)' "$T/badbind.log" \
        || fail "$setting was refused only after the packages or the build"
    md5sum -c --quiet "$T/unit.md5" || fail "a file changed on a refused $setting"
done
pass "a bind to a host name, a port past 65535 for the workers or an ftp:// slide prefix is refused before any package, build or file"

mkdir -p "$T/verify"
cp "$T/units/qc-broker.service" "$T/units/qc-worker@.service" "$T/verify/"
ln -s qc-worker@.service "$T/verify/qc-worker@cpu.service"
(cd "$T/verify" && systemd-analyze verify qc-broker.service qc-worker@cpu.service) >"$T/verify.log" 2>&1 \
    || { cat "$T/verify.log"; fail "systemd-analyze verify"; }
pass "systemd-analyze verify accepts qc-broker.service and qc-worker@cpu.service"
# a stop systemd did not ask for (logrotate's kill -HUP exits 0) is
# started again: on-failure left the broker down for the night
for u in qc-broker.service qc-worker@.service; do
    grep -qx "Restart=always" "$T/units/$u" && grep -qx "RestartPreventExitStatus=2" "$T/units/$u" \
        || fail "$u: not restarted after every stop systemd did not ask for: $(grep '^Restart' "$T/units/$u")"
done
pass "the units start the broker and workers again after any stop but systemctl's (not after exit 2)"

# Start the programs as systemd would: each EnvironmentFile read, %i and
# %H put in, $VAR split into words, ${VAR} kept whole.
start_unit() {  # start_unit UNIT INSTANCE LOG: sets UNIT_PID
    local unit=$1 inst=$2 log=$3 line envf
    line=$(sed -n 's/^ExecStart=//p' "$unit")
    [ -n "$line" ] || fail "$unit has no ExecStart"
    line=${line//%i/$inst}; line=${line//%H/$(hostname)}
    (
        set -a
        while read -r envf; do
            envf=${envf//%i/$inst}
            . "$envf" || exit 97
        done < <(sed -n 's/^EnvironmentFile=//p' "$unit")
        set +a
        # systemd's CacheDirectory= sets this (a worker's slide cache)
        grep -q '^CacheDirectory=' "$unit" && export CACHE_DIRECTORY=$T/cache-$inst
        eval "exec $line"
    ) >"$T/$log" 2>&1 &
    UNIT_PID=$!
    PIDS+=($UNIT_PID)
}
start_unit "$T/units/qc-broker.service" "" broker-unit.log
wait_for "broker from its unit" 10 "grep -q 'listening on' '$T/broker-unit.log'"
start_unit "$T/units/qc-worker@.service" cpu worker-unit.log
worker_pid=$UNIT_PID
wait_for "worker from its unit" 20 "grep -q '(role worker)' '$T/broker-unit.log'" \
    || { tail -5 "$T/worker-unit.log"; fail "the worker's unit did not start it"; }
ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/slide1.svs"
timeout 300 "$T/prefix/bin/qc-submit" --broker "tcp://127.0.0.1:$port" --cert "$T/alice/alice.cert_secret" \
    --server-key "$T/etc/keys/broker.cert" -o "$T/out" "$T/slide1.svs" --timeout 120 >"$T/submit.log" 2>&1 \
    || { tail "$T/submit.log" "$T/broker-unit.log" "$T/worker-unit.log"; fail "qc-submit through the units' programs failed"; }
[ "$(grep -vc '^#' "$T/out/results.tsv")" = 1 ] || fail "no result row"
grep -q -- "--slides-root $(realpath "$SHARED/slides/real") --slides-url http://127.0.0.1:9/slides/" "$T/etc/worker.env" \
    || fail "qc_slides_roots and qc_slides_urls not in worker.env: $(grep CONFINE "$T/etc/worker.env")"
grep -q "confines .* only" "$T/worker-unit.log" && fail "the worker says a kind is open: $(grep confines "$T/worker-unit.log")"
pass "broker and worker started as their units say QC a slide over CURVE for an admitted client"

# Revoke the worker: its instances' settings and key pair go, its
# certificate is no longer admitted, and the running broker refuses its
# key from then on (a copy of the old secret stands for a stolen one).
cp "$T/etc/keys/worker.cert_secret" "$T/old-worker.cert_secret"
playbook remove.log remove-worker.yml -e qc_remove=localhost
[ ! -e "$T/etc/allowed/worker-localhost.cert" ] || fail "worker certificate still admitted"
[ ! -e "$T/etc/worker-cpu.env" ] || fail "instance settings left behind"
[ ! -e "$T/etc/keys/worker.cert_secret" ] || fail "worker key pair left behind"
kill -TERM $worker_pid 2>/dev/null; wait $worker_pid 2>/dev/null   # systemd would stop it
"$T/prefix/bin/qc-worker" --connect "tcp://127.0.0.1:$port" --name revoked --timeout 5 \
    --cert "$T/old-worker.cert_secret" --server-key "$T/etc/keys/broker.cert" >"$T/revoked.log" 2>&1
rc=$?
[ $rc = 3 ] || { tail -5 "$T/revoked.log"; fail "a worker with the revoked key was not refused (exit $rc)"; }
grep -q 'revoked' "$T/broker-unit.log" || grep -qi 'refus' "$T/broker-unit.log" \
    || fail "the broker did not log the refused peer"
pass "remove-worker.yml revoked the worker: the running broker refuses its old key"

# ...and an admin adds a client certificate on the controller: admitted
# by the next run
"$T/prefix/bin/qc-keygen" --role client --name "bob" -o "$T/bob" bob >/dev/null || fail "qc-keygen"
cp "$T/bob/bob.cert" "$T/client-certs/"
playbook run4.log site.yml
[ -f "$T/etc/allowed/worker-localhost.cert" ] && [ -f "$T/etc/worker-cpu.env" ] || fail "site.yml did not bring the worker back"
[ -f "$T/etc/allowed/client-bob.cert" ] || fail "a client certificate added later was not admitted by the next run"
pass "site.yml brings a removed worker back, and admits a client certificate added since"

# Key pairs that end: qc_cert_days gives the pairs an end; a run renews a
# pair that has none or whose end is within qc_cert_renew_days, and the
# broker admits the new worker key; a run with nothing near its end
# renews nothing; a life not longer than the renewal window is refused
# before anything changes.
key_of() { sed -n 's/.*public-key = "\(.*\)"/\1/p' "$1"; }
w0=$(key_of "$T/etc/keys/worker.cert"); b0=$(key_of "$T/etc/keys/broker.cert")
playbook run5.log site.yml -e qc_cert_days=40 -e qc_cert_renew_days=30
w1=$(key_of "$T/etc/keys/worker.cert"); b1=$(key_of "$T/etc/keys/broker.cert")
[ "$w1" != "$w0" ] && [ "$b1" != "$b0" ] || fail "pairs without an end were not renewed once an end was asked for"
end=$(date -u -d '+40 days' +%Y-%m-%d)
grep -q "expires = \"${end}T" "$T/etc/keys/worker.cert" && grep -q "expires = \"${end}T" "$T/etc/keys/broker.cert" \
    || fail "the renewed pairs do not end in 40 days: $(grep expires "$T/etc/keys/"*.cert)"
[ "$(key_of "$T/etc/allowed/worker-localhost.cert")" = "$w1" ] || fail "the broker does not admit the renewed worker key"
[ "$(stat -c %a "$T/etc/keys/worker.cert_secret")" = 600 ] || fail "the renewed secret is not 0600"
playbook run6.log site.yml -e qc_cert_days=40 -e qc_cert_renew_days=30
[ "$(key_of "$T/etc/keys/worker.cert")" = "$w1" ] && [ "$(key_of "$T/etc/keys/broker.cert")" = "$b1" ] \
    || fail "pairs 40 days from their end were renewed with a 30-day window"
playbook run7.log site.yml -e qc_cert_days=60 -e qc_cert_renew_days=45
[ "$(key_of "$T/etc/keys/worker.cert")" != "$w1" ] || fail "a pair within the 45-day window was not renewed"
[ "$(key_of "$T/etc/allowed/worker-localhost.cert")" = "$(key_of "$T/etc/keys/worker.cert")" ] \
    || fail "the broker does not admit the worker key renewed again"
(cd "$A" && timeout 900 ansible-playbook -i "$T/inventory.ini" site.yml -e qc_cert_days=30 \
    -e qc_cert_renew_days=30) >"$T/badlife.log" 2>&1 && fail "a 30-day life with a 30-day window was taken"
grep -q "more than qc_cert_renew_days" "$T/badlife.log" || fail "the refusal does not say why: $(tail -5 "$T/badlife.log")"
pass "qc_cert_days: pairs without an end or near it renewed and admitted, the rest kept; a life within its window refused"
