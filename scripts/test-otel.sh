#!/usr/bin/env bash
# OpenTelemetry export of `skilldeck serve`, against a real OTLP/HTTP
# receiver: a python http.server on 127.0.0.1 (port 0) decoding each
# ExportTraceServiceRequest with opentelemetry-proto 1.45.2 (PyPI, in a
# throwaway venv). scripts/otel_check.py drives the server over stdio with
# newline-delimited JSON-RPC (initialize, tools/list, tools/call
# activate_skill with _meta.traceparent, resources/read) and checks the
# spans, their links and attributes, that nothing private is exported by
# default, the export-content opt-in, and that an unreachable collector (a
# closed port; a port that accepts but never answers) changes neither the
# answers nor the round-trip median beyond noise, and that its failure is
# logged: for the silent collector, whichever comes first, the export's own
# timeout or shutdown giving up on it (an abandoned export is logged as an
# export failure), so the check does not depend on the machine's speed.
# Part 5 starts `skilldeck registry serve` with the same variables: one
# server span per HTTP request (`GET /api/v1/skills/{namespace}/{name}`,
# the HTTP attributes and the principal kind), a trace per request, the
# client's `traceparent` as its parent, the log lines' trace ids, no token.
#
# Then the bindings (scripts/otel_bindings_check.py): the Python wheel is
# built as scripts/dist.sh ships it (scripts/artifacts.sh; after
# scripts/test-python.sh cargo has nothing left to build) and installed
# next to opentelemetry-proto; a discovery given a trace id exports the
# `discover` span naming the skills under exactly that trace id (UUIDs,
# traceparents, opaque ids, the async twin, the exit hook's flush and
# deck.close() too), and without an endpoint nothing is exported and no
# exporter thread starts. The Node.js part runs when the package's addon
# (crates/skilldeck-node/npm/skilldeck.*.node, built by scripts/test-node.sh)
# is newer than the binding's and the telemetry crate's sources.
#
# Everything lives in a temporary folder removed on exit. Prints PASS or
# FAIL per part and exits non-zero on a failure; prints SKIP (exit 0) when
# the venv or PyPI is unavailable.
#
#   bash scripts/test-otel.sh
#
# Honours CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as .ci/run sets).
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
py_pid=""
cleanup() {
    if [[ -n "$py_pid" ]] && kill -0 "$py_pid" 2>/dev/null; then
        kill "$py_pid" 2>/dev/null || true
        wait "$py_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
# The released binary's features (otel is a default feature of skilldeck-cli).
echo "building skilldeck-cli (debug; a no-op when .ci/run built it already)"
cargo build -p skilldeck-cli
bin="$(cd "$CARGO_TARGET_DIR/debug" && pwd)/skilldeck"

if ! python3 -m venv "$work/venv" >"$work/pip.log" 2>&1; then
    echo "SKIP: python3 -m venv failed (install python3-venv); the OTLP export test did not run"
    exit 0
fi
if ! "$work/venv/bin/pip" install -q --disable-pip-version-check --timeout 20 --retries 1 \
    opentelemetry-proto==1.45.2 >"$work/pip.log" 2>&1; then
    echo "SKIP: could not install opentelemetry-proto==1.45.2 from PyPI (offline?); the OTLP export test did not run"
    tail -n 3 "$work/pip.log" | sed 's/^/  /'
    exit 0
fi
mkdir -p "$work/run"
status=0
PYTHONDONTWRITEBYTECODE=1 "$work/venv/bin/python" scripts/otel_check.py "$bin" "$work/run" &
py_pid=$!
wait "$py_pid" || status=$?
py_pid=""

# The bindings: the wheel the release ships (scripts/artifacts.sh).
# shellcheck source=scripts/artifacts.sh
source scripts/artifacts.sh
if ! wheel_tools >>"$work/pip.log" 2>&1; then
    echo "SKIP: could not install maturin==$MATURIN_VERSION / ziglang==$ZIGLANG_VERSION from PyPI (offline?); the bindings' export test did not run"
    exit "$status"
fi
echo "building the Python wheel (maturin --release --zig)"
wheel="$(wheel_build "$work/wheels" | tail -n 1)"
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-index "$wheel"
node_pkg=""
addon="$(ls crates/skilldeck-node/npm/skilldeck.*.node 2>/dev/null | head -n 1 || true)"
if [[ -n "$addon" ]] && command -v node >/dev/null \
    && [[ -z "$(find crates/skilldeck-node/src crates/skilldeck-telemetry/src -newer "$addon" -name '*.rs')" ]]; then
    node_pkg="$PWD/crates/skilldeck-node/npm"
fi
mkdir -p "$work/bindings"
bindings=0
repo="$PWD"
(cd "$work/bindings" && PYTHONDONTWRITEBYTECODE=1 "$work/venv/bin/python" \
    "$repo/scripts/otel_bindings_check.py" "$work/bindings" ${node_pkg:+"$node_pkg"}) || bindings=$?
if [[ -z "$node_pkg" ]]; then
    echo "  (node: run scripts/test-node.sh first to build the addon from these sources)"
fi
if [[ $bindings -ne 0 ]]; then
    status=$bindings
fi
exit "$status"
