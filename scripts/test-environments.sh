#!/usr/bin/env bash
# Skill environments (issue 31 items 3-4), with a real uv and real wheels:
# crates/skilldeck-cli/tests/cli/environments.rs.
#
# - installs uv from PyPI at a pinned version (scripts/install-uv.sh);
# - downloads the wheels of a small pure-Python package and its one
#   dependency (python-dateutil 2.9.0.post0, six 1.17.0) into a local wheel
#   folder, so the tests install offline from it (their uv cache starts
#   empty);
# - adds a small pure-JavaScript package and its one dependency (is-odd
#   3.0.1, is-number 6.0.0) from the npm registry to an npm cache folder of
#   its own, so the Node tests install offline from it (`npm ci --offline`);
# - runs the `environments` module of skilldeck-cli's test binary
#   (`cargo test --workspace --test cli -- environments::`: the workspace's
#   features, so the binary is the one `cargo test --workspace` reuses) with
#   SKILLDECK_TEST_UV, SKILLDECK_TEST_WHEELS and SKILLDECK_TEST_REQUIRE_UV=1
#   (and SKILLDECK_TEST_NPM_CACHE, SKILLDECK_TEST_REQUIRE_NPM=1) so a
#   missing uv, wheel folder or npm cache fails the tests instead of
#   skipping them; a filter that matched no test fails too.
#
# When PyPI (or the npm registry, or npm itself) is unreachable, that half
# is skipped with a SKIP line; when both are, it prints SKIP and does not
# fail, as scripts/test-langchain-tools.sh does.
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
vars=()
if ! uv="$(bash scripts/install-uv.sh 2>"$work/uv.log" | tail -n 1)" || [[ ! -x "$uv" ]]; then
    echo "SKIP: could not install uv from PyPI (offline?); the Python environment tests did not run"
    sed 's/^/  /' "$work/uv.log"
    uv=""
fi
python=/usr/bin/python3
[[ -x "$python" ]] || python="$(command -v python3)"
if [[ -n "$uv" ]] && ! "$python" -m pip download -q --disable-pip-version-check --timeout 20 --retries 1 \
    --no-deps --only-binary=:all: -d "$work/wheels" \
    python-dateutil==2.9.0.post0 six==1.17.0 >"$work/pip.log" 2>&1; then
    echo "SKIP: could not download the test wheels from PyPI (offline, or no pip for $python); the Python environment tests did not run"
    tail -n 3 "$work/pip.log" | sed 's/^/  /'
    uv=""
fi
if [[ -n "$uv" ]]; then
    vars+=(SKILLDECK_TEST_UV="$uv" SKILLDECK_TEST_WHEELS="$work/wheels" SKILLDECK_TEST_REQUIRE_UV=1)
fi
# The npm cache: filled from the npm registry with npm's own user and global
# config set aside (empty files), so nothing of this machine's npm config
# changes where the packages come from.
npm_ok=""
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "SKIP: no npm or node on PATH (apt-get install nodejs npm); the Node environment tests did not run"
else
    : >"$work/user.npmrc"
    : >"$work/global.npmrc"
    if env -u npm_config_registry -u NPM_CONFIG_REGISTRY npm cache add is-odd@3.0.1 is-number@6.0.0 \
        --cache "$work/npm-cache" --userconfig "$work/user.npmrc" --globalconfig "$work/global.npmrc" \
        --registry https://registry.npmjs.org/ --update-notifier=false --fetch-timeout=20000 \
        --fetch-retries=1 >"$work/npm.log" 2>&1; then
        npm_ok=1
        vars+=(SKILLDECK_TEST_NPM_CACHE="$work/npm-cache" SKILLDECK_TEST_REQUIRE_NPM=1)
    else
        echo "SKIP: could not add the test packages from the npm registry (offline?); the Node environment tests did not run"
        tail -n 3 "$work/npm.log" | sed 's/^/  /'
    fi
fi
if [[ -z "$uv" && -z "$npm_ok" ]]; then
    echo "SKIP: neither PyPI nor the npm registry was reachable; the environment tests did not run"
    exit 0
fi

t0=$SECONDS
status=0
env "${vars[@]}" \
    cargo test --quiet --locked --workspace --test cli -- environments:: >"$work/test.log" 2>&1 || status=$?
if [[ $status -eq 0 ]] && grep -qE '^test result: ok\. 0 passed' "$work/test.log"; then
    echo "FAIL: cargo test --workspace --test cli -- environments:: ran no test (was the module renamed?)"
    exit 1
elif [[ $status -eq 0 ]]; then
    what=()
    [[ -n "$uv" ]] && what+=("uv $("$uv" --version | cut -d' ' -f2) from a local wheel folder")
    [[ -n "$npm_ok" ]] && what+=("npm $(npm --version) from a local npm cache")
    echo "PASS: skill environments with $(IFS=';'; echo "${what[*]}" | sed 's/;/ and /') ($((SECONDS - t0)) s; $(grep -E '^test result' "$work/test.log" | tail -n 1))"
else
    echo "FAIL: cargo test --workspace --test cli -- environments:: (exit $status)"
    sed 's/^/  /' "$work/test.log"
    exit 1
fi
