"""Single sign-on end to end: headless Chromium signs in to a registry
configured with `[registry.ui.oidc]` at a real OpenID provider (npm
`oidc-provider`, tests/ui/oidc_provider.mjs) on loopback: authorization
code + PKCE, the provider's own login and consent pages, RS256 ID tokens,
UserInfo for the groups. A user whose groups match a rule gets in; one no
rule matches is refused with a page saying so. The audit log names the
provider's subject and email.

scripts/test-ui.sh installs oidc-provider into its temporary folder and
passes SKILLDECK_UI_OIDC_MODULES (its node_modules) and SKILLDECK_BIN.
This module starts its own provider and its own registry (the shared one
of the other tests keeps token sign-in only).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from conftest import TMP, screenshot

HERE = Path(__file__).parent
CLIENT_ID = "skilldeck-registry"
CLIENT_SECRET = "test-only-client-secret"
WAIT_LINES = 600  # lines of output read at most while waiting for a ready line


def _read_until(proc: subprocess.Popen, pattern: str) -> re.Match:
    """The first stdout line matching `pattern` (fails when the process
    exits first: readline returns '' at end of file)."""
    for _ in range(WAIT_LINES):
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(pattern, line)
        if m:
            return m
    err = proc.stderr.read() if proc.poll() is not None else ""
    pytest.fail(f"no line matching {pattern!r} (exit {proc.poll()}): {err[-2000:]}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_registry(binary: str, work: Path, issuer: str):
    """The registry on a free port, its config naming that port in the
    redirect URL (the browser comes back there). The port is found free by
    binding it here; should another process take it before the registry
    binds it, the registry exits ("cannot listen") and another port is
    tried."""
    for _ in range(5):
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        config = work / "skilldeck.toml"
        config.write_text(f"""
[registry.ui.oidc]
issuer = "{issuer}"
client-id = "{CLIENT_ID}"
client-secret-file = "client-secret"
redirect-url = "{url}/ui/oidc/callback"
display-name = "Acme SSO"
scopes = ["email", "profile", "groups"]

[[registry.ui.oidc.rule]]
group = "registry-admins"
grant = ["admin"]

[[registry.ui.oidc.rule]]
group = "acme-dev"
grant = ["publish:acme"]
""")
        proc = subprocess.Popen(
            [binary, "registry", "serve", "--listen", f"127.0.0.1:{port}", "--data",
             str(work / "data"), "--config", str(config)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = proc.stdout.readline()
        if "listening on" in line:
            return url, proc
        err = proc.stderr.read()
        proc.wait(timeout=30)
        if "cannot listen" not in err:
            pytest.fail(f"the registry did not start: {err[-2000:]}")
    pytest.fail("no free port for the registry after 5 tries")


@pytest.fixture(scope="module")
def sso():
    """(registry URL, admin token) of a registry whose UI signs in at a
    local OpenID provider."""
    modules = os.environ.get("SKILLDECK_UI_OIDC_MODULES")
    binary = os.environ.get("SKILLDECK_BIN")
    assert modules and binary, "run through scripts/test-ui.sh (it installs oidc-provider)"
    work = TMP / "sso"
    (work / "data").mkdir(parents=True, exist_ok=True)
    secret = work / "client-secret"
    secret.write_text(CLIENT_SECRET + "\n")
    secret.chmod(0o600)
    provider = subprocess.Popen(
        ["node", str(HERE / "oidc_provider.mjs")],
        env={**os.environ, "OIDC_PROVIDER_MODULES": modules, "OIDC_CLIENT_ID": CLIENT_ID,
             "OIDC_CLIENT_SECRET": CLIENT_SECRET},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    registry = None
    try:
        issuer = _read_until(provider, r"oidc provider issuer (\S+)").group(1)
        url, registry = _start_registry(binary, work, issuer)
        provider.stdin.write(f"{url}/ui/oidc/callback\n")
        provider.stdin.flush()
        _read_until(provider, r"oidc provider ready")
        token = (work / "data" / "admin-token").read_text().strip()
        yield url, token
    finally:
        for proc in (registry, provider):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)


def _sign_in_at_provider(page: Page, user: str) -> None:
    """The provider's own (development) login page, then its consent page."""
    page.wait_for_selector("input[name=login]")
    page.fill("input[name=login]", user)
    page.fill("input[name=password]", "any-password")
    page.click("button[type=submit]")
    page.wait_for_load_state()
    if "/interaction/" in page.url and page.locator("button[type=submit]").count():
        page.click("button[type=submit]")  # consent: Continue


def _audit(url: str, token: str) -> list[dict]:
    req = urllib.request.Request(url + "/api/v1/audit?limit=50")
    req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read())["items"]


def test_an_admin_signs_in_with_sso_in_chromium_and_the_audit_log_names_them(sso, page: Page):
    url, token = sso
    page.goto(url + "/ui/signin")
    button = page.get_by_role("link", name="Acme SSO")
    expect(button).to_be_visible()
    expect(page.get_by_label("API token")).to_be_visible()  # tokens stay
    screenshot(page, "sso-signin")
    button.click()
    assert page.url.startswith("http://localhost:"), page.url  # at the provider
    screenshot(page, "sso-provider-login")
    _sign_in_at_provider(page, "admin")
    page.wait_for_url(url + "/ui/skills")
    expect(page.get_by_text("admin@acme.example")).to_be_visible()
    screenshot(page, "sso-signed-in")
    lines = [e for e in _audit(url, token) if e["action"] == "ui.sign-in"]
    assert lines, "no audit line for the sign-in"
    assert lines[0]["detail"]["subject"] == "admin"
    assert lines[0]["detail"]["email"] == "admin@acme.example"
    assert lines[0]["detail"]["scopes"] == ["admin"]
    # Sign out: the session is gone.
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(url + "/ui/signin")
    page.goto(url + "/ui/skills")
    page.wait_for_url(url + "/ui/signin")


def test_a_user_no_rule_matches_is_refused_with_a_clear_page(sso, page: Page):
    url, _ = sso
    page.goto(url + "/ui/oidc/start")
    _sign_in_at_provider(page, "mallory")
    page.wait_for_url(re.compile(re.escape(url) + r"/ui/oidc/callback.*"))
    expect(page.get_by_role("heading", name="Sign-in refused")).to_be_visible()
    expect(page.get_by_text("no single sign-on rule")).to_be_visible()
    expect(page.get_by_text("mallory@elsewhere.example")).to_be_visible()
    screenshot(page, "sso-refused")
    page.goto(url + "/ui/skills")
    page.wait_for_url(url + "/ui/signin")
