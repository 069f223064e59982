#!/usr/bin/env python3
"""The client the conformance suite runs for its `sep-2640-client-*`
scenarios (scripts/test-mcp-conformance.sh): `skilldeck serve --upstream
conf=URL` is the client under test; this script is its host, talking to it
on stdio as an agent's MCP client would.

    SKILLDECK_BIN=path/to/skilldeck gateway_conformance_client.py URL

The suite appends the URL of its scenario's server and names the scenario
in $MCP_CONFORMANCE_SCENARIO. The host lists the gateway's catalog (the
gateway lists the upstream's skills: nothing is fetched), and, unless the
scenario is about listing alone (`...-no-prefetch`), activates each
upstream skill, which makes the gateway fetch and verify it. It prints what
the gateway answered; a refused activation is the expected outcome of the
suite's tampered skills, not a failure of this script. Exits non-zero only
when the gateway could not be driven at all.
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    binary = os.environ["SKILLDECK_BIN"]
    with tempfile.TemporaryDirectory(prefix="gateway-conformance-") as tmp:
        root = os.path.join(tmp, "skills")
        os.mkdir(root)
        env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=os.path.join(tmp, "config"))
        server = subprocess.Popen(
            [binary, "serve", "--no-watch", "--root", root,
             "--upstream", f"conf={url}",
             "--upstream-cache", os.path.join(tmp, "cache")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        next_id = [0]

        def request(method, params):
            next_id[0] += 1
            server.stdin.write(json.dumps(
                {"jsonrpc": "2.0", "id": next_id[0], "method": method,
                 "params": params}) + "\n")
            server.stdin.flush()
            while True:
                line = server.stdout.readline()
                if not line:
                    raise SystemExit(f"the gateway exited during {method}")
                message = json.loads(line)
                if message.get("id") == next_id[0]:
                    return message

        try:
            init = request("initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "gateway-conformance-host", "version": "0"}})
            if "result" not in init:
                raise SystemExit(f"initialize failed: {init}")
            server.stdin.write(json.dumps(
                {"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
            server.stdin.flush()
            tools = request("tools/list", {})["result"]["tools"]
            activate = next(t for t in tools if t["name"] == "activate_skill")
            names = [n for n in activate["inputSchema"]["properties"]["name"].get("enum", [])
                     if n.startswith("conf/")]
            print(f"catalog: {names}")
            if scenario.endswith("no-prefetch"):
                return
            for name in names:
                result = request("tools/call", {"name": "activate_skill",
                                                "arguments": {"name": name}})
                print(f"activate {name}: {json.dumps(result)[:400]}")
        finally:
            server.stdin.close()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
