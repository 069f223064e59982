#!/usr/bin/env python3
"""Span export from the bindings (the Python package, and the Node.js
package when its addon is built), checked against the real OTLP/HTTP
receiver of scripts/otel_harness.py; run by scripts/test-otel.sh, which
builds the wheel into the venv this runs in.

    python otel_bindings_check.py WORKDIR [NODE_PACKAGE_DIR]

Parts (each prints PASS or FAIL; exit status 1 on any FAIL):

 1. python trace ids: a script discovers with `trace_id=<W3C id>` (the
    endpoint from OTEL_EXPORTER_OTLP_ENDPOINT), then activates with a
    UUID, searches with a traceparent, renders the catalog with an id that
    is no trace id, and activates through the async twin (a worker
    thread); it exits without flushing (the package's exit hook must).
    The `discover` span naming the skills (`skilldeck.discovery.skills`)
    is exported under exactly the given trace id, below the binding's
    root span; the UUID's hex digits, the traceparent's parent and the
    opaque id's attribute are checked; the exporter thread ran;
 2. python off: without an endpoint nothing is exported, no exporter or
    HTTP client thread starts, `flush_telemetry()` answers False;
 3. python close: `otlp_endpoint=` (no variable) and `deck.close()`, then
    `os._exit` (no exit hook): the spans were flushed by close;
 4. node trace ids (when NODE_PACKAGE_DIR has the built addon): discover
    with `traceId` and `otlpEndpoint`, an activation with a UUID, then
    `deck.close()` and `process.exit` (the span entered on libuv's worker
    thread carries the trace id).
"""
import json
import os
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from otel_harness import Receiver, attrs, clean_env, write_skill  # noqa: E402

WORK = sys.argv[1]
NODE_PKG = sys.argv[2] if len(sys.argv) > 2 else None
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
UUID = "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
UUID_HEX = "7c9e6679742540de944be07fc1f90ae7"
ASYNC_ID = "5b8aa5a2d2c872e8321cf37308d69df2"
PARENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"
OPAQUE = "lf-trace-opaque-42"

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
    write_skill(roots, "alpha", "Use when testing alpha telemetry.", "Alpha body.")
    write_skill(roots, "beta", "Use when testing beta telemetry.", "Beta body.")
    return base, roots, home


def run(argv, env, cwd):
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    if not check(proc.returncode == 0, f"{argv[0]} exited {proc.returncode}: {proc.stderr[-2000:]}"):
        return None
    return proc.stdout


def hexid(b):
    return b.hex()


def spans_named(receiver, name):
    with receiver.lock:
        return [s for _, s in receiver.spans if s.name == name]


def root_call(receiver, operation, face):
    """The binding's root span of `operation`."""
    return [s for s in spans_named(receiver, f"deck.{operation}")
            if attrs(s).get("skilldeck.face") == face and not s.parent_span_id]


def report(what, n0):
    if len(failures) == n0:
        print(f"PASS: {what}")
    else:
        print(f"FAIL: {what}")
        for f in failures[n0:]:
            print(f"  {f}")


THREADS = """
def threads():
    names = []
    for t in os.listdir('/proc/self/task'):
        try:
            with open(f'/proc/self/task/{t}/comm') as f:
                names.append(f.read().strip())
        except OSError:
            pass
    return names
"""


