"""Running skill code from Python: ``deck.run`` / ``deck.call_tool`` (and
their async twins) bind the host's execution service under the config's
``[exec]``; skill-declared tools become LangChain ``StructuredTool``s.

The sandbox needs Landlock, seccomp and namespaces (or bubblewrap). Where a
layer is missing the host refuses to run anything: then these tests assert
that refusal (``SkillInvocationError`` with ``kind == "unavailable"``) in
place of the run, never skip."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

import skilldeck
from skilldeck import Deck, InvalidArgumentsError, RunResult, SkillInvocationError
from conftest import write_skill

# System python3 on the sandbox PATH (a venv under /tmp is not readable).
PY = "/usr/bin/env python3"

# A tool script: reads its JSON arguments on stdin, answers JSON. Run with
# arguments its schema forbids it fails loudly (exit 99): the "nothing ran"
# checks would then see an execution error instead of the host's refusal.
# (The skill folder is read-only in the sandbox, so no marker file.)
LOOKUP = f"""#!{PY}
import json, sys
args = json.load(sys.stdin)
if not isinstance(args.get("word"), str) or not all(isinstance(t, str) for t in args.get("tags", [])):
    print("RAN WITH INVALID ARGUMENTS", file=sys.stderr)
    sys.exit(99)
print(json.dumps({{"word": args["word"], "tool": "{{skill}}", "n": len(args.get("tags", []))}}))
"""

ECHO = f"""#!{PY}
import sys
print("args:" + ",".join(sys.argv[1:]))
print("stdin:" + sys.stdin.read())
print("to stderr", file=sys.stderr)
"""

SLEEP = f"""#!{PY}
import time
time.sleep(30)
"""

FAIL = f"""#!{PY}
import sys
print("something broke", file=sys.stderr)
sys.exit(3)
"""

TOOLS = """tools:
  - name: lookup
    description: Look a word up in {skill}.
    parameters:
      word: {{type: string, required: true}}
      tags: {{type: array, items: {{type: string}}}}
    run: scripts/lookup.py
