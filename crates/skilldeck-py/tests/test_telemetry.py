"""Trace ids and span export from Python: every call takes ``trace_id``
(sync and async), and without an endpoint nothing is exported. The export
itself is checked against a real OTLP receiver by scripts/test-otel.sh."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import skilldeck
from skilldeck import Deck
from conftest import write_skill

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


@pytest.fixture(autouse=True)
def no_otel_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)


def test_every_call_takes_a_trace_id_and_nothing_is_exported_without_an_endpoint(
    skills_root: Path,
) -> None:
    write_skill(skills_root, "alpha", body="Alpha $ARGUMENTS\n", files={"notes.md": "n"})
    with Deck.discover(roots=[skills_root], trace_id=TRACE_ID) as deck:
        assert "alpha" in deck.catalog(trace_id=TRACE_ID)
        assert "Alpha x" in deck.activate("alpha", "x", trace_id="7c9e6679-7425-40de-944b-e07fc1f90ae7").text
        assert deck.activate("alpha", conversation="c1", trace_id="lf-1").text
        assert deck.read("alpha", "notes.md", trace_id=TRACE_ID).text == "n"
        assert [h.name for h in deck.search("alpha", trace_id=TRACE_ID)] == ["alpha"]
        assert deck.reload(trace_id=TRACE_ID).catalog_changed is False
        answer = deck._call_host_tool("activate_skill", {"name": "alpha"}, "c2", TRACE_ID)
        assert "Alpha" in answer

        async def twins() -> None:
            await deck.aactivate("alpha", trace_id=TRACE_ID)
            await deck.aread("alpha", "notes.md", trace_id=TRACE_ID)
            await deck.asearch("alpha", trace_id=TRACE_ID)
            await deck.areload(trace_id=TRACE_ID)
            await Deck.adiscover(roots=[skills_root], trace_id=TRACE_ID)

        asyncio.run(twins())
    assert skilldeck._native.telemetry_enabled() is False
    assert skilldeck.flush_telemetry() is False


def test_a_bad_otlp_endpoint_is_a_value_error_naming_the_option(skills_root: Path) -> None:
    write_skill(skills_root, "alpha")
    with pytest.raises(ValueError, match="otlp_endpoint: 'localhost:4318' is not an http"):
        Deck.discover(roots=[skills_root], otlp_endpoint="localhost:4318")
    assert skilldeck._native.telemetry_enabled() is False
