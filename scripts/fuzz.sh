#!/usr/bin/env bash
# Builds every cargo-fuzz target in fuzz/ (nightly, AddressSanitizer) and
# runs each for a bounded time (libFuzzer -max_total_time), one after the
# other:
#
#   skill_md     the SKILL.md parser and validator (text, folder, discovery)
#   unpack       the package unpacker on tar.gz / zip bytes (no panic, no
#                write outside the staging folder)
#   mcp_message  the MCP JSON-RPC handling (one stdio line; an HTTP body
#                outside and inside a session)
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]    (default: 60 s, every target)
#   bash scripts/fuzz.sh --build-only             (build every target, run none:
#                                                  .ci/run builds them in the background)
#
# Each run starts from the committed seeds (fuzz/seeds/TARGET) plus what
# earlier runs on this machine found (fuzz/corpus/TARGET, not committed),
# with the target's dictionary (fuzz/dicts). Progress is printed every
# PROGRESS_EVERY seconds. A crash, a timeout (an input taking more than
# FUZZ_INPUT_TIMEOUT s) or an out-of-memory stops the script with exit 1,
# the end of libFuzzer's report and the reproducer's path; replay it with
#
#   cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/crash-...
#
# Needs the nightly toolchain (rustup) and cargo-fuzz (installed from
# crates.io at the version below when missing). The build goes to
# $CARGO_TARGET_DIR-fuzz (default $HOME/.cache/skilldeck-target-fuzz), apart
# from the main build. Longer runs: docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.2
PROGRESS_EVERY=15
FUZZ_INPUT_TIMEOUT="${FUZZ_INPUT_TIMEOUT:-30}"
ALL_TARGETS=(skill_md unpack mcp_message)
# The longest input each target tries (libFuzzer's -max_len), with inputs
# free to grow to it from the start (-len_control=0). Left to itself,
# libFuzzer caps inputs at the longest seed (or 4 KiB) and raises the cap
# only when coverage stalls: a 50-minute run of skill_md (2026-11-28) never
# went past 699 bytes, so the limits the code enforces were never reached.
# skill_md: past the frontmatter limit and discovery's read of it (64 KiB
# plus two 4 KiB chunks); unpack: archives of many entries and long names;
# mcp_message: long and deeply nested JSON (the request limit itself, 4 MiB,
# is for the HTTP tests).
declare -A MAX_LEN=([skill_md]=$((80 * 1024)) [unpack]=$((256 * 1024)) [mcp_message]=$((64 * 1024)))

build_only=0
if [[ "${1:-}" == "--build-only" ]]; then
    build_only=1
    shift
fi
seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: bash scripts/fuzz.sh [SECONDS] [TARGET...]   (SECONDS: a whole number > 0, got '$seconds')" >&2
    exit 2
fi
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    targets=("${ALL_TARGETS[@]}")
fi
for t in "${targets[@]}"; do
    if [[ ! -f "fuzz/fuzz_targets/$t.rs" ]]; then
        echo "fuzz.sh: no target '$t' (targets: ${ALL_TARGETS[*]})" >&2
        exit 2
    fi
done

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "FAIL: the nightly toolchain is missing (cargo-fuzz needs it): rustup toolchain install nightly" >&2
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz $CARGO_FUZZ_VERSION from crates.io (once; about a minute)"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

base_target="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
fuzz_target_dir="$base_target-fuzz"
triple="$(rustc +nightly -vV | sed -n 's/^host: //p')"

# The build: `release` (optimised, debug assertions, ASan; the default) or
# `dev` (SKILLDECK_FUZZ_BUILD=dev: unoptimised, its own build folder tree,
# quicker to compile after a change but 15-30x fewer inputs per second:
# 3-6/s on skill_md and mcp_message, less than the corpus in a 15 s run).
fuzz_build="${SKILLDECK_FUZZ_BUILD:-release}"
case "$fuzz_build" in
dev) build_args=(--dev); profile_dir=debug; replay_flag="--dev " ;;
release) build_args=(); profile_dir=release; replay_flag="" ;;
*)
    echo "fuzz.sh: SKILLDECK_FUZZ_BUILD must be dev or release, got '$fuzz_build'" >&2
    exit 2
    ;;
