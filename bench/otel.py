#!/usr/bin/env python3
"""`activate_skill` round trip with OpenTelemetry export on and off.

    python3 bench/otel.py BIN [--skills 100] [--calls 2000] [--rounds 8]

Needs `opentelemetry-proto` importable (the receiver decodes what it gets;
scripts/test-otel.sh's venv has it: `pip install opentelemetry-proto==1.45.2`).

Two `skilldeck serve --no-watch` processes over stdio on the same N
generated skills: one with no telemetry, one exporting to a local OTLP/HTTP
receiver (scripts/otel_harness.py, 127.0.0.1). Each call activates a skill
in a fresh conversation (`_meta` `dev.skilldeck/conversation`), so every
answer is the body (from the activation cache) and every call makes its
spans (tools/call, activate); half carry a `traceparent`. Rounds alternate
between the two servers so that noise on a shared machine hits both alike.
Prints p50 / p90 per server, the ratio, and the spans the receiver got.
"""
import argparse
import os
import platform
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from otel_harness import Receiver, Server, clean_env, write_skill  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--skills", type=int, default=100)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=8)
    a = ap.parse_args()
    receiver = Receiver()
    with tempfile.TemporaryDirectory() as tmp:
        roots = os.path.join(tmp, "skills")
        names = [f"skill-{i:04d}" for i in range(a.skills)]
        for n in names:
            write_skill(roots, n, f"Use when the task needs {n}.", f"# {n}\n\n" + "Step.\n" * 40)
        servers = {}
        for label, extra in [("off", {}), ("on", {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})]:
            home = os.path.join(tmp, "home-" + label)
            cwd = os.path.join(tmp, "cwd-" + label)
            os.makedirs(home)
            os.makedirs(cwd)
            srv = Server([a.bin, "serve", "--root", roots, "--no-watch"],
                         clean_env(home, extra), os.path.join(tmp, label + ".log"), cwd=cwd)
            srv.initialize()
            servers[label] = srv
        times = {"off": [], "on": []}
        per_round = a.calls // a.rounds
        k = 0
        for r in range(a.rounds + 1):  # round 0 warms both up and is not counted
            for label in (("off", "on") if r % 2 else ("on", "off")):
                srv = servers[label]
                for i in range(per_round):
                    k += 1
                    meta = {"dev.skilldeck/conversation": f"b{k}"}
                    if i % 2:
                        meta["traceparent"] = f"00-{k:032x}-{k:016x}-01"
                    reply, dt = srv.request("tools/call", {
                        "name": "activate_skill",
                        "arguments": {"name": names[k % len(names)]},
                        "_meta": meta,
                    })
                    res = reply.get("result") or {}
                    if res.get("isError") or "result" not in reply:
                        sys.exit(f"activate failed: {reply}")
                    if r:
                        times[label].append(dt)
        for srv in servers.values():
            srv.close()
        with receiver.lock:
            spans = len(receiver.spans)
    receiver.close()

    def stat(xs):
        xs = sorted(xs)
        return statistics.median(xs), xs[int(len(xs) * 0.9)]

    off50, off90 = stat(times["off"])
    on50, on90 = stat(times["on"])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}")
    print(f"command: python3 bench/otel.py BIN --skills {a.skills} --calls {a.calls} --rounds {a.rounds}")
    print("| `activate_skill` round trip | p50 | p90 | calls |")
    print("|---|---:|---:|---:|")
    print(f"| export off | {off50 * 1e6:,.0f} µs | {off90 * 1e6:,.0f} µs | {len(times['off']):,} |")
    print(f"| export on (local OTLP/HTTP receiver) | {on50 * 1e6:,.0f} µs | {on90 * 1e6:,.0f} µs | {len(times['on']):,} |")
    print(f"| on / off | {on50 / off50:.3f} | {on90 / off90:.3f} | |")
    print(f"spans received: {spans:,}")


if __name__ == "__main__":
    main()
