"""The UI on a registry with many generated skills (scripts/test-ui.sh seeds
it with `skilldeck registry import`, SKILLDECK_UI_SCALE_SKILLS of them, the
last one named `zz-last-N` so that it sorts after every other): find and
assign the skill that sorts last, see every assignment first, and record
each page's HTML size and load time (scale-pages.json next to the
screenshots, copied into docs/benchmarks.md by hand)."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest  # noqa: E402
from playwright.sync_api import Page, expect

from conftest import SHOTS, screenshot
from gen_scale import name_of

SCALE_URL = os.environ.get("SKILLDECK_UI_SCALE_URL", "").rstrip("/")
SCALE_TOKEN_FILE = os.environ.get("SKILLDECK_UI_SCALE_TOKEN_FILE", "")
SCALE_SKILLS = int(os.environ.get("SKILLDECK_UI_SCALE_SKILLS", "0"))
# The selection page must stay well under this at any number of skills.
MAX_SELECTION_HTML = 300_000

pytestmark = pytest.mark.skipif(not SCALE_URL, reason="no scale registry (scripts/test-ui.sh starts one)")


def scale_token() -> str:
    return Path(SCALE_TOKEN_FILE).read_text().strip()


def scale_api(method: str, path: str, value=None):
    body = json.dumps(value).encode() if value is not None else None
    import urllib.error
    import urllib.request
    req = urllib.request.Request(SCALE_URL + path, data=body, method=method)
    req.add_header("Authorization", f"Bearer {scale_token()}")
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def sign_in_scale(page: Page) -> None:
    page.goto(SCALE_URL + "/ui/signin")
    page.get_by_label("API token").fill(scale_token())
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(SCALE_URL + "/ui/skills")


MEASURED: list[dict] = []


def measure(page: Page, name: str, path: str) -> dict:
    """Loads `path`, records its HTML size and timings, takes a screenshot."""
    res = page.goto(SCALE_URL + path)
    assert res is not None and res.status == 200, (path, res and res.status)
    html = res.body()
    timing = page.evaluate("""() => {
        const n = performance.getEntriesByType('navigation')[0];
        return {ttfb: n.responseStart - n.requestStart,
                response: n.responseEnd - n.requestStart,
                load: n.loadEventEnd - n.startTime};
    }""")
    entry = {"page": name, "path": path, "html_bytes": len(html),
             "server_ms": round(timing["response"], 1), "load_ms": round(timing["load"], 1)}
    MEASURED.append(entry)
    screenshot(page, f"scale-{name}")
    return entry


def test_at_scale_the_skill_that_sorts_last_is_found_assigned_and_listed_first(page: Page):
    last = f"zz-last-{SCALE_SKILLS}"
    agent = "scale-" + secrets.token_hex(3)
    status, body = scale_api("POST", "/api/v1/agents", {"id": agent, "name": "Scale bot",
                                                         "capabilities": ["network"]})
    assert status == 201, body
    # Two assignments made through the API first: every assignment is listed.
    picked = [name_of(7, SCALE_SKILLS), name_of(SCALE_SKILLS // 2, SCALE_SKILLS)]
    for name in picked:
        status, body = scale_api("PUT", f"/api/v1/agents/{agent}/skills/scale/{name}", {})
        assert status == 200, body
    sign_in_scale(page)
    skills = measure(page, "skills-list", "/ui/skills")
    expect(page.locator("#totals")).to_contain_text(f"{SCALE_SKILLS} skills in 1 namespace")
    expect(page.locator("#showing")).to_contain_text(f"Showing 1–25 of {SCALE_SKILLS}")
    measure(page, "skills-list-last-page", f"/ui/skills?offset={SCALE_SKILLS - 25}")
    expect(page.locator("#skill-list")).to_contain_text(f"scale/{last}")
    measure(page, "skills-search", "/ui/skills?q=ledger")
    measure(page, "skills-needs-scripts", "/ui/skills?need=scripts&sort=recent")
    expect(page.locator("#showing")).to_contain_text(f"of {(SCALE_SKILLS + 4) // 5} matching")

    sel = measure(page, "agent-selection", f"/ui/agents/{agent}/skills")
    assert sel["html_bytes"] < MAX_SELECTION_HTML, sel
    expect(page.locator("#assigned-h")).to_contain_text("(2)")
    expect(page.locator(f"#row-scale--{last}")).to_have_count(0)
    # Find it by the server's search, assign it.
    page.get_by_label("Search").fill(last)
    page.locator("#sel-find").click()
    row = page.locator(f"#row-scale--{last}")
    expect(row).to_be_visible()
    row.get_by_label("Enabled").check()
    expect(row.locator("[data-status]")).to_have_text("assigned")
    status, assigned = scale_api("GET", f"/api/v1/agents/{agent}/skills")
    assert sorted(a["name"] for a in assigned) == sorted(picked + [last]), assigned
    # Every assignment first, on the unfiltered page.
    sel = measure(page, "agent-selection-assigned", f"/ui/agents/{agent}/skills")
    assert sel["html_bytes"] < MAX_SELECTION_HTML, sel
    expect(page.locator("#assigned-h")).to_contain_text("(3)")
    rows = page.locator("section[aria-labelledby=skills-h] .skill-row")
    first_three = [rows.nth(i).get_attribute("id") for i in range(3)]
    assert f"row-scale--{last}" in first_three, first_three
    # The need filter on the selection page (what the skill declares).
    measure(page, "agent-selection-needs-network",
            f"/ui/agents/{agent}/skills?need=requires:network")
    expect(page.locator("#others-count")).to_contain_text(f"of {(SCALE_SKILLS + 6) // 7}")

    # The other pages at this scale.
    measure(page, "skill", f"/ui/skills/scale/{last}")
    with_script = name_of(5, SCALE_SKILLS)
    measure(page, "version", f"/ui/skills/scale/{with_script}/versions/1.0.0")
    measure(page, "file", f"/ui/skills/scale/{with_script}/versions/1.0.0/files/scripts/run.py")
    expect(page.locator("#file-text")).to_contain_text(f"{with_script.split('-')[2]} 5")
    measure(page, "agents", "/ui/agents")
    measure(page, "tokens", "/ui/tokens")
    measure(page, "audit", "/ui/audit")
    assert skills["html_bytes"] < MAX_SELECTION_HTML
    out = SHOTS / "scale-pages.json"
    out.write_text(json.dumps({"skills": SCALE_SKILLS, "pages": MEASURED}, indent=2))
    print("\n" + "\n".join(
        f"{m['page']:32} {m['html_bytes']:>8} B  server {m['server_ms']:>7} ms  load {m['load_ms']:>7} ms"
        for m in MEASURED))
