#!/bin/bash
# Slides by https:// URL, against the fault server speaking TLS on
# 127.0.0.1 with a certificate of a lab's own certificate authority
# (made here with openssl):
#  1. not trusted: the slide's error line says the certificate could not
#     be verified, with libcurl's detail and what to do (the machine's
#     trust store, or CURL_CA_BUNDLE), not "SSL peer certificate or SSH
#     remote key was not OK";
#  2. that CA named in CURL_CA_BUNDLE (or SSL_CERT_FILE): the slide
#     passes, its results equal those read by path;
#  3. an https:// URL to a port that speaks plain http: the TLS handshake
#     failed, said with its likely cause;
#  4. a proxy from the environment (http_proxy) that does not answer: the
#     error names it, where it named only the slide's server.
source "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || fail "openssl is not installed (run tests/install-deps.sh)"
command -v python3 >/dev/null || fail "python3 is not installed (run tests/install-deps.sh)"

mkdir -p "$T/www" "$T/pki"
ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/www/a.svs"
# the lab's CA, and the server's certificate for 127.0.0.1 signed by it
( cd "$T/pki" \
  && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
         -subj "/CN=Test Lab CA" \
  && openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj "/CN=127.0.0.1" \
  && printf 'subjectAltName=IP:127.0.0.1\n' >ext.cnf \
  && openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem \
         -days 2 -extfile ext.cnf ) >"$T/pki.log" 2>&1 || fail "openssl: $(tail -3 "$T/pki.log")"

python3 "$ROOT/tests/http/fault_server.py" --root "$T/www" --port-file "$T/tls.port" \
    --tls-cert "$T/pki/srv.pem" --tls-key "$T/pki/srv.key" >"$T/tls.log" 2>&1 &
PIDS+=($!)
python3 "$ROOT/tests/http/fault_server.py" --root "$T/www" --port-file "$T/plain.port" \
    >"$T/plain.log" 2>&1 &
PIDS+=($!)
wait_for "the TLS server" 10 "[ -s '$T/tls.port' ]" "$T/tls.log"
wait_for "the plain server" 10 "[ -s '$T/plain.port' ]" "$T/plain.log"
tport=$(cat "$T/tls.port") pport=$(cat "$T/plain.port")
# no proxy of the machine's own between the test and its servers
unset http_proxy https_proxy all_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY no_proxy NO_PROXY \
    CURL_CA_BUNDLE SSL_CERT_FILE
run() {  # run OUT URL [env...]: one slide, one process, at most 120 s
    local out=$1 url=$2; shift 2
    env "$@" timeout 120 "$BIN/qc-submit" -q --http-attempts 1 --cache "$T/cache-$(basename "$out")" \
        -o "$out" "$url" >"$out.log" 2>&1
}

# 1. the lab's CA not trusted
run "$T/untrusted" "https://127.0.0.1:$tport/files/a.svs"
[ $? -eq 1 ] && grep -q "the server's TLS certificate could not be verified (SSL certificate problem: .*): one a lab's own certificate authority signed? add that CA to this worker machine's trust store (Debian: copy it to /usr/local/share/ca-certificates/NAME.crt and run update-ca-certificates), or name a file of CAs in CURL_CA_BUNDLE" \
    "$T/untrusted/error.log" || fail "an untrusted certificate: $(cat "$T/untrusted/error.log" "$T/untrusted.log")"
pass "a certificate of a CA the machine does not trust: said, with libcurl's detail and what to do"

# 2. trusted through the environment: the same results as by path
"$BIN/qc-submit" -q -o "$T/by-path" "$T/www/a.svs" >"$T/by-path.log" 2>&1 || fail "by path: $(cat "$T/by-path.log")"
rows() { grep -v '^#' "$1/results.tsv" | awk -F'\t' -v OFS='\t' '{ NF--; print }'; }
for var in CURL_CA_BUNDLE SSL_CERT_FILE; do
    run "$T/trusted-$var" "https://127.0.0.1:$tport/files/a.svs" "$var=$T/pki/ca.pem" \
        || fail "$var: exit $?: $(cat "$T/trusted-$var/error.log" "$T/trusted-$var.log" 2>/dev/null)"
    [ "$(rows "$T/trusted-$var")" = "$(rows "$T/by-path")" ] || fail "$var: results differ from by path"
