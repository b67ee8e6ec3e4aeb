# Shared helpers for the integration tests: a real broker and real workers
# on loopback, a cohort of uniquely named slides, and checks on the output
# folder. Every wait is bounded; every process started is killed on exit.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
ROOT=$PWD
BIN=$ROOT/bin
# programs the tests drive (tests/tools/*.c), from make's build folder
TOOLS=$ROOT/${QC_BUILD:-build}/tests/tools
SHARED=${QC_SHARED_DIR:-$(cd "$ROOT/.." && pwd)/shared}
[ -d "$SHARED/slides/real" ] || { echo "FAIL: test data not found: $SHARED/slides/real (set QC_SHARED_DIR)" >&2; exit 1; }
T=$(mktemp -d /tmp/qc-it.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    release_ports
    [ -n "${KEEP:-}" ] || rm -rf "$T"   # KEEP=1 keeps the logs
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# skip WHY: this test cannot run here; tests/run.sh counts it as skipped
# and prints the reason (exit 77, as automake's test drivers do).
skip() { echo "SKIPPED: $*"; exit 77; }
pass() { echo "ok - $*"; }

# A port nobody listens on, picked at random under Linux's ephemeral
# range (32768-60999), where an outgoing connection's own port would not
# show as taken. Tests side by side could both find a port free before
# either binds it, so each port is also claimed, under a lock (flock):
# a folder per port names the claiming test's PID; cleanup drops its
# own claims, and a dead test's claim is taken over.
PORT_CLAIMS=/tmp/qc-test-ports-$(id -u)
free_port() (          # a subshell: the lock goes with it
    local p owner
    mkdir -p "$PORT_CLAIMS" 2>/dev/null
    exec 9>>"$PORT_CLAIMS/.lock" && flock -w 60 9 || fail "cannot lock $PORT_CLAIMS/.lock"
    for _ in $(seq 1 200); do
        p=$((20000 + RANDOM % 12000))
        if [ -d "$PORT_CLAIMS/$p" ]; then
            owner=$(cat "$PORT_CLAIMS/$p/owner" 2>/dev/null)
            [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null && continue
            rm -rf "$PORT_CLAIMS/$p"        # its test is gone
        fi
        (echo >/dev/tcp/127.0.0.1/$p) 2>/dev/null && continue    # in use
        mkdir "$PORT_CLAIMS/$p" && echo $$ >"$PORT_CLAIMS/$p/owner" \
            || fail "cannot claim port $p in $PORT_CLAIMS"
        echo $p
        exit 0
    done
    fail "no free port"
)
release_ports() {
    local f
    for f in "$PORT_CLAIMS"/*/owner; do
        [ "$(cat "$f" 2>/dev/null)" = "$$" ] && rm -rf "${f%/owner}"
    done
}

# A broker keeps its state in $T/state-PORT unless the arguments name
# another --state (the default, under $HOME, is for a service).
start_broker() {      # start_broker PORT [args...]
    local port=$1 dir; shift
    dir=$T/state-$port
    case " $* " in *" --state "*) set -- "$@";; *) set -- --state "$dir" "$@";; esac
    local before
    before=$(cat "$T/broker.log" 2>/dev/null | grep -c 'listening on')
    "$BIN/qc-broker" --bind "tcp://127.0.0.1:$port" "$@" >>"$T/broker.log" 2>&1 &
    BROKER_PID=$!
    PIDS+=($BROKER_PID)
    wait_for "broker listening" 10 "[ \$(grep -c 'listening on' '$T/broker.log') -gt $before ]" \
        "$T/broker.log"
}

start_worker() {      # start_worker PORT NAME [args...]; sets WORKER_PID
    local port=$1 name=$2; shift 2
    "$BIN/qc-worker" --connect "tcp://127.0.0.1:$port" --name "$name" "$@" \
        >>"$T/worker-$name.log" 2>&1 &
    WORKER_PID=$!
    PIDS+=($WORKER_PID)
}

# damage_byte FILE OFFSET: overwrites the byte at OFFSET with another
# one. Always a different one: a fixed 'X' left a key that holds an 'X'
# there as it was (1 run in 85 of test_restart_keys failed for it).
damage_byte() {
    local file=$1 at=$2 old new=X
    old=$(dd if="$file" bs=1 skip="$at" count=1 status=none)
    [ "$old" = X ] && new=Y
    printf '%s' "$new" | dd of="$file" bs=1 seek="$at" conv=notrunc status=none \
        || fail "cannot damage $file at $at"
    [ "$(dd if="$file" bs=1 skip="$at" count=1 status=none)" = "$new" ] \
        || fail "$file at $at did not change"
}

# wait_for WHAT SECONDS COMMAND [LOG]: polls COMMAND every 0.1 s; on a
# timeout shows the end of LOG, when given
wait_for() {
    local what=$1 secs=$2 cmd=$3 log=${4:-} i
    for i in $(seq 1 $((secs * 10))); do
        eval "$cmd" && return 0
        sleep 0.1
    done
    [ -n "$log" ] && [ -f "$log" ] && tail -5 "$log" >&2
    fail "timed out after ${secs}s waiting for: $what"
}

# gone_client PORT OUT LOG [qc-submit args...]: a client that submits to
# the broker on PORT and, once its job is accepted, goes away without a
# word (kill -9); sets JOB to its job's id
gone_client() {
    local port=$1 out=$2 log=$3 pid; shift 3
    "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -o "$out" "$@" >"$log" 2>&1 &
    pid=$!
    PIDS+=($pid)
    wait_for "job accepted" 10 "grep -q '^job' '$out/.qc-job' 2>/dev/null"
    kill -9 $pid
    wait $pid 2>/dev/null
    JOB=$(awk '/^job /{print $2; exit}' "$out/.qc-job")
}

workers_registered() {  # workers_registered PORT N
    local n
    n=$("$BIN/qc-status" --broker "tcp://127.0.0.1:$1" --timeout 2 2>/dev/null \
        | sed -n 's/^broker .*: \([0-9]*\) workers\{0,1\}, .*/\1/p')
    [ "${n:-0}" -ge "$2" ]
}

# wait_exit PID SECONDS: waits at most SECONDS for PID (a child of this
# shell) to end; returns its exit code, or 124 (as timeout(1) does) when
# it is still running.
wait_exit() {
    local pid=$1 _
    for _ in $(seq 1 $(($2 * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && return 124
    wait "$pid"
}

# run_alone PORT NAME LIST [worker args...]: the slides of LIST through
# one new worker alone (debug log in $T/worker-NAME.log, output in
# $T/out-NAME), which then leaves. Sets SUBMIT_RC to qc-submit's exit
# code; fails on 2 or more, or when a slide is not reported exactly once.
run_alone() {
    local port=$1 name=$2 list=$3; shift 3
    start_worker $port "$name" --heartbeat-ms 200 --log-level debug "$@"
    local pid=$WORKER_PID
    "$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out-$name" \
        --list "$list" --timeout 300 >"$T/submit-$name.log" 2>&1
    SUBMIT_RC=$?
    [ $SUBMIT_RC -le 1 ] || fail "$name: qc-submit exit $SUBMIT_RC: $(tail -3 "$T/submit-$name.log")"
    kill -TERM $pid
    for _ in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
    check_exactly_once "$T/out-$name" "$list"
}

# probe_gpu: whether qc-worker --gpu 0 can start here. Sets GPU_PROBE_RC:
# 3 (it started, found no broker: a usable GPU) or 2 (refused: none;
# the reason is in $T/gpu-probe.log), anything else is a fault.
probe_gpu() {
    "$BIN/qc-worker" --connect tcp://127.0.0.1:1 --gpu 0 --timeout 2 >"$T/gpu-probe.log" 2>&1
    GPU_PROBE_RC=$?
}

# make_cohort DIR N: N uniquely named slides (symlinks to the real and odd
# slides of ../shared, then slides made by qc-mkslide when it is built);
# writes DIR/list and prints the number of slides expected to fail.
make_cohort() {
    local dir=$1 n=$2 i=0 src
    mkdir -p "$dir"
    local srcs=("$SHARED"/slides/real/* "$SHARED"/slides/odd/*)
    local bad=0
    : >"$dir/list"
    if [ -x "$BIN/qc-mkslide" ]; then
        for g in 1 2 3 4 5 6 7 8 9 10; do
            "$BIN/qc-mkslide" -o "$dir/gen-$g.svs" --width 1200 --height 900 --seed $g \
                >/dev/null 2>&1 && echo "$dir/gen-$g.svs" >>"$dir/list" && i=$((i + 1))
        done
    fi
    while [ $i -lt "$n" ]; do
        src=${srcs[$((i % ${#srcs[@]}))]}
        local name
        name=$(printf 's%04d-%s' $i "$(basename "$src")")
        ln -s "$src" "$dir/$name"
        echo "$dir/$name" >>"$dir/list"
        # the default pipeline reads slides at 1.25x: those with no
        # magnification in their metadata fail too (as in HistoQC)
        case "$src" in *unopenable*|*unreadable*|*not-a-slide*|*dicom*|*-TS1.svs|*boxes.tiff) bad=$((bad + 1));; esac
        i=$((i + 1))
    done
    echo $bad
}

# Every slide of the list appears exactly once in results.tsv or error.log.
check_exactly_once() {  # check_exactly_once OUTDIR LIST
    local out=$1 list=$2
    local want got dups
    want=$(wc -l <"$list")
    got=$( { grep -v '^#' "$out/results.tsv" | cut -f1; cut -f1 "$out/error.log" | xargs -r -n1 basename; } | sort)
    [ "$(echo "$got" | grep -c .)" -eq "$want" ] \
        || fail "expected $want slides reported, got $(echo "$got" | grep -c .) in $out"
    dups=$(echo "$got" | uniq -d)
    [ -z "$dups" ] || fail "reported twice: $dups"
    diff <(xargs -n1 basename <"$list" | sort) <(echo "$got") >/dev/null \
        || fail "reported slides differ from the submitted list"
}

# make_keys ROLE:NAME...: in $T/keys, a broker key pair (broker.cert,
# broker.cert_secret) and one per peer (NAME.cert, NAME.cert_secret, its
# certificate named NAME@test), each peer's admitted in $T/keys/allowed;
# sets K to $T/keys
make_keys() {
    K=$T/keys
    mkdir -p "$K/allowed"
    local r
    for r in "$@"; do
        "$BIN/qc-keygen" --role "${r%%:*}" --name "${r#*:}@test" -o "$K" "${r#*:}" >/dev/null \
            || fail "qc-keygen ${r#*:}"
        cp "$K/${r#*:}.cert" "$K/allowed/"
    done
    "$BIN/qc-keygen" --role broker -o "$K" broker >/dev/null || fail "qc-keygen broker"
}

# cheap_config FILE: a real pipeline of two quick steps (real result rows,
# no classifier to train), for tests that need many tasks, or tasks that
# finish well within a short deadline.
cheap_config() {
    printf '[pipeline]\nsteps= BasicModule.getBasicStats\n    BasicModule.finalComputations\n' >"$1"
}

# The rows without the header lines, sorted: comparable across runs.
rows() { grep -v '^#' "$1/results.tsv" | sort; }
errors() { sort "$1/error.log"; }

# results_close A B REL: the results of output folders A and B agree as a
# GPU's agree with the CPU's (sums in another order: the last digits move):
# the same header, the same slides, numeric columns within REL relative
# (to at least 1e-3, so that a column near 0 is not held to rounding
# noise), every other column equal. The differences go to $T/diffs
# (column number, A's value, B's); 0 when there are none.
results_close() {
    local a=$1 b=$2 rel=$3 hdr ncol
    hdr=$(grep '^#dataset:' "$a/results.tsv")
    if [ "$hdr" != "$(grep '^#dataset:' "$b/results.tsv")" ]; then
        echo "column headers differ" >"$T/diffs"
        return 1
    fi
    join -t $'\t' <(rows "$a") <(rows "$b") >"$T/joined" || { echo "cannot join the results" >"$T/diffs"; return 1; }
    if [ "$(wc -l <"$T/joined")" -ne "$(rows "$a" | wc -l)" ] \
        || [ "$(rows "$a" | wc -l)" -ne "$(rows "$b" | wc -l)" ]; then
        echo "not every slide in both" >"$T/diffs"
        return 1
    fi
    ncol=$(echo "$hdr" | awk -F'\t' '{print NF}')
    awk -F'\t' -v n="$ncol" -v rel="$rel" '
        function num(s) { return s ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ }
        { for (i = 2; i <= n; i++) {
            x = $i; y = $(i + n - 1)
            if (num(x) && num(y)) {
                d = x - y; d = d < 0 ? -d : d
                m = (x < 0 ? -x : x); my = (y < 0 ? -y : y); if (my > m) m = my; if (m < 1e-3) m = 1e-3
                if (d > rel * m) { print $1 ": column " i ": " x " against " y; bad++ }
            } else if (x != y) { print $1 ": column " i ": \"" x "\" against \"" y "\""; bad++ }
          } }
        END { exit bad > 0 }' "$T/joined" >"$T/diffs"
}

# nginx_start ROOT SLOW_RATE: Debian's nginx serving ROOT on a free port of
# 127.0.0.1 (NGINX_PORT), and the same files under /slow/ at SLOW_RATE
# (limit_rate: a download lasts long enough to be killed); a private
# configuration and temporary folders under $T/nginx, no daemon, stopped
# by its PID at exit (NGINX_PID).
nginx_start() {
    local root=$1 rate=$2
    command -v nginx >/dev/null || fail "nginx is not installed (run tests/install-deps.sh)"
    NGINX_PORT=$(free_port)
    mkdir -p "$T/nginx"
    cat >"$T/nginx/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    default_type application/octet-stream;
    client_body_temp_path $T/nginx/body;
    proxy_temp_path $T/nginx/proxy;
    fastcgi_temp_path $T/nginx/fastcgi;
    uwsgi_temp_path $T/nginx/uwsgi;
    scgi_temp_path $T/nginx/scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $root;
        location /slow/ {
            alias $root/;
            limit_rate $rate;
        }
    }
}
EOF
    nginx -p "$T/nginx" -c "$T/nginx/nginx.conf" -e "$T/nginx/error.log" >"$T/nginx/out.log" 2>&1 &
    NGINX_PID=$!
    PIDS+=($NGINX_PID)
    wait_for "nginx on port $NGINX_PORT" 10 "(echo >/dev/tcp/127.0.0.1/$NGINX_PORT) 2>/dev/null" \
        "$T/nginx/error.log"
}
