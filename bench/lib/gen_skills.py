#!/usr/bin/env python3
"""Deterministic synthetic Agent Skills for the benchmarks.

    bench/lib/gen_skills.py N [OUTDIR] [--out DIR] [--seed S] [--scripts-ratio R]
                            [--assets-ratio R] [--allowed-tools-style string|list]
                            [--nested K]

Writes N skills into OUTDIR (or --out; default ./bench-skills-N), replacing
it. The same arguments give the same bytes on every machine (one seeded
`random.Random`, no clock, no locale, files written with "\n").

The shape is that of real libraries, so that discovery and validation
figures mean something:

    OUT/<name>/SKILL.md                  frontmatter + a 2-8 KB Markdown body
    OUT/<name>/references/REFERENCE.md   a 4-16 KB reference (every skill)
    OUT/<name>/scripts/helper.py         a small script (--scripts-ratio, 0.25)
    OUT/<name>/assets/template.txt       a small asset (--assets-ratio, 0.15)

The folder name is the frontmatter `name` (`<verb>-<noun>-<domain>-<index>`),
as the specification requires, so every skill is valid in strict mode. The
frontmatter holds `name`, `description` (80 to about 450 characters, ending
with a "Use when ..." trigger), `license` (three skills in four),
`compatibility` (three in ten), `metadata` (author, version, tags) and
`allowed-tools` (a space-separated string, or a YAML list with
--allowed-tools-style list). About half of the bodies use `$ARGUMENTS`, and
every body links its reference file. --nested K spreads the skills over K
category folders (OUT/cat-XX/<name>/) for recursive discovery.
"""
import argparse
import os
import random
import shutil

ACTIONS = ["analyze", "review", "generate", "convert", "validate", "summarize",
           "extract", "format", "migrate", "audit", "deploy", "test", "refactor",
           "document", "monitor", "benchmark", "translate", "classify", "render", "sync"]
SUBJECTS = ["pdf", "csv", "json", "sql", "docker", "kubernetes", "terraform", "git",
            "python", "rust", "typescript", "excel", "slides", "invoice", "contract",
            "logs", "metrics", "api", "schema", "changelog", "release", "image",
            "audio", "email", "calendar", "jira", "slack", "postgres", "redis", "s3"]
AREAS = ["finance", "legal", "devops", "data", "security", "frontend", "backend",
         "ml", "research", "support", "sales", "hr", "marketing", "qa", "infra"]
AGENT_TOOLS = ["Read", "Write", "Edit", "Grep", "Glob", "Bash(git:*)", "Bash(python:*)",
               "Bash(jq:*)", "WebFetch", "WebSearch"]
LICENSES = ["MIT", "Apache-2.0", "Proprietary. LICENSE.txt has complete terms"]
VOCABULARY = """
a an the this that each every all any some no of to in on at by for with from into
over under before after when while if then else unless until once only also never
always must should may can will file folder data record step check output input
result skill agent user task value field table column row section error warning
config option format schema command script reference template example note rule
policy summary report change request response entry list item key name path line
read write open close parse render compare collect keep drop merge split sort count
validate convert extract generate update create delete ensure verify use review
""".split()


def words(rng, low, high):
    """A sentence of low..high words, capitalised, with a full stop."""
    chosen = [rng.choice(VOCABULARY) for _ in range(rng.randint(low, high))]
    return " ".join(chosen).capitalize() + "."


def prose(rng, low=3, high=6):
    return " ".join(words(rng, 8, 20) for _ in range(rng.randint(low, high)))


