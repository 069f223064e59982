#!/usr/bin/env python3
"""N registry replicas on one database and store, behind a round-robin proxy.

A reusable module (imported by the fault checks and bench/registry_load.py)
and a consistency check:

    python3 scripts/replicas.py consistency --bin target/debug/skilldeck \\
        --database-url postgres://... --store s3://bucket/prefix [--changes 100]

Module:

- `Replicas(binary, work, database_url, store, n=2)`: `start()` starts the
  first replica (it creates the shared admin token file), then the others
  with the same `--admin-token-file`; `urls`, `token`, `stop()`. Each
  replica is a `registry_fault.Server` (its own data folder and log).
- `Proxy(backends)`: an HTTP/1.1 proxy on 127.0.0.1:0 sending each request
  (not each connection: clients keep connections alive) to the next
  backend in turn; `url`, `served` (requests per backend), `close()`.
- `McpSession(argv, env)`: a stdio MCP client of `skilldeck serve`
  counting `notifications/tools/list_changed`.

The consistency check (exits 1 naming the failed check), on two replicas:

1. For assignments, label moves, yanks, agent deletion and token
   revocation: with replica B's caches warm, the write is made on replica
   A; B is then read until it reflects the write. Every read of B that
   starts more than the stated bound (`--bound`, the registry's
   consistency bound, 0.5 s) after the write returned must reflect it; the
   largest time seen is reported. And a read of B that sends the write's
   `x-skilldeck-generation` reflects it at once (read-your-writes across
   replicas).
2. `skilldeck serve --registry PROXY --agent A` polling every 0.1 s while
   `--changes` changes of the agent's set are made through the proxy
   (writes and polls round-robin over both replicas; skills assigned one
   by one, then unassigned one by one, so every state is new): after each
   change exactly one more `tools/list_changed` arrives and the lock serve
   saved is the expected one (an older answer would be one more change and
   a step back), and a final marker change arrives as the next one.

The fault check (`faults`, exits 1 naming the failed check), on two
replicas started with short database bounds (`FAULT_FLAGS`):

1. A replica paused mid-write (SIGSTOP while it holds a transaction open,
   seen in `pg_stat_activity`): the other replica's writes are answered
   while it stays paused (503 `registry-busy` with `Retry-After`, or done)
   and one succeeds once PostgreSQL ends the paused transaction (the
   idle-in-transaction timeout); after SIGCONT the paused replica writes
   again. No duration is asserted: every wait is for the answer, with a
   deadline only against a hang (a write that waited for the pause to end
   never answers while the replica stays paused).
2. A lost notification: a token both replicas hold in their caches is
   revoked by SQL committed straight into the database (the generation
   bumped and the `tokens` scope recorded as a write does, no NOTIFY):
   both replicas refuse it within SEEN_TIMEOUT (10 s), far under the token
   cache's 30 s TTL, so only the periodic generation check can pass it.
3. PostgreSQL stopped: `/readyz` answers 503 naming the database on both
   replicas while `/healthz` stays 200; PostgreSQL started again: `/readyz`
   is 200 again.
4. The web UI through the round-robin proxy: sign in with the admin token
   (the sign-in form cookie from one replica, the POST on the other), then
   pages and a CSRF-protected form (create an agent) through the proxy,
   each request on the next replica, and sign out ends the session on
   both.

Python 3 standard library only.
"""

import argparse
import html
import http.client
import http.server
import itertools
import json
import os
import queue
import random
import re
import shlex
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import registry_fault as rf  # noqa: E402

API = rf.API
GENERATION = "x-skilldeck-generation"
# The registry's consistency bound (CONSISTENCY_BOUND in
# crates/skilldeck-registry/src/service/config.rs).
DEFAULT_BOUND = 0.5
# How long a check waits for a replica to reflect a write before failing
# (far above the bound: a failure is a missing invalidation, not a slow one).
SEEN_TIMEOUT = 10.0
NOTIFY_TIMEOUT = 20.0


# --- Replicas -----------------------------------------------------------------


