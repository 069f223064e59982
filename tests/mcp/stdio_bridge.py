"""A transparent streamable-HTTP front for a stdio MCP server, so clients that
speak only HTTP (the official conformance suite) can test `skilldeck serve`
over stdio.

    python3 stdio_bridge.py -- SKILLDECK serve --root ROOT

prints `http://127.0.0.1:PORT/mcp` on its first stdout line, then serves:

- POST `initialize` without a session: starts one server process (the
  command) for a new session, writes the message to its stdin as one line,
  and answers with the line the server wrote for that id (plain
  `application/json`) and an `Mcp-Session-Id`;
- POST in a session: the body goes to that session's process unchanged; a
  request's answer is the process's line with the same id, byte for byte;
  a notification or a response gets `202`;
- POST of anything else outside a session (revision 2026-07-28 clients:
  `server/discover`, then requests carrying their own `_meta`): the body
  goes to one shared process, one request at a time (so ids never clash),
  answered the same way;
- DELETE ends the session's process (`204`); GET is `405` (no server
  stream: notifications the process sends outside an answer are dropped).

The bridge changes no message: what the suite checks is what the stdio
server wrote. It implements none of HTTP's own rules (Origin, Host,
protocol-version headers), so only scenarios about messages are meaningful
through it (the Skills extension's); HTTP scenarios run against
`serve --http` itself. Standard library only.
"""

import json
import queue
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER_TIMEOUT = 60  # seconds a request may wait for its answer


class Session:
    def __init__(self, command):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr
        )
        self.waiting = {}  # JSON id text -> queue for its answer line
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict) or "method" in message or "id" not in message:
                continue  # a notification or a server request: no HTTP stream to carry it
            with self.lock:
                waiter = self.waiting.pop(json.dumps(message["id"]), None)
            if waiter is not None:
                waiter.put(line)
        with self.lock:
            for waiter in self.waiting.values():
                waiter.put(None)
            self.waiting.clear()

    def send(self, body, request_id):
        waiter = None
        if request_id is not None:
            waiter = queue.Queue(maxsize=1)
            with self.lock:
                self.waiting[json.dumps(request_id)] = waiter
        self.process.stdin.write(body.replace(b"\n", b" ") + b"\n")
        self.process.stdin.flush()
        if waiter is None:
            return None
        try:
            return waiter.get(timeout=ANSWER_TIMEOUT)
        except queue.Empty:
            return None

    def close(self):
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Bridge(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, command):
        super().__init__(("127.0.0.1", 0), Handler)
        self.command = command
        self.sessions = {}
        self.lock = threading.Lock()
        self.stateless = None  # the shared process for requests outside a session
        self.stateless_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._reply(405, headers=[("Allow", "POST, DELETE")])

    def do_DELETE(self):
        with self.server.lock:
            session = self.server.sessions.pop(self.headers.get("Mcp-Session-Id", ""), None)
        if session is None:
            self._reply(404)
            return
        session.close()
        self._reply(204)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        is_request = isinstance(message, dict) and "method" in message and message.get("id") is not None
        session_id = self.headers.get("Mcp-Session-Id")
        headers = []
        with self.server.lock:
            session = self.server.sessions.get(session_id) if session_id else None
        if session_id and session is None:
            self._reply(404)
            return
        if session is None and not (is_request and message.get("method") == "initialize"):
            with self.server.stateless_lock:
                if self.server.stateless is None:
                    self.server.stateless = Session(self.server.command)
                answer = self.server.stateless.send(body, message["id"] if is_request else None)
            if not is_request:
                self._reply(202)
            elif answer is None:
                self._reply(504)
            else:
                self._reply(200, answer.rstrip(b"\n"))
            return
        if session is None:
            session_id = uuid.uuid4().hex
            session = Session(self.server.command)
            with self.server.lock:
                self.server.sessions[session_id] = session
            headers.append(("Mcp-Session-Id", session_id))
        answer = session.send(body, message["id"] if is_request else None)
        if not is_request:
            self._reply(202, headers=headers)
        elif answer is None:
            self._reply(504, headers=headers)
        else:
            self._reply(200, answer.rstrip(b"\n"), headers)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit("usage: stdio_bridge.py -- COMMAND [ARGS...]")
    bridge = Bridge(args)
    print(f"http://127.0.0.1:{bridge.server_address[1]}/mcp", flush=True)
    try:
        bridge.serve_forever()
    finally:
        for session in list(bridge.sessions.values()) + [bridge.stateless]:
            if session is not None:
                session.close()


if __name__ == "__main__":
    main()
