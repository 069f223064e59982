#!/usr/bin/env bash
# The Python package (crates/skilldeck-py) as a user installs it:
#
# - builds the release wheel as scripts/dist.sh ships it (scripts/artifacts.sh:
#   maturin --release --zig, abi3, manylinux2014; PyPI maturin and ziglang
#   in a venv kept under CARGO_TARGET_DIR, see there why);
# - installs the wheel with no Rust on PATH, then pytest + mypy + langchain-core 1.7.2 + langgraph
#   1.2.22 in a second, clean venv (so nothing of the checkout is importable but the wheel);
# - runs crates/skilldeck-py/tests/test_*.py with pytest (the API, the error
#   hierarchy, the $ARGUMENTS cases, async twins and GIL release, the
#   LangChain tools, an agent loop with a fake chat model, and a LangGraph
#   StateGraph + ToolNode agent);
# - runs `mypy --strict` on tests/typing_usage.py against the installed
#   package's stubs (py.typed).
#
# Everything lives in a temporary folder removed on exit. Prints PASS or
# FAIL per part and exits non-zero on any failure; when PyPI is unreachable
# (or venv is missing) it prints SKIP and does not fail the run.
#
#   bash scripts/test-python.sh
#
# Honours CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as
# .ci/run sets). PYTEST_ARGS passes arguments to pytest (e.g. `-k async`).
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
# shellcheck source=scripts/artifacts.sh
source scripts/artifacts.sh
pip_install() {
    "$1/bin/pip" install -q --disable-pip-version-check --timeout 20 --retries 1 "${@:2}"
}

if ! python3 -m venv "$work/venv" >"$work/venv.log" 2>&1; then
    echo "SKIP: python3 -m venv failed (install python3-venv); the Python package tests did not run"
    exit 0
fi
if ! wheel_tools >"$work/pip.log" 2>&1 \
    || ! pip_install "$work/venv" pytest mypy langchain-core==1.7.2 langgraph==1.2.22 >>"$work/pip.log" 2>&1; then
    echo "SKIP: could not install maturin / ziglang / pytest / mypy / langchain-core / langgraph from PyPI (offline?); the Python package tests did not run"
    tail -n 3 "$work/pip.log" | sed 's/^/  /'
    exit 0
fi

failed=0
t0=$SECONDS
wheel="$(wheel_build "$work/wheels" | tail -n 1)"
PATH="$(no_rust_path)" pip_install "$work/venv" --no-index "$wheel"
echo "PASS: maturin build --release --zig ($(basename "$wheel"), $(du -h "$wheel" | cut -f1), $((SECONDS - t0)) s), installed without Rust on PATH"

# From a folder outside the checkout, so only the installed wheel imports.
# test_registry.py starts the real registry (`skilldeck registry serve`).
cargo build --quiet -p skilldeck-cli --locked
export SKILLDECK_BIN="$CARGO_TARGET_DIR/debug/skilldeck"
# The shared fixtures (the seeds' skills, verbatim) the Rust tests use too.
export SKILLDECK_FIXTURES="$PWD/crates/skilldeck-testkit/fixtures"

mkdir -p "$work/run"
cp crates/skilldeck-py/tests/*.py "$work/run/"
status=0
# shellcheck disable=SC2086 # PYTEST_ARGS is word-split on purpose
(cd "$work/run" && PYTHONDONTWRITEBYTECODE=1 "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
    --basetemp "$work/pytest" ${PYTEST_ARGS:-} test_*.py) >"$work/pytest.log" 2>&1 || status=$?
if [[ $status -eq 0 ]]; then
    echo "PASS: pytest ($(tail -n 1 "$work/pytest.log"))"
else
    echo "FAIL: pytest (exit $status)"
    sed 's/^/  /' "$work/pytest.log"
    failed=1
fi

status=0
(cd "$work/run" && "$work/venv/bin/python" -m mypy --strict --no-incremental --cache-dir /dev/null \
    typing_usage.py) >"$work/mypy.log" 2>&1 || status=$?
if [[ $status -eq 0 ]]; then
    echo "PASS: mypy --strict on typing_usage.py"
else
    echo "FAIL: mypy --strict (exit $status)"
    sed 's/^/  /' "$work/mypy.log"
    failed=1
fi
exit $failed
