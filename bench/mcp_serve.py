#!/usr/bin/env python3
"""`skilldeck serve` over stdio, measured from outside: start-up and
`tools/call` round trips with N skills loaded.

    python3 bench/mcp_serve.py                         # N = 10,000, 7 runs, 2,000 calls
    python3 bench/mcp_serve.py --skills 1000 --runs 5 --calls 500
    python3 bench/mcp_serve.py --markdown /tmp/mcp.md  # also write the table to a file

Python 3 standard library only: no MCP SDK, so the figures are the server's
(plus one pipe round trip, measured on its own as `cat`), not a client
library's. The client writes newline-delimited JSON-RPC to the server's stdin
and reads its stdout, one request at a time.

What it does (page cache warm throughout; every process runs in an empty
working directory with HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME pointed at
empty temp folders, so no user or project skills and no config are found):

 1. generates N skills with bench/lib/gen_skills.py into a temp folder
    (removed afterwards) and runs `skilldeck list` once to warm the cache;
 2. discovery: min / median of R whole-process runs of
    `skilldeck list --format json --root DIR` (stdout to /dev/null), the
    figure bench/run reports as discovery, interleaved with the runs of 3
    so that drift on a shared machine hits both alike;
 3. server start to first answer: R spawns of
    `skilldeck serve --root DIR --no-watch`, timed from spawn to the
    response to the first request, both with `initialize` (protocol
    2025-11-25) and with `server/discover` (2026-07-28: protocol version,
    client info and capabilities in `_meta`); and --watch-runs spawns with
    the watcher on (it registers an inotify watch on every folder).
    The server's own "skills loaded" log line (elapsed_ms) splits the time;
 4. round trips after the `initialize` handshake, in one session, each timed
    from the write of the request to the read of its response:
    (a) `activate_skill`, C distinct skills (names from
        `skilldeck list --format json`, since the tool's `name` enum stops at
        1,000): first activation, SKILL.md read from the page cache;
    (b) C calls over the last 100 skills of (a), same session: the short
        "already active" notice (the tracker remembers 128 skills per
        conversation, so a longer cycle would get bodies again);
    (c) C calls over the same 100 skills, each with a new conversation
        (`_meta: {"dev.skilldeck/conversation": "<unique id>"}`): the body
        rendered from the server's activation cache (256 entries);
    and, briefly, `ping`, `tools/list`, `search_skills`, and a `cat` echo
    of an activate request line (the pipe and this client's own cost);
 5. peak RSS of that server (VmHWM in /proc/PID/status, read before it is
    shut down by closing its stdin);
 6. prints a Markdown report (machine, command, figures, targets from issue
    5: start to first answer <= 2x discovery, activate round trip p50 <= 1 ms).

Nothing is written into the repository unless --markdown FILE says so. The
server logs at its default level (info: one line per tool call, to a temp
file); --rust-log sets RUST_LOG for it.
"""
import argparse
import json
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import common  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
DEFAULT_BINARY = os.path.join(TARGET, "release", "skilldeck")

PROTOCOL_OLD = "2025-11-25"
PROTOCOL_NEW = "2026-07-28"
CLIENT_INFO = {"name": "skilldeck-bench", "version": "0.1.0"}
CONVERSATION_KEY = "dev.skilldeck/conversation"
CACHED_SET = 100  # skills cycled through in (b) and (c): the tracker keeps 128 per conversation, the cache 256 bodies
READ_TIMEOUT = 120.0


log = common.log
ms = common.ms


def us(s):
    return f"{s * 1e6:,.0f} µs" if s < 1e-3 else f"{s * 1e3:,.2f} ms"


