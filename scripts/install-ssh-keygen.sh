#!/usr/bin/env bash
# ssh-keygen for the signed-package interoperability tests
# (crates/skilldeck-package/tests/signing.rs, crates/skilldeck-cli/tests/signing.rs):
# installed with apt-get (Debian's openssh-client) when missing. Those tests
# fail, saying so, without it: they never skip.
set -euo pipefail
if command -v ssh-keygen >/dev/null 2>&1; then
    echo "ssh-keygen: $(command -v ssh-keygen)"
    exit 0
fi
echo "ssh-keygen is missing: installing Debian's openssh-client package"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
sudo_cmd=()
if [[ "$(id -u)" != 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -q >"$log" 2>&1
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q openssh-client >>"$log" 2>&1 ||
    { echo "FAIL: apt-get install openssh-client failed"; tail -n 5 "$log"; exit 1; }
echo "ssh-keygen: $(command -v ssh-keygen)"
