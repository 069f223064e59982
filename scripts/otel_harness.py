"""A small OTLP/HTTP trace receiver and a stdio MCP client, for
scripts/test-otel.sh (scripts/otel_check.py) and bench/otel.py.

The receiver is a `http.server` on 127.0.0.1 (port 0) that decodes each
`POST /v1/traces` body as an `ExportTraceServiceRequest` with the
`opentelemetry-proto` package (PyPI) and keeps the spans, the raw bodies
and the request headers. The client speaks newline-delimited JSON-RPC to
`skilldeck serve` over stdio, one request at a time.
"""
import json
import os
import select
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    """OTLP/HTTP protobuf receiver on loopback."""

    def __init__(self):
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        self._pb = trace_service_pb2
        self.lock = threading.Lock()
        self.spans = []  # (resource attributes dict, span)
        self.bodies = []
        self.headers = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                length = int(self.headers.get("content-length", "0"))
                body = self.rfile.read(length)
                request = receiver._pb.ExportTraceServiceRequest()
                status = 200
                try:
                    request.ParseFromString(body)
                except Exception:  # a body that is not the protobuf
                    status = 400
                with receiver.lock:
                    receiver.bodies.append(body)
                    receiver.headers.append(dict(self.headers.items()))
                    for rs in request.resource_spans:
                        res = {a.key: value_of(a.value) for a in rs.resource.attributes}
                        for ss in rs.scope_spans:
                            for span in ss.spans:
                                receiver.spans.append((res, span))
                reply = receiver._pb.ExportTraceServiceResponse().SerializeToString()
                self.send_response(status)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def clear(self):
        with self.lock:
            self.spans.clear()
            self.bodies.clear()
            self.headers.clear()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def value_of(v):
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return v.string_value
    if kind == "int_value":
        return v.int_value
    if kind == "bool_value":
        return v.bool_value
    if kind == "double_value":
        return v.double_value
    if kind == "array_value":
        return [value_of(x) for x in v.array_value.values]
    return None


def attrs(span):
    return {a.key: value_of(a.value) for a in span.attributes}


def closed_port():
    """A loopback port nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def black_hole():
    """A loopback socket that accepts connections (the kernel's backlog)
    but never reads or answers; keep it open while used."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1024)
    return s


class Server:
    """`skilldeck serve` over stdio."""

    def __init__(self, argv, env, stderr_path, cwd=None):
        self.stderr = open(stderr_path, "wb")
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            env=env, cwd=cwd,
        )
        self.next_id = 0
        self.buf = b""

    def send(self, obj):
        self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from skilldeck serve")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise EOFError("skilldeck serve closed stdout")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params=None):
        """Sends a request; returns (response, seconds)."""
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        t0 = time.perf_counter()
        self.send(msg)
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                return reply, time.perf_counter() - t0

    def initialize(self):
        reply, _ = self.request("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "otel-check", "version": "1"},
        })
        if "result" not in reply:
            raise RuntimeError(f"initialize failed: {reply}")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def close(self, timeout=30.0):
        """Closes stdin; returns seconds until the process exited."""
        t0 = time.perf_counter()
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        finally:
            self.stderr.close()
        return time.perf_counter() - t0


def write_skill(root, name, description, body, frontmatter_extra=""):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: {description}\n{frontmatter_extra}---\n{body}\n")
    return d


def clean_env(home, extra=None):
    """An environment with no user skills or config and no OTEL_* leaking in."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OTEL_") and k != "RUST_LOG"}
    env.update({
        "HOME": home,
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
    })
    env.update(extra or {})
    return env
