#!/usr/bin/env python3
"""Packages at corpus scale: pack and install the skills of the corpus
(--corpus; skipped when absent)
against a plain `cp -r` of the same folders, in one run, then `verify`.

Every skill folder of the corpus (a folder with a SKILL.md) is taken once per
skill name (the first in sorted order; install refuses a name given twice).
Rows (min and median of --runs runs, whole processes):
  - cp -r, one process for all folders          (the floor)
  - skilldeck install FOLDER..., one process     (stage, hash, validate, swap, lock)
  - cp -r, one process per folder               (what a shell loop does)
  - skilldeck pack, one process per folder      (validate, hash, deflate; lenient)
  - skilldeck install PACKAGE..., one process   (unpack, hash, validate, swap, lock)
  - skilldeck verify, all of them
Skills that `pack --lenient` refuses (symlinks, too many files, ...) are
counted and left out of every row, so all rows copy the same folders.

usage: bench/packages.py [--runs 3] [--corpus DIR] [--binary PATH] [--limit N]
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


def skill_dirs(corpus):
    found = []
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames.sort()
        if "SKILL.md" in filenames:
            found.append(dirpath)
            dirnames[:] = []  # a skill's own files are not more skills
    return sorted(found)


def frontmatter_name(d):
    try:
        with open(os.path.join(d, "SKILL.md"), encoding="utf-8", errors="replace") as f:
            lines = f.read(8192).splitlines()
    except OSError:
        return None
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:]:
        if line.strip() == "---":
            break
        if line.startswith("name:"):
            return line[5:].strip().strip("'\"")
    return None


def timed(fn, runs, reset=None):
    times = []
    for _ in range(runs):
        if reset:
            reset()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def check(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd[:4])} ...\n{p.stderr.decode()[:2000]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--corpus", default=common.DEFAULT_CORPUS,
                    help="the corpus of real skills (default $SKILLDECK_CORPUS, else ../shared/corpus)")
    ap.add_argument("--binary", help="a skilldeck binary (default: build and use the release one)")
    ap.add_argument("--limit", type=int, help="only the first N skill folders (to try the script)")
    args = ap.parse_args()
    if common.corpus(args.corpus) is None:
        common.skip(os.path.basename(__file__), f"needs the corpus of real skills; none at {args.corpus} "
                    "(pass --corpus DIR or set SKILLDECK_CORPUS)")

    if args.binary:
        binary = os.path.abspath(args.binary)
    else:
        common.build("skilldeck-cli")
        binary = common.SKILLDECK

    dirs = skill_dirs(os.path.abspath(args.corpus))[: args.limit]
    work = tempfile.mkdtemp(prefix="sd-bench-packages-")
    try:
        pkgs = os.path.join(work, "pkgs")
        os.mkdir(pkgs)
        # Which skills pack (lenient) at all, one per name.
        chosen, refused, seen = [], 0, set()
        for d in dirs:
            name = frontmatter_name(d) or os.path.basename(d)
            if name in seen:
                continue
            out = os.path.join(pkgs, f"{len(chosen):04d}.tar.gz")
            p = subprocess.run([binary, "pack", d, "--lenient", "-o", out],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if p.returncode != 0:
                refused += 1
                continue
            seen.add(name)
            chosen.append((d, out))
        folders = [d for d, _ in chosen]
        packages = [p for _, p in chosen]
        files = sum(len(fs) for d in folders for _, _, fs in os.walk(d))
        size = sum(os.path.getsize(os.path.join(dp, f)) for d in folders for dp, _, fs in os.walk(d) for f in fs)

        dest = os.path.join(work, "dest")

        # A reset moves the previous run's tree aside instead of deleting it
        # (all trash goes at the end): ext4 skips inodes freed in the last
        # minutes when it allocates (`recently_deleted` in the kernel), so
        # deleting thousands of files just before a timed step makes that
        # step slower, by how much depending on what ran before it.
        trash = os.path.join(work, "trash")
        os.mkdir(trash)
        resets = [0]

        def reset():
            resets[0] += 1
            if os.path.exists(dest):
                os.rename(dest, os.path.join(trash, f"dest-{resets[0]}"))
            lock = os.path.join(work, "skilldeck.lock")
            if os.path.exists(lock):
                os.rename(lock, os.path.join(trash, f"lock-{resets[0]}"))
            os.mkdir(dest)

        def cp_one():
            check(["cp", "-r", *folders, dest + "/"])

        def cp_each():
            for d in folders:
                check(["cp", "-r", d, dest + "/"])

        def install_folders():
            check([binary, "install", "--dir", dest, *folders])

        def pack_each():
            # Into a fresh folder per run (not over the packages install
            # reads: that would free 701 inodes just before it).
            resets[0] += 1
            out = os.path.join(trash, f"pkgs-{resets[0]}")
            os.mkdir(out)
            for i, d in enumerate(folders):
                check([binary, "pack", d, "--lenient", "-o", os.path.join(out, f"{i:04d}.tar.gz")])

        def install_packages():
            check([binary, "install", "--dir", dest, *packages])

        # Round-robin: each run times every step once, so whatever the file
        # system is doing (see reset) weighs on all steps alike.
        steps = [("cp_one", cp_one, reset), ("install_folders", install_folders, reset),
                 ("cp_each", cp_each, reset), ("pack_each", pack_each, None),
                 ("install_packages", install_packages, reset)]
        times = {k: [] for k, _, _ in steps}
        for _ in range(args.runs):
            for k, fn, rs in steps:
                times[k].append(timed(fn, 1, rs)[0])
        rows = {k: (min(v), statistics.median(v)) for k, v in times.items()}
        verify = lambda: check([binary, "verify", "--dir", dest])
        rows["verify"] = timed(verify, args.runs)

        n = len(folders)
        print(f"# packages: {n} skills of {len(dirs)} folders ({refused} refused by pack --lenient, "
              f"{len(dirs) - n - refused} duplicate names), {files} files, {size / 1e6:.1f} MB; "
              f"min / median of {args.runs} runs\n")
        print("| step | min (s) | median (s) | ratio (min) |")
        print("|---|---|---|---|")
        base1, base_each = rows["cp_one"][0], rows["cp_each"][0]
        def row(label, key, base):
            mn, md = rows[key]
            ratio = f"{mn / base:.2f}x {'cp -r (one process)' if base is base1 else 'cp -r per folder'}" if base else ""
            print(f"| {label} | {mn:.3f} | {md:.3f} | {ratio} |")
        row("`cp -r` all folders, one process", "cp_one", None)
        row("`skilldeck install FOLDER...`, one process", "install_folders", base1)
        row("`cp -r` one process per folder", "cp_each", None)
        row("`skilldeck pack` one process per folder", "pack_each", base_each)
        row("`skilldeck install PACKAGE...`, one process", "install_packages", base1)
        mn = rows["pack_each"][0] + rows["install_packages"][0]
        print(f"| pack each + install all | {mn:.3f} | | {mn / base_each:.2f}x cp -r per folder |")
        row("`skilldeck verify` (all)", "verify", None)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
