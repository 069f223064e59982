#!/usr/bin/env bash
# Usage: scripts/apt-ensure.sh COMMAND PACKAGE [VERSION-FLAG]
# Makes sure COMMAND is on the PATH, installing Debian's PACKAGE with apt-get
# (through sudo when not root) when it is missing. Prints what is there; on
# failure, the tail of apt-get's log. The one way the project's scripts
# install a system tool (install-bwrap.sh, install-ssh-keygen.sh).
set -euo pipefail
cmd="$1" package="$2" version_flag="${3:-}"
show() {
    if [[ -n "$version_flag" ]]; then
        echo "$cmd: $("$cmd" "$version_flag" 2>&1 | head -n 1)"
    else
        echo "$cmd: $(command -v "$cmd")"
    fi
}
if command -v "$cmd" >/dev/null 2>&1; then
    show
    exit 0
fi
echo "$cmd is missing: installing Debian's $package package"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
sudo_cmd=()
if [[ "$(id -u)" != 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -q >"$log" 2>&1
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q "$package" >>"$log" 2>&1 ||
    { echo "FAIL: apt-get install $package failed"; tail -n 5 "$log"; exit 1; }
show
