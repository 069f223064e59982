#!/usr/bin/env python3
"""The OpenTelemetry export of `skilldeck serve`, checked against a real
OTLP/HTTP receiver (opentelemetry-proto from PyPI); run by
scripts/test-otel.sh, which makes the venv.

    python otel_check.py BIN WORKDIR

Parts (each prints PASS or FAIL; exit status 1 on any FAIL):

 1. spans: serve over stdio with OTEL_EXPORTER_OTLP_ENDPOINT at the
    receiver; initialize, tools/list, tools/call activate_skill twice (the
    first with `_meta.traceparent`), resources/read; close stdin. Then
    checks span names, parent links, the traceparent's trace id and parent
    span, the GenAI / Langfuse / skilldeck attributes, the discovery
    failure with its file:line, the headers sent, and that no argument,
    body or header secret is in what was exported or logged;
 2. content opt-in: the same with `export-content = true` in
    skilldeck.toml: the arguments and the result are exported;
 3. serve --http: the `traceparent` HTTP header is the parent; the spans are
    flushed when the server stops on SIGTERM;
 4. unreachable collector: a closed port and a port that accepts but never
    answers change neither the answers nor the round-trip median beyond
    noise (bound: 1.5x + 1 ms of the medians with export off and with a
    reachable receiver; calls interleaved one by one), and shutdown stays bounded;
    the drop counts are logged, and so is the failure: for the collector
    that never answers, the export's own timeout (5 s) or shutdown giving
    up on it (3 s), whichever comes first, logs `export failed`.
 5. registry serve: with OTEL_EXPORTER_OTLP_ENDPOINT at the receiver, a few
    requests (one with a `traceparent`, one without a token, one no route
    matches); after SIGTERM the receiver holds one server span per request
    named `METHOD /route` (`GET /api/v1/skills/{namespace}/{name}`) with
    the HTTP server attributes and the principal kind, each in a trace of
    its own, the client's `traceparent` as the parent of its request; the
    request log lines carry the same trace ids; the admin token is in
    neither.
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from otel_harness import (  # noqa: E402
    Receiver, Server, attrs, black_hole, clean_env, closed_port, write_skill,
)

BIN, WORK = sys.argv[1], sys.argv[2]
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
ARG_SECRET = "ARG-SECRET-7f3a"
BODY_SECRET = "BODY-SECRET-91cc"
HEADER_SECRET = "hdr-secret-5e2d"
SPAN_KIND_SERVER = 2

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def setup(name):
    base = os.path.join(WORK, name)
    roots = os.path.join(base, "skills")
    home = os.path.join(base, "home")
    os.makedirs(roots)
    os.makedirs(home)
    write_skill(roots, "alpha", "Use when testing alpha telemetry.", f"Alpha body {BODY_SECRET}.")
    # beta loads, without its one declared tool (parameters not a map).
    write_skill(roots, "beta", "Use when testing beta telemetry.", "Beta body.",
                "tools:\n  - name: go\n    description: Go.\n    parameters: [not, a, map]\n"
                "    run: scripts/go.sh\n")
    # A skill that fails to load: its frontmatter is not YAML (line 3).
    write_skill(roots, "broken", "Use when broken.", "x")
    with open(os.path.join(roots, "broken", "SKILL.md"), "w") as f:
        f.write("---\nname: broken\ndescription: [unclosed\n---\nbody\n")
    return base, roots, home


def serve(base, roots, home, extra_env, config=None, args=()):
    cwd = os.path.join(base, "cwd")
    os.makedirs(cwd, exist_ok=True)
    argv = [BIN, "serve", "--root", roots, "--no-watch", *args]
    if config is not None:
        path = os.path.join(base, "skilldeck.toml")
        with open(path, "w") as f:
            f.write(config)
        argv = [*argv, "--config", path]
    env = clean_env(home, extra_env)
    return Server(argv, env, os.path.join(base, "stderr.log"), cwd=cwd)


def drive(srv):
    """The session of part 1; returns the answers (ids stripped)."""
    answers = []
    srv.initialize()
    r, _ = srv.request("tools/list", {})
    answers.append(r.get("result"))
    r, _ = srv.request("tools/call", {
        "name": "activate_skill",
        "arguments": {"name": "alpha", "arguments": ARG_SECRET},
        "_meta": {"traceparent": TRACEPARENT},
    })
    answers.append(r.get("result"))
    # The same arguments again: the already-active notice (other arguments
    # would be other content, delivered).
    r, _ = srv.request("tools/call", {
        "name": "activate_skill", "arguments": {"name": "alpha", "arguments": ARG_SECRET}})
    answers.append(r.get("result"))
    r, _ = srv.request("resources/read", {"uri": "skill://alpha/SKILL.md"})
    answers.append(r.get("result"))
    # A tool error is logged ("tool error"): its line must carry the trace
    # id of its exported span (no traceparent sent).
    r, _ = srv.request("tools/call", {
        "name": "read_skill_resource", "arguments": {"name": "alpha", "path": "missing.md"}})
    answers.append(r.get("result"))
    return answers


def wait_spans(receiver, names, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with receiver.lock:
            got = {s.name for _, s in receiver.spans}
        if names <= got:
            return
        time.sleep(0.1)


def part_spans(receiver):
    base, roots, home = setup("spans")
    receiver.clear()
    srv = serve(base, roots, home, {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer {HEADER_SECRET}",
        "OTEL_SERVICE_NAME": "skilldeck-otel-check",
    })
    answers = drive(srv)
    srv.close()
    wait_spans(receiver, {"tools/call activate_skill", "resources/read",
                          "tools/call read_skill_resource"})
    log = open(os.path.join(base, "stderr.log"), encoding="utf-8", errors="replace").read()
    n0 = len(failures)
    with receiver.lock:
        spans = [s for _, s in receiver.spans]
        resources = [r for r, _ in receiver.spans]
        bodies = b"".join(receiver.bodies)
        headers = list(receiver.headers)
    by_name = {}
    for s in spans:
        by_name.setdefault(s.name, []).append(s)
    print(f"  received {len(spans)} spans in {len(headers)} requests: "
          f"{sorted(set(by_name))}")
    check(answers[1] and not answers[1].get("isError"), f"activate answered: {answers[1]}")
    check(all(r.get("service.name") == "skilldeck-otel-check" for r in resources),
          "service.name from OTEL_SERVICE_NAME")
    check(headers and all(h.get("Content-Type", h.get("content-type")) == "application/x-protobuf"
                          for h in headers), "OTLP/HTTP protobuf content type")
    check(headers and all(h.get("authorization") == f"Bearer {HEADER_SECRET}" for h in headers),
          "OTEL_EXPORTER_OTLP_HEADERS sent with every export")

    calls = by_name.get("tools/call activate_skill", [])
    second = None
    if check(len(calls) == 2, f"two tools/call activate_skill spans, got {len(calls)}"):
        first = next((c for c in calls if c.trace_id.hex() == TRACE_ID), None)
        if check(first is not None, "traceparent's trace id propagated to tools/call"):
            a = attrs(first)
            check(first.parent_span_id.hex() == PARENT_ID, "traceparent's span is the parent")
            check(first.kind == SPAN_KIND_SERVER, "tools/call is a server span")
            check(a.get("gen_ai.operation.name") == "execute_tool", f"gen_ai.operation.name: {a}")
            check(a.get("gen_ai.tool.name") == "activate_skill", "gen_ai.tool.name")
            check(a.get("gen_ai.tool.call.id") == "3", f"gen_ai.tool.call.id = JSON-RPC id: {a}")
            check(a.get("langfuse.observation.type") == "tool", "langfuse.observation.type=tool")
            check(a.get("mcp.method.name") == "tools/call", "mcp.method.name")
            check(a.get("skilldeck.skills.available") == 2, f"skills available: {a}")
            check("gen_ai.tool.call.arguments" not in a, "arguments not exported by default")
            acts = [s for s in by_name.get("activate", []) if s.parent_span_id == first.span_id]
            if check(len(acts) == 1, "activate span is the child of tools/call"):
                act = acts[0]
                aa = attrs(act)
                check(act.trace_id.hex() == TRACE_ID, "activate in the client's trace")
                check(aa.get("skilldeck.skill.name") == "alpha", f"skilldeck.skill.name: {aa}")
                check(aa.get("skilldeck.activation.already_active") is False, "first: not active")
                check(aa.get("skilldeck.activation.cached") is False, "first: not cached")
                reads = [s for s in by_name.get("read_skill_md", [])
                         if s.parent_span_id == act.span_id]
                check(len(reads) == 1, "read_skill_md is the child of activate")
        second = next((c for c in calls if c.trace_id.hex() != TRACE_ID), None)
        if second is not None:
            acts = [s for s in by_name.get("activate", []) if s.parent_span_id == second.span_id]
            check(acts and attrs(acts[0]).get("skilldeck.activation.already_active") is True,
                  "second activation: already active")
            check(not second.parent_span_id, "no traceparent: a root span")
    tl = by_name.get("tools/list", [])
    check(tl and attrs(tl[0]).get("skilldeck.skills.available") == 2, "tools/list skills available")
    check(by_name.get("resources/read"), "resources/read span")
    disc = by_name.get("discover", [])
    if check(len(disc) >= 1, "discover span"):
        d = attrs(disc[0])
        check(d.get("skilldeck.discovery.loaded") == 2, f"discovery loaded: {d}")
        check(d.get("skilldeck.discovery.failed") == 1, f"discovery failed: {d}")
        failures_text = d.get("skilldeck.discovery.failures") or ""
        check(os.path.join("broken", "SKILL.md:") in failures_text,
              f"discovery failure with file:line: {failures_text!r}")
        check(d.get("skilldeck.discovery.skills") == "alpha, beta",
              f"discover names the skills it loaded: {d}")
        dropped = d.get("skilldeck.discovery.tools_dropped") or ""
        check(os.path.join("beta", "SKILL.md:") in dropped and "tool-schema-invalid" in dropped,
              f"discover names the declared tool left out, with file:line: {dropped!r}")
        # Start-up: the log lines and the exported trace share one trace id
        # (no client sent a traceparent for it).
        startup = [s for s in by_name.get("startup", []) if not s.parent_span_id]
        if check(len(startup) == 1, f"one startup root span, got {len(startup)}"):
            tid = startup[0].trace_id.hex()
            check(disc[0].trace_id.hex() == tid, "discover is in the startup trace")
            lines = [l for l in log.splitlines()
                     if "skills loaded" in l or "skill not loaded" in l
                     or "skill tool not offered" in l]
            check(len(lines) >= 3 and all(f"trace_id={tid}" in l for l in lines),
                  f"every start-up line carries the startup trace id {tid}: {lines}")
            loaded = [l for l in lines if "skills loaded" in l]
            check(loaded and "alpha, beta" in loaded[0], f"skills loaded names them: {loaded}")
    # A request without traceparent: its log line carries the trace id its
    # exported span has.
    errs = by_name.get("tools/call read_skill_resource", [])
    if check(len(errs) == 1, f"one tools/call read_skill_resource span, got {len(errs)}"):
        tid = errs[0].trace_id.hex()
        lines = [l for l in log.splitlines() if "tool error" in l]
        check(lines and all(f"trace_id={tid}" in l for l in lines),
              f"the log line of a request without traceparent carries its exported trace id {tid}: {lines}")
    cat = by_name.get("render_catalog", [])
    if check(cat, "render_catalog span"):
        c = attrs(cat[0])
        check(c.get("skilldeck.catalog.listed") == 2 and c.get("skilldeck.catalog.dropped") == 0
              and c.get("skilldeck.catalog.size", 0) > 0, f"catalog attributes: {c}")
    for secret in (ARG_SECRET, BODY_SECRET, HEADER_SECRET):
        check(secret.encode() not in bodies, f"{secret} not in the exported spans")
    check(HEADER_SECRET not in log, "header secret not in the log")
    check("telemetry:" in log and "0 dropped" in log, "shutdown summary logged")
    report("spans, links, traceparent, attributes, nothing private exported", n0)


def part_content(receiver):
    base, roots, home = setup("content")
    receiver.clear()
    srv = serve(base, roots, home, {}, config=(
        "[telemetry]\n"
        f"endpoint = \"{receiver.endpoint}\"\n"
        "service-name = \"from-config\"\n"
        "export-content = true\n"
        "[telemetry.headers]\n"
        f"x-check = \"{HEADER_SECRET}\"\n"
    ))
    drive(srv)
    srv.close()
    wait_spans(receiver, {"tools/call activate_skill"})
    n0 = len(failures)
    with receiver.lock:
        spans = list(receiver.spans)
        headers = list(receiver.headers)
    calls = [s for _, s in spans if s.name == "tools/call activate_skill"]
    check(spans and all(r.get("service.name") == "from-config" for r, _ in spans),
          "service-name from [telemetry]")
    check(headers and all(h.get("x-check") == HEADER_SECRET for h in headers),
          "[telemetry.headers] sent")
    first = next((c for c in calls if c.trace_id.hex() == TRACE_ID), None)
    if check(first is not None, "tools/call span exported"):
        a = attrs(first)
        check(ARG_SECRET in (a.get("gen_ai.tool.call.arguments") or ""), f"arguments opted in: {a}")
        check(BODY_SECRET in (a.get("gen_ai.tool.call.result") or ""), "result opted in")
    log = open(os.path.join(base, "stderr.log"), encoding="utf-8", errors="replace").read()
    check(ARG_SECRET not in log and HEADER_SECRET not in log, "content and header not logged")
    report("export-content = true exports arguments and results", n0)


def http_call(url, body, headers):
    import urllib.request
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(headers)
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=h, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read().decode()
        session = r.headers.get("mcp-session-id")
    for line in text.splitlines():  # an SSE stream, or plain JSON
        line = line[5:].strip() if line.startswith("data:") else line.strip()
        if line.startswith("{"):
            return json.loads(line), session
    return None, session


def part_http(receiver):
    import signal
    import subprocess
    base, roots, home = setup("http")
    receiver.clear()
    env = clean_env(home, {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    err_path = os.path.join(base, "stderr.log")
    with open(err_path, "wb") as err:
        proc = subprocess.Popen([BIN, "serve", "--root", roots, "--no-watch", "--http", "127.0.0.1:0"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                env=env, cwd=base)
    n0 = len(failures)
    try:
        url = None
        deadline = time.monotonic() + 30
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            for line in open(err_path, encoding="utf-8", errors="replace"):
                if "listening on " in line:
                    url = line.split("listening on ", 1)[1].strip()
            time.sleep(0.1)
        if not check(url, "serve --http started"):
            return
        _, session = http_call(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "otel-check", "version": "1"}}}, {})
        hs = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        http_call(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, hs)
        reply, _ = http_call(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "activate_skill", "arguments": {"name": "beta"}}},
            {**hs, "traceparent": TRACEPARENT})
        check(reply and "result" in reply, f"tools/call over HTTP answered: {reply}")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    wait_spans(receiver, {"tools/call activate_skill"})
    with receiver.lock:
        calls = [s for _, s in receiver.spans if s.name == "tools/call activate_skill"]
    if check(len(calls) == 1, f"one tools/call span over HTTP, got {len(calls)}"):
        check(calls[0].trace_id.hex() == TRACE_ID and calls[0].parent_span_id.hex() == PARENT_ID,
              "the HTTP traceparent header is the parent")
    report("serve --http: the traceparent header is the parent; spans flushed on SIGTERM", n0)


def part_registry(receiver):
    import signal
    import subprocess
    import urllib.error
    import urllib.request
    base = os.path.join(WORK, "registry")
    home = os.path.join(base, "home")
    data = os.path.join(base, "data")
    os.makedirs(home)
    receiver.clear()
    env = clean_env(home, {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                           "OTEL_SERVICE_NAME": "skilldeck-registry-check"})
    out_path = os.path.join(base, "stdout.log")
    err_path = os.path.join(base, "stderr.log")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen([BIN, "registry", "serve", "--data", data, "--listen", "127.0.0.1:0"],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=base)
    n0 = len(failures)
    admin = None
    statuses = {}

    def get(path, headers):
        req = urllib.request.Request(url + path, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            for line in open(out_path, encoding="utf-8", errors="replace"):
                if "listening on " in line:
                    url = line.split("listening on ", 1)[1].strip()
            time.sleep(0.1)
        if not check(url, "registry serve started"):
            return
        admin = open(os.path.join(data, "admin-token")).read().strip()
        bearer = {"Authorization": f"Bearer {admin}"}
        statuses["skill"] = get("/api/v1/skills/acme/missing", {**bearer, "traceparent": TRACEPARENT})
        statuses["list"] = get("/api/v1/skills", bearer)
        statuses["anonymous"] = get("/api/v1/agents", {})
        statuses["unmatched"] = get("/no/such/page", {})
        check(statuses == {"skill": 404, "list": 200, "anonymous": 401, "unmatched": 404},
              f"the registry answered {statuses}")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    skill_name = "GET /api/v1/skills/{namespace}/{name}"
    names = {skill_name, "GET /api/v1/skills", "GET /api/v1/agents", "GET unmatched"}
    wait_spans(receiver, names)
    with receiver.lock:
        spans = [(res, s) for res, s in receiver.spans]
        bodies = b"".join(receiver.bodies)
    by_name = {}
    for res, s in spans:
        by_name.setdefault(s.name, []).append((res, s))
    for n in names:
        check(len(by_name.get(n, [])) == 1, f"one span {n!r}, got {len(by_name.get(n, []))} "
              f"(all: {sorted(by_name)})")
    if any(len(by_name.get(n, [])) != 1 for n in names):
        report("registry serve: a server span per request, the traceparent honoured", n0)
        return
    res, skill = by_name[skill_name][0]
    a = attrs(skill)
    check(res.get("service.name") == "skilldeck-registry-check", f"service.name: {res}")
    check(skill.kind == SPAN_KIND_SERVER, f"{skill_name} is a server span: {skill.kind}")
    check(skill.trace_id.hex() == TRACE_ID and skill.parent_span_id.hex() == PARENT_ID,
          "the client's traceparent is the parent of its request's span")
    for key, want in [("http.request.method", "GET"),
                      ("http.route", "/api/v1/skills/{namespace}/{name}"),
                      ("http.response.status_code", 404), ("url.scheme", "http"),
                      ("skilldeck.principal.kind", "admin")]:
        check(a.get(key) == want, f"{skill_name}: {key} = {a.get(key)!r}, want {want!r}")
    anon = attrs(by_name["GET /api/v1/agents"][0][1])
    check(anon.get("http.response.status_code") == 401
          and anon.get("skilldeck.principal.kind") == "anonymous", f"the 401's span: {anon}")
    listed = attrs(by_name["GET /api/v1/skills"][0][1])
    check(listed.get("http.response.status_code") == 200, f"the list's span: {listed}")
    traces = [by_name[n][0][1].trace_id.hex() for n in sorted(names)]
    check(len(set(traces)) == len(traces), f"one trace per request: {traces}")
    roots = [by_name[n][0][1] for n in names if n != skill_name]
    check(all(not s.parent_span_id for s in roots), "a request without traceparent is a root span")
    log = open(err_path, encoding="utf-8", errors="replace").read()
    lines = [l for l in log.splitlines() if "route=" in l]
    check(len(lines) == 4, f"one request log line per request: {lines}")
    for t in traces:
        check(any(f"trace_id={t}" in l for l in lines), f"a log line with trace_id={t}: {lines}")
    check(admin and admin.encode() not in bodies, "the admin token is not exported")
    check(admin and admin not in log, "the admin token is not logged")
    report("registry serve: a server span per request, the traceparent honoured", n0)


def round_trip(srv, i):
    """The i-th activate_skill call, in a fresh conversation (body from the
    activation cache); returns (answer, seconds)."""
    r, dt = srv.request("tools/call", {
        "name": "activate_skill",
        "arguments": {"name": "alpha" if i % 2 else "beta"},
        "_meta": {"dev.skilldeck/conversation": f"c{i}", "traceparent": TRACEPARENT},
    })
    return r.get("result"), dt


def part_unreachable():
    n0 = len(failures)
    hole = black_hole()
    receiver = Receiver()
    targets = [
        ("off", {}),
        ("receiver up", {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}),
        ("closed port", {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{closed_port()}"}),
        ("never answers", {"OTEL_EXPORTER_OTLP_ENDPOINT":
                           f"http://127.0.0.1:{hole.getsockname()[1]}"}),
    ]
    calls = int(os.environ.get("OTEL_CHECK_CALLS", "400"))
    servers = {}
    for label, extra in targets:
        base, roots, home = setup("unreachable-" + label.replace(" ", "-"))
        # A small queue, so that a dead collector fills it and spans drop.
        srv = serve(base, roots, home, extra, config="[telemetry]\nqueue-size = 64\n")
        srv.initialize()
        servers[label] = (srv, base)
    results = {label: ([], []) for label, _ in targets}
    # Interleaved call by call (the order rotating), so a burst of machine
    # load hits every server alike: on a loaded 2-core machine, rounds of
    # 100 calls per server measured the load, not the exporter.
    labels = [label for label, _ in targets]
    for i in range(calls):
        k = i % len(labels)
        for label in labels[k:] + labels[:k]:
            srv, base = servers[label]
            answer, dt = round_trip(srv, i)
            # The skills' folders differ per server: compare without them.
            results[label][0].append(json.loads(json.dumps(answer).replace(base, "<base>")))
            results[label][1].append(dt)
    off_answers, off_times = results["off"]
    off_median = statistics.median(off_times)
    up_median = statistics.median(results["receiver up"][1])
    for label, _ in targets:
        answers, times = results[label]
        median = statistics.median(times)
        p90 = sorted(times)[int(len(times) * 0.9)]
        print(f"  {label:>13}: {len(times)} activate_skill round trips, median "
              f"{median * 1e6:,.0f} us, p90 {p90 * 1e6:,.0f} us "
              f"({median / off_median:.2f}x off, {median / up_median:.2f}x receiver up)")
        check(answers == off_answers, f"{label}: same answers as with export off")
        check(median <= off_median * 1.5 + 0.001,
              f"{label}: median {median * 1e6:.0f} us within 1.5x + 1 ms of off "
              f"({off_median * 1e6:.0f} us)")
        check(median <= up_median * 1.5 + 0.001,
              f"{label}: median {median * 1e6:.0f} us within 1.5x + 1 ms of a reachable "
              f"collector ({up_median * 1e6:.0f} us)")
    for label, _ in targets:
        srv, base = servers[label]
        took = srv.close(timeout=30)
        log = open(os.path.join(base, "stderr.log"), encoding="utf-8", errors="replace").read()
        print(f"  {label:>13}: shutdown in {took:.2f} s")
        check(took < 10, f"{label}: shutdown bounded ({took:.1f} s)")
        if label not in ("off", "receiver up"):
            summary = [line for line in log.splitlines() if "telemetry:" in line and "spans," in line]
            print(f"  {label:>13}: {summary[-1].strip() if summary else 'no summary'}")
            check(summary and "exported" in summary[-1] and "abandoned at shutdown" in summary[-1],
                  f"{label}: shutdown summary logged")
            failed = [line for line in log.splitlines() if "export failed" in line]
            for line in failed[:2]:
                print(f"  {label:>13}: {line.strip()[:400]}")
            check(failed, f"{label}: the first export failure logged")
    hole.close()
    receiver.close()
    report("unreachable collector: same answers, same latency, bounded shutdown", n0)


def report(what, n0):
    if len(failures) == n0:
        print(f"PASS: {what}")
    else:
        print(f"FAIL: {what}")
        for f in failures[n0:]:
            print(f"  - {f}")


def main():
    receiver = Receiver()
    try:
        part_spans(receiver)
        part_content(receiver)
        part_http(receiver)
        part_registry(receiver)
    finally:
        receiver.close()
    part_unreachable()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
