"""``Deck.run_code`` and ``create_tools(..., code=True)``: the model's own
code in the sandbox under the deck's ``[exec]`` policy, a work folder per
conversation that keeps its files, ``outputs/`` files returned as
``OutputFile`` objects (name, MIME type, bytes), and the approval callback
(a declined call never runs; an exception in the callback refuses).

Where this machine lacks a sandbox layer the host refuses to run anything:
then the tests assert that refusal in place of the run, never skip."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from skilldeck import Deck, InvalidArgumentsError, OutputFile, RunResult, SkillInvocationError
from conftest import write_skill

pytestmark = pytest.mark.skipif(
    shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") is None,
    reason="python3 is not on the sandbox PATH",
)


@pytest.fixture
def deck(tmp_path: Path) -> Deck:
    write_skill(tmp_path / "skills", "tables", files={"data.csv": "a,b\n1,2\n"})
    return Deck.discover(roots=[tmp_path / "skills"])


def ran(call: Callable[[], RunResult]) -> Optional[RunResult]:
    """The run's result, or None after asserting the sandbox's refusal."""
    try:
        return call()
    except SkillInvocationError as e:
        if e.kind == "unavailable":
            return None
        raise


def test_run_code_computes_and_returns_outputs_as_objects(deck: Deck) -> None:
    assert "python" in deck.code_languages
    result = ran(
        lambda: deck.run_code(
            "print(6 * 7)\n"
            "open('outputs/table.csv', 'w').write('x,y\\n1,2\\n')\n"
            "open('outputs/blob.bin', 'wb').write(bytes([0, 255]))\n"
        )
    )
    if result is None:
        return
    assert result.text.splitlines()[0] == "42"
    assert result.exit_code == 0
    files = {f.name: f for f in result.outputs}
    assert set(files) == {"table.csv", "blob.bin"}
    assert isinstance(files["table.csv"], OutputFile)
    assert files["table.csv"].mime_type == "text/csv"
    assert files["table.csv"].data == b"x,y\n1,2\n"
    assert files["blob.bin"].mime_type == "application/octet-stream"
    assert files["blob.bin"].data == bytes([0, 255])


def test_the_work_folder_persists_per_conversation(deck: Deck) -> None:
    if ran(lambda: deck.run_code("open('kept.txt', 'w').write('kept')", conversation="a")) is None:
        return
    again = deck.run_code("print(open('kept.txt').read())", conversation="a")
    assert again.text.strip() == "kept"
    other = deck.run_code("import os; print(os.path.exists('kept.txt'))", conversation="b")
    assert other.text.strip() == "False"


def test_a_skill_is_mounted_read_only(deck: Deck) -> None:
    result = ran(
        lambda: deck.run_code(
            "cat \"$SKILLDECK_SKILL_DIR/data.csv\" | wc -l", language="bash", skill="tables"
        )
    )
    if result is None:
        return
    assert result.text.splitlines()[0].strip() == "2"


def test_failures_raise_with_the_hosts_message(deck: Deck) -> None:
    with pytest.raises(SkillInvocationError) as e:
        deck.run_code("raise SystemExit(4)")
    assert e.value.kind in ("execution_failed", "unavailable")
    with pytest.raises(InvalidArgumentsError) as bad:
        deck.run_code("x", language="cobol")
    assert "language" in str(bad.value)


def test_a_declining_callback_means_the_code_never_runs(deck: Deck) -> None:
    asked: List[Dict[str, Any]] = []

    def decline(request: Dict[str, Any]) -> bool:
        asked.append(request)
        return False

    code = "open('ran.marker', 'w').write('x')"
    with pytest.raises(SkillInvocationError) as e:
        deck.run_code(code, conversation="c", approve=decline)
    assert "declined" in str(e.value)
    assert asked[0]["tool"] == "run_code"
    assert asked[0]["code"] == code
    assert asked[0]["language"] == "python"
    assert len(asked[0]["code_sha256"]) == 64
    # Accepting other code shows the first never ran.
    check = ran(
        lambda: deck.run_code(
            "import os; print(os.path.exists('ran.marker'))",
            conversation="c",
            approve=lambda r: True,
        )
    )
    if check is None:
        return
    assert check.text.strip() == "False"
    # Accepted code runs; the same code is not asked about again.
    count = []

    def accept(request: Dict[str, Any]) -> bool:
        count.append(request)
        return True

    deck.run_code(code + " # ok", conversation="c", approve=accept)
    deck.run_code(code + " # ok", conversation="c", approve=accept)
    assert len(count) == 1


def test_a_callback_that_raises_refuses_the_call(deck: Deck) -> None:
    def broken(request: Dict[str, Any]) -> bool:
        raise RuntimeError("no UI here")

    with pytest.raises(SkillInvocationError) as e:
        deck.run_code("print(1)", conversation="d", approve=broken)
    assert "no UI here" in str(e.value)
    assert e.value.kind == "denied"


def test_create_tools_offers_run_code_only_when_asked(deck: Deck) -> None:
    pytest.importorskip("langchain_core")
    from skilldeck.langchain import create_tools

    assert "run_code" not in {t.name for t in create_tools(deck)}
    tools = {t.name: t for t in create_tools(deck, code=True, conversation="lc")}
    tool = tools["run_code"]
    message = tool.invoke(
        {
            "type": "tool_call",
            "id": "call-1",
            "name": "run_code",
            "args": {"language": "python", "code": "print(5)\nopen('outputs/o.txt','w').write('o')"},
        }
    )
    if "unavailable" in str(message.content) or "was not run" in str(message.content):
        return
    assert str(message.content).splitlines()[0] == "5"
    assert [f.name for f in message.artifact] == ["o.txt"]
    assert message.artifact[0].data == b"o"
