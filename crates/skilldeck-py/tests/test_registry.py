"""``Deck.from_registry``: a Python program serves one registry agent's
skills, against the real registry (``skilldeck registry serve`` on
loopback, started as a process; ``SKILLDECK_BIN`` names the binary,
``scripts/test-python.sh`` sets it)."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Iterator, List

import pytest

import skilldeck
from conftest import write_skill

#: Far longer than anything here needs: past it, it did not happen.
GIVE_UP_SECONDS = 60


def _bin() -> str:
    path = os.environ.get("SKILLDECK_BIN")
    if not path:
        pytest.fail(
            "SKILLDECK_BIN is not set: run scripts/test-python.sh, or set it to a "
            "built `skilldeck` binary (cargo build -p skilldeck-cli)"
        )
    return path


class Registry:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.data = home / "registry-data"
        self.process = subprocess.Popen(
            [_bin(), "registry", "serve", "--listen", "127.0.0.1:0", "--data", str(self.data)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        lines: "queue.Queue[str]" = queue.Queue()
        stdout = self.process.stdout
        assert stdout is not None

        def pump() -> None:
            for line in stdout:
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        prefix = "skilldeck registry listening on "
        while True:
            line = lines.get(timeout=GIVE_UP_SECONDS)
            if line.startswith(prefix):
                self.url = line[len(prefix) :].strip()
                break
        self.admin = self.data / "admin-token"

    def sd(self, *args: str) -> str:
        out = subprocess.run(
            [_bin(), *args, "--registry", self.url, "--token-file", str(self.admin)],
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=GIVE_UP_SECONDS,
        )
        assert out.returncode == 0, f"{args}: {out.stdout}\n{out.stderr}"
        return out.stdout

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def registry(isolated_home: Path) -> Iterator[Registry]:
    server = Registry(isolated_home)
    try:
        yield server
    finally:
        server.stop()


def _publish(registry: Registry, names: List[str]) -> None:
    src = registry.home / "src"
    for name in names:
        folder = write_skill(
            src,
            name,
            description=f"Does {name} things. Use when testing the registry.",
            body=f"# {name}\n\nThe {name} instructions.\n",
            frontmatter='metadata:\n  version: "1.0.0"\n',
        )
        registry.sd("publish", str(folder), "--namespace", "acme")


def test_a_python_program_serves_exactly_a_registry_agents_skills_and_follows_its_assignments(
    registry: Registry, tmp_path: Path
) -> None:
    _publish(registry, ["pdf", "notes", "other"])
    registry.sd("registry", "agent", "create", "bot-1")
    registry.sd("registry", "assign", "bot-1", "acme/pdf")
    token = registry.sd("registry", "token", "create", "--agent", "bot-1").strip()

    deck = skilldeck.Deck.from_registry(registry.url, "bot-1", token, cache=tmp_path / "cache")
    assert [s.name for s in deck.skills] == ["pdf"]
    assert "The pdf instructions." in deck.activate("pdf").text
    with pytest.raises(skilldeck.SkillNotFoundError):
        deck.activate("notes")

    # Nothing changed: the lock answers 304, the catalog stays.
    assert not deck.reload().catalog_changed
    registry.sd("registry", "assign", "bot-1", "acme/notes")
    reload = deck.reload()
    assert reload.catalog_changed
    assert sorted(s.name for s in deck.skills) == ["notes", "pdf"]
    assert "The notes instructions." in deck.activate("notes").text


def test_a_registry_that_refuses_the_token_raises_registry_error_with_its_status(
    registry: Registry, tmp_path: Path
) -> None:
    registry.sd("registry", "agent", "create", "bot-1")
    with pytest.raises(skilldeck.RegistryError) as refused:
        skilldeck.Deck.from_registry(
            registry.url, "bot-1", "not-a-real-token", cache=tmp_path / "cache"
        )
    assert refused.value.status == 401


def test_an_agent_id_that_is_not_one_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        skilldeck.Deck.from_registry("http://127.0.0.1:9", "../etc", "t")
