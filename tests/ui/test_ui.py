"""The registry web UI in headless Chromium: sign in and out, upload (and a
refused upload), the version page, agents and their skill selection with the
live catalog preview checked against the REST lock, an XSS skill that must
stay inert, and CSRF refusals. Screenshots of the main pages are saved."""

from __future__ import annotations

import json
import re
import secrets

from playwright.sync_api import Page, expect

from conftest import (
    TOKEN, URL, api, package, publish, screenshot, sign_in, skill_md,
)


def lock_names(agent: str) -> tuple[list[str], str]:
    status, headers, body = api("GET", f"/api/v1/agents/{agent}/lock")
    assert status == 200, (status, body)
    etag = headers.get("ETag") or headers.get("etag") or ""
    return [f"{s['namespace']}/{s['name']}" for s in body["skills"]], etag


def test_sign_in_with_a_wrong_token_is_refused_and_the_right_one_works(page: Page):
    page.goto(URL + "/ui/skills")
    expect(page).to_have_url(URL + "/ui/signin")
    page.get_by_label("API token").fill("sdk_not-a-real-token")
    with page.expect_response(lambda r: r.url == URL + "/ui/signin"
                              and r.request.method == "POST") as res:
        page.get_by_role("button", name="Sign in").click()
    assert res.value.status == 401
    expect(page.get_by_role("alert")).to_contain_text("not valid")
    sign_in(page)
    expect(page.get_by_role("heading", name="Skills", exact=True)).to_be_visible()
    expect(page.locator(".who")).to_contain_text("Signed in as")
    cookie = next(c for c in page.context.cookies() if c["name"] == "skilldeck_ui")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert TOKEN not in cookie["value"], "the token must never be the cookie"


def test_upload_a_package_then_its_version_page_shows_markdown_files_and_digests(
        page: Page, pdf_package):
    sign_in(page)
    page.get_by_role("link", name="Upload", exact=True).click()
    page.get_by_label("Namespace").fill("acme")
    page.get_by_label("Version").fill("1.0.0")
    page.get_by_label("Package file").set_input_files(str(pdf_package))
    page.get_by_role("button", name="Publish").click()
    page.wait_for_url(re.compile(r".*/ui/skills/acme/pdf-tools/versions/1\.0\.0$"))
    expect(page.locator(".flash")).to_contain_text("acme/pdf-tools 1.0.0")
    body = page.locator("#skill-body")
    expect(body.locator("h1")).to_have_text("PDF tools")
    expect(body.locator("table")).to_be_visible()
    expect(body.locator("strong")).to_have_text("the output")
    files = page.locator("#files")
    for path in ("SKILL.md", "reference.md", "scripts/extract.py"):
        expect(files).to_contain_text(path)
    expect(files.locator(".digest").first).to_contain_text(re.compile(r"sha256:[0-9a-f]{64}"))
    expect(page.locator("#description")).to_contain_text("Extract text and tables")
    screenshot(page, "version-page")
    # The skill page: versions and labels; `latest` points at 1.0.0.
    page.get_by_role("link", name="acme/pdf-tools").click()
    expect(page.locator("#labels")).to_contain_text("latest")
    expect(page.locator("#labels")).to_contain_text("1.0.0")


def test_a_refused_upload_shows_its_diagnostics_with_file_and_line(page: Page):
    bad = package("broken-skill", {
        "SKILL.md": "---\nname: broken-skill\nlicense: MIT\ncolour: blue\n---\n# Broken\n",
    })
    sign_in(page)
    page.goto(URL + "/ui/upload")
    page.get_by_label("Namespace").fill("acme")
    page.get_by_label("Version").fill("1.0.0")
    page.get_by_label("Package file").set_input_files(str(bad))
    with page.expect_response(lambda r: r.url == URL + "/ui/upload"
                              and r.request.method == "POST") as res:
        page.get_by_role("button", name="Publish").click()
    assert res.value.status == 422
    refusal = page.locator("#refusal")
    expect(refusal).to_contain_text("The package was refused")
    where = refusal.locator(".diagnostics .where")
    expect(where.first).to_be_visible()
    texts = where.all_inner_texts()
    assert any(re.search(r"SKILL\.md:\d+", t) for t in texts), texts
    expect(refusal.locator(".diagnostics")).to_contain_text("description")
    # The form keeps what was typed.
    expect(page.get_by_label("Namespace")).to_have_value("acme")
    screenshot(page, "refused-upload")


