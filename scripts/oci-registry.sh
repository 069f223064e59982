#!/usr/bin/env bash
# Usage: scripts/oci-registry.sh start DIR | stop DIR
#
# A real OCI registry on loopback for the OCI source tests
# (crates/skilldeck-cli/tests/cli/oci.rs): Debian's `docker-registry` package,
# the CNCF distribution server, installed with apt-get when missing (as
# scripts/install-bwrap.sh does for bubblewrap). Its system service is never
# used: `start` writes its own config into DIR, keeps the blobs in
# DIR/storage, listens on 127.0.0.1 at a free port, waits until /v2/ answers,
# and prints `127.0.0.1:PORT` (also written to DIR/address). `stop` ends the
# server it started (DIR/pid) and leaves DIR for the caller to remove.
set -euo pipefail
cmd="${1:-}" dir="${2:-}"
if [[ -z "$cmd" || -z "$dir" ]]; then
    echo "usage: $0 start|stop DIR" >&2
    exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"

case "$cmd" in
start)
    bash "$here/apt-ensure.sh" docker-registry docker-registry >&2
    mkdir -p "$dir/storage"
    dir="$(cd "$dir" && pwd)"
    if [[ -f "$dir/pid" ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
        echo "a registry is already running from $dir (pid $(cat "$dir/pid")): stop it first" >&2
        exit 1
    fi
    # A free port: bind port 0, read what the kernel gave, release it. The
    # registry binds it a moment later; a race with another process is
    # reported by the wait below (the log shows `address already in use`).
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
    cat >"$dir/config.yml" <<YAML
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/storage
  delete:
    enabled: true
  cache:
    blobdescriptor: inmemory
http:
  addr: 127.0.0.1:$port
  headers:
    X-Content-Type-Options: [nosniff]
health:
  storagedriver:
    enabled: false
YAML
    # setsid: its own process group, so `stop` ends it and nothing else.
    setsid docker-registry serve "$dir/config.yml" >"$dir/registry.log" 2>&1 &
    echo $! >"$dir/pid"
    for _ in $(seq 1 200); do
        if curl -fsS -o /dev/null "http://127.0.0.1:$port/v2/" 2>/dev/null; then
            echo "127.0.0.1:$port" >"$dir/address"
            echo "127.0.0.1:$port"
            exit 0
        fi
        if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
            echo "docker-registry exited before it answered; its log:" >&2
            tail -n 20 "$dir/registry.log" >&2
            rm -f "$dir/pid"
            exit 1
        fi
        sleep 0.05
    done
    echo "docker-registry did not answer on 127.0.0.1:$port within 10 s; its log:" >&2
    tail -n 20 "$dir/registry.log" >&2
    kill "$(cat "$dir/pid")" 2>/dev/null || true
    rm -f "$dir/pid"
    exit 1
    ;;
stop)
    if [[ -f "$dir/pid" ]]; then
        pid="$(cat "$dir/pid")"
        kill "$pid" 2>/dev/null || true
        # Wait for it to go (its storage is then quiet for the caller).
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$dir/pid" "$dir/address"
    fi
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
