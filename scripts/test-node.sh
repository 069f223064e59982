#!/usr/bin/env bash
# The Node.js package (crates/skilldeck-node) as a user installs it:
#
# - installs the package's dev dependencies (npm: @napi-rs/cli 3.10.12,
#   ai 7.0.173, @langchain/core 1.4.0, @openai/agents-core 0.20.0,
#   @mastra/core 1.71.0, zod, typescript, @types/node) into
#   crates/skilldeck-node/npm/node_modules (git-ignored, never committed);
# - builds the addon as scripts/dist.sh ships it (scripts/artifacts.sh: the
#   napi CLI, release, into the package folder: skilldeck.linux-x64-gnu.node) and regenerates its TypeScript
#   declarations (native.d.ts), which must equal the committed ones;
# - runs `node --test` over npm/test/*.test.mjs (seed 003's $ARGUMENTS
#   cases, the error classes, conversations, overlapping async calls, seed
#   002's deep-research as written with a JavaScript handler, seed 002's
#   API, an AI SDK tool loop with the `ai` mock model, LangChain.js tools,
#   an OpenAI Agents SDK run with the SDK's ScriptedModel, a Mastra agent
#   loop with the `ai` mock model);
# - runs `tsc --strict` over npm/examples/*.ts against the package's
#   declarations (tsconfig.json; the Mastra example with tsconfig.mastra.json,
#   which skips checking Mastra's own declarations: they do not type-check);
# - `npm pack`s the package, installs the tarball into a fresh folder with
#   cargo off PATH and loads it with require() and import().
#
# Prints PASS or FAIL per part and exits non-zero on any failure; when the
# npm registry is unreachable it prints SKIP and does not fail the run.
#
#   bash scripts/test-node.sh
#
# Honours CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as .ci/run
# sets). NODE_TEST_ARGS passes arguments to node --test.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
pkg="$repo/crates/skilldeck-node/npm"

work="$(mktemp -d)"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
# shellcheck source=scripts/artifacts.sh
source scripts/artifacts.sh

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "SKIP: node / npm not found; the Node package tests did not run"
    exit 0
fi
if ! (cd "$pkg" && npm install --no-audit --no-fund --no-package-lock --ignore-scripts \
        --fetch-retries 1 --fetch-timeout 30000 >"$work/npm.log" 2>&1); then
    echo "SKIP: could not install the package's dev dependencies from npm (offline?); the Node package tests did not run"
    tail -n 3 "$work/npm.log" | sed 's/^/  /'
    exit 0
fi

failed=0
t0=$SECONDS
cp "$pkg/native.d.ts" "$work/native.d.ts.committed"
node_addon_build "$work/build.log"
echo "PASS: napi build ($(cd "$pkg" && ls skilldeck.*.node), $((SECONDS - t0)) s)"
if diff -u "$work/native.d.ts.committed" "$pkg/native.d.ts" >"$work/dts.diff"; then
    echo "PASS: native.d.ts is the one napi generates"
else
    echo "FAIL: native.d.ts differs from what napi generates (commit the regenerated file)"
    sed 's/^/  /' "$work/dts.diff"
    failed=1
fi

export SKILLDECK_FIXTURES="$repo/crates/skilldeck-testkit/fixtures"
status=0
# shellcheck disable=SC2086 # NODE_TEST_ARGS is word-split on purpose
(cd "$pkg" && node --test ${NODE_TEST_ARGS:-} test/*.test.mjs) >"$work/test.log" 2>&1 || status=$?
if [[ $status -eq 0 ]]; then
    echo "PASS: node --test ($(grep -E '^# (tests|pass|fail) ' "$work/test.log" | tr '\n' ' '))"
else
    echo "FAIL: node --test (exit $status)"
    sed 's/^/  /' "$work/test.log"
    failed=1
fi

if (cd "$pkg" && ./node_modules/.bin/tsc -p tsconfig.json && ./node_modules/.bin/tsc -p tsconfig.mastra.json) >"$work/tsc.log" 2>&1; then
    echo "PASS: tsc --strict (examples/agent.ts, openai-agents.ts, mastra.ts)"
else
    echo "FAIL: tsc --strict"
    sed 's/^/  /' "$work/tsc.log"
    failed=1
fi

# The tarball installs and works without Rust: cargo is not on PATH.
if (cd "$pkg" && npm pack --pack-destination "$work" >"$work/pack.log" 2>&1); then
    tarball="$(ls "$work"/skilldeck-*.tgz)"
    mkdir -p "$work/app"
    nocargo_path="$(no_rust_path)"
    if (cd "$work/app" && echo '{"name":"app","private":true}' >package.json \
            && PATH="$nocargo_path" npm install --no-audit --no-fund --offline "$tarball" >"$work/install.log" 2>&1 \
            && ! PATH="$nocargo_path" command -v cargo >/dev/null \
            && tar -tzf "$tarball" >"$work/contents" && grep -qx 'package/skilldeck.linux-x64-gnu.node' "$work/contents" \
            && PATH="$nocargo_path" node -e "
                const s = require('skilldeck');
                if (typeof s.Deck.discover !== 'function' || !(new s.SkillNotFoundError('x') instanceof s.SkilldeckError)) process.exit(1);
                s.Deck.discover({ roots: [] }).then((d) => console.log('require: ' + d.size + ' skills'));" >>"$work/install.log" 2>&1 \
            && PATH="$nocargo_path" node --input-type=module -e "
                import { Deck, validate } from 'skilldeck';
                const d = await Deck.discover({ roots: [] });
                console.log('import: ' + d.size + ' skills', (await validate('.')).length >= 0);" >>"$work/install.log" 2>&1); then
        echo "PASS: npm pack + install without Rust ($(basename "$tarball"), $(du -h "$tarball" | cut -f1))"
    else
        echo "FAIL: the packed tarball does not install or load"
        sed 's/^/  /' "$work/install.log"
        failed=1
    fi
else
    echo "FAIL: npm pack"
    sed 's/^/  /' "$work/pack.log"
    failed=1
fi

exit $failed
