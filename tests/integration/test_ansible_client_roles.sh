#!/bin/bash
# deploy/ansible admits a client's certificate with the role the
# inventory gives it, not the one written in the file: a public
# certificate is its holder's file, and a holder who wrote "worker" into
# it was admitted as a worker (every task: slides' paths and signed URLs,
# and results accepted from it), "admin" as an admin. Runs the broker
# role's client_certs.yml alone (connection local, a test folder), then
# a real qc-broker on the folder it made: what the broker admits is what
# counts. A file without one public key is refused by the play.
. "$(dirname "$0")/lib.sh"

command -v ansible-playbook >/dev/null || skip "ansible-playbook not installed"
A=$ROOT/deploy/ansible
C=$T/client-certs
mkdir -p "$C" "$T/keys" "$T/etc/allowed"
mk() {      # mk ROLE NAME: a pair in $T/keys, the public half into $C
    "$BIN/qc-keygen" --role "$1" --name "$2" -o "$T/keys" "$2" >/dev/null || fail "qc-keygen $2"
    cp "$T/keys/$2.cert" "$C/"
}
"$BIN/qc-keygen" --role broker -o "$T/keys" broker >/dev/null || fail "qc-keygen broker"
mk client alice
mk client mallory
sed -i 's/role = "client"/role = "worker"/' "$C/mallory.cert"   # her own file
mk admin eve            # says admin; not listed in qc_admin_clients
mk admin ops            # listed
mk client twice         # a second role line after the first
sed -i 's/^\(    role = "client"\)$/\1\n    role = "worker"/' "$C/twice.cert"
grep -c 'role = ' "$C/twice.cert" | grep -qx 2 || fail "twice.cert not made: $(cat "$C/twice.cert")"
cat >"$T/play.yml" <<PLAY
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - ansible.builtin.include_tasks: $A/roles/qc_broker/tasks/client_certs.yml
PLAY
play() {    # play LOG: runs it; its exit status
    timeout 300 ansible-playbook -i localhost, "$T/play.yml" \
        -e "{\"qc_etc_dir\": \"$T/etc\", \"qc_client_certs_dir\": \"$C\", \"qc_admin_clients\": [\"ops\"]}" \
        >"$T/$1" 2>&1
}

# a file that holds no public key (or two) is refused, and nothing admitted
printf 'metadata\n    role = "admin"\n' >"$C/nokey.cert"
play bad.log && fail "a certificate without a public key was admitted: $(tail -5 "$T/bad.log")"
grep -q "nokey.cert: not a public certificate of qc-keygen" "$T/bad.log" \
    || fail "no reason given: $(tail -20 "$T/bad.log")"
[ -z "$(ls "$T/etc/allowed")" ] || fail "admitted anyway: $(ls "$T/etc/allowed")"
rm "$C/nokey.cert"
pass "a client certificate without one public key: the play fails naming it, nothing admitted"

play good.log || fail "ansible-playbook failed: $(tail -20 "$T/good.log")"
for n in alice mallory eve ops twice; do
    [ -f "$T/etc/allowed/client-$n.cert" ] || fail "client-$n.cert not admitted"
    want=$(grep 'public-key' "$T/keys/$n.cert")
    grep -qxF "$want" "$T/etc/allowed/client-$n.cert" \
        || fail "client-$n.cert: another key: $(cat "$T/etc/allowed/client-$n.cert")"
done

# what the broker makes of them
port=$(free_port)
start_broker $port --state none --cert "$T/keys/broker.cert_secret" --allow "$T/etc/allowed"
LOG=$T/broker.log
for n in alice mallory eve twice; do
    grep -q "admitted certificate $n (role client," "$LOG" \
        || fail "$n not admitted as a client: $(grep -a "admitted certificate" "$LOG")"
done
grep -q "admitted certificate ops (role admin," "$LOG" \
    || fail "ops (listed) not admitted as an admin: $(grep -a "admitted certificate" "$LOG")"
! grep -q "role worker\|eve (role admin" "$LOG" || fail "a role from a holder's file: $(cat "$LOG")"
pass "each admitted as a client whatever its file says (worker, admin, two role lines); a listed admin as admin"
