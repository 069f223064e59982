#!/usr/bin/env python3
"""Fault tests of `skilldeck registry serve`, over HTTP, on any backend.

    python3 scripts/registry_fault.py run --bin target/debug/skilldeck \\
        [--database-url URL] [--store URL] [--data DIR] [--kills 3] \\
        [--publishers 6] [--seed N]

What it checks (exits 1 and says which check failed):

1. Racing publishers: two concurrent publishes of one version with
   different content give exactly one 201 and one 409; with the same
   content, one 201 and one 200, and the skill then has that one version.
2. SIGKILL during publish under load, `--kills` times: several publisher
   threads publish many distinct versions; at a random moment the server
   gets SIGKILL; it is restarted on the same data folder, database and
   store (it must print its ready line again). Then every visible version
   (listed through the API) has its archive and every file downloadable,
   each download's sha256 matches the manifest's digest (and the
   `ETag`/`X-Skilldeck-*` headers), the archive unpacks to exactly the
   manifest's files and the fingerprint recomputed from the files matches;
   every publish answered 201 before the kill is visible with the content
   sent; a publish cut short by the kill, sent again with the same content,
   is accepted (201 when it had not landed, 200 when it had).

Backend settings: `--database-url`/`--store` are passed to the server; S3
settings come from the usual AWS_* environment (never the command line).
With neither, the server keeps SQLite + blobs under the data folder.

A second command, used by scripts/test-registry.sh before schemathesis:

    python3 scripts/registry_fault.py seed --url http://127.0.0.1:PORT \\
        --token-file F [--skills 4] [--agent bot-1]

publishes a few small generated skills (two versions each, a `production`
label), creates an agent with assignments and an agent token, and checks
that the agent token is refused (403) another agent's lock and a publish.

Python 3 standard library only. Also imported by bench/registry_load.py
for its server and HTTP helpers.
"""

import argparse
import hashlib
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

READY = re.compile(r"skilldeck registry listening on (http://\S+)")
API = "/api/v1"
READY_TIMEOUT = 60.0
HTTP_TIMEOUT = 30.0


class Failure(Exception):
    """A check that did not hold."""


# --- The server ---------------------------------------------------------------


