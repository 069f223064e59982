#!/usr/bin/env python3
"""Load on `skilldeck serve --http`: `tools/call activate_skill` from many
connections, reported as requests/s and p50/p99 latency.

Usage: bench/load_http.py [--skills N] [--connections C] [--sessions S]
                          [--seconds T] [--client loadgen|python] [--processes P]
                          [--churn-bursts B] [--churn-size K] [--idle SECONDS]

Builds the release binary, generates N skills with bench/lib/gen_skills.py
into a throwaway folder, starts `skilldeck serve --http 127.0.0.1:0` on them,
opens S MCP sessions, then runs two loads of T seconds each:

  keep-alive     C connections, each reusing its socket, spread over the S
                 sessions, every request with an id unique in its session;
  new connection the same, but each request on a fresh connection.

The load generator is `bench/loadgen` (a compiled Rust client in this
workspace, built with the server: tokio, raw HTTP/1.1, one request in flight
per connection, a JSON-RPC id unique per request, JSON report with
percentiles and its own CPU time). `oha` (crates.io) was the first choice,
but it sends one fixed body: every request would carry the same JSON-RPC id,
which the server rightly refuses while a request with that id is in flight
in the same session (see docs/design.md), so it cannot drive this load.
`--client python` keeps the first version's asyncio client (P processes)
for comparison: it costs several times the CPU per request.

Besides requests/s and latency, each load reports the CPU seconds the
server and the client used (from /proc), so a row says who was the limit
on a machine where both share the cores.
"""
import argparse
import asyncio
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PROTOCOL = "2025-11-25"


