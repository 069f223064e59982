"""Seed 003's five `$ARGUMENTS` cases, from Python, as the core's
substitution (activation/substitute.rs) defines them."""

from __future__ import annotations

from pathlib import Path

from skilldeck import Deck
from conftest import write_skill


def body_of(root: Path, body: str, arguments: str) -> str:
    write_skill(root, "s", body=body)
    activation = Deck.discover(roots=[root]).activate("s", arguments)
    assert activation.body is not None
    return activation.body


def test_arguments_placeholder_is_replaced_by_the_whole_string(skills_root: Path) -> None:
    assert body_of(skills_root, "Review: $ARGUMENTS", "code") == "Review: code"


def test_every_arguments_placeholder_is_replaced(skills_root: Path) -> None:
    assert body_of(skills_root, "$ARGUMENTS\n\n$ARGUMENTS", "test") == "test\n\ntest"


def test_empty_arguments_make_the_placeholder_empty(skills_root: Path) -> None:
    assert body_of(skills_root, "[$ARGUMENTS]", "") == "[]"


def test_arguments_without_a_placeholder_are_appended(skills_root: Path) -> None:
    assert body_of(skills_root, "Review code", "def foo()") == "Review code\n\nARGUMENTS: def foo()"


def test_no_arguments_and_no_placeholder_leave_the_body_unchanged(skills_root: Path) -> None:
    assert body_of(skills_root, "Review code", "") == "Review code"


def test_positional_and_quoted_arguments(skills_root: Path) -> None:
    assert body_of(skills_root, "$0 / $1 / $ARGUMENTS", '"a b" c') == 'a b / c / "a b" c'


def test_escaped_placeholder_stays_literal(skills_root: Path) -> None:
    assert body_of(skills_root, r"Type \$ARGUMENTS", "x") == "Type $ARGUMENTS\n\nARGUMENTS: x"