def test_skills_list_search_and_phone_width(page: Page, phone: Page, published):
    sign_in(page)
    expect(page.locator("#skill-list")).to_contain_text("acme/csv-tools")
    expect(page.locator("#skill-list")).to_contain_text("acme/pdf-tools")
    screenshot(page, "skills-list")
    page.get_by_label("Search skills").fill("spreadsheets tabular")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#skill-list .card").first).to_contain_text("acme/csv-tools")
    page.get_by_label("Search skills").fill("zzqqxx-nothing")
    page.get_by_role("button", name="Search").click()
    expect(page.locator(".empty")).to_contain_text("No skill matches")
    # Phone width: nothing wider than the screen, navigation still there.
    sign_in(phone)
    expect(phone.locator("#skill-list")).to_be_visible()
    assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    expect(phone.get_by_role("link", name="Agents")).to_be_visible()
    screenshot(phone, "skills-list-phone")


def test_keyboard_focus_is_visible(page: Page, published):
    sign_in(page)
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent.trim()")
    assert focused == "Skip to content"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"


def test_assign_and_reprioritise_skills_updates_the_preview_and_the_lock(
        page: Page, published):
    agent = "bot-" + secrets.token_hex(3)
    sign_in(page)
    page.get_by_role("link", name="Agents").click()
    page.get_by_role("link", name="New agent").click()
    page.get_by_label("Agent id").fill(agent)
    page.get_by_label("Display name").fill("Support bot")
    page.get_by_label("Capabilities").fill("python")
    page.get_by_label("Catalog budget (tokens)").fill("4000")
    page.get_by_role("button", name="Create agent").click()
    page.wait_for_url(URL + f"/ui/agents/{agent}/skills")
    expect(page.locator(".flash")).to_contain_text(f"Agent {agent} created")
    expect(page.locator("#preview-count")).to_contain_text("0 skills")
    assert lock_names(agent)[0] == []

    pdf = page.locator("#row-acme--pdf-tools")
    csv = page.locator("#row-acme--csv-tools")
    # Toggle on (htmx posts the row on change; the preview follows).
    pdf.get_by_label("Enabled").check()
    expect(page.locator("#row-acme--pdf-tools [data-status]")).to_have_text("assigned")
    expect(page.locator("#catalog-text")).to_contain_text("pdf-tools")
    page.locator("#row-acme--csv-tools").get_by_label("Enabled").check()
    expect(page.locator("#row-acme--csv-tools [data-status]")).to_have_text("assigned")
    included = page.locator("#preview-count [data-included]")
    expect(included).to_have_text(["csv-tools", "pdf-tools"])
    names, etag_before = lock_names(agent)
    assert names == ["acme/csv-tools", "acme/pdf-tools"], names

    # Priority: pdf-tools first.
    page.locator("#row-acme--pdf-tools").get_by_label("Priority").fill("10")
    page.locator("#row-acme--pdf-tools").get_by_label("Priority").press("Tab")
    expect(included).to_have_text(["pdf-tools", "csv-tools"])
    text = page.locator("#catalog-text").inner_text()
    assert text.index("pdf-tools") < text.index("csv-tools"), text
    tokens = int(page.locator("#preview-tokens").inner_text())
    assert tokens > 0
    expect(page.locator(".budget")).to_contain_text("4000-token budget")
    names, etag_after = lock_names(agent)
    assert names == ["acme/pdf-tools", "acme/csv-tools"], names
    assert etag_after != etag_before
    # The row kept what was typed; a reload shows the saved state.
    page.reload()
    expect(page.locator("#row-acme--pdf-tools").get_by_label("Priority")).to_have_value("10")
    expect(page.locator("#preview-count [data-included]")).to_have_text(
        ["pdf-tools", "csv-tools"])

    # Grants reach the lock; disabling removes the skill from the catalog.
    csv = page.locator("#row-acme--csv-tools")
    with page.expect_response(lambda r: r.request.method == "POST"
                              and r.url.endswith("/skills/acme/csv-tools")) as res:
        csv.get_by_label("Network").check()
    assert res.value.status == 200
    expect(page.locator("#row-acme--csv-tools").get_by_label("Network")).to_be_checked()
    _, _, lock = api("GET", f"/api/v1/agents/{agent}/lock")
    grants = {s["name"]: s["grants"] for s in lock["skills"]}
    assert grants["csv-tools"]["network"] is True, grants
    page.locator("#row-acme--csv-tools").get_by_label("Enabled").uncheck()
    expect(included).to_have_text(["pdf-tools"])
    expect(page.locator("#left-out")).to_contain_text("acme/csv-tools")
    assert lock_names(agent)[0] == ["acme/pdf-tools"]
    # Last (Playwright's screenshot touches the DOM, and a later htmx swap
    # would copy that into a CSP report): the page with its preview.
    page.reload()
    screenshot(page, "agent-selection")


