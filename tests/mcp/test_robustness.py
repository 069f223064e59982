"""Hostile and broken clients: raw JSON-RPC lines over stdio, raw HTTP
requests (oversized bodies, missing or wrong bearer tokens, foreign Host and
Origin headers), and clients that disconnect mid-call. After each, the server
must still answer the next valid request.

    SKILLDECK_BIN=target/debug/skilldeck python -m unittest tests/mcp/test_robustness.py
"""

from __future__ import annotations

import json
import os
import select
import socket
import time
import unittest
from pathlib import Path
from typing import Any

import httpx2

from common import (
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    HttpServer,
    Sandbox,
    client_for,
    make_skills,
    stop_process,
    text_of,
)

OVERSIZED = 4 * 1024 * 1024 + 1024  # over the 4 MiB cap
LEGACY = "2025-11-25"


class StdioLines:
    """A server on a pipe, spoken to in JSON lines."""

    def __init__(self, sandbox: Sandbox, root: Path) -> None:
        self.proc = sandbox.popen_stdio([root])
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin = self.proc.stdin
        self.stdout = self.proc.stdout
        self.buffer = b""

    def send_bytes(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def read_message(self, timeout: float = 10) -> dict[str, Any] | None:
        """The next JSON line on stdout, or None after `timeout`. Anything on
        stdout that is not a JSON-RPC message fails the test (logs belong on
        stderr)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.stdout], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError("the server closed stdout")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0", message
        return message

    def response(self, id_: Any, timeout: float = 10) -> dict[str, Any]:
        """The response to request `id_`, skipping notifications."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.read_message(max(0.0, deadline - time.monotonic()))
            if message is None:
                raise AssertionError(f"no response to request {id_!r}")
            if "id" in message and message["id"] == id_:
                return message

    def call(self, id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.response(id_)

    def initialize(self) -> None:
        result = self.call(
            0,
            "initialize",
            {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        )
        assert result["result"]["protocolVersion"] == LEGACY, result
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def still_serving(self, id_: Any) -> None:
        tools = self.call(id_, "tools/list", {})
        names = {t["name"] for t in tools["result"]["tools"]}
        assert "activate_skill" in names, tools

    def close(self) -> None:
        stop_process(self.proc)


class StdioRobustness(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.sandbox = Sandbox()
        cls.root = make_skills(cls.sandbox.dir / "skills")

    def setUp(self) -> None:
        self.server = StdioLines(self.sandbox, self.root)
        self.addCleanup(self.server.close)

    def test_malformed_json(self) -> None:
        s = self.server
        s.initialize()
        s.send_bytes(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", \n')
        s.send_bytes(b"this is not json\n")
        # Answers to garbage are optional but, when sent, are -32700 with id null.
        s.still_serving(2)
        s.send_bytes(b"[1, 2\n")
        s.send_bytes(b"\n")
        s.still_serving(3)

    def test_parse_error_is_reported(self) -> None:
        """A line that is not JSON gets a -32700 Parse error answer (JSON-RPC
        2.0, section 5.1), and the server keeps serving."""
        s = self.server
        s.initialize()
        s.send_bytes(b"this is not json\n")
        message = s.read_message(timeout=3)
        self.assertIsNotNone(message, "no answer to a malformed line")
        self.assertEqual(message.get("error", {}).get("code"), PARSE_ERROR, message)
        self.assertIsNone(message.get("id"), message)
        s.still_serving(2)

    def test_invalid_params(self) -> None:
        """A known method with params of the wrong shape is -32602 Invalid
        params for that request id (not -32601: the method exists)."""
        s = self.server
        s.initialize()
        cases = [
            {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "activate_skill", "arguments": 5}},
            {"jsonrpc": "2.0", "id": 12, "method": "resources/read", "params": {}},
            {"jsonrpc": "2.0", "id": 13, "method": "prompts/get", "params": {"name": 7}},
            {"jsonrpc": "2.0", "id": 14, "method": "tools/call"},
            {"jsonrpc": "2.0", "id": 15, "method": "skills/get", "params": {}},
        ]
        wrong = []
        for bad in cases:
            s.send(bad)
            answer = s.response(bad["id"], timeout=3)
            code = answer.get("error", {}).get("code")
            if code != -32602:
                wrong.append(f"{json.dumps(bad)} -> {json.dumps(answer)}")
        s.still_serving(20)
        if wrong:
            self.fail("expected -32602 Invalid params:\n" + "\n".join(wrong))

    def test_invalid_request_keeps_id(self) -> None:
        """A message that is JSON but not a valid request is -32600, and the
        response carries `id` (REQUIRED in every JSON-RPC 2.0 response: the
        request's id, or null when it cannot be read)."""
        s = self.server
        s.initialize()
        cases = [
            {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": "not an object"},
            {"jsonrpc": "2.0", "id": 16},
            {"jsonrpc": "1.0", "id": 17, "method": "tools/list"},
            {"id": 18, "method": "tools/list"},
        ]
        wrong = []
        for bad in cases:
            s.send(bad)
            answer = s.read_message(timeout=3)
            if (
                answer is None
                or answer.get("error", {}).get("code") not in (-32600, -32602)
                or "id" not in answer
                or answer["id"] not in (bad["id"], None)
            ):
                wrong.append(f"{json.dumps(bad)} -> {json.dumps(answer)}")
        s.still_serving(20)
        if wrong:
            self.fail("expected -32600 responses with an id member:\n" + "\n".join(wrong))

    def test_unknown_method(self) -> None:
        s = self.server
        s.initialize()
        answer = s.call(1, "no/such/method", {})
        self.assertEqual(answer["error"]["code"], METHOD_NOT_FOUND, answer)
        answer = s.call("str-id", "tools/unknown", {})
        self.assertEqual(answer["error"]["code"], METHOD_NOT_FOUND, answer)
        # An unknown notification is ignored without an answer.
        s.send({"jsonrpc": "2.0", "method": "notifications/no-such-thing"})
        s.still_serving(2)

    def test_oversized_line(self) -> None:
        s = self.server
        s.initialize()
        pad = "x" * OVERSIZED
        s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "activate_skill", "arguments": {"name": "pdf-tools", "arguments": pad}}})
        # Whatever it says about the dropped line, it keeps serving.
        s.still_serving(2)
        ok = s.call(3, "tools/call", {"name": "activate_skill", "arguments": {"name": "csv-tools"}})
        self.assertIn("Read the CSV", ok["result"]["content"][0]["text"])
        self.assertIsNone(self.server.proc.poll())

    def test_oversized_line_before_initialize(self) -> None:
        s = self.server
        s.send_bytes(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"' + b"y" * OVERSIZED + b'"}}\n')
        s.initialize()
        s.still_serving(2)

    def messages_until(self, id_: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The notifications before the response to `id_`, and the response
        (on stdio they arrive in the order they were sent)."""
        notes: list[dict[str, Any]] = []
        while True:
            message = self.server.read_message()
            if message is None:
                raise AssertionError(f"no response to request {id_!r}")
            if message.get("id") == id_ and "method" not in message:
                return notes, message
            notes.append(message)

    def test_log_level_filters_the_log_notifications_of_the_session(self) -> None:
        s = self.server
        s.initialize()
        activate = {"name": "activate_skill", "arguments": {"name": "pdf-tools"}}
        # No level asked for: no log notification.
        s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": activate})
        notes, answer = self.messages_until(1)
        self.assertIn("result", answer)
        self.assertEqual([n for n in notes if n.get("method") == "notifications/message"], [])
        # `info`: the activation is logged, the `debug` lines are not.
        self.assertEqual(s.call(2, "logging/setLevel", {"level": "info"}), {"jsonrpc": "2.0", "id": 2, "result": {}})
        s.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": activate})
        notes, answer = self.messages_until(3)
        logs = [n["params"] for n in notes if n.get("method") == "notifications/message"]
        self.assertIn("result", answer)
        self.assertTrue(any(l["level"] == "info" and l["data"].get("skill") == "pdf-tools" for l in logs), logs)
        self.assertFalse(any(l["level"] == "debug" for l in logs), logs)
        # `debug`: every answer is logged too; a failed request at `warning`.
        s.call(4, "logging/setLevel", {"level": "debug"})
        s.send({"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "skill://pdf-tools/NOPE.md"}})
        notes, answer = self.messages_until(5)
        logs = [n["params"] for n in notes if n.get("method") == "notifications/message"]
        self.assertIn("error", answer)
        self.assertTrue(any(l["level"] == "warning" and l["data"].get("method") == "resources/read" for l in logs), logs)
        # `error`: neither.
        s.call(6, "logging/setLevel", {"level": "error"})
        s.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": activate})
        notes, _ = self.messages_until(7)
        self.assertEqual([n for n in notes if n.get("method") == "notifications/message"], [])
        # A level that is not one is refused.
        bad = s.call(8, "logging/setLevel", {"level": "loud"})
        self.assertEqual(bad["error"]["code"], -32602, bad)

    def test_batch_null_and_invalid_utf8_lines_get_jsonrpc_errors(self) -> None:
        s = self.server
        s.initialize()
        for line, code in (
            (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600),
            (b"null", -32600),
            (b'{"jsonrpc": "2.0", "id": 1, "method": "p\xffng"}', -32700),
        ):
            s.send_bytes(line + b"\n")
            message = s.read_message()
            assert message is not None, line
            self.assertEqual(message["error"]["code"], code, (line, message))
            self.assertIsNone(message["id"], (line, message))
        s.still_serving(2)

    def test_logs_stay_off_stdout(self) -> None:
        s = self.server
        s.initialize()
        s.call(1, "tools/call", {"name": "activate_skill", "arguments": {"name": "no-such"}})
        s.still_serving(2)
        # read_message fails on any non-JSON line; nothing else may be pending.
        self.assertIsNone(s.read_message(timeout=0.3))


def http_post(url: str, body: bytes | dict[str, Any], headers: dict[str, str] | None = None,
              timeout: float = 30) -> httpx2.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(headers or {})
    with httpx2.Client(timeout=timeout) as c:
        return c.post(url, content=data, headers=h)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


class HttpRobustness(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.sandbox = Sandbox()
        cls.root = make_skills(cls.sandbox.dir / "skills")
        cls.http = HttpServer(cls.sandbox, [cls.root])
        cls.token = "s3cret-" + os.urandom(8).hex()
        token_file = cls.sandbox.dir / "token"
        token_file.write_text(cls.token + "\nsecond line is ignored\n")
        token_file.chmod(0o600)
        cls.authed = HttpServer(cls.sandbox, [cls.root], ["--token-file", str(token_file)])

    @classmethod
    def tearDownClass(cls) -> None:
        cls.http.stop()
        cls.authed.stop()

    async def assert_serving(self, url: str, headers: dict[str, str] | None = None) -> None:
        for mode in ("legacy", "auto"):
            async with client_for(url, mode, headers=headers) as c:
                result = await c.call_tool("activate_skill", {"name": "csv-tools"})
                self.assertIn("Read the CSV", text_of(result))
        self.assertTrue(self.http.alive() and self.authed.alive())

    async def test_initialize_raw(self) -> None:
        r = http_post(self.http.url, INITIALIZE)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertTrue(r.headers.get("mcp-session-id"))

    async def test_oversized_body(self) -> None:
        big = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "activate_skill", "arguments": {"name": "pdf-tools", "arguments": "x" * OVERSIZED}}}
        r = http_post(self.http.url, big)
        self.assertEqual(r.status_code, 413, r.text[:300])
        await self.assert_serving(self.http.url)

    async def test_malformed_body(self) -> None:
        r = http_post(self.http.url, b"{not json")
        self.assertGreaterEqual(r.status_code, 400, r.text)
        self.assertLess(r.status_code, 500, r.text)
        await self.assert_serving(self.http.url)

    async def test_bearer_token(self) -> None:
        url = self.authed.url
        r = http_post(url, INITIALIZE)
        self.assertEqual(r.status_code, 401, r.text)
        self.assertIn("Bearer", r.headers.get("www-authenticate", ""))
        for wrong in ("Bearer wrong", f"Bearer {self.token}x", f"Basic {self.token}", self.token,
                      f"bearer{self.token}", "Bearer"):
            r = http_post(url, INITIALIZE, {"Authorization": wrong})
            self.assertEqual(r.status_code, 401, f"{wrong!r}: {r.status_code} {r.text}")
        with httpx2.Client(timeout=10) as c:
            self.assertEqual(c.get(url).status_code, 401)
            self.assertEqual(c.delete(url).status_code, 401)
        r = http_post(url, INITIALIZE, {"Authorization": f"Bearer {self.token}"})
        self.assertEqual(r.status_code, 200, r.text)
        # The SDK client with the token works; without it, it fails.
        await self.assert_serving(url, headers={"Authorization": f"Bearer {self.token}"})
        with self.assertRaises(BaseException):
            async with client_for(url, "legacy") as c:
                await c.list_tools()

    async def test_foreign_host_and_origin(self) -> None:
        url = self.http.url
        for host in ("evil.example", f"evil.example:{self.http.port}", "127.0.0.1.evil.example"):
            r = http_post(url, INITIALIZE, {"Host": host})
            self.assertIn(r.status_code, (400, 403, 421), f"Host {host}: {r.status_code} {r.text}")
        for origin in ("http://evil.example", "null"):
            r = http_post(url, INITIALIZE, {"Origin": origin})
            self.assertIn(r.status_code, (400, 403), f"Origin {origin}: {r.status_code} {r.text}")
        # Loopback names are fine, with or without the port.
        for host in (f"127.0.0.1:{self.http.port}", f"localhost:{self.http.port}", "localhost"):
            r = http_post(url, INITIALIZE, {"Host": host})
            self.assertEqual(r.status_code, 200, f"Host {host}: {r.status_code} {r.text}")
        await self.assert_serving(url)

    async def test_client_disconnects_mid_call(self) -> None:
        url = self.http.url
        port = self.http.port
        call = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                           "params": {"name": "activate_skill", "arguments": {"name": "pdf-tools"}}}).encode()
        # 1. Headers promise a body that never fully arrives.
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n"
                b"Content-Length: 100000\r\n\r\n" + call[:20]
            )
        # 2. A whole request, and the client is gone before the answer.
        r = http_post(url, INITIALIZE)
        session = r.headers["mcp-session-id"]
        for _ in range(5):
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(
                    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Accept: application/json, text/event-stream\r\n"
                    + f"Mcp-Session-Id: {session}\r\nContent-Length: {len(call)}\r\n\r\n".encode()
                    + call
                )
                s.shutdown(socket.SHUT_RDWR)
        # 3. An SDK client abandons a session mid-stream (a listen that is
        #    cancelled, then the connection dropped).
        async with client_for(url, "auto") as c:
            async with c.listen(tools_list_changed=True):
                pass
        time.sleep(0.2)
        await self.assert_serving(url)


if __name__ == "__main__":
    unittest.main(verbosity=2)