def pct(sorted_values, p):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, -(-p * len(sorted_values) // 100) - 1))
    return sorted_values[int(k)]


class Server:
    """One `skilldeck serve` process on pipes; requests one at a time."""

    def __init__(self, cmd, env, cwd, stderr_path):
        self.stderr_path = stderr_path
        self._err = open(stderr_path, "wb")
        self.t_spawn = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._err, env=env, cwd=cwd, bufsize=0)
        self.fin = self.proc.stdin.fileno()
        self.fout = self.proc.stdout.fileno()
        self.buf = b""
        self.next_id = 0

    def request_bytes(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        return self.next_id, (json.dumps(msg, separators=(",", ":")) + "\n").encode()

    def send(self, data):
        view = memoryview(data)
        while view:
            n = os.write(self.fin, view)
            view = view[n:]

    def read_line(self):
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 1:]
                return line
            r, _, _ = select.select([self.fout], [], [], READ_TIMEOUT)
            if not r:
                raise TimeoutError(f"no answer within {READ_TIMEOUT:.0f} s; server log ends:\n{self.log_tail()}")
            chunk = os.read(self.fout, 1 << 20)
            if not chunk:
                raise EOFError(f"server closed stdout (exit {self.proc.wait()}); its log ends:\n{self.log_tail()}")
            self.buf += chunk

    def log_tail(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read()[-2000:].decode("utf-8", "replace")
        except OSError:
            return "(no log)"

    def round_trip(self, data, rid):
        """(seconds from write to the matching response, parsed response)."""
        t0 = time.perf_counter()
        self.send(data)
        line = self.read_line()
        t1 = time.perf_counter()
        msg = json.loads(line)
        while msg.get("id") != rid:  # a notification or a stray message: keep reading
            line = self.read_line()
            t1 = time.perf_counter()
            msg = json.loads(line)
        return t1 - t0, msg

    def call(self, method, params=None):
        rid, data = self.request_bytes(method, params)
        return self.round_trip(data, rid)

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send((json.dumps(msg) + "\n").encode())

    def vm(self, key):
        kib = common.proc_status_kib(self.proc.pid, key)
        return None if kib is None else kib * 1024

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self._err.close()


def initialize_params():
    return {"protocolVersion": PROTOCOL_OLD, "capabilities": {}, "clientInfo": CLIENT_INFO}


def discover_params():
    return {"_meta": {"io.modelcontextprotocol/protocolVersion": PROTOCOL_NEW,
                      "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                      "io.modelcontextprotocol/clientCapabilities": {}}}


def check(msg, what):
    if "error" in msg:
        sys.exit(f"{what} failed: {json.dumps(msg['error'])[:500]}")
    return msg["result"]


LOG_TS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z")


def server_log_split(path):
    """From the server's stderr: (discovery + snapshot ms as it logs it,
    seconds from "skills loaded" to "watching skill roots" or None)."""
    loaded_ms, t_loaded, t_watch = None, None, None
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return None, None
    for line in text.splitlines():
        m = LOG_TS.match(line)
        ts = datetime.fromisoformat(m.group(1)[:26]).timestamp() if m else None
        if "skills loaded" in line:
            e = re.search(r"elapsed_ms=(\d+)", line)
            loaded_ms = int(e.group(1)) if e else None
            t_loaded = ts
        elif "watching skill roots" in line:
            t_watch = ts
    watch = (t_watch - t_loaded) if (t_watch is not None and t_loaded is not None) else None
    return loaded_ms, watch


def start_once(cmd, env, cwd, errlog, first):
    """Seconds from spawn to the first answer, and the server's log split."""
    srv = Server(cmd, env, cwd, errlog)
    if first == "initialize":
        rid, data = srv.request_bytes("initialize", initialize_params())
    else:
        rid, data = srv.request_bytes("server/discover", discover_params())
    srv.send(data)  # queued in the pipe while the server discovers
    line = srv.read_line()
    elapsed = time.perf_counter() - srv.t_spawn
    msg = json.loads(line)
    if msg.get("id") != rid:
        sys.exit(f"unexpected first message: {line[:300]!r}")
    result = check(msg, first)
    srv.close()
    loaded_ms, watch = server_log_split(errlog)
    return elapsed, result, loaded_ms, watch


def timed_list(binary, root, runs, env, cwd):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen([binary, "list", "--format", "json", "--root", root],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        _, status, _ = os.wait4(p.pid, 0)
        times.append(time.perf_counter() - t0)
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            sys.exit("skilldeck list failed")
    return times


def stats(values):
    v = sorted(values)
    return {"n": len(v), "min": v[0], "p50": pct(v, 50), "p90": pct(v, 90), "p99": pct(v, 99),
            "max": v[-1], "mean": statistics.fmean(v)}


def text_of(result):
    return "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def activate_series(srv, names, conversation=None, expect=None):
    """Round-trip times of activate_skill for each name (one session)."""
    times = []
    for i, name in enumerate(names):
        params = {"name": "activate_skill", "arguments": {"name": name}}
        if conversation is not None:
            params["_meta"] = {CONVERSATION_KEY: f"{conversation}-{i}"}
        dt, msg = srv.call("tools/call", params)
        result = check(msg, f"activate_skill {name}")
        if result.get("isError"):
            sys.exit(f"activate_skill {name}: tool error: {text_of(result)[:300]}")
        if expect is not None:
            expect(name, text_of(result))
        times.append(dt)
    return times


def machine():
    cpu = open("/proc/cpuinfo").read()
    model = re.search(r"model name\s*:\s*(.*)", cpu)
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip() or str(os.cpu_count())
    return f"{nproc} cores ({model.group(1).strip() if model else 'unknown CPU'}), Linux {os.uname().release}"


def echo_floor(sample_line, calls, cwd):
    """Round trips of one request-sized line through `cat`: the pipe plus this client."""
    srv = Server(["cat"], dict(os.environ), cwd, os.devnull)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        srv.send(sample_line)
        srv.read_line()
        times.append(time.perf_counter() - t0)
    srv.close()
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skills", type=int, default=10_000, help="skills to generate (default 10,000)")
    ap.add_argument("--runs", type=int, default=7, help="runs of each start-up figure (at least 5; default 7)")
    ap.add_argument("--calls", type=int, default=2_000, help="tools/call round trips per series (default 2,000)")
    ap.add_argument("--watch-runs", type=int, default=1, help="server starts with the watcher on (default 1)")
    ap.add_argument("--binary", default=DEFAULT_BINARY, help=f"skilldeck binary (default {DEFAULT_BINARY})")
    ap.add_argument("--markdown", metavar="FILE", help="also write the report to FILE")
    ap.add_argument("--rust-log", metavar="FILTER", help="RUST_LOG for the server (default: unset, the server logs at info)")
    args = ap.parse_args()
    if args.runs < 5:
        sys.exit("--runs must be at least 5")
    if args.calls < 1 or args.skills < 1:
        sys.exit("--calls and --skills must be positive")
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: build it with `cargo build --release -p skilldeck-cli` or pass --binary")

    work = tempfile.mkdtemp(prefix="skilldeck-mcpbench-")
    try:
        return run(args, binary, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, binary, work):
    n, runs, calls = args.skills, args.runs, args.calls
    skills = os.path.join(work, "skills")
    cwd = os.path.join(work, "cwd")
    env = dict(os.environ)
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        d = os.path.join(work, key.lower())
        os.makedirs(d)
        env[key] = d
    os.makedirs(cwd)
    env.pop("RUST_LOG", None)
    if args.rust_log:
        env["RUST_LOG"] = args.rust_log
    logs = os.path.join(work, "logs")
    os.makedirs(logs)

    log(f"generating {n:,} skills ...")
    common.generate(n, skills)
    listed = subprocess.run([binary, "list", "--format", "json", "--root", skills],
                            capture_output=True, text=True, env=env, cwd=cwd)  # also warms the page cache
    entries = json.loads(listed.stdout)
    if len(entries) != n:
        log(f"note: skilldeck list found {len(entries)} skills, not {n}")
    names = [e["name"] for e in entries if e.get("model_invocable", True)]
    subprocess.run([binary, "list", "--root", skills], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env, cwd=cwd)

    log("discovery (skilldeck list) and server start to first answer, interleaved ...")
    serve = [binary, "serve", "--root", skills]
    list_times = []
    starts = {"initialize": [], "server/discover": []}
    loaded = {"initialize": [], "server/discover": []}
    for i in range(runs):
        list_times += timed_list(binary, skills, 1, env, cwd)
        for first in starts:
            t, _, loaded_ms, _ = start_once(serve + ["--no-watch"], env, cwd,
                                            os.path.join(logs, f"start-{i}.log"), first)
            starts[first].append(t)
            if loaded_ms is not None:
                loaded[first].append(loaded_ms / 1e3)
    disc = stats(list_times)
    watched, watch_split, watch_loaded = [], [], []
    for i in range(args.watch_runs):
        t, _, loaded_ms, wsplit = start_once(serve, env, cwd, os.path.join(logs, f"watch-{i}.log"), "initialize")
        watched.append(t)
        if wsplit is not None:
            watch_split.append(wsplit)
        if loaded_ms is not None:
            watch_loaded.append(loaded_ms / 1e3)
    log("round trips ...")
    errlog = os.path.join(logs, "session.log")
    srv = Server(serve + ["--no-watch"], env, cwd, errlog)
    _, msg = srv.call("initialize", initialize_params())
    check(msg, "initialize")
    srv.notify("notifications/initialized")

    # tools/list: the catalog description and the name enum.
    tl = []
    for _ in range(max(20, min(200, calls // 10))):
        dt, msg = srv.call("tools/list", {})
        tl.append(dt)
    tools = check(msg, "tools/list")["tools"]
    tools_list_bytes = len(json.dumps(msg))
    act = next(t for t in tools if t["name"] == "activate_skill")
    enum = act["inputSchema"]["properties"]["name"].get("enum")

    pings = []
    for _ in range(max(20, min(500, calls // 4))):
        dt, msg = srv.call("ping", {})
        pings.append(dt)

    pick = [names[(i * 7919) % len(names)] for i in range(min(calls, len(names)))]
    if calls > len(names):
        log(f"note: only {len(names)} distinct skills for {calls} first activations; using {len(names)}")
    bodies = []

    def is_body(name, text):
        if "<skill_content" not in text and len(text) < 200:
            sys.exit(f"activate_skill {name}: expected the instructions, got {text[:200]!r}")
        bodies.append(len(text))

    def is_notice(name, text):
        if len(text) > 1000 or "already-active" not in text:
            sys.exit(f"activate_skill {name}: expected the short notice, got {len(text)} chars")

    log(f"  (a) {len(pick):,} first activations ...")
    first = activate_series(srv, pick, expect=is_body)
    body_chars = statistics.median(bodies)
    # The tracker remembers 128 skills per conversation and the content
    # cache 256 bodies: (b) and (c) cycle over the last 100 of (a).
    hot = pick[-CACHED_SET:]
    cycle = [hot[i % len(hot)] for i in range(calls)]
    log(f"  (b) {calls:,} repeated activations ...")
    again = activate_series(srv, cycle, expect=is_notice)
    bodies.clear()
    log(f"  (c) {calls:,} cached activations in fresh conversations ...")
    cached = activate_series(srv, cycle, conversation=f"bench-{os.getpid()}", expect=is_body)

    queries = ["deploy kubernetes", "pdf report audit", "summarize invoice csv", "nothing-matches-this"]
    searches = []
    for i in range(max(20, min(500, calls // 4))):
        dt, msg = srv.call("tools/call", {"name": "search_skills", "arguments": {"query": queries[i % len(queries)]}})
        r = check(msg, "search_skills")
        if r.get("isError"):
            sys.exit(f"search_skills: {text_of(r)[:300]}")
        searches.append(dt)

    hwm, rss = srv.vm("VmHWM"), srv.vm("VmRSS")
    srv.close()
    sample = srv.request_bytes("tools/call", {"name": "activate_skill", "arguments": {"name": pick[0]}})[1]
    echo = echo_floor(sample, max(200, min(2000, calls)), cwd)

    # ---- report
    s_init, s_disc = stats(starts["initialize"]), stats(starts["server/discover"])
    a, b, c = stats(first), stats(again), stats(cached)
    ratio = s_init["p50"] / disc["p50"]
    ratio_d = s_disc["p50"] / disc["p50"]
    cmd = "python3 bench/mcp_serve.py" + "".join(
        f" --{k} {v}" for k, v in (("skills", n), ("runs", runs), ("calls", calls)))
    if args.watch_runs != 1:
        cmd += f" --watch-runs {args.watch_runs}"
    if args.rust_log:
        cmd += f" --rust-log {args.rust_log}"
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    out = []
    out.append(f"Machine: {machine()}. Command: `{cmd}` ({version}, "
               f"{datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}). Page cache warm; "
               f"server log level {args.rust_log or 'info (default)'}; {len(entries):,} skills loaded.\n")
    out.append("#### Start-up (whole process, min / median)\n")
    out.append("| what | runs | min | median | median / discovery | server's own \"skills loaded\" (median) |")
    out.append("|---|---|---|---|---|---|")
    out.append(f"| discovery: `skilldeck list --format json --root DIR` | {disc['n']} | {ms(disc['min'])} | {ms(disc['p50'])} | 1.00× | |")

    def lmed(v):
        return ms(statistics.median(v)) if v else "n/a"
    out.append(f"| `serve --no-watch`, spawn to `initialize` answer ({PROTOCOL_OLD}) | {s_init['n']} | {ms(s_init['min'])} | {ms(s_init['p50'])} | **{ratio:.2f}×** | {lmed(loaded['initialize'])} |")
    out.append(f"| `serve --no-watch`, spawn to `server/discover` answer ({PROTOCOL_NEW}) | {s_disc['n']} | {ms(s_disc['min'])} | {ms(s_disc['p50'])} | **{ratio_d:.2f}×** | {lmed(loaded['server/discover'])} |")
    if watched:
        w = stats(watched)
        extra = f"; watcher set-up {lmed(watch_split)} (log timestamps)" if watch_split else ""
        out.append(f"| `serve` (watching), spawn to `initialize` answer | {w['n']} | {ms(w['min'])} | {ms(w['p50'])} | {w['p50'] / disc['p50']:.2f}× | {lmed(watch_loaded)}{extra} |")
    out.append("")
    out.append(f"#### Round trips over stdio, one session, {len(entries):,} skills (write of the request to read of its response)\n")
    out.append("| request | calls | p50 | p90 | p99 | max | mean |")
    out.append("|---|---|---|---|---|---|---|")

    def row(label, st):
        out.append(f"| {label} | {st['n']:,} | {us(st['p50'])} | {us(st['p90'])} | {us(st['p99'])} | {us(st['max'])} | {us(st['mean'])} |")
    row(f"`activate_skill` (a) first activation, {len(pick):,} distinct skills (body median {body_chars:,.0f} chars)", a)
    row(f"`activate_skill` (b) repeated in the session: the short notice ({min(CACHED_SET, len(hot))} skills in turn)", b)
    row(f"`activate_skill` (c) fresh conversation per call (`_meta` `{CONVERSATION_KEY}`), {min(CACHED_SET, len(hot))} cached skills", c)
    row("`search_skills` (4 queries in turn)", stats(searches))
    row(f"`tools/list` ({tools_list_bytes / 1024:,.0f} KiB answer; name enum {'of ' + format(len(enum), ',') + ' names' if enum else 'off'})", stats(tl))
    row("`ping` (the server's JSON-RPC floor)", stats(pings))
    row("`cat` echoing an activate request line (the pipe and this client alone)", stats(echo))
    out.append("")
    out.append(f"Peak RSS of the server after all of the above: **{hwm / 2**20:,.1f} MiB** (VmHWM; VmRSS {rss / 2**20:,.1f} MiB).\n")
    out.append("#### Targets (issue 5)\n")
    out.append("| target | measured | status |")
    out.append("|---|---|---|")
    out.append(f"| server start to first answer ≤ 2× discovery, `--no-watch` | {ratio:.2f}× (`initialize`), {ratio_d:.2f}× (`server/discover`), medians | "
               f"{'met' if max(ratio, ratio_d) <= 2 else 'not met'} |")
    if watched:
        wr = stats(watched)["p50"] / disc["p50"]
        out.append(f"| same, `serve` as it starts by default (watching the roots) | {wr:.2f}× (`initialize`, median of {len(watched)}) | "
                   f"{'met' if wr <= 2 else 'not met'} |")
    worst = max(a["p50"], b["p50"], c["p50"])
    out.append(f"| `activate_skill` round trip p50 ≤ 1 ms | p50 {us(a['p50'])} (a), {us(b['p50'])} (b), {us(c['p50'])} (c); "
               f"p99 {us(a['p99'])} / {us(b['p99'])} / {us(c['p99'])} | {'met' if worst <= 1e-3 else 'not met'} |")
    report = "\n".join(out)
    print(report)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
