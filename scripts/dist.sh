#!/usr/bin/env bash
# The release artifacts, built and each installed into a clean environment:
#
#   skilldeck-<host triple>      the CLI, `dist` profile (release, a panic aborts), stripped, the
#                                lean build: every command but the registry
#                                server's (`registry serve|gc|import`, the
#                                `server` feature, which it refuses saying
#                                how to get them); size checked against the
#                                25 MB goal
#   skilldeck-*-abi3-*.whl       the Python package: one abi3 wheel for
#                                CPython >= 3.9, manylinux2014 (glibc 2.17) via
#                                maturin --zig (PyPI ziglang)
#   skilldeck-*.tgz              the npm package with its prebuilt addon
#                                (napi build --release; npm pack)
#
# Each is then used where no Rust toolchain is on PATH: the binary runs
# `validate` and `list` on the bundled examples; the wheel is installed into
# a fresh venv and imported; the npm tarball is installed into a fresh
# folder and loaded with require() and import().
#
#   bash scripts/dist.sh [--only binary|wheel|npm] [OUT]    (default OUT: dist/, git-ignored)
#
# Each stage prints its name and time. Needs the Rust toolchain, Python 3
# with venv, and Node/npm; maturin, ziglang and the napi CLI come from PyPI
# and npm (the same pinned versions the test scripts use). The build
# commands live in scripts/artifacts.sh, shared with the test scripts, so
# .ci/run tests what this ships: test-python.sh builds this wheel,
# test-node.sh this addon, and `.ci/run` runs `dist.sh --only binary` after
# bench/budgets built the binary. Honours CARGO_TARGET_DIR (default
# $HOME/.cache/skilldeck-target, as .ci/run sets).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
only=""
if [[ "${1:-}" == "--only" ]]; then
    case "${2:-}" in
    binary | wheel | npm) only="$2" ;;
    *)
        echo "usage: bash scripts/dist.sh [--only binary|wheel|npm] [OUT]" >&2
        exit 2
        ;;
    esac
    shift 2
fi
out="${1:-dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
# shellcheck source=scripts/artifacts.sh
source scripts/artifacts.sh
work="$(mktemp -d)"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

started=$SECONDS
current_stage=""
stage() {
    current_stage="$1"
    printf '\n--> %s (+%ds)\n' "$1" $((SECONDS - started))
}
# A command that fails without its own FAIL line still says where.
trap 'echo "FAIL: scripts/dist.sh stopped at line $LINENO (exit $?) in: ${current_stage:-setup}" >&2' ERR
wanted() { [[ -z "$only" || "$only" == "$1" ]]; }
clean_path="$(no_rust_path)"

# --- The CLI binary -----------------------------------------------------------
# The lean build (no registry server: sqlx, object store, the web UI),
# OpenTelemetry export kept: scripts/release-build.sh, the build
# bench/budgets measures (after it, this reuses its artifacts).
if wanted binary; then
    stage "the CLI: scripts/release-build.sh (lean, dist profile)"
    release="$(bash scripts/release-build.sh --quiet | tail -n 1)"
    binary_check "$release" "$out"
fi

# --- The Python wheel ---------------------------------------------------------
if wanted wheel; then
    stage "the Python wheel: maturin build --release --zig (abi3, manylinux2014)"
    wheel_tools
    wheel="$(wheel_build "$work/wheel" | tail -n 1)"
    rm -f "$out"/skilldeck-*.whl
    cp "$wheel" "$out/"
    wheel="$out/$(basename "$wheel")"
    echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"
    python3 -m venv "$work/clean"
    PATH="$clean_path" "$work/clean/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
    (cd "$work" && PATH="$clean_path" "$work/clean/bin/python" - "$repo/examples/skills" <<'PY'
import sys
import skilldeck

deck = skilldeck.Deck.discover(roots=[sys.argv[1]])
assert len(deck) > 0, "no skill discovered"
assert deck.catalog(), "empty catalog"
print("PASS: the wheel installs into a fresh venv without Rust and discovers", len(deck), "skills")
PY
    )
fi

# --- The npm package ----------------------------------------------------------
if wanted npm; then
    stage "the npm package: napi build --release, npm pack"
    pkg="$repo/crates/skilldeck-node/npm"
    (cd "$pkg" && npm install --no-audit --no-fund --no-package-lock --ignore-scripts \
        --fetch-retries 1 --fetch-timeout 30000 >"$work/npm.log" 2>&1) || {
        echo "FAIL: npm install of the package's build tools"; tail -n 5 "$work/npm.log"; exit 1
    }
    node_addon_build "$work/napi.log"
    # The build writes only the addon and native.d.ts (the one napi generates,
    # committed): a tracked file of the package changed by it would be packed.
    if ! git -C "$repo" diff --quiet -- crates/skilldeck-node/npm; then
        echo "FAIL: the napi build changed tracked files of the npm package (restore them with git checkout):"
        git -C "$repo" diff --stat -- crates/skilldeck-node/npm | sed 's/^/  /'
        exit 1
    fi
    rm -f "$out"/skilldeck-*.tgz
    (cd "$pkg" && npm pack --silent --pack-destination "$out" >/dev/null)
    tarball="$(ls "$out"/skilldeck-*.tgz)"
    echo "npm package: $tarball ($(du -h "$tarball" | cut -f1))"
    mkdir "$work/node-clean"
    (cd "$work/node-clean" && echo '{"name":"clean","version":"1.0.0","private":true}' >package.json \
        && PATH="$clean_path" npm install --silent --no-audit --no-fund "$tarball" >/dev/null \
        && PATH="$clean_path" SKILLS="$repo/examples/skills" node -e '
const { Deck } = require("skilldeck");
Deck.discover({ roots: [process.env.SKILLS] }).then((deck) => {
  if (!deck.size) throw new Error("no skill discovered");
  console.log("PASS: the npm tarball installs into a fresh folder without Rust and discovers", deck.size, "skills");
});
')
fi

stage "done"
ls -l "$out"
