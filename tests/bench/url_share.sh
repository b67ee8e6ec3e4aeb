#!/bin/bash
# One slide's QC over HTTP (nginx on 127.0.0.1), in qc-submit's
# one-process mode: prints the bytes fetched against the file's size, as
# the worker's fetch line in qc.log says. Called by bench_url.
#   tests/bench/url_share.sh SLIDE CONFIG LABEL
# CONFIG: a config file, "" for the built-in one, or HISTOQC for
# HistoQC's config.ini from ../shared/reference/histoqc.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/bench/lib.sh
slide=$1 config=$2 label=$3
SHARED=${QC_SHARED_DIR:-$(cd .. && pwd)/shared}
T=$(mktemp -d /tmp/qc-urlshare.XXXXXX) || exit 2
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
port=$(bench_free_port url_share) || exit 2
mkdir -p "$T/www" "$T/nginx"
ln -s "$(realpath "$slide")" "$T/www/slide.svs"
cat >"$T/nginx/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1; pid $T/nginx/pid;
error_log $T/nginx/error.log warn; events { worker_connections 64; }
http { access_log off; default_type application/octet-stream;
  client_body_temp_path $T/nginx/body; proxy_temp_path $T/nginx/proxy;
  fastcgi_temp_path $T/nginx/fastcgi; uwsgi_temp_path $T/nginx/uwsgi;
  scgi_temp_path $T/nginx/scgi;
  server { listen 127.0.0.1:$port; root $T/www; } }
CONF
nginx -p "$T/nginx" -c "$T/nginx/nginx.conf" -e "$T/nginx/error.log" >"$T/nginx/out.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
args=()
case "$config" in
    "") ;;
    HISTOQC) args=(-c "$SHARED/reference/histoqc/configs/config.ini"
                   --histoqc-data "$SHARED/reference/histoqc/data") ;;
    *) args=(-c "$config") ;;
esac
t0=$(date +%s.%N)
bin/qc-submit -q -w 1 "${args[@]}" -o "$T/out" --cache "$T/cache" \
    "http://127.0.0.1:$port/slide.svs" >"$T/submit.log" 2>&1 \
    || { echo "url_share: qc-submit: $(tail -2 "$T/submit.log")" >&2; exit 1; }
t1=$(date +%s.%N)
line=$(grep -a "	fetch	" "$T/out/qc.log" | cut -f6 | sed 's|^[^ ]*: ||')
printf "  %-38s %s, %.2f s\n" "$label:" "$line" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
