#!/usr/bin/env python3
"""Strict-mode verdicts of skilldeck against skills-ref's, on the corpus of real skills (--corpus; skipped when absent).

Prints the agreement, lists every disagreement with its documented reason
(docs/design.md, "Where skills-ref departs from the spec"), and checks that
lenient mode loads every corpus skill whose description is non-empty.
Exits 1 if a disagreement has no documented reason or a loadable skill fails.

usage: bench/corpus_agreement.py [--corpus DIR] [--bin PATH]
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import common  # noqa: E402

# Our error codes that exist only because skills-ref accepts what the spec forbids.
STRICTER_THAN_REF = {
    "allowed-tools-not-string": "skills-ref accepts a list `allowed-tools`; spec: a space-delimited string",
    "metadata-value-not-string": "skills-ref stringifies non-string `metadata` values; spec: string to string",
    "license-not-string": "skills-ref accepts a list `license`; spec: a string",
    "compatibility-empty": "skills-ref accepts an empty `compatibility`; spec: 1-500 characters",
}
# skills-ref messages for input the spec allows.
LOOSER_THAN_REF = [
    (re.compile(r"JSONesque flow|flow (mapping|sequence)"), "skills-ref (strictyaml) rejects YAML flow style"),
    (re.compile(r"[Aa]nchor|[Aa]lias"), "skills-ref (strictyaml) rejects YAML anchors and aliases"),
    (re.compile(r"[Tt]ag"), "skills-ref (strictyaml) rejects YAML tags"),
    (re.compile(r"must start with YAML frontmatter"), "skills-ref rejects a UTF-8 BOM (we warn)"),
]


def run(binary, corpus, mode):
    out = subprocess.run(
        [binary, "validate", "-r", f"--{mode}", "--format", "json", corpus],
        capture_output=True, check=False,
    )
    if out.returncode not in (0, 1):
        sys.exit(f"skilldeck failed ({out.returncode}): {out.stderr.decode()}")
    reports = json.loads(out.stdout)
    return {os.path.relpath(r["path"], corpus): r for r in reports}


def description_non_empty(skill_md):
    """True when the frontmatter has a non-empty description (a rough reader,
    independent of skilldeck: any `description:` line with text, or a block)."""
    try:
        text = open(skill_md, encoding="utf-8", errors="replace").read()
    except OSError:
        return False
    m = re.match(r"\ufeff?---\r?\n(.*?)\r?\n---\s*\r?\n", text, re.S)
    if not m:
        return False
    fm = m.group(1)
    d = re.search(r"^description:[ \t]*(.*)$", fm, re.M)
    if not d:
        return False
    value = d.group(1).strip().strip("'\"")
    if value in ("", "|", ">", "|-", ">-", "|+", ">+"):
        rest = fm[d.end():].split("\n")
        return any(line.startswith((" ", "\t")) and line.strip() for line in rest[1:3])
    return value not in ("null", "~")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=common.DEFAULT_CORPUS,
                    help="the corpus of real skills (default $SKILLDECK_CORPUS, else ../shared/corpus)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "skilldeck"))
    args = ap.parse_args()
    if common.corpus(args.corpus) is None:
        common.skip(os.path.basename(__file__), f"needs the corpus of real skills; none at {args.corpus} "
                    "(pass --corpus DIR or set SKILLDECK_CORPUS)")
    corpus = os.path.normpath(args.corpus)
    if not os.path.isfile(args.bin):
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)

    ref = {}
    with open(os.path.join(corpus, "skills-ref-verdicts.tsv"), encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            ref[row["skill_dir"]] = (row["verdict"], row.get("errors") or "")

    strict = run(args.bin, corpus, "strict")
    missing = sorted(set(ref) - set(strict))
    extra = sorted(set(strict) - set(ref))

    agree, explained, unexplained, other_reason = 0, [], [], []
    for skill, (verdict, ref_errors) in sorted(ref.items()):
        ours = strict.get(skill)
        if ours is None:
            continue
        our_verdict = "valid" if ours["valid"] else "invalid"
        if our_verdict == verdict:
            agree += 1
            if verdict == "invalid":
                reason = next((r for pat, r in LOOSER_THAN_REF if pat.search(ref_errors)), None)
                if reason:
                    codes = sorted({d["code"] for d in ours["diagnostics"] if d["severity"] == "error"})
                    other_reason.append((skill, reason, codes))
            continue
        our_errors = sorted({d["code"] for d in ours["diagnostics"] if d["severity"] == "error"})
        if verdict == "valid":
            reasons = [STRICTER_THAN_REF.get(c) for c in our_errors]
            row = (skill, f"skills-ref: valid; skilldeck: {', '.join(our_errors)}")
            if reasons and all(reasons):
                explained.append(row + ("; ".join(sorted(set(reasons))),))
            else:
                unexplained.append(row + ("no documented divergence",))
        else:
            reason = next((r for pat, r in LOOSER_THAN_REF if pat.search(ref_errors)), None)
            row = (skill, f"skills-ref: {ref_errors[:100]}; skilldeck: valid")
            (explained if reason else unexplained).append(row + (reason or "no documented divergence",))

    total = len(ref)
    print(f"corpus: {corpus} ({total} skills; skills-ref: "
          f"{sum(v == 'valid' for v, _ in ref.values())} valid)")
    print(f"skilldeck strict: {sum(r['valid'] for r in strict.values())} valid")
    print(f"agreement: {agree}/{total} = {100.0 * agree / total:.1f}%")
    print(f"disagreements: {len(explained) + len(unexplained)} "
          f"({len(explained)} documented, {len(unexplained)} unexplained)")
    for skill, what, why in explained + unexplained:
        print(f"  {skill}\n      {what}\n      reason: {why}")
    if other_reason:
        print(f"same verdict, different reason: {len(other_reason)}")
        for skill, why, codes in other_reason:
            print(f"  {skill}\n      skills-ref: {why}; skilldeck: {', '.join(codes)}")
    if missing or extra:
        print(f"skills found only by skills-ref: {missing}; only by skilldeck: {extra}")

    lenient = run(args.bin, corpus, "lenient")
    should_load = [s for s in ref if description_non_empty(os.path.join(corpus, s, "SKILL.md"))]
    failed = [s for s in should_load if not lenient.get(s, {}).get("valid")]
    print(f"lenient: {sum(r['valid'] for r in lenient.values())}/{len(lenient)} load; "
          f"{len(should_load) - len(failed)}/{len(should_load)} with a non-empty description")
    for s in failed:
        errs = [d["code"] for d in lenient.get(s, {}).get("diagnostics", []) if d["severity"] == "error"]
        print(f"  NOT LOADED: {s}: {errs}")
    return 1 if (unexplained or failed or missing or extra) else 0


if __name__ == "__main__":
    sys.exit(main())
