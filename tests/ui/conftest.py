"""Fixtures for the web UI browser tests (run by scripts/test-ui.sh).

The script starts `skilldeck registry serve` and passes its address, the
admin token file, the screenshot folder, the Chromium binary and a temporary
folder in the environment. Every page fixture fails its test when the page
opened a dialog (alert) or the browser reported a Content-Security-Policy
violation (an inline script or style would be one).
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

URL = os.environ["SKILLDECK_UI_URL"].rstrip("/")
TOKEN = Path(os.environ["SKILLDECK_UI_TOKEN_FILE"]).read_text().strip()
SHOTS = Path(os.environ["SKILLDECK_UI_SHOTS"])
CHROMIUM = os.environ.get("SKILLDECK_UI_CHROMIUM", "/usr/bin/chromium")
TMP = Path(os.environ["SKILLDECK_UI_TMP"])


def skill_md(name: str, description: str, body: str, extra: str = "") -> str:
    """A SKILL.md with the description as a YAML double-quoted string."""
    return f"---\nname: {name}\ndescription: {json.dumps(description)}\n{extra}---\n{body}"


def package(name: str, files: dict[str, str], top: str | None = None) -> Path:
    """A .tar.gz whose single top folder is `top` (the skill name)."""
    folder = TMP / "packages"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for rel, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(f"{top or name}/{rel}")
            info.size = len(data)
            info.mode = 0o755 if rel.startswith("scripts/") else 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return path


def api(method: str, path: str, body: bytes | None = None,
        content_type: str | None = None, token: str | None = TOKEN):
    """One REST call; returns (status, headers, parsed JSON or bytes)."""
    req = urllib.request.Request(URL + path, data=body, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            status, headers, raw = res.status, dict(res.headers), res.read()
    except urllib.error.HTTPError as e:
        status, headers, raw = e.code, dict(e.headers), e.read()
    kind = headers.get("Content-Type", headers.get("content-type", ""))
    return status, headers, json.loads(raw) if "json" in kind and raw else raw


def publish(path: Path, namespace: str = "acme", version: str = "1.0.0") -> dict:
    """Publishes a package through the API (idempotent: 201 or 200)."""
    status, _, body = api("POST", f"/api/v1/skills?namespace={namespace}&version={version}",
                          path.read_bytes(), "application/gzip")
    assert status in (200, 201), (status, body)
    return body


def screenshot(page: Page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


PDF_TOOLS = {
    "SKILL.md": skill_md(
        "pdf-tools",
        "Extract text and tables from PDF files; use when the user mentions PDFs or forms.",
        "# PDF tools\n\nUse `scripts/extract.py` to pull text out of a PDF.\n\n"
        "## Steps\n\n1. Run the script.\n2. Read **the output**.\n\n"
        "| Option | Meaning |\n|---|---|\n| `--pages` | page range |\n",
    ),
    "scripts/extract.py": "import sys\nprint(open(sys.argv[1], 'rb').read()[:100])\n",
    "reference.md": "# Reference\n\nMore detail.\n",
}

CSV_TOOLS = {
    "SKILL.md": skill_md(
        "csv-tools",
        "Clean, join and summarise CSV files; use for spreadsheets and tabular data.",
        "# CSV tools\n\nRead the CSV, then summarise each column.\n",
    ),
}


@pytest.fixture(scope="session")
def pdf_package() -> Path:
    return package("pdf-tools", PDF_TOOLS)


@pytest.fixture(scope="session")
def published(pdf_package: Path) -> list[str]:
    """pdf-tools and csv-tools in namespace acme (through the API)."""
    publish(pdf_package)
    publish(package("csv-tools", CSV_TOOLS))
    return ["acme/pdf-tools", "acme/csv-tools"]


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


def _page(browser: Browser, **context_args):
    context = browser.new_context(**context_args)
    page = context.new_page()
    dialogs: list[str] = []
    csp: list[str] = []

    def on_dialog(dialog):
        dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def on_console(msg):
        if msg.type == "error" and "Content Security Policy" in msg.text:
            csp.append(f"{msg.text[:60]} at {msg.location} on {page.url}")

    page.on("dialog", on_dialog)
    page.on("console", on_console)
    return context, page, dialogs, csp


@pytest.fixture
def page(browser: Browser):
    """A 1280 px wide page; fails the test on any dialog or CSP violation."""
    context, page, dialogs, csp = _page(browser, viewport={"width": 1280, "height": 900})
    yield page
    context.close()
    assert not dialogs, f"a dialog opened (script ran): {dialogs}"
    assert not csp, f"Content-Security-Policy violations: {csp}"


@pytest.fixture
def phone(browser: Browser):
    """A 390 px wide page (a phone)."""
    context, page, dialogs, csp = _page(
        browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
        device_scale_factor=2)
    yield page
    context.close()
    assert not dialogs, f"a dialog opened (script ran): {dialogs}"
    assert not csp, f"Content-Security-Policy violations: {csp}"


@pytest.fixture
def nojs(browser: Browser):
    """A page with JavaScript off: every read page and form must still work."""
    context, page, dialogs, csp = _page(
        browser, viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    yield page
    context.close()
    assert not dialogs
    assert not csp, f"Content-Security-Policy violations: {csp}"


def sign_in(page: Page, token: str = TOKEN) -> None:
    page.goto(URL + "/ui/signin")
    page.get_by_label("API token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(URL + "/ui/skills")
