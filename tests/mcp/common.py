"""Shared helpers for the MCP integration tests (run by scripts/test-mcp.sh).

Everything here drives the real `skilldeck serve` binary named by the
SKILLDECK_BIN environment variable, with clients nobody on this project
wrote: the official Python `mcp` SDK (2.3.0) and, in the robustness tests,
raw JSON-RPC lines and raw HTTP requests.

Each test builds its skills in a temporary folder (under SKILLDECK_TEST_TMP
when set, which the script removes on exit) and runs servers with their own
HOME, XDG folders and working directory, so no user or project skill, and no
config file, leaks in.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import yaml
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from fixtures import (  # noqa: F401 (re-exported for the test modules)
    ALL_SKILLS,
    BINARY_ASSET,
    FORMS_MD,
    MODEL_INVOCABLE,
    USER_INVOCABLE,
    make_many_skills,
    make_skills,
    write_skill,
)

BIN = os.environ.get("SKILLDECK_BIN", "")
if not BIN or not os.access(BIN, os.X_OK):
    sys.exit(f"SKILLDECK_BIN must name the skilldeck binary (got {BIN!r})")

SKILLS_EXT = "io.modelcontextprotocol/skills"
CONVERSATION_KEY = "dev.skilldeck/conversation"
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
PARSE_ERROR = -32700
RESOURCE_NOT_FOUND = -32002

# Transports and protocol modes every client test runs in.
TRANSPORTS = ("stdio", "http")
MODES = ("legacy", "auto")

_TMP_BASE = os.environ.get("SKILLDECK_TEST_TMP") or None
_live: list[subprocess.Popen[bytes]] = []


def _stop_all() -> None:
    for p in list(_live):
        stop_process(p)


atexit.register(_stop_all)
# IsolatedAsyncioTestCase runs the loop in debug mode; its slow-callback
# notices are noise here.
logging.getLogger("asyncio").setLevel(logging.ERROR)
# `kill` from the script's trap: stop our servers on the way out.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def stop_process(p: subprocess.Popen[bytes]) -> None:
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=5)
    if p in _live:
        _live.remove(p)


_made: list[Path] = []


def new_tmp(prefix: str) -> Path:
    """A temporary folder: under SKILLDECK_TEST_TMP (the script removes it),
    else in the system's, removed when the tests exit."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=_TMP_BASE))
    _made.append(path)
    return path


def _remove_tmp() -> None:
    _stop_all()  # servers first: they may still be writing there
    for path in _made:
        shutil.rmtree(path, ignore_errors=True)


if _TMP_BASE is None:
    atexit.register(_remove_tmp)


# ---------------------------------------------------------------------------
# Fixture skills (see fixtures.py)
# ---------------------------------------------------------------------------

def frontmatter_of(skill_md: Path) -> dict[str, Any]:
    text = skill_md.read_text(encoding="utf-8")
    m = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert m, f"no frontmatter in {skill_md}"
    return yaml.safe_load(m.group(1))


# ---------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------


