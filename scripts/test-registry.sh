#!/usr/bin/env bash
# The registry on both backends, end to end:
#
#  a. the API test suite (the registry's integration tests) on the default
#     backend: SQLite + a file store in temporary folders (skipped when
#     REGISTRY_TEST_SQLITE_SUITE=0: .ci/run sets it, its workspace test step
#     runs the same tests on SQLite);
#  b. the same suite on a real PostgreSQL 15 + a real S3 server (SeaweedFS),
#     both started on loopback by scripts/registry-backends.sh;
#
#  The suite is the registry's test binary, built as `cargo test --workspace
#  --test registry` (crates/skilldeck-registry/tests/registry/): with the
#  whole workspace's features, so the build is the one `cargo test
#  --workspace` reuses, not a second build of the registry and its
#  dependencies with `-p`'s features.
#  c. per backend, `skilldeck registry serve --listen 127.0.0.1:0` seeded
#     with a few skills, agents and assignments (scripts/registry_fault.py
#     seed, which also checks that an agent token gets 403 elsewhere), then
#     schemathesis (PyPI, pinned, throwaway venv) against
#     /api/v1/openapi.json with the admin token, failing on any 5xx;
#  d. per backend, scripts/registry_fault.py: racing publishers, and SIGKILL
#     of the server during publish under load, restart, verify every blob;
#  e. on PostgreSQL + S3, scripts/replicas.py: two replicas behind a
#     round-robin proxy; writes on one seen on the other within the
#     consistency bound (assignment, label move, yank, token revocation,
#     agent deletion) and 100 changes watched by `serve --registry` with
#     exactly one list_changed each;
#  f. on PostgreSQL + S3, `scripts/replicas.py faults`: a replica paused
#     (SIGSTOP) inside a transaction does not stall the other's writes, a
#     write whose notification is lost is seen through the generation check,
#     /readyz fails while PostgreSQL is stopped, the web UI signs in and
#     works through the round-robin proxy (last: it stops PostgreSQL).
#
# Everything started is stopped on exit (trap), temporary folders removed.
# Prints PASS/FAIL per part and a summary; exits non-zero on any failure.
# A part whose tool cannot be installed (PyPI unreachable, no PostgreSQL 15)
# prints FAIL too: the registry's backends are part of what this script
# proves.
#
#   bash scripts/test-registry.sh
#
# Honours CARGO_TARGET_DIR (default $HOME/.cache/skilldeck-target, as .ci/run
# sets). REGISTRY_TEST_EXAMPLES (default 15) is schemathesis' --max-examples;
# REGISTRY_TEST_KILLS (default 3) the number of SIGKILLs per backend.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"

readonly SCHEMATHESIS_VERSION=4.32.5
readonly PG_BIN=/usr/lib/postgresql/15/bin
examples="${REGISTRY_TEST_EXAMPLES:-15}"
kills="${REGISTRY_TEST_KILLS:-3}"

work="$(mktemp -d)"
# PostgreSQL runs as the `postgres` user: it must reach the backends'
# folder inside (mktemp makes 0700 folders).
chmod 0711 "$work"
backends="$work/backends"
server_pid=""
# shellcheck disable=SC2329 # called by the EXIT trap
cleanup() {
    local status=$?
    stop_server
    bash "$repo/scripts/registry-backends.sh" stop "$backends" || true
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/skilldeck-target}"
started=$SECONDS
failed=0
summary=()

pass() {
    summary+=("PASS: $1")
    echo "PASS: $1"
}
fail() {
    summary+=("FAIL: $1")
    echo "FAIL: $1"
    failed=1
}

# Runs the command with its output in LOG; on failure shows the log's tail.
run_logged() {
    local log="$1"
    shift
    local status=0
    "$@" >"$log" 2>&1 || status=$?
    if [[ $status -ne 0 ]]; then
        tail -n 60 "$log" | sed 's/^/  /'
    fi
    return "$status"
}

# --- the server -------------------------------------------------------------

# start_server NAME ARGS...: `skilldeck registry serve` in the background on
# 127.0.0.1:0, waiting (bounded) for the contract's ready line; sets
# server_pid, server_url, server_data, server_log.
start_server() {
    local name="$1"
    shift
    server_data="$work/$name"
    server_log="$work/$name.log"
    mkdir -p "$server_data"
    "$bin" registry serve --data "$server_data" --listen 127.0.0.1:0 \
        --admin-token-file "$server_data/admin-token" "$@" \
        >"$work/$name.out" 2>"$server_log" </dev/null &
    server_pid=$!
    local deadline=$((SECONDS + 60)) line=""
    while ((SECONDS < deadline)); do
        line="$(grep -m1 -o 'skilldeck registry listening on http://[^ ]*' "$work/$name.out" || true)"
        [[ -n "$line" ]] && break
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z "$line" ]]; then
        echo "  the registry server did not print its ready line; its stderr:"
        tail -n 30 "$server_log" | sed 's/^/  /'
        stop_server
        return 1
    fi
    server_url="${line#skilldeck registry listening on }"
    server_url="${server_url%/}"
}

stop_server() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 100); do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    server_pid=""
}

