#!/usr/bin/env bash
# bubblewrap for the sandbox's `bwrap` profile tests
# (crates/skilldeck-exec/tests/escape.rs): installed with apt-get (Debian's
# package) when `bwrap` is missing. Without it those tests only check the
# refusal, so .ci/run installs it and sets SKILLDECK_TEST_REQUIRE_BWRAP=1,
# which makes them fail instead of taking the refusal path.
set -euo pipefail
if command -v bwrap >/dev/null 2>&1; then
    echo "bwrap: $(bwrap --version)"
    exit 0
fi
echo "bwrap is missing: installing Debian's bubblewrap package"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
sudo_cmd=()
if [[ "$(id -u)" != 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -q >"$log" 2>&1
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q bubblewrap >>"$log" 2>&1 ||
    { echo "FAIL: apt-get install bubblewrap failed"; tail -n 5 "$log"; exit 1; }
echo "bwrap: $(bwrap --version)"
