"""skilldeck skills as LangChain tools (needs ``langchain-core>=1.0``:
``pip install 'skilldeck[langchain]'``).

``create_tools(deck)`` gives one ``StructuredTool`` per skill the model may
activate (its name and description, one ``arguments`` input), or with
``style="activate"`` the host's pair ``activate_skill`` (the catalog in its
description, ``name`` an enum of the skills) + ``read_skill_resource``, and
``search_skills`` when the catalog cannot list every skill (its closing line
sends the model there). Above ``MAX_TOOLS_PER_REQUEST`` per-skill tools,
``create_tools`` warns and says to use ``style="activate"``.
Every tool works sync and async (``ainvoke`` runs the native call in a
worker thread), and every failure is raised as a ``ToolException`` with the
host's message (an unknown skill comes with "did you mean ...?"). The tools
handle it themselves (``handle_tool_error=True``): the model gets the
message as a ``ToolMessage`` with ``status="error"`` and can act on it.
LangGraph 1.x's ``ToolNode`` would otherwise re-raise it out of the graph
(its default handler only catches argument errors). Pass
``handle_errors=False`` to get the ``ToolException`` raised instead (for a
handler of your own).

Only skills the model may use get tools: the host's model-access rule
leaves out every skill with ``disable-model-invocation: true`` or mode
``manual`` (user-invoked only), its activation, its declared tools and its
scripts alike; the application still runs them with ``Deck.run`` and
``Deck.call_tool``.

When the config's ``[exec] enabled`` is on, each tool a skill the model may
use declares (``tools:`` in its frontmatter) is a tool too, under its full name
``{skill}__{tool}``, its ``args_schema`` the tool's JSON schema: the host
checks the arguments against it before anything runs (an invalid argument
is a ``ToolException`` naming the field) and runs the tool's script in the
sandbox; the tool returns its standard output. They are called as the MCP
server calls them, in the tools' conversation: with ``[exec] tools =
"on-activate"`` (the default) a skill's tools answer once the skill was
activated in that conversation (through its per-skill tool or
``activate_skill``); before, the ``ToolException`` says to activate it.

Activations are tracked per conversation: the same skill with the same
arguments again answers a short "already active" notice instead of the
whole instructions (other arguments get the instructions; the model can
ask again with ``"reload": true``). The conversation is the LangGraph /
LangChain thread the tool runs in (``thread_id`` in the run's
``configurable``), so one tool list shared by many threads keeps them
apart; a run without a ``thread_id`` uses the tool list's own id. Pass
``conversation=`` to use one fixed id for every call instead.
"""

from __future__ import annotations

import asyncio
import uuid
import warnings
from typing import Any, Awaitable, Callable, Dict, List, Literal, Optional, Type, TypeVar

from . import ApproveCallback, Deck, SkilldeckError, SkillTool

try:
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool, StructuredTool, ToolException
    from pydantic import BaseModel, Field, create_model
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "skilldeck.langchain needs langchain-core>=1.0: pip install 'skilldeck[langchain]'"
    ) from e

__all__ = ["create_tools", "ACTIVATE_TOOL", "READ_TOOL", "SEARCH_TOOL", "MAX_TOOLS_PER_REQUEST"]

ACTIVATE_TOOL = "activate_skill"
READ_TOOL = "read_skill_resource"
SEARCH_TOOL = "search_skills"

#: The most tools one chat request may carry (OpenAI's limit; others are
#: similar). ``style="per-skill"`` warns above it: use ``style="activate"``.
MAX_TOOLS_PER_REQUEST = 128

Style = Literal["per-skill", "activate"]
T = TypeVar("T")


def _guard(call: Callable[[], T]) -> T:
    """Runs ``call``; a skilldeck error becomes a ``ToolException`` (the
    model sees the message)."""
    try:
        return call()
    except SkilldeckError as e:
        raise ToolException(str(e)) from e
    except ValueError as e:  # an argument the host refused
        raise ToolException(str(e)) from e


async def _aguard(call: Callable[[], Awaitable[T]]) -> T:
    try:
        return await call()
    except SkilldeckError as e:
        raise ToolException(str(e)) from e
    except ValueError as e:
        raise ToolException(str(e)) from e