"""


def make_skill(root: Path, name: str) -> Path:
    folder = write_skill(
        root,
        name,
        f"The {name} skill. Use when testing execution.",
        body=f"{name} instructions\n",
        frontmatter=TOOLS.format(skill=name),
        files={
            "scripts/lookup.py": LOOKUP.replace("{skill}", name),
            "scripts/echo.py": ECHO,
            "scripts/sleep.py": SLEEP,
            "scripts/fail.py": FAIL,
        },
    )
    for script in (folder / "scripts").iterdir():
        script.chmod(0o755)
    return folder


def write_config(path: Path, enabled: bool = True, extra: str = "") -> Path:
    path.write_text(
        f"[exec]\nenabled = {'true' if enabled else 'false'}\ntimeout-secs = 20\n{extra}",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def deck(skills_root: Path, tmp_path: Path) -> Deck:
    make_skill(skills_root, "alpha")
    make_skill(skills_root, "beta")
    return Deck.discover(roots=[skills_root], config=write_config(tmp_path / "skilldeck.toml"))


def sandboxed(call: Callable[[], RunResult]) -> Optional[RunResult]:
    """``call()``'s result; ``None`` when the host refused because the
    sandbox is unavailable here (the refusal is asserted: it names what is
    missing)."""
    try:
        return call()
    except SkillInvocationError as e:
        if e.kind != "unavailable":
            raise
        assert "was not run" in e.message and "sandbox" in e.message.lower(), e.message
        return None


def test_run_returns_the_outcome_of_a_script_under_scripts(deck: Deck) -> None:
    result = sandboxed(lambda: deck.run("alpha", "scripts/echo.py", args=["a", "b c"], stdin="hi"))
    if result is None:
        return
    assert isinstance(result, RunResult)
    assert result.exit_code == 0 and result.signal is None and not result.timed_out
    assert "args:a,b c" in result.stdout and "stdin:hi" in result.stdout
    assert "to stderr" in result.stderr
    assert not result.stdout_truncated and not result.stderr_truncated
    assert result.duration_ms >= 0
    assert (result.skill, result.path) == ("alpha", "scripts/echo.py")
    assert result.structured is None


def test_run_refuses_files_outside_scripts_before_running(deck: Deck) -> None:
    with pytest.raises(SkillInvocationError) as e:
        deck.run("alpha", "SKILL.md")
    assert e.value.kind == "denied" and "scripts/" in e.value.message


def test_run_unknown_skill_is_not_found_with_suggestions(deck: Deck) -> None:
    with pytest.raises(skilldeck.SkillNotFoundError) as e:
        deck.run("alpah", "scripts/echo.py")
    assert "alpha" in e.value.suggestions


def test_run_non_zero_exit_is_an_invocation_error_with_stderr(deck: Deck) -> None:
    try:
        deck.run("alpha", "scripts/fail.py")
    except SkillInvocationError as e:
        if e.kind == "unavailable":
            return
        assert e.kind == "execution_failed"
        assert "exit code 3" in e.message and "something broke" in e.message
    else:
        pytest.fail("a non-zero exit must raise")


def test_run_timeout_stops_the_script(deck: Deck) -> None:
    try:
        deck.run("alpha", "scripts/sleep.py", timeout=1)
    except SkillInvocationError as e:
        if e.kind == "unavailable":
            return
        assert e.kind == "timed_out" and "timed out" in e.message
    else:
        pytest.fail("the timeout must stop the script")


def test_run_timeout_out_of_range_is_refused(deck: Deck) -> None:
    with pytest.raises(InvalidArgumentsError, match="timeout"):
        deck.run("alpha", "scripts/echo.py", timeout=0)
    with pytest.raises(ValueError):
        deck.run("alpha", "scripts/echo.py", timeout=10_000)


def test_call_tool_passes_arguments_and_returns_structured_result(deck: Deck) -> None:
    for call in (
        lambda: deck.call_tool("alpha", "lookup", {"word": "w", "tags": ["x", "y"]}),
        lambda: deck.call_tool("alpha__lookup", arguments={"word": "w", "tags": ["x", "y"]}),
    ):
        result = sandboxed(call)
        if result is None:
            return
        assert result.tool == "alpha__lookup"
        assert result.structured == {"word": "w", "tool": "alpha", "n": 2}


def test_call_tool_invalid_arguments_name_the_field_and_nothing_runs(deck: Deck) -> None:
    # Had the script run, the error would be execution_failed (exit 99).
    with pytest.raises(InvalidArgumentsError) as e:
        deck.call_tool("alpha", "lookup", {"word": 3})
    assert "/word" in e.value.message and e.value.kind == "invalid_arguments"
    assert isinstance(e.value, ValueError) and isinstance(e.value, skilldeck.SkilldeckError)
    with pytest.raises(InvalidArgumentsError) as e:
        deck.call_tool("alpha", "lookup", {"word": "w", "tags": [1]})
    assert "/tags/0" in e.value.message
    with pytest.raises(InvalidArgumentsError, match="word"):
        deck.call_tool("alpha", "lookup", {})


def test_call_tool_unknown_tool_is_refused(deck: Deck) -> None:
    with pytest.raises(InvalidArgumentsError) as e:
        deck.call_tool("alpha", "nope")
    assert e.value.kind == "unknown_tool"


def test_skill_tools_lists_declared_tools_with_schema(deck: Deck) -> None:
    tools = {t.full_name: t for t in deck.skill_tools()}
    assert set(tools) == {"alpha__lookup", "beta__lookup"}
    spec = tools["beta__lookup"]
    assert (spec.skill, spec.name) == ("beta", "lookup")
    assert spec.input_schema["properties"]["word"]["type"] == "string"
    assert spec.input_schema["required"] == ["word"]


def test_async_twins_run_concurrently_on_one_loop(deck: Deck) -> None:
    async def main() -> Any:
        return await asyncio.gather(
            deck.acall_tool("alpha", "lookup", {"word": "a"}),
            deck.acall_tool("beta", "lookup", {"word": "b"}),
            deck.arun("alpha", "scripts/echo.py", ["z"]),
            return_exceptions=True,
        )

    outs = asyncio.run(main())
    for out in outs:
        if isinstance(out, SkillInvocationError) and out.kind == "unavailable":
            return
        assert isinstance(out, RunResult), out
    assert outs[0].structured["tool"] == "alpha" and outs[1].structured["tool"] == "beta"
    assert "args:z" in outs[2].stdout


# -- LangChain ---------------------------------------------------------------


def test_langchain_declared_tools_call_their_own_skill(deck: Deck) -> None:
    from langchain_core.tools import ToolException

    from skilldeck.langchain import create_tools

    tools = {t.name: t for t in create_tools(deck, conversation="conv-1", handle_errors=False)}
    assert {"alpha", "beta", "alpha__lookup", "beta__lookup"} <= set(tools)
    lookup = tools["beta__lookup"]
    assert lookup.description == "Look a word up in beta."
    assert set(lookup.args) == {"word", "tags"}
    # [exec] tools = on-activate (the default): offered once the skill is
    # active in this conversation.
    with pytest.raises(ToolException, match="activate"):
        lookup.invoke({"word": "w"})
    tools["alpha"].invoke({"arguments": ""})
    tools["beta"].invoke({"arguments": ""})
    # Invalid arguments: the host's message names the field; nothing ran.
    with pytest.raises(ToolException, match="/word"):
        tools["alpha__lookup"].invoke({"word": 5})
    try:
        # Closure capture: built in a loop, each calls its own skill's tool.
        a = tools["alpha__lookup"].invoke({"word": "w"})
        b = asyncio.run(tools["beta__lookup"].ainvoke({"word": "w"}))
    except ToolException as e:
        assert "was not run" in str(e) and "sandbox" in str(e).lower()
        return
    assert '"tool": "alpha"' in a and '"tool": "beta"' in b


def test_langchain_declared_tools_ask_the_approve_callback_before_running(
    skills_root: Path, tmp_path: Path
) -> None:
    """``create_tools(approve=...)`` asks before a declared skill tool runs,
    as it does before ``run_code``: declined, the script never runs (the
    model gets the refusal); accepted, it runs, and the decision is kept
    for the conversation. Under ``[exec] approval = "ask"`` without a
    callback the call is refused, never run silently."""
    from langchain_core.tools import ToolException

    from skilldeck.langchain import create_tools

    make_skill(skills_root, "alpha")
    deck = Deck.discover(roots=[skills_root], config=write_config(tmp_path / "s.toml"))
    asked: List[Dict[str, Any]] = []

    def decline(request: Dict[str, Any]) -> bool:
        asked.append(request)
        return False

    tools = {
        t.name: t
        for t in create_tools(deck, conversation="ask-1", handle_errors=False, approve=decline)
    }
    tools["alpha"].invoke({"arguments": ""})
    with pytest.raises(ToolException, match="declined") as e:
        tools["alpha__lookup"].invoke({"word": "w"})
    assert "RAN" not in str(e.value) and '"tool"' not in str(e.value)
    assert [(r["tool"], r["skill"]) for r in asked] == [("alpha__lookup", "alpha")]
    # Declined once: not asked again in this conversation, still refused.
    with pytest.raises(ToolException, match="declined it earlier"):
        tools["alpha__lookup"].invoke({"word": "w"})
    assert len(asked) == 1

    accepted: List[Dict[str, Any]] = []

    def accept(request: Dict[str, Any]) -> bool:
        accepted.append(request)
        return True

    tools = {
        t.name: t
        for t in create_tools(deck, conversation="ask-2", handle_errors=False, approve=accept)
    }
    tools["alpha"].invoke({"arguments": ""})
    for _ in range(2):
        try:
            out = tools["alpha__lookup"].invoke({"word": "w"})
        except ToolException as e:
            assert "was not run" in str(e) and "sandbox" in str(e).lower()
            break
        assert '"tool": "alpha"' in out
    assert len(accepted) == 1

    # approval = "ask" and no callback: refused, saying how to be asked.
    ask = Deck.discover(
        roots=[skills_root],
        config=write_config(tmp_path / "ask.toml", extra='approval = "ask"\n'),
    )
    tools = {t.name: t for t in create_tools(ask, conversation="ask-3", handle_errors=False)}
    tools["alpha"].invoke({"arguments": ""})
    with pytest.raises(ToolException, match="approve"):
        tools["alpha__lookup"].invoke({"word": "w"})


def test_langchain_declared_tools_need_exec_enabled_application_calls_do_not(skills_root: Path, tmp_path: Path) -> None:
    from skilldeck.langchain import create_tools

    make_skill(skills_root, "alpha")
    off = Deck.discover(
        roots=[skills_root], config=write_config(tmp_path / "off.toml", enabled=False)
    )
    assert not off.execution_enabled
    assert {t.name for t in create_tools(off)} == {"alpha"}
    # The application's own calls do not need it (like `skilldeck run`).
    result = sandboxed(lambda: off.call_tool("alpha", "lookup", {"word": "w"}))
    if result is not None:
        assert result.structured == {"word": "w", "tool": "alpha", "n": 0}


def test_agent_loop_calls_a_skill_tool_after_activating_its_skill(deck: Deck) -> None:
    from langchain_core.messages import AIMessage, ToolMessage

    from skilldeck.langchain import create_tools
    from test_langchain import ToolCallingFakeModel, run_agent

    script = iter([
        AIMessage(content="", tool_calls=[
            {"name": "alpha__lookup", "args": {"word": "w"}, "id": "t1"},
        ]),
        AIMessage(content="", tool_calls=[
            {"name": "activate_skill", "args": {"name": "alpha"}, "id": "t2"},
        ]),
        AIMessage(content="", tool_calls=[
            {"name": "alpha__lookup", "args": {"word": ["not", "a", "string"]}, "id": "t3"},
        ]),
        AIMessage(content="", tool_calls=[
            {"name": "alpha__lookup", "args": {"word": "w", "tags": ["t"]}, "id": "t4"},
        ]),
        AIMessage(content="looked up"),
    ])
    model = ToolCallingFakeModel(messages=script)
    tools = create_tools(deck, style="activate")
    bound = model.bind_tools(tools)
    sent = {t["function"]["name"]: t["function"] for t in model.bound}
    # The model is sent the tool's JSON schema as it is declared.
    assert sent["alpha__lookup"]["parameters"]["required"] == ["word"]
    assert sent["alpha__lookup"]["parameters"]["properties"]["tags"]["type"] == "array"

    messages = run_agent(bound, tools, "look w up")
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    # Before activation: refused, and the model is told what to do.
    assert results["t1"].status == "error" and "activate_skill" in str(results["t1"].content)
    assert results["t2"].status == "success" and "alpha instructions" in str(results["t2"].content)
    # Invalid arguments: refused by the host, naming the field; nothing ran.
    assert results["t3"].status == "error" and "/word" in str(results["t3"].content)
    assert "RAN WITH" not in str(results["t3"].content)
    last = str(results["t4"].content)
    if results["t4"].status == "error":
        assert "was not run" in last and "sandbox" in last.lower(), last
    else:
        assert '"tool": "alpha"' in last and '"n": 1' in last
    assert messages[-1].content == "looked up"


def test_run_passes_bytes_on_stdin(deck: Deck) -> None:
    result = sandboxed(lambda: deck.run("beta", "scripts/echo.py", stdin=b"raw bytes"))
    if result is not None:
        assert "stdin:raw bytes" in result.stdout and result.skill == "beta"


# -- one concurrency cap per deck ---------------------------------------------

# Prints when it starts and when it ends (CLOCK_MONOTONIC: one clock for
# every process on the machine, never stepped); in between it holds its
# execution slot a while.
STAMP = f"""#!{PY}
import sys, time
sys.stdin.read()
print(time.monotonic(), flush=True)
time.sleep(1.5)
print(time.monotonic())
"""

CLOCK_TOOLS = """tools:
  - name: stamp
    description: Say when it ran.
    parameters:
      tag: {type: string}
    run: scripts/stamp.py