class Sandbox:
    """A HOME, XDG folders and a working directory no skill or config lives in."""

    def __init__(self) -> None:
        self.dir = new_tmp("sandbox-")
        self.home = self.dir / "home"
        self.cwd = self.dir / "cwd"
        for d in (self.home, self.cwd, self.home / ".config", self.home / ".local/share", self.home / ".cache"):
            d.mkdir(parents=True, exist_ok=True)
        self.log = self.dir / "server.log"

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "XDG_CONFIG_DIRS": str(self.home / ".config-dirs"),
            "XDG_DATA_DIRS": str(self.home / ".data-dirs"),
            "RUST_LOG": os.environ.get("RUST_LOG", "info"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }

    def args(self, roots: list[Path], extra: list[str] | None = None) -> list[str]:
        args = ["serve"]
        for r in roots:
            args += ["--root", str(r)]
        return args + (extra or [])

    def stdio_params(self, roots: list[Path], extra: list[str] | None = None) -> StdioServerParameters:
        return StdioServerParameters(command=BIN, args=self.args(roots, extra), env=self.env(), cwd=str(self.cwd))

    def popen_stdio(self, roots: list[Path]) -> subprocess.Popen[bytes]:
        p = subprocess.Popen(
            [BIN, *self.args(roots)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log.open("ab"),
            env=self.env(),
            cwd=self.cwd,
        )
        _live.append(p)
        return p


class HttpServer:
    """`skilldeck serve --http 127.0.0.1:0`, its URL read from stderr."""

    def __init__(self, sandbox: Sandbox, roots: list[Path], extra: list[str] | None = None) -> None:
        self.sandbox = sandbox
        self.log = sandbox.dir / f"http-{uuid.uuid4().hex[:8]}.log"
        self.proc = subprocess.Popen(
            [BIN, *sandbox.args(roots, ["--http", "127.0.0.1:0", *(extra or [])])],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("ab"),
            env=sandbox.env(),
            cwd=sandbox.cwd,
        )
        _live.append(self.proc)
        deadline = time.monotonic() + 30
        pattern = re.compile(r"listening on (http://127\.0\.0\.1:(\d+)/mcp)")
        while True:
            m = pattern.search(self.log.read_text(errors="replace"))
            if m:
                self.url, self.port = m.group(1), int(m.group(2))
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"HTTP server did not start:\n{self.log.read_text(errors='replace')}")
            time.sleep(0.02)

    def stop(self) -> None:
        stop_process(self.proc)

    def alive(self) -> bool:
        return self.proc.poll() is None


# ---------------------------------------------------------------------------
# Clients
# ---------------------------------------------------------------------------


def client_for(target: StdioServerParameters | str, mode: str, *, errlog: Path | None = None, **kw: Any) -> Client:
    """An SDK client for a stdio server (parameters) or an HTTP URL, without
    the SDK's response cache (tests must see what the server answers now)."""
    if isinstance(target, StdioServerParameters):
        log = (errlog or Path(os.devnull)).open("a")
        transport: Any = stdio_client(target, errlog=log)
    else:
        headers = kw.pop("headers", None)
        if headers:
            transport = streamable_http_client(target, http_client=httpx2.AsyncClient(headers=headers, timeout=30))
        else:
            transport = streamable_http_client(target)
    return Client(transport, mode=mode, cache=None, read_timeout_seconds=30, **kw)


class RawRequest(types.Request[dict[str, Any] | None, str]):
    """Any JSON-RPC request (for methods the SDK has no helper for)."""


_RAW = TypeAdapter(dict[str, Any])


async def request(client: Client, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Sends `method` through the client's session (so a 2026-07-28 client
    stamps `_meta` as it does for its own requests); returns the raw result."""
    return await client.session.send_request(RawRequest(method=method, params=params or {}), _RAW)


async def expect_error(coro: Any, code: int, *fragments: str) -> MCPError:
    try:
        result = await coro
    except MCPError as e:
        assert e.code == code, f"expected error {code}, got {e.code}: {e.error.message}"
        for f in fragments:
            assert f.lower() in e.error.message.lower(), f"{f!r} not in error message {e.error.message!r}"
        return e
    raise AssertionError(f"expected error {code}, got a result: {result!r}")


def first_leaf(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def conversation_meta() -> dict[str, Any]:
    return {CONVERSATION_KEY: uuid.uuid4().hex}


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def content_bytes(contents: Any) -> bytes:
    """The bytes a resources/read content carries (text as UTF-8, blob decoded)."""
    if isinstance(contents, types.TextResourceContents):
        return contents.text.encode("utf-8")
    if isinstance(contents, types.BlobResourceContents):
        return base64.b64decode(contents.blob, validate=True)
    raise AssertionError(f"unexpected resource contents {contents!r}")


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