def test_a_tiny_budget_shows_what_was_left_out(page: Page, published):
    agent = "tiny-" + secrets.token_hex(3)
    status, _, body = api("POST", "/api/v1/agents", json_body(
        {"id": agent, "name": "Tiny", "capabilities": []}), "application/json")
    assert status == 201, body
    for name, prio in (("pdf-tools", 5), ("csv-tools", 1)):
        status, _, body = api("PUT", f"/api/v1/agents/{agent}/skills/acme/{name}",
                              json_body({"priority": prio}), "application/json")
        assert status == 200, body
    sign_in(page)
    page.goto(URL + f"/ui/agents/{agent}/skills")
    expect(page.locator("#preview-count [data-included]")).to_have_count(2)
    page.get_by_label("Try another budget").fill("1")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#left-out")).to_contain_text("budget")
    # Removing an assignment: the skill is simply not selected any more.
    page.locator("#row-acme--csv-tools").get_by_role("button", name="Remove assignment").click()
    expect(page.locator("#row-acme--csv-tools [data-status]")).to_have_text("not selected")
    expect(page.locator("#preview-count [data-included]")).to_have_text(["pdf-tools"])
    status, _, assigned = api("GET", f"/api/v1/agents/{agent}/skills")
    assert status == 200 and [a["name"] for a in assigned] == ["pdf-tools"], assigned


def json_body(value) -> bytes:
    return json.dumps(value).encode()


def test_an_xss_skill_renders_inert(page: Page):
    payload = "<script>alert(1)</script><img src=x onerror=alert(1)>"
    xss = package("xss-probe", {
        "SKILL.md": skill_md(
            "xss-probe", f"Probe {payload} for the UI",
            f"# Probe\n\n{payload}\n\n<script>alert('body')</script>\n\n"
            "<img src=x onerror=\"alert('img')\">\n\n[click me](javascript:alert('link'))\n\n"
            "<a href=\"javascript:alert('a')\">a</a> <svg onload=alert('svg')></svg>\n"
            "<iframe src=\"javascript:alert('frame')\"></iframe>\n",
        ),
    })
    publish(xss)
    sign_in(page)
    page.goto(URL + "/ui/skills?q=probe")
    expect(page.locator("#skill-list")).to_contain_text("Probe <script>alert(1)</script>")
    page.goto(URL + "/ui/skills/acme/xss-probe/versions/1.0.0")
    expect(page.locator("#description")).to_contain_text("<script>alert(1)</script>")
    expect(page.locator("#skill-body h1")).to_have_text("Probe")
    # No script element other than the page's own htmx; no handler attributes.
    scripts = page.evaluate("[...document.scripts].map(s => s.src)")
    assert len(scripts) == 1 and "/ui/static/htmx-" in scripts[0], scripts
    body = page.locator("#skill-body")
    assert body.locator("script, iframe, svg, [onerror], [onload]").count() == 0
    hrefs = body.locator("a").evaluate_all("as => as.map(a => a.getAttribute('href'))")
    assert not any(h and h.lower().startswith("javascript:") for h in hrefs), hrefs
    page.wait_for_timeout(300)  # give any (wrongly) injected handler the chance to fire
    # And on the agent page (description in a row).
    agent = "xss-" + secrets.token_hex(3)
    api("POST", "/api/v1/agents", json_body({"id": agent, "name": "<b>XSS</b>"}),
        "application/json")
    page.goto(URL + f"/ui/agents/{agent}/skills")
    expect(page.locator("h1")).to_have_text("Skills of <b>XSS</b>")
    assert page.evaluate("document.scripts.length") == 1