class _Conversation:
    """The conversation of a tool call: a fixed id, or the run's thread
    (``configurable.thread_id``) under the tool list's own id."""

    def __init__(self, fixed: Optional[str]) -> None:
        self.fixed = fixed
        self.base = f"langchain-{uuid.uuid4()}"

    def of(self, config: Optional[RunnableConfig]) -> str:
        if self.fixed is not None:
            return self.fixed
        configurable = (config or {}).get("configurable") or {}
        thread = configurable.get("thread_id")
        return self.base if thread is None else f"{self.base}/thread/{thread}"


def _arguments_model(deck: Deck) -> Type[BaseModel]:
    """The single ``arguments`` input, described in the host's words (the
    ``arguments`` property of its ``activate_skill`` schema)."""
    description = ""
    for spec in deck.tool_specs():
        if spec.name == ACTIVATE_TOOL:
            prop = spec.input_schema.get("properties", {}).get("arguments", {})
            description = str(prop.get("description", ""))
    model: Type[BaseModel] = create_model(
        "SkillArguments",
        arguments=(str, Field(default="", description=description)),
    )
    return model


def _skill_tool(
    deck: Deck,
    name: str,
    description: str,
    schema: Type[BaseModel],
    conversation: _Conversation,
    handle_errors: bool,
) -> StructuredTool:
    # A function per tool, with `name` bound here: each tool activates its
    # own skill (a lambda in the caller's loop would see the last name).
    # `config` is the run's: LangChain passes it to a parameter annotated
    # `RunnableConfig` (exactly that type), outside the tool's input schema.
    def run(arguments: str = "", *, config: RunnableConfig) -> str:
        conv = conversation.of(config)
        return _guard(lambda: deck.activate(name, arguments, conversation=conv).text)

    async def arun(arguments: str = "", *, config: RunnableConfig) -> str:
        conv = conversation.of(config)

        async def call() -> str:
            return (await deck.aactivate(name, arguments, conversation=conv)).text

        return await _aguard(call)

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=name,
        description=description,
        args_schema=schema,
        infer_schema=False,
        handle_tool_error=handle_errors,
    )


def _host_tool(
    deck: Deck,
    spec_name: str,
    conversation: _Conversation,
    approve: Optional[ApproveCallback],
    handle_errors: bool,
) -> StructuredTool:
    spec = next(s for s in deck.tool_specs() if s.name == spec_name)

    def run(*, config: RunnableConfig, **kwargs: Any) -> str:
        conv = conversation.of(config)
        return _guard(lambda: deck._call_host_tool(spec_name, kwargs, conv, approve))

    async def arun(*, config: RunnableConfig, **kwargs: Any) -> str:
        conv = conversation.of(config)
        return await _aguard(lambda: deck._acall_host_tool(spec_name, kwargs, conv, approve))

    schema: Dict[str, Any] = dict(spec.input_schema)
    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=spec.name,
        description=spec.description,
        args_schema=schema,
        infer_schema=False,
        handle_tool_error=handle_errors,
    )


def _declared_tool(
    deck: Deck,
    spec: SkillTool,
    conversation: _Conversation,
    approve: Optional[ApproveCallback],
    handle_errors: bool,
) -> StructuredTool:
    # `full_name` bound here, per tool (the closure-capture trap again).
    full_name = spec.full_name

    # One entry for every declared tool, script or handler: the host's,
    # under the same approval rule as run_code (asking `approve`).
    def run(*, config: RunnableConfig, **kwargs: Any) -> str:
        conv = conversation.of(config)
        return _guard(lambda: deck._call_host_tool(full_name, kwargs, conv, approve))

    async def arun(*, config: RunnableConfig, **kwargs: Any) -> str:
        conv = conversation.of(config)
        return await _aguard(lambda: deck._acall_host_tool(full_name, kwargs, conv, approve))

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=full_name,
        description=spec.description,
        args_schema=dict(spec.input_schema),
        infer_schema=False,
        handle_tool_error=handle_errors,
    )


