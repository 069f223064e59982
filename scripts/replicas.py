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

Python 3 standard library only.
"""

import argparse
import http.client
import http.server
import itertools
import json
import os
import queue
import random
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
    args = ap.parse_args()
    return consistency(args)


if __name__ == "__main__":
    sys.exit(main())
