#!/usr/bin/env bash
# bubblewrap for the sandbox's `bwrap` profile tests
# (crates/skilldeck-exec/tests/exec/escape.rs), from Debian's package when `bwrap`
# is missing. Without it those tests only check the refusal, so .ci/run
# installs it and sets SKILLDECK_TEST_REQUIRE_BWRAP=1, which makes them fail
# instead of taking the refusal path.
set -euo pipefail
exec "$(dirname "$0")/apt-ensure.sh" bwrap bubblewrap --version
