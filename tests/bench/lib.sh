# What the bench scripts that start a broker on loopback share (sourced:
# lane_cohort.sh, gpu_cohort.sh, url_share.sh). The caller has set `pids`
# (an array its cleanup kills) and is in the repository root.

# bench_free_port NAME: a port on 127.0.0.1 that nothing listens on,
# under the ephemeral range (so that no outgoing connection takes it
# meanwhile); exits 2, NAME saying so, when 100 tries find none.
bench_free_port() {
    local p
    for _ in $(seq 1 100); do
        p=$((20000 + RANDOM % 12000))
        (echo >/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; return 0; }
    done
    echo "$1: no free port" >&2
    exit 2
}

# bench_broker PORT LOG [ARGS...]: bin/qc-broker bound to 127.0.0.1:PORT
# in the background (its pid added to pids), its output to LOG; returns
# once it says it listens (10 s at most).
bench_broker() {
    local port=$1 log=$2
    shift 2
    bin/qc-broker --bind "tcp://127.0.0.1:$port" "$@" >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 100); do grep -q 'listening on' "$log" && break; sleep 0.1; done
}
