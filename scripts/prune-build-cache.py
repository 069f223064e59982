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
crates it depends on are hashed by their absolute paths. Build scripts are judged
the same way: their compilation (`build/<package>-<hash>/*.d`) by its sources, and,
with `--one-build`, only the newest run (`build/<package>-<hash>/root-output`) of a
build script compiled from a checkout is kept.

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
HASH = re.compile(r"[0-9a-f]{16}")


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


def mtime_of(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def from_checkout(sources, home):
    """Whether a unit was built from a checkout (not from cargo's home)."""
    return any(
        not os.path.isabs(s) or not os.path.realpath(s).startswith(home + os.sep) for s in sources
    )


class Profile:
    """What one profile folder holds that may be stale."""

    def __init__(self, path, home, one_build):
        self.path = path
        # Hashes of the stale units, and the files of their `deps/` or `examples/`.
        self.hashes = set()
        self.files = []
        # Build-script runs (`build/<package>-<hash>/root-output`), by package:
        # their hash is not the compilation's, so only their age tells.
        self.runs = {}
        # Packages whose build script was compiled from a checkout.
        self.checkout_packages = set()
        for sub in ("deps", "examples"):
            self._scan_units(os.path.join(path, sub), home, one_build)
        self._scan_build_scripts(os.path.join(path, "build"), home)

    def _scan_units(self, folder, home, one_build):
        if not os.path.isdir(folder):
            return
        names = os.listdir(folder)
        stale = set()
        # Workspace members (relative sources), by crate.
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
                members.setdefault(m["stem"], []).append((mtime_of(path), m["hash"]))
        if one_build:
            for stem, builds in members.items():
                builds.sort(reverse=True)
                stale.update((stem, digest) for _mtime, digest in builds[1:])
        for stem, digest in stale:
            self.hashes.add(digest)
            prefixes = (f"{stem}-{digest}", f"lib{stem}-{digest}")
            self.files.extend(os.path.join(folder, n) for n in names if n.startswith(prefixes))

    def _scan_build_scripts(self, folder, home):
        if not os.path.isdir(folder):
            return
        for name in os.listdir(folder):
            package, _, digest = name.rpartition("-")
            unit = os.path.join(folder, name)
            if not HASH.fullmatch(digest) or not os.path.isdir(unit):
                continue
            infos = [n for n in os.listdir(unit) if n.endswith(f"-{digest}.d")]
            if infos:
                # The build script's compilation.
                sources = dep_info_sources(os.path.join(unit, infos[0]))
                if is_stale(sources, home):
                    self.hashes.add(digest)
                if from_checkout(sources, home):
                    self.checkout_packages.add(package)
            elif os.path.exists(os.path.join(unit, "root-output")):
                stamp = os.path.join(unit, "invoked.timestamp")
                self.runs.setdefault(package, []).append((mtime_of(stamp), digest))

    def supersede_runs(self, packages):
        """With one build per profile: only the newest run of a checkout
        package's build script is kept."""
        for package, runs in self.runs.items():
            if package in packages:
                runs.sort(reverse=True)
                self.hashes.update(digest for _mtime, digest in runs[1:])

    def doomed(self):
        paths = list(self.files)
        for sub in (".fingerprint", "build"):
            folder = os.path.join(self.path, sub)
            if not os.path.isdir(folder):
                continue
            for name in os.listdir(folder):
                if name.rpartition("-")[2] in self.hashes:
                    paths.append(os.path.join(folder, name))
        return paths


def prune(roots, dry_run, one_build=False):
    home = cargo_home()
    profiles = [
        Profile(path, home, one_build)
        for root in roots
        if os.path.isdir(root)
        for path in profile_dirs(root)
    ]
    if one_build:
        # A build script is compiled in the host's profile and run in the
        # target's: the packages are known across the folder.
        packages = set().union(*(p.checkout_packages for p in profiles))
        for profile in profiles:
            profile.supersede_runs(packages)
    sets = 0
    freed = 0
    for profile in profiles:
        sets += len(profile.hashes)
        for path in profile.doomed():
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
        # Build scripts: compiled in the host's profile, run in the target's.
        host = os.path.join(target, "release")
        os.makedirs(os.path.join(host, "deps"))
        os.makedirs(os.path.join(host, ".fingerprint"))

        def build_script(package, digest, source):
            folder = os.path.join(host, "build", f"{package}-{digest}")
            os.makedirs(folder)
            with open(os.path.join(folder, f"build_script_build-{digest}.d"), "w") as f:
                f.write(f"{folder}/build_script_build-{digest}: {source}\n")
            os.makedirs(os.path.join(host, ".fingerprint", f"{package}-{digest}"))

        def run(package, digest, age):
            folder = os.path.join(profile, "build", f"{package}-{digest}")
            os.makedirs(os.path.join(folder, "out"))
            for name in ("root-output", "invoked.timestamp"):
                open(os.path.join(folder, name), "w").close()
            os.utime(os.path.join(folder, "invoked.timestamp"), ns=(age, age))
            os.makedirs(os.path.join(profile, ".fingerprint", f"{package}-{digest}"))

        gone_build = os.path.join(tmp, "gone", "build.rs")
        live_build = os.path.join(tmp, "live", "build.rs")
        open(live_build, "w").close()
        reg_build = os.path.join(home, "registry", "src", "ring-0.17", "build.rs")
        build_script("mine", "000000000000c001", gone_build)
        build_script("mine", "000000000000c002", live_build)
        build_script("ring", "000000000000c003", reg_build)
        run("mine", "000000000000d001", 1)
        run("mine", "000000000000d002", 2)
        # Two versions of a registry crate's build script: both runs live.
        run("ring", "000000000000d003", 1)
        run("ring", "000000000000d004", 2)
        # Dry run: nothing removed.
        assert prune([target], dry_run=True) == 3
        assert os.path.exists(os.path.join(deps, "libmine-fedcba9876543210.rlib"))
        # Without --one-build a member's older build and run stay.
        assert prune([target], dry_run=False) == 3
        assert os.path.exists(old)
        assert prune([target], dry_run=False, one_build=True) == 2
        assert sorted(os.listdir(os.path.join(host, "build"))) == [
            "mine-000000000000c002",
            "ring-000000000000c003",
        ]
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
            "mine-000000000000d002",
            "mine-0123456789abcdef",
            "ring-000000000000d003",
            "ring-000000000000d004",
            "serde-1111111111111111",
            "serde-2222222222222222",
            "target-00000000000000b2",
        ]
        assert sorted(os.listdir(os.path.join(profile, "build"))) == [
            "mine-000000000000d002",
            "ring-000000000000d003",
            "ring-000000000000d004",
        ]
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