done
pass "the lab's CA in CURL_CA_BUNDLE or SSL_CERT_FILE: read by https, the same results as by path"
run "$T/badca" "https://127.0.0.1:$tport/files/a.svs" "CURL_CA_BUNDLE=$T/pki/none.pem"
[ $? -eq 1 ] && grep -q "the certificate authorities CURL_CA_BUNDLE names, $T/pki/none.pem, could not be read" \
    "$T/badca/error.log" || fail "a CA file not there: $(cat "$T/badca/error.log" "$T/badca.log")"
pass "a CA file the environment names that is not there: said, naming the variable"
# a machine whose CURL_CA_BUNDLE names other CAs (the system's), and the
# lab's CA set in SSL_CERT_FILE, which libcurl then does not read: the
# error names the file used and says so (it only said to use
# CURL_CA_BUNDLE, and the lab could not tell why its CA did nothing)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/pki/other.key" -out "$T/pki/other.pem" \
    -days 2 -subj /CN=other-ca >>"$T/pki.log" 2>&1 || fail "openssl: $(tail -3 "$T/pki.log")"
run "$T/both" "https://127.0.0.1:$tport/files/a.svs" "CURL_CA_BUNDLE=$T/pki/other.pem" \
    "SSL_CERT_FILE=$T/pki/ca.pem"
[ $? -eq 1 ] && grep -q "could not be verified (.*) against the certificate authorities in $T/pki/other.pem (named by CURL_CA_BUNDLE; they take the place of this machine's trust store; SSL_CERT_FILE is not read when CURL_CA_BUNDLE is set)" \
    "$T/both/error.log" || fail "CURL_CA_BUNDLE and SSL_CERT_FILE both set: $(cat "$T/both/error.log" "$T/both.log")"
pass "other CAs in CURL_CA_BUNDLE and the lab's in SSL_CERT_FILE: the error names the file used, and that SSL_CERT_FILE is not read"

# 3. https:// to a port that speaks http
run "$T/plain" "https://127.0.0.1:$pport/files/a.svs"
[ $? -eq 1 ] && grep -q "the TLS handshake failed (.*): an https:// URL to a port that speaks plain http" \
    "$T/plain/error.log" || fail "https to an http port: $(cat "$T/plain/error.log" "$T/plain.log")"
pass "https:// to a plain http port: the handshake's failure said, with its likely cause"
run "$T/tlsport" "http://127.0.0.1:$tport/files/a.svs"
[ $? -eq 1 ] && grep -q "(an http:// URL to a port that speaks TLS? then give https://)" \
    "$T/tlsport/error.log" || fail "http to a TLS port: $(cat "$T/tlsport/error.log" "$T/tlsport.log")"
pass "http:// to a TLS port: libcurl's words, with the likely cause"

# 4. a proxy the environment names, which does not answer
dead=$(free_port)
run "$T/proxy" "http://127.0.0.1:$pport/files/a.svs" "http_proxy=http://user:SECRET9@127.0.0.1:$dead"
[ $? -eq 1 ] && grep -q "through the proxy http://127.0.0.1:$dead the environment names (http_proxy, https_proxy or all_proxy; no_proxy lists hosts reached directly)" \
    "$T/proxy/error.log" || fail "a proxy that does not answer: $(cat "$T/proxy/error.log" "$T/proxy.log")"
grep -rq SECRET9 "$T/proxy" "$T/proxy.log" && fail "the proxy's password was written out"
run "$T/noproxy" "http://127.0.0.1:$pport/files/a.svs" "http_proxy=http://127.0.0.1:$dead" "no_proxy=127.0.0.1" \
    || fail "no_proxy: exit $?: $(cat "$T/noproxy/error.log")"
pass "a proxy from the environment that does not answer is named (its password not); no_proxy reaches the server"