def quoted(text):
    """A YAML double-quoted scalar."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def body_of(rng, name, action, subject, size, with_arguments):
    lines = [f"# {action.capitalize()} {subject} ({name})", "", "## When to use", "",
             prose(rng), ""]
    if with_arguments:
        lines += ["## Input", "", f"Work on: $ARGUMENTS", "",
                  "If `$ARGUMENTS` is empty, ask the user what to work on.", ""]
    lines += ["## Steps", ""]

    def length():
        return sum(len(line) + 1 for line in lines)

    step = 0
    while length() < size * 0.7:
        step += 1
        lines.append(f"{step}. {words(rng, 10, 25)}")
        if step % 3 == 0:
            lines += ["", "```sh", f"python3 scripts/helper.py --{action} {subject}-input", "```", ""]
    lines += ["", "## Reference", "",
              "Details and edge cases: [references/REFERENCE.md](references/REFERENCE.md).", ""]
    while length() < size:
        lines += ["### Notes", "", prose(rng), ""]
    return "\n".join(lines) + "\n"


def reference_of(rng, name, subject, size):
    lines = [f"# {subject} reference ({name})", ""]
    while sum(len(line) + 1 for line in lines) < size:
        lines += [f"## `{rng.choice(VOCABULARY)}_{rng.randint(1, 999)}`", "", prose(rng), ""]
    return "\n".join(lines) + "\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def one_skill(rng, index, out, opts):
    action, subject, area = rng.choice(ACTIONS), rng.choice(SUBJECTS), rng.choice(AREAS)
    name = f"{action}-{subject}-{area}-{index:05d}"
    folder = os.path.join(out, f"cat-{index % opts.nested:02d}", name) if opts.nested else os.path.join(out, name)

    lead = f"{action.capitalize()} {subject} files and records for {area} work."
    detail = " ".join(words(rng, 6, 14) for _ in range(rng.randint(1, 4)))
    description = (lead + " " + detail)[:400] + f" Use when the user asks to {action} {subject} or mentions {area}."
    front = ["---", f"name: {name}", f"description: {quoted(description)}"]
    if rng.random() < 0.75:
        front.append(f"license: {rng.choice(LICENSES)}")
    if rng.random() < 0.3:
        front.append("compatibility: Needs python3 and network access")
    front += ["metadata:", f"  author: {area}-team",
              f'  version: "{rng.randint(0, 3)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}"',
              f"  tags: {subject},{action},{area}"]
    tools = rng.sample(AGENT_TOOLS, rng.randint(1, 4))
    if opts.allowed_tools_style == "list":
        front += ["allowed-tools:"] + [f"  - {t}" for t in tools]
    else:
        front.append("allowed-tools: " + " ".join(tools))
    front.append("---")

    body = body_of(rng, name, action, subject, rng.randint(2048, 8192), rng.random() < 0.5)
    write(os.path.join(folder, "SKILL.md"), "\n".join(front) + "\n\n" + body)
    write(os.path.join(folder, "references", "REFERENCE.md"),
          reference_of(rng, name, subject, rng.randint(4096, 16384)))
    if rng.random() < opts.scripts_ratio:
        write(os.path.join(folder, "scripts", "helper.py"),
              "#!/usr/bin/env python3\n"
              f'"""{name}: JSON arguments on stdin, a JSON summary on stdout."""\n'
              "import json\nimport sys\n\n"
              "args = {} if sys.stdin.isatty() else json.load(sys.stdin)\n"
              f'print(json.dumps({{"skill": "{name}", "args": args}}))\n')
    if rng.random() < opts.assets_ratio:
        write(os.path.join(folder, "assets", "template.txt"), prose(rng) + "\n")


def generate(n, out, seed=42, scripts_ratio=0.25, assets_ratio=0.15,
             allowed_tools_style="string", nested=0):
    """Writes `n` skills into `out` (replaced); returns (files, bytes)."""
    opts = argparse.Namespace(scripts_ratio=scripts_ratio, assets_ratio=assets_ratio,
                              allowed_tools_style=allowed_tools_style, nested=nested)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    rng = random.Random(seed)
    for i in range(n):
        one_skill(rng, i, out, opts)
    files = size = 0
    for folder, _, names in os.walk(out):
        for f in names:
            files += 1
            size += os.path.getsize(os.path.join(folder, f))
    return files, size


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int, help="how many skills")
    ap.add_argument("outdir", nargs="?", help="where (replaced); or --out")
    ap.add_argument("--out", help="where (replaced); default ./bench-skills-N")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--scripts-ratio", type=float, default=0.25)
    ap.add_argument("--assets-ratio", type=float, default=0.15)
    ap.add_argument("--allowed-tools-style", choices=["string", "list"], default="string")
    ap.add_argument("--nested", type=int, default=0, help="spread over K category folders")
    a = ap.parse_args()
    if a.n < 0:
        ap.error("N must be 0 or more")
    out = a.out or a.outdir or f"bench-skills-{a.n}"
    files, size = generate(a.n, out, a.seed, a.scripts_ratio, a.assets_ratio,
                           a.allowed_tools_style, a.nested)
    print(f"generated {a.n} skills in {out}: {files} files, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
