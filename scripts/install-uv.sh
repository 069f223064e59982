#!/usr/bin/env bash
# uv (the Python package installer skilldeck builds skill environments with),
# from PyPI at a pinned version, into a virtual environment under the build
# cache: prints the path of the `uv` binary on its last line.
#
#   uv="$(bash scripts/install-uv.sh | tail -n 1)"
#
# Idempotent: a second run finds the binary and prints it. Exit 1 (with the
# reason) when Python's venv or PyPI is not there.
set -euo pipefail
UV_VERSION="${SKILLDECK_UV_VERSION:-0.13.9}"
base="${SKILLDECK_TOOLS_DIR:-$HOME/.cache/skilldeck-tools}"
dir="$base/uv-$UV_VERSION"
uv="$dir/bin/uv"
if [[ -x "$uv" ]] && "$uv" --version 2>/dev/null | grep -q " $UV_VERSION"; then
    echo "$uv"
    exit 0
fi
mkdir -p "$base"
tmp="$(mktemp -d "$base/.uv-install-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
python=/usr/bin/python3
[[ -x "$python" ]] || python="$(command -v python3)"
if ! "$python" -m venv "$tmp/venv" >"$tmp/log" 2>&1; then
    echo "install-uv: '$python -m venv' failed (install python3-venv):" >&2
    tail -n 3 "$tmp/log" >&2
    exit 1
fi
if ! "$tmp/venv/bin/pip" install -q --disable-pip-version-check --timeout 30 --retries 2 \
    "uv==$UV_VERSION" >"$tmp/log" 2>&1; then
    echo "install-uv: could not install uv==$UV_VERSION from PyPI:" >&2
    tail -n 3 "$tmp/log" >&2
    exit 1
fi
# The venv's own scripts name its folder: build it in place, then move the
# one self-contained binary.
mkdir -p "$tmp/out/bin"
cp "$tmp/venv/bin/uv" "$tmp/out/bin/uv"
rm -rf "$dir"
mv "$tmp/out" "$dir"
"$uv" --version >&2
echo "$uv"
