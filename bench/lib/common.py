"""What every benchmark script needs, once: paths, building the release
binaries, generated skill sets, temporary folders, the optional corpus,
throwaway venvs for peers from PyPI, and formatting (times, ratios,
min / median).

Use from a script in bench/:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
    import common

Everything here lives inside the repository: a fresh clone runs
`bench/run --quick` with nothing beside it. The real-skill corpus is the one
optional input (`--corpus DIR`, else `$SKILLDECK_CORPUS`, else
`../shared/corpus` beside the checkout); benchmarks that need it say so and
skip when it is absent.
"""
import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import gen_skills

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))


def host_triple():
    """The host's target triple (`rustc -vV`), e.g. x86_64-unknown-linux-gnu."""
    try:
        out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "x86_64-unknown-linux-gnu"
    return next((line.split(":", 1)[1].strip() for line in out.splitlines()
                 if line.startswith("host:")), "x86_64-unknown-linux-gnu")


# Release builds name the host triple explicitly (`--target`), as the napi
# CLI does for the Node addon: the two then share one set of compiled
# dependencies in target/<triple>/release (without --target cargo keeps a
# second set in target/release). scripts/dist.sh does the same.
HOST = host_triple()
RELEASE = os.path.join(TARGET, HOST, "release")
# What scripts/release-build.sh builds (the `dist` profile: release, and a
# panic aborts): the binary scripts/dist.sh ships and bench/budgets counts.
DIST = os.path.join(TARGET, HOST, "dist")
SKILLDECK = os.path.join(RELEASE, "skilldeck")
FLOOR = os.path.join(RELEASE, "floor")
FLOOR_VALIDATE = os.path.join(RELEASE, "floor-validate")
PEAK_RSS = os.path.join(RELEASE, "peak-rss")
GEN = os.path.join(BENCH, "lib", "gen_skills.py")
# The corpus of real skills: optional, outside the repository.
DEFAULT_CORPUS = os.environ.get("SKILLDECK_CORPUS") or os.path.normpath(
    os.path.join(ROOT, "..", "shared", "corpus"))
# The file that marks a folder as the corpus (skills-ref's verdicts).
CORPUS_VERDICTS = "skills-ref-verdicts.tsv"


def log(msg):
    """A progress line on stderr (stdout is the report)."""
    print(msg, file=sys.stderr, flush=True)


def build(*packages, examples=(), locked=False, quiet=True):
    """`cargo build --release` of the given packages (and `-p skilldeck
    --example NAME` for each example)."""
    flags = (["--release", "--target", HOST] + (["--quiet"] if quiet else [])
             + (["--locked"] if locked else []))
    if packages:
        subprocess.run(["cargo", "build", *flags, *(a for p in packages for a in ("-p", p))],
                       cwd=ROOT, check=True)
    for example in examples:
        subprocess.run(["cargo", "build", *flags, "-p", "skilldeck", "--example", example],
                       cwd=ROOT, check=True)


def generate(n, out, seed=42, **options):
    """`n` generated skills in `out` (bench/lib/gen_skills.py, in-process)."""
    gen_skills.generate(n, out, seed=seed, **options)
    return out


@contextlib.contextmanager
def workdir(prefix="skilldeck-bench-"):
    """A temporary folder, removed afterwards whatever happens."""
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def corpus(path=None):
    """The corpus folder when it is there (with its verdicts file), else
    None: callers skip what needs it and say so."""
    path = os.path.normpath(path or DEFAULT_CORPUS)
    return path if os.path.isfile(os.path.join(path, CORPUS_VERDICTS)) else None


def corpus_skill_dirs(path):
    """The corpus's skill folders, in its verdicts file's order."""
    with open(os.path.join(path, CORPUS_VERDICTS), encoding="utf-8") as f:
        lines = f.read().splitlines()[1:]
    return [os.path.join(path, line.split("\t")[0]) for line in lines if line]


def skip(what, why):
    """Prints a SKIP line for `what` and exits 0 (a missing optional input
    is not a failure)."""
    print(f"SKIP {what}: {why}")
    sys.exit(0)


def venv(path, packages, probe):
    """A throwaway venv at `path` with `packages` from PyPI; `probe` is a
    Python statement that succeeds once they are importable. Returns its
    python, or None (with the pip error logged) when PyPI cannot be used."""
    py = os.path.join(path, "bin", "python")
    if not os.path.exists(py):
        if subprocess.run([sys.executable, "-m", "venv", path]).returncode != 0:
            return None
    if subprocess.run([py, "-c", probe], capture_output=True).returncode != 0:
        r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages],
                           capture_output=True, text=True)
        if r.returncode != 0:
            log(r.stderr[-500:])
            return None
    return py


def proc_status_kib(pid, key):
    """A `kB` field of /proc/PID/status (`VmRSS`, `VmHWM`, ...) in KiB; None
    when the process has no such field."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def mm(values):
    """{min, median, n} of a list of numbers."""
    return {"min": min(values), "median": statistics.median(values), "n": len(values)}


def ms(seconds):
    """A duration for a report: milliseconds below 10 s, else seconds."""
    return f"{seconds * 1e3:,.1f} ms" if seconds < 10 else f"{seconds:,.2f} s"


def us(seconds):
    return f"{seconds * 1e6:,.0f} µs"


def ratio(numerator, denominator, digits=2):
    """`a / b` as `1.23×`, or `n/a` when b is zero."""
    return f"{numerator / denominator:.{digits}f}×" if denominator else "n/a"


def machine():
    """`N cores (CPU model), Linux RELEASE` for report headers."""
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
            model = m.group(1) if m else None
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({model or 'unknown CPU'}), Linux {os.uname().release}"
