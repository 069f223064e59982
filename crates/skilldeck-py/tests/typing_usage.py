"""Checked by `mypy --strict` in scripts/test-python.sh (not run by pytest):
the public API as a user writes it must type-check against the stubs."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional

import skilldeck
from skilldeck import (
    Activation,
    CacheStats,
    Deck,
    Diagnostic,
    Resource,
    RunResult,
    SearchHit,
    Skill,
    SkillTool,
)
from skilldeck.langchain import create_tools


def use(deck: Deck) -> None:
    skills: List[Skill] = deck.skills
    names: List[str] = [s.name for s in skills]
    tools: List[str] = [t for s in skills for t in s.allowed_tools]
    scope: str = deck.get(names[0]).scope
    catalog: str = deck.catalog(format="xml", budget_tokens=500, query="pdf")
    a: Activation = deck.activate("x", "args", conversation="c")
    body: Optional[str] = a.body
    text: str = a.text
    r: Resource = deck.read("x", "references/R.md")
    data: bytes = r.data
    hits: List[SearchHit] = deck.search("pdf", limit=3, source="project", pattern="^p", keywords=["form"])
    score: float = hits[0].score
    stats: CacheStats = deck.cache_stats()
    rate: float = stats.hit_rate
    changed: bool = deck.reload().catalog_changed
    diags: List[Diagnostic] = skilldeck.validate("skills/x", mode="lenient")
    line: Optional[int] = diags[0].line
    try:
        deck.get("y")
    except skilldeck.SkillNotFoundError as e:
        close: List[str] = e.suggestions
    except skilldeck.SkillParsingError as e:
        located: List[Diagnostic] = e.diagnostics
    run: RunResult = deck.run("x", "scripts/a.py", args=["1"], stdin=b"in", timeout=2.5)
    code: Optional[int] = run.exit_code
    out: str = run.stdout + run.stderr
    ms: int = run.duration_ms
    cut: bool = run.stdout_truncated or run.timed_out
    called: RunResult = deck.call_tool("x", "lookup", {"word": "w"})
    structured: Optional[Dict[str, Any]] = called.structured
    declared: List[SkillTool] = deck.skill_tools()
    schema: Dict[str, Any] = declared[0].input_schema
    try:
        deck.call_tool("x__lookup", arguments={})
    except skilldeck.InvalidArgumentsError as e:
        what: Optional[str] = e.kind
    except skilldeck.SkillInvocationError as e:
        why: Optional[str] = e.kind
    print(code, out, ms, cut, structured, schema, deck.execution_enabled)
    print(tools, scope, catalog, body, text, data, score, rate, changed, line, create_tools(deck, style="activate"),
          create_tools(deck, conversation="t", handle_errors=False))


async def ause() -> None:
    deck = await Deck.adiscover(roots=["skills"])
    results = await asyncio.gather(deck.aactivate("a"), deck.aactivate("b"))
    first: Activation = results[0]
    found: List[SearchHit] = await deck.asearch("pdf")
    res: Resource = await deck.aread("a", "SKILL.md")
    ran: RunResult = await deck.arun("a", "scripts/x.py")
    tool: RunResult = await deck.acall_tool("a__t", arguments={"k": 1}, timeout=3)
    print(first, found, res, ran, tool)
