"""skilldeck: Agent Skills for Python, on skilldeck's native host layer.

    from skilldeck import Deck
    deck = Deck.discover(roots=["./skills"])
    print(deck.catalog())                       # for the system prompt
    print(deck.activate("pdf-forms", "fill invoice.pdf").text)

Every native call releases the GIL; the ``a``-prefixed twins run it in a
worker thread, so they never block the event loop.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from . import _native
from ._errors import (
    InvalidArgumentsError,
    RegistryError,
    ResourceError,
    SkilldeckError,
    SkillInvocationError,
    SkillNotFoundError,
    SkillParsingError,
)
from ._native import (
    Activation,
    CacheStats,
    Diagnostic,
    OutputFile,
    Reload,
    Resource,
    RunResult,
    SearchHit,
    Skill,
)

__version__: str = _native.__version__

__all__ = [
    "Activation",
    "CacheStats",
    "Deck",
    "Diagnostic",
    "InvalidArgumentsError",
    "OutputFile",
    "RegistryError",
    "Reload",
    "Resource",
    "ResourceError",
    "RunResult",
    "SearchHit",
    "Skill",
    "SkillInvocationError",
    "SkillNotFoundError",
    "SkillParsingError",
    "SkillTool",
    "SkilldeckError",
    "ToolSpec",
    "avalidate",
    "flush_telemetry",
    "is_skill_content",
    "validate",
]

PathArg = Union[str, "os.PathLike[str]"]

ApproveCallback = Callable[[Dict[str, Any]], Optional[bool]]
"""``run_code``'s ``approve``: takes the request, returns ``True`` (run),
``False`` (decline) or ``None`` (no answer)."""

DEFAULT_CODE_CONVERSATION = "python"
"""The conversation of ``Deck.run_code`` calls that name none: one work
folder for the deck's own calls."""


def _paths(roots: Union[PathArg, Iterable[PathArg], None]) -> Optional[List[str]]:
    if roots is None:
        return None
    if isinstance(roots, (str, os.PathLike)):
        return [os.fspath(roots)]
    return [os.fspath(r) for r in roots]


def _opt_path(path: Optional[PathArg]) -> Optional[str]:
    return None if path is None else os.fspath(path)


@dataclass(frozen=True)
class ToolSpec:
    """One of the host's agent tools as data."""

    name: str
    title: str
    description: str
    input_schema: Dict[str, Any]
    read_only: bool


@dataclass(frozen=True)
class SkillTool:
    """A tool a skill declares (``tools:`` in its frontmatter)."""

    full_name: str
    """``{skill}__{tool}``: the name agents call it by."""
    skill: str
    name: str
    description: str
    input_schema: Dict[str, Any]
    """Its arguments' JSON schema."""
    run: Optional[str] = None
    """The script it runs; ``None`` when the host implements it (a handler
    registered with :meth:`Deck.register_tool_handler` answers it)."""

    @property
    def host_implemented(self) -> bool:
        """True when the skill names no script for it."""
        return self.run is None


