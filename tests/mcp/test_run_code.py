"""`run_code` and approvals over MCP, driven by the official Python SDK.

`skilldeck serve --exec --code` offers `run_code`: the code runs in the
sandbox under the same policy as skill scripts, in a work folder per MCP
session that keeps its files between calls; files written under
`outputs/` come back as embedded resources with MIME types. Without
`--code` the tool is not offered. With `--approval ask` the server asks
through elicitation: a declining callback means the code never runs (the
work folder proves it), an accepting one runs it, and a client without the
elicitation capability is refused.

Elicitation is a server-to-client request, which protocol 2026-07-28
forbids: the approval tests speak 2025-11-25 (`legacy`).
"""

from __future__ import annotations

import base64
import unittest
from pathlib import Path
from typing import Any

import mcp_types as types

from common import Sandbox, client_for, new_tmp, text_of, write_skill


def _skills() -> Path:
    root = new_tmp("code-skills-")
    write_skill(
        root,
        "tables",
        "name: tables\ndescription: Table helpers. Use when a table needs work.\n",
        "Read data.csv from $SKILLDECK_SKILL_DIR.\n",
    )
    (root / "tables" / "data.csv").write_text("a,b\n1,2\n3,4\n")
    return root


def _resources(result: types.CallToolResult) -> list[Any]:
    return [c.resource for c in result.content if isinstance(c, types.EmbeddedResource)]


