#!/usr/bin/env bash
# `skilldeck audit --format sarif` against SARIF consumers from PyPI, in a
# throwaway venv under the build folder ($CARGO_TARGET_DIR/sarif-venv,
# pinned versions): pydantic-sarif 0.1.1 (models generated from the OASIS
# SARIF 2.1.0 JSON schema, unknown properties forbidden), sarif-tools 3.0.5
# (the `sarif` CLI reads the file back and counts results by level) and
# sarif-om 1.0.4 (the reference object model's property names). The input
# is the audit's labelled set (crates/skilldeck-audit/tests/labelled), one
# finding allowed so a suppression is written too.
#
# Prints PASS or FAIL per check and exits non-zero on a failure; prints
# SKIP (exit 0) when the venv or PyPI is unavailable.
#
#   bash scripts/test-sarif.sh
#
# Honours CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as .ci/run sets).
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "building skilldeck-cli (debug; a no-op when .ci/run built it already)"
cargo build -q -p skilldeck-cli
bin="$(cd "$CARGO_TARGET_DIR/debug" && pwd)/skilldeck"

venv="$CARGO_TARGET_DIR/sarif-venv"
if [[ ! -x "$venv/bin/sarif" || ! -d "$venv/lib" ]] || ! "$venv/bin/python" -c "import pydantic_sarif, sarif_om" 2>/dev/null; then
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >"$work/pip.log" 2>&1; then
        echo "SKIP: python3 -m venv failed (install python3-venv); the SARIF test did not run"
        exit 0
    fi
    if ! "$venv/bin/pip" install -q --disable-pip-version-check --timeout 20 --retries 1 \
        pydantic-sarif==0.1.1 sarif-tools==3.0.5 sarif-om==1.0.4 >"$work/pip.log" 2>&1; then
        echo "SKIP: could not install the SARIF consumers from PyPI (offline?); the SARIF test did not run"
        tail -n 3 "$work/pip.log" | sed 's/^/  /'
        rm -rf "$venv"
        exit 0
    fi
fi

skills=crates/skilldeck-audit/tests/labelled/skills
cat >"$work/skilldeck.toml" <<'TOML'
[audit.allow.rust-toolchain]
"exec.pipe-to-shell" = "rustup's official installer, reviewed"
TOML
status=0
"$bin" audit -r "$skills" --config "$work/skilldeck.toml" --format sarif >"$work/audit.sarif" || status=$?
if [[ $status -ne 1 ]]; then
    echo "FAIL: skilldeck audit exited $status on the labelled set (expected 1: it holds malicious skills)"
    exit 1
fi
expected=$("$bin" audit -r "$skills" --config "$work/skilldeck.toml" --format json \
    | "$venv/bin/python" -c 'import json,sys; print(sum(len(s["findings"]) for s in json.load(sys.stdin)))' || true)
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" scripts/sarif_check.py \
    "$work/audit.sarif" "$expected" "$venv/bin/sarif" "$work"
