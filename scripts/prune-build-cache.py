#!/usr/bin/env python3
"""Removes from cargo target folders what was built from checkouts that are gone.

`.ci/run` keeps its target folders under `~/.cache` so that a fresh clone reuses
the compiled dependencies. But cargo names a workspace crate's artifacts after a
hash of its path, so every clone in a new folder compiles the workspace crates
again, beside the copies of the clones before it, and nothing removes those: the
fuzz folder grew by about 0.9 GB a run (docs/benchmarks.md).

An artifact set (`<crate>-<hash>` in a profile's `deps/` or `examples/`, with its
`.fingerprint/` and `build/` entries of the same hash) is removed when the
dep-info file cargo wrote for it (`<crate>-<hash>.d`) names a source file that no
longer exists outside cargo's own home (registry and git sources are re-extracted
and never make an artifact stale). Nothing that a build of an existing checkout
can use is touched, so a repeated run in the same folder stays warm; at worst a
removed artifact is rebuilt, because cargo checks that its outputs exist.

With `--one-build` (a folder that holds one build configuration per profile, as
the fuzz folder does), a unit whose sources are all relative (a member of the
workspace that was built: the fuzz targets) is also removed when a newer unit of
the same crate is beside it: its hash changes with the clone only because the
crates it depends on are hashed by their absolute paths.

Usage: prune-build-cache.py [--dry-run] [--one-build] TARGET_DIR...
       prune-build-cache.py --self-test
"""

import os
import re
import shutil
import sys
import tempfile

# How deep a profile folder (one holding `deps/` and `.fingerprint/`) may sit in
# a target folder: `debug`, `x86_64-unknown-linux-gnu/release`,
# `wheel/x86_64-unknown-linux-gnu/release`.
MAX_PROFILE_DEPTH = 4

# `<crate>-<16 hex digits>.d`, cargo's dep-info file of one unit.
DEP_INFO = re.compile(r"^(?P<stem>.+)-(?P<hash>[0-9a-f]{16})\.d$")


