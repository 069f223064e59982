#!/usr/bin/env bash
# OCI artifacts against a real registry: Debian's `docker-registry` (the
# CNCF distribution server; installed with apt-get when missing) started on
# a free loopback port by scripts/oci-registry.sh over a temporary storage
# folder, then the `oci` and `one_fingerprint` modules of
# crates/skilldeck-cli/tests/cli/ (one skill through every channel, OCI
# included) run against it with
# SKILLDECK_TEST_REQUIRE_OCI=1 (a test that cannot reach the registry
# fails, it does not skip):
# `cargo test --workspace --test cli -- oci:: one_fingerprint::` (the workspace's features, so
# the binary is the one `cargo test --workspace` reuses; a filter that
# matched no test fails). The registry is stopped and its folder removed
# on exit, whatever happened.
#
#   bash scripts/test-oci.sh
#
# Honours CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as .ci/run
# sets).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
started=$SECONDS

work="$(mktemp -d)"
# shellcheck disable=SC2329 # called by the EXIT trap
cleanup() {
    local status=$?
    bash "$repo/scripts/oci-registry.sh" stop "$work" || true
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

addr="$(bash scripts/oci-registry.sh start "$work")"
echo "docker-registry $(dpkg-query -W -f='${Version}' docker-registry 2>/dev/null || echo '?') on $addr"
SKILLDECK_TEST_OCI_REGISTRY="$addr" \
    SKILLDECK_TEST_OCI_STORAGE="$work/storage" \
    SKILLDECK_TEST_REQUIRE_OCI=1 \
    cargo test --workspace --locked --test cli -- oci:: one_fingerprint:: 2>&1 | tee "$work/test.log"
if grep -qE '^test result: ok\. 0 passed' "$work/test.log"; then
    echo "FAIL: cargo test --workspace --test cli -- oci:: one_fingerprint:: ran no test (were the modules renamed?)"
    exit 1
fi
echo "PASS: OCI artifacts against docker-registry ($((SECONDS - started)) s)"
