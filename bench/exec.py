#!/usr/bin/env python3
"""Sandbox overhead and the concurrency cap (skilldeck-exec).

Runs `crates/skilldeck-exec/examples/exec_bench.rs` (release build). Wall
time and CPU time (user + system of the caller and every process of the
call, from getrusage): on a loaded machine the wall time mostly measures
scheduling delay between the extra process hand-offs, the CPU time the
work done.
  - /bin/true: plain spawn vs the native sandbox vs profile `none` vs
    bwrap (when installed), p50/p99 over N runs (default 200);
  - 100 simultaneous calls through one executor capped at 3: the peak
    number of scripts running at once, from start/end stamps the scripts
    print themselves.

    python3 bench/exec.py [--runs 200] [--install-bwrap]

`--install-bwrap` runs `apt-get install -y bubblewrap` first (root, Debian).
Prints a Markdown table and the raw JSON.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--install-bwrap", action="store_true")
    args = ap.parse_args()
    if args.install_bwrap and not shutil.which("bwrap"):
        subprocess.run(["apt-get", "install", "-y", "bubblewrap"], check=True,
                       stdout=subprocess.DEVNULL)
    cmd = ["cargo", "run", "--quiet", "--release", "--locked", "-p", "skilldeck-exec",
           "--example", "exec_bench", "--", str(args.runs)]
    out = subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    data = json.loads(out)
    plain = data["plain_spawn"]
    print(f"load average during the run: {data.get('load_average', '?')}\n")
    print("| variant | wall p50 ms | wall p99 ms | wall p50 over plain | CPU p50 ms | CPU p50 over plain |")
    print("|---|---|---|---|---|---|")
    for key, label in [("plain_spawn", "plain spawn of /bin/true"),
                       ("sandboxed_native", "skilldeck-exec, profile native"),
                       ("profile_none", "skilldeck-exec, profile none"),
                       ("bwrap", "bwrap --unshare-all /bin/true")]:
        row = data.get(key)
        if not row:
            print(f"| {label} | n/a | n/a | n/a | n/a | n/a |")
            continue
        print(f"| {label} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | "
              f"{row['p50_ms'] - plain['p50_ms']:+.2f} ms | {row['cpu_p50_ms']:.2f} | "
              f"{row['cpu_p50_ms'] - plain['cpu_p50_ms']:+.2f} ms |")
    c = data["concurrency"]
    print(f"\n{c['calls']} calls, cap {c['cap']}: peak {c['peak_overlap']} running at once "
          f"(measured from the scripts' own stamps), {c['wall_s']:.2f} s wall, profile {c['profile']}")
    print("\n" + json.dumps(data, indent=1), file=sys.stderr)
    if c["peak_overlap"] > c["cap"]:
        sys.exit("the cap was exceeded")


if __name__ == "__main__":
    main()
