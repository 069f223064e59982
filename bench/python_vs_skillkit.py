#!/usr/bin/env python3
"""skilldeck's Python package against skillkit (PyPI), side by side in one
run, on the same generated skills.

Measured from Python, each library in a fresh child process (page cache
warm: every SKILL.md is read once before timing):

  discover    Deck.discover(roots=[DIR])  vs  SkillManager(DIR).discover()
  list        deck.skills vs manager.list_skills(): the first call after
              discovery, then repeated calls on the same deck
  activate    first activation of K distinct skills, then the same calls
              again (cached): deck.activate(name, ARGS) vs
              manager.invoke_skill(name, ARGS)
  catalog     deck.catalog() (xml, every skill) and with budget_tokens;
              skillkit has no catalog: the reference is the same XML built
              from list_skills() in Python, as a skillkit user would

Every figure is min / median over the repetitions; ratios are of medians.

Setup (release wheel, both libraries in one venv):

    python3 -m venv /tmp/pvs && /tmp/pvs/bin/pip install maturin==1.16.0 skillkit==0.4.0 aiofiles
    /tmp/pvs/bin/maturin build --release -m crates/skilldeck-py/Cargo.toml -o /tmp/pvs-wheels
    /tmp/pvs/bin/pip install /tmp/pvs-wheels/skilldeck-*.whl
    /tmp/pvs/bin/python bench/python_vs_skillkit.py --n 10000

The skills are generated with bench/lib/gen_skills.py (or --gen) into
a temporary folder, removed afterwards (or give --dir to reuse one).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

ARGS_TEXT = "review   src/main.py  for security issues"
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_GEN = os.path.join(HERE, "lib", "gen_skills.py")


def mm(xs: List[float]) -> Dict[str, float]:
    return {"min": min(xs), "median": statistics.median(xs), "n": len(xs)}


def timed(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def pick_names(names: List[str], k: int) -> List[str]:
    import random

    return random.Random(7).sample(sorted(names), min(k, len(names)))


def child_skilldeck(d: str, reps: int, k: int) -> Dict[str, Any]:
    import skilldeck

    res: Dict[str, Any] = {"lib": "skilldeck " + skilldeck.__version__}
    times, first = [], []
    for _ in range(reps):
        box: List[Any] = []
        times.append(timed(lambda: box.append(skilldeck.Deck.discover(roots=[d]))) * 1e3)
        deck = box[0]
        first.append(timed(lambda: deck.skills) * 1e3)
    res["discover_ms"] = mm(times)
    res["skills_list_first_ms"] = mm(first)
    res["skills"] = len(deck)
    names = [s.name for s in deck.skills]
    res["skills_list_ms"] = mm([timed(lambda: deck.skills) * 1e3 for _ in range(reps)])
    pick = pick_names(names, k)
    res["activate_first_us"] = mm([timed(lambda n=n: deck.activate(n, ARGS_TEXT)) * 1e6 for n in pick])
    cached = []
    for _ in range(20):
        for n in pick:
            cached.append(timed(lambda n=n: deck.activate(n, ARGS_TEXT)) * 1e6)
    res["activate_cached_us"] = mm(cached)
    # The text too (what an agent sends on): converting it is part of the call.
    res["activate_cached_text_us"] = mm(
        [timed(lambda n=n: deck.activate(n, ARGS_TEXT).text) * 1e6 for n in pick * 20]
    )
    res["catalog_ms"] = mm([timed(lambda: deck.catalog()) * 1e3 for _ in range(reps)])
    res["catalog_chars"] = len(deck.catalog())
    deck.catalog(budget_tokens=8000)  # the tokenizer is built once per process
    res["catalog_8k_tokens_ms"] = mm(
        [timed(lambda: deck.catalog(budget_tokens=8000)) * 1e3 for _ in range(reps)]
    )
    res["search_us"] = mm([timed(lambda: deck.search("pdf forms")) * 1e6 for _ in range(50)])
    return res


def child_skillkit(d: str, reps: int, k: int) -> Dict[str, Any]:
    import logging
    from xml.sax.saxutils import escape

    logging.disable(logging.CRITICAL)  # skillkit logs a lot; keep it out of the timings
    from skillkit import SkillManager

    from importlib.metadata import version

    res: Dict[str, Any] = {"lib": "skillkit " + version("skillkit")}

    def make() -> Any:
        return SkillManager(project_skill_dir=d, anthropic_config_dir="", plugin_dirs=[])

    times, first = [], []
    mgr = None
    for _ in range(reps):
        m = make()
        times.append(timed(m.discover) * 1e3)
        first.append(timed(m.list_skills) * 1e3)
        mgr = m
    assert mgr is not None
    res["discover_ms"] = mm(times)
    res["skills_list_first_ms"] = mm(first)
    skills = mgr.list_skills()
    res["skills"] = len(skills)
    res["skills_list_ms"] = mm([timed(mgr.list_skills) * 1e3 for _ in range(reps)])
    pick = pick_names([s.name for s in skills], k)
    res["activate_first_us"] = mm([timed(lambda n=n: mgr.invoke_skill(n, ARGS_TEXT)) * 1e6 for n in pick])
    cached = []
    for _ in range(20):
        for n in pick:
            cached.append(timed(lambda n=n: mgr.invoke_skill(n, ARGS_TEXT)) * 1e6)
    res["activate_cached_us"] = mm(cached)
    res["activate_cached_text_us"] = res["activate_cached_us"]  # already a str

    def catalog() -> str:
        parts = ["<available_skills>\n"]
        for s in mgr.list_skills():
            parts.append(
                f"  <skill>\n    <name>{escape(s.name)}</name>\n"
                f"    <description>{escape(s.description)}</description>\n"
                f"    <location>{escape(str(s.skill_path))}</location>\n  </skill>\n"
            )
        parts.append("</available_skills>\n")
        return "".join(parts)

    res["catalog_ms"] = mm([timed(catalog) * 1e3 for _ in range(reps)])
    res["catalog_chars"] = len(catalog())
    return res


def run_child(lib: str, d: str, reps: int, k: int, home: str) -> Dict[str, Any]:
    env = dict(os.environ)
    # No user config or user skills: both libraries see only DIR.
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
               XDG_CACHE_HOME=os.path.join(home, ".cache"), XDG_STATE_HOME=os.path.join(home, ".state"))
    out = subprocess.check_output(
        [sys.executable, os.path.abspath(__file__), "--child", lib, "--dir", d,
         "--reps", str(reps), "--k", str(k)],
        env=env, cwd=home,
    )
    return json.loads(out)


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def fmt(m: Dict[str, float], unit: str, digits: int = 1) -> str:
    return f"{m['min']:,.{digits}f} / {m['median']:,.{digits}f} {unit}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--dir", help="reuse these generated skills (not removed)")
    ap.add_argument("--gen", default=DEFAULT_GEN, help="gen_skills.py")
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        fn = child_skilldeck if a.child == "skilldeck" else child_skillkit
        print(json.dumps(fn(a.dir, a.reps, a.k)))
        return

    tmp = tempfile.mkdtemp(prefix="pvs-")
    try:
        d = a.dir
        if d is None:
            d = os.path.join(tmp, f"skills-{a.n}")
            subprocess.check_call([sys.executable, a.gen, str(a.n), "--out", d], stdout=subprocess.DEVNULL)
        for root, _, files in os.walk(d):  # warm the page cache
            for fn in files:
                if fn == "SKILL.md":
                    with open(os.path.join(root, fn), "rb") as f:
                        f.read()
        home = os.path.join(tmp, "home")
        os.makedirs(home, exist_ok=True)
        sd = run_child("skilldeck", d, a.reps, a.k, home)
        sk = run_child("skillkit", d, a.reps, a.k, home)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def ratio(key: str) -> str:
        r = sk[key]["median"] / sd[key]["median"]
        return f"**{r:,.0f}×**" if r >= 10 else f"**{r:.2f}×**"

    print(f"Machine: {os.cpu_count()} cores ({cpu_name()}), {platform.system()} {platform.release()}, "
          f"Python {platform.python_version()}. Command: `python bench/python_vs_skillkit.py --n {a.n} "
          f"--reps {a.reps} --k {a.k}` ({sd['lib']} release wheel, {sk['lib']}); "
          f"{sd['skills']} / {sk['skills']} skills found; min / median; page cache warm.\n")
    print(f"| {sd['skills']:,} skills | skilldeck | skillkit | skillkit / skilldeck (medians) |")
    print("|---|---|---|---|")
    rows = [
        ("discover", "discover_ms", "ms", 1),
        ("list skills, first after discover", "skills_list_first_ms", "ms", 3),
        ("list skills, again (metadata objects)", "skills_list_ms", "ms", 3),
        (f"activate, first ({a.k} skills)", "activate_first_us", "µs", 1),
        ("activate, cached", "activate_cached_us", "µs", 2),
        ("activate, cached, with `.text`", "activate_cached_text_us", "µs", 2),
        ("catalog, xml, every skill (skillkit: built in Python)", "catalog_ms", "ms", 1),
    ]
    for label, key, unit, digits in rows:
        print(f"| {label} | {fmt(sd[key], unit, digits)} | {fmt(sk[key], unit, digits)} | {ratio(key)} |")
    print(f"| catalog, xml, 8,000-token budget | {fmt(sd['catalog_8k_tokens_ms'], 'ms')} | (none) | |")
    print(f"| search (BM25, limit 10) | {fmt(sd['search_us'], 'µs')} | (none) | |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"skilldeck": sd, "skillkit": sk}, f, indent=1)


if __name__ == "__main__":
    main()
