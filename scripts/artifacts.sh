# The release artifacts' build commands and checks, in one place. Sourced
# (not run) by scripts/dist.sh, which ships the artifacts, and by the test
# scripts, which test exactly what ships:
#
#   scripts/test-python.sh   builds the wheel with wheel_build and runs pytest
#                            and mypy against it (scripts/test-otel.sh reuses
#                            the same build: cargo has nothing left to do);
#   scripts/test-node.sh     builds the addon with node_addon_build and packs it;
#   .ci/run                  checks the binary bench/budgets built with
#                            `scripts/dist.sh --only binary`.
#
# So CI builds every artifact the way a release does and installs each into
# a clean environment (issue 30, item 6), and a change to how an artifact is
# built is made here once.
#
# The caller sets `set -euo pipefail`, CARGO_TARGET_DIR and the working
# directory (the repository root).

# The size goal of the stripped CLI binary (issue 30), in bytes.
BINARY_SIZE_GOAL=$((25 * 1000 * 1000))
# The Python build tools (PyPI), pinned.
MATURIN_VERSION=1.16.0
ZIGLANG_VERSION=0.17.0

# A PATH with no cargo, rustc or rustup on it: what a user without Rust has.
no_rust_path() {
    local keep=() dir dirs
    IFS=: read -r -a dirs <<<"$PATH"
    for dir in "${dirs[@]}"; do
        [[ -x "$dir/cargo" || -x "$dir/rustc" || -x "$dir/rustup" ]] && continue
        keep+=("$dir")
    done
    (IFS=:; echo "${keep[*]}")
}

# The wheel build's tools and cargo output live at fixed paths under
# CARGO_TARGET_DIR, reused from build to build. Both must stay put: maturin
# --zig links through a wrapper script named after the paths of maturin and
# zig, and cargo rebuilds every crate when the linker's path changes, so a
# throwaway venv would rebuild the whole dependency tree on every run; and a
# target folder of its own keeps the zig-linked crates apart from the napi
# build's (same target triple and profile, another linker), which would
# otherwise overwrite each other.
wheel_tools_dir() { echo "$CARGO_TARGET_DIR/wheel-tools"; }
wheel_target_dir() { echo "$CARGO_TARGET_DIR/wheel"; }

# wheel_tools: makes sure maturin and ziglang (PyPI, pinned) are installed in
# the venv at wheel_tools_dir (made once; remade when the pins change). One
# caller at a time installs (flock). Fails (non-zero) when PyPI cannot be
# reached; the caller decides between SKIP and FAIL.
wheel_tools() {
    local dir pins
    dir="$(wheel_tools_dir)"
    pins="maturin==$MATURIN_VERSION ziglang==$ZIGLANG_VERSION"
    mkdir -p "$(dirname "$dir")"
    (
        flock 9
        if [[ -x "$dir/bin/maturin" && "$(cat "$dir/.pins" 2>/dev/null)" == "$pins" ]]; then
            exit 0
        fi
        # Chained with &&: callers test this function in an `if`, where
        # `set -e` does not apply, and the pins are written only after a
        # complete install.
        rm -rf "$dir" \
            && python3 -m venv "$dir" \
            && "$dir/bin/pip" install --quiet --disable-pip-version-check --timeout 20 --retries 1 \
                "maturin==$MATURIN_VERSION" "ziglang==$ZIGLANG_VERSION" \
            && echo "$pins" >"$dir/.pins"
    ) 9>"$dir.lock"
}

# wheel_build OUT: the release wheel of crates/skilldeck-py into OUT, built by
# the maturin of wheel_tools: `--release`, one abi3 wheel for CPython >= 3.9,
# manylinux2014 (glibc 2.17) through zig, so it installs on old Linux
# distributions too. Quiet; the build's output goes to OUT/build.log, shown
# on failure. Prints the wheel's path as its last line.
wheel_build() {
    local out="$1" tools wheel
    tools="$(wheel_tools_dir)"
    mkdir -p "$out"
    rm -f "$out"/skilldeck-*.whl
    if ! PATH="$tools/bin:$PATH" CARGO_TARGET_DIR="$(wheel_target_dir)" "$tools/bin/maturin" build \
        --release --zig --compatibility manylinux2014 --manifest-path crates/skilldeck-py/Cargo.toml \
        --interpreter "$tools/bin/python" --out "$out" >"$out/build.log" 2>&1; then
        echo "FAIL: maturin build --release --zig (the Python wheel); its output:" >&2
        tail -n 40 "$out/build.log" | sed 's/^/  /' >&2
        return 1
    fi
    wheel="$(ls "$out"/skilldeck-*.whl)"
    case "$wheel" in
    *-cp39-abi3-manylinux*2_17*) ;;
    *)
        echo "FAIL: the wheel is not abi3 manylinux2014: $(basename "$wheel")" >&2
        return 1
        ;;
    esac
    echo "$wheel"
}

# node_addon_build LOG: the Node addon (napi CLI from the package's dev
# dependencies, `npm install` done), release, into crates/skilldeck-node/npm
# (skilldeck.<platform>.node) with its generated declarations in native.d.ts
# (committed; the hand-written index.d.ts is never touched). The build's
# output goes to LOG, shown on failure.
node_addon_build() {
    local log="$1"
    if ! (cd crates/skilldeck-node/npm && ./node_modules/.bin/napi build --platform --release \
        --manifest-path ../Cargo.toml --target-dir "$CARGO_TARGET_DIR" --output-dir . \
        --dts native.d.ts --no-js) >"$log" 2>&1; then
        echo "FAIL: napi build --release (the Node addon); its output:" >&2
        tail -n 40 "$log" | sed 's/^/  /' >&2
        return 1
    fi
}

# binary_check RELEASE_DIR OUT: strips RELEASE_DIR/skilldeck (the lean CLI
# scripts/release-build.sh builds) into OUT/skilldeck-<host triple>, checks
# it against the size goal, runs it with no Rust on PATH on the bundled
# examples, and checks that the lean build refuses the registry server
# saying how to get it. Prints PASS lines; returns non-zero on a failure.
binary_check() {
    local release="$1" out="$2" host bin size unstripped status=0 scratch
    host="$(rustc -vV | sed -n 's/^host: //p')"
    bin="$out/skilldeck-$host"
    mkdir -p "$out"
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
        return 1
    fi
    scratch="$(mktemp -d)"
    local clean_path
    clean_path="$(no_rust_path)"
    if ! PATH="$clean_path" "$bin" validate -r examples/skills >"$scratch/validate.txt" 2>&1 \
        || ! PATH="$clean_path" "$bin" list --root examples/skills >"$scratch/list.txt" 2>&1; then
        echo "FAIL: the stripped binary does not validate or list the bundled examples:"
        cat "$scratch"/*.txt | sed 's/^/  /'
        rm -rf "$scratch"
        return 1
    fi
    echo "PASS: the stripped binary runs without Rust on PATH ($(wc -l <"$scratch/list.txt") lines from list)"
    PATH="$clean_path" "$bin" registry serve --data "$scratch/no-registry" >"$scratch/serve.out" 2>&1 || status=$?
    if [[ $status -eq 0 ]] || ! grep -q -- "--features server" "$scratch/serve.out" || [[ -e "$scratch/no-registry" ]]; then
        echo "FAIL: the lean binary should refuse \`registry serve\`, saying how to get it (exit $status):"
        sed 's/^/  /' "$scratch/serve.out"
        rm -rf "$scratch"
        return 1
    fi
    rm -rf "$scratch"
    echo "PASS: the lean binary refuses \`registry serve\` and says which build has it"
}
