#!/usr/bin/env bash
# `skilldeck serve` driven by MCP clients nobody here wrote:
#
# - the official Python SDK (PyPI mcp 2.3.0, in a throwaway venv) runs
#   tests/mcp/test_*.py: tools, prompts, resources, the Skills extension and
#   hot reload, over stdio and streamable HTTP, with the 2025-11-25
#   `initialize` handshake and with 2026-07-28 `server/discover`; plus raw
#   JSON-RPC and HTTP robustness (malformed lines, huge requests, tokens,
#   Host/Origin, clients that disconnect);
# - the MCP Inspector CLI (npm @modelcontextprotocol/inspector 2.12.0) runs
#   tools/list and tools/call over stdio;
# - the official conformance suite (npm @modelcontextprotocol/conformance
#   0.2.0-alpha.12 on Node 22): scripts/test-mcp-conformance.sh, the
#   SEP-2640 scenarios over stdio and HTTP and every server scenario over
#   HTTP against tests/mcp/conformance-baseline.yml.
#
# Everything (venv, npm prefix, skills, HOMEs, logs) lives in a temporary
# folder removed on exit; HTTP servers listen on 127.0.0.1 port 0 and are
# stopped on exit. Prints PASS or FAIL per part and exits non-zero on any
# failure; a part whose client cannot be installed (PyPI or npm unreachable,
# no venv support, no node) prints SKIP and does not fail the run.
#
#   bash scripts/test-mcp.sh
#
# Honours CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as
# .ci/run sets). MCP_TEST_ARGS passes unittest arguments (for example
# `-k test_prompts`) to the Python part.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
py_pid=""
cleanup() {
    if [[ -n "$py_pid" ]] && kill -0 "$py_pid" 2>/dev/null; then
        kill "$py_pid" 2>/dev/null || true # its atexit stops the servers it started
        wait "$py_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
cargo build -q -p skilldeck-cli
bin="$(cd "$CARGO_TARGET_DIR/debug" && pwd)/skilldeck"

failed=0
ran=0
started=$SECONDS

# --- The official Python SDK ------------------------------------------------

python_part() {
    if ! python3 -m venv "$work/venv" >"$work/pip.log" 2>&1; then
        echo "SKIP: python3 -m venv failed (install python3-venv); the Python SDK tests did not run"
        return 0
    fi
    if ! "$work/venv/bin/pip" install -q --disable-pip-version-check --timeout 20 --retries 1 \
        mcp==2.3.0 PyYAML >"$work/pip.log" 2>&1; then
        echo "SKIP: could not install mcp==2.3.0 from PyPI (offline?); the Python SDK tests did not run"
        tail -n 3 "$work/pip.log" | sed 's/^/  /'
        return 0
    fi
    ran=$((ran + 1))
    mkdir -p "$work/py"
    local t0=$SECONDS status=0
    # shellcheck disable=SC2086 # MCP_TEST_ARGS is word-split on purpose
    (cd tests/mcp && SKILLDECK_BIN="$bin" SKILLDECK_TEST_TMP="$work/py" PYTHONUTF8=1 \
        PYTHONDONTWRITEBYTECODE=1 exec "$work/venv/bin/python" -W ignore -m unittest \
        ${MCP_TEST_ARGS:-test_server test_robustness test_run_code}) >"$work/py.log" 2>&1 &
    py_pid=$!
    wait "$py_pid" || status=$?
    py_pid=""
    if [[ $status -eq 0 ]]; then
        echo "PASS: Python SDK mcp 2.3.0 ($(grep -E '^Ran ' "$work/py.log"), $((SECONDS - t0)) s)"
    else
        echo "FAIL: Python SDK mcp 2.3.0 (exit $status)"
        sed 's/^/  /' "$work/py.log"
        failed=1
    fi
}

# --- The MCP Inspector CLI --------------------------------------------------

inspector_part() {
    if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
        echo "SKIP: node/npm not installed; the MCP Inspector CLI tests did not run"
        return 0
    fi
    local prefix="$work/npm"
    mkdir -p "$prefix"
    if ! NPM_CONFIG_UPDATE_NOTIFIER=false npm install --prefix "$prefix" --no-audit --no-fund \
        --loglevel=error --fetch-retries=1 --fetch-timeout=30000 \
        @modelcontextprotocol/inspector@2.12.0 >"$work/npm.log" 2>&1; then
        echo "SKIP: could not install @modelcontextprotocol/inspector@2.12.0 from npm (offline?); the Inspector tests did not run"
        tail -n 3 "$work/npm.log" | sed 's/^/  /'
        return 0
    fi
    ran=$((ran + 1))
    local t0=$SECONDS skills="$work/inspector/skills" home="$work/inspector/home"
    mkdir -p "$home/.config" "$work/inspector/cwd"
    "${PYTHON:-python3}" - "$skills" <<'EOF'
import sys
sys.path.insert(0, "tests/mcp")
from pathlib import Path
from fixtures import make_skills
make_skills(Path(sys.argv[1]))
EOF
    inspect() { # expected exit status, then inspector arguments; stdout to $work/inspector/out
        local want=$1 got=0
        shift
        (cd "$prefix" && HOME="$home" XDG_CONFIG_HOME="$home/.config" NPM_CONFIG_UPDATE_NOTIFIER=false \
            timeout 120 npx --no-install mcp-inspector --cli \
            -e "HOME=$home" -e "XDG_CONFIG_HOME=$home/.config" -e "RUST_LOG=warn" \
            --cwd "$work/inspector/cwd" \
            "$bin" serve --root "$skills" "$@") >"$work/inspector/out" 2>>"$work/inspector/err" || got=$?
        if [[ $got -ne $want ]]; then
            echo "inspector $*: exit $got, expected $want" >>"$work/inspector/failures"
            sed 's/^/  /' "$work/inspector/out" >>"$work/inspector/failures"
            return 1
        fi
    }
    check() { # a Python expression over `r`, the inspector's JSON output
        local what=$1 expr=$2
        if ! "${PYTHON:-python3}" -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$work/inspector/out" "$expr" 2>>"$work/inspector/failures"; then
            {
                echo "inspector $what: check failed: $expr"
                head -c 3000 "$work/inspector/out" | sed 's/^/  /'
                echo
            } >>"$work/inspector/failures"
        fi
    }
    : >"$work/inspector/failures"
    local n=0
    n=$((n + 1))
    if inspect 0 --method tools/list; then
        check "tools/list" '{t["name"] for t in r["tools"]} == {"activate_skill", "read_skill_resource", "search_skills"}'
        check "tools/list enum" 'set(next(t for t in r["tools"] if t["name"] == "activate_skill")["inputSchema"]["properties"]["name"]["enum"]) == {"pdf-tools", "csv-tools", "internal-helper", "commit-message", "editable"}'
        check "tools/list catalog" '"Extract text and tables from PDF files" in next(t for t in r["tools"] if t["name"] == "activate_skill")["description"]'
    fi
    n=$((n + 1))
    if inspect 0 --method tools/call --tool-name activate_skill --tool-arg name=pdf-tools arguments=report.pdf; then
        check "activate_skill" 'r["isError"] is False and r["content"][0]["text"].startswith("<skill_content name=\"pdf-tools\"")'
        check "activate_skill arguments" '"Process the file: report.pdf" in r["content"][0]["text"]'
    fi
    n=$((n + 1))
    if inspect 5 --method tools/call --tool-name activate_skill --tool-arg name=pdf-tool; then
        check "activate_skill unknown" 'r["isError"] is True and "did you mean '"'"'pdf-tools'"'"'?" in r["content"][0]["text"]'
        check "activate_skill one suggestion" 'r["content"][0]["text"].count("did you mean") == 1'
    fi
    n=$((n + 1))
    if inspect 0 --method tools/call --tool-name read_skill_resource --tool-arg name=pdf-tools path=references/FORMS.md; then
        check "read_skill_resource" 'r["isError"] is False and "Fill form fields" in r["content"][0]["text"]'
    fi
    n=$((n + 1))
    if inspect 5 --method tools/call --tool-name read_skill_resource --tool-arg name=pdf-tools path=../../etc/passwd; then
        check "read_skill_resource traversal" 'r["isError"] is True and "root:" not in r["content"][0]["text"]'
    fi
    n=$((n + 1))
    if inspect 0 --method tools/call --tool-name search_skills --tool-arg query=csv; then
        check "search_skills" 'r["structuredContent"]["results"][0]["name"] == "csv-tools"'
    fi
    if [[ -s "$work/inspector/failures" ]]; then
        echo "FAIL: MCP Inspector CLI 2.12.0"
        sed 's/^/  /' "$work/inspector/failures"
        echo "  server stderr (last lines):"
        tail -n 20 "$work/inspector/err" | sed 's/^/    /'
        failed=1
    else
        echo "PASS: MCP Inspector CLI 2.12.0 ($n calls over stdio, $((SECONDS - t0)) s)"
    fi
}

# --- The official conformance suite -----------------------------------------

conformance_part() {
    local status=0
    bash scripts/test-mcp-conformance.sh "$bin" 2>&1 | tee "$work/conformance.log" || status=$?
    if [[ $status -ne 0 ]]; then
        failed=1
    elif ! grep -q '^SKIP:' "$work/conformance.log"; then
        ran=$((ran + 1))
    fi
}

python_part
if [[ -x "$work/venv/bin/python" ]]; then PYTHON="$work/venv/bin/python"; fi
inspector_part
conformance_part

if [[ $failed -ne 0 ]]; then
    echo "FAIL: scripts/test-mcp.sh ($((SECONDS - started)) s)"
    exit 1
fi
if [[ $ran -eq 0 ]]; then
    echo "SKIP: no MCP client could be installed; skilldeck serve was not tested"
fi
exit 0