class RunCodeTests(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.sandbox = Sandbox()
        cls.root = _skills()

    def params(self, *extra: str) -> Any:
        return self.sandbox.stdio_params([self.root], ["--exec", "--code", *extra])

    async def call(self, client: Any, code: str, **kw: Any) -> types.CallToolResult:
        return await client.call_tool("run_code", {"language": "python", "code": code, **kw})

    async def test_run_code_computes_and_returns_an_outputs_file_as_a_resource(self) -> None:
        async with client_for(self.params(), "legacy", errlog=self.sandbox.log) as client:
            result = await self.call(
                client,
                "print(sum(range(10)))\n"
                "open('outputs/result.csv','w').write('n,total\\n10,45\\n')\n"
                "open('outputs/raw.bin','wb').write(bytes([0,1,2,255]))\n",
            )
            self.assertFalse(result.is_error, text_of(result))
            self.assertEqual(text_of(result).splitlines()[0], "45")
            files = {r.uri.rsplit("/", 1)[-1]: r for r in _resources(result)}
            self.assertEqual(set(files), {"result.csv", "raw.bin"})
            self.assertEqual(files["result.csv"].mime_type, "text/csv")
            self.assertEqual(files["result.csv"].text, "n,total\n10,45\n")
            self.assertIsInstance(files["raw.bin"], types.BlobResourceContents)
            self.assertEqual(base64.b64decode(files["raw.bin"].blob), bytes([0, 1, 2, 255]))

    async def test_a_second_call_sees_the_first_calls_file(self) -> None:
        async with client_for(self.params(), "legacy", errlog=self.sandbox.log) as client:
            first = await self.call(client, "open('state.txt','w').write('from call one')")
            self.assertFalse(first.is_error, text_of(first))
            second = await self.call(client, "print(open('state.txt').read())")
            self.assertFalse(second.is_error, text_of(second))
            self.assertEqual(text_of(second).strip(), "from call one")
        # Another session has its own folder.
        async with client_for(self.params(), "legacy", errlog=self.sandbox.log) as client:
            other = await self.call(client, "import os; print(os.path.exists('state.txt'))")
            self.assertEqual(text_of(other).strip(), "False")

    async def test_a_skills_folder_is_mounted_read_only(self) -> None:
        async with client_for(self.params(), "legacy", errlog=self.sandbox.log) as client:
            result = await self.call(
                client,
                "import os\n"
                "d = os.environ['SKILLDECK_SKILL_DIR']\n"
                "print(open(os.path.join(d, 'data.csv')).read().count('\\n'))\n"
                "try:\n"
                "    open(os.path.join(d, 'new.txt'), 'w')\n"
                "    print('wrote')\n"
                "except OSError:\n"
                "    print('read-only')\n",
                skill="tables",
            )
            self.assertFalse(result.is_error, text_of(result))
            lines = text_of(result).splitlines()
            self.assertEqual(lines[:2], ["3", "read-only"], lines)
            # The attempt is counted and told (profile native), or the
            # profile does not count writes (bwrap): no other line.
            for extra in [line for line in lines[2:] if line.strip()]:
                self.assertIn("[sandbox refused:", extra)
                self.assertIn("write outside", extra)
                self.assertIn("new.txt", extra)
        self.assertFalse((self.root / "tables" / "new.txt").exists())

    async def test_network_writes_outside_and_caps_are_refused_as_for_scripts(self) -> None:
        outside = new_tmp("outside-") / "escaped.txt"
        async with client_for(self.params(), "legacy", errlog=self.sandbox.log) as client:
            net = await self.call(
                client,
                "import socket\n"
                "try:\n"
                "    socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
                "    print('connected')\n"
                "except OSError:\n"
                "    print('no network')\n",
            )
            # The first line is the code's; the server may add its count of
            # what the sandbox refused after it.
            self.assertEqual(text_of(net).splitlines()[0], "no network")
            write = await self.call(
                client,
                f"try:\n    open({str(outside)!r}, 'w').write('x')\n    print('wrote')\n"
                "except OSError:\n    print('refused')\n",
            )
            self.assertEqual(text_of(write).splitlines()[0], "refused")
            self.assertFalse(outside.exists())
            slow = await self.call(client, "while True: pass", timeout=1)
            self.assertTrue(slow.is_error)
            self.assertIn("timed out", text_of(slow))
            failed = await self.call(client, "raise SystemExit(3)")
            self.assertTrue(failed.is_error)
            self.assertIn("exit code 3", text_of(failed))

    async def test_without_the_setting_run_code_is_not_offered(self) -> None:
        params = self.sandbox.stdio_params([self.root], ["--exec"])
        async with client_for(params, "legacy", errlog=self.sandbox.log) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            self.assertNotIn("run_code", names)
            self.assertIn("run_skill_script", names)
        async with client_for(self.params(), "legacy", errlog=self.sandbox.log) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            self.assertIn("run_code", tools)
            self.assertIn("python", tools["run_code"].input_schema["properties"]["language"]["enum"])


class ApprovalTests(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.sandbox = Sandbox()
        cls.root = _skills()

    def params(self) -> Any:
        return self.sandbox.stdio_params([self.root], ["--exec", "--code", "--approval", "ask"])

    async def test_a_declining_user_means_the_code_never_runs_and_an_accepting_one_runs_it(self) -> None:
        asked: list[str] = []
        answer = {"action": "decline"}

        async def elicit(context: Any, params: Any) -> types.ElicitResult:
            asked.append(params.message)
            return types.ElicitResult(action=answer["action"])

        marker = "open('ran.marker','w').write('x'); print('ran')"
        check = "import os; print(os.path.exists('ran.marker'))"
        async with client_for(self.params(), "legacy", errlog=self.sandbox.log, elicitation_callback=elicit) as client:
            declined = await client.call_tool("run_code", {"language": "python", "code": marker})
            self.assertTrue(declined.is_error)
            self.assertIn("declined", text_of(declined))
            self.assertEqual(len(asked), 1)
            self.assertIn("ran.marker", asked[0], "the user sees the code")
            answer["action"] = "accept"
            looked = await client.call_tool("run_code", {"language": "python", "code": check})
            self.assertFalse(looked.is_error, text_of(looked))
            self.assertEqual(text_of(looked).strip(), "False", "the declined code ran")
            # The declined code is not asked about again in this session.
            again = await client.call_tool("run_code", {"language": "python", "code": marker})
            self.assertTrue(again.is_error)
            self.assertEqual(len(asked), 2)
            # New code, accepted: it runs, and the same code is not asked again.
            accepted = await client.call_tool(
                "run_code", {"language": "python", "code": marker + " # accepted"}
            )
            self.assertFalse(accepted.is_error, text_of(accepted))
            self.assertEqual(text_of(accepted).strip(), "ran")
            self.assertEqual(len(asked), 3)
            looked = await client.call_tool("run_code", {"language": "python", "code": check})
            self.assertEqual(text_of(looked).strip(), "True")
            self.assertEqual(len(asked), 3, "accepted code is not asked about twice")

    async def test_a_client_without_elicitation_is_refused(self) -> None:
        async with client_for(self.params(), "legacy", errlog=self.sandbox.log) as client:
            result = await client.call_tool(
                "run_code", {"language": "python", "code": "print('should not run')"}
            )
            self.assertTrue(result.is_error)
            text = text_of(result)
            self.assertIn("cannot be asked", text)
            self.assertIn("elicitation", text)
            self.assertNotIn("should not run", text.replace("'should not run'", ""))


if __name__ == "__main__":
    unittest.main()
