"""The Deck API over the host layer: discovery (metadata only), lookup,
catalog, activation, resources, search filters, reload, cache stats,
validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import skilldeck
from skilldeck import Deck
from conftest import write_skill


def test_discover_lists_served_skills_with_metadata_only(skills_root: Path) -> None:
    write_skill(
        skills_root,
        "pdf-forms",
        "Fill PDF forms. Use when a PDF has fields.",
        frontmatter="allowed-tools: Read Bash(python:*)\n",
    )
    write_skill(skills_root, "csv-clean", "Clean CSV files. Use for messy tables.")
    deck = Deck.discover(roots=[skills_root])
    assert sorted(s.name for s in deck.skills) == ["csv-clean", "pdf-forms"]
    assert len(deck) == 2 and "pdf-forms" in deck and "nope" not in deck
    pdf = deck.get("pdf-forms")
    assert pdf.description == "Fill PDF forms. Use when a PDF has fields."
    assert Path(pdf.path) == skills_root / "pdf-forms"
    assert Path(pdf.skill_md) == skills_root / "pdf-forms" / "SKILL.md"
    assert pdf.scope == "extra"  # roots given = the command's --root
    assert pdf.mode == "auto"
    assert pdf.allowed_tools == ["Read", "Bash(python:*)"]
    assert deck.get("csv-clean").allowed_tools == []
    assert pdf.model_invocable and pdf.user_invocable


def test_a_single_root_may_be_given_as_a_path(skills_root: Path) -> None:
    write_skill(skills_root, "one")
    assert [s.name for s in Deck.discover(roots=skills_root)] == ["one"]


def test_broken_skill_is_skipped_with_a_located_diagnostic(skills_root: Path) -> None:
    write_skill(skills_root, "good")
    bad = skills_root / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: bad\n---\nno description\n")
    deck = Deck.discover(roots=[skills_root])
    assert [s.name for s in deck.skills] == ["good"]
    errors = [d for d in deck.diagnostics if d.is_error]
    assert errors, deck.diagnostics
    assert errors[0].file is not None and errors[0].file.endswith("bad/SKILL.md")
    assert errors[0].code


def test_get_of_a_skipped_skill_says_why(skills_root: Path) -> None:
    bad = skills_root / "broken-skill"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: broken-skill\n---\nbody\n")
    deck = Deck.discover(roots=[skills_root])
    with pytest.raises(skilldeck.SkillNotFoundError) as e:
        deck.get("broken-skill")
    assert "not available" in str(e.value) and "SKILL.md" in str(e.value)


def test_lookup_ignores_case_like_the_core(skills_root: Path) -> None:
    write_skill(skills_root, "pdf-forms")
    assert Deck.discover(roots=[skills_root]).get("PDF-Forms").name == "pdf-forms"


def test_catalog_formats_budget_and_query(skills_root: Path) -> None:
    write_skill(skills_root, "pdf-forms", "Fill PDF forms. Use when a PDF has fields.")
    write_skill(skills_root, "csv-clean", "Clean CSV files. Use for messy tables.")
    write_skill(skills_root, "hidden", frontmatter="disable-model-invocation: true\n")
    deck = Deck.discover(roots=[skills_root])
    xml = deck.catalog()
    assert xml.startswith("<available_skills>") and "<name>pdf-forms</name>" in xml
    assert "hidden" not in xml  # the model may not invoke it
    entries = json.loads(deck.catalog(format="json"))
    assert entries  # valid JSON
    assert "pdf-forms" in deck.catalog(format="markdown")
    ranked = deck.catalog(query="csv tables")
    assert ranked.index("csv-clean") < ranked.index("pdf-forms")
    small = deck.catalog(budget_tokens=40)
    assert len(small) < len(xml)
    assert "/SKILL.md" not in deck.catalog(locations=False)
    with pytest.raises(ValueError, match="catalog format"):
        deck.catalog(format="yaml")


def test_read_returns_text_and_bytes_and_refuses_escapes(skills_root: Path) -> None:
    folder = write_skill(skills_root, "pdf-forms", files={"references/FORMS.md": "# Forms\n"})
    (folder / "assets").mkdir()
    (folder / "assets" / "logo.bin").write_bytes(b"\x00\x01\x02")
    deck = Deck.discover(roots=[skills_root])
    text = deck.read("pdf-forms", "references/FORMS.md")
    assert text.is_text and text.text == "# Forms\n" and text.size == 8
    assert text.mime.startswith("text/")
    binary = deck.read("pdf-forms", "assets/logo.bin")
    assert not binary.is_text and binary.text is None and binary.data == b"\x00\x01\x02"
    with pytest.raises(skilldeck.ResourceError, match=r"'\.\.' is not allowed"):
        deck.read("pdf-forms", "../other/SKILL.md")
    with pytest.raises(skilldeck.ResourceError, match="not found"):
        deck.read("pdf-forms", "references/NOPE.md")


def test_search_filters_by_source_pattern_and_keywords(skills_root: Path) -> None:
    write_skill(skills_root, "pdf-forms", "Fill PDF forms. Use when a PDF has fields.")
    write_skill(skills_root, "pdf-merge", "Merge PDF files into one document.")
    write_skill(skills_root, "csv-clean", "Clean CSV files. Use for messy tables.")
    deck = Deck.discover(roots=[skills_root])
    names = [h.name for h in deck.search("pdf")]
    assert set(names) == {"pdf-forms", "pdf-merge"}
    assert [h.name for h in deck.search("pdf", limit=1)] == names[:1]
    assert [h.name for h in deck.search("pdf", pattern="merge$")] == ["pdf-merge"]
    assert [h.name for h in deck.search("pdf", keywords=["fields"])] == ["pdf-forms"]
    assert deck.search("pdf", source="project") == []
    assert len(deck.search("pdf", source=["extra"])) == 2
    hit = deck.search("csv")[0]
    assert hit.name == "csv-clean" and hit.score > 0 and hit.scope == "extra"
    with pytest.raises(ValueError, match="unknown scope"):
        deck.search("pdf", source="galaxy")
    with pytest.raises(ValueError, match="pattern"):
        deck.search("pdf", pattern="(")


def test_reload_picks_up_new_skills_and_reports_the_change(skills_root: Path) -> None:
    write_skill(skills_root, "one")
    deck = Deck.discover(roots=[skills_root])
    unchanged = deck.reload()
    assert not unchanged.catalog_changed and unchanged.generation == 0
    write_skill(skills_root, "two")
    changed = deck.reload()
    assert changed.catalog_changed and changed.generation == 1 and changed.skills == 2
    assert "two" in deck


def test_skills_are_built_once_per_deck_and_again_after_a_reload_that_changed_it(
    skills_root: Path,
) -> None:
    write_skill(skills_root, "one", "First description.")
    deck = Deck.discover(roots=[skills_root])
    first, again = deck.skills, deck.skills
    # The same Skill objects (built once), in a list of the caller's own.
    assert first is not again and len(first) == 1 and first[0] is again[0]
    assert next(iter(deck)) is first[0]
    first.clear()
    assert [s.name for s in deck.skills] == ["one"]
    # A reload with a changed folder: the new skills, built anew.
    write_skill(skills_root, "one", "Changed description.")
    write_skill(skills_root, "two")
    assert deck.reload().catalog_changed
    after = {s.name: s for s in deck.skills}
    assert sorted(after) == ["one", "two"]
    assert after["one"].description == "Changed description."
    assert after["one"] is not again[0] and deck.skills[0] is deck.skills[0]
    # An object from before keeps describing the deck it came from.
    assert again[0].description == "First description."


def test_cache_stats_count_hits_and_misses(skills_root: Path) -> None:
    write_skill(skills_root, "one", body="Do $ARGUMENTS\n")
    deck = Deck.discover(roots=[skills_root])
    assert deck.cache_stats().hits == 0
    deck.activate("one", "a")
    deck.activate("one", "a")
    deck.activate("one", "b")
    stats = deck.cache_stats()
    assert (stats.hits, stats.misses, stats.entries) == (1, 2, 2)
    assert stats.hit_rate == pytest.approx(1 / 3)


def test_activation_reads_the_new_body_after_an_edit(skills_root: Path) -> None:
    folder = write_skill(skills_root, "one", body="old\n")
    deck = Deck.discover(roots=[skills_root])
    assert deck.activate("one").body == "old"
    text = (folder / "SKILL.md").read_text().replace("old", "brand new")
    (folder / "SKILL.md").write_text(text)
    assert deck.activate("one").body == "brand new"


def test_activation_parts_and_renderings(skills_root: Path) -> None:
    write_skill(skills_root, "one", body="Hello\n", files={"references/R.md": "r"})
    deck = Deck.discover(roots=[skills_root])
    a = deck.activate("one")
    assert a.name == "one" and not a.already_active
    assert Path(a.skill_dir or "") == skills_root / "one"
    assert a.resources == ["references/R.md"]
    assert a.text.startswith('<skill_content name="one">') and str(a) == a.text
    assert a.render("text").startswith("Base directory for this skill:")
    assert json.loads(a.render("json"))["name"] == "one"


def test_conversation_gets_the_already_active_notice(skills_root: Path) -> None:
    write_skill(skills_root, "one", body="Hello\n")
    deck = Deck.discover(roots=[skills_root])
    first = deck.activate("one", conversation="c1")
    again = deck.activate("one", conversation="c1")
    other = deck.activate("one", conversation="c2")
    assert not first.already_active and "Hello" in first.text
    assert again.already_active and again.body is None and "already active" in again.text
    assert not other.already_active
    # Without a conversation the application always gets the instructions.
    assert not deck.activate("one").already_active


def test_conversation_delivers_other_arguments_and_reloads(skills_root: Path) -> None:
    write_skill(skills_root, "greet", body="Greet $ARGUMENTS.\n")
    deck = Deck.discover(roots=[skills_root])
    assert "Greet Ada." in deck.activate("greet", "Ada", conversation="c").text
    bob = deck.activate("greet", "Bob", conversation="c")
    assert not bob.already_active and "Greet Bob." in bob.text
    again = deck.activate("greet", "Bob", conversation="c")
    assert again.already_active and '"reload": true' in again.text
    reloaded = deck.activate("greet", "Bob", conversation="c", reload=True)
    assert not reloaded.already_active and "Greet Bob." in reloaded.text


def test_compaction_helpers_forget_invalidate_and_recognise_skill_content(
    skills_root: Path,
) -> None:
    import skilldeck

    write_skill(skills_root, "one", body="Hello\n")
    write_skill(skills_root, "two", body="Bye\n")
    deck = Deck.discover(roots=[skills_root])
    first = deck.activate("one", conversation="c")
    deck.activate("two", conversation="c")
    notice = deck.activate("one", conversation="c")
    # Both are skill content (keep them out of compaction); a user's words are not.
    assert skilldeck.is_skill_content(first.text) and skilldeck.is_skill_content(notice.text)
    assert not skilldeck.is_skill_content("Please fill the form.")
    # The application compacted the conversation: forget one skill, then all.
    assert deck.forget("c", "one")
    assert not deck.activate("one", conversation="c").already_active
    assert deck.activate("two", conversation="c").already_active
    assert deck.forget("c")
    assert not deck.activate("two", conversation="c").already_active
    assert not deck.forget("never-seen")
    # invalidate: every conversation gets the skill again; clear_cache empties the cache.
    assert not deck.activate("one", conversation="c").already_active
    assert deck.activate("one", conversation="c").already_active
    assert deck.invalidate("one") == 1
    assert not deck.activate("one", conversation="c").already_active
    assert deck.cache_stats().entries > 0
    deck.clear_cache()
    assert deck.cache_stats().entries == 0


def test_tool_specs_are_the_hosts(skills_root: Path) -> None:
    write_skill(skills_root, "one", "Does one thing. Use when one.")
    specs = {t.name: t for t in Deck.discover(roots=[skills_root]).tool_specs()}
    assert set(specs) == {"activate_skill", "read_skill_resource", "search_skills"}
    activate = specs["activate_skill"]
    assert "Does one thing" in activate.description
    assert activate.input_schema["properties"]["name"]["enum"] == ["one"]


def test_validate_returns_located_diagnostics(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "Bad_Name", "Fine description. Use when testing.")
    diagnostics = skilldeck.validate(folder)
    assert diagnostics and all(d.severity in ("error", "warning") for d in diagnostics)
    d = next(d for d in diagnostics if d.is_error)
    assert d.code and d.message
    assert d.file is not None and d.file.endswith("SKILL.md")
    assert d.line == 2 and d.column is not None
    assert str(d).startswith(d.file)
    good = write_skill(tmp_path, "good-name", "Fine description. Use when testing.")
    assert skilldeck.validate(good) == []
    lenient = skilldeck.validate(folder, mode="lenient")
    assert sum(d.is_error for d in lenient) < sum(d.is_error for d in diagnostics)
    with pytest.raises(ValueError, match="mode"):
        skilldeck.validate(good, mode="sloppy")


def test_config_file_modes_apply(tmp_path: Path, skills_root: Path) -> None:
    write_skill(skills_root, "one")
    write_skill(skills_root, "two")
    config = tmp_path / "skilldeck.toml"
    config.write_text('[modes]\ntwo = "off"\none = "manual"\n')
    deck = Deck.discover(roots=[skills_root], config=config)
    assert [s.name for s in deck.skills] == ["one"]  # "off" is not served
    assert deck.get("one").mode == "manual" and not deck.get("one").model_invocable
    with pytest.raises(skilldeck.SkillNotFoundError, match="turned off"):
        deck.get("two")
