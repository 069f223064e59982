#!/usr/bin/env python3
"""Validation speed: skilldeck against skills-ref, same skills, same run.

Measures, on the corpus of real skills (--corpus; skipped when absent) (724 real skills) by default:
  - `skilldeck validate -r CORPUS` as a whole process (what a CLI/CI user pays);
  - skills-ref 0.1.1 `validate()` in-process over the same skill folders;
  - `skills-ref validate DIR` CLI calls (a sample; per call).
Prints min / median over the runs and the ratios. skills-ref is installed from
PyPI into bench/.venv on first use (skipped with a note if PyPI is unreachable).

usage: bench/validate_vs_skills_ref.py [--corpus DIR] [--runs N] [--cli-sample N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import common  # noqa: E402
VENV = os.path.join(ROOT, "bench", ".venv")
SKILLS_REF = "skills-ref==0.1.1"


def timed(cmd, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def ensure_venv():
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    ok = subprocess.run([py, "-c", "import skills_ref"], capture_output=True).returncode == 0
    if not ok:
        r = subprocess.run([py, "-m", "pip", "install", "-q", SKILLS_REF], capture_output=True)
        if r.returncode != 0:
            return None
    return py


IN_PROCESS = r"""
import json, sys, time, statistics
from pathlib import Path
from skills_ref.validator import validate
dirs = [Path(l) for l in open(sys.argv[1]).read().split("\n") if l]
runs = int(sys.argv[2])
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    for d in dirs:
        validate(d)
    times.append(time.perf_counter() - t0)
print(json.dumps([min(times), statistics.median(times)]))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=common.DEFAULT_CORPUS,
                    help="the corpus of real skills (default $SKILLDECK_CORPUS, else ../shared/corpus)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cli-sample", type=int, default=20)
    args = ap.parse_args()
    if common.corpus(args.corpus) is None:
        common.skip(os.path.basename(__file__), f"needs the corpus of real skills; none at {args.corpus} "
                    "(pass --corpus DIR or set SKILLDECK_CORPUS)")
    corpus = os.path.normpath(args.corpus)

    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    binary = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "skilldeck")

    dirs = sorted(
        os.path.join(corpus, line.split("\t")[0])
        for line in open(os.path.join(corpus, "skills-ref-verdicts.tsv"), encoding="utf-8").read().splitlines()[1:]
        if line
    )
    n = len(dirs)
    # Warm the page cache so both sides read from memory.
    subprocess.run([binary, "validate", "-r", corpus], stdout=subprocess.DEVNULL, check=False)

    sd_min, sd_med = timed([binary, "validate", "-r", "--format", "json", corpus], args.runs)
    print(f"machine: {os.cpu_count()} cores; corpus: {n} skills at {corpus}")
    print(f"skilldeck validate -r (whole process, {args.runs} runs): "
          f"min {sd_min * 1e3:.1f} ms, median {sd_med * 1e3:.1f} ms "
          f"({sd_med / n * 1e6:.0f} us/skill)")

    py = ensure_venv()
    if py is None:
        print(f"skills-ref: not measured (could not pip install {SKILLS_REF}; PyPI unreachable?)")
        return 0
    listing = os.path.join(VENV, "dirs.txt")
    with open(listing, "w", encoding="utf-8") as f:
        f.write("\n".join(dirs))
    ref_runs = max(3, args.runs // 2)
    out = subprocess.run([py, "-c", IN_PROCESS, listing, str(ref_runs)], capture_output=True, text=True, check=True)
    import json
    ref_min, ref_med = json.loads(out.stdout)
    print(f"skills-ref validate() in-process ({ref_runs} runs): "
          f"min {ref_min * 1e3:.1f} ms, median {ref_med * 1e3:.1f} ms "
          f"({ref_med / n * 1e3:.2f} ms/skill)")

    cli = os.path.join(VENV, "bin", "agentskills")  # skills-ref's CLI entry point
    step = max(1, n // args.cli_sample)
    sample = dirs[::step][: args.cli_sample]
    per_call = []
    for d in sample:
        t0 = time.perf_counter()
        subprocess.run([cli, "validate", d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        per_call.append(time.perf_counter() - t0)
    cli_med = statistics.median(per_call)
    print(f"skills-ref CLI `agentskills validate DIR` ({len(sample)} calls): median {cli_med * 1e3:.0f} ms per call, "
          f"~{cli_med * n:.0f} s for all {n} skills")
    print(f"ratio, skills-ref in-process / skilldeck whole process (median): {ref_med / sd_med:.1f}x")
    print(f"ratio, skills-ref CLI per skill x {n} / skilldeck whole process (median): {cli_med * n / sd_med:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
