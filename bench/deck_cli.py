#!/usr/bin/env python3
"""Whole-process timings of the deck commands on N generated skills.

Generates N skills with bench/lib/gen_skills.py into a temporary folder
(removed afterwards), warms the page cache, then times each command (min and
median of --runs runs) and its peak RSS. Run the in-process benchmarks with
`SKILLDECK_BENCH_SKILLS=DIR cargo bench -p skilldeck-host --bench core`.

usage: bench/deck_cli.py [--n 10000] [--runs 5] [--keep DIR]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import common  # noqa: E402


def run(cmd, runs):
    """Min and median wall time, and the peak RSS (KiB) of this command's own
    processes (wait4 gives each child's rusage)."""
    times, rss = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        times.append(time.perf_counter() - t0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}")
        rss = max(rss, usage.ru_maxrss)
    return min(times), statistics.median(times), rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", help="generate into (or reuse) this folder instead of a temp one")
    args = ap.parse_args()

    common.build("skilldeck-cli")
    binary = common.SKILLDECK

    tmp = None
    skills = args.keep
    if skills is None:
        tmp = tempfile.mkdtemp(prefix="skilldeck-bench-")
        skills = os.path.join(tmp, "skills")
    if not os.path.isdir(skills):
        common.generate(args.n, skills)
    first = sorted(os.listdir(skills))[0]
    base = [binary, "--root", skills]
    cwd = tmp or tempfile.gettempdir()
    os.chdir(cwd)  # no skilldeck.toml here
    try:
        subprocess.run(base + ["list"], stdout=subprocess.DEVNULL, check=False)  # warm the page cache
        cases = [
            ("list --format json", base[:1] + ["list", "--format", "json"] + base[1:]),
            ("prompt (xml, no budget)", base[:1] + ["prompt"] + base[1:]),
            ("prompt --budget-tokens 8000", base[:1] + ["prompt", "--budget-tokens", "8000"] + base[1:]),
            ("search 'deploy kubernetes'", base[:1] + ["search", "deploy kubernetes"] + base[1:]),
            (f"activate {first}", base[:1] + ["activate", first, "x"] + base[1:]),
        ]
        print(f"{args.n} skills, {os.cpu_count()} cores, {args.runs} runs each (whole process)")
        print(f"{'command':32} {'min':>9} {'median':>9} {'peak RSS':>10}")
        for label, cmd in cases:
            lo, med, rss = run(cmd, args.runs)
            print(f"{label:32} {lo * 1e3:7.0f}ms {med * 1e3:7.0f}ms {rss / 1024:8.1f}MB")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
