#!/usr/bin/env python3
"""Summarise git history between two refs as a Keep-a-Changelog style section.

Reads `git log --no-merges` for FROM..TO, parses Conventional Commit subjects
and prints grouped Markdown to stdout. Standard library only.

Usage:
    python3 git_log_summary.py --from v1.2.0 [--to HEAD] [--repo .] [--title "1.3.0 - 2024-05-01"]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from typing import Dict, List, NamedTuple, NoReturn, Optional

FIELD_SEP = "\x1f"
RECORD_SEP = "\x1e"

# type(scope)!: description
SUBJECT_RE = re.compile(
    r"^(?P<type>[A-Za-z]+)(?:\((?P<scope>[^()]*)\))?(?P<bang>!)?:\s+(?P<desc>.+)$"
)
BREAKING_FOOTER_RE = re.compile(r"^BREAKING[ -]CHANGE:\s*(?P<text>.*)$", re.MULTILINE)

# Commit type -> output section (order of SECTIONS is the output order).
TYPE_TO_SECTION = {
    "feat": "Features",
    "fix": "Bug Fixes",
    "perf": "Performance",
    "docs": "Documentation",
    "refactor": "Refactoring",
}
SECTIONS = [
    "Breaking Changes",
    "Features",
    "Bug Fixes",
    "Performance",
    "Documentation",
    "Refactoring",
    "Other",
]


class Commit(NamedTuple):
    sha: str
    subject: str
    author: str
    body: str


class Entry(NamedTuple):
    section: str
    text: str
    sha: str
    author: str
    breaking_note: Optional[str]


def fail(message: str, code: int = 1) -> NoReturn:
    print(f"git_log_summary: error: {message}", file=sys.stderr)
    sys.exit(code)


def run_git(repo: str, args: List[str], error: Optional[str] = None) -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", repo, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            check=False,
        )
    except FileNotFoundError:
        fail("git executable not found on PATH")
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip() or "no output"
        if error:
            fail(f"{error}: {detail}")
        fail(f"`git {' '.join(args)}` failed (exit {proc.returncode}): {detail}")
    return proc.stdout.decode("utf-8", "replace")


def read_commits(repo: str, from_ref: str, to_ref: str) -> List[Commit]:
    # Validate both refs up front for a clearer error than git log gives.
    run_git(repo, ["rev-parse", "--git-dir"], error=f"{repo!r} is not a git repository")
    for ref in (from_ref, to_ref):
        run_git(
            repo,
            ["rev-parse", "--verify", f"{ref}^{{commit}}"],
            error=f"unknown revision {ref!r} (is the tag fetched? try `git fetch --tags`)",
        )
    # Required fields: %H %s %an; %b is appended to detect BREAKING CHANGE footers.
    fmt = "%H%x1f%s%x1f%an%x1f%b%x1e"
    out = run_git(
        repo, ["log", "--no-merges", f"--pretty=format:{fmt}", f"{from_ref}..{to_ref}"]
    )
    commits = []
    for record in out.split(RECORD_SEP):
        record = record.strip("\n")
        if not record:
            continue
        parts = record.split(FIELD_SEP)
        if len(parts) < 3:
            continue
        sha, subject, author = parts[0], parts[1], parts[2]
        body = parts[3] if len(parts) > 3 else ""
        commits.append(Commit(sha, subject.strip(), author.strip(), body))
    return commits


def classify(commit: Commit) -> Entry:
    match = SUBJECT_RE.match(commit.subject)
    footer = BREAKING_FOOTER_RE.search(commit.body)
    breaking_note = footer.group("text").strip() if footer else None
    if match:
        ctype = match.group("type").lower()
        scope = match.group("scope")
        desc = match.group("desc").strip()
        text = f"**{scope}:** {desc}" if scope else desc
        breaking = bool(match.group("bang")) or footer is not None
        section = TYPE_TO_SECTION.get(ctype, "Other")
        if section == "Other":
            # Keep the type prefix (e.g. "ci: ...") so the entry stays meaningful.
            text = commit.subject
    else:
        text = commit.subject
        breaking = footer is not None
        section = "Other"
    if breaking:
        section = "Breaking Changes"
    return Entry(section, text, commit.sha, commit.author, breaking_note or None)


def render(entries: List[Entry], title: str, show_authors: bool) -> str:
    grouped: Dict[str, List[Entry]] = {name: [] for name in SECTIONS}
    for entry in entries:
        grouped[entry.section].append(entry)
    lines = [f"## {title}", ""]
    if not entries:
        lines.append("_No changes._")
        return "\n".join(lines) + "\n"
    for name in SECTIONS:
        items = grouped[name]
        if not items:
            continue
        lines.append(f"### {name}")
        lines.append("")
        for e in items:
            suffix = f" ({e.sha[:7]}"
            suffix += f", {e.author})" if show_authors else ")"
            lines.append(f"- {e.text}{suffix}")
            if e.breaking_note:
                lines.append(f"  - BREAKING: {e.breaking_note}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="Group Conventional Commits between two git refs into Markdown."
    )
    parser.add_argument("--from", dest="from_ref", required=True, metavar="REF",
                        help="start ref, exclusive (e.g. the previous release tag)")
    parser.add_argument("--to", dest="to_ref", default="HEAD", metavar="REF",
                        help="end ref, inclusive (default: HEAD)")
    parser.add_argument("--repo", default=".", metavar="PATH",
                        help="path to the git repository (default: .)")
    parser.add_argument("--title", default="Unreleased",
                        help='section heading, e.g. "1.3.0 - 2024-05-01" (default: Unreleased)')
    parser.add_argument("--no-authors", action="store_true",
                        help="omit author names from entries")
    args = parser.parse_args(argv)

    commits = read_commits(args.repo, args.from_ref, args.to_ref)
    entries = [classify(c) for c in commits]
    sys.stdout.write(render(entries, args.title, not args.no_authors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