esac
build_started=$SECONDS
echo "==> building the fuzz targets (nightly, $fuzz_build build, debug assertions, ASan) into $fuzz_target_dir"
echo "    (from cold this takes several minutes: see docs/fuzzing.md; cargo's progress follows)"
if [[ ${#targets[@]} -eq 1 ]]; then
    build_args+=("${targets[0]}")
fi
cargo +nightly fuzz build --target-dir "$fuzz_target_dir" "${build_args[@]}"
echo "==> built in $((SECONDS - build_started)) s"
# The fuzz workspace reaches the skilldeck crates by `../crates`, outside its
# own root, so cargo hashes their absolute paths: each clone compiled them and
# the targets anew beside the last clone's copies (about 0.9 GB a run, kept
# forever). Remove what this build superseded and what was built from
# checkouts that no longer exist (scripts/prune-build-cache.py).
python3 scripts/prune-build-cache.py --one-build "$fuzz_target_dir" ||
    echo "    (could not prune $fuzz_target_dir; going on)" >&2
if [[ $build_only -eq 1 ]]; then
    exit 0
fi

work="$(mktemp -d)"
fuzzer_pid=""
cleanup() {
    if [[ -n "$fuzzer_pid" ]] && kill -0 "$fuzzer_pid" 2>/dev/null; then
        kill "$fuzzer_pid" 2>/dev/null || true
        wait "$fuzzer_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The last libFuzzer status line ("#1234 REDUCE cov: ... exec/s: ...").
status_line() {
    grep -E '^#[0-9]+' "$1" 2>/dev/null | tail -n 1 | sed -E 's/ +/ /g' || true
}

failed=0
for t in "${targets[@]}"; do
    bin="$fuzz_target_dir/$triple/$profile_dir/$t"
    corpus="fuzz/corpus/$t"
    artifacts="fuzz/artifacts/$t"
    log="$work/$t.log"
    mkdir -p "$corpus" "$artifacts"
    dict=()
    if [[ -f "fuzz/dicts/$t.dict" ]]; then
        dict=("-dict=fuzz/dicts/$t.dict")
    fi
    echo "==> fuzzing $t for ${seconds} s (seeds: fuzz/seeds/$t, corpus: $corpus)"
    started=$SECONDS
    "$bin" "$corpus" "fuzz/seeds/$t" "${dict[@]}" \
        -max_len="${MAX_LEN[$t]}" -len_control=0 \
        -max_total_time="$seconds" -timeout="$FUZZ_INPUT_TIMEOUT" -rss_limit_mb=2048 \
        -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1 &
    fuzzer_pid=$!
    while kill -0 "$fuzzer_pid" 2>/dev/null; do
        # Wakes as soon as the fuzzer exits, else after PROGRESS_EVERY s.
        timeout "$PROGRESS_EVERY" tail --pid="$fuzzer_pid" -f /dev/null 2>/dev/null || true
        if kill -0 "$fuzzer_pid" 2>/dev/null; then
            echo "    $t: $((SECONDS - started))/${seconds} s  $(status_line "$log")"
        fi
    done
    status=0
    wait "$fuzzer_pid" || status=$?
    fuzzer_pid=""
    if [[ $status -eq 0 ]]; then
        runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
        echo "PASS: $t: ${runs:-?} inputs in $((SECONDS - started)) s, no crash  $(status_line "$log")"
    else
        failed=1
        echo "FAIL: $t: libFuzzer exited with $status after $((SECONDS - started)) s; the end of its report:"
        grep -vE '^#[0-9]+' "$log" | tail -n 60 | sed 's/^/    /'
        reproducer="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
        if [[ -n "$reproducer" ]]; then
            echo "    reproducer: $reproducer"
            echo "    replay:     cargo +nightly fuzz run $replay_flag$t $reproducer"
        fi
    fi
done
exit "$failed"
