"""Fixtures: small skill folders written per test (never the shared corpus),
and a HOME / config folder of the test's own so no user config or user
skills leak in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional

import pytest


def write_skill(
    root: Path,
    name: str,
    description: str = "Test skill. Use when testing.",
    body: str = "# Instructions\n",
    frontmatter: str = "",
    files: Optional[Dict[str, str]] = None,
) -> Path:
    """Writes ``root/name/SKILL.md`` (and ``files``), returns the folder."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n{frontmatter}---\n{body}"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    for rel, content in (files or {}).items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return folder


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    for var, sub in (
        ("HOME", ""),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".state"),
        ("XDG_DATA_HOME", ".data"),
    ):
        monkeypatch.setenv(var, os.fspath(home / sub) if sub else os.fspath(home))
    monkeypatch.chdir(home)
    return home


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    root.mkdir()
    return root
