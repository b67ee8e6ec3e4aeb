#!/bin/bash
# A cohort over HTTP, with and without fetching ahead (qc-worker fetches
# the next task's slide while its slot computes; --no-fetch-ahead turns
# that off), against the same cohort read by path. Called by bench_url;
# prints one line per mode and rate (best of REPEAT runs) and what was
# fetched per slide against its size.
#   tests/bench/url_cohort.sh TIFF NDPI COPIES REPEAT RATES
# TIFF: a generated tiled slide (read by range requests); NDPI: a slide
# read whole (downloaded into the worker's cache, a fresh one each run);
# COPIES of each, under names of their own; RATES: nginx's limit_rate
# per connection, e.g. "0 20m" (0: none, loopback speed). One real
# qc-broker and one qc-worker with one CPU slot on 127.0.0.1.
set -u
cd "$(dirname "$0")/../.." || exit 2
tiff=$1 ndpi=$2 copies=$3 repeat=$4 rates=$5
T=$(mktemp -d /tmp/qc-urlbench.XXXXXX) || exit 2
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
free_port() {
    local p
    for _ in $(seq 1 100); do
        p=$((20000 + RANDOM % 12000))   # under the ephemeral range
        (echo >/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }
    done
    echo "url_cohort: no free port" >&2
    exit 2
}

mkdir -p "$T/www" "$T/nginx"
: >"$T/paths"
for i in $(seq 1 "$copies"); do
    ln -s "$(realpath "$tiff")" "$T/www/tiff-$i.svs"
    ln -s "$(realpath "$ndpi")" "$T/www/ndpi-$i.ndpi"
    echo "$T/www/tiff-$i.svs" >>"$T/paths"
    echo "$T/www/ndpi-$i.ndpi" >>"$T/paths"
done
hport=$(free_port)
{
    echo "daemon off; master_process off; worker_processes 1; pid $T/nginx/pid;"
    echo "error_log $T/nginx/error.log warn; events { worker_connections 64; }"
    echo "http { access_log off; default_type application/octet-stream;"
    for d in body proxy fastcgi uwsgi scgi; do echo "  ${d}_temp_path $T/nginx/$d;" | sed 's/body_temp/client_body_temp/'; done
    echo "  server { listen 127.0.0.1:$hport; root $T/www;"
    for r in $rates; do
        [ "$r" = 0 ] && continue
        echo "    location /r$r/ { alias $T/www/; limit_rate $r; }"
    done
    echo "  } }"
} >"$T/nginx/nginx.conf"
nginx -p "$T/nginx" -c "$T/nginx/nginx.conf" -e "$T/nginx/error.log" >"$T/nginx/out.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do (echo >/dev/tcp/127.0.0.1/$hport) 2>/dev/null && break; sleep 0.1; done
bport=$(free_port)
bin/qc-broker --bind tcp://127.0.0.1:$bport --state none >"$T/broker.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do grep -q 'listening on' "$T/broker.log" && break; sleep 0.1; done

# cohort LIST NAME [worker args]: best wall time of REPEAT runs, each with
# a fresh worker and cache (KEEP_CACHE=1: the cache as the last run left
# it); the last run's output stays in $T/out-NAME
cohort() {
    local list=$1 name=$2; shift 2
    local best="" r
    for r in $(seq 1 "$repeat"); do
        [ -n "${KEEP_CACHE:-}" ] || rm -rf "$T/cache"
        rm -rf "$T/out-$name"
        bin/qc-worker --connect tcp://127.0.0.1:$bport --name "$name" --slots 1 --no-supervise \
            --cache "$T/cache" "$@" >"$T/worker-$name.log" 2>&1 &
        local w=$!
        pids+=($w)
        local t0 t1
        t0=$(date +%s.%N)
        bin/qc-submit -q --broker tcp://127.0.0.1:$bport -o "$T/out-$name" --list "$list" \
            --timeout 60 >"$T/submit-$name.log" 2>&1
        local rc=$?
        t1=$(date +%s.%N)
        kill -TERM $w
        wait $w 2>/dev/null
        if [ $rc -ne 0 ]; then
            echo "url_cohort: $name: qc-submit exit $rc: $(tail -2 "$T/submit-$name.log"; head -3 "$T/out-$name/error.log" 2>/dev/null)" >&2
            return 1
        fi
        best=$(awk -v a="$t0" -v b="$t1" -v best="$best" \
            'BEGIN { s = b - a; print (best == "" || s < best) ? s : best }')
    done
    echo "$best"
}

n=$(wc -l <"$T/paths")
printf "%-54s %8s %9s\n" "cohort of $n slides, 1 slot" "wall s" "slides/s"
t=$(cohort "$T/paths" path) || exit 1
printf "%-54s %8.2f %9.2f\n" "by path (local disk)" "$t" "$(awk -v n=$n -v t=$t 'BEGIN { print n / t }')"
for rate in $rates; do
    prefix=""; label="loopback, no limit"
    [ "$rate" != 0 ] && prefix="r$rate/" && label="nginx limit_rate $rate"
    sed "s|^$T/www/|http://127.0.0.1:$hport/$prefix|" "$T/paths" >"$T/urls-$rate"
    for mode in ahead none; do
        args=()
        [ $mode = none ] && args=(--no-fetch-ahead)
        t=$(cohort "$T/urls-$rate" "$mode-$rate" "${args[@]}") || exit 1
        printf "%-54s %8.2f %9.2f\n" "HTTP, $label, $([ $mode = ahead ] && echo "fetch-ahead" || echo "no fetch-ahead")" \
            "$t" "$(awk -v n=$n -v t=$t 'BEGIN { print n / t }')"
    done
    # a second run: the cache the run just above filled is kept (the
    # slides read whole, and the range-read slides' blocks)
    t=$(KEEP_CACHE=1 cohort "$T/urls-$rate" "kept-$rate" --no-fetch-ahead) || exit 1
    printf "%-54s %8.2f %9.2f\n" "HTTP, $label, second run (cache kept)" \
        "$t" "$(awk -v n=$n -v t=$t 'BEGIN { print n / t }')"
done
# what each slide cost, from the last run's qc.log
log=$T/out-none-$(echo $rates | awk '{ print $1 }')/qc.log
echo
echo "per slide (qc.log's fetch lines, last run without fetch-ahead):"
grep -a "	fetch	" "$log" | cut -f6 | sed "s|http://127.0.0.1:$hport/||" | sort -t- -k1,1 -u
log=$T/out-kept-$(echo $rates | awk '{ print $1 }')/qc.log
echo "per slide, the second run (cache kept):"
grep -a "	fetch	" "$log" | cut -f6 | sed "s|http://127.0.0.1:$hport/||" | sort -t- -k1,1 -u