class Deck:
    """The discovered skills and the host serving them: metadata in memory,
    bodies read on activation (and cached while ``SKILL.md`` is unchanged).
    Thread-safe; ``reload()`` swaps the whole deck at once."""

    __slots__ = ("_native",)

    def __init__(self, native: _native.Deck) -> None:
        self._native = native

    # -- discovery -----------------------------------------------------------

    @classmethod
    def discover(
        cls,
        roots: Union[PathArg, Iterable[PathArg], None] = None,
        config: Optional[PathArg] = None,
        cwd: Optional[PathArg] = None,
        *,
        trace_id: Optional[str] = None,
        otlp_endpoint: Optional[str] = None,
    ) -> "Deck":
        """Finds the skills. ``roots`` replace the default roots (project,
        user, bundled), as the command's ``--root`` does; ``config`` is a
        ``skilldeck.toml`` (default: the one the ``skilldeck`` command
        finds); ``cwd`` is where project roots are looked for.

        Telemetry (opt-in): with ``otlp_endpoint`` (an OTLP/HTTP base URL,
        e.g. ``http://localhost:4318`` or Langfuse's
        ``https://cloud.langfuse.com/api/public/otel``), else
        ``OTEL_EXPORTER_OTLP_ENDPOINT`` or the config's ``[telemetry]
        endpoint``, the host's spans are exported from then on (the first
        settings win for the process; flushed by ``close()``,
        ``flush_telemetry()`` and at exit). ``trace_id`` (every method
        takes one) puts the call's spans in that trace: a W3C trace id (32
        hex digits), a UUID (its 32 hex digits), or a ``traceparent``;
        another id is recorded as ``skilldeck.caller.trace_id`` in a new
        trace."""
        return cls(
            _native.Deck.discover(
                _paths(roots), _opt_path(config), _opt_path(cwd), trace_id, otlp_endpoint
            )
        )

    @classmethod
    async def adiscover(
        cls,
        roots: Union[PathArg, Iterable[PathArg], None] = None,
        config: Optional[PathArg] = None,
        cwd: Optional[PathArg] = None,
        *,
        trace_id: Optional[str] = None,
        otlp_endpoint: Optional[str] = None,
    ) -> "Deck":
        """``discover`` in a worker thread."""
        native = await asyncio.to_thread(
            _native.Deck.discover,
            _paths(roots),
            _opt_path(config),
            _opt_path(cwd),
            trace_id,
            otlp_endpoint,
        )
        return cls(native)

    @classmethod
    def from_registry(
        cls,
        url: str,
        agent: str,
        token: Optional[str] = None,
        *,
        token_file: Optional[PathArg] = None,
        config: Optional[PathArg] = None,
        cache: Optional[PathArg] = None,
        trace_id: Optional[str] = None,
        otlp_endpoint: Optional[str] = None,
    ) -> "Deck":
        """Serves one registry agent's skills, exactly its assignments, as
        ``skilldeck serve --registry URL --agent ID`` does: the agent's lock
        is fetched, each skill downloaded into the content-addressed cache
        (``cache``, default the user's cache folder), verified against its
        fingerprint and served with the agent's grants. ``reload()`` fetches
        the lock again and applies a new one. The token (scope
        ``agent:<id>``, or admin) is ``token``, else the first line of
        ``token_file``, else ``SKILLDECK_TOKEN``. Raises ``RegistryError``
        when the registry refuses or cannot be reached (and no lock saved
        by an earlier run can be served). ``trace_id`` and
        ``otlp_endpoint``: as ``discover``'s."""
        return cls(
            _native.Deck.from_registry(
                url,
                agent,
                token,
                _opt_path(token_file),
                _opt_path(config),
                _opt_path(cache),
                trace_id,
                otlp_endpoint,
            )
        )

    def reload(self, *, trace_id: Optional[str] = None) -> Reload:
        """Discovers again (a deck from ``from_registry`` first fetches the
        agent's lock again); when the catalog changed the new deck replaces
        the old one and cached activations are dropped."""
        return self._native.reload(trace_id)

    def close(self) -> None:
        """Exports the spans still queued (when telemetry is on), waiting
        for the collector: call it at the end of a short script. The deck
        stays usable; ``with Deck.discover(...) as deck:`` calls it."""
        flush_telemetry()

    def __enter__(self) -> "Deck":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def areload(self, *, trace_id: Optional[str] = None) -> Reload:
        """``reload`` in a worker thread."""
        return await asyncio.to_thread(self._native.reload, trace_id)

    # -- metadata ------------------------------------------------------------

    @property
    def skills(self) -> List[Skill]:
        """The served skills, in deck order (metadata only)."""
        return self._native.skills()

    @property
    def diagnostics(self) -> List[Diagnostic]:
        """What discovery reported (skipped folders, warnings)."""
        return self._native.diagnostics()

    @property
    def model_invocable(self) -> List[str]:
        """Names of the skills the model may activate."""
        return self._native.model_invocable()

    def __len__(self) -> int:
        return len(self._native)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._native

    def __iter__(self) -> Iterator[Skill]:
        return iter(self._native.skills())

    def __repr__(self) -> str:
        return repr(self._native)

    def get(self, name: str) -> Skill:
        """The served skill ``name``; ``SkillNotFoundError`` (with
        ``suggestions``) when there is none."""
        return self._native.get(name)

    def catalog(
        self,
        format: Optional[str] = None,
        budget_tokens: Optional[int] = None,
        query: Optional[str] = None,
        *,
        budget_chars: Optional[int] = None,
        encoding: Optional[str] = None,
        locations: bool = True,
        trace_id: Optional[str] = None,
    ) -> str:
        """The catalog for a system prompt: ``xml`` (the default, unless
        the config says otherwise), ``skills-ref``, ``markdown`` or
        ``json``; fitted in ``budget_tokens`` (or ``budget_chars``);
        ranked by relevance to ``query`` first."""
        return self._native.catalog(
            format, budget_tokens, budget_chars, query, encoding, locations, trace_id
        )

    def search(
        self,
        query: str,
        limit: int = 10,
        source: Union[str, Sequence[str], None] = None,
        pattern: Optional[str] = None,
        keywords: Optional[Sequence[str]] = None,
        *,
        trace_id: Optional[str] = None,
    ) -> List[SearchHit]:
        """Served skills matching ``query`` (BM25 over names and
        descriptions), best first; ``source`` keeps these scopes
        (``project``, ``user``, ...), ``pattern`` is a regular expression
        the name must match, ``keywords`` must all appear."""
        scopes = [source] if isinstance(source, str) else (None if source is None else list(source))
        words = None if keywords is None else list(keywords)
        return self._native.search(query, limit, scopes, pattern, words, trace_id)

    async def asearch(
        self,
        query: str,
        limit: int = 10,
        source: Union[str, Sequence[str], None] = None,
        pattern: Optional[str] = None,
        keywords: Optional[Sequence[str]] = None,
        *,
        trace_id: Optional[str] = None,
    ) -> List[SearchHit]:
        """``search`` in a worker thread."""
        return await asyncio.to_thread(
            functools.partial(
                self.search, query, limit, source, pattern, keywords, trace_id=trace_id
            )
        )

    # -- activation and files ------------------------------------------------

    def activate(
        self,
        name: str,
        arguments: str = "",
        conversation: Optional[str] = None,
        reload: bool = False,
        *,
        trace_id: Optional[str] = None,
    ) -> Activation:
        """The skill's instructions with ``arguments`` substituted
        (``$ARGUMENTS``, ``$0``, ``$name``, ``${SKILL_DIR}``).

        Without ``conversation`` the application asks: the instructions
        every time, from the cache while ``SKILL.md`` is unchanged. With a
        ``conversation`` id the model asks in that conversation: skills the
        model may not invoke are refused; the same arguments again answer a
        short "already active" notice (``already_active`` is True), other
        arguments the instructions; ``reload=True`` sends them again (the
        conversation was compacted)."""
        return self._native.activate(name, arguments, conversation, reload, trace_id)

    async def aactivate(
        self,
        name: str,
        arguments: str = "",
        conversation: Optional[str] = None,
        reload: bool = False,
        *,
        trace_id: Optional[str] = None,
    ) -> Activation:
        """``activate`` in a worker thread."""
        return await asyncio.to_thread(
            self._native.activate, name, arguments, conversation, reload, trace_id
        )

    def read(self, name: str, path: str, *, trace_id: Optional[str] = None) -> Resource:
        """The file ``path`` (relative to the skill folder) of skill
        ``name``; paths that leave the folder raise ``ResourceError``."""
        return self._native.read(name, path, trace_id)

    async def aread(self, name: str, path: str, *, trace_id: Optional[str] = None) -> Resource:
        """``read`` in a worker thread."""
        return await asyncio.to_thread(self._native.read, name, path, trace_id)

    # -- host ----------------------------------------------------------------

    def cache_stats(self) -> CacheStats:
        """The activation cache's counters and sizes."""
        return self._native.cache_stats()

    def clear_cache(self) -> None:
        """Empties the activation cache (conversations keep what they
        received)."""
        self._native.clear_cache()

    def invalidate(self, name: str) -> int:
        """Skill ``name`` changed in a way discovery cannot see: its cached
        activation is dropped and every conversation gets its instructions
        again on the next activation. Returns in how many it was active."""
        return self._native.invalidate(name)

    def forget(self, conversation: str, skill: Optional[str] = None) -> bool:
        """Forgets what ``conversation`` received (``skill``, or all of it):
        after the application compacted or cleared its context, the next
        activation delivers the instructions again. Keep skill content out
        of compaction instead where you can (``is_skill_content``)."""
        return self._native.forget(conversation, skill)

    def tool_specs(self) -> List[ToolSpec]:
        """The host's agent tools as data: ``activate_skill`` (the catalog
        in its description), ``read_skill_resource``, ``search_skills``."""
        return [
            ToolSpec(t.name, t.title, t.description, json.loads(t.input_schema_json), t.read_only)
            for t in self._native.tool_specs()
        ]

    @property
    def execution_enabled(self) -> bool:
        """True when the config's ``[exec] enabled`` offers skill code to
        models (``skilldeck.langchain`` adds skill tools only then)."""
        return self._native.execution_enabled

    def skill_tools(self) -> List[SkillTool]:
        """The tools the served skills declare, in deck order: the
        application's view (``call_tool`` may call every one)."""
        return [
            _skill_tool(t) for t in self._native.skill_tools()
        ]

    def model_skill_tools(self) -> List[SkillTool]:
        """The declared tools a model may be given, in deck order: those of
        the skills the host's model-access rule allows. A skill with
        ``disable-model-invocation: true`` or mode ``manual`` is
        user-invoked only: its tools are never here, and a model's call to
        one is refused (``SkillInvocationError``, ``kind``
        ``"not_model_invocable"``); the application still runs them with
        ``run`` and ``call_tool``."""
        return [
            _skill_tool(t) for t in self._native.model_skill_tools()
        ]

    def offerable_skill_tools(self) -> List[SkillTool]:
        """The declared tools this deck can give a model, in deck order: of
        the skills the model may use, the script tools while ``[exec]
        enabled`` is on and the host-implemented tools (declared without
        ``run``) that have a handler. ``create_tools`` offers these."""
        return [_skill_tool(t) for t in self._native.offerable_skill_tools()]

    def register_tool_handler(
        self, full_name: str, handler: Callable[[Dict[str, Any]], Any]
    ) -> None:
        """Answer the host-implemented tool ``full_name`` (``{skill}__{tool}``,
        declared without ``run``) with ``handler``: it is called with the
        arguments as a dict, only once they match the tool's schema, and
        returns the result (a ``str`` as is, anything else as JSON); an
        exception it raises is the tool's error. Until a handler is
        registered the tool is not offered, and ``diagnostics`` reports it
        (``tool-handler-missing``). Raises ``SkillInvocationError`` for a name
        no skill declares or a tool that runs a script."""
        self._native.register_tool_handler(full_name, handler)

    def remove_tool_handler(self, full_name: str) -> bool:
        """Stop answering ``full_name``; True when it had a handler."""
        return self._native.remove_tool_handler(full_name)

    # -- running skill code --------------------------------------------------

    def run(
        self,
        name: str,
        path: str,
        args: Optional[Sequence[str]] = None,
        stdin: Union[str, bytes, None] = None,
        timeout: Optional[float] = None,
        *,
        trace_id: Optional[str] = None,
    ) -> RunResult:
        """Runs the file ``path`` (under the skill's ``scripts/`` folder)
        of skill ``name`` in the sandbox, under the config's ``[exec]``
        policy (``timeout`` in seconds replaces ``[exec] timeout-secs`` for
        this run; it still waits for a slot under ``[exec] concurrency``,
        shared by every run of the deck). A non-zero exit, a signal, the
        timeout or a refusal raises ``SkillInvocationError`` (its ``kind``
        says which) with the host's message."""
        return self._native.run(
            name, path, None if args is None else list(args), stdin, timeout, trace_id
        )

    async def arun(
        self,
        name: str,
        path: str,
        args: Optional[Sequence[str]] = None,
        stdin: Union[str, bytes, None] = None,
        timeout: Optional[float] = None,
        *,
        trace_id: Optional[str] = None,
    ) -> RunResult:
        """``run`` in a worker thread."""
        return await asyncio.to_thread(
            functools.partial(self.run, name, path, args, stdin, timeout, trace_id=trace_id)
        )

    def call_tool(
        self,
        name: str,
        tool: Optional[str] = None,
        arguments: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        *,
        trace_id: Optional[str] = None,
    ) -> RunResult:
        """Calls a skill's tool: ``call_tool("skill", "tool", {...})`` or
        ``call_tool("skill__tool", arguments={...})``. The host checks
        ``arguments`` against the tool's schema first (nothing runs when
        they do not match: ``InvalidArgumentsError`` naming the field),
        then runs the tool's script with them as JSON on stdin; its
        ``structured`` result is stdout parsed as JSON."""
        full_name = name if tool is None else f"{name}__{tool}"
        text = json.dumps({} if arguments is None else arguments)
        return self._native.call_tool(full_name, text, timeout, trace_id)

    async def acall_tool(
        self,
        name: str,
        tool: Optional[str] = None,
        arguments: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        *,
        trace_id: Optional[str] = None,
    ) -> RunResult:
        """``call_tool`` in a worker thread."""
        return await asyncio.to_thread(
            functools.partial(self.call_tool, name, tool, arguments, timeout, trace_id=trace_id)
        )

    # -- running the model's code --------------------------------------------

    def run_code(
        self,
        code: str,
        language: str = "python",
        *,
        skill: Optional[str] = None,
        timeout: Optional[float] = None,
        conversation: str = DEFAULT_CODE_CONVERSATION,
        approve: Optional[ApproveCallback] = None,
        trace_id: Optional[str] = None,
    ) -> RunResult:
        """Runs ``code`` (``language``: one of ``code_languages``) as a
        model's ``run_code`` call in ``conversation``: in the sandbox, under
        the config's ``[exec]`` policy and caps, in the conversation's work
        folder (files written by one call are there for the next; a size
        quota, ``[exec] code-quota-bytes``; removed after ``[exec]
        code-idle-secs`` unused), with ``skill``'s folder mounted read-only
        (``$SKILLDECK_SKILL_DIR``) and its grants when named.

        Files the code writes under ``outputs/`` come back in the result's
        ``outputs`` (``OutputFile``: ``name``, ``mime_type``, ``data``
        bytes). A non-zero exit, the timeout or a refusal raises
        ``SkillInvocationError``.

        Approval follows ``[exec] approval`` (default ``"never"``); with
        ``approve``, a callable taking the request (a dict: ``tool``,
        ``skill``, ``message``, ``code``, ``language``, ``code_sha256``) and
        returning ``True`` (run), ``False`` (decline) or ``None`` (no
        answer), ``"never"`` becomes ``"ask"``. Under ``"ask"`` without a
        callback the call is refused; an exception in the callback refuses
        it too. A decision is kept for the conversation, bound to the
        code's sha256."""
        arguments: Dict[str, Any] = {"language": language, "code": code}
        if skill is not None:
            arguments["skill"] = skill
        if timeout is not None:
            arguments["timeout"] = timeout
        return self._native.run_code(json.dumps(arguments), conversation, approve, trace_id)

    async def arun_code(
        self,
        code: str,
        language: str = "python",
        *,
        skill: Optional[str] = None,
        timeout: Optional[float] = None,
        conversation: str = DEFAULT_CODE_CONVERSATION,
        approve: Optional[ApproveCallback] = None,
        trace_id: Optional[str] = None,
    ) -> RunResult:
        """``run_code`` in a worker thread."""
        return await asyncio.to_thread(
            functools.partial(
                self.run_code,
                code,
                language,
                skill=skill,
                timeout=timeout,
                conversation=conversation,
                approve=approve,
                trace_id=trace_id,
            )
        )

    @property
    def code_languages(self) -> List[str]:
        """The languages ``run_code`` offers here (their interpreter is on
        the sandbox PATH)."""
        return self._native.code_languages()

    def _run_code_tool(
        self,
        arguments: Dict[str, Any],
        conversation: str,
        approve: Optional[ApproveCallback],
        trace_id: Optional[str] = None,
    ) -> RunResult:
        return self._native.run_code(json.dumps(arguments), conversation, approve, trace_id)

    def _code_tool_spec(self) -> ToolSpec:
        t = self._native.code_tool_spec()
        return ToolSpec(t.name, t.title, t.description, json.loads(t.input_schema_json), t.read_only)

    def _call_execution_tool(
        self,
        full_name: str,
        arguments: Dict[str, Any],
        conversation: str,
        trace_id: Optional[str] = None,
    ) -> RunResult:
        return self._native.call_execution_tool(
            full_name, json.dumps(arguments), conversation, trace_id
        )

    async def _acall_execution_tool(
        self,
        full_name: str,
        arguments: Dict[str, Any],
        conversation: str,
        trace_id: Optional[str] = None,
    ) -> RunResult:
        return await asyncio.to_thread(
            self._call_execution_tool, full_name, arguments, conversation, trace_id
        )

    def _call_host_tool(
        self,
        tool: str,
        arguments: Dict[str, Any],
        conversation: str,
        approve: Optional[ApproveCallback] = None,
        trace_id: Optional[str] = None,
    ) -> str:
        return self._native.call_host_tool(
            tool, json.dumps(arguments), conversation, approve, trace_id
        )

    async def _acall_host_tool(
        self,
        tool: str,
        arguments: Dict[str, Any],
        conversation: str,
        approve: Optional[ApproveCallback] = None,
        trace_id: Optional[str] = None,
    ) -> str:
        return await asyncio.to_thread(
            self._call_host_tool, tool, arguments, conversation, approve, trace_id
        )


