#!/usr/bin/env python3
"""Writes N small, valid skill folders for the UI's scale test.

    python3 tests/ui/gen_scale.py N OUT

Names are `s-00000-<word>` ... (sorted by number), the last one
`zz-last-<N>` so that it sorts after every other; every 7th declares
`metadata.capabilities: network`, every 5th ships `scripts/run.py`, every
3rd declares `allowed-tools`. Deterministic.
"""
import sys
from pathlib import Path

WORDS = ["invoice", "ledger", "forecast", "triage", "schema", "release", "audit",
         "summary", "backup", "deploy", "metrics", "contract", "report", "index"]


def name_of(i: int, n: int) -> str:
    """The name of skill `i` of `n`."""
    return f"zz-last-{n}" if i == n - 1 else f"s-{i:05}-{WORDS[i % len(WORDS)]}"


def main() -> None:
    n, out = int(sys.argv[1]), Path(sys.argv[2])
    for i in range(n):
        word = WORDS[i % len(WORDS)]
        name = name_of(i, n)
        meta = ['  version: "1.0.0"']
        if i % 7 == 0:
            meta.append('  capabilities: "network"')
        extra = "allowed-tools: Read Grep\n" if i % 3 == 0 else ""
        skill = out / name
        skill.mkdir(parents=True, exist_ok=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: \"Handles {word} tasks (skill {i}). "
            f"Use when a {word} needs work.\"\n{extra}metadata:\n" + "\n".join(meta)
            + f"\n---\n# {name}\n\nSteps for {word}.\n")
        if i % 5 == 0:
            (skill / "scripts").mkdir(exist_ok=True)
            (skill / "scripts" / "run.py").write_text(f"print('{word} {i}')\n")


if __name__ == "__main__":
    main()