class Replicas:
    """N `skilldeck registry serve` processes on one database and store."""

    def __init__(self, binary, work, database_url, store, n=2, extra=()):
        self.work = work
        self.token_file = os.path.join(work, "admin-token")
        self.servers = []
        for i in range(n):
            data = os.path.join(work, f"replica-{i}")
            s = rf.Server(binary, data, database_url=database_url, store=store,
                          log=os.path.join(work, f"replica-{i}.log"), extra=extra)
            s.token_file = self.token_file
            self.servers.append(s)

    def start(self):
        """Starts the first replica (it writes the admin token file), then
        the others; returns self."""
        for s in self.servers:
            s.start()
        return self

    @property
    def urls(self):
        return [s.url for s in self.servers]

    @property
    def token(self):
        with open(self.token_file, encoding="utf-8") as f:
            return f.read().strip()

    def stop(self):
        for s in self.servers:
            try:
                s.stop()
            except rf.Failure:
                pass


# --- Proxy --------------------------------------------------------------------

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding",
              "te", "trailer", "upgrade"}


class Proxy:
    """A round-robin HTTP/1.1 proxy on loopback, per request."""

    def __init__(self, backends, timeout=60.0):
        self.backends = [urllib.parse.urlsplit(b) for b in backends]
        self.served = [0] * len(backends)
        turn = itertools.count()
        lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def forward(self):
                with lock:
                    i = next(turn) % len(proxy.backends)
                    proxy.served[i] += 1
                b = proxy.backends[i]
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in HOP_BY_HOP and k.lower() != "host"}
                conn = http.client.HTTPConnection(b.hostname, b.port, timeout=timeout)
                try:
                    conn.request(self.command, self.path, body=body, headers=headers)
                    r = conn.getresponse()
                    data = r.read()
                    self.send_response(r.status, r.reason)
                    for k, v in r.getheaders():
                        if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                            self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD" and r.status not in (204, 304):
                        self.wfile.write(data)
                except OSError as e:
                    msg = f"proxy: backend {i} failed: {e}".encode()
                    self.send_response(502)
                    self.send_header("Content-Length", str(len(msg)))
                    self.end_headers()
                    self.wfile.write(msg)
                finally:
                    conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = forward

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --- MCP over stdio -------------------------------------------------------------


