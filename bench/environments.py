#!/usr/bin/env python3
"""Skill environments (issue 31): `skilldeck install` of a skill with
dependencies against `uv pip install` of the same set into a fresh venv,
side by side, in one run, offline from the same local wheel folder.

Rows (min and median of --runs runs, whole processes):
  - uv venv + uv pip install -r requirements.txt   (the baseline: a fresh venv)
  - the same with --link-mode copy --compile-bytecode (what skilldeck asks of uv: the
                                                     environment owns its files, and
                                                     bytecode is compiled once, since
                                                     the sandbox mounts it read-only)
  - skilldeck install SKILL                         (resolve with hashes, venv, sync
                                                     --require-hashes, marker, swap, lock)
  - skilldeck install --frozen, environment removed (the locked set rebuilt: no resolution)
  - skilldeck install of a 2nd skill, same set      (the environment shared: no build)
  - skilldeck verify                                 (every environment file re-hashed)
Each row runs twice: with uv's cache warm (the wheels already unpacked, as
on a machine that installed them before) and cold (an empty cache per run).

The wheels come from PyPI with pip (a registry download, once, into a temp
folder) unless --wheels DIR is given; uv from --uv, $SKILLDECK_UV, or
scripts/install-uv.sh.

usage: bench/environments.py [--runs 5] [--binary PATH] [--uv PATH]
                             [--wheels DIR] [--set small|requests]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import common  # noqa: E402

SETS = {
    # A small pure-Python package with one dependency.
    "small": (["python-dateutil>=2.8"], ["python-dateutil==2.9.0.post0", "six==1.17.0"]),
    # A common HTTP client and its four dependencies.
    "requests": (["requests>=2.31"], ["requests==2.32.3", "urllib3==2.2.3", "idna==3.10",
                                      "certifi==2024.8.30", "charset-normalizer==3.4.0"]),
}


def run(cmd, env=None, cwd=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(map(str, cmd))}\n"
                 f"{p.stdout.decode()[-2000:]}{p.stderr.decode()[-2000:]}")
    return p.stdout.decode()


def timed(fn, runs, reset):
    times = []
    for _ in range(runs):
        reset()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--binary", default=common.SKILLDECK)
    ap.add_argument("--uv", default=os.environ.get("SKILLDECK_UV"))
    ap.add_argument("--wheels")
    ap.add_argument("--set", choices=sorted(SETS), default="small")
    ap.add_argument("--python", default="/usr/bin/python3")
    args = ap.parse_args()
    if not os.path.isfile(args.binary):
        sys.exit(f"{args.binary} not built (cargo build --release -p skilldeck-cli)")
    uv = args.uv or run(["bash", os.path.join(common.ROOT, "scripts/install-uv.sh")]).strip().splitlines()[-1]
    requirements, pins = SETS[args.set]
    work = tempfile.mkdtemp(prefix="skilldeck-bench-env-")
    os.chmod(work, 0o755)
    try:
        wheels = args.wheels
        if not wheels:
            wheels = os.path.join(work, "wheels")
            run([args.python, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                 "--no-deps", "--only-binary=:all:", "-d", wheels, *pins])
        skill = os.path.join(work, "src", "dates")
        os.makedirs(os.path.join(skill, "scripts"))
        with open(os.path.join(skill, "SKILL.md"), "w") as f:
            f.write("---\nname: dates\ndescription: Bench skill with dependencies. Use in benches.\n---\n# Dates\n")
        with open(os.path.join(skill, "requirements.txt"), "w") as f:
            f.write("".join(r + "\n" for r in requirements))
        with open(os.path.join(skill, "scripts", "x.py"), "w") as f:
            f.write("print('x')\n")
        twin = os.path.join(work, "src", "dates2")
        shutil.copytree(skill, twin)
        with open(os.path.join(twin, "SKILL.md"), "w") as f:
            f.write("---\nname: dates2\ndescription: Bench skill with dependencies. Use in benches.\n---\n# Dates\n")
        proj = os.path.join(work, "proj")
        store = os.path.join(work, "store")
        venv = os.path.join(work, "venv")
        cache = os.path.join(work, "uv-cache")
        src = ["--offline", "--find-links", wheels]

        def env():
            return dict(os.environ, SKILLDECK_ENVS_DIR=store, SKILLDECK_UV=uv, UV_CACHE_DIR=cache,
                        HOME=os.path.join(work, "home"), XDG_CONFIG_HOME=os.path.join(work, "xdg"))

        def clear(*paths):
            for p in paths:
                shutil.rmtree(p, ignore_errors=True)

        rows = []
        for cold in (False, True):
            label = "cold uv cache" if cold else "warm uv cache"
            e = env()

            def reset_cache():
                if cold:
                    clear(cache)

            def uv_baseline():
                run([uv, "venv", "--quiet", "--python", args.python, venv], env=e)
                run([uv, "pip", "install", "--quiet", "--python", os.path.join(venv, "bin/python3"),
                     "--no-index", *src, *requirements], env=e)

            def reset_uv():
                clear(venv)
                reset_cache()

            # Warm the cache once for the warm rows.
            if not cold:
                reset_uv()
                uv_baseline()
            rows.append((f"uv venv + uv pip install ({label})", timed(uv_baseline, args.runs, reset_uv)))

            def uv_same_work():
                run([uv, "venv", "--quiet", "--python", args.python, venv], env=e)
                run([uv, "pip", "install", "--quiet", "--python", os.path.join(venv, "bin/python3"),
                     "--link-mode", "copy", "--compile-bytecode", "--no-index", *src, *requirements],
                    env=e)

            rows.append((f"the same, --link-mode copy --compile-bytecode ({label})",
                         timed(uv_same_work, args.runs, reset_uv)))

            def install():
                run([args.binary, "install", skill, *src], env=e, cwd=proj)

            def reset_install():
                clear(proj, store)
                os.makedirs(proj)
                reset_cache()

            rows.append((f"skilldeck install ({label})", timed(install, args.runs, reset_install)))

            def frozen():
                run([args.binary, "install", "--frozen", *src], env=e, cwd=proj)

            def reset_frozen():
                clear(store)
                reset_cache()

            rows.append((f"skilldeck install --frozen, env removed ({label})",
                          timed(frozen, args.runs, reset_frozen)))

            def shared():
                run([args.binary, "install", twin, *src], env=e, cwd=proj)

            def reset_shared():
                shutil.rmtree(os.path.join(proj, ".agents", "skills", "dates2"), ignore_errors=True)
                reset_cache()
                frozen()
                lock = os.path.join(proj, ".agents", "skilldeck.lock")
                text = open(lock).read()
                if "[skill.dates2]" in text:
                    # Back to the one-skill lock: the second install adds it again.
                    text = text[: text.index("[skill.dates2]")].rstrip() + "\n"
                    open(lock, "w").write(text)

            rows.append((f"skilldeck install of a 2nd skill, same set ({label})",
                         timed(shared, args.runs, reset_shared)))
        rows.append(("skilldeck verify (files and environment re-hashed)",
                     timed(lambda: run([args.binary, "verify"], env=env(), cwd=proj),
                           args.runs, lambda: None)))
        python = run([args.python, "--version"]).strip()
        uv_version = run([uv, "--version"]).strip()
        print(f"# Skill environments: `{args.set}` set ({', '.join(pins)}), offline from a wheel folder")
        print(f"\n{uv_version}; {python}; {args.runs} runs; min / median wall time of whole processes; "
              f"binary {args.binary}\n")
        print("| what | min | median |\n|---|---:|---:|")
        for name, (lo, med) in rows:
            print(f"| {name} | {lo * 1000:.0f} ms | {med * 1000:.0f} ms |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
