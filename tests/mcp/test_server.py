"""The official Python MCP SDK (mcp 2.3.0) against `skilldeck serve`.

Every test runs four times: over stdio and streamable HTTP, each in the SDK's
`legacy` mode (the 2025-11-25 `initialize` handshake) and `auto` mode (which
probes `server/discover` and must land on protocol 2026-07-28).

    SKILLDECK_BIN=target/debug/skilldeck python -m unittest tests/mcp/test_server.py
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import unittest
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import anyio
import mcp_types as types
from mcp.client.subscriptions import ToolsListChanged

from common import (
    ALL_SKILLS,
    BINARY_ASSET,
    FORMS_MD,
    INVALID_PARAMS,
    MODEL_INVOCABLE,
    RESOURCE_NOT_FOUND,
    SKILLS_EXT,
    USER_INVOCABLE,
    HttpServer,
    Sandbox,
    client_for,
    content_bytes,
    conversation_meta,
    expect_error,
    first_leaf,
    frontmatter_of,
    make_many_skills,
    make_skills,
    request,
    sha256_digest,
    text_of,
)

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


class ServerTests:
    """Mixed into one unittest class per transport and mode (see the bottom)."""

    transport: str
    mode: str
    sandbox: Sandbox
    root: Path
    http: HttpServer | None

    @classmethod
    def setUpClass(cls) -> None:
        cls.sandbox = Sandbox()
        cls.root = make_skills(cls.sandbox.dir / "skills")
        cls.http = HttpServer(cls.sandbox, [cls.root]) if cls.transport == "http" else None

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.http is not None:
            cls.http.stop()

    # -- helpers -----------------------------------------------------------

    @contextlib.asynccontextmanager
    async def connect(self, roots: list[Path] | None = None, **kw: Any) -> AsyncIterator[Any]:
        """A connected client: to the class's server, or to a new server over
        `roots` (stopped afterwards)."""
        server: HttpServer | None = None
        if self.transport == "stdio":
            target: Any = self.sandbox.stdio_params(roots or [self.root])
        elif roots is None:
            assert self.http is not None
            target = self.http.url
        else:
            server = HttpServer(self.sandbox, roots)
            target = server.url
        try:
            async with client_for(target, self.mode, errlog=self.sandbox.log, **kw) as client:
                expected = MODERN if self.mode == "auto" else LEGACY
                assert client.protocol_version == expected, (
                    f"negotiated {client.protocol_version}, expected {expected}"
                )
                yield client
        except BaseExceptionGroup as group:
            # The SDK's task groups wrap a failed assertion; report the assertion.
            raise first_leaf(group) from None
        finally:
            if server is not None:
                server.stop()

    def meta(self) -> dict[str, Any] | None:
        """Per-conversation activation tracking. 2026-07-28 clients have no
        session (over HTTP every request is on its own), so they name their
        conversation in `_meta`; legacy clients rely on the MCP session."""
        return conversation_meta() if self.mode == "auto" else None

    def assert_tool_error(self, result: types.CallToolResult, *fragments: str) -> str:
        text = text_of(result)
        self.assertTrue(result.is_error, f"expected isError, got {result!r}")
        for f in fragments:
            self.assertIn(f.lower(), text.lower())
        return text

    def assert_suggestion(self, text: str, name: str) -> None:
        """One clean "did you mean 'name'?" in an unknown-skill message."""
        self.assertIn(f"did you mean '{name}'?", text)
        self.assertEqual(text.lower().count("did you mean"), 1, f"garbled suggestion: {text!r}")

    async def read_bytes(self, client: Any, uri: str) -> tuple[bytes, Any]:
        result = await client.read_resource(uri)
        self.assertEqual(len(result.contents), 1, uri)
        contents = result.contents[0]
        self.assertEqual(contents.uri, uri)
        return content_bytes(contents), contents

    # -- handshake ---------------------------------------------------------

    async def test_handshake_and_capabilities(self) -> None:
        async with self.connect() as c:
            self.assertIsNotNone(c.server_info)
            self.assertEqual(c.server_info.name, "skilldeck")
            caps = c.server_capabilities
            self.assertTrue(caps.tools is not None and caps.tools.list_changed)
            self.assertTrue(caps.prompts is not None and caps.prompts.list_changed)
            self.assertTrue(caps.resources is not None and caps.resources.list_changed)
            dumped = caps.model_dump(by_alias=True, exclude_none=True)
            self.assertEqual(dumped.get("extensions", {}).get(SKILLS_EXT), {"directoryRead": True}, dumped)
            self.assertTrue(c.instructions)

    async def test_server_discover(self) -> None:
        if self.mode != "auto":
            self.skipTest("server/discover is the 2026-07-28 handshake")
        async with self.connect() as c:
            found = c.session.discover_result
            self.assertIsNotNone(found)
            self.assertIn(MODERN, found.supported_versions)
            # And a raw server/discover, as a client of this revision sends it.
            raw = await request(c, "server/discover")
            self.assertIn(MODERN, raw["supportedVersions"])
            ext = raw["capabilities"]["extensions"][SKILLS_EXT]
            self.assertIs(ext["directoryRead"], True)
            self.assertIn("tools", raw["capabilities"])

    # -- tools -------------------------------------------------------------

    async def test_list_tools(self) -> None:
        async with self.connect() as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            self.assertEqual(set(tools), {"activate_skill", "read_skill_resource", "search_skills"})
            activate = tools["activate_skill"]
            props = activate.input_schema["properties"]
            self.assertEqual(set(props["name"]["enum"]), MODEL_INVOCABLE)
            self.assertEqual(activate.input_schema["required"], ["name"])
            self.assertIn("arguments", props)
            desc = activate.description or ""
            for name in MODEL_INVOCABLE:
                self.assertIn(name, desc)
                fm = frontmatter_of(self.root / name / "SKILL.md")
                self.assertIn(fm["description"], desc)
            # deploy is user-only: neither a tool name nor in the catalog.
            self.assertNotIn("Deploy the service", desc)
            self.assertEqual(set(tools["read_skill_resource"].input_schema["required"]), {"name", "path"})
            self.assertEqual(tools["search_skills"].input_schema["required"], ["query"])

    async def test_activate_then_notice(self) -> None:
        async with self.connect() as c:
            meta = self.meta()
            first = await c.call_tool("activate_skill", {"name": "pdf-tools", "arguments": "report.pdf"}, meta=meta)
            self.assertFalse(first.is_error)
            body = text_of(first)
            self.assertTrue(body.lstrip().startswith('<skill_content name="pdf-tools"'), body[:200])
            self.assertIn("</skill_content>", body)
            self.assertIn("Process the file: report.pdf", body)
            self.assertNotIn("$ARGUMENTS", body)
            # The file list names the reference.
            self.assertIn("references/FORMS.md", body)

            again = await c.call_tool("activate_skill", {"name": "pdf-tools", "arguments": "report.pdf"}, meta=meta)
            self.assertFalse(again.is_error)
            notice = text_of(again)
            self.assertIn("already", notice.lower())
            self.assertIn("pdf-tools", notice)
            self.assertNotIn("Process the file", notice)
            self.assertLess(len(notice), len(body))

            # Another skill in the same conversation is still delivered whole.
            other = await c.call_tool("activate_skill", {"name": "commit-message", "arguments": "ABC-1 fix it"}, meta=meta)
            self.assertIn("Ticket and summary: ABC-1 fix it", text_of(other))

        # A new session (or conversation) gets the instructions again.
        async with self.connect() as c:
            fresh = await c.call_tool("activate_skill", {"name": "pdf-tools"}, meta=self.meta())
            self.assertIn('<skill_content name="pdf-tools"', text_of(fresh))
            self.assertIn("Process the file:", text_of(fresh))

    async def test_activate_errors(self) -> None:
        async with self.connect() as c:
            unknown = await c.call_tool("activate_skill", {"name": "pdf-tool"}, meta=self.meta())
            self.assert_suggestion(self.assert_tool_error(unknown, "pdf-tool"), "pdf-tools")
            user_only = await c.call_tool("activate_skill", {"name": "deploy"}, meta=self.meta())
            self.assert_tool_error(user_only, "deploy")
            no_name = await c.call_tool("activate_skill", {}, meta=self.meta())
            self.assert_tool_error(no_name, "name")
            wrong_type = await c.call_tool("activate_skill", {"name": 42}, meta=self.meta())
            self.assert_tool_error(wrong_type, "string")
            # The server still answers.
            ok = await c.call_tool("activate_skill", {"name": "csv-tools"}, meta=self.meta())
            self.assertFalse(ok.is_error)

    async def test_read_skill_resource(self) -> None:
        async with self.connect() as c:
            text = await c.call_tool("read_skill_resource", {"name": "pdf-tools", "path": "references/FORMS.md"})
            self.assertFalse(text.is_error, text_of(text))
            self.assertEqual(text_of(text), FORMS_MD)
            binary = await c.call_tool("read_skill_resource", {"name": "pdf-tools", "path": "assets/logo.png"})
            self.assertFalse(binary.is_error, text_of(binary))
            blobs = [
                b.resource
                for b in binary.content
                if isinstance(b, types.EmbeddedResource) and isinstance(b.resource, types.BlobResourceContents)
            ]
            self.assertEqual(len(blobs), 1, binary.content)
            self.assertEqual(content_bytes(blobs[0]), BINARY_ASSET)
            self.assertEqual(blobs[0].uri, "skill://pdf-tools/assets/logo.png")
            self.assertEqual(blobs[0].mime_type, "image/png")

    async def test_traversal_refused(self) -> None:
        attempts = [
            "../../etc/passwd",
            "../csv-tools/SKILL.md",
            "references/../../csv-tools/SKILL.md",
            "/etc/passwd",
            str(self.root / "csv-tools" / "SKILL.md"),
            "references/nested/../../../../etc/passwd",
            "..\\..\\etc\\passwd",
            "missing.md",
            "",
        ]
        async with self.connect() as c:
            for path in attempts:
                result = await c.call_tool("read_skill_resource", {"name": "pdf-tools", "path": path})
                text = self.assert_tool_error(result)
                self.assertNotIn("root:", text, path)
                self.assertNotIn("Clean and summarise", text, path)
            # Unknown skill: a suggestion.
            unknown = await c.call_tool("read_skill_resource", {"name": "csv-tool", "path": "SKILL.md"})
            self.assert_suggestion(self.assert_tool_error(unknown), "csv-tools")
            # The same through resources/read.
            for uri in [
                "skill://pdf-tools/../csv-tools/SKILL.md",
                "skill://pdf-tools/%2e%2e/csv-tools/SKILL.md",
                "skill://pdf-tools/%2E%2E/%2E%2E/etc/passwd",
                "skill://pdf-tools/references/%2F%2E%2E%2F%2E%2E%2Fcsv-tools%2FSKILL.md",
                "skill://pdf-tools//etc/passwd",
            ]:
                try:
                    result = await c.read_resource(uri)
                except Exception as e:  # an MCPError is the expected outcome
                    self.assertIn(getattr(e, "code", None), (INVALID_PARAMS, RESOURCE_NOT_FOUND), f"{uri}: {e!r}")
                else:
                    self.fail(f"{uri} was served: {result!r}")
            # Still serving.
            ok = await c.call_tool("read_skill_resource", {"name": "pdf-tools", "path": "scripts/extract.py"})
            self.assertEqual(text_of(ok), "print('extract')\n")

    async def test_search(self) -> None:
        async with self.connect() as c:
            result = await c.call_tool("search_skills", {"query": "PDF tables", "limit": 3})
            self.assertFalse(result.is_error)
            hits = result.structured_content["results"]
            self.assertGreaterEqual(len(hits), 1)
            self.assertEqual(hits[0]["name"], "pdf-tools")
            self.assertIn("pdf-tools", text_of(result))
            bad = await c.call_tool("search_skills", {"query": "pdf", "limit": 0})
            self.assert_tool_error(bad, "limit")

    async def test_unknown_tool(self) -> None:
        async with self.connect() as c:
            try:
                result = await c.call_tool("no_such_tool", {})
            except Exception as e:
                self.assertEqual(getattr(e, "code", None), INVALID_PARAMS, repr(e))
            else:
                self.assertTrue(result.is_error, result)

    # -- prompts -----------------------------------------------------------

    async def test_prompts(self) -> None:
        async with self.connect() as c:
            listed = await c.list_prompts()
            self.assertIsNone(listed.next_cursor)
            prompts = {p.name: p for p in listed.prompts}
            self.assertEqual(set(prompts), USER_INVOCABLE)
            for p in prompts.values():
                self.assertEqual([a.name for a in p.arguments or []], ["arguments"], p)
                self.assertFalse(p.arguments[0].required)
            self.assertEqual(prompts["commit-message"].arguments[0].description, "[ticket-id] [summary]")
            self.assertEqual(
                prompts["csv-tools"].description,
                frontmatter_of(self.root / "csv-tools" / "SKILL.md")["description"],
            )

            got = await c.get_prompt("commit-message", {"arguments": "ABC-7 add tests"})
            self.assertEqual(len(got.messages), 1)
            self.assertEqual(got.messages[0].role, "user")
            text = got.messages[0].content.text
            self.assertIn("Ticket and summary: ABC-7 add tests", text)
            self.assertIn('<skill_content name="commit-message"', text)
            # A user-only skill is a prompt; the user may run it repeatedly.
            for _ in range(2):
                deploy = await c.get_prompt("deploy", {"arguments": "v2"})
                self.assertIn("Deploy v2 now.", deploy.messages[0].content.text)
            no_args = await c.get_prompt("csv-tools")
            self.assertIn("Read the CSV", no_args.messages[0].content.text)

            await expect_error(c.get_prompt("internal-helper"), INVALID_PARAMS, "user-invocable")
            e = await expect_error(c.get_prompt("csv-tool"), INVALID_PARAMS)
            self.assert_suggestion(e.error.message, "csv-tools")
            await expect_error(c.get_prompt("csv-tools", {"bogus": "x"}), INVALID_PARAMS, "bogus")

    # -- resources ---------------------------------------------------------

    async def test_resources_list_and_read(self) -> None:
        async with self.connect() as c:
            resources: list[types.Resource] = []
            cursor = None
            pages = 0
            while True:
                page = await c.list_resources(cursor=cursor)
                resources += page.resources
                pages += 1
                cursor = page.next_cursor
                if cursor is None:
                    break
                self.assertLess(pages, 50, "resources/list does not end")
            uris = {r.uri: r for r in resources}
            self.assertEqual(len(uris), len(resources), "a resource is listed twice")
            expected = {f"skill://{n}/SKILL.md" for n in ALL_SKILLS} | {
                "skill://pdf-tools/references/FORMS.md",
                "skill://pdf-tools/references/nested/deep.txt",
                "skill://pdf-tools/scripts/extract.py",
                "skill://pdf-tools/assets/logo.png",
                "skill://csv-tools/data/latin1.csv",
                "skill://csv-tools/data/bom.csv",
                "skill://csv-tools/data/my%20file.csv",
            }
            self.assertEqual(set(uris), expected)
            skill_md = uris["skill://pdf-tools/SKILL.md"]
            self.assertEqual(skill_md.mime_type, "text/markdown")
            self.assertEqual(skill_md.size, (self.root / "pdf-tools" / "SKILL.md").stat().st_size)
            self.assertEqual(uris["skill://pdf-tools/assets/logo.png"].mime_type, "image/png")
            self.assertEqual(uris["skill://pdf-tools/assets/logo.png"].size, len(BINARY_ASSET))

            data, contents = await self.read_bytes(c, "skill://pdf-tools/SKILL.md")
            self.assertIsInstance(contents, types.TextResourceContents)
            self.assertEqual(contents.mime_type, "text/markdown")
            self.assertEqual(data, (self.root / "pdf-tools" / "SKILL.md").read_bytes())

            data, contents = await self.read_bytes(c, "skill://pdf-tools/assets/logo.png")
            self.assertIsInstance(contents, types.BlobResourceContents)
            self.assertEqual(contents.mime_type, "image/png")
            self.assertEqual(data, BINARY_ASSET)

            data, contents = await self.read_bytes(c, "skill://pdf-tools/references/FORMS.md")
            self.assertIsInstance(contents, types.TextResourceContents)
            self.assertEqual(data, FORMS_MD.encode("utf-8"))

            # Every listed file reads back byte for byte, and as its listed size.
            for uri, resource in uris.items():
                data, _ = await self.read_bytes(c, uri)
                rel = unquote(uri[len("skill://") :])
                self.assertEqual(data, (self.root / rel).read_bytes(), uri)
                self.assertEqual(resource.size, len(data), uri)

    async def test_resource_templates(self) -> None:
        async with self.connect() as c:
            templates = (await c.list_resource_templates()).resource_templates
            by_uri = {t.uri_template: t for t in templates}
            self.assertEqual(set(by_uri), {"skill://{name}/SKILL.md", "skill://{name}/{+path}"})
            self.assertEqual(by_uri["skill://{name}/SKILL.md"].mime_type, "text/markdown")

    async def test_resource_errors(self) -> None:
        # 2026-07-28 reports an unknown resource as -32602; 2025-11-25 as -32002.
        not_found = INVALID_PARAMS if self.mode == "auto" else RESOURCE_NOT_FOUND
        async with self.connect() as c:
            await expect_error(c.read_resource("skill://pdf-tools/no-such-file.md"), not_found, "no-such-file")
            await expect_error(c.read_resource("skill://no-such-skill/SKILL.md"), not_found)
            await expect_error(c.read_resource("skill://pdf-tools"), INVALID_PARAMS, "directory")
            await expect_error(c.read_resource("file:///etc/passwd"), INVALID_PARAMS)
            _, contents = await self.read_bytes(c, "skill://csv-tools/SKILL.md")
            self.assertIsInstance(contents, types.TextResourceContents)

    # -- the Skills extension -----------------------------------------------

    async def check_manifest(self, c: Any, entry: dict[str, Any], root: Path) -> None:
        """An entry's digests and sizes against the bytes resources/read
        returns, its file list against the folder, its frontmatter against
        the YAML on disk."""
        uri = entry["uri"]
        self.assertTrue(uri.startswith("skill://") and uri.endswith("/SKILL.md"), uri)
        name = uri[len("skill://") : -len("/SKILL.md")]
        folder = root / name
        self.assertEqual(entry["frontmatter"], frontmatter_of(folder / "SKILL.md"), name)
        files = entry["resources"]
        self.assertIsInstance(files, list, entry)
        on_disk = {
            f"skill://{name}/{quote(p.relative_to(folder).as_posix())}" for p in folder.rglob("*") if p.is_file()
        }
        self.assertEqual({f["uri"] for f in files}, on_disk, name)
        for f in files:
            self.assertRegex(f["digest"], r"^sha256:[0-9a-f]{64}$")
            data, _ = await self.read_bytes(c, f["uri"])
            self.assertEqual(f["size"], len(data), f["uri"])
            self.assertEqual(f["digest"], sha256_digest(data), f["uri"])
            self.assertEqual(data, (root / name / unquote(f["uri"][len(f"skill://{name}/") :])).read_bytes(), f["uri"])

    def check_result_type(self, result: dict[str, Any], cacheable: bool = False) -> None:
        """2026-07-28 results carry resultType "complete"; cacheable ones
        (skills/list, skills/get) ttlMs and cacheScope as well."""
        if self.mode == "auto":
            self.assertEqual(result.get("resultType"), "complete", result.keys())
            if cacheable:
                self.assertIn(result.get("cacheScope"), ("public", "private"), result.keys())
        if cacheable:
            self.assertIsInstance(result.get("ttlMs"), int, result.keys())

    async def test_skills_list_and_get(self) -> None:
        async with self.connect() as c:
            listed = await request(c, "skills/list")
            self.assertNotIn("nextCursor", listed)
            self.check_result_type(listed, cacheable=True)
            entries = {e["frontmatter"]["name"]: e for e in listed["skills"]}
            self.assertEqual(set(entries), ALL_SKILLS)
            pdf = entries["pdf-tools"]
            self.assertEqual(pdf["uri"], "skill://pdf-tools/SKILL.md")
            self.assertEqual(pdf["frontmatter"]["metadata"], {"author": "skilldeck-tests", "version": "1.2"})
            self.assertEqual(pdf["frontmatter"]["allowed-tools"], "Bash(python:*) Read")
            self.assertIs(entries["internal-helper"]["frontmatter"]["user-invocable"], False)
            self.assertIs(entries["deploy"]["frontmatter"]["disable-model-invocation"], True)
            self.assertEqual(entries["commit-message"]["frontmatter"]["argument-hint"], "[ticket-id] [summary]")
            for entry in entries.values():
                await self.check_manifest(c, entry, self.root)

            got = await request(c, "skills/get", {"uri": "skill://pdf-tools/SKILL.md"})
            self.assertEqual(got["skill"], pdf)
            self.check_result_type(got, cacheable=True)
            # Every served skill answers skills/get, listed or not.
            for name in ALL_SKILLS:
                one = await request(c, "skills/get", {"uri": f"skill://{name}/SKILL.md"})
                self.assertEqual(one["skill"], entries[name])

    async def test_skills_errors(self) -> None:
        async with self.connect() as c:
            await expect_error(request(c, "skills/get", {"uri": "skill://no-such-skill/SKILL.md"}), INVALID_PARAMS)
            e = await expect_error(request(c, "skills/get", {"uri": "skill://pdf-tool/SKILL.md"}), INVALID_PARAMS)
            self.assert_suggestion(e.error.message, "pdf-tools")
            await expect_error(
                request(c, "skills/get", {"uri": "skill://pdf-tools/references/FORMS.md"}), INVALID_PARAMS
            )
            await expect_error(request(c, "skills/list", {"cursor": "garbage"}), INVALID_PARAMS, "cursor")
            await expect_error(
                request(c, "resources/directory/read", {"uri": "skill://pdf-tools/SKILL.md"}), INVALID_PARAMS
            )
            await expect_error(
                request(c, "resources/directory/read", {"uri": "skill://pdf-tools/references/FORMS.md"}),
                INVALID_PARAMS,
            )
            await expect_error(request(c, "resources/directory/read", {"uri": "skill://nope"}), INVALID_PARAMS)
            await expect_error(
                request(c, "resources/directory/read", {"uri": "skill://pdf-tools/../csv-tools"}), INVALID_PARAMS
            )
            await expect_error(
                request(c, "resources/directory/read", {"uri": "skill://pdf-tools", "cursor": "garbage"}),
                INVALID_PARAMS,
            )
            # Still serving.
            self.assertEqual(len((await request(c, "skills/list"))["skills"]), len(ALL_SKILLS))

    async def test_directory_read(self) -> None:
        async with self.connect() as c:
            top = await request(c, "resources/directory/read", {"uri": "skill://pdf-tools"})
            self.assertNotIn("nextCursor", top)
            self.check_result_type(top)
            children = {r["uri"]: r for r in top["resources"]}
            self.assertEqual(
                set(children),
                {f"skill://pdf-tools/{c}" for c in ("SKILL.md", "assets", "references", "scripts", "templates")},
            )
            for d in ("assets", "references", "scripts", "templates"):
                self.assertEqual(children[f"skill://pdf-tools/{d}"]["mimeType"], "inode/directory")
                self.assertEqual(children[f"skill://pdf-tools/{d}"]["name"], d)
            skill_md = children["skill://pdf-tools/SKILL.md"]
            self.assertEqual(skill_md["mimeType"], "text/markdown")
            # The spec: a SKILL.md resource's name SHOULD be the skill's name.
            self.assertEqual(skill_md["name"], "pdf-tools")

            sub = await request(c, "resources/directory/read", {"uri": "skill://pdf-tools/references"})
            kids = {r["name"]: r for r in sub["resources"]}
            self.assertEqual(set(kids), {"FORMS.md", "nested"})
            self.assertEqual(kids["nested"]["mimeType"], "inode/directory")
            self.assertEqual(kids["FORMS.md"]["uri"], "skill://pdf-tools/references/FORMS.md")
            self.assertEqual(kids["FORMS.md"]["size"], len(FORMS_MD.encode("utf-8")))

            empty = await request(c, "resources/directory/read", {"uri": "skill://pdf-tools/templates"})
            self.assertEqual(empty["resources"], [])
            self.assertNotIn("nextCursor", empty)

            deep = await request(c, "resources/directory/read", {"uri": "skill://pdf-tools/references/nested"})
            self.assertEqual([r["uri"] for r in deep["resources"]], ["skill://pdf-tools/references/nested/deep.txt"])

            csv = await request(c, "resources/directory/read", {"uri": "skill://csv-tools"})
            self.assertEqual(
                {r["uri"] for r in csv["resources"]}, {"skill://csv-tools/SKILL.md", "skill://csv-tools/data"}
            )
            data = await request(c, "resources/directory/read", {"uri": "skill://csv-tools/data"})
            self.assertEqual(
                {r["uri"] for r in data["resources"]},
                {f"skill://csv-tools/data/{n}" for n in ("latin1.csv", "bom.csv", "my%20file.csv")},
            )
            one = await request(c, "resources/directory/read", {"uri": "skill://internal-helper"})
            self.assertEqual([r["uri"] for r in one["resources"]], ["skill://internal-helper/SKILL.md"])

    async def test_pagination(self) -> None:
        """More skills than one page (100): skills/list and resources/list
        hand out cursors until every skill was listed once."""
        root = make_many_skills(self.sandbox.dir / f"bulk-{self.id().rsplit('.', 1)[-1]}", 120)
        async with self.connect([root]) as c:
            names: list[str] = []
            cursor = None
            pages = []
            while True:
                page = await request(c, "skills/list", {"cursor": cursor} if cursor else {})
                pages.append(len(page["skills"]))
                names += [e["frontmatter"]["name"] for e in page["skills"]]
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
                self.assertLess(len(pages), 10)
            self.assertEqual(pages, [100, 20])
            self.assertEqual(sorted(names), sorted(f"bulk-{i:03d}" for i in range(120)))
            for entry in (await request(c, "skills/list"))["skills"][:3]:
                await self.check_manifest(c, entry, root)

            uris: list[str] = []
            cursor = None
            n = 0
            while True:
                page = await c.list_resources(cursor=cursor)
                uris += [r.uri for r in page.resources]
                cursor = page.next_cursor
                n += 1
                if cursor is None:
                    break
            self.assertEqual(n, 2)
            self.assertEqual(sorted(uris), sorted(f"skill://bulk-{i:03d}/SKILL.md" for i in range(120)))
            prompts = await c.list_prompts()
            self.assertEqual(len(prompts.prompts), 120)
            tools = (await c.list_tools()).tools
            self.assertEqual(len(tools[0].input_schema["properties"]["name"]["enum"]), 120)

    # -- hot reload --------------------------------------------------------

    def reload_root(self) -> Path:
        return make_skills(self.sandbox.dir / f"reload-{self.id().rsplit('.', 1)[-1]}")

    async def test_description_edit_notifies(self) -> None:
        root = self.reload_root()
        skill_md = root / "editable" / "SKILL.md"
        new_description = "A brand new description after the edit. Use in reload tests."
        if self.mode == "legacy":
            seen: list[Any] = []
            changed = anyio.Event()

            async def on_message(message: Any) -> None:
                seen.append(message)
                if isinstance(message, types.ToolListChangedNotification):
                    changed.set()

            async with self.connect([root], message_handler=on_message) as c:
                await c.list_tools()
                await asyncio.sleep(0.3)  # let the HTTP GET stream open
                skill_md.write_text(skill_md.read_text().replace("Original description of the editable skill.", "A brand new description after the edit."))
                with anyio.fail_after(10):
                    await changed.wait()
                await self.after_description_edit(c, new_description)
        else:
            async with self.connect([root]) as c:
                async with c.listen(tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True) as sub:
                    skill_md.write_text(skill_md.read_text().replace("Original description of the editable skill.", "A brand new description after the edit."))
                    events = []
                    with anyio.fail_after(10):
                        async for event in sub:
                            events.append(event)
                            if isinstance(event, ToolsListChanged):
                                break
                await self.after_description_edit(c, new_description)

    async def after_description_edit(self, c: Any, new_description: str) -> None:
        # A cursor of the old catalog is refused: the list changed.
        await expect_error(request(c, "skills/list", {"cursor": "0.1"}), INVALID_PARAMS, "cursor")
        tools = {t.name: t for t in (await c.list_tools()).tools}
        self.assertIn(new_description, tools["activate_skill"].description)
        self.assertNotIn("Original description of the editable skill", tools["activate_skill"].description)
        prompts = {p.name: p for p in (await c.list_prompts()).prompts}
        self.assertEqual(prompts["editable"].description, new_description)
        got = await request(c, "skills/get", {"uri": "skill://editable/SKILL.md"})
        self.assertEqual(got["skill"]["frontmatter"]["description"], new_description)

    async def test_body_edit_keeps_catalog(self) -> None:
        root = self.reload_root()
        skill_md = root / "editable" / "SKILL.md"
        tool_changes: list[float] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                tool_changes.append(time.monotonic())

        async with self.connect([root], message_handler=on_message) as c:
            meta = self.meta()
            before = await c.call_tool("activate_skill", {"name": "editable"}, meta=meta)
            self.assertIn("ORIGINAL BODY MARKER", text_of(before))
            tools_before = (await c.list_tools()).tools
            sub_cm = (
                c.listen(tools_list_changed=True, prompts_list_changed=True) if self.mode == "auto" else None
            )
            async with sub_cm or contextlib.nullcontext() as sub:
                await asyncio.sleep(0.3)
                skill_md.write_text(skill_md.read_text().replace("ORIGINAL BODY MARKER", "NEW BODY MARKER"))
                if sub is not None:
                    with anyio.move_on_after(1.5):
                        async for event in sub:
                            tool_changes.append(time.monotonic())
                            break
                else:
                    await asyncio.sleep(1.5)
            self.assertEqual(tool_changes, [], "a body edit must not send tools/list_changed")
            self.assertEqual(
                [t.model_dump() for t in (await c.list_tools()).tools], [t.model_dump() for t in tools_before]
            )
            # The same conversation is given the new instructions once.
            again = await c.call_tool("activate_skill", {"name": "editable"}, meta=meta)
            self.assertIn("NEW BODY MARKER", text_of(again))
        async with self.connect([root]) as c:
            fresh = await c.call_tool("activate_skill", {"name": "editable"}, meta=self.meta())
            self.assertIn("NEW BODY MARKER", text_of(fresh))
            self.assertNotIn("ORIGINAL BODY MARKER", text_of(fresh))
            data, _ = await self.read_bytes(c, "skill://editable/SKILL.md")
            self.assertIn(b"NEW BODY MARKER", data)

    async def test_broken_skill_is_withdrawn(self) -> None:
        """A skill whose SKILL.md becomes invalid leaves the catalog (with a
        list_changed), and is not served as if its last good version were
        current; fixing it brings it back."""
        root = self.reload_root()
        skill_md = root / "editable" / "SKILL.md"
        good = skill_md.read_text()
        async with self.connect([root]) as c:
            before = await c.call_tool("activate_skill", {"name": "editable"}, meta=self.meta())
            self.assertIn("ORIGINAL BODY MARKER", text_of(before))
            skill_md.write_text("---\nname: editable\ndescription: [unclosed\n---\nBROKEN BODY\n")
            names = await self.wait_for_names(c, lambda names: "editable" not in names)
            self.assertNotIn("editable", names)
            gone = await c.call_tool("activate_skill", {"name": "editable"}, meta=self.meta())
            text = self.assert_tool_error(gone, "editable")
            self.assertNotIn("ORIGINAL BODY MARKER", text)
            await expect_error(request(c, "skills/get", {"uri": "skill://editable/SKILL.md"}), INVALID_PARAMS)
            skill_md.write_text(good)
            await self.wait_for_names(c, lambda names: "editable" in names)
            back = await c.call_tool("activate_skill", {"name": "editable"}, meta=self.meta())
            self.assertIn("ORIGINAL BODY MARKER", text_of(back))

    async def wait_for_names(self, c: Any, done: Any, timeout: float = 10) -> set[str]:
        deadline = time.monotonic() + timeout
        while True:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            names = set(tools["activate_skill"].input_schema["properties"]["name"].get("enum", []))
            if done(names) or time.monotonic() > deadline:
                return names
            await asyncio.sleep(0.2)

    async def test_new_file_changes_resources_only(self) -> None:
        """A file added to a skill changes its manifest and the resource list,
        not the catalog: resources/list_changed, and no tools/list_changed."""
        root = self.reload_root()
        seen: list[str] = []
        resources_changed = anyio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                seen.append("tools")
            if isinstance(message, types.ResourceListChangedNotification):
                seen.append("resources")
                resources_changed.set()

        async with self.connect([root], message_handler=on_message) as c:
            await c.list_tools()
            before = (await request(c, "skills/get", {"uri": "skill://editable/SKILL.md"}))["skill"]
            if self.mode == "legacy":
                await asyncio.sleep(0.3)
                (root / "editable" / "NOTES.md").write_text("new notes\n")
                with anyio.fail_after(10):
                    await resources_changed.wait()
                await asyncio.sleep(1.0)
                self.assertNotIn("tools", seen)
            else:
                async with c.listen(tools_list_changed=True, resources_list_changed=True) as sub:
                    (root / "editable" / "NOTES.md").write_text("new notes\n")
                    events = []
                    with anyio.move_on_after(3):
                        async for event in sub:
                            events.append(type(event).__name__)
                self.assertIn("ResourcesListChanged", events)
                self.assertNotIn("ToolsListChanged", events)
            after = (await request(c, "skills/get", {"uri": "skill://editable/SKILL.md"}))["skill"]
            self.assertEqual(
                {r["uri"] for r in after["resources"]},
                {r["uri"] for r in before["resources"]} | {"skill://editable/NOTES.md"},
            )
            await self.check_manifest(c, after, root)


def _make(transport: str, mode: str) -> type:
    name = f"Test_{transport}_{mode}"
    cls = type(name, (ServerTests, unittest.IsolatedAsyncioTestCase), {"transport": transport, "mode": mode})
    cls.__module__ = __name__
    return cls


for _t in ("stdio", "http"):
    for _m in ("legacy", "auto"):
        globals()[f"Test_{_t}_{_m}"] = _make(_t, _m)

del _t, _m

if __name__ == "__main__":
    unittest.main(verbosity=2)
