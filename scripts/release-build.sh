#!/usr/bin/env bash
# The release build that CI measures and ships, in one place (the `dist`
# profile: `release`, and a panic aborts; see Cargo.toml):
#
#   - the lean CLI (`skilldeck`, no registry server: `--no-default-features
#     --features otel`), what scripts/dist.sh strips and ships;
#   - examples/ops of skilldeck-host, the in-process operations bench/budgets
#     counts.
#
# One cargo invocation for both, for the host triple named explicitly (as the
# napi CLI builds the Node addon): every crate is compiled once with one
# feature set, so bench/budgets measures exactly the binary dist.sh ships and
# the second of them to run reuses the first's build. Two invocations would
# resolve features apart and rebuild much of the workspace.
#
#   bash scripts/release-build.sh [CARGO FLAGS...]    (e.g. --quiet)
#
# Prints the folder the artifacts are in (TARGET/HOST/dist) as its last
# line. Honours CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as
# .ci/run sets).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
host="$(rustc -vV | sed -n 's/^host: //p')"
cargo build --profile dist --target "$host" --locked "$@" \
    -p skilldeck-cli --no-default-features --features skilldeck-cli/otel --bin skilldeck \
    -p skilldeck-host --example ops
echo "$CARGO_TARGET_DIR/$host/dist"
