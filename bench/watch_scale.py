#!/usr/bin/env python3
"""Hot reload on a hostile tree: `skilldeck serve --http` on a root of
200,000 empty folders plus three skills, one of which holds a symlink to `/`
(`assets/rootfs -> /`). Shows that the server holds at most the watch budget
of inotify watches (here: none, it polls), logs one warning, and still
notices an edit to a SKILL.md; measures how long the edit takes to reach
`tools/list`, and the CPU the server spends polling while idle.

Usage: bench/watch_scale.py [--folders N] [--binary PATH] [--edits K]
                            [--idle SECONDS] [--watch-budget B]

Builds the release binary unless --binary is given. Everything lives in a
throwaway folder, on loopback, and is removed at the end.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PROTOCOL = "2025-11-25"


def build():
    common.build("skilldeck-cli")
    return common.SKILLDECK


def post(url, body, session=None):
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = PROTOCOL
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.headers.get("mcp-session-id"), r.read().decode()


def tools_description(url, session, rid):
    _, text = post(url, {"jsonrpc": "2.0", "id": rid, "method": "tools/list"}, session)
    for line in text.splitlines():
        if line.startswith("data:") and '"result"' in line:
            tools = json.loads(line[5:])["result"]["tools"]
            return next(t["description"] for t in tools if t["name"] == "activate_skill")
    raise SystemExit(f"no tools/list answer: {text[:200]}")


def inotify_watches(pid):
    """inotify watches held by process `pid` (all its inotify instances)."""
    total = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                total += sum(1 for line in f if line.startswith("inotify wd:"))
        except OSError:
            pass
    return total


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def skill_md(name, marker):
    return (f"---\nname: {name}\ndescription: Does {name} things ({marker}). "
            f"Use when testing.\n---\n# {name}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folders", type=int, default=200_000)
    ap.add_argument("--edits", type=int, default=5)
    ap.add_argument("--idle", type=float, default=20)
    ap.add_argument("--watch-budget", type=int)
    ap.add_argument("--binary")
    args = ap.parse_args()
    binary = args.binary or build()

    tmp = tempfile.mkdtemp(prefix="skilldeck-watch-")
    server = None
    try:
        root = os.path.join(tmp, "skills")
        t = time.perf_counter()
        per = 500
        for i in range(args.folders):
            os.makedirs(os.path.join(root, f"d{i // per:04d}", f"e{i % per:03d}"))
        made = time.perf_counter() - t
        names = ["aa-one", "aa-two", "aa-three"]
        for name in names:
            os.makedirs(os.path.join(root, name, "assets"))
            with open(os.path.join(root, name, "SKILL.md"), "w") as f:
                f.write(skill_md(name, "v0"))
        os.symlink("/", os.path.join(root, "aa-one", "assets", "rootfs"))
        print(f"# {args.folders:,} empty folders (+{args.folders // per} parents) and "
              f"{len(names)} skills, aa-one/assets/rootfs -> / ({made:.0f} s to make)")

        cmd = [binary, "serve", "--root", root, "--http", "127.0.0.1:0"]
        if args.watch_budget is not None:
            cmd += ["--watch-budget", str(args.watch_budget)]
        env = dict(os.environ, RUST_LOG="info")
        started = time.perf_counter()
        server = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                  text=True, env=env)
        log = []
        m = None
        while m is None:
            line = server.stderr.readline()
            if not line:
                raise SystemExit(f"serve did not start: {''.join(log)}")
            log.append(line)
            m = re.search(r"http://([\d.]+):(\d+)/mcp", line)
        url = f"http://{m.group(1)}:{m.group(2)}/mcp"
        watching = threading.Event()

        def drain():
            for l in server.stderr:
                log.append(l)
                if "watching skill roots" in l:
                    watching.set()
        threading.Thread(target=drain, daemon=True).start()
        if any("watching skill roots" in l for l in log):
            watching.set()
        if not watching.wait(300):
            raise SystemExit("the watcher did not start within 300 s")
        ready = time.perf_counter() - started
        sid, _ = post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                            "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                                       "clientInfo": {"name": "watch", "version": "0"}}})
        post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
        watches = inotify_watches(server.pid)
        warnings = [l.strip() for l in log if "WARN" in l and "hot reload" in l]
        print(f"watcher up {ready:.1f} s after start; inotify watches held: {watches}; "
              f"hot-reload warnings: {len(warnings)}")
        for w in warnings:
            print(f"  {re.sub(r'^.*?WARN', 'WARN', w)[:300]}")

        rid, delays = 1, []
        for k in range(1, args.edits + 1):
            name = names[k % len(names)]
            marker = f"v{k}-{int(time.time() * 1000)}"
            with open(os.path.join(root, name, "SKILL.md"), "w") as f:
                f.write(skill_md(name, marker))
            edited = time.perf_counter()
            while True:
                rid += 1
                if marker in tools_description(url, sid, rid):
                    delays.append(time.perf_counter() - edited)
                    break
                if time.perf_counter() - edited > 120:
                    delays.append(float("inf"))
                    break
                time.sleep(0.1)
            print(f"edit {k} ({name}/SKILL.md): seen in tools/list after {delays[-1]:.2f} s")
            time.sleep(1.3)  # edits at different phases of the poll period

        cpu0 = cpu_seconds(server.pid)
        time.sleep(args.idle)
        idle_cpu = (cpu_seconds(server.pid) - cpu0) / args.idle
        finite = sorted(d for d in delays if d != float("inf"))
        print(f"edits noticed: {len(finite)}/{len(delays)}; delay min {finite[0]:.2f} s, "
              f"median {finite[len(finite) // 2]:.2f} s, max {finite[-1]:.2f} s"
              if finite else "no edit noticed")
        print(f"inotify watches at the end: {inotify_watches(server.pid)}; server CPU while "
              f"idle (polling): {idle_cpu * 100:.1f}% of one core over {args.idle:.0f} s")
        warnings = [l for l in log if "WARN" in l and "hot reload" in l]
        print(f"hot-reload warnings in the whole run: {len(warnings)}")
        if len(finite) != len(delays):
            sys.exit(1)
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
