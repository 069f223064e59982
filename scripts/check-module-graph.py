#!/usr/bin/env python3
"""Checks that the modules of each crate under crates/ import each other
without a cycle, at two levels:

  - files: every `.rs` file is a module (`src/catalog/budget.rs` is
    `catalog::budget`); an edge A -> B for every path A names in B
    (`crate::catalog::budget::Planner`, `super::escape::push_text`,
    `use crate::{spec::name, fs}`);
  - folders: the crate's top-level modules (`spec`, `fs`, `catalog`, ...),
    with the file edges between different folders.

A path that stops at a re-export (`crate::Skill`, from lib.rs) is an edge to
the module that re-exports it, so a module that used the crate root's
re-exports would form a cycle with lib.rs: modules name the module that
defines what they use. Comments are ignored; `#[cfg(test)]` code counts.

And between crates: every workspace crate sits on a layer (LAYERS below),
and each of its dependencies (normal and dev, the shared test fixtures
aside) is on a lower layer, so no dependency points up or sideways; the
faces reach registries and packages only through `skilldeck-source`
(FORBIDDEN).

    scripts/check-module-graph.py            # every crate; exit 1 on a cycle
    scripts/check-module-graph.py --edges    # also print the folder graph

No third-party dependency: run it anywhere Python 3 is.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{)")
USE_GROUP = re.compile(r"\buse\s+(crate|super|self)::\{", re.S)
# `use child::Item` / `pub use child::{...}` (2018 paths relative to here).
USE_CHILD = re.compile(r"\buse\s+([a-z_][a-z0-9_]*)((?:::[A-Za-z_][A-Za-z0-9_]*)*)(::\{)?")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("//"):
            continue
        # A `//` after code (not inside a string, roughly).
        idx = line.find(" //")
        if idx >= 0 and line.count('"', 0, idx) % 2 == 0:
            line = line[:idx]
        out.append(line)
    return "\n".join(out)


def modules_of(src):
    """Module path (tuple) for every file under src."""
    mods = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, src)[:-3].split(os.sep)
            if rel[-1] in ("lib", "main") and len(rel) == 1:
                path = ()
            elif rel[-1] == "mod":
                path = tuple(rel[:-1])
            else:
                path = tuple(rel)
            mods[path] = full
    return mods


def expand_group(text, start):
    """The paths inside a `use x::{...}` group starting at `start` (the `{`)."""
    depth, i = 0, start
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                break
        i += 1
    inner = text[start + 1 : i]
    paths, prefix_stack, token = [], [""], ""
    for ch in inner + ",":
        if ch == "{":
            prefix_stack.append(prefix_stack[-1] + token.strip())
            token = ""
        elif ch in ",}":
            if token.strip():
                paths.append(prefix_stack[-1] + token.strip())
            token = ""
            if ch == "}":
                prefix_stack.pop()
        else:
            token += ch
    return [p.split(" as ")[0].strip() for p in paths]


def resolve(mods, here, head, rest):
    """The module a path names: the longest known module prefix."""
    if head == "crate":
        base = ()
    elif head == "super":
        base = here[:-1]
    else:
        base = here
    parts = [p for p in rest.split("::") if p]
    while parts and parts[0] == "super":
        base = base[:-1]
        parts = parts[1:]
    best = base
    for i in range(1, len(parts) + 1):
        cand = base + tuple(parts[:i])
        if cand in mods:
            best = cand
        else:
            break
    return best


def edges_of(mods):
    edges = {m: set() for m in mods}
    for here, file in mods.items():
        text = strip_comments(open(file, encoding="utf-8").read())
        refs = []
        for m in USE_GROUP.finditer(text):
            for p in expand_group(text, m.end() - 1):
                refs.append((m.group(1), "::" + p))
        for m in USE_CHILD.finditer(text):
            if m.group(1) in ("crate", "super", "self", "std", "core", "alloc"):
                continue
            if here + (m.group(1),) in mods:
                base = "::" + m.group(1) + m.group(2)
                if m.group(3):
                    for p in expand_group(text, m.end() - 1):
                        refs.append(("self", base + "::" + p))
                else:
                    refs.append(("self", base))
        # `super::` inside an inline module (`mod tests { ... }`) names the
        # file's own module.
        inline = [m.start() for m in re.finditer(r"^\s*mod [a-z_]+ \{", text, re.M)]
        first_inline = inline[0] if inline else len(text)
        for m in PATH.finditer(text):
            if m.group(2) != "::{":
                head = m.group(1)
                if head == "super" and m.start() > first_inline:
                    head = "self"
                refs.append((head, m.group(2)))
        for head, rest in refs:
            target = resolve(mods, here, head, rest)
            if target != here:
                edges[here].add(target)
    return edges


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# The crates, bottom up. A crate depends only on crates of lower layers.
LAYERS = [
    ("core", ["skilldeck"]),
    ("services over the core", ["skilldeck-exec", "skilldeck-package", "skilldeck-audit", "skilldeck-telemetry"]),
    ("host and registry service", ["skilldeck-host", "skilldeck-registry"]),
    ("sources", ["skilldeck-source"]),
    ("faces", ["skilldeck-mcp", "skilldeck-py", "skilldeck-node", "skilldeck-registry-ui"]),
    ("the binary", ["skilldeck-cli"]),
]
# Shared test fixtures: any crate may use them in its tests.
FIXTURES = {"skilldeck-testkit"}
# Lower, but still not to be reached: (crate, dependency, why).
FORBIDDEN = [
    (face, dep, "a face reaches registries and packages through skilldeck-source")
    for face in ("skilldeck-mcp", "skilldeck-py", "skilldeck-node")
    for dep in ("skilldeck-registry", "skilldeck-package")
]


def crate_dependencies(crates_dir):
    """Workspace crate -> its workspace dependencies (normal and dev)."""
    import tomllib
    deps = {}
    for crate in sorted(os.listdir(crates_dir)):
        manifest = os.path.join(crates_dir, crate, "Cargo.toml")
        if not os.path.isfile(manifest):
            continue
        with open(manifest, "rb") as f:
            data = tomllib.load(f)
        named = data.get("package", {}).get("name", crate)
        found = set()
        for table in ("dependencies", "dev-dependencies", "build-dependencies"):
            found |= {d for d in data.get(table, {}) if d.startswith("skilldeck")}
        deps[named] = found
    return deps


def layer_violations(deps):
    """Why each dependency that points up, sideways or to a forbidden
    crate is wrong (empty: the crates are layered)."""
    layer = {c: i for i, (_, crates) in enumerate(LAYERS) for c in crates}
    problems = []
    for crate in sorted(deps):
        if crate in FIXTURES:
            continue
        if crate not in layer:
            problems.append(f"{crate}: on no layer (add it to LAYERS in scripts/check-module-graph.py)")
            continue
        for dep in sorted(deps[crate] - FIXTURES):
            if dep not in layer:
                problems.append(f"{crate} -> {dep}: {dep} is on no layer")
            elif layer[dep] >= layer[crate]:
                way = "up" if layer[dep] > layer[crate] else "sideways"
                problems.append(f"{crate} ({LAYERS[layer[crate]][0]}) -> {dep} "
                                f"({LAYERS[layer[dep]][0]}): points {way}")
        for a, b, why in FORBIDDEN:
            if a == crate and b in deps[crate]:
                problems.append(f"{crate} -> {b}: forbidden ({why})")
    return problems


def name(path):
    return "::".join(path) or "(crate root)"


def self_test():
    """The checker finds a cycle through a re-export and one between
    folders, and passes a clean tree."""
    import tempfile
    cases = {
        "clean": {"lib.rs": "mod a; mod b; pub use a::X;", "a.rs": "use crate::b::Y; pub struct X;",
                  "b.rs": "pub struct Y;"},
        "through the root": {"lib.rs": "mod a; mod b; pub use a::X; pub use b::{c::Z};",
                             "a.rs": "pub struct X;", "b/mod.rs": "pub mod c;",
                             "b/c.rs": "use crate::X; pub struct Z;"},
        "between folders": {"lib.rs": "mod a; mod b;", "a/mod.rs": "mod x;", "a/x.rs": "use crate::b::y::Y;",
                            "b/mod.rs": "mod y;", "b/y.rs": "fn f() { crate::a::x::g(); }"},
    }
    for label, files in cases.items():
        with tempfile.TemporaryDirectory() as d:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w") as f:
                    f.write(text)
            mods = modules_of(d)
            edges = edges_of(mods)
            folders = {}
            for a, targets in edges.items():
                for b in targets:
                    if a and b and a[0] != b[0]:
                        folders.setdefault(a[0], set()).add(b[0])
            found = bool(cycles(edges) or cycles(folders))
            if found != (label != "clean"):
                sys.exit(f"self-test failed: {label}: cycle found = {found}")
    layered = {"skilldeck": set(), "skilldeck-host": {"skilldeck", "skilldeck-testkit"},
               "skilldeck-mcp": {"skilldeck-host"}}
    if layer_violations(layered):
        sys.exit("self-test failed: a layered workspace was refused")
    for label, bad in {
        "up": {"skilldeck": {"skilldeck-host"}, "skilldeck-host": set()},
        "sideways": {"skilldeck-mcp": {"skilldeck-py"}, "skilldeck-py": set()},
        "forbidden": {"skilldeck-mcp": {"skilldeck-registry"}, "skilldeck-registry": set()},
    }.items():
        if not layer_violations(bad):
            sys.exit(f"self-test failed: a dependency pointing {label} passed")
    print("self-test: ok (a clean tree passes; cycles through the root and between folders fail; "
          "crate dependencies pointing up, sideways or to a forbidden crate fail)")


def main():
    if "--self-test" in sys.argv:
        self_test()
        return
    show = "--edges" in sys.argv
    failed = False
    crates_dir = os.path.join(ROOT, "crates")
    for crate in sorted(os.listdir(crates_dir)):
        src = os.path.join(crates_dir, crate, "src")
        if not os.path.isdir(src):
            continue
        mods = modules_of(src)
        edges = edges_of(mods)
        # The crate root declares and re-exports; it is nobody's dependency
        # unless a module names a path through it (then it is a cycle).
        file_cycles = cycles(edges)
        folders = {}
        for a, targets in edges.items():
            if not a:
                continue
            for b in targets:
                if b and a[0] != b[0]:
                    folders.setdefault(a[0], set()).add(b[0])
        folder_cycles = cycles(folders)
        status = "ok" if not (file_cycles or folder_cycles) else "CYCLE"
        print(f"{crate}: {len(mods)} modules, {sum(len(t) for t in edges.values())} imports, "
              f"{len({m[0] for m in mods if m})} top-level modules: {status}")
        for c in file_cycles:
            failed = True
            print("  file cycle: " + " <-> ".join(name(m) for m in c))
            for a in c:
                for b in sorted(edges[a]):
                    if b in c:
                        print(f"    {name(a)} -> {name(b)}")
        for c in folder_cycles:
            failed = True
            print("  folder cycle: " + " <-> ".join(c))
            for a in c:
                for b in sorted(folders.get(a, ())):
                    if b in c:
                        via = sorted(name(x) + " -> " + name(y) for x, ys in edges.items()
                                     for y in ys if x and y and x[0] == a and y[0] == b)
                        print(f"    {a} -> {b}: {', '.join(via)}")
        if show:
            for a in sorted(folders):
                print(f"  {a} -> {', '.join(sorted(folders[a]))}")
    deps = crate_dependencies(crates_dir)
    problems = layer_violations(deps)
    for p in problems:
        failed = True
        print(f"crate layers: {p}")
    if not problems:
        print(f"crate layers: ok ({len(deps)} crates on {len(LAYERS)} layers, "
              f"{sum(len(d) for d in deps.values())} dependencies, none pointing up or sideways)")
    # The verdict comes last, so the tail of the output never reads "ok"
    # above a cycle reported earlier.
    print("module graph: FAILED (see CYCLE or crate layers above)" if failed
          else "module graph: ok (no import cycle, layers respected)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