def _skill_tool(t: _native.SkillToolInfo) -> SkillTool:
    return SkillTool(
        t.full_name, t.skill, t.name, t.description, json.loads(t.input_schema_json), t.run
    )


def flush_telemetry() -> bool:
    """Exports the spans still queued, waiting for the collector (each
    export bounded by 5 s). False when no span is exported in this process
    (no endpoint was given); raises ``RuntimeError`` when the collector
    failed. Runs at exit by itself."""
    return _native.flush_telemetry()


# Short scripts must not lose their last spans: at exit the exporter
# flushes (bounded: 3 s) and stops. Nothing runs when none was started.
atexit.register(_native.shutdown_telemetry)


def is_skill_content(text: str) -> bool:
    """True when ``text`` is a skill activation (any of skilldeck's
    renderings) or an "already active" notice: a message to keep when the
    conversation is compacted (if it goes, the notice would point at
    nothing)."""
    return _native.is_skill_content(text)


def validate(path: PathArg, mode: str = "strict") -> List[Diagnostic]:
    """Validates the skill folder (or ``SKILL.md``) at ``path``: every
    problem with its code, severity, message, file, line and column; empty
    when valid. ``mode`` is ``strict`` (the specification) or ``lenient``
    (how hosts load skills)."""
    return _native.validate(os.fspath(path), mode)


async def avalidate(path: PathArg, mode: str = "strict") -> List[Diagnostic]:
    """``validate`` in a worker thread."""
    return await asyncio.to_thread(validate, path, mode)
