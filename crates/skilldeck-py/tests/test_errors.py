"""The exception hierarchy, mapped from the host's and the core's errors in
one place (src/errors.rs); messages are the core's."""

from __future__ import annotations

from pathlib import Path

import pytest

import skilldeck
from skilldeck import (
    Deck,
    ResourceError,
    SkilldeckError,
    SkillInvocationError,
    SkillNotFoundError,
    SkillParsingError,
)
from conftest import write_skill


def test_every_error_is_a_skilldeck_error() -> None:
    for cls in (SkillNotFoundError, SkillParsingError, ResourceError, SkillInvocationError):
        assert issubclass(cls, SkilldeckError)
    assert issubclass(SkillNotFoundError, LookupError)
    assert issubclass(SkilldeckError, Exception)


def test_unknown_skill_carries_the_cores_suggestions(skills_root: Path) -> None:
    write_skill(skills_root, "pdf-forms")
    write_skill(skills_root, "pdf-merge")
    deck = Deck.discover(roots=[skills_root])
    for call in (
        lambda: deck.get("pdf-form"),
        lambda: deck.activate("pdf-form"),
        lambda: deck.activate("pdf-form", conversation="c"),
        lambda: deck.read("pdf-form", "SKILL.md"),
    ):
        with pytest.raises(SkillNotFoundError) as e:
            call()
        assert e.value.name == "pdf-form"
        assert e.value.suggestions[0] == "pdf-forms"
        assert "did you mean 'pdf-forms'" in str(e.value)


def test_unreadable_skill_md_is_a_parsing_error_with_diagnostics(skills_root: Path) -> None:
    folder = write_skill(skills_root, "one")
    deck = Deck.discover(roots=[skills_root])
    # The file loses its frontmatter after discovery.
    (folder / "SKILL.md").write_text("no frontmatter any more\n")
    for conversation in (None, "c"):
        with pytest.raises(SkillParsingError) as e:
            deck.activate("one", conversation=conversation)
        assert e.value.diagnostics, "the core's located diagnostic"
        d = e.value.diagnostics[0]
        assert d.file is not None and d.file.endswith("SKILL.md") and d.code


def test_refused_resource_is_a_resource_error(skills_root: Path) -> None:
    write_skill(skills_root, "one")
    deck = Deck.discover(roots=[skills_root])
    with pytest.raises(ResourceError, match="absolute paths are not allowed"):
        deck.read("one", "/etc/passwd")


def test_arguments_over_the_limit_are_an_invocation_error(skills_root: Path) -> None:
    write_skill(skills_root, "one", body="$ARGUMENTS\n")
    deck = Deck.discover(roots=[skills_root])
    with pytest.raises(SkillInvocationError, match="the limit is"):
        deck.activate("one", "x" * 10_000_000)


def test_model_cannot_activate_a_user_only_skill(skills_root: Path) -> None:
    write_skill(skills_root, "manual-only", frontmatter="disable-model-invocation: true\n")
    deck = Deck.discover(roots=[skills_root])
    # The application may; the model (a conversation) may not.
    assert "Instructions" in deck.activate("manual-only").text
    with pytest.raises(SkillInvocationError, match="user-invoked only.*may not activate it"):
        deck.activate("manual-only", conversation="c")


def test_malformed_config_is_a_parsing_error_naming_the_file(tmp_path: Path) -> None:
    config = tmp_path / "skilldeck.toml"
    config.write_text("roots = [\n")
    with pytest.raises(SkillParsingError, match="skilldeck.toml"):
        Deck.discover(roots=[tmp_path], config=config)


def test_errors_can_be_raised_by_user_code_too() -> None:
    e = SkillNotFoundError("gone", name="x", suggestions=["y"])
    assert (str(e), e.name, e.suggestions) == ("gone", "x", ["y"])
    assert SkillParsingError("bad").diagnostics == []
    assert isinstance(skilldeck.ResourceError("r"), SkilldeckError)