def test_a_post_without_its_csrf_token_is_refused(page: Page, published):
    sign_in(page)
    # Same session cookie, no token: refused before any handler runs.
    res = page.request.post(URL + "/ui/agents", form={"id": "csrf-bot", "name": "x"})
    assert res.status == 403
    res = page.request.post(URL + "/ui/agents", form={"id": "csrf-bot", "name": "x",
                                                      "csrf": "forged"})
    assert res.status == 403
    status, _, _ = api("GET", "/api/v1/agents/csrf-bot")
    assert status == 404, "the refused form must not have created the agent"
    # A form posted from a page that tampered with the hidden field.
    page.goto(URL + "/ui/agents/new")
    page.locator("#main input[name=csrf]").evaluate("el => el.value = 'tampered'")
    page.get_by_label("Agent id").fill("csrf-bot")
    page.get_by_label("Display name").fill("x")
    with page.expect_response(lambda r: r.request.method == "POST") as res:
        page.get_by_role("button", name="Create agent").click()
    assert res.value.status == 403
    expect(page.get_by_role("heading", name="Request refused")).to_be_visible()


def test_security_headers_are_on_every_page(page: Page):
    res = page.goto(URL + "/ui/signin")
    h = res.headers
    csp = h["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert h["x-content-type-options"] == "nosniff"
    assert h["referrer-policy"] == "same-origin"


def test_pages_work_without_javascript(nojs: Page, published):
    agent = "nojs-" + secrets.token_hex(3)
    status, _, body = api("POST", "/api/v1/agents", json_body({"id": agent, "name": "No JS"}),
                          "application/json")
    assert status == 201, body
    sign_in(nojs)
    nojs.goto(URL + f"/ui/agents/{agent}/skills")
    row = nojs.locator("#row-acme--csv-tools")
    row.get_by_label("Enabled").check()
    row.get_by_role("button", name="Assign").click()
    nojs.wait_for_url(re.compile(rf".*/ui/agents/{agent}/skills"))
    expect(nojs.locator(".flash")).to_contain_text("acme/csv-tools: assignment saved")
    expect(nojs.locator("#preview-count [data-included]")).to_have_text(["csv-tools"])
    assert lock_names(agent)[0] == ["acme/csv-tools"]
    nojs.goto(URL + "/ui/skills/acme/pdf-tools/versions/1.0.0")
    expect(nojs.locator("#skill-body h1")).to_have_text("PDF tools")


def test_sign_out_ends_the_session(page: Page):
    sign_in(page)
    old = next(c for c in page.context.cookies() if c["name"] == "skilldeck_ui")["value"]
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(URL + "/ui/signin")
    page.goto(URL + "/ui/skills")
    expect(page).to_have_url(URL + "/ui/signin")
    # The old session id is dead on the server, not only in this browser.
    res = page.request.get(URL + "/ui/skills", headers={"Cookie": f"skilldeck_ui={old}"},
                           max_redirects=0)
    assert res.status == 303 and res.headers["location"] == "/ui/signin"


def test_a_version_page_lists_its_warnings_with_file_and_line(page: Page):
    linted = package("date-tools", {
        "SKILL.md": skill_md(
            "date-tools", "Formats dates; use when dates appear.",
            "# Dates\n\nFormat them.\n", extra="colour: blue\n"),
    })
    published = publish(linted)
    assert published["report"], "the package should carry warnings"
    sign_in(page)
    page.goto(URL + "/ui/skills/acme/date-tools/versions/1.0.0")
    diagnostics = page.locator(".diagnostics li")
    expect(diagnostics.first).to_be_visible()
    wheres = page.locator(".diagnostics .where").all_inner_texts()
    assert any(re.fullmatch(r"(date-tools/)?SKILL\.md:\d+(:\d+)?", w) for w in wheres), wheres
    assert "SKILL.md:4:1" in wheres, wheres
    expect(page.locator(".diagnostics")).to_contain_text("colour")


def test_move_a_label_then_edit_an_agents_settings(page: Page, published):
    sign_in(page)
    page.goto(URL + "/ui/skills/acme/pdf-tools")
    page.get_by_label("Label", exact=True).fill("production")
    page.get_by_label("Version", exact=True).select_option("1.0.0")
    page.get_by_role("button", name="Move label").click()
    expect(page.locator(".flash")).to_contain_text("production")
    expect(page.locator("#labels")).to_contain_text("production")
    status, _, detail = api("GET", "/api/v1/skills/acme/pdf-tools")
    assert detail["labels"].get("production") == "1.0.0", detail
    # `latest` is the registry's to move: refused, shown on the page.
    page.get_by_label("Label", exact=True).fill("latest")
    with page.expect_response(lambda r: r.request.method == "POST") as res:
        page.get_by_role("button", name="Move label").click()
    assert res.value.status == 400
    expect(page.get_by_role("alert")).to_contain_text("latest")

    agent = "edit-" + secrets.token_hex(3)
    status, _, body = api("POST", "/api/v1/agents", json_body({"id": agent, "name": "Edit me"}),
                          "application/json")
    assert status == 201, body
    page.goto(URL + f"/ui/agents/{agent}/skills")
    page.get_by_role("link", name="Settings").click()
    expect(page.get_by_label("Agent id")).to_have_value(agent)
    page.get_by_label("Capabilities").fill("python, network")
    page.get_by_label("Auto-discover skills").check()
    page.get_by_label("Denied patterns").fill("acme/xss-*")
    page.get_by_label("Execution timeout (seconds)").fill("30")
    page.get_by_role("button", name="Save settings").click()
    page.wait_for_url(URL + f"/ui/agents/{agent}/skills")
    expect(page.locator(".flash")).to_contain_text("saved")
    _, _, stored = api("GET", f"/api/v1/agents/{agent}")
    assert sorted(stored["capabilities"]) == ["network", "python"], stored
    assert stored["auto_discover"] is True and stored["execution_timeout_secs"] == 30
    assert stored["denied_patterns"] == ["acme/xss-*"]
    # Auto-discovery now offers the published skills (no capabilities needed).
    expect(page.locator("#row-acme--csv-tools [data-status]")).to_have_text("auto-discovered")
    # A bad number is refused with the form kept.
    page.get_by_role("link", name="Settings").click()
    page.get_by_label("Catalog budget (tokens)").fill("99999999999")  # > u32: the server refuses
    with page.expect_response(lambda r: r.request.method == "POST") as res:
        page.get_by_role("button", name="Save settings").click()
    assert res.value.status == 400
    expect(page.get_by_role("alert")).to_contain_text("Catalog budget")
    expect(page.get_by_label("Capabilities")).to_have_value(", ".join(stored["capabilities"]))


WEATHER_TOOL = """tools:
  - name: forecast
    description: The forecast of a city.
    parameters:
      city: {type: string, description: The city, required: true}
      days: {type: integer, description: How many days}
      unit: {type: string, enum: [celsius, fahrenheit]}
      metric: {type: boolean}
      places: {type: array, items: {type: string}}
    run: scripts/forecast.py
"""

FORECAST_PY = """import json, sys
args = json.load(sys.stdin)
print(json.dumps({"city": args["city"], "days": args.get("days", 1),
                  "unit": args.get("unit", "celsius"), "places": args.get("places", []),
                  "sky": "sunny"}))
print("forecast made", file=sys.stderr)
"""


def test_try_it_runs_a_published_tool_from_its_generated_form_and_shows_the_output(
        page: Page):
    pkg = package("weather-ui", {
        "SKILL.md": skill_md("weather-ui", "Forecasts the weather. Use when asked.",
                             "\n# Weather\n", WEATHER_TOOL),
        "scripts/forecast.py": FORECAST_PY,
    })
    publish(pkg, namespace="acme", version="1.0.0")
    sign_in(page)
    page.goto(URL + "/ui/skills/acme/weather-ui/versions/1.0.0")
    panel = page.locator("#try-it")
    expect(panel.get_by_role("heading", name="Try it")).to_be_visible()
    expect(page.locator("#try-policy")).to_contain_text("network off")
    # The form is generated from the tool's schema: one field per type.
    expect(page.locator("#try-arg-city")).to_have_attribute("type", "text")
    expect(page.locator("#try-arg-days")).to_have_attribute("type", "number")
    assert page.locator("#try-arg-unit option").all_inner_texts() == [
        "(not set)", "celsius", "fahrenheit"]
    assert page.locator("#try-arg-metric option").count() == 3
    assert page.locator("#try-arg-places").evaluate("e => e.tagName") == "TEXTAREA"
    # Invalid arguments are refused before anything runs, naming the field.
    page.locator("#try-arg-days").fill("2")
    with page.expect_response(lambda r: r.url.endswith("/test-run")) as res:
        page.locator("#try-run").click()
    assert res.value.status == 422
    # A missing required property is the whole object's fault (pointer /).
    expect(page.locator("#try-error")).to_contain_text("city")
    expect(page.locator("#try-error-pointer")).to_contain_text("(at /)")
    expect(page.locator("#try-output")).to_have_count(0)
    # A field of the wrong type is named by its pointer.
    page.locator("#try-arg-city").fill("Oslo")
    page.locator("#try-arg-metric").select_option("true")
    page.locator("#try-arg-places").fill("harbour\npark")
    page.locator("#try-arg-days").evaluate("e => { e.type = 'text'; e.value = 'two'; }")
    with page.expect_response(lambda r: r.url.endswith("/test-run")) as res:
        page.locator("#try-run").click()
    assert res.value.status == 422
    expect(page.locator("#try-error-pointer")).to_contain_text("/days")
    # A valid run shows the outcome.
    page.locator("#try-arg-days").fill("2")
    page.locator("#try-arg-unit").select_option("fahrenheit")
    with page.expect_response(lambda r: r.url.endswith("/test-run")) as res:
        page.locator("#try-run").click()
    assert res.value.status == 200
    expect(page.locator("#try-exit")).to_have_text("exit 0")
    structured = json.loads(page.locator("#try-structured").inner_text())
    assert structured == {"city": "Oslo", "days": 2, "unit": "fahrenheit",
                          "places": ["harbour", "park"], "sky": "sunny"}
    expect(page.locator("#try-stderr")).to_contain_text("forecast made")
    expect(page.locator("#try-duration")).to_contain_text("ms")
    expect(page.locator("#try-arg-city")).to_have_value("Oslo")
    screenshot(page, "try-it")
    # The run is in the audit log.
    status, _, audit = api("GET", "/api/v1/audit")
    assert status == 200
    runs = [e for e in audit["items"] if e["action"] == "test-run"
            and e["target"] == "acme/weather-ui@1.0.0"]
    assert any(e["detail"].get("exit_code") == 0 for e in runs), runs


def test_a_skill_that_sorts_last_is_found_by_search_and_assigned_then_listed_first(page: Page):
    # More skills than one page: "zzz-last-tool" is on no first page.
    for i in range(60):
        publish(package(f"bulk-{i:03}", {"SKILL.md": skill_md(
            f"bulk-{i:03}", f"Bulk skill {i}. Use when testing pages.", "# Bulk\n")}),
            namespace="bulk")
    publish(package("zzz-last-tool", {"SKILL.md": skill_md(
        "zzz-last-tool", "Sorts last. Use when testing search.", "# Last\n")}),
        namespace="bulk")
    agent = "pager-" + secrets.token_hex(3)
    status, _, body = api("POST", "/api/v1/agents", json_body({"id": agent, "name": "Pager"}),
                          "application/json")
    assert status == 201, body
    sign_in(page)
    res = page.goto(URL + f"/ui/agents/{agent}/skills?namespace=bulk")
    assert len(res.body()) < 300_000
    rows = page.locator("section[aria-labelledby=skills-h] .skill-row")
    expect(rows).to_have_count(50)
    expect(page.locator("#row-bulk--zzz-last-tool")).to_have_count(0)
    expect(page.locator("#sel-next")).to_be_visible()
    # Search: the server finds it.
    page.get_by_label("Search").fill("zzz-last-tool")
    page.locator("#sel-find").click()
    row = page.locator("#row-bulk--zzz-last-tool")
    expect(row).to_be_visible()
    row.get_by_label("Enabled").check()
    expect(row.locator("[data-status]")).to_have_text("assigned")
    status, _, assigned = api("GET", f"/api/v1/agents/{agent}/skills")
    assert [a["name"] for a in assigned] == ["zzz-last-tool"], assigned
    # Without filters, the assignment comes first, above the page.
    page.goto(URL + f"/ui/agents/{agent}/skills")
    expect(page.locator("#assigned-h")).to_contain_text("(1)")
    expect(rows.first).to_have_attribute("id", "row-bulk--zzz-last-tool")
    # How to connect it, ready to copy.
    page.locator("#connect summary").click()
    expect(page.locator("#connect-serve")).to_contain_text(
        f"skilldeck serve --registry {URL} --agent {agent}")
    screenshot(page, "agent-selection-search")


def test_admin_pages_tokens_audit_files_assign_and_yank_in_the_browser(page: Page, published):
    agent = "adm-" + secrets.token_hex(3)
    status, _, body = api("POST", "/api/v1/agents", json_body({"id": agent, "name": "Admin bot"}),
                          "application/json")
    assert status == 201, body
    sign_in(page)
    # Tokens: create a read-only install token with an expiry, see it listed, revoke it.
    page.get_by_role("link", name="Tokens").click()
    page.get_by_label("Name").fill("dev-install")
    page.get_by_label("Scopes").fill("read:acme")
    page.get_by_label("Expires").select_option("604800")
    page.get_by_role("button", name="Create token").click()
    secret = page.locator("#token-secret").inner_text().strip()
    assert secret.startswith("sdk_"), secret
    status, _, _ = api("GET", "/api/v1/skills/acme/pdf-tools", token=secret)
    assert status == 200
    row = page.locator("#tokens tr", has_text="dev-install")
    expect(row).to_contain_text("read:acme")
    expect(row.locator("[data-status]")).to_have_text("active")
    screenshot(page, "tokens")
    row.get_by_label("I understand").check()
    row.get_by_role("button", name="Revoke").click()
    expect(page.locator(".flash")).to_contain_text("revoked")
    status, _, _ = api("GET", "/api/v1/skills/acme/pdf-tools", token=secret)
    assert status == 401
    # The file viewer.
    page.goto(URL + "/ui/skills/acme/pdf-tools/versions/1.0.0")
    page.locator("#files").get_by_role("link", name="scripts/extract.py").click()
    expect(page.locator("#file-text")).to_contain_text("print(open(sys.argv[1]")
    screenshot(page, "file-viewer")
    # Assign from the skill page: an unknown label is refused, a version works.
    page.goto(URL + "/ui/skills/acme/pdf-tools")
    page.locator("#assign-agent").fill(agent)
    page.locator("#assign-pin").fill("no-such-label")
    with page.expect_response(lambda r: r.request.method == "POST") as res:
        page.locator("#assign-submit").click()
    assert res.value.status >= 400
    expect(page.locator("#assign-error")).to_contain_text("no-such-label")
    page.locator("#assign-agent").fill(agent)
    page.locator("#assign-pin").fill("1.0.0")
    page.locator("#assign-submit").click()
    expect(page.locator(".flash")).to_contain_text(f"assigned to agent {agent}")
    screenshot(page, "skill-assign")
    assert lock_names(agent)[0] == ["acme/pdf-tools"]
    # Deprecate and undeprecate on the version page.
    page.goto(URL + "/ui/skills/acme/csv-tools/versions/1.0.0")
    page.get_by_label("Deprecate: still served, shown with the message").fill("use v2")
    page.locator("#deprecate").click()
    expect(page.locator(".flash")).to_contain_text("deprecated")
    expect(page.locator(".page-head")).to_contain_text("deprecated: use v2")
    screenshot(page, "version-admin")
    page.locator("#undeprecate").click()
    expect(page.locator(".flash")).to_contain_text("no longer deprecated")
    # The audit log, filtered by action.
    page.get_by_role("link", name="Audit log").click()
    page.get_by_label("Action").select_option("deprecate")
    page.locator("#audit-filter").click()
    expect(page.locator("#audit")).to_contain_text("acme/csv-tools@1.0.0")
    screenshot(page, "audit")
