"""Host-implemented skill tools (declared without ``run``, seed 002): the
application registers a handler; the host checks the arguments against the
tool's schema before calling it, offers the tool only while a handler is
registered, and reports it until then."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest

from skilldeck import Deck, InvalidArgumentsError, SkillInvocationError
from skilldeck.langchain import create_tools

# The fixtures shared with the Rust tests (scripts/test-python.sh sets the
# variable: the tests run from a copy outside the checkout).
FIXTURES = Path(
    os.environ.get(
        "SKILLDECK_FIXTURES",
        Path(__file__).resolve().parents[2] / "skilldeck-testkit" / "fixtures",
    )
)
SEED_002 = FIXTURES / "seeds" / "002-deep-research"
TOOL = "deep_research__initiate_research"


@pytest.fixture
def deck(skills_root: Path) -> Deck:
    shutil.copytree(SEED_002, skills_root / "deep-research")
    config = skills_root.parent / "skilldeck.toml"
    config.write_text('[exec]\ntools = "always"\n', encoding="utf-8")
    return Deck.discover([skills_root], config=config)


def test_seed_002_loads_as_written(deck: Deck) -> None:
    (tool,) = deck.skill_tools()
    assert tool.full_name == TOOL
    assert tool.host_implemented and tool.run is None
    assert tool.input_schema["properties"]["sources"]["items"] == {"type": "string"}
    assert tool.input_schema["required"] == ["query"]


def test_a_tool_without_a_handler_is_reported_and_not_offered(deck: Deck) -> None:
    codes = [(d.code, d.line) for d in deck.diagnostics]
    assert ("tool-handler-missing", 7) in codes
    assert deck.offerable_skill_tools() == []
    assert all(t.name != TOOL for t in create_tools(deck))


def test_the_handler_sees_only_valid_arguments(deck: Deck) -> None:
    seen: List[Dict[str, Any]] = []

    def initiate(arguments: Dict[str, Any]) -> Dict[str, Any]:
        seen.append(arguments)
        return {"task": "t-1", "query": arguments["query"]}

    deck.register_tool_handler(TOOL, initiate)
    assert [d.code for d in deck.diagnostics] == []
    tools = {t.name: t for t in create_tools(deck)}
    assert TOOL in tools
    tool = tools[TOOL]
    # Invalid: the handler is never called; the model gets the error.
    out = tool.invoke({"query": "q", "sources": "web"})
    assert "sources" in out
    assert seen == []
    out = tool.invoke({"query": "rust", "sources": ["web", "slack"]})
    assert '"task": "t-1"' in out or '"task":"t-1"' in out
    assert seen == [{"query": "rust", "sources": ["web", "slack"]}]


def test_a_handlers_exception_is_the_tools_error(deck: Deck) -> None:
    def broken(arguments: Dict[str, Any]) -> str:
        raise RuntimeError("quota spent")

    deck.register_tool_handler(TOOL, broken)
    with pytest.raises(SkillInvocationError, match="quota spent"):
        deck._call_host_tool(TOOL, {"query": "q"}, "c1")


def test_a_handler_is_refused_for_an_unknown_tool(deck: Deck) -> None:
    with pytest.raises(InvalidArgumentsError):
        deck.register_tool_handler("nobody__nothing", lambda a: a)
    with pytest.raises(TypeError):
        deck.register_tool_handler(TOOL, "not callable")  # type: ignore[arg-type]
    assert deck.remove_tool_handler(TOOL) is False
