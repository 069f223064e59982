"""The async twins do not block the event loop, and native calls release
the GIL while they work (so the calls gathered on one loop overlap in
their worker threads). No timing: each proof is an ordering that a
blocking implementation cannot produce."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, List, Tuple

import pytest

import skilldeck
from skilldeck import Deck
from conftest import write_skill


def make_deck(root: Path, n: int = 5) -> Deck:
    for i in range(n):
        write_skill(root, f"skill-{i}", f"Skill number {i}. Use when testing {i}.", body="Do $ARGUMENTS\n",
                    files={"references/R.md": f"ref {i}"})
    return Deck.discover(roots=[root])


async def finish_ticks(awaitables: List[Awaitable[Any]]) -> Tuple[List[int], List[Any]]:
    """Gathers `awaitables` with a ticker task scheduled after them; returns
    how many times the ticker had run when each finished, and the results."""
    ticks = 0
    finished_at: List[int] = []
    done = False

    async def ticker() -> None:
        nonlocal ticks
        while not done:
            ticks += 1
            await asyncio.sleep(0)

    async def timed(aw: Awaitable[Any]) -> Any:
        result = await aw
        finished_at.append(ticks)
        return result

    # The calls' tasks are scheduled first, the ticker after them: a call
    # that blocks finishes inside its first step, before the ticker runs.
    gathered = asyncio.gather(*(timed(aw) for aw in awaitables))
    tick_task = asyncio.ensure_future(ticker())
    try:
        results = await gathered
    finally:
        done = True
        await tick_task
    return finished_at, list(results)


def test_gathered_calls_let_the_loop_run_before_they_finish(skills_root: Path) -> None:
    deck = make_deck(skills_root)

    async def main() -> None:
        finished_at, results = await finish_ticks([
            deck.aactivate("skill-0", "a"),
            deck.aactivate("skill-1", "b"),
            deck.aread("skill-2", "references/R.md"),
            deck.asearch("testing"),
            Deck.adiscover(roots=[skills_root]),
            skilldeck.avalidate(skills_root / "skill-3"),
        ])
        assert len(finished_at) == 6 and min(finished_at) >= 1, finished_at
        assert results[0].body == "Do a" and results[1].body == "Do b"
        assert results[2].text == "ref 2"
        assert len(results[3]) == 5 and len(results[4]) == 5 and results[5] == []

    asyncio.run(main())


def test_a_blocking_twin_fails_the_loop_check(skills_root: Path) -> None:
    # The check can fail: the sync call wrapped in a coroutine blocks the
    # loop, and finishes before the ticker ever runs.
    deck = make_deck(skills_root, 2)

    async def blocking(name: str) -> Any:
        return deck.activate(name)

    async def main() -> List[int]:
        finished_at, _ = await finish_ticks([blocking("skill-0"), blocking("skill-1")])
        return finished_at

    assert asyncio.run(main()) == [0, 0]


def test_async_errors_are_the_same_exceptions(skills_root: Path) -> None:
    deck = make_deck(skills_root, 2)

    async def main() -> None:
        with pytest.raises(skilldeck.SkillNotFoundError):
            await deck.aactivate("skill-9")
        with pytest.raises(skilldeck.ResourceError):
            await deck.aread("skill-0", "../skill-1/SKILL.md")

    asyncio.run(main())


def _ran_during(call: Callable[[], Any], attempts: int = 500) -> bool:
    """True once a Python thread ran while `call` was inside native code.

    With a huge switch interval the main thread never hands the GIL over
    on its own between bytecodes: the spinner can only run (and bump the
    counter) while the main thread is blocked, which between reading
    `before` and `after` means inside `call` with the GIL released. A call
    that held the GIL would leave `after == before` every time."""
    counter = [0]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            counter[0] += 1
            stop.wait(0.0001)  # releases the GIL: the main thread resumes

    old = sys.getswitchinterval()
    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    try:
        sys.setswitchinterval(1000.0)
        # A GIL request the spinner made under the old interval could still
        # force a switch: sleep so it takes the GIL and waits again under
        # the new one.
        for _ in range(3):
            time.sleep(0.005)
        for _ in range(attempts):
            before = counter[0]
            call()
            after = counter[0]
            if after != before:
                return True
        return False
    finally:
        sys.setswitchinterval(old)
        stop.set()
        spinner.join()


def test_native_calls_release_the_gil(skills_root: Path) -> None:
    # Calls long enough (hundreds of skills) for the waiting thread to be
    # woken while they run, even on a busy machine.
    deck = make_deck(skills_root, 400)
    assert _ran_during(lambda: Deck.discover(roots=[skills_root]))
    assert _ran_during(lambda: deck.reload())
    assert _ran_during(lambda: deck.catalog(budget_tokens=100_000))


def test_a_pure_python_call_does_not_pass_the_gil_check() -> None:
    # The check itself can fail: a call that keeps the GIL never lets the
    # spinner run.
    assert not _ran_during(lambda: sum(range(20_000)), attempts=20)
