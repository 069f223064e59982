#!/usr/bin/env bash
# The registry's web UI (/ui) driven by a real browser: Debian's headless
# Chromium (installed with apt-get when `chromium` is missing) through
# Playwright from PyPI (1.65.2, in a throwaway venv, pointed at
# /usr/bin/chromium: `playwright install` never runs, nothing is
# downloaded besides the wheel).
#
# Builds skilldeck, starts `skilldeck registry serve --listen 127.0.0.1:0
# --data TMP` (SQLite + a local blob folder in a temporary folder), reads
# the admin token from TMP/admin-token and runs tests/ui with pytest. The
# single sign-on test (tests/ui/test_oidc.py) starts its own registry and a
# real OpenID provider (npm oidc-provider, installed into TMP/npm).
# Screenshots of the main pages go to target/ui-screenshots/ (their paths
# are printed at the end). The server and everything temporary are removed
# on any exit.
#
#   bash scripts/test-ui.sh            # all tests
#   UI_TEST_ARGS='-k xss' bash scripts/test-ui.sh
#   UI_SCALE_SKILLS=2000 bash scripts/test-ui.sh   # a smaller scale registry
#
# The scale test (tests/ui/test_scale.py) runs against a second registry
# seeded with UI_SCALE_SKILLS (default 10000) generated skills
# (tests/ui/gen_scale.py) through `skilldeck registry import` (in-process,
# --jobs 4; the time it took is printed); 0 skips it. Page sizes and load
# times go to target/ui-screenshots/scale-pages.json.
#
# Honours CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as
# .ci/run sets) and UI_VENV (an existing venv with playwright and pytest,
# to skip the install while iterating).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

work="$(mktemp -d)"
server_pid=""
scale_pid=""
cleanup() {
    for pid in "$server_pid" "$scale_pid"; do
        if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- Chromium (Debian package) ----------------------------------------------
if ! command -v chromium >/dev/null 2>&1; then
    echo "chromium is missing: installing Debian's package"
    sudo_cmd=()
    if [[ "$(id -u)" != 0 ]]; then sudo_cmd=(sudo); fi
    "${sudo_cmd[@]}" apt-get update -q >"$work/apt.log" 2>&1
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q chromium >>"$work/apt.log" 2>&1 ||
        { echo "FAIL: apt-get install chromium failed"; tail -n 5 "$work/apt.log"; exit 1; }
fi
chromium_bin="$(command -v chromium)"
echo "browser: $("$chromium_bin" --version 2>/dev/null || echo "$chromium_bin")"

# --- Playwright + pytest (throwaway venv) -------------------------------------
if [[ -n "${UI_VENV:-}" ]]; then
    py="$UI_VENV/bin/python"
else
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install -q --disable-pip-version-check --timeout 30 --retries 2 \
        playwright==1.65.2 pytest >"$work/pip.log" 2>&1 ||
        { echo "FAIL: pip install playwright==1.65.2 pytest failed"; tail -n 5 "$work/pip.log"; exit 1; }
    py="$work/venv/bin/python"
fi

# --- A real OpenID provider for the SSO test (npm oidc-provider, pinned) ------
# Installed into the temporary folder (nothing global, nothing in the repo);
# tests/ui/test_oidc.py starts it on loopback.
command -v node >/dev/null 2>&1 || { echo "FAIL: node is missing (the SSO test runs npm oidc-provider)"; exit 1; }
npm install -q --no-audit --no-fund --prefix "$work/npm" oidc-provider@9.13.3 >"$work/npm.log" 2>&1 ||
    { echo "FAIL: npm install oidc-provider@9.13.3 failed"; tail -n 5 "$work/npm.log"; exit 1; }

# --- skilldeck -----------------------------------------------------------------
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
cargo build -q --locked -p skilldeck-cli
bin="$(cd "$CARGO_TARGET_DIR/debug" && pwd)/skilldeck"

# --- The registry, on loopback, port 0 -----------------------------------------
mkdir -p "$work/data"
"$bin" registry serve --listen 127.0.0.1:0 --data "$work/data" \
    >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
url=""
for _ in $(seq 1 600); do
    url="$(sed -n 's/^skilldeck registry listening on \(http:\/\/[^ ]*\).*/\1/p' "$work/server.out" | head -n 1)"
    [[ -n "$url" ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "FAIL: the registry exited before it listened"; cat "$work/server.err"; exit 1
    fi
    sleep 0.1
done
if [[ -z "$url" ]]; then echo "FAIL: the registry did not print its address"; cat "$work/server.err"; exit 1; fi
token_file="$work/data/admin-token"
[[ -s "$token_file" ]] || { echo "FAIL: no admin token at $token_file"; exit 1; }
echo "registry: $url (data in $work/data)"

# --- A second registry with many skills (the scale test) -------------------------
scale_skills="${UI_SCALE_SKILLS:-10000}"
scale_url=""
if [[ "$scale_skills" -gt 0 ]]; then
    python3 tests/ui/gen_scale.py "$scale_skills" "$work/scale-skills"
    seed_start=$(date +%s.%N)
    "$bin" registry import "$work/scale-skills" --data "$work/scale" --namespace scale --jobs 4 -q \
        2>"$work/import.err" || { echo "FAIL: registry import"; tail -n 20 "$work/import.err"; exit 1; }
    seed_end=$(date +%s.%N)
    echo "scale registry: $(tail -n 1 "$work/import.err") (wall $(python3 -c "print(f'{$seed_end - $seed_start:.1f}')") s)"
    "$bin" registry serve --listen 127.0.0.1:0 --data "$work/scale" \
        >"$work/scale.out" 2>"$work/scale.err" &
    scale_pid=$!
    for _ in $(seq 1 600); do
        scale_url="$(sed -n 's/^skilldeck registry listening on \(http:\/\/[^ ]*\).*/\1/p' "$work/scale.out" | head -n 1)"
        [[ -n "$scale_url" ]] && break
        if ! kill -0 "$scale_pid" 2>/dev/null; then
            echo "FAIL: the scale registry exited before it listened"; cat "$work/scale.err"; exit 1
        fi
        sleep 0.1
    done
    [[ -n "$scale_url" ]] || { echo "FAIL: the scale registry did not print its address"; exit 1; }
fi

# --- The browser tests -----------------------------------------------------------
shots="$root/target/ui-screenshots"
rm -rf "$shots"
mkdir -p "$shots"
status=0
# shellcheck disable=SC2086 # UI_TEST_ARGS is word-split on purpose
SKILLDECK_UI_URL="$url" SKILLDECK_UI_TOKEN_FILE="$token_file" SKILLDECK_UI_SHOTS="$shots" \
    SKILLDECK_UI_SCALE_URL="$scale_url" SKILLDECK_UI_SCALE_TOKEN_FILE="$work/scale/admin-token" \
    SKILLDECK_UI_SCALE_SKILLS="$scale_skills" \
    SKILLDECK_UI_CHROMIUM="$chromium_bin" SKILLDECK_UI_TMP="$work" PYTHONDONTWRITEBYTECODE=1 \
    SKILLDECK_BIN="$bin" SKILLDECK_UI_OIDC_MODULES="$work/npm/node_modules" \
    "$py" -m pytest -q -s -p no:cacheprovider tests/ui ${UI_TEST_ARGS:-} || status=$?
if [[ $status -ne 0 ]]; then
    echo "--- registry stderr (last 30 lines) ---"
    tail -n 30 "$work/server.err"
    echo "FAIL: browser tests"
    exit "$status"
fi
echo "screenshots:"
find "$shots" -name '*.png' | sort | sed 's/^/  /'
echo "PASS: browser tests"