class Server:
    """`skilldeck registry serve` on 127.0.0.1:0 with one data folder."""

    def __init__(self, binary, data, database_url=None, store=None, log=None, extra=()):
        self.binary = binary
        self.data = data
        self.database_url = database_url
        self.store = store
        self.extra = list(extra)
        self.log_path = log or os.path.join(data, "server.log")
        self.proc = None
        self.url = None
        self.token_file = os.path.join(data, "admin-token")
        self.starts = 0

    def command(self):
        cmd = [self.binary, "registry", "serve", "--data", self.data,
               "--listen", "127.0.0.1:0", "--admin-token-file", self.token_file]
        if self.database_url:
            cmd += ["--database-url", self.database_url]
        if self.store:
            cmd += ["--store", self.store]
        return cmd + self.extra

    def start(self, timeout=READY_TIMEOUT):
        """Starts it and waits for the ready line; returns seconds taken."""
        os.makedirs(self.data, exist_ok=True)
        log = open(self.log_path, "ab")
        log.write(f"--- start {self.starts + 1}: {' '.join(self.command())}\n".encode())
        log.flush()
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.command(), stdout=subprocess.PIPE, stderr=log,
                                     stdin=subprocess.DEVNULL)
        log.close()
        self.starts += 1
        ready = threading.Event()
        found = {}

        def drain(proc):
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace")
                m = READY.search(line)
                if m and not ready.is_set():
                    found["url"] = m.group(1).rstrip("/")
                    ready.set()
            ready.set()

        threading.Thread(target=drain, args=(self.proc,), daemon=True).start()
        if not ready.wait(timeout) or "url" not in found:
            code = self.proc.poll()
            self.kill()
            state = f"exited with {code}" if code is not None else f"no ready line in {timeout:.0f} s"
            raise Failure(f"the registry server did not start ({state}); read {self.log_path}")
        self.url = found["url"]
        return time.monotonic() - t0

    def admin_token(self):
        with open(self.token_file, encoding="utf-8") as f:
            return f.read().strip()

    def sigkill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def kill(self):
        self.sigkill()

    def stop(self):
        """SIGTERM (graceful shutdown), SIGKILL after 10 s."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                raise Failure(f"the server ignored SIGTERM for 10 s; read {self.log_path}")
        return self.proc.returncode if self.proc else None


# --- HTTP -------------------------------------------------------------------


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError as e:
            raise Failure(f"answer {self.status} is not JSON ({e}): {self.body[:300]!r}")

    def header(self, name):
        return self.headers.get(name)


def http(method, url, token=None, body=None, content_type=None, headers=None,
         timeout=HTTP_TIMEOUT):
    """One request; returns an Answer whatever the status (raises OSError
    on a wire failure)."""
    h = dict(headers or {})
    if token:
        h["Authorization"] = f"Bearer {token}"
    if content_type:
        h["Content-Type"] = content_type
    data = body
    if isinstance(body, (dict, list)):
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Answer(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Answer(e.code, e.headers, e.read())


def expect(answer, statuses, what):
    if answer.status not in statuses:
        raise Failure(f"{what}: expected {statuses}, got {answer.status}: {answer.body[:400]!r}")
    return answer


def quote_path(path):
    return "/".join(urllib.parse.quote(p, safe="") for p in path.split("/"))


# --- Skills -----------------------------------------------------------------


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def fingerprint(files):
    """The core's fingerprint (crates/skilldeck/src/digest.rs): sha256 over
    `path\\tsha256:<hex>\\n` per file in byte order of the paths."""
    h = hashlib.sha256()
    for path in sorted(files, key=lambda p: p.encode()):
        h.update(path.encode() + b"\t" + sha256(files[path]).encode() + b"\n")
    return "sha256:" + h.hexdigest()


def skill_files(name, rng, description=None, extra_body="", capabilities=None):
    """A small valid skill: SKILL.md, a reference and a script."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
             "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"]
    text = " ".join(rng.choice(words) for _ in range(rng.randint(40, 120)))
    description = description or (
        f"Generated test skill {name}, for tests that need a small skill that "
        f"does {rng.choice(words)} and {rng.choice(words)} work.")
    meta = ""
    if capabilities:
        meta = f"metadata:\n  capabilities: \"{' '.join(capabilities)}\"\n"
    skill_md = (f"---\nname: {name}\ndescription: {description}\n{meta}---\n\n"
                f"# {name}\n\n{text}\n{extra_body}\n\nSee [notes](references/notes.md).\n")
    return {
        "SKILL.md": skill_md.encode(),
        "references/notes.md": (f"# Notes for {name}\n\n"
                                f"{rng.getrandbits(128):032x}\n{text[::-1]}\n").encode(),
        "scripts/run.sh": f"#!/bin/sh\necho {name} {rng.getrandbits(64):016x}\n".encode(),
    }