def build():
    common.build("skilldeck-cli", "skilldeck-loadgen")
    return common.SKILLDECK, os.path.join(common.RELEASE, "loadgen")


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` (and its reaped children)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_compiled(loadgen, host, port, skills, connections, sessions, seconds, keep_alive):
    out = subprocess.run([loadgen, "--addr", f"{host}:{port}", "--connections",
                          str(connections), "--sessions", str(sessions), "--seconds",
                          str(seconds), "--mode", "keep-alive" if keep_alive else "new",
                          "--skills", ",".join(skills)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def post(url, body, session=None):
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = PROTOCOL
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(req) as r:
        return r.headers.get("mcp-session-id"), r.read()


def open_session(url):
    sid, _ = post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                        "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                                   "clientInfo": {"name": "load", "version": "0"}}})
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    return sid


def rss_mb(pid):
    kib = common.proc_status_kib(pid, "VmRSS")
    return float("nan") if kib is None else kib / 1024


async def read_response(reader):
    """One HTTP/1.1 response; returns the status and the body bytes."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    lower = head.lower()
    m = re.search(rb"content-length:\s*(\d+)", lower)
    if m:
        return status, await reader.readexactly(int(m.group(1)))
    if b"transfer-encoding: chunked" in lower:
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return status, bytes(body)
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    return status, await reader.read()


def request_bytes(host, port, session, rid, skill, keep_alive):
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": "activate_skill",
                                  "arguments": {"name": skill}}}).encode()
    conn = "keep-alive" if keep_alive else "close"
    return (f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: {conn}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: {PROTOCOL}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def worker(host, port, session, prefix, skills, deadline, keep_alive, lat, errors):
    n = 0
    reader = writer = None
    while time.perf_counter() < deadline:
        n += 1
        rid = f"{prefix}-{n}"
        msg = request_bytes(host, port, session, rid, skills[n % len(skills)], keep_alive)
        t0 = time.perf_counter()
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection(host, port)
            writer.write(msg)
            status, body = await read_response(reader)
            ok = status == 200 and f'"id":"{rid}"'.encode() in body and b'"result"' in body
        except (OSError, asyncio.IncompleteReadError, ValueError):
            ok = False
            writer = None
        lat.append(time.perf_counter() - t0)
        if not ok:
            errors[0] += 1
        if not keep_alive and writer is not None:
            writer.close()
            writer = None
    if writer is not None:
        writer.close()


def run_process(args):
    host, port, sessions, skills, first, count, seconds, keep_alive, queue = args
    lat, errors = [], [0]

    async def main():
        deadline = time.perf_counter() + seconds
        await asyncio.gather(*[
            worker(host, port, sessions[(first + i) % len(sessions)], f"c{first + i}",
                   skills, deadline, keep_alive, lat, errors)
            for i in range(count)])

    asyncio.run(main())
    queue.put((lat, errors[0]))


def load(host, port, sessions, skills, connections, seconds, processes, keep_alive):
    queue = multiprocessing.Queue()
    per = [connections // processes + (1 if i < connections % processes else 0)
           for i in range(processes)]
    procs, first = [], 0
    for count in per:
        p = multiprocessing.Process(target=run_process, args=(
            (host, port, sessions, skills, first, count, seconds, keep_alive, queue),))
        first += count
        p.start()
        procs.append(p)
    lat, errors = [], 0
    for _ in procs:
        l, e = queue.get()
        lat += l
        errors += e
    for p in procs:
        p.join()
    lat.sort()
    pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else float("nan")
    return len(lat) / seconds, pct(0.50), pct(0.90), pct(0.99), errors, len(lat)


def churn(url, pid, bursts, per_burst):
    """Opens and closes (DELETE) sessions in bursts; returns RSS after."""
    for _ in range(bursts):
        for _ in range(per_burst):
            sid = open_session(url)
            req = urllib.request.Request(url, method="DELETE", headers={
                "Mcp-Session-Id": sid, "MCP-Protocol-Version": PROTOCOL})
            try:
                urllib.request.urlopen(req).read()
            except urllib.error.HTTPError:
                pass
    return rss_mb(pid)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skills", type=int, default=100)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--churn-bursts", type=int, default=8)
    ap.add_argument("--churn-size", type=int, default=2000)
    ap.add_argument("--client", choices=["loadgen", "python"], default="loadgen")
    ap.add_argument("--idle", type=float, default=10,
                    help="seconds to wait after the churn before the last RSS reading")
    ap.add_argument("--binary", help="a built skilldeck to measure (default: build this checkout)")
    ap.add_argument("--loadgen", help="a built bench/loadgen (default: build this checkout)")
    args = ap.parse_args()

    if args.binary and args.loadgen:
        binary, loadgen = args.binary, args.loadgen
    else:
        built = build()
        binary, loadgen = args.binary or built[0], args.loadgen or built[1]
    tmp = tempfile.mkdtemp(prefix="skilldeck-load-")
    server = None
    try:
        root = os.path.join(tmp, "skills")
        common.generate(args.skills, root)
        skills = sorted(os.listdir(root))
        env = dict(os.environ, RUST_LOG="warn")
        server = subprocess.Popen([binary, "serve", "--root", root, "--http", "127.0.0.1:0"],
                                  stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                  text=True, env=env)
        line = server.stderr.readline()
        m = re.search(r"http://([\d.]+):(\d+)/mcp", line)
        if not m:
            raise SystemExit(f"serve did not start: {line}")
        host, port = m.group(1), int(m.group(2))
        # Keep draining stderr so the server never blocks on it.
        import threading
        threading.Thread(target=server.stderr.read, daemon=True).start()
        url = f"http://{host}:{port}/mcp"
        rss_start = rss_mb(server.pid)
        client = ("loadgen (compiled, 1 thread)" if args.client == "loadgen"
                  else f"{args.processes} asyncio processes")
        print(f"# {os.cpu_count()} cores; {args.skills} skills; {args.connections} "
              f"connections over {args.sessions} sessions; {args.seconds:.0f} s per load; "
              f"client: {client}")
        print()
        print("| load | requests/s | p50 | p90 | p99 | errors | requests "
              "| server CPU | client CPU |")
        print("|---|---|---|---|---|---|---|---|---|")
        results = {}
        for name, keep in (("keep-alive", True), ("new connection per request", False)):
            server_cpu = cpu_seconds(server.pid)
            if args.client == "loadgen":
                r = load_compiled(loadgen, host, port, skills, args.connections,
                                  args.sessions, args.seconds, keep)
                rps, p50, p90, p99 = r["rps"], r["p50_ms"], r["p90_ms"], r["p99_ms"]
                errors, n, client_cpu = r["errors"], r["requests"], r["client_cpu_s"]
            else:
                sessions = [open_session(url) for _ in range(args.sessions)]
                before = os.times()
                rps, p50, p90, p99, errors, n = load(host, port, sessions, skills,
                                                     args.connections, args.seconds,
                                                     args.processes, keep)
                after = os.times()
                client_cpu = (after.children_user + after.children_system
                              - before.children_user - before.children_system)
            server_cpu = cpu_seconds(server.pid) - server_cpu
            results[name] = dict(rps=rps, p50=p50, p90=p90, p99=p99, errors=errors, n=n,
                                 server_cpu=server_cpu, client_cpu=client_cpu)
            print(f"| {name} | {rps:,.0f} | {p50:.1f} ms | {p90:.1f} ms | {p99:.1f} ms "
                  f"| {errors} | {n:,} | {server_cpu:.1f} s | {client_cpu:.1f} s |")
        rss_load = rss_mb(server.pid)
        print()
        if args.churn_bursts:
            bursts = []
            for _ in range(args.churn_bursts):
                bursts.append(churn(url, server.pid, 1, args.churn_size))
            after = bursts[-1]
            time.sleep(args.idle)
            idle = rss_mb(server.pid)
            print(f"RSS: start {rss_start:.1f} MB, after the loads {rss_load:.1f} MB, after "
                  f"{args.churn_bursts * args.churn_size:,} sessions churned in bursts of "
                  f"{args.churn_size:,} {after:.1f} MB (after each burst: "
                  f"{', '.join(f'{b:.1f}' for b in bursts)}), {args.idle:.0f} s later "
                  f"{idle:.1f} MB")
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