def part_python_trace_ids(receiver):
    base, roots, home = setup("py-ids")
    script = THREADS + textwrap.dedent(f"""
        import asyncio, json, os, skilldeck
        deck = skilldeck.Deck.discover(roots=[{roots!r}], trace_id={TRACE_ID!r})
        deck.activate("alpha", trace_id={UUID!r})
        deck.search("beta", trace_id={TRACEPARENT!r})
        deck.catalog(trace_id={OPAQUE!r})
        asyncio.run(deck.aactivate("beta", trace_id={ASYNC_ID!r}))
        print(json.dumps({{"enabled": skilldeck._native.telemetry_enabled(), "threads": threads()}}))
    """)
    env = clean_env(home, {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    out = run([sys.executable, "-c", script], env, base)
    if out is None:
        return
    state = json.loads(out.strip().splitlines()[-1])
    check(state["enabled"], "telemetry_enabled() is False with an endpoint set")
    check(any(t.startswith("OpenTelemetry") for t in state["threads"]),
          f"no exporter thread while exporting: {state['threads']}")
    # The process has exited: its exit hook flushed (synchronously), so
    # the receiver holds every span now.
    discover = [s for s in spans_named(receiver, "discover")
                if "skilldeck.discovery.skills" in attrs(s)]
    if not check(len(discover) == 1, f"one discover span naming the skills: {len(discover)}"):
        return
    d = discover[0]
    check(hexid(d.trace_id) == TRACE_ID,
          f"discover's trace id is {hexid(d.trace_id)}, not the caller's {TRACE_ID}")
    named = attrs(d)["skilldeck.discovery.skills"]
    check("alpha" in named and "beta" in named, f"discover names the skills: {named!r}")
    calls = root_call(receiver, "discover", "python")
    if check(len(calls) == 1, f"one root span of the binding's discover call: {len(calls)}"):
        check(d.parent_span_id == calls[0].span_id, "the host's discover is the call's child")
        check(hexid(calls[0].trace_id) == TRACE_ID, "the call span has the caller's trace id")
        check(attrs(calls[0]).get("skilldeck.operation") == "deck.discover", "skilldeck.operation")
    activations = [s for s in root_call(receiver, "activate", "python")]
    by_trace = {hexid(s.trace_id): s for s in activations}
    check(UUID_HEX in by_trace, f"a UUID maps to its hex digits: {sorted(by_trace)}")
    check(ASYNC_ID in by_trace,
          f"the async twin (a worker thread) exports under its trace id: {sorted(by_trace)}")
    search = spans_named(receiver, "deck.search")
    if check(len(search) == 1, f"one search span: {len(search)}"):
        s = search[0]
        check(hexid(s.trace_id) == PARENT_TRACE and hexid(s.parent_span_id) == PARENT_SPAN,
              "a traceparent is the search call's parent")
    catalog = root_call(receiver, "catalog", "python")
    if check(len(catalog) == 1, f"one catalog call span: {len(catalog)}"):
        a = attrs(catalog[0])
        check(a.get("skilldeck.caller.trace_id") == OPAQUE,
              f"an opaque id is kept as an attribute: {a}")
        check(hexid(catalog[0].trace_id) not in (TRACE_ID, UUID_HEX, PARENT_TRACE, ASYNC_ID),
              "an opaque id gets a new trace id")


def part_python_off(receiver):
    base, roots, home = setup("py-off")
    receiver.clear()
    script = THREADS + textwrap.dedent(f"""
        import json, os, skilldeck
        deck = skilldeck.Deck.discover(roots=[{roots!r}], trace_id={TRACE_ID!r})
        deck.activate("alpha", trace_id={TRACE_ID!r})
        flushed = skilldeck.flush_telemetry()
        deck.close()
        print(json.dumps({{"enabled": skilldeck._native.telemetry_enabled(),
                          "flushed": flushed, "threads": threads(), "n": len(deck)}}))
    """)
    out = run([sys.executable, "-c", script], clean_env(home), base)
    if out is None:
        return
    state = json.loads(out.strip().splitlines()[-1])
    check(state["n"] == 2, f"discovery works without telemetry: {state['n']} skills")
    check(not state["enabled"], "telemetry_enabled() is True without an endpoint")
    check(state["flushed"] is False, "flush_telemetry() answers False when nothing is exported")
    extra = [t for t in state["threads"] if t.startswith(("OpenTelemetry", "reqwest"))]
    check(not extra, f"exporter threads without an endpoint: {extra}")
    with receiver.lock:
        check(not receiver.spans, f"{len(receiver.spans)} spans exported without an endpoint")


def part_python_close(receiver):
    base, roots, home = setup("py-close")
    receiver.clear()
    script = textwrap.dedent(f"""
        import os, skilldeck
        deck = skilldeck.Deck.discover(roots=[{roots!r}], trace_id={TRACE_ID!r},
                                       otlp_endpoint={receiver.endpoint!r})
        deck.close()
        os._exit(0)   # no exit hook: only close() flushed
    """)
    if run([sys.executable, "-c", script], clean_env(home), base) is None:
        return
    discover = [s for s in spans_named(receiver, "discover")
                if "skilldeck.discovery.skills" in attrs(s)]
    if check(len(discover) == 1, f"close() flushed the discover span: {len(discover)}"):
        check(hexid(discover[0].trace_id) == TRACE_ID, "under the caller's trace id")


def part_node(receiver):
    base, roots, home = setup("node-ids")
    receiver.clear()
    script = textwrap.dedent(f"""
        const {{ Deck, telemetryEnabled }} = require({NODE_PKG!r});
        (async () => {{
          const deck = await Deck.discover({{ roots: [{roots!r}], traceId: {TRACE_ID!r},
                                              otlpEndpoint: {receiver.endpoint!r} }});
          await deck.activate('alpha', {{ traceId: {UUID!r} }});
          const enabled = telemetryEnabled();
          await deck.close();
          console.log(JSON.stringify({{ enabled }}));
          process.exit(0);
        }})().catch((e) => {{ console.error(e); process.exit(1); }});
    """)
    out = run(["node", "-e", script], clean_env(home), base)
    if out is None:
        return
    check(json.loads(out.strip().splitlines()[-1])["enabled"], "telemetryEnabled() in node")
    discover = [s for s in spans_named(receiver, "discover")
                if "skilldeck.discovery.skills" in attrs(s)]
    if check(len(discover) == 1, f"one discover span from node: {len(discover)}"):
        d = discover[0]
        check(hexid(d.trace_id) == TRACE_ID, f"node discover's trace id {hexid(d.trace_id)}")
        named = attrs(d)["skilldeck.discovery.skills"]
        check("alpha" in named and "beta" in named, f"node discover names the skills: {named!r}")
    calls = root_call(receiver, "activate", "node")
    check([hexid(s.trace_id) for s in calls] == [UUID_HEX],
          f"node activate under the UUID's trace id: {[hexid(s.trace_id) for s in calls]}")


def main():
    receiver = Receiver()
    try:
        for what, part in [
            ("python: a caller's trace id on the exported discovery span naming the skills",
             part_python_trace_ids),
            ("python: nothing exported and no exporter thread without an endpoint",
             part_python_off),
            ("python: deck.close() flushes", part_python_close),
        ]:
            n0 = len(failures)
            part(receiver)
            report(what, n0)
        if NODE_PKG:
            n0 = len(failures)
            part_node(receiver)
            report("node: a caller's trace id on the exported discovery span", n0)
        else:
            print("SKIP: node (no built addon given)")
    finally:
        receiver.close()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