def pack(name, files):
    """A tar.gz with the files under `name/` (what `skilldeck pack` makes,
    though not byte for byte)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(files):
            data = files[path]
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size = len(data)
            info.mode = 0o755 if path.startswith("scripts/") else 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def publish(url, token, archive, version=None, namespace=None, timeout=HTTP_TIMEOUT):
    query = {}
    if version:
        query["version"] = version
    if namespace:
        query["namespace"] = namespace
    q = ("?" + urllib.parse.urlencode(query)) if query else ""
    return http("POST", f"{url}{API}/skills{q}", token, archive, "application/gzip",
                timeout=timeout)


# --- Reading everything back ------------------------------------------------


def list_skills(url, token):
    """Every skill, following the pagination cursors."""
    items, cursor, pages = [], None, 0
    while True:
        q = {"limit": "500"}
        if cursor:
            q["cursor"] = cursor
        page = expect(http("GET", f"{url}{API}/skills?{urllib.parse.urlencode(q)}", token),
                      (200,), "GET /skills").json()
        items += page["items"]
        cursor = page.get("next_cursor")
        pages += 1
        if not cursor:
            return items
        if pages > 10000:
            raise Failure("GET /skills: the cursor never ends")


def file_digest(entry):
    return entry.get("sha256") or entry.get("digest")


def check_version(url, token, ns, name, version):
    """Downloads one version every way; returns (fingerprint, {path: bytes})."""
    base = f"{url}{API}/skills/{quote_path(ns)}/{quote_path(name)}/versions/{quote_path(version)}"
    what = f"{ns}/{name}@{version}"
    detail = expect(http("GET", base, token), (200,), f"manifest of {what}").json()
    files = {f["path"]: f for f in detail["files"]}
    if not files:
        raise Failure(f"{what}: the manifest lists no file")
    manifest_fp = fingerprint_of_digests({p: file_digest(f) for p, f in files.items()})
    if manifest_fp != detail["fingerprint"]:
        raise Failure(f"{what}: the manifest's fingerprint {detail['fingerprint']} is not the "
                      f"fingerprint of its own file digests ({manifest_fp})")
    # The archive.
    arch = expect(http("GET", base + "/archive", token), (200,), f"archive of {what}")
    digest = hashlib.sha256(arch.body).hexdigest()
    etag = (arch.header("ETag") or "").strip('"').removeprefix("W/").strip('"')
    if etag and digest not in etag:
        raise Failure(f"{what}: the archive's ETag {etag} is not its sha256 ({digest})")
    fp_header = arch.header("X-Skilldeck-Fingerprint")
    if fp_header and fp_header != detail["fingerprint"]:
        raise Failure(f"{what}: X-Skilldeck-Fingerprint {fp_header} != manifest "
                      f"{detail['fingerprint']}")
    unpacked = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(arch.body), mode="r:gz") as tar:
            for member in tar.getmembers():
                if member.isdir():
                    continue
                if not member.isfile():
                    raise Failure(f"{what}: the archive holds a non-file entry {member.name!r}")
                path = member.name.split("/", 1)[1] if member.name.startswith(f"{name}/") \
                    else member.name
                unpacked[path] = tar.extractfile(member).read()
    except (tarfile.TarError, OSError, EOFError) as e:
        raise Failure(f"{what}: the archive does not unpack: {e}")
    if set(unpacked) != set(files):
        raise Failure(f"{what}: the archive holds {sorted(unpacked)}, the manifest "
                      f"{sorted(files)}")
    for path, data in unpacked.items():
        if sha256(data) != file_digest(files[path]):
            raise Failure(f"{what}: {path} in the archive does not match its digest")
    if fingerprint(unpacked) != detail["fingerprint"]:
        raise Failure(f"{what}: the archive's files give fingerprint {fingerprint(unpacked)}, "
                      f"the manifest says {detail['fingerprint']}")
    # File by file.
    for path, entry in files.items():
        got = expect(http("GET", f"{base}/files/{quote_path(path)}", token), (200,),
                     f"file {path} of {what}")
        if sha256(got.body) != file_digest(entry):
            raise Failure(f"{what}: the download of {path} does not match its digest")
        if len(got.body) != entry["size"]:
            raise Failure(f"{what}: {path} is {len(got.body)} bytes, the manifest says "
                          f"{entry['size']}")
        header = got.header("X-Skilldeck-Digest")
        if header and header != file_digest(entry):
            raise Failure(f"{what}: X-Skilldeck-Digest of {path} is {header}, the manifest "
                          f"says {file_digest(entry)}")
    return detail["fingerprint"], unpacked


def fingerprint_of_digests(digests):
    h = hashlib.sha256()
    for path in sorted(digests, key=lambda p: p.encode()):
        h.update(path.encode() + b"\t" + digests[path].encode() + b"\n")
    return "sha256:" + h.hexdigest()


def check_everything(url, token):
    """Every visible version verifies; returns {(ns, name, version): fingerprint}."""
    seen = {}
    for skill in list_skills(url, token):
        ns, name = skill["namespace"], skill["name"]
        detail = expect(http("GET", f"{url}{API}/skills/{quote_path(ns)}/{quote_path(name)}",
                             token), (200,), f"GET skill {ns}/{name}").json()
        for v in detail["versions"]:
            fp, _ = check_version(url, token, ns, name, v["version"])
            if fp != v["fingerprint"]:
                raise Failure(f"{ns}/{name}@{v['version']}: listed with {v['fingerprint']}, "
                              f"manifest says {fp}")
            seen[(ns, name, v["version"])] = fp
    return seen


# --- 1. Racing publishers ---------------------------------------------------


def race(url, token, archives, version):
    """Publishes the archives at once (one thread each); returns statuses."""
    barrier = threading.Barrier(len(archives))
    results = [None] * len(archives)

    def one(i):
        barrier.wait()
        try:
            a = publish(url, token, archives[i], version=version)
            results[i] = (a.status, a.body)
        except OSError as e:
            results[i] = (f"wire error: {e}", b"")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(archives))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def check_races(url, token, rng, rounds=4):
    for r in range(rounds):
        name = f"race-diff-{r}"
        a = pack(name, skill_files(name, rng))
        b = pack(name, skill_files(name, rng))
        results = race(url, token, [a, b], "1.0.0")
        statuses = sorted(str(s) for s, _ in results)
        if statuses != ["201", "409"]:
            raise Failure(f"two publishes of {name}@1.0.0 with different content: expected one "
                          f"201 and one 409, got {[(s, b[:200]) for s, b in results]}")
        conflict = next(b for s, b in results if s == 409)
        if b"registry-version-exists" not in conflict:
            raise Failure(f"the 409 does not carry code registry-version-exists: {conflict[:300]!r}")
    for r in range(rounds):
        name = f"race-same-{r}"
        files = skill_files(name, rng)
        a = pack(name, files)
        results = race(url, token, [a, a], "1.0.0")
        statuses = sorted(str(s) for s, _ in results)
        if statuses != ["200", "201"]:
            raise Failure(f"two publishes of {name}@1.0.0 with the same content: expected one "
                          f"201 and one 200, got {[(s, b[:200]) for s, b in results]}")
        bodies = [json.loads(b) for _, b in results]
        if sorted(x.get("created") for x in bodies) != [False, True]:
            raise Failure(f"{name}: `created` should be true once and false once: {bodies}")
        detail = expect(http("GET", f"{url}{API}/skills/default/{name}", token), (200,),
                        f"GET {name}").json()
        versions = [v["version"] for v in detail["versions"]]
        if versions != ["1.0.0"]:
            raise Failure(f"{name}: expected one version 1.0.0 after the same-content race, "
                          f"got {versions}")
        if detail["versions"][0]["fingerprint"] != fingerprint(files):
            raise Failure(f"{name}: the stored fingerprint is not the content's")
    return 2 * rounds


# --- 2. SIGKILL during publish under load -----------------------------------


class Publishers:
    """Threads publishing distinct versions until stopped or the server dies."""

    def __init__(self, url, token, n, round_no, seed):
        self.url, self.token = url, token
        self.n, self.round_no, self.seed = n, round_no, seed
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acked = {}      # (name, version) -> fingerprint, answered 201/200
        self.unknown = {}    # (name, version) -> (archive, fingerprint), cut short
        self.refused = []    # (name, version, status, body) unexpected statuses
        self.threads = []

    def run(self, t):
        rng = random.Random(self.seed * 1000 + self.round_no * 100 + t)
        name = f"fault-p{t}"
        i = 0
        while not self.stop.is_set():
            version = f"{self.round_no + 1}.{i}.0"
            i += 1
            files = skill_files(name, rng)
            archive = pack(name, files)
            fp = fingerprint(files)
            try:
                a = publish(self.url, self.token, archive, version=version, timeout=10)
            except OSError:
                with self.lock:
                    self.unknown[(name, version)] = (archive, fp)
                return  # the server is gone
            with self.lock:
                if a.status == 201:
                    self.acked[(name, version)] = fp
                else:
                    self.refused.append((name, version, a.status, a.body[:300]))

    def start(self):
        for t in range(self.n):
            th = threading.Thread(target=self.run, args=(t,), daemon=True)
            th.start()
            self.threads.append(th)

    def join(self):
        self.stop.set()
        for th in self.threads:
            th.join(30)


def check_kills(server, kills, publishers, seed, log):
    rng = random.Random(seed)
    token = server.admin_token()
    acked_all = {}
    totals = {"acked": 0, "cut": 0, "cut_landed": 0, "versions": 0, "restart_s": []}
    for k in range(kills):
        pubs = Publishers(server.url, token, publishers, k, seed)
        pubs.start()
        delay = rng.uniform(0.3, 2.5)
        time.sleep(delay)
        server.sigkill()
        pubs.join()
        if pubs.refused:
            raise Failure(f"publishes refused before the kill: {pubs.refused[:3]}")
        totals["acked"] += len(pubs.acked)
        totals["cut"] += len(pubs.unknown)
        acked_all.update(pubs.acked)
        secs = server.start()
        totals["restart_s"].append(secs)
        health = http("GET", f"{server.url}/healthz")
        expect(health, (200,), "GET /healthz after restart")
        seen = check_everything(server.url, token)
        for (name, version), fp in acked_all.items():
            got = seen.get(("default", name, version))
            if got is None:
                raise Failure(f"{name}@{version} was answered 201 before the kill but is not "
                              f"visible after the restart")
            if got != fp:
                raise Failure(f"{name}@{version}: visible with {got}, published with {fp}")
        # A publish cut short: sending the same content again is accepted.
        for (name, version), (archive, fp) in pubs.unknown.items():
            landed = ("default", name, version) in seen
            a = publish(server.url, token, archive, version=version)
            want = 200 if landed else 201
            if a.status != want:
                raise Failure(f"{name}@{version} cut short by the kill ({'visible' if landed else 'not visible'} "
                              f"after restart): the same content again answered {a.status}, "
                              f"expected {want}: {a.body[:300]!r}")
            totals["cut_landed"] += landed
            acked_all[(name, version)] = fp
        totals["versions"] = len(seen)
        log(f"  kill {k + 1}/{kills} after {delay:.2f} s: {len(pubs.acked)} publishes acked, "
            f"{len(pubs.unknown)} cut short; restart {secs:.2f} s; {len(seen)} versions verified")
    return totals


# --- seed (for test-registry.sh) --------------------------------------------


def seed(url, token, skills, agent, log):
    rng = random.Random(7)
    names = []
    for i in range(skills):
        name = f"seed-skill-{i}"
        names.append(name)
        for version in ("1.0.0", "1.1.0"):
            caps = ["net"] if i % 2 else None
            a = publish(url, token, pack(name, skill_files(name, rng, capabilities=caps)),
                        version=version)
            expect(a, (201,), f"publish {name}@{version}")
        expect(http("PUT", f"{url}{API}/skills/default/{name}/labels/production", token,
                    {"version": "1.0.0"}), (200,), f"label {name}")
    for agent_id, caps in ((agent, ["net"]), (agent + "-other", [])):
        expect(http("POST", f"{url}{API}/agents", token,
                    {"id": agent_id, "name": f"Agent {agent_id}", "capabilities": caps,
                     "auto_discover": True}), (201,), f"create agent {agent_id}")
    for i, name in enumerate(names[:3]):
        body = {"priority": i, "enabled": True}
        if i == 1:
            body["label"] = "production"
        if i == 2:
            body["version"] = "1.0.0"
        expect(http("PUT", f"{url}{API}/agents/{agent}/skills/default/{name}", token, body),
               (200,), f"assign {name}")
    created = expect(http("POST", f"{url}{API}/agents/{agent}/tokens", token, {"name": "seed"}),
                     (201,), "agent token").json()
    agent_token = created["token"]
    expect(http("GET", f"{url}{API}/agents/{agent}/lock", agent_token), (200,),
           "the agent's own lock with its token")
    expect(http("GET", f"{url}{API}/agents/{agent}-other/lock", agent_token), (403,),
           "another agent's lock with an agent token")
    expect(publish(url, agent_token, pack("x-skill", skill_files("x-skill", rng)),
                   version="1.0.0"), (403,), "a publish with an agent token")
    expect(http("GET", f"{url}{API}/agents/{agent}/lock"), (401,), "the lock without a token")
    log(f"seeded {skills} skills x 2 versions, agents {agent} and {agent}-other, "
        f"3 assignments; agent token refused elsewhere (403)")
    return agent_token


# --- main -------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="race + SIGKILL fault tests")
    run.add_argument("--bin", required=True, help="the skilldeck binary")
    run.add_argument("--database-url")
    run.add_argument("--store")
    run.add_argument("--data", help="data folder (default: a temporary one, removed)")
    run.add_argument("--kills", type=int, default=3)
    run.add_argument("--publishers", type=int, default=6)
    run.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    sd = sub.add_parser("seed", help="publish a few skills, create agents and assignments")
    sd.add_argument("--url", required=True)
    sd.add_argument("--token-file", required=True)
    sd.add_argument("--skills", type=int, default=4)
    sd.add_argument("--agent", default="bot-1")
    sd.add_argument("--agent-token-out", help="write the agent token to this file (0600)")
    args = ap.parse_args()

    def log(msg):
        print(msg, flush=True)

    if args.cmd == "seed":
        with open(args.token_file, encoding="utf-8") as f:
            token = f.read().strip()
        try:
            agent_token = seed(args.url.rstrip("/"), token, args.skills, args.agent, log)
        except (Failure, OSError, KeyError, ValueError) as e:
            print(f"FAIL: seed: {e}", file=sys.stderr)
            return 1
        if args.agent_token_out:
            fd = os.open(args.agent_token_out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(agent_token)
        return 0

    tmp = None
    data = args.data
    if not data:
        tmp = tempfile.TemporaryDirectory(prefix="registry-fault-")
        data = tmp.name
    server = Server(os.path.abspath(args.bin), data, args.database_url, args.store)
    log(f"registry_fault: seed {args.seed}, data {data}, database "
        f"{'postgres' if (args.database_url or '').startswith('postgres') else 'sqlite'}, "
        f"store {(args.store or 'file').split(':')[0]}")
    t0 = time.monotonic()
    try:
        server.start()
        token = server.admin_token()
        races = check_races(server.url, token, random.Random(args.seed))
        log(f"  races: {races} rounds (different content: 201 + 409; same: 201 + 200)")
        totals = check_kills(server, args.kills, args.publishers, args.seed, log)
        code = server.stop()
        if code not in (0, -signal.SIGTERM):
            raise Failure(f"the server exited with {code} on SIGTERM; read {server.log_path}")
        log(f"PASS: registry_fault ({races} races, {args.kills} kills, {totals['acked']} acked "
            f"publishes, {totals['cut']} cut short ({totals['cut_landed']} had landed), "
            f"{totals['versions']} versions verified, restart max "
            f"{max(totals['restart_s']):.2f} s; {time.monotonic() - t0:.0f} s)")
        return 0
    except (Failure, OSError, KeyError, ValueError) as e:
        log(f"FAIL: registry_fault: {type(e).__name__ + ': ' if not isinstance(e, Failure) else ''}{e}")
        log(f"  (seed {args.seed}; server log {server.log_path})")
        if tmp:
            # Keep the log where the caller can read it.
            keep = tempfile.mkdtemp(prefix="registry-fault-log-")
            try:
                os.replace(server.log_path, os.path.join(keep, "server.log"))
                log(f"  server log kept at {keep}/server.log")
            except OSError:
                pass
        return 1
    finally:
        server.kill()
        if tmp:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
