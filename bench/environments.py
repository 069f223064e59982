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

Node rows (with --node, or --node-only), offline from one npm cache that
holds is-odd 3.0.1 and is-number 6.0.0 (filled from the npm registry with
`npm cache add`, once, unless --npm-cache DIR is given):
  - npm ci into a fresh folder                       (the baseline: the same
                                                     package.json and lock,
                                                     --offline --ignore-scripts
                                                     --omit=dev)
  - skilldeck install SKILL                         (resolve with npm
                                                     --package-lock-only, npm ci,
                                                     tree digest, marker, swap, lock)
  - skilldeck install --frozen, environment removed (npm ci of the locked set)
  - skilldeck install of a 2nd skill, same set      (shared: tree re-hashed, no build)
  - skilldeck verify                                 (the tree re-hashed)

The wheels come from PyPI with pip (a registry download, once, into a temp
folder) unless --wheels DIR is given; uv from --uv, $SKILLDECK_UV, or
scripts/install-uv.sh.

usage: bench/environments.py [--runs 5] [--binary PATH] [--uv PATH]
                             [--wheels DIR] [--set small|requests]
                             [--node | --node-only] [--npm-cache DIR]
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


NODE_PINS = ["is-odd@3.0.1", "is-number@6.0.0"]


def node_rows(args, work):
    """The Node rows: skilldeck install against npm ci of the same set."""
    rows = []
    blank = os.path.join(work, "blank.npmrc")
    blank_global = os.path.join(work, "blank-global.npmrc")
    for f in (blank, blank_global):
        open(f, "w").close()
    npm_config = ["--userconfig", blank, "--globalconfig", blank_global, "--update-notifier=false"]
    cache = args.npm_cache
    if not cache:
        cache = os.path.join(work, "npm-cache")
        run(["npm", "cache", "add", *NODE_PINS, "--cache", cache, *npm_config])
    skill = os.path.join(work, "src", "odd")
    os.makedirs(os.path.join(skill, "scripts"))
    with open(os.path.join(skill, "SKILL.md"), "w") as f:
        f.write("---\nname: odd\ndescription: Bench skill with npm dependencies. Use in benches.\n---\n# Odd\n")
    with open(os.path.join(skill, "package.json"), "w") as f:
        f.write('{"dependencies": {"is-odd": "^3.0.1"}}\n')
    with open(os.path.join(skill, "scripts", "odd.mjs"), "w") as f:
        f.write("import isOdd from 'is-odd';\nconsole.log(isOdd(3));\n")
    twin = os.path.join(work, "src", "odd2")
    shutil.copytree(skill, twin)
    with open(os.path.join(twin, "SKILL.md"), "w") as f:
        f.write("---\nname: odd2\ndescription: Bench skill with npm dependencies. Use in benches.\n---\n# Odd\n")
    # The baseline's folder: the same package.json and the lock npm resolves.
    base = os.path.join(work, "npm-ci")
    os.makedirs(base)
    shutil.copy(os.path.join(skill, "package.json"), base)
    npm_flags = ["--offline", "--cache", cache, "--ignore-scripts", "--no-audit", "--no-fund", *npm_config]
    run(["npm", "install", "--package-lock-only", "--omit=dev", *npm_flags], cwd=base)
    proj = os.path.join(work, "node-proj")
    store = os.path.join(work, "node-store")
    e = dict(os.environ, SKILLDECK_ENVS_DIR=store, HOME=os.path.join(work, "home"),
             XDG_CONFIG_HOME=os.path.join(work, "xdg"))
    src = ["--offline", "--npm-cache", cache]

    def clear(*paths):
        for p in paths:
            shutil.rmtree(p, ignore_errors=True)

    rows.append(("npm ci into a fresh folder (Node)",
                 timed(lambda: run(["npm", "ci", "--omit=dev", *npm_flags], cwd=base), args.runs,
                       lambda: clear(os.path.join(base, "node_modules")))))

    def reset_install():
        clear(proj, store)
        os.makedirs(proj)

    rows.append(("skilldeck install (Node)",
                 timed(lambda: run([args.binary, "install", skill, *src], env=e, cwd=proj),
                       args.runs, reset_install)))

    def frozen():
        run([args.binary, "install", "--frozen", *src], env=e, cwd=proj)

    rows.append(("skilldeck install --frozen, env removed (Node)",
                 timed(frozen, args.runs, lambda: clear(store))))

    def reset_shared():
        shutil.rmtree(os.path.join(proj, ".agents", "skills", "odd2"), ignore_errors=True)
        frozen()
        lock = os.path.join(proj, ".agents", "skilldeck.lock")
        text = open(lock).read()
        if "[skill.odd2]" in text:
            text = text[: text.index("[skill.odd2]")].rstrip() + "\n"
            open(lock, "w").write(text)

    rows.append(("skilldeck install of a 2nd skill, same set (Node)",
                 timed(lambda: run([args.binary, "install", twin, *src], env=e, cwd=proj),
                       args.runs, reset_shared)))
    rows.append(("skilldeck verify (files and the Node tree re-hashed)",
                 timed(lambda: run([args.binary, "verify"], env=e, cwd=proj), args.runs, lambda: None)))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--binary", default=common.SKILLDECK)
    ap.add_argument("--uv", default=os.environ.get("SKILLDECK_UV"))
    ap.add_argument("--wheels")
    ap.add_argument("--set", choices=sorted(SETS), default="small")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--node", action="store_true", help="add the Node rows")
    ap.add_argument("--node-only", action="store_true", help="only the Node rows")
    ap.add_argument("--npm-cache", help="an npm cache holding is-odd 3.0.1 and is-number 6.0.0")
    args = ap.parse_args()
    if not os.path.isfile(args.binary):
        sys.exit(f"{args.binary} not built (cargo build --release -p skilldeck-cli)")
    if args.node_only:
        work = tempfile.mkdtemp(prefix="skilldeck-bench-env-")
        os.chmod(work, 0o755)
        try:
            rows = node_rows(args, work)
            print(f"# Skill environments: Node ({', '.join(NODE_PINS)}), offline from an npm cache")
            print(f"\nnode {run(['node', '--version']).strip()}; npm {run(['npm', '--version']).strip()}; "
                  f"{args.runs} runs; min / median wall time of whole processes; binary {args.binary}\n")
            print("| what | min | median |\n|---|---:|---:|")
            for name, (lo, med) in rows:
                print(f"| {name} | {lo * 1000:.0f} ms | {med * 1000:.0f} ms |")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
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
        if args.node:
            rows.extend(node_rows(args, work))
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
