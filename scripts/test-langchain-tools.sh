#!/usr/bin/env bash
# LangChain tool packages (seed 004's `skill_type: langchain_tool`), run in
# the sandbox: crates/skilldeck-cli/tests/cli/seed004.rs with a real
# langchain-core.
#
# - makes a virtual environment from the system Python (/usr/bin/python3,
#   which the sandbox can read) with langchain-core 1.7.2 from PyPI, in a
#   folder the sandbox user can traverse;
# - runs the `seed004` module of skilldeck-cli's test binary (`cargo test
#   --workspace --test cli -- seed004::`: the workspace's features, so the
#   binary is the one `cargo test --workspace` reuses; a filter that matched
#   no test fails) with
#   SKILLDECK_TEST_LANGCHAIN_PYTHON pointing at it and
#   SKILLDECK_TEST_REQUIRE_LANGCHAIN=1 (and SKILLDECK_TEST_REQUIRE_BWRAP=1),
#   so a missing sandbox or LangChain fails the tests instead of skipping.
#
# When PyPI is unreachable (or venv is missing) it prints SKIP and does not
# fail, as scripts/test-python.sh does. Needs bubblewrap
# (scripts/install-bwrap.sh).
#
#   bash scripts/test-langchain-tools.sh
#
# Honours CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as
# .ci/run sets).
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The sandbox user (not root) must reach the interpreter.
chmod 755 "$work"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
python=/usr/bin/python3
[[ -x "$python" ]] || python="$(command -v python3 || true)"
if [[ -z "$python" ]] || ! "$python" -m venv "$work/venv" >"$work/venv.log" 2>&1; then
    echo "SKIP: no python3 -m venv (install python3-venv); the LangChain tool package tests did not run"
    exit 0
fi
if ! "$work/venv/bin/pip" install -q --disable-pip-version-check --timeout 20 --retries 1 \
    langchain-core==1.7.2 >"$work/pip.log" 2>&1; then
    echo "SKIP: could not install langchain-core from PyPI (offline?); the LangChain tool package tests did not run"
    tail -n 3 "$work/pip.log" | sed 's/^/  /'
    exit 0
fi

t0=$SECONDS
status=0
SKILLDECK_TEST_LANGCHAIN_PYTHON="$work/venv/bin/python3" \
SKILLDECK_TEST_REQUIRE_LANGCHAIN=1 \
SKILLDECK_TEST_REQUIRE_BWRAP=1 \
    cargo test --quiet --locked --workspace --test cli -- seed004:: >"$work/test.log" 2>&1 || status=$?
if [[ $status -eq 0 ]] && grep -qE '^test result: ok\. 0 passed' "$work/test.log"; then
    echo "FAIL: cargo test --workspace --test cli -- seed004:: ran no test (was the module renamed?)"
    exit 1
elif [[ $status -eq 0 ]]; then
    echo "PASS: seed 004 skills and LangChain tool packages in the sandbox ($((SECONDS - t0)) s; $(grep -E '^test result' "$work/test.log" | tail -n 1))"
else
    echo "FAIL: cargo test --workspace --test cli -- seed004:: (exit $status)"
    sed 's/^/  /' "$work/test.log"
    exit 1
fi
