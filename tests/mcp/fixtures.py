"""The skills the MCP tests serve, written to a folder (standard library only,
so scripts/test-mcp.sh can build them for the Inspector without the venv)."""

from __future__ import annotations

from pathlib import Path


def write_skill(root: Path, folder: str, frontmatter: str, body: str) -> Path:
    d = root / folder
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\n{frontmatter.strip()}\n---\n{body}", encoding="utf-8")
    return d


# One byte of every value, behind a PNG signature: a file no text decoder keeps.
BINARY_ASSET = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4

FORMS_MD = (
    "# PDF forms\r\n"
    "\r\n"
    "Fill form fields with `fill_form.py`. Ünïcödé: café, 日本語, 😀.\r\n"
    "Windows line endings on purpose.\r\n"
)


# Text edge cases in csv-tools/data: bytes that are not UTF-8, a UTF-8 byte
# order mark, and a name a URI must percent-encode. Whatever resources/read
# makes of them, its bytes must match the manifest's digest and size.
CSV_DATA = {
    "latin1.csv": b"name,city\nJos\xe9,M\xfcnchen\n",
    "bom.csv": b"\xef\xbb\xbfname,city\nAda,London\n",
    "my file.csv": b"a,b\n1,2\n",
}


def make_skills(root: Path) -> Path:
    """The main fixture: six skills covering the cases the tests need.

    - pdf-tools: references/ (CRLF, non-ASCII), a nested folder, a script,
      a binary asset, an empty folder, metadata, `$ARGUMENTS` in the body;
    - csv-tools: data files that are not UTF-8, start with a BOM, or have a
      space in their name;
    - internal-helper: `user-invocable: false` (model only, not a prompt);
    - deploy: `disable-model-invocation: true` (prompt only, not a tool name);
    - commit-message: `argument-hint`;
    - editable: changed by the hot reload tests.
    """
    root.mkdir(parents=True, exist_ok=True)
    d = write_skill(
        root,
        "pdf-tools",
        """
name: pdf-tools
description: Extract text and tables from PDF files. Use when the user gives a PDF.
license: Apache-2.0
metadata:
  author: skilldeck-tests
  version: "1.2"
allowed-tools: Bash(python:*) Read
""",
        "# PDF tools\n\nProcess the file: $ARGUMENTS\n\n"
        "For forms, read [the forms guide](references/FORMS.md).\n",
    )
    (d / "references").mkdir()
    (d / "references" / "FORMS.md").write_bytes(FORMS_MD.encode("utf-8"))
    (d / "references" / "nested").mkdir()
    (d / "references" / "nested" / "deep.txt").write_text("deep file\n", encoding="utf-8")
    (d / "scripts").mkdir()
    (d / "scripts" / "extract.py").write_text("print('extract')\n", encoding="utf-8")
    (d / "templates").mkdir()  # empty: a directory resource with no children
    (d / "assets").mkdir()
    (d / "assets" / "logo.png").write_bytes(BINARY_ASSET)

    d = write_skill(
        root,
        "csv-tools",
        """
name: csv-tools
description: Clean and summarise CSV files. Use when the user mentions a spreadsheet export.
""",
        "# CSV tools\n\nRead the CSV, then summarise it.\n",
    )
    (d / "data").mkdir()
    for name, data in CSV_DATA.items():
        (d / "data" / name).write_bytes(data)
    write_skill(
        root,
        "internal-helper",
        """
name: internal-helper
description: Background conventions for this repository. Use when editing any file here.
user-invocable: false
""",
        "# Internal helper\n\nFollow the house style.\n",
    )
    write_skill(
        root,
        "deploy",
        """
name: deploy
description: Deploy the service to production. Only when the user asks for it.
disable-model-invocation: true
""",
        "# Deploy\n\nDeploy $ARGUMENTS now.\n",
    )
    write_skill(
        root,
        "commit-message",
        """
name: commit-message
description: Write a conventional commit message for the staged changes.
argument-hint: "[ticket-id] [summary]"
""",
        "# Commit message\n\nTicket and summary: $ARGUMENTS\n",
    )
    write_skill(
        root,
        "editable",
        """
name: editable
description: Original description of the editable skill. Use in reload tests.
""",
        "# Editable\n\nORIGINAL BODY MARKER\n",
    )
    return root


def make_many_skills(root: Path, count: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        name = f"bulk-{i:03d}"
        write_skill(
            root,
            name,
            f"name: {name}\ndescription: Bulk skill number {i}. Use when testing pagination.",
            f"# {name}\n\nBody {i}.\n",
        )
    return root


MODEL_INVOCABLE = {"pdf-tools", "csv-tools", "internal-helper", "commit-message", "editable"}
USER_INVOCABLE = {"pdf-tools", "csv-tools", "deploy", "commit-message", "editable"}
ALL_SKILLS = MODEL_INVOCABLE | USER_INVOCABLE


def make_conformance_skills(root: Path) -> Path:
    """The skills the official conformance suite runs against: a first skill
    (in skills/list order) with subfolders, since the suite's directory
    checks explore the first skill it is given, and a skill nested in it,
    published as skill://aaa-outer/inner-skill/SKILL.md (SEP-2640)."""
    make_skills(root)
    outer = write_skill(
        root,
        "aaa-outer",
        "name: aaa-outer\ndescription: A skill with a skill nested in it.",
        "# Outer\n\nSee references/GUIDE.md.\n",
    )
    (outer / "references").mkdir()
    (outer / "references" / "GUIDE.md").write_text("# Guide\n", encoding="utf-8")
    inner = write_skill(
        outer,
        "inner-skill",
        "name: inner-skill\ndescription: A skill nested in aaa-outer.",
        "# Inner\n",
    )
    (inner / "notes").mkdir()
    (inner / "notes" / "one.md").write_text("one\n", encoding="utf-8")
    return root
