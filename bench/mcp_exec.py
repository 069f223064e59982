#!/usr/bin/env python3
"""An MCP `tools/call` of a skill tool, round trip, over stdio (issue 12).

    python3 bench/mcp_exec.py                 # 200 calls each
    python3 bench/mcp_exec.py --calls 500 --binary target/release/skilldeck

Python 3 standard library only (no MCP SDK). Starts
`skilldeck serve --exec --no-watch --root DIR` in an empty working folder
with a config file holding `[exec] enabled = true, sandbox = "landlock"`
and one skill, `words`, whose `tools:` entry `lookup` runs
`scripts/lookup.sh` (reads the arguments JSON on stdin, prints a JSON
object). After `initialize` and `activate_skill words` it times, in one
session, each from the write of the request to the read of its answer:

  - `tools/call words__lookup` (validation, the native sandbox: Landlock,
    seccomp, namespaces, uid drop; the script runs in `sh`, its JSON stdout
    becomes structuredContent);
  - peer 1: `tools/call search_skills` in the same session (no process
    spawned: the protocol and server cost alone);
  - peer 2: the same script spawned plainly from this client with the same
    stdin (`subprocess.run(["sh", script])`: what a host without a sandbox
    or a protocol pays).

Prints a Markdown table (p50, p99, ratios against the peers) and the
machine. Nothing is written into the repository.
"""
import argparse
import json
import os
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
DEFAULT_BINARY = os.path.join(TARGET, "release", "skilldeck")
READ_TIMEOUT = 60.0

SKILL_MD = """---
name: words
description: Looks words up in a small dictionary. Use when the user asks what a word means.
tools:
  - name: lookup
    description: Look a word up.
    parameters:
      word: {type: string, required: true}
    run: scripts/lookup.sh
---
Call the words__lookup tool with the word.
"""

SCRIPT = """read -r args
printf '{"skill":"%s","args":%s}\\n' "$SKILLDECK_SKILL_NAME" "$args"
"""

CONFIG = """[exec]
enabled = true
sandbox = "landlock"
"""


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


class Server:
    def __init__(self, binary, root, cwd, env):
        self.proc = subprocess.Popen(
            [binary, "serve", "--exec", "--no-watch", "--root", root],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=cwd, env=env)
        self.buf = b""
        self.next_id = 0

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def read_line(self):
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.proc.stdout], [], [], READ_TIMEOUT)
            if not ready:
                raise RuntimeError("no answer from the server")
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise RuntimeError("the server closed stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self.read_line()
            if msg.get("id") == rid:
                return msg

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def timed(fn, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000.0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "skills")
        skill = os.path.join(root, "words")
        os.makedirs(os.path.join(skill, "scripts"))
        with open(os.path.join(skill, "SKILL.md"), "w") as f:
            f.write(SKILL_MD)
        script = os.path.join(skill, "scripts", "lookup.sh")
        with open(script, "w") as f:
            f.write(SCRIPT)
        cwd = os.path.join(tmp, "cwd")
        os.makedirs(cwd)
        with open(os.path.join(cwd, "skilldeck.toml"), "w") as f:
            f.write(CONFIG)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp,
               "XDG_CONFIG_HOME": os.path.join(tmp, "xdg"),
               "XDG_CACHE_HOME": os.path.join(tmp, "cache"), "RUST_LOG": "warn"}
        server = Server(args.binary, root, cwd, env)
        init = server.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "skilldeck-bench", "version": "0.1.0"}})
        assert "result" in init, init
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        act = server.request("tools/call", {"name": "activate_skill", "arguments": {"name": "words"}})
        assert not act["result"].get("isError"), act
        arguments = {"word": "kiwi"}
        first = server.request("tools/call", {"name": "words__lookup", "arguments": arguments})
        result = first.get("result", {})
        if result.get("isError"):
            sys.exit("the skill tool failed (is the native sandbox available here?): "
                     + json.dumps(result))
        assert result["structuredContent"] == {"skill": "words", "args": arguments}, result

        def tool_call():
            r = server.request("tools/call", {"name": "words__lookup", "arguments": arguments})
            assert not r["result"].get("isError"), r

        def search_call():
            server.request("tools/call", {"name": "search_skills", "arguments": {"query": "word"}})

        stdin = json.dumps(arguments).encode() + b"\n"

        def plain_spawn():
            subprocess.run(["sh", script], input=stdin, stdout=subprocess.PIPE, check=True,
                           env={"PATH": "/usr/bin:/bin", "SKILLDECK_SKILL_NAME": "words"})

        # Interleaved in rounds of 10 so drift on a shared machine hits all alike.
        tool, search, plain = [], [], []
        for _ in range(max(1, args.calls // 10)):
            tool += timed(tool_call, 10)
            search += timed(search_call, 10)
            plain += timed(plain_spawn, 10)
        server.close()
    load = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}, "
          f"load average {load[0]:.2f}")
    print(f"command: python3 bench/mcp_exec.py --calls {args.calls}\n")
    print("| round trip | p50 ms | p99 ms | p50 vs search_skills | p50 vs plain spawn |")
    print("|---|---|---|---|---|")
    s50, p50 = statistics.median(search), statistics.median(plain)
    for label, values in [("tools/call words__lookup (native sandbox)", tool),
                          ("tools/call search_skills (peer: no spawn)", search),
                          ("plain spawn of the script from the client (peer)", plain)]:
        m = statistics.median(values)
        print(f"| {label} | {m:.2f} | {pct(values, 99):.2f} | {m / s50:.1f}x | {m / p50:.1f}x |")


if __name__ == "__main__":
    main()
