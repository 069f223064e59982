#!/usr/bin/env bash
# Skill environments (issue 31 items 3-4), with a real uv and real wheels:
# crates/skilldeck-cli/tests/environments.rs.
#
# - installs uv from PyPI at a pinned version (scripts/install-uv.sh);
# - downloads the wheels of a small pure-Python package and its one
#   dependency (python-dateutil 2.9.0.post0, six 1.17.0) into a local wheel
#   folder, so the tests install offline from it (their uv cache starts
#   empty);
# - runs `cargo test -p skilldeck-cli --test environments` with
#   SKILLDECK_TEST_UV, SKILLDECK_TEST_WHEELS and SKILLDECK_TEST_REQUIRE_UV=1
#   so a missing uv or wheel folder fails the tests instead of skipping
#   them.
#
# When PyPI is unreachable it prints SKIP and does not fail, as
# scripts/test-langchain-tools.sh does.
#
#   bash scripts/test-environments.sh
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

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
if ! uv="$(bash scripts/install-uv.sh 2>"$work/uv.log" | tail -n 1)" || [[ ! -x "$uv" ]]; then
    echo "SKIP: could not install uv from PyPI (offline?); the environment tests did not run"
    sed 's/^/  /' "$work/uv.log"
    exit 0
fi
python=/usr/bin/python3
[[ -x "$python" ]] || python="$(command -v python3)"
if ! "$python" -m pip download -q --disable-pip-version-check --timeout 20 --retries 1 \
    --no-deps --only-binary=:all: -d "$work/wheels" \
    python-dateutil==2.9.0.post0 six==1.17.0 >"$work/pip.log" 2>&1; then
    echo "SKIP: could not download the test wheels from PyPI (offline, or no pip for $python); the environment tests did not run"
    tail -n 3 "$work/pip.log" | sed 's/^/  /'
    exit 0
fi

t0=$SECONDS
status=0
SKILLDECK_TEST_UV="$uv" \
SKILLDECK_TEST_WHEELS="$work/wheels" \
SKILLDECK_TEST_REQUIRE_UV=1 \
    cargo test --quiet --locked -p skilldeck-cli --test environments >"$work/test.log" 2>&1 || status=$?
if [[ $status -eq 0 ]]; then
    echo "PASS: skill environments with uv $("$uv" --version | cut -d' ' -f2) from a local wheel folder ($((SECONDS - t0)) s; $(grep -E '^test result' "$work/test.log" | tail -n 1))"
else
    echo "FAIL: cargo test -p skilldeck-cli --test environments (exit $status)"
    sed 's/^/  /' "$work/test.log"
    exit 1
fi
