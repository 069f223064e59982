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
#   bash scripts/dist.sh [OUT]      (default OUT: dist/, git-ignored)
#
# Each stage prints its name and time. Needs the Rust toolchain, Python 3
# with venv, and Node/npm; maturin, ziglang and the napi CLI come from PyPI
# and npm (the same pinned versions the test scripts use). Honours
# CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as .ci/run sets),
# so the release build is the one bench/budgets measures.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
out="${1:-dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The size goal of the stripped CLI binary (issue 30), in bytes.
BINARY_SIZE_GOAL=$((25 * 1000 * 1000))
MATURIN_VERSION=1.16.0
ZIGLANG_VERSION=0.17.0

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
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
# A PATH with no cargo, rustc or rustup on it: what a user without Rust has.
no_rust_path() {
    local keep=() dir
    IFS=: read -r -a dirs <<<"$PATH"
    for dir in "${dirs[@]}"; do
        [[ -x "$dir/cargo" || -x "$dir/rustc" || -x "$dir/rustup" ]] && continue
        keep+=("$dir")
    done
    (IFS=:; echo "${keep[*]}")
}
clean_path="$(no_rust_path)"

# --- The CLI binary -----------------------------------------------------------
# The lean build (no registry server: sqlx, object store, the web UI),
# OpenTelemetry export kept: scripts/release-build.sh, the build
# bench/budgets measures (after it, this reuses its artifacts).
host="$(rustc -vV | sed -n 's/^host: //p')"
stage "the CLI: scripts/release-build.sh (lean, dist profile, $host)"
release="$(bash scripts/release-build.sh --quiet | tail -n 1)"
bin="$out/skilldeck-$host"
cp "$release/skilldeck" "$bin.tmp"
strip --strip-all "$bin.tmp"
mv "$bin.tmp" "$bin"
size=$(stat -c %s "$bin")
unstripped=$(stat -c %s "$release/skilldeck")
printf 'binary: %s, %.1f MB stripped (%.1f MB before strip; goal %.0f MB)\n' \
    "$bin" "$(echo "$size / 1000000" | bc -l)" "$(echo "$unstripped / 1000000" | bc -l)" \
    "$(echo "$BINARY_SIZE_GOAL / 1000000" | bc -l)"
if ((size > BINARY_SIZE_GOAL)); then
    echo "FAIL: the stripped binary is over the size goal; see docs/benchmarks.md (binary size) for what it holds"
    exit 1
fi
PATH="$clean_path" "$bin" validate -r examples/skills >/dev/null
PATH="$clean_path" "$bin" list --root examples/skills >"$work/list.txt"
echo "PASS: the stripped binary runs without Rust on PATH ($(wc -l <"$work/list.txt") lines from list)"
status=0
PATH="$clean_path" "$bin" registry serve --data "$work/no-registry" >"$work/serve.out" 2>&1 || status=$?
if [[ $status -eq 0 ]] || ! grep -q -- "--features server" "$work/serve.out" || [[ -e "$work/no-registry" ]]; then
    echo "FAIL: the lean binary should refuse \`registry serve\`, saying how to get it (exit $status):"
    sed 's/^/  /' "$work/serve.out"
    exit 1
fi
echo "PASS: the lean binary refuses \`registry serve\` and says which build has it"

# --- The Python wheel ---------------------------------------------------------
stage "the Python wheel: maturin build --release --zig (abi3, manylinux2014)"
python3 -m venv "$work/build"
"$work/build/bin/pip" install --quiet --disable-pip-version-check \
    "maturin==$MATURIN_VERSION" "ziglang==$ZIGLANG_VERSION"
rm -f "$out"/skilldeck-*.whl
PATH="$work/build/bin:$PATH" "$work/build/bin/maturin" build --quiet --release --zig \
    --compatibility manylinux2014 --manifest-path crates/skilldeck-py/Cargo.toml \
    --interpreter python3 --out "$out"
wheel="$(ls "$out"/skilldeck-*.whl)"
case "$wheel" in
*-abi3-manylinux*2_17*) ;;
*) echo "FAIL: the wheel is not abi3 manylinux2014: $(basename "$wheel")"; exit 1 ;;
esac
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"
python3 -m venv "$work/clean"
PATH="$clean_path" "$work/clean/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
(cd "$work" && PATH="$clean_path" "$work/clean/bin/python" - "$repo/examples/skills" <<'EOF'
import sys
import skilldeck

deck = skilldeck.Deck.discover(roots=[sys.argv[1]])
assert len(deck) > 0, "no skill discovered"
assert deck.catalog(), "empty catalog"
print("PASS: the wheel installs into a fresh venv without Rust and discovers", len(deck), "skills")
EOF
)

# --- The npm package ----------------------------------------------------------
stage "the npm package: napi build --release, npm pack"
pkg="$repo/crates/skilldeck-node/npm"
(cd "$pkg" && npm install --no-audit --no-fund --no-package-lock --ignore-scripts \
    --fetch-retries 1 --fetch-timeout 30000 >"$work/npm.log" 2>&1) || {
    echo "FAIL: npm install of the package's build tools"; tail -n 5 "$work/npm.log"; exit 1
}
(cd "$pkg" && ./node_modules/.bin/napi build --platform --release --manifest-path ../Cargo.toml \
    --target-dir "$CARGO_TARGET_DIR" --output-dir . --dts native.d.ts --no-js >"$work/napi.log" 2>&1) || {
    echo "FAIL: napi build"; tail -n 20 "$work/napi.log"; exit 1
}
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

stage "done"
ls -l "$out"
