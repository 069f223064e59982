"""The host's model-access rule through Python: a skill with
``disable-model-invocation: true`` and one set to mode ``manual`` (each
with a script and a declared tool) are user-invoked only. ``create_tools``
never gives the model their activation or their tools, even with
``[exec] tools = "always"``; the model's path (the one the LangChain tools
take) is refused without running anything; the application itself still
runs them with ``run`` and ``call_tool``.

The skills mirror ``skilldeck_testkit::model_access`` (the Rust fixtures):
no sandbox (the operator's explicit choice), so a run leaves a mark in the
skill folder, the proof that code ran or did not."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck import Deck, SkillInvocationError
from skilldeck.langchain import create_tools
from conftest import write_skill

USER_ONLY = "deploy"
MANUAL = "payments"
OPEN = "words"
SCRIPT = "scripts/run.sh"
TOOL = "ship"
MARKER = "ran.marker"
CONFIG = (
    '[modes]\npayments = "manual"\n\n'
    '[exec]\nenabled = true\nsandbox = "none"\ntools = "always"\n'
)
TOOLS = (
    "tools:\n  - name: ship\n    description: Ship it (a side effect).\n"
    "    parameters:\n      target: {type: string}\n    run: scripts/run.sh\n"
)
RUN = 'touch "$SKILLDECK_SKILL_DIR/ran.marker"\necho \'{"ran": true}\'\n'


@pytest.fixture
def root(skills_root: Path) -> Path:
    for name, extra in ((USER_ONLY, "disable-model-invocation: true\n"), (MANUAL, ""), (OPEN, "")):
        write_skill(skills_root, name, f"Ships {name} things. Use when shipping.",
                    body=f"# {name}\nRun {SCRIPT}.\n", frontmatter=extra + TOOLS,
                    files={SCRIPT: RUN})
    return skills_root


@pytest.fixture
def deck(root: Path, tmp_path: Path) -> Deck:
    config = tmp_path / "skilldeck.toml"
    config.write_text(CONFIG, encoding="utf-8")
    return Deck.discover(roots=[root], config=config)


def ran(root: Path, skill: str) -> bool:
    return (root / skill / MARKER).exists()


def test_create_tools_never_gives_the_model_a_user_invoked_skill_or_its_tools(deck: Deck) -> None:
    for style in ("per-skill", "activate"):
        names = {t.name for t in create_tools(deck, style)}
        assert f"{OPEN}__{TOOL}" in names, names
        for skill in (USER_ONLY, MANUAL):
            assert skill not in names and f"{skill}__{TOOL}" not in names, names
    assert [t.full_name for t in deck.model_skill_tools()] == [f"{OPEN}__{TOOL}"]
    # The application's own view still has every tool.
    assert {t.full_name for t in deck.skill_tools()} == {
        f"{s}__{TOOL}" for s in (USER_ONLY, MANUAL, OPEN)
    }


def test_the_models_call_to_a_user_invoked_skills_tool_is_refused_and_nothing_runs(
    deck: Deck, root: Path
) -> None:
    for skill in (USER_ONLY, MANUAL):
        # The path every LangChain skill tool takes.
        with pytest.raises(SkillInvocationError) as refused:
            deck._call_execution_tool(f"{skill}__{TOOL}", {"target": "prod"}, "c1")
        assert refused.value.kind == "not_model_invocable"
        message = str(refused.value)
        assert "user-invoked only" in message, message
        assert f"`skilldeck call {skill} {TOOL} --args JSON`" in message, message
        with pytest.raises(SkillInvocationError) as refused:
            deck._call_execution_tool(
                "run_skill_script", {"name": skill, "path": SCRIPT}, "c1"
            )
        assert refused.value.kind == "not_model_invocable"
        assert f"`skilldeck run {skill} {SCRIPT}`" in str(refused.value)
        with pytest.raises(SkillInvocationError) as refused:
            deck.activate(skill, conversation="c1")
        assert refused.value.kind == "not_model_invocable"
        assert not ran(root, skill), f"{skill}'s code ran"
    # The usable skill's tool runs on the same path: the refusals are the rule's.
    result = deck._call_execution_tool(f"{OPEN}__{TOOL}", {"target": "prod"}, "c1")
    assert result.structured == {"ran": True}
    assert ran(root, OPEN)


def test_the_application_still_runs_a_user_invoked_skill(deck: Deck, root: Path) -> None:
    assert deck.run(USER_ONLY, SCRIPT).structured == {"ran": True}
    assert ran(root, USER_ONLY)
    assert deck.call_tool(MANUAL, TOOL, {"target": "prod"}).structured == {"ran": True}
    assert ran(root, MANUAL)