class McpSession:
    """`skilldeck serve` on stdio, initialized; counts tools/list_changed."""

    def __init__(self, argv, env, log):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(log, "ab"), env=env)
        self.changed = 0
        self.cond = threading.Condition()
        self.replies = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "replicas.py", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def _read(self):
        for raw in self.proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if msg.get("method") == "notifications/tools/list_changed":
                with self.cond:
                    self.changed += 1
                    self.cond.notify_all()
            elif "id" in msg and "method" not in msg:
                self.replies.put(msg)
        with self.cond:
            self.cond.notify_all()

    def call(self, method, params, timeout=NOTIFY_TIMEOUT):
        self._send({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        try:
            reply = self.replies.get(timeout=timeout)
        except queue.Empty:
            raise rf.Failure(f"serve --registry did not answer {method}")
        if "error" in reply:
            raise rf.Failure(f"serve --registry: {method}: {reply['error']}")
        return reply["result"]

    def wait_changed(self, at_least, timeout=NOTIFY_TIMEOUT):
        """Waits for the count to reach `at_least`; returns the count."""
        with self.cond:
            self.cond.wait_for(lambda: self.changed >= at_least or self.proc.poll() is not None,
                               timeout)
            return self.changed

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


# --- Checks ---------------------------------------------------------------------


def lock_of(url, token, agent, generation=None):
    headers = {GENERATION: str(generation)} if generation else None
    return rf.http("GET", f"{url}{API}/agents/{agent}/lock", token, headers=headers)


def versions_in(answer):
    if answer.status != 200:
        return None
    return {f"{s['namespace']}/{s['name']}": s["version"] for s in answer.json()["skills"]}


def seen_within(what, bound, read, reflected, t0):
    """Reads until `reflected(answer)`; every read started more than
    `bound` after `t0` (when the write returned) must reflect. Returns the
    seconds it took."""
    while True:
        started = time.monotonic() - t0
        answer = read()
        if reflected(answer):
            return started
        if started > bound:
            raise rf.Failure(f"{what}: the other replica still answered the old state "
                             f"{started:.3f} s after the write (bound {bound} s): "
                             f"{answer.status} {answer.body[:200]!r}")
        if started > SEEN_TIMEOUT:
            raise rf.Failure(f"{what}: never seen on the other replica")


def publish_skill(url, token, name, versions, rng):
    for v in versions:
        rf.expect(rf.publish(url, token, rf.pack(name, rf.skill_files(name, rng)), version=v),
                  (201,), f"publish {name}@{v}")


def agent_with_token(url, admin, agent):
    rf.expect(rf.http("POST", f"{url}{API}/agents", admin,
                      {"id": agent, "name": agent, "capabilities": [], "auto_discover": False}),
              (201,), f"create agent {agent}")
    created = rf.expect(rf.http("POST", f"{url}{API}/agents/{agent}/tokens", admin,
                                {"name": "replicas"}), (201,), "agent token").json()
    return created["token"], created["id"]


def check_propagation(a, b, admin, bound, rng, log):
    """Write on replica a, read on replica b (warm), per operation."""
    results = {}
    publish_skill(a, admin, "rep-skill", ["1.0.0", "1.1.0"], rng)
    rf.expect(rf.http("PUT", f"{a}{API}/skills/default/rep-skill/labels/production", admin,
                      {"version": "1.0.0"}), (200,), "label production")
    agent_tok, agent_tok_id = agent_with_token(a, admin, "rep-agent")
    key = "default/rep-skill"

    def write_gen(answer):
        g = answer.header(GENERATION)
        if not g:
            raise rf.Failure(f"a write's answer has no {GENERATION} header")
        return int(g)

    def timed(what, write, read, reflected):
        # Warm b: its caches hold the state before the write.
        read()
        read()
        answer = write()
        written = time.monotonic()
        gen = write_gen(answer)
        # Bounded staleness, without the header.
        results[what] = seen_within(what, bound, read, reflected, written)
        # And b given the write's generation answers at least that.
        ryw = read(gen)
        if not reflected(ryw):
            raise rf.Failure(f"{what}: replica B given {GENERATION}: {gen} answered the "
                             f"old state: {ryw.status} {ryw.body[:200]!r}")
        if int(ryw.header(GENERATION) or 0) < gen and ryw.status == 200:
            raise rf.Failure(f"{what}: replica B given {GENERATION}: {gen} answered "
                             f"generation {ryw.header(GENERATION)}")

    # Assignment (label production -> 1.0.0).
    def assign():
        return rf.expect(rf.http("PUT", f"{a}{API}/agents/rep-agent/skills/default/rep-skill",
                                 admin, {"label": "production", "enabled": True}), (200,), "assign")
    read_lock = lambda gen=None: lock_of(b, agent_tok, "rep-agent", gen)  # noqa: E731
    timed("assignment", assign, read_lock,
          lambda r: (versions_in(r) or {}).get(key) == "1.0.0")
    # Label move: production -> 1.1.0.
    timed("label move",
          lambda: rf.expect(rf.http("PUT", f"{a}{API}/skills/default/rep-skill/labels/production",
                                    admin, {"version": "1.1.0"}), (200,), "label move"),
          read_lock, lambda r: (versions_in(r) or {}).get(key) == "1.1.0")
    # Yank 1.1.0: the lock drops it and its download is refused.
    archive = f"{b}{API}/skills/default/rep-skill/versions/1.1.0/archive"
    read_archive = lambda gen=None: rf.http(  # noqa: E731
        "GET", archive, agent_tok, headers={GENERATION: str(gen)} if gen else None)
    rf.expect(read_archive(), (200,), "download before the yank")
    timed("yank",
          lambda: rf.expect(rf.http("POST", f"{a}{API}/skills/default/rep-skill/versions/1.1.0/yank",
                                    admin, {"reason": "replicas check"}), (200,), "yank"),
          read_archive, lambda r: r.status == 404)
    if key in (versions_in(read_lock()) or {}):
        raise rf.Failure("yank: the lock on replica B still lists the yanked version")
    # Token revocation (a second token of the agent).
    other = rf.expect(rf.http("POST", f"{a}{API}/agents/rep-agent/tokens", admin,
                              {"name": "to-revoke"}), (201,), "second token").json()
    read_other = lambda gen=None: lock_of(b, other["token"], "rep-agent", gen)  # noqa: E731
    timed("token revocation",
          lambda: rf.expect(rf.http("DELETE", f"{a}{API}/tokens/{other['id']}", admin),
                            (200,), "revoke"),
          read_other, lambda r: r.status == 401)
    # Agent deletion: its token stops working, and does not read a new agent
    # created with the same id.
    timed("agent deletion",
          lambda: rf.expect(rf.http("DELETE", f"{a}{API}/agents/rep-agent", admin),
                            (200, 204), "delete agent"),
          read_lock, lambda r: r.status == 401)
    rf.expect(rf.http("POST", f"{a}{API}/agents", admin,
                      {"id": "rep-agent", "name": "again", "capabilities": [],
                       "auto_discover": False}), (201,), "re-create the agent")
    if read_lock().status != 401:
        raise rf.Failure("agent deletion: the old agent's token reads a new agent of the same id")
    for what, t in results.items():
        log(f"  {what}: seen on the other replica after {t * 1000:.0f} ms (bound {bound} s)")
    return results


def check_monotonic(binary, proxy, admin, changes, work, rng, log):
    """`serve --registry` through the proxy: one list_changed per change.

    Every state of the agent's set is new (skills are assigned one by one,
    then unassigned one by one), so an older answer served after a newer
    one is a state change of its own: it shows as an extra list_changed
    and as the served lock (saved by serve beside its root) going back.
    """
    url = proxy.url
    half = (changes + 2) // 2
    names = [f"mono-{i:03d}" for i in range(half)]
    for name in names:
        publish_skill(url, admin, name, ["1.0.0"], rng)
    agent_tok, _ = agent_with_token(url, admin, "mono-agent")
    token_file = os.path.join(work, "mono-agent.token")
    with open(token_file, "w", encoding="utf-8") as f:
        f.write(agent_tok + "\n")
    os.chmod(token_file, 0o600)
    cache = os.path.join(work, "cache")
    saved = os.path.join(cache, "skilldeck", "registry", "agents", "mono-agent", "lock.json")
    env = dict(os.environ, XDG_CACHE_HOME=cache,
               XDG_CONFIG_HOME=os.path.join(work, "config"), RUST_LOG="warn")
    session = McpSession([binary, "serve", "--registry", url, "--agent", "mono-agent",
                          "--registry-token-file", token_file, "--registry-poll", "0.1"],
                         env, os.path.join(work, "serve.log"))

    def served():
        try:
            with open(saved, encoding="utf-8") as f:
                return frozenset(s["name"] for s in json.load(f)["skills"])
        except (OSError, ValueError, KeyError):
            return None

    def no_failed_refresh():
        # A refresh that failed: a replica refused the download of a version
        # the other replica's lock listed (authorised on an older view).
        with open(os.path.join(work, "serve.log"), encoding="utf-8", errors="replace") as f:
            failed = [line.strip() for line in f if "cannot refresh" in line]
        if failed:
            raise rf.Failure(f"serve --registry failed a refresh: {failed[0][:400]}")

    try:
        t0 = time.monotonic()
        expected = set()
        steps = [("PUT", n) for n in names] + [("DELETE", n) for n in names]
        steps = steps[:changes + 1]
        for i, (method, name) in enumerate(steps, start=1):
            target = f"{url}{API}/agents/mono-agent/skills/default/{name}"
            if method == "PUT":
                rf.expect(rf.http("PUT", target, admin, {"version": "1.0.0", "enabled": True}),
                          (200,), f"change {i}: assign {name}")
                expected.add(name)
            else:
                rf.expect(rf.http("DELETE", target, admin), (200, 204),
                          f"change {i}: unassign {name}")
                expected.discard(name)
            got = session.wait_changed(i)
            if got < i:
                raise rf.Failure(f"change {i}: serve --registry sent no list_changed "
                                 f"within {NOTIFY_TIMEOUT} s (read {work}/serve.log)")
            # The served lock is the expected one (the list_changed just
            # counted was this change's, not an older answer's).
            deadline = time.monotonic() + NOTIFY_TIMEOUT
            while served() != expected:
                if time.monotonic() > deadline:
                    raise rf.Failure(f"change {i}: serve --registry serves {sorted(served() or [])}"
                                     f", expected {sorted(expected)}")
                time.sleep(0.01)
            if session.changed > i:
                raise rf.Failure(f"change {i}: {session.changed} list_changed for {i} changes: "
                                 f"an answer went backwards (read {work}/serve.log)")
            no_failed_refresh()
        no_failed_refresh()
        log(f"  {len(steps) - 1} changes (+1 marker) through the proxy: exactly one "
            f"list_changed each, the served lock never went back, no refresh failed "
            f"({time.monotonic() - t0:.1f} s; requests per replica {proxy.served})")
    finally:
        session.close()


def consistency(args):
    log = lambda m: print(m, flush=True)  # noqa: E731
    rng = random.Random(args.seed)
    work = args.work or tempfile.mkdtemp(prefix="replicas-")
    t0 = time.monotonic()
    reps = Replicas(args.bin, work, args.database_url, args.store, n=2)
    proxy = None
    try:
        reps.start()
        proxy = Proxy(reps.urls)
        a, b = reps.urls
        admin = reps.token
        log(f"two replicas {a} {b}, proxy {proxy.url}")
        check_propagation(a, b, admin, args.bound, rng, log)
        check_monotonic(args.bin, proxy, admin, args.changes, work, rng, log)
    except rf.Failure as e:
        print(f"FAIL: replicas: {e} (logs in {work})", flush=True)
        return 1
    finally:
        if proxy:
            proxy.close()
        reps.stop()
    print(f"PASS: replicas consistency ({time.monotonic() - t0:.1f} s)", flush=True)
    return 0



# --- Faults ---------------------------------------------------------------------

# Short database bounds for the fault check (the defaults are seconds
# longer; the check waits for events, these only keep it short).
FAULT_LOCK_TIMEOUT_MS = 1500
FAULT_IDLE_TIMEOUT_MS = 3000
FAULT_FLAGS = ("--db-lock-timeout-ms", str(FAULT_LOCK_TIMEOUT_MS),
               "--db-idle-in-transaction-timeout-ms", str(FAULT_IDLE_TIMEOUT_MS))
# Against a hang only: far above every bound above.
FAULT_DEADLINE = 60.0
# Concurrent writers on the replica that is paused.
PAUSE_WRITERS = 8


def psql(pg_bin, database_url, sql, in_registry_database=False):
    """One query as the test cluster's superuser: its rows, tab-separated
    (in the cluster's `postgres` database, or in the registry's)."""
    base = database_url if in_registry_database else database_url.rsplit("/", 1)[0] + "/postgres"
    out = subprocess.run(["runuser", "-u", "postgres", "--", f"{pg_bin}/psql", base,
                          "-qAtF", "\t", "-c", sql],
                         capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise rf.Failure(f"psql: {out.stderr.strip()}")
    return [line.split("\t") for line in out.stdout.splitlines() if line]


def database_of(url):
    return urllib.parse.urlsplit(url).path.lstrip("/")


def open_transactions(pg_bin, database_url):
    """Sessions of the registry's database idle inside a transaction."""
    db = database_of(database_url)
    rows = psql(pg_bin, database_url,
                "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                f"'{db}' AND state = 'idle in transaction'")
    return int(rows[0][0]) if rows else 0


def until(what, check, deadline=FAULT_DEADLINE):
    """Calls `check` until it returns a true value (returned); fails after
    `deadline` seconds (a hang guard, not a bound being tested)."""
    end = time.monotonic() + deadline
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            raise rf.Failure(f"{what}: not after {deadline:.0f} s")
        time.sleep(0.05)


def create_agent(url, admin, agent, timeout=FAULT_DEADLINE):
    return rf.http("POST", f"{url}{API}/agents", admin,
                   body={"id": agent, "name": agent, "capabilities": [], "auto_discover": False},
                   timeout=timeout)


def check_pause(reps, admin, pg_bin, database_url, log):
    a, b = reps.servers
    stop = threading.Event()
    counter = itertools.count()

    def writer():
        # Writes on A in a loop until told to stop (or A is paused: then
        # the request just waits, and is abandoned).
        while not stop.is_set():
            try:
                create_agent(a.url, admin, f"pause-a-{next(counter)}", timeout=120)
            except OSError:
                return

    attempts = 0
    caught = False
    while not caught:
        attempts += 1
        if attempts > 50:
            raise rf.Failure("never caught replica A inside a transaction when pausing it")
        stop.clear()
        threads = [threading.Thread(target=writer, daemon=True) for _ in range(PAUSE_WRITERS)]
        for t in threads:
            t.start()
        time.sleep(0.02 * (attempts % 5 + 1))
        a.proc.send_signal(signal.SIGSTOP)
        stop.set()
        # A transaction A left open shows as idle in transaction (a
        # statement running when A stopped finishes first).
        time.sleep(0.2)
        caught = open_transactions(pg_bin, database_url) > 0
        if not caught:
            a.proc.send_signal(signal.SIGCONT)
            for t in threads:
                t.join(30)
    answers = []
    try:
        # While A stays paused: every write on B is answered.
        for i in itertools.count():
            r = create_agent(b.url, admin, f"pause-b-{i}")
            answers.append(r.status)
            if i > 200:
                raise rf.Failure(f"replica B never wrote while A was paused: {answers}")
            if r.status == 503:
                if not r.header("Retry-After"):
                    raise rf.Failure("a 503 of replica B while A is paused has no Retry-After")
                body = r.json()
                if body.get("code") not in ("registry-busy", "registry-request-timeout"):
                    raise rf.Failure(f"replica B answered 503 with {body}")
                continue
            rf.expect(r, (200, 201), "a write on replica B while A is paused")
            break
        if a.proc.poll() is not None:
            raise rf.Failure("replica A died while paused")
    finally:
        a.proc.send_signal(signal.SIGCONT)
    # A writes again after its pause (its stale connection is replaced).
    until("replica A writes again after SIGCONT",
          lambda: create_agent(a.url, admin, f"after-pause-{time.monotonic_ns()}").status in (200, 201))
    log(f"  replica A paused inside a transaction (attempt {attempts}): replica B answered "
        f"every write while it stayed paused ({', '.join(map(str, answers))}), then wrote; "
        f"A wrote again after SIGCONT")


# The token cache's TTL (AUTH_CACHE_TTL in service/config.rs): the lost
# notification check must see the revocation well before it, or it proves
# nothing about the generation check.
AUTH_CACHE_TTL = 30.0


def check_lost_notification(reps, admin, pg_bin, database_url, log):
    """A write whose notification never arrives is still seen by every replica.

    The token is revoked by SQL committed straight into the database: the
    generation is bumped and the `tokens` scope recorded, as a write does,
    but no NOTIFY is sent (as when a notification is lost and no later one
    shows the gap). Both replicas hold the token in their caches (30 s
    TTL); only the periodic generation check (half the consistency bound)
    can make them refuse it within SEEN_TIMEOUT.
    """
    a, b = reps.urls
    token, token_id = agent_with_token(a, admin, "lost-notify")
    for url in (a, b):
        rf.expect(lock_of(url, token, "lost-notify"), (200,), "the lock before the silent revocation")
    psql(pg_bin, database_url, f"""
        BEGIN;
        UPDATE tokens SET revoked_at = '2026-01-01T00:00:00.000000Z' WHERE id = '{token_id}';
        UPDATE registry_state SET generation = generation + 1 WHERE id = 1;
        INSERT INTO generations (scope, generation)
            SELECT 'tokens', generation FROM registry_state WHERE id = 1
            ON CONFLICT (scope) DO UPDATE SET generation = excluded.generation;
        COMMIT;""", in_registry_database=True)
    written = time.monotonic()
    for name, url in (("A", a), ("B", b)):
        deadline = written + SEEN_TIMEOUT
        while True:
            answer = lock_of(url, token, "lost-notify")
            if answer.status == 401:
                break
            if time.monotonic() > deadline:
                raise rf.Failure(
                    f"lost notification: replica {name} still accepts a token revoked "
                    f"{SEEN_TIMEOUT:.0f} s ago without a notification ({answer.status}); "
                    f"the generation check (service/fresh.rs check_loop) did not catch it")
            time.sleep(0.02)
        log(f"  lost notification: replica {name} refused the silently revoked token after "
            f"{(time.monotonic() - written) * 1000:.0f} ms (token cache TTL {AUTH_CACHE_TTL:.0f} s)")


def check_readyz(reps, backends_dir, pg_bin, log):
    data = os.path.join(backends_dir, "pg", "data")
    ctl = ["runuser", "-u", "postgres", "--", f"{pg_bin}/pg_ctl", "-D", data]
    for s in reps.servers:
        rf.expect(rf.http("GET", f"{s.url}/readyz"), (200,), "/readyz with PostgreSQL up")
    # Started again with the options it was started with (port, socket
    # folder, ...): the `-c` settings of its postmaster.opts.
    with open(os.path.join(data, "postmaster.opts"), encoding="utf-8") as f:
        words = shlex.split(f.read())
    options = " ".join(shlex.quote(w) for w in words[1:] if w not in ("-D", data))
    subprocess.run(ctl + ["-m", "fast", "-w", "-t", "30", "stop"], check=True,
                   capture_output=True, timeout=60)
    try:
        for s in reps.servers:
            r = rf.http("GET", f"{s.url}/readyz")
            if r.status != 503 or b"database" not in r.body:
                raise rf.Failure(f"/readyz with PostgreSQL stopped: {r.status} {r.body[:300]!r}")
            rf.expect(rf.http("GET", f"{s.url}/healthz"), (200,),
                      "/healthz with PostgreSQL stopped")
    finally:
        subprocess.run(ctl + ["-l", os.path.join(backends_dir, "postgres.log"), "-w", "-t",
                              "60", "-o", options, "start"],
                       check=True, capture_output=True, timeout=90)
    for s in reps.servers:
        until(f"/readyz of {s.url} after PostgreSQL started again",
              lambda s=s: rf.http("GET", f"{s.url}/readyz").status == 200)
    log("  PostgreSQL stopped: /readyz 503 naming the database on both replicas, /healthz 200; "
        "started again: /readyz 200")


class Browser:
    """Cookies and forms over plain HTTP/1.1, no redirects followed."""

    def __init__(self, base):
        self.base = urllib.parse.urlsplit(base)
        self.cookies = {}

    def request(self, method, path, form=None):
        conn = http.client.HTTPConnection(self.base.hostname, self.base.port, timeout=60)
        headers = {"Sec-Fetch-Site": "same-origin"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read().decode("utf-8", "replace")
            for k, v in r.getheaders():
                if k.lower() == "set-cookie":
                    name, _, rest = v.partition("=")
                    value = rest.split(";", 1)[0]
                    if "max-age=0" in v.lower() or not value:
                        self.cookies.pop(name, None)
                    else:
                        self.cookies[name] = value
            return r.status, r.getheader("Location"), data
        finally:
            conn.close()


def csrf_of(page):
    m = re.search(r'name="csrf" value="([^"]+)"', page)
    if not m:
        raise rf.Failure("no CSRF field in the page")
    return html.unescape(m.group(1))


def check_ui_through_proxy(proxy, admin, log):
    before = list(proxy.served)
    b = Browser(proxy.url)
    status, _, page = b.request("GET", "/ui/signin")
    rf.expect(rf.Answer(status, {}, page.encode()), (200,), "the sign-in page through the proxy")
    status, location, page = b.request("POST", "/ui/signin",
                                       {"csrf": csrf_of(page), "token": admin})
    if status not in (302, 303) or not location or "signin" in location:
        raise rf.Failure(f"sign-in through the proxy: {status} {location} {page[:300]!r}")
    pages = 0
    for path in ("/ui/skills", "/ui/agents", "/ui/agents/new", "/ui/skills"):
        status, _, page = b.request("GET", path)
        if status != 200:
            raise rf.Failure(f"GET {path} through the proxy after sign-in: {status}")
        pages += 1
    agent = f"ui-proxy-{time.monotonic_ns() % 10**9}"
    status, _, page = b.request("GET", "/ui/agents/new")
    status, location, page = b.request("POST", "/ui/agents",
                                       {"csrf": csrf_of(page), "id": agent, "name": agent})
    if status not in (302, 303):
        raise rf.Failure(f"creating an agent from the UI through the proxy: {status} {page[:300]!r}")
    status, _, page = b.request("GET", f"/ui/agents/{agent}/skills")
    if status != 200 or agent not in page:
        raise rf.Failure(f"the agent made through the proxy is not shown: {status}")
    status, _, page = b.request("GET", "/ui/agents")
    status, _, _ = b.request("POST", "/ui/signout", {"csrf": csrf_of(page)})
    if status not in (302, 303):
        raise rf.Failure(f"sign-out through the proxy: {status}")
    for _ in range(2):
        status, location, _ = b.request("GET", "/ui/agents")
        if status == 200:
            raise rf.Failure("a signed-out session still opens pages on a replica")
    spread = [after - was for after, was in zip(proxy.served, before)]
    if min(spread) == 0:
        raise rf.Failure(f"the proxy did not spread the UI's requests: {spread}")
    log(f"  web UI through the round-robin proxy: signed in, {pages} pages, an agent made "
        f"with a CSRF-protected form, signed out on both (requests per replica {spread})")


def faults(args):
    log = lambda m: print(m, flush=True)  # noqa: E731
    work = args.work or tempfile.mkdtemp(prefix="replicas-faults-")
    t0 = time.monotonic()
    reps = Replicas(args.bin, work, args.database_url, args.store, n=2, extra=FAULT_FLAGS)
    proxy = None
    try:
        reps.start()
        proxy = Proxy(reps.urls)
        admin = reps.token
        log(f"two replicas {' '.join(reps.urls)}, proxy {proxy.url}")
        check_pause(reps, admin, args.pg_bin, args.database_url, log)
        check_lost_notification(reps, admin, args.pg_bin, args.database_url, log)
        check_readyz(reps, args.backends, args.pg_bin, log)
        check_ui_through_proxy(proxy, admin, log)
    except (rf.Failure, subprocess.SubprocessError) as e:
        print(f"FAIL: replicas faults: {e} (logs in {work})", flush=True)
        return 1
    finally:
        for s in reps.servers:
            if s.proc and s.proc.poll() is None:
                s.proc.send_signal(signal.SIGCONT)
        if proxy:
            proxy.close()
        reps.stop()
    print(f"PASS: replicas faults ({time.monotonic() - t0:.1f} s)", flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("consistency", help="propagation bounds and monotonic answers")
    c.add_argument("--bin", required=True)
    c.add_argument("--database-url", required=True)
    c.add_argument("--store", required=True)
    c.add_argument("--work", help="folder for data and logs (default: a new temporary one)")
    c.add_argument("--changes", type=int, default=100)
    c.add_argument("--bound", type=float, default=DEFAULT_BOUND)
    c.add_argument("--seed", type=int, default=29)
    f = sub.add_parser("faults", help="a paused replica, PostgreSQL stopped, the UI through the proxy")
    f.add_argument("--bin", required=True)
    f.add_argument("--database-url", required=True)
    f.add_argument("--store", required=True)
    f.add_argument("--backends", required=True,
                   help="the scripts/registry-backends.sh folder (its PostgreSQL is stopped and started)")
    f.add_argument("--pg-bin", default="/usr/lib/postgresql/15/bin")
    f.add_argument("--work", help="folder for data and logs (default: a new temporary one)")
    args = ap.parse_args()
    return consistency(args) if args.cmd == "consistency" else faults(args)


if __name__ == "__main__":
    sys.exit(main())
