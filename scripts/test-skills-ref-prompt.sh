#!/usr/bin/env bash
# Byte-for-byte comparison of skilldeck's `skills-ref` catalog format with
# `agentskills to-prompt DIR...` from PyPI skills-ref 0.1.1.
#
# Creates a throwaway venv and fixture skills in a temporary folder (removed
# on exit), runs both on the same folders in the same (unsorted) order and
# compares stdout. Prints PASS or FAIL (with a diff) and exits non-zero on a
# mismatch; prints SKIP and exits 0 when skills-ref cannot be installed
# (PyPI unreachable, or no venv support).
#
#   bash scripts/test-skills-ref-prompt.sh
#
# Honours CARGO_TARGET_DIR. Our side is `skilldeck prompt --format skills-ref
# --root DIR`, which lists skills by name; skills-ref gets the same folders in
# that order.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

skip() {
    echo "SKIP: $1"
    if [[ -s "$work/pip.log" ]]; then tail -n 3 "$work/pip.log" | sed 's/^/  /'; fi
    exit 0
}

if ! python3 -m venv "$work/venv" >"$work/pip.log" 2>&1; then
    skip "python3 -m venv failed (install python3-venv); skills-ref not compared"
fi
if ! "$work/venv/bin/pip" install -q --disable-pip-version-check --timeout 20 --retries 1 \
    skills-ref==0.1.1 >"$work/pip.log" 2>&1; then
    skip "could not install skills-ref==0.1.1 from PyPI (offline?); skills-ref not compared"
fi

# Fixture skills.
skills="$work/skills"
mkdir -p "$skills"
new_skill() { # folder, SKILL.md file name, frontmatter lines
    mkdir -p "$skills/$1"
    printf -- '---\n%s\n---\n# %s\n\nBody.\n' "$3" "$1" >"$skills/$1/$2"
}
new_skill pdf-tools SKILL.md 'name: pdf-tools
description: Extract text and tables from PDF files. Use when the user gives a PDF.'
new_skill escape-test SKILL.md 'name: escape-test
description: "Handles \"quotes\" & <tags> & '"'"'apostrophes'"'"' with a > b — naïve café 日本語 😀. Use when testing escaping."
license: MIT'
new_skill folded SKILL.md 'name: folded
description: >
  A folded description
  over two lines, with trailing space.   
metadata:
  author: someone'
new_skill padded SKILL.md "name: padded
description: '   Surrounding spaces are stripped.   '"
new_skill lower-case skill.md 'name: lower-case
description: Its SKILL.md is spelled skill.md. Use when testing file names.'
mkdir -p "$work/elsewhere"
new_skill real-target SKILL.md 'name: real-target
description: Reached through a symlink; the location is the resolved path.'
mv "$skills/real-target" "$work/elsewhere/real-target"
ln -s "$work/elsewhere/real-target" "$skills/real-target"

# skilldeck lists a root's skills by name; give skills-ref the same order.
# One argument names a SKILL.md rather than its folder.
args=(
    "$skills/escape-test"
    "$skills/folded/SKILL.md"
    "$skills/lower-case"
    "$skills/padded"
    "$skills/pdf-tools"
    "$skills/real-target"
)

cargo build -q -p skilldeck-cli
bin="$(cd "${CARGO_TARGET_DIR:-target}/debug" && pwd)/skilldeck"
# Run from an empty folder with its own HOME: no config, no user skills.
mkdir -p "$work/cwd/home"
skilldeck() {
    (cd "$work/cwd" && HOME="$work/cwd/home" XDG_CONFIG_HOME="$work/cwd/home/.config" "$bin" "$@")
}

export PYTHONUTF8=1
"$work/venv/bin/agentskills" to-prompt "${args[@]}" >"$work/expected"
skilldeck prompt --format skills-ref --root "$skills" >"$work/actual"

# One skill alone too.
mkdir -p "$work/one"
cp -r "$skills/escape-test" "$work/one/"
"$work/venv/bin/agentskills" to-prompt "$work/one/escape-test" >>"$work/expected"
skilldeck prompt --format skills-ref --root "$work/one" >>"$work/actual"

if cmp -s "$work/expected" "$work/actual"; then
    echo "PASS: skills-ref format is byte-identical to skills-ref 0.1.1 to-prompt ($(wc -c <"$work/expected") bytes, ${#args[@]} skills)"
else
    echo "FAIL: skills-ref format differs from skills-ref 0.1.1 to-prompt"
    diff -u --label skills-ref "$work/expected" --label skilldeck "$work/actual" || true
    exit 1
fi
