#!/usr/bin/env python3
"""Load on `skilldeck registry serve`: 200 agents reading their resolved
catalog and lock (cache hits and 304s) and downloading files, and publish
throughput; on SQLite + a file store, and with --postgres also on
PostgreSQL 15 + SeaweedFS S3 (scripts/registry-backends.sh) in the same run.

    python3 bench/registry_load.py [--postgres] [--skills 300] [--agents 200]
        [--assignments 4] [--seconds 10] [--connections 32]
        [--binary B --loadgen L] [--corpus DIR] [--json OUT]

Per backend it starts the server on 127.0.0.1:0 with a fresh data folder
(and a fresh database and store prefix), publishes --skills generated skills
(bench/lib/gen_skills.py, packed as tar.gz, --publishers threads),
creates --agents agents with --assignments assignments each and one agent
token each, fetches every agent's catalog and lock once (warming the cache,
collecting ETags), then runs bench/loadgen --get for --seconds per row:

  catalog        GET /agents/{id}/catalog, the agent's own token: 200 from
                 the in-process cache;
  catalog 304    the same with If-None-Match: the ETag from the warm-up;
  lock           GET /agents/{id}/lock: 200 from the cache;
  lock 304       the same with If-None-Match;
  files          GET /skills/{ns}/{name}/versions/{v}/files/{path} of the
                 files in the agents' locks, each with its agent's token;

and then publishes the real corpus (optional: --corpus, else $SKILLDECK_CORPUS or
../shared/corpus, skipped when absent; every folder holding a
SKILL.md, packed as tar.gz, namespace from its repository, ?version=1.0.0;
refused packages counted by status and code). Prints a Markdown table with
requests/s, p50/p99 latency, the CPU seconds the server and the client used
and the server's peak RSS (from /proc), and the machine's load average before and after (the
machine may be shared: read the load with the numbers).

With --replicas (PostgreSQL + S3 only; implies --postgres backends): one
replica against two (scripts/replicas.py; two loadgen processes, one per
replica, half the connections each: a load balancer without a proxy in the
way), and the database transactions per request (pg_stat_database
xact_commit over the row, read after the statistics settled) for lock reads
from a warm cache and for lock reads while a writer writes every
--write-every seconds (a namespace policy write: every agent's cache
entry invalidated each time:
the rebuild storm single-flight absorbs; /metrics' cache_lookups
rebuilt/shared say how many misses computed and how many waited).

Builds release binaries of skilldeck and bench/loadgen unless --binary and
--loadgen are given.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "lib"))
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.dont_write_bytecode = True  # no __pycache__ in scripts/
import registry_fault as rf  # noqa: E402  (the server and HTTP helpers)
import common  # noqa: E402

API = rf.API


def build():
    common.build("skilldeck-cli", "skilldeck-loadgen", locked=True)
    return common.SKILLDECK, os.path.join(common.RELEASE, "loadgen")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def read_folder(folder):
    """{relative path: bytes} of the regular files under folder (no
    symlinks, nothing under .git)."""
    files = {}
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for n in sorted(names):
            p = os.path.join(root, n)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as f:
                files[os.path.relpath(p, folder).replace(os.sep, "/")] = f.read()
    return files


def publish_all(url, token, packages, threads):
    """Publishes (namespace, name, archive, version) tuples with `threads`
    workers; returns (seconds, {status: n}, {code: n}, bytes)."""
    statuses, codes = {}, {}
    lock = threading.Lock()
    queue = list(packages)
    total_bytes = sum(len(p[2]) for p in packages)

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                ns, name, archive, version = queue.pop()
            try:
                a = rf.publish(url, token, archive, version=version, namespace=ns, timeout=60)
                status, code = a.status, None
                if a.status >= 400:
                    try:
                        code = a.json().get("code")
                    except rf.Failure:
                        code = "not-json"
            except OSError as e:
                status, code = "wire", type(e).__name__
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
                if code:
                    codes[code] = codes.get(code, 0) + 1

    t0 = time.monotonic()
    ths = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    return time.monotonic() - t0, statuses, codes, total_bytes


def corpus_packages(corpus):
    """Every folder with a SKILL.md, packed; namespace from the repository
    folder (`owner__repo` -> `owner-repo`)."""
    out = []
    for repo in sorted(os.listdir(corpus)):
        top = os.path.join(corpus, repo)
        if not os.path.isdir(top):
            continue
        ns = "".join(c if c.isalnum() else "-" for c in repo.lower()).strip("-")
        while "--" in ns:
            ns = ns.replace("--", "-")
        ns = ns[:63].rstrip("-") or "corpus"
        for root, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != ".git")
            if "SKILL.md" in names:
                name = os.path.basename(root)
                out.append((ns, name, rf.pack(name, read_folder(root)), "1.0.0"))
    return out


def loadgen(bin_loadgen, addr, targets, seconds, connections, server_pid, revalidate=False):
    cpu0 = cpu_seconds(server_pid)
    cmd = [bin_loadgen, "--get", targets, "--addr", addr, "--seconds", str(seconds),
           "--connections", str(connections)]
    if revalidate:
        cmd.append("--revalidate")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    r = json.loads(out.stdout)
    r["server_cpu_s"] = cpu_seconds(server_pid) - cpu0
    return r


def write_targets(path, rows):
    with open(path, "w") as f:
        for row in rows:
            f.write("\t".join(row) + "\n")


def run_backend(label, binary, bin_loadgen, args, work, database_url=None, store=None):
    data = os.path.join(work, label)
    server = rf.Server(binary, data, database_url, store)
    server.start()
    results = {"backend": label, "rows": {}}
    try:
        url = server.url
        addr = urllib.parse.urlsplit(url).netloc
        token = server.admin_token()
        rng = random.Random(args.seed)

        # Generated skills.
        gen = os.path.join(work, f"gen-{label}")
        common.generate(args.skills, gen, seed=args.seed)
        names = sorted(os.listdir(gen))
        packages = [("default", n, rf.pack(n, read_folder(os.path.join(gen, n))), None)
                    for n in names]
        secs, statuses, codes, nbytes = publish_all(url, token, packages, args.publishers)
        results["rows"]["publish generated"] = {
            "count": len(packages), "seconds": secs, "rps": len(packages) / secs,
            "statuses": statuses, "codes": codes, "mb": nbytes / 1e6}
        published = names
        if statuses.get(201, 0) != len(packages):
            raise rf.Failure(f"publishing {len(packages)} generated skills: {statuses} {codes}")

        # Agents, assignments, tokens.
        agents = []
        t0 = time.monotonic()
        for i in range(args.agents):
            aid = f"agent-{i:04d}"
            rf.expect(rf.http("POST", f"{url}{API}/agents", token,
                              {"id": aid, "name": f"Load agent {i}"}), (201,), f"agent {aid}")
            for j, name in enumerate(rng.sample(published, args.assignments)):
                rf.expect(rf.http("PUT", f"{url}{API}/agents/{aid}/skills/default/{name}", token,
                                  {"priority": j}), (200,), f"assign {name} to {aid}")
            tok = rf.expect(rf.http("POST", f"{url}{API}/agents/{aid}/tokens", token,
                                    {"name": f"load-{aid}"}), (201,), "agent token").json()["token"]
            agents.append((aid, tok))
        results["rows"]["setup agents"] = {"count": args.agents,
                                           "seconds": time.monotonic() - t0}

        # Warm the caches, collect ETags and the files to download.
        catalog, catalog304, lock, lock304, files = [], [], [], [], []
        for aid, tok in agents:
            c = rf.expect(rf.http("GET", f"{url}{API}/agents/{aid}/catalog", tok), (200,),
                          f"catalog of {aid}")
            lk = rf.expect(rf.http("GET", f"{url}{API}/agents/{aid}/lock", tok), (200,),
                           f"lock of {aid}")
            if not c.header("ETag") or not lk.header("ETag"):
                raise rf.Failure(f"{aid}: no ETag on the catalog or the lock")
            catalog.append((f"{API}/agents/{aid}/catalog", tok))
            lock.append((f"{API}/agents/{aid}/lock", tok))
            catalog304.append((f"{API}/agents/{aid}/catalog", tok, c.header("ETag")))
            lock304.append((f"{API}/agents/{aid}/lock", tok, lk.header("ETag")))
            for s in lk.json()["skills"]:
                for f in s["files"]:
                    files.append((f"{API}/skills/{rf.quote_path(s['namespace'])}/"
                                  f"{rf.quote_path(s['name'])}/versions/{s['version']}/files/"
                                  f"{rf.quote_path(f['path'])}", tok))
        # A 304 check before measuring: the ETag must revalidate.
        probe = rf.http("GET", f"{url}{catalog304[0][0]}", catalog304[0][1],
                        headers={"If-None-Match": catalog304[0][2]})
        rf.expect(probe, (304,), "If-None-Match with the catalog's ETag")

        for row, targets in (("catalog", catalog), ("catalog 304", catalog304),
                             ("lock", lock), ("lock 304", lock304), ("files", files)):
            path = os.path.join(work, f"{label}-{row.replace(' ', '-')}.tsv")
            write_targets(path, targets)
            r = loadgen(bin_loadgen, addr, path, args.seconds, args.connections, server.proc.pid)
            results["rows"][row] = r
            print(f"  {label} {row}: {r['rps']:.0f} req/s, p50 {r['p50_ms']:.2f} ms, "
                  f"p99 {r['p99_ms']:.2f} ms, statuses {r['statuses']}, server CPU "
                  f"{r['server_cpu_s']:.1f} s, client CPU {r['client_cpu_s']:.1f} s",
                  flush=True)

        # The real corpus.
        if args.corpus and os.path.isdir(args.corpus):
            pk = corpus_packages(args.corpus)
            cpu0 = cpu_seconds(server.proc.pid)
            secs, statuses, codes, nbytes = publish_all(url, token, pk, args.publishers)
            results["rows"]["publish corpus"] = {
                "count": len(pk), "seconds": secs, "rps": len(pk) / secs,
                "statuses": {str(k): v for k, v in statuses.items()}, "codes": codes,
                "mb": nbytes / 1e6, "server_cpu_s": cpu_seconds(server.proc.pid) - cpu0}
            print(f"  {label} corpus: {len(pk)} packages ({nbytes / 1e6:.1f} MB) in {secs:.1f} s "
                  f"= {len(pk) / secs:.1f}/s; statuses {statuses}; refusals {codes}", flush=True)
        results["rows"]["publish generated"]["statuses"] = {
            str(k): v for k, v in results["rows"]["publish generated"]["statuses"].items()}
        results["server_peak_rss_mib"] = common.proc_status_kib(server.proc.pid, "VmHWM") / 1024
        print(f"  {label} server peak RSS: {results['server_peak_rss_mib']:.1f} MiB", flush=True)
        server.stop()
    finally:
        server.kill()
    return results


PSQL = "/usr/lib/postgresql/15/bin/psql"
# PostgreSQL 15 flushes a backend's statistics at most once a second while
# busy and within 10 s when idle: reading xact_commit this long after the
# load has every transaction of it.
STATS_SETTLE_SECS = 11


def xact_commit(base, db):
    out = subprocess.run([PSQL, f"{base}/postgres", "-qAtc",
                          f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{db}'"],
                         check=True, capture_output=True, text=True)
    return int(out.stdout.strip())


def cache_counts(url, token):
    """{(cache, result): n} from /metrics."""
    text = rf.expect(rf.http("GET", f"{url}/metrics", token), (200,), "/metrics").body.decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("skilldeck_registry_cache_lookups_total{"):
            labels, _, value = line.rpartition(" ")
            cache = labels.split('cache="')[1].split('"')[0]
            result = labels.split('result="')[1].split('"')[0]
            out[(cache, result)] = out.get((cache, result), 0) + float(value)
    return out


def run_replicas(binary, bin_loadgen, args, work, base, store):
    """One replica against two, and transactions per request."""
    import replicas as rp  # scripts/replicas.py
    db = "replicas_load"
    subprocess.run([PSQL, f"{base}/postgres", "-qc", f"CREATE DATABASE {db}"], check=True)
    reps = rp.Replicas(binary, os.path.join(work, "replicas"), f"{base}/{db}",
                       store + "/replicas", n=2)
    os.makedirs(reps.work, exist_ok=True)
    reps.start()
    rows = {}
    try:
        urls, token = reps.urls, reps.token
        gen = os.path.join(work, "gen-replicas")
        common.generate(args.skills, gen, seed=args.seed)
        names = sorted(os.listdir(gen))
        packages = [("default", n, rf.pack(n, read_folder(os.path.join(gen, n))), None)
                    for n in names]
        publish_all(urls[0], token, packages, args.publishers)
        rng = random.Random(args.seed)
        lock = []
        for i in range(args.agents):
            aid = f"agent-{i:04d}"
            rf.expect(rf.http("POST", f"{urls[0]}{API}/agents", token,
                              {"id": aid, "name": aid}), (201,), f"agent {aid}")
            for j, name in enumerate(rng.sample(names, args.assignments)):
                rf.expect(rf.http("PUT", f"{urls[0]}{API}/agents/{aid}/skills/default/{name}",
                                  token, {"priority": j}), (200,), "assign")
            tok = rf.expect(rf.http("POST", f"{urls[0]}{API}/agents/{aid}/tokens", token,
                                    {"name": "load"}), (201,), "token").json()["token"]
            lock.append((f"{API}/agents/{aid}/lock", tok))
        targets = os.path.join(work, "replicas-lock.tsv")
        write_targets(targets, lock)
        for u in urls:
            for path, tok in lock:
                rf.http("GET", f"{u}{path}", tok)

        def measure(row, replicas, writer=False):
            time.sleep(STATS_SETTLE_SECS)
            x0 = xact_commit(base, db)
            c0 = cache_counts(urls[0], token)
            stop = threading.Event()
            writes = [0]

            def write_loop():
                # A namespace policy write: scope `skills`, so every agent's
                # cached resolution is invalidated on every replica.
                while not stop.wait(args.write_every):
                    rf.expect(rf.http("PUT", f"{urls[0]}{API}/namespaces/default/policy", token,
                                      {"require_review": False, "require_signature": False}),
                              (200,), "policy write")
                    writes[0] += 1

            wt = threading.Thread(target=write_loop) if writer else None
            if wt:
                wt.start()
            results = []
            procs = []
            conns = max(1, args.connections // replicas)
            for u in urls[:replicas]:
                addr = urllib.parse.urlsplit(u).netloc
                procs.append(subprocess.Popen(
                    [bin_loadgen, "--get", targets, "--addr", addr, "--seconds",
                     str(args.seconds), "--connections", str(conns)],
                    stdout=subprocess.PIPE, text=True))
            for p in procs:
                out, _ = p.communicate()
                results.append(json.loads(out))
            stop.set()
            if wt:
                wt.join()
            time.sleep(STATS_SETTLE_SECS)
            x1 = xact_commit(base, db)
            c1 = cache_counts(urls[0], token)
            requests = sum(r["requests"] for r in results)
            d = lambda k: c1.get(k, 0) - c0.get(k, 0)  # noqa: E731
            r = {"rps": sum(r["rps"] for r in results),
                 "p50_ms": max(r["p50_ms"] for r in results),
                 "p99_ms": max(r["p99_ms"] for r in results),
                 "requests": requests, "xacts": x1 - x0,
                 "xact_per_request": (x1 - x0) / max(1, requests),
                 "writes": writes[0],
                 "agents_rebuilt": d(("agents", "rebuilt")),
                 "agents_shared": d(("agents", "shared")),
                 "agents_miss": d(("agents", "miss"))}
            rows[row] = r
            print(f"  replicas {row}: {r['rps']:.0f} req/s, p50 {r['p50_ms']:.2f} ms, p99 "
                  f"{r['p99_ms']:.2f} ms, {r['xact_per_request']:.3f} transactions/request "
                  f"({r['xacts']} for {requests}), writes {r['writes']}, agents cache on "
                  f"replica 0: {r['agents_miss']:.0f} misses, {r['agents_rebuilt']:.0f} "
                  f"rebuilt, {r['agents_shared']:.0f} shared", flush=True)

        measure("lock, 1 replica", 1)
        measure("lock, 2 replicas", 2)
        measure("lock + writes, 1 replica", 1, writer=True)
        measure("lock + writes, 2 replicas", 2, writer=True)
    finally:
        reps.stop()
    return rows


def replicas_table(rows):
    lines = ["| row | req/s | p50 ms | p99 ms | transactions/request | writes | "
             "agents misses (replica 0) | rebuilt | shared |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row, r in rows.items():
        lines.append(f"| {row} | {r['rps']:,.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | "
                     f"{r['xact_per_request']:.4f} | {r['writes']} | {r['agents_miss']:.0f} | "
                     f"{r['agents_rebuilt']:.0f} | {r['agents_shared']:.0f} |")
    return "\n".join(lines)


def table(all_results):
    labels = [r["backend"] for r in all_results]
    head = "| row | " + " | ".join(f"{b} req/s | p50 ms | p99 ms" for b in labels) + " |"
    lines = [head, "|" + "---|" * (1 + 3 * len(labels))]
    for row in ("catalog", "catalog 304", "lock", "lock 304", "files"):
        cells = []
        for r in all_results:
            x = r["rows"].get(row)
            cells += ([f"{x['rps']:,.0f}", f"{x['p50_ms']:.2f}", f"{x['p99_ms']:.2f}"]
                      if x else ["-", "-", "-"])
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    for row in ("publish generated", "publish corpus"):
        cells = []
        for r in all_results:
            x = r["rows"].get(row)
            cells += ([f"{x['rps']:,.1f}/s", f"{x['count']} in {x['seconds']:.1f} s",
                       ", ".join(f"{k}: {v}" for k, v in sorted(x["statuses"].items()))]
                      if x else ["-", "-", "-"])
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    cells = [c for r in all_results for c in (f"{r['server_peak_rss_mib']:.1f} MiB", "", "")]
    lines.append("| server peak RSS (`VmHWM`) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--postgres", action="store_true",
                    help="also run on PostgreSQL + S3 (scripts/registry-backends.sh)")
    ap.add_argument("--skills", type=int, default=300)
    ap.add_argument("--agents", type=int, default=200)
    ap.add_argument("--assignments", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--publishers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--binary")
    ap.add_argument("--loadgen")
    ap.add_argument("--corpus", default=common.DEFAULT_CORPUS,
                    help="the corpus of real skills ('' to skip the corpus publish; skipped when absent)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--replicas", action="store_true",
                    help="only: one replica against two on PostgreSQL + S3, and transactions "
                         "per request with and without writes")
    ap.add_argument("--write-every", type=float, default=0.05,
                    help="seconds between writes in the --replicas rows with writes")
    args = ap.parse_args()
    if bool(args.binary) != bool(args.loadgen):
        ap.error("give both --binary and --loadgen, or neither")
    binary, bin_loadgen = (args.binary, args.loadgen) if args.binary else build()
    binary, bin_loadgen = os.path.abspath(binary), os.path.abspath(bin_loadgen)
    load_before = os.getloadavg()
    print(f"registry_load: {args.skills} skills, {args.agents} agents x {args.assignments} "
          f"assignments, {args.connections} connections, {args.seconds:g} s per row; "
          f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} "
          f"on {os.cpu_count()} CPUs", flush=True)
    all_results = []
    replica_rows = None
    with tempfile.TemporaryDirectory(prefix="registry-load-") as work:
        os.chmod(work, 0o711)  # PostgreSQL (the postgres user) reaches its folder inside
        if not args.replicas:
            all_results.append(run_backend("sqlite", binary, bin_loadgen, args, work))
        if args.postgres or args.replicas:
            backends = os.path.join(work, "backends")
            subprocess.run(["bash", os.path.join(REPO, "scripts", "registry-backends.sh"),
                            "start", backends], check=True)
            try:
                env = {}
                with open(os.path.join(backends, "env")) as f:
                    for line in f:
                        k, _, v = line.removeprefix("export ").strip().partition("=")
                        env[k] = v
                os.environ.update({k: v for k, v in env.items() if k.startswith("AWS_")})
                base = env["SKILLDECK_REGISTRY_TEST_DATABASE_URL"].rsplit("/", 1)[0]
                if args.replicas:
                    replica_rows = run_replicas(binary, bin_loadgen, args, work, base,
                                                env["SKILLDECK_REGISTRY_TEST_STORE"])
                else:
                    subprocess.run([PSQL, f"{base}/postgres", "-qc", "CREATE DATABASE load"],
                                   check=True)
                    all_results.append(run_backend(
                        "postgres", binary, bin_loadgen, args, work,
                        database_url=f"{base}/load",
                        store=env["SKILLDECK_REGISTRY_TEST_STORE"] + "/load"))
            finally:
                subprocess.run(["bash", os.path.join(REPO, "scripts", "registry-backends.sh"),
                                "stop", backends])
    load_after = os.getloadavg()
    print()
    if all_results:
        print(table(all_results))
    if replica_rows:
        print(replicas_table(replica_rows))
    print()
    print(f"load average (1/5/15 min, `cat /proc/loadavg`): before {load_before[0]:.2f} "
          f"{load_before[1]:.2f} {load_before[2]:.2f}, after {load_after[0]:.2f} "
          f"{load_after[1]:.2f} {load_after[2]:.2f}; {os.cpu_count()} CPUs")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "load_before": load_before, "load_after": load_after,
                       "results": all_results, "replicas": replica_rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except rf.Failure as e:
        print(f"registry_load: {e}", file=sys.stderr)
        sys.exit(1)