def cargo_home():
    return os.path.realpath(os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo"))


def profile_dirs(root):
    """The profile folders under `root` (each has `deps/` and `.fingerprint/`)."""
    root_depth = root.rstrip(os.sep).count(os.sep)
    for path, dirs, _files in os.walk(root):
        if os.path.isdir(os.path.join(path, "deps")) and os.path.isdir(
            os.path.join(path, ".fingerprint")
        ):
            yield path
            dirs[:] = []
        elif path.count(os.sep) - root_depth >= MAX_PROFILE_DEPTH:
            dirs[:] = []


def dep_info_sources(path):
    """The source files a dep-info file names for its first target."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            first = f.readline()
    except OSError:
        return []
    _, sep, rest = first.partition(": ")
    if not sep:
        return []
    # Spaces inside a path are escaped with a backslash.
    return [p.replace("\\ ", " ") for p in re.split(r"(?<!\\) +", rest.strip()) if p]


def is_stale(sources, home):
    for source in sources:
        if not os.path.isabs(source):
            continue
        real = os.path.realpath(source)
        if real.startswith(home + os.sep):
            continue
        if not os.path.exists(source):
            return True
    return False


def freed_by(path):
    """The bytes removing `path` frees (a file with another hard link frees none)."""

    def one(file):
        try:
            st = os.lstat(file)
        except OSError:
            return 0
        return st.st_size if st.st_nlink == 1 else 0

    if os.path.islink(path) or not os.path.isdir(path):
        return one(path)
    return sum(
        one(os.path.join(dirpath, name)) for dirpath, _dirs, files in os.walk(path) for name in files
    )


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def stale_paths(profile, home, one_build):
    """Every path of the artifact sets in `profile` built from a gone checkout
    (or, with `one_build`, superseded by a newer build of the same member)."""
    hashes = set()
    doomed = []
    for sub in ("deps", "examples"):
        folder = os.path.join(profile, sub)
        if not os.path.isdir(folder):
            continue
        names = os.listdir(folder)
        stale = set()
        # Workspace members (relative sources), newest first per crate.
        members = {}
        for name in names:
            m = DEP_INFO.match(name)
            if not m:
                continue
            path = os.path.join(folder, name)
            sources = dep_info_sources(path)
            if is_stale(sources, home):
                stale.add((m["stem"], m["hash"]))
            elif sources and not any(os.path.isabs(s) for s in sources):
                try:
                    mtime = os.stat(path).st_mtime_ns
                except OSError:
                    continue
                members.setdefault(m["stem"], []).append((mtime, m["hash"]))
        if one_build:
            for stem, builds in members.items():
                builds.sort(reverse=True)
                stale.update((stem, digest) for _mtime, digest in builds[1:])
        for stem, digest in stale:
            hashes.add(digest)
            prefixes = (f"{stem}-{digest}", f"lib{stem}-{digest}")
            doomed.extend(os.path.join(folder, n) for n in names if n.startswith(prefixes))
    for sub in (".fingerprint", "build"):
        folder = os.path.join(profile, sub)
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if name.rpartition("-")[2] in hashes:
                doomed.append(os.path.join(folder, name))
    return len(hashes), doomed


def prune(roots, dry_run, one_build=False):
    home = cargo_home()
    sets = 0
    freed = 0
    for root in roots:
        if not os.path.isdir(root):
            continue
        for profile in profile_dirs(root):
            count, doomed = stale_paths(profile, home, one_build)
            sets += count
            for path in doomed:
                freed += freed_by(path)
                if not dry_run:
                    remove(path)
    verb = "would remove" if dry_run else "removed"
    print(
        f"prune-build-cache: {verb} {sets} artifact sets ({freed / 1e6:.0f} MB) built from "
        f"checkouts that no longer exist{' or superseded by a newer build' if one_build else ''}"
    )
    return sets


def self_test():
    """Builds a small target folder and checks what is removed and what is kept."""
    with tempfile.TemporaryDirectory() as tmp:
        live_src = os.path.join(tmp, "live", "src", "lib.rs")
        os.makedirs(os.path.dirname(live_src))
        open(live_src, "w").close()
        gone_src = os.path.join(tmp, "gone", "src", "lib.rs")
        home = os.path.join(tmp, "cargo-home")
        reg_src = os.path.join(home, "registry", "src", "serde-1.0", "src", "lib.rs")
        os.environ["CARGO_HOME"] = home
        target = os.path.join(tmp, "target")
        profile = os.path.join(target, "x86_64-unknown-linux-gnu", "release")
        deps = os.path.join(profile, "deps")
        for d in (deps, os.path.join(profile, ".fingerprint"), os.path.join(profile, "build")):
            os.makedirs(d)

        def unit(stem, digest, source, lib=True):
            with open(os.path.join(deps, f"{stem}-{digest}.d"), "w") as f:
                f.write(f"{deps}/{stem}-{digest}: {source}\n\n{source}:\n")
            out = f"lib{stem}-{digest}.rlib" if lib else f"{stem}-{digest}"
            open(os.path.join(deps, out), "w").close()
            os.makedirs(os.path.join(profile, ".fingerprint", f"{stem}-{digest}"))

        unit("mine", "0123456789abcdef", live_src)
        unit("mine", "fedcba9876543210", gone_src)
        unit("theirs", "00000000000000aa", gone_src, lib=False)
        unit("serde", "1111111111111111", reg_src)
        # Two versions of one registry crate: both live, whatever their age.
        unit("serde", "2222222222222222", reg_src)
        # A workspace member (relative sources) built twice, the older first.
        unit("target", "00000000000000b1", "fuzz_targets/target.rs", lib=False)
        old = os.path.join(deps, "target-00000000000000b1.d")
        os.utime(old, ns=(1, 1))
        unit("target", "00000000000000b2", "fuzz_targets/target.rs", lib=False)
        os.makedirs(os.path.join(profile, "build", "mine-fedcba9876543210"))
        # Dry run: nothing removed.
        assert prune([target], dry_run=True) == 2
        assert os.path.exists(os.path.join(deps, "libmine-fedcba9876543210.rlib"))
        # Without --one-build a member's older build stays.
        assert prune([target], dry_run=False) == 2
        assert os.path.exists(old)
        assert prune([target], dry_run=False, one_build=True) == 1
        left = sorted(os.listdir(deps))
        assert left == [
            "libmine-0123456789abcdef.rlib",
            "libserde-1111111111111111.rlib",
            "libserde-2222222222222222.rlib",
            "mine-0123456789abcdef.d",
            "serde-1111111111111111.d",
            "serde-2222222222222222.d",
            "target-00000000000000b2",
            "target-00000000000000b2.d",
        ], left
        assert sorted(os.listdir(os.path.join(profile, ".fingerprint"))) == [
            "mine-0123456789abcdef",
            "serde-1111111111111111",
            "serde-2222222222222222",
            "target-00000000000000b2",
        ]
        assert os.listdir(os.path.join(profile, "build")) == []
        # Idempotent.
        assert prune([target], dry_run=False, one_build=True) == 0
    print("prune-build-cache: self-test passed")


def main(argv):
    if argv == ["--self-test"]:
        self_test()
        return 0
    dry_run = "--dry-run" in argv
    one_build = "--one-build" in argv
    roots = [a for a in argv if a not in ("--dry-run", "--one-build")]
    if not roots or any(a.startswith("-") for a in roots):
        print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
        return 2
    prune(roots, dry_run, one_build)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