"""


def make_clock(root: Path) -> None:
    folder = write_skill(
        root, "clock", "Says when it ran. Use when testing the concurrency cap.",
        frontmatter=CLOCK_TOOLS, files={"scripts/stamp.py": STAMP},
    )
    (folder / "scripts" / "stamp.py").chmod(0o755)


def span(result: RunResult) -> Tuple[float, float]:
    start, end = (float(line) for line in result.stdout.split())
    return start, end


@pytest.mark.parametrize(
    "enabled, calls",
    [
        (False, ("run timeout", "run timeout")),
        (False, ("run timeout", "call_tool timeout")),
        (True, ("run timeout", "call_tool")),
        (True, ("model tool", "run timeout")),
    ],
)
def test_every_run_of_a_deck_shares_its_concurrency_cap(
    skills_root: Path, tmp_path: Path, enabled: bool, calls: Tuple[str, str]
) -> None:
    """`[exec] concurrency = 1`: two runs started together never overlap,
    whether they give a timeout (a per-run override), call a declared tool,
    or come from the model (`[exec] enabled`): one deck, one cap. Each
    script reports its own start and end; the second must start after the
    first ended (a queued run waits for the slot)."""
    make_clock(skills_root)
    config = write_config(tmp_path / "one.toml", enabled=enabled, extra="concurrency = 1\n")
    deck = Deck.discover(roots=[skills_root], config=config)
    if enabled:
        deck.activate("clock", conversation="c1")  # [exec] tools = on-activate
    call: Dict[str, Callable[[], RunResult]] = {
        "run timeout": lambda: deck.run("clock", "scripts/stamp.py", timeout=15),
        "call_tool timeout": lambda: deck.call_tool("clock", "stamp", {"tag": "b"}, timeout=15),
        "call_tool": lambda: deck.call_tool("clock", "stamp", {"tag": "c"}),
        "model tool": lambda: deck._call_execution_tool("clock__stamp", {"tag": "d"}, "c1"),
    }
    together = threading.Barrier(2)

    def start(name: str) -> Optional[RunResult]:
        together.wait()
        return sandboxed(call[name])

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(start, calls))
    if any(r is None for r in results):
        return  # the sandbox is unavailable here (the refusal was asserted)
    first, second = sorted(span(r) for r in results if r is not None)
    assert first[0] <= first[1] <= second[0] <= second[1], (
        f"{calls} overlapped under [exec] concurrency = 1: {first} and {second}"
    )



def test_dynamic_context_output_reaches_python(skills_root: Path, tmp_path: Path) -> None:
    # The text the host rendered in the conversation (the directive run in
    # the sandbox) is what Python returns, not a second rendering without it.
    write_skill(skills_root, "ctx", body="Branch: !`echo dyn-$((40+2))`\n")
    config = write_config(tmp_path / "skilldeck.toml", extra="dynamic-context = true\n")
    deck = Deck.discover(roots=[skills_root], config=config)
    text = deck.activate("ctx", conversation="c").text
    assert "!`" not in text, text
    assert "Branch: dyn-42" in text or "not run: sandbox unavailable" in text, text
    assert "[shell execution disabled]" not in text, text
