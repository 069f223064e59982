#!/usr/bin/env python3
"""`run_code` over MCP against a plain `python3 -c`, round trip, side by
side (issue 26).

    python3 bench/mcp_code.py                 # 200 calls each
    python3 bench/mcp_code.py --calls 500 --binary target/release/skilldeck

Python 3 standard library only (no MCP SDK). Starts
`skilldeck serve --exec --code --no-watch --root DIR` in an empty working
folder with a config file holding `[exec] enabled = true, sandbox =
"landlock"` and no skill, and times, in one session, each from the write of
the request to the read of its answer:

  - `tools/call run_code {"language": "python", "code": CODE}` (argument
    check, the conversation's work folder scanned before and after for its
    quota and `outputs/`, the native sandbox: Landlock, seccomp,
    namespaces, uid drop; `python3 -c CODE` in the work folder);
  - peer: `python3 -c CODE` spawned plainly from this client
    (`subprocess.run`: what a host without a sandbox or a protocol pays).

CODE prints 6*7. The same code each call: with `[exec] approval = "never"`
(the default) nothing is asked. Prints a Markdown table (p50, p99, the
ratio of the two) and the machine. Nothing is written into the repository.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_exec import DEFAULT_BINARY, pct, timed  # noqa: E402
import mcp_exec  # noqa: E402

CODE = "print(6*7)"

CONFIG = """[exec]
enabled = true
code = true
sandbox = "landlock"
"""


class Server(mcp_exec.Server):
    def __init__(self, binary, root, cwd, env):
        self.proc = subprocess.Popen(
            [binary, "serve", "--exec", "--code", "--no-watch", "--root", root],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=cwd, env=env)
        self.buf = b""
        self.next_id = 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "skills")
        os.makedirs(root)
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
        call = {"name": "run_code", "arguments": {"language": "python", "code": CODE}}
        first = server.request("tools/call", call).get("result", {})
        if first.get("isError") or not first.get("content"):
            sys.exit("run_code failed (is the native sandbox available here? python3 on "
                     "/usr/local/bin:/usr/bin:/bin?): " + json.dumps(first))
        assert first["content"][0]["text"].strip() == "42", first

        def code_call():
            r = server.request("tools/call", call)
            assert not r["result"].get("isError"), r

        def plain_python():
            out = subprocess.run(["python3", "-c", CODE], stdout=subprocess.PIPE, check=True,
                                 cwd=tmp, env={"PATH": "/usr/bin:/bin"})
            assert out.stdout.strip() == b"42"

        # Interleaved in rounds of 10 so drift on a shared machine hits both alike.
        code, plain = [], []
        for _ in range(max(1, args.calls // 10)):
            code += timed(code_call, 10)
            plain += timed(plain_python, 10)
        server.close()
    load = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}, "
          f"load average {load[0]:.2f}")
    print(f"command: python3 bench/mcp_code.py --calls {args.calls} --binary {args.binary}\n")
    print("| round trip | p50 ms | p99 ms | p50 vs plain python3 -c |")
    print("|---|---|---|---|")
    p50 = statistics.median(plain)
    for label, values in [("tools/call run_code python (native sandbox, MCP stdio)", code),
                          ("plain `python3 -c` spawned by the client (peer)", plain)]:
        m = statistics.median(values)
        print(f"| {label} | {m:.2f} | {pct(values, 99):.2f} | {m / p50:.2f}x |")


if __name__ == "__main__":
    main()
