#!/usr/bin/env bash
# ssh-keygen for the signed-package interoperability tests
# (crates/skilldeck-package/tests/package/signing.rs,
# crates/skilldeck-cli/tests/cli/signing.rs), from Debian's openssh-client
# when missing. Those tests fail, saying so, without it: they never skip.
set -euo pipefail
exec "$(dirname "$0")/apt-ensure.sh" ssh-keygen openssh-client