# A fresh database on the test PostgreSQL; prints its URL.
new_database() {
    local base="${SKILLDECK_REGISTRY_TEST_DATABASE_URL%/*}" db
    db="reg_$1_$(date +%s)_$RANDOM"
    "$PG_BIN/psql" "$base/postgres" -qAtc "CREATE DATABASE $db" >/dev/null
    echo "$base/$db"
}

# --- a. the API suite on SQLite + files -------------------------------------

# The registry's integration tests: one test binary, every module of it.
suite_cmd=(cargo test --workspace --locked --test registry)

t0=$SECONDS
if [[ "${REGISTRY_TEST_SQLITE_SUITE:-1}" == 0 ]]; then
    echo "API suite on SQLite + file store: skipped here (REGISTRY_TEST_SQLITE_SUITE=0; the workspace test step runs it)"
elif run_logged "$work/suite-sqlite.log" "${suite_cmd[@]}"; then
    pass "API suite on SQLite + file store ($(grep -E '^test result' "$work/suite-sqlite.log" |
        awk '{p+=$4; f+=$6} END {print p " passed, " f " failed"}'), $((SECONDS - t0)) s)"
else
    fail "API suite on SQLite + file store"
fi

# --- b. the same suite on PostgreSQL + S3 ------------------------------------

t0=$SECONDS
have_backends=0
if REGISTRY_BACKENDS_FSYNC=off bash scripts/registry-backends.sh start "$backends"; then
    have_backends=1
    pass "backends started (PostgreSQL 15 + SeaweedFS S3, $((SECONDS - t0)) s)"
else
    fail "backends did not start (see above)"
fi
if [[ $have_backends -eq 1 ]]; then
    t0=$SECONDS
    if run_logged "$work/suite-pg.log" bash -c "source '$backends/env' && exec ${suite_cmd[*]}"; then
        pass "API suite on PostgreSQL + S3 ($(grep -E '^test result' "$work/suite-pg.log" |
            awk '{p+=$4; f+=$6} END {print p " passed, " f " failed"}'), $((SECONDS - t0)) s)"
    else
        fail "API suite on PostgreSQL + S3"
    fi
fi

# --- c + d. the server per backend: schemathesis and fault tests ------------

cargo build -q -p skilldeck-cli --locked
bin="$(cd "$CARGO_TARGET_DIR/debug" && pwd)/skilldeck"

# --- e. two replicas behind a round-robin proxy (PostgreSQL + S3) -----------

if [[ $have_backends -eq 1 ]]; then
    t0=$SECONDS
    if run_logged "$work/replicas.log" bash -c "source '$backends/env' && exec timeout 300 \
        python3 scripts/replicas.py consistency --bin '$bin' --work '$work/replicas' \
        --database-url \"\$1\" --store \"\$SKILLDECK_REGISTRY_TEST_STORE/replicas-$RANDOM\"" \
        _ "$(source "$backends/env" && new_database replicas)"; then
        pass "two replicas: writes seen across replicas within the bound, no answer backwards ($(tail -n1 "$work/replicas.log" | sed 's/^PASS: replicas consistency (\(.*\))$/\1/'))"
        grep -E '^  ' "$work/replicas.log" || true
    else
        fail "two replicas: consistency ($((SECONDS - t0)) s)"
    fi
fi

have_st=0
if python3 -m venv "$work/st" >"$work/st-pip.log" 2>&1 &&
    "$work/st/bin/pip" install -q --disable-pip-version-check --timeout 30 --retries 2 \
        "schemathesis==$SCHEMATHESIS_VERSION" >>"$work/st-pip.log" 2>&1; then
    have_st=1
else
    tail -n 5 "$work/st-pip.log" | sed 's/^/  /'
    fail "could not install schemathesis==$SCHEMATHESIS_VERSION from PyPI"
fi
# The admin token reaches schemathesis through the environment and its
# config file, never its command line. One worker: with two threads,
# Hypothesis' ast.parse hit CPython 3.11's "AST constructor recursion depth
# mismatch" (a race in the ast module, fixed in later CPython releases).
cat >"$work/schemathesis.toml" <<'EOF'
headers = { Authorization = "Bearer ${SKILLDECK_ST_TOKEN}" }
EOF
# Publish bodies: schemathesis cannot make a tar.gz from a schema, so the
# hooks give it real packages (valid skills, a zip), hostile ones (`..`
# entry, absolute path, symlink, truncated gzip, a gzip bomb's start) and
# random bytes, for every media type publish may be documented with.
cat >"$work/st_hooks.py" <<'EOF'
import gzip, io, os, random, sys, tarfile, zipfile
sys.path.insert(0, os.environ["REGISTRY_SCRIPTS"])
import registry_fault as rf
import schemathesis
from hypothesis import strategies as st

rng = random.Random(5)