def _code_tool(
    deck: Deck,
    conversation: _Conversation,
    approve: Optional[ApproveCallback],
    handle_errors: bool,
) -> StructuredTool:
    """``run_code``: the model's own code in the sandbox, in the thread's
    work folder; the text for the model, the ``outputs/`` files as the
    tool message's artifact (``OutputFile`` objects)."""
    spec = deck._code_tool_spec()

    def run(*, config: RunnableConfig, **kwargs: Any) -> Any:
        conv = conversation.of(config)
        result = _guard(lambda: deck._run_code_tool(kwargs, conv, approve))
        return result.text, list(result.outputs)

    async def arun(*, config: RunnableConfig, **kwargs: Any) -> Any:
        conv = conversation.of(config)

        async def call() -> Any:
            result = await asyncio.to_thread(deck._run_code_tool, kwargs, conv, approve)
            return result.text, list(result.outputs)

        return await _aguard(call)

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=spec.name,
        description=spec.description,
        args_schema=dict(spec.input_schema),
        infer_schema=False,
        response_format="content_and_artifact",
        handle_tool_error=handle_errors,
    )


def create_tools(
    deck: Deck,
    style: Style = "per-skill",
    *,
    conversation: Optional[str] = None,
    handle_errors: bool = True,
    code: bool = False,
    approve: Optional[ApproveCallback] = None,
) -> List[BaseTool]:
    """LangChain tools for ``deck``'s skills (see the module documentation).

    ``style="per-skill"``: one tool per skill the model may activate.
    ``style="activate"``: ``activate_skill`` + ``read_skill_resource``
    (+ ``search_skills`` when the catalog leaves skills out; none when no
    skill is served).
    Either way, the declared tools of the skills the model may use follow
    (``{skill}__{tool}``): those that run scripts while ``[exec] enabled``
    is on, and those the host implements once a handler is registered
    (``Deck.register_tool_handler``).
    ``code=True`` adds ``run_code`` (the model's own code in the sandbox,
    one work folder per thread; ``outputs/`` files as the tool message's
    artifact), when an interpreter is installed. ``approve`` (a callable
    taking the request dict, returning ``True``, ``False`` or ``None``)
    is asked before a declared skill tool or ``run_code`` call that the
    active skills' ``allowed-tools`` do not pre-approve (``[exec]
    approval``: ``never`` becomes ``ask`` with it; without it, ``ask``
    refuses such calls and says so).
    ``handle_errors=True`` (the default): a failure reaches the model as
    an error ``ToolMessage``; ``False``: it is raised as ``ToolException``."""
    conv = _Conversation(conversation)
    tools: List[BaseTool]
    if style == "per-skill":
        schema = _arguments_model(deck)
        usable = set(deck.model_invocable)  # the host's model-access rule
        tools = [
            _skill_tool(deck, s.name, s.description, schema, conv, handle_errors)
            for s in deck.skills
            if s.name in usable
        ]
    elif style == "activate":
        specs = {s.name: s for s in deck.tool_specs()}
        wanted = [ACTIVATE_TOOL, READ_TOOL]
        # When the catalog in activate_skill's description leaves skills
        # out, its closing line sends the model to search_skills: offer it.
        activate = specs.get(ACTIVATE_TOOL)
        if activate is not None and SEARCH_TOOL in activate.description:
            wanted.append(SEARCH_TOOL)
        tools = [
            _host_tool(deck, n, conv, approve, handle_errors) for n in wanted if n in specs
        ]
    else:
        raise ValueError(f"unknown style {style!r} (expected 'per-skill' or 'activate')")
    # The declared tools this deck can run: script tools with [exec] on,
    # host-implemented tools with a handler (the host's rule).
    tools.extend(
        _declared_tool(deck, t, conv, approve, handle_errors)
        for t in deck.offerable_skill_tools()
    )
    if code and deck.code_languages:
        tools.append(_code_tool(deck, conv, approve, handle_errors))
    if style == "per-skill" and len(tools) > MAX_TOOLS_PER_REQUEST:
        warnings.warn(
            f"create_tools: {len(tools)} tools, more than the {MAX_TOOLS_PER_REQUEST} one chat "
            "request may carry (OpenAI's limit); use create_tools(deck, style=\"activate\") "
            "for the catalog in one activate_skill tool (with search_skills when it cannot "
            "list every skill)",
            stacklevel=2,
        )
    return tools