def tar(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data, kind in entries:
            info = tarfile.TarInfo(name)
            if kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, data.decode()
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    return buf.getvalue()

def zipped(name, files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path, data in files.items():
            z.writestr(f"{name}/{path}", data)
    return buf.getvalue()

samples = []
for i in range(3):
    name = f"st-skill-{i}"
    samples.append(rf.pack(name, rf.skill_files(name, rng)))
files = rf.skill_files("st-zip", rng)
samples.append(zipped("st-zip", files))
good = rf.skill_files("st-evil", rng)["SKILL.md"]
samples += [
    tar([("st-evil/SKILL.md", good, "file"), ("st-evil/../../evil.txt", b"x", "file")]),
    tar([("st-evil/SKILL.md", good, "file"), ("/etc/evil.txt", b"x", "file")]),
    tar([("st-evil/SKILL.md", good, "file"), ("st-evil/link", b"/etc/passwd", "link")]),
    rf.pack("st-trunc", files)[:100],
    gzip.compress(bytes(4 << 20))[:4096],
    b"",
]
bodies = st.one_of(st.sampled_from(samples), st.binary(max_size=4096))
for media in ("application/gzip", "application/zip", "application/octet-stream"):
    schemathesis.openapi.media_type(media, bodies)
EOF

backend_part() {
    local label="$1" name="$2"
    shift 2
    # The server and its tools see the backend's settings (AWS_* for S3).
    local t0=$SECONDS
    if ! start_server "$name" "$@"; then
        fail "$label: registry server did not start"
        return 0
    fi
    if run_logged "$work/$name-seed.log" python3 scripts/registry_fault.py seed --url "$server_url" \
        --token-file "$server_data/admin-token"; then
        pass "$label: seed + agent-token scopes ($(tail -n1 "$work/$name-seed.log"))"
    else
        fail "$label: seed"
    fi
    if [[ $have_st -eq 1 ]]; then
        local st_status=0
        (cd "$work" && SKILLDECK_ST_TOKEN="$(cat "$server_data/admin-token")" \
            SCHEMATHESIS_HOOKS=st_hooks PYTHONPATH="$work" REGISTRY_SCRIPTS="$repo/scripts" PYTHONDONTWRITEBYTECODE=1 \
            timeout 900 "$work/st/bin/schemathesis" --config-file "$work/schemathesis.toml" run \
            "$server_url/api/v1/openapi.json" --checks not_a_server_error \
            --max-examples "$examples" --workers 1 --request-timeout 20 \
            --suppress-health-check all --no-color) >"$work/$name-st.log" 2>&1 || st_status=$?
        if [[ $st_status -eq 0 ]]; then
            pass "$label: schemathesis, no server error ($(grep -Eo '[0-9]+ (generated|test cases)[^)]*' "$work/$name-st.log" | tail -n1), $((SECONDS - t0)) s)"
        else
            sed 's/^/  /' "$work/$name-st.log" | tail -n 80
            fail "$label: schemathesis (exit $st_status)"
        fi
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
        fail "$label: the server died during the run; its stderr:"
        tail -n 30 "$server_log" | sed 's/^/  /'
    fi
    stop_server
}

# The fault tests start and kill their own server.
fault_part() {
    local label="$1"
    shift
    local t0=$SECONDS
    if run_logged "$work/fault-$label.log" python3 scripts/registry_fault.py run --bin "$bin" \
        --kills "$kills" "$@"; then
        pass "$label: fault tests $(tail -n1 "$work/fault-$label.log" | sed 's/^PASS: registry_fault //')"
    else
        fail "$label: fault tests ($((SECONDS - t0)) s)"
    fi
}

backend_part "SQLite + files" sqlite
fault_part sqlite --data "$work/fault-sqlite"
if [[ $have_backends -eq 1 ]]; then
    # shellcheck disable=SC1091 # written by registry-backends.sh at run time
    source "$backends/env"
    backend_part "PostgreSQL + S3" pg --database-url "$(new_database st)" \
        --store "$SKILLDECK_REGISTRY_TEST_STORE/st-$RANDOM"
    fault_part postgres-s3 --database-url "$(new_database fault)" \
        --store "$SKILLDECK_REGISTRY_TEST_STORE/fault-$RANDOM" --data "$work/fault-pg"
fi

# --- f. faults across two replicas (PostgreSQL + S3; last: it stops and
# starts PostgreSQL) ------------------------------------------------------------

if [[ $have_backends -eq 1 ]]; then
    t0=$SECONDS
    if run_logged "$work/replica-faults.log" bash -c "source '$backends/env' && exec timeout 300 \
        python3 scripts/replicas.py faults --bin '$bin' --work '$work/replica-faults' \
        --backends '$backends' --pg-bin '$PG_BIN' \
        --database-url \"\$1\" --store \"\$SKILLDECK_REGISTRY_TEST_STORE/faults-$RANDOM\"" \
        _ "$(source "$backends/env" && new_database faults)"; then
        pass "two replicas: a paused replica, a lost notification, PostgreSQL stopped, the web UI through the proxy ($(tail -n1 "$work/replica-faults.log" | sed 's/^PASS: replicas faults (\(.*\))$/\1/'))"
        grep -E '^  ' "$work/replica-faults.log" || true
    else
        fail "two replicas: faults ($((SECONDS - t0)) s)"
    fi
fi

echo
echo "test-registry summary ($((SECONDS - started)) s):"
printf '  %s\n' "${summary[@]}"
exit "$failed"
