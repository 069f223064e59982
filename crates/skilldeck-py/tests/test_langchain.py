"""skilldeck.langchain: per-skill StructuredTools (each activates its own
skill), the host's activate/read pair, sync and async, ToolException on
failure, and a real agent loop with a fake chat model from langchain-core."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any, Dict, List, Sequence

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langchain_core.utils.function_calling import convert_to_openai_tool

from skilldeck import Deck
from skilldeck.langchain import create_tools
from conftest import write_skill


@pytest.fixture
def deck(skills_root: Path) -> Deck:
    write_skill(skills_root, "pdf-forms", "Fill PDF forms. Use when a PDF has fields.",
                body="PDF skill: fill $ARGUMENTS\n", files={"references/FORMS.md": "# Form fields\n"})
    write_skill(skills_root, "csv-clean", "Clean CSV files. Use for messy tables.",
                body="CSV skill: clean $ARGUMENTS\n")
    write_skill(skills_root, "git-log", "Summarise git history. Use for changelogs.",
                body="GIT skill: $ARGUMENTS\n")
    write_skill(skills_root, "user-only", "Only the user runs this.",
                frontmatter="disable-model-invocation: true\n")
    return Deck.discover(roots=[skills_root])


def test_per_skill_tools_each_activate_their_own_skill(deck: Deck) -> None:
    tools = create_tools(deck)
    by_name = {t.name: t for t in tools}
    # Only what the model may invoke.
    assert set(by_name) == {"pdf-forms", "csv-clean", "git-log"}
    assert by_name["pdf-forms"].description == "Fill PDF forms. Use when a PDF has fields."
    assert list(by_name["csv-clean"].args) == ["arguments"]
    # The closure-capture trap: built in a loop, each tool must still call
    # its own skill (not the last one).
    expected = {"pdf-forms": "PDF skill: fill x", "csv-clean": "CSV skill: clean x",
                "git-log": "GIT skill: x"}
    for name, tool in by_name.items():
        out = tool.invoke({"arguments": "x"})
        assert f'<skill_content name="{name}">' in out and expected[name] in out
        for other, text in expected.items():
            if other != name:
                assert text not in out


def test_per_skill_tools_work_async(deck: Deck) -> None:
    tools = {t.name: t for t in create_tools(deck)}

    async def main() -> List[str]:
        return list(await asyncio.gather(*(t.ainvoke({"arguments": "y"}) for t in tools.values())))

    outs = asyncio.run(main())
    assert any("PDF skill: fill y" in o for o in outs)
    assert any("CSV skill: clean y" in o for o in outs)


def test_second_activation_in_the_conversation_is_the_notice(deck: Deck) -> None:
    tool = {t.name: t for t in create_tools(deck, conversation="thread-1")}["git-log"]
    assert "GIT skill" in tool.invoke({"arguments": ""})
    assert "already active" in tool.invoke({"arguments": ""})
    # Another create_tools call is another conversation.
    fresh = {t.name: t for t in create_tools(deck)}["git-log"]
    assert "GIT skill" in fresh.invoke({"arguments": ""})


def test_one_tool_list_keeps_langgraph_threads_apart(deck: Deck) -> None:
    # Tools are built once and shared by every thread of an agent: each
    # thread (the run's configurable thread_id) is its own conversation.
    for style in ("per-skill", "activate"):
        tools = {t.name: t for t in create_tools(deck, style=style)}
        if style == "per-skill":
            tool, args = tools["git-log"], {"arguments": ""}
        else:
            tool, args = tools["activate_skill"], {"name": "git-log"}
        a = {"configurable": {"thread_id": "A"}}
        b = {"configurable": {"thread_id": "B"}}
        assert "GIT skill" in tool.invoke(args, config=a), style
        assert "already active" in tool.invoke(args, config=a), style
        # Thread B never saw it: the whole instructions, not "above".
        assert "GIT skill" in tool.invoke(args, config=b), style

        async def in_thread_c() -> str:
            return str(await tool.ainvoke(args, config={"configurable": {"thread_id": "C"}}))

        assert "GIT skill" in asyncio.run(in_thread_c()), style


def test_activate_style_offers_search_when_the_catalog_leaves_skills_out(
    skills_root: Path, tmp_path: Path
) -> None:
    for i in range(30):
        write_skill(skills_root, f"skill-{i:02}", f"Does task number {i} very thoroughly. Use when {i}.")
    config = tmp_path / "skilldeck.toml"
    config.write_text("[catalog]\nbudget-tokens = 200\n")
    small = Deck.discover(roots=[skills_root], config=config)
    names = {t.name for t in create_tools(small, style="activate")}
    assert names == {"activate_skill", "read_skill_resource", "search_skills"}
    search = {t.name: t for t in create_tools(small, style="activate")}["search_skills"]
    assert "skill-07" in search.invoke({"query": "task number 7"})
    # Everything listed: no search tool.
    whole = Deck.discover(roots=[skills_root])
    assert {t.name for t in create_tools(whole, style="activate")} == {
        "activate_skill",
        "read_skill_resource",
    }


def test_per_skill_style_warns_above_the_tool_limit(skills_root: Path) -> None:
    from skilldeck.langchain import MAX_TOOLS_PER_REQUEST

    for i in range(MAX_TOOLS_PER_REQUEST + 1):
        write_skill(skills_root, f"s-{i:03}", f"Skill {i}. Use when {i}.")
    deck = Deck.discover(roots=[skills_root])
    with pytest.warns(UserWarning, match=r'style="activate"'):
        tools = create_tools(deck)
    assert len(tools) == MAX_TOOLS_PER_REQUEST + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        create_tools(deck, style="activate")


def test_activate_style_is_the_hosts_pair(deck: Deck) -> None:
    tools = {t.name: t for t in create_tools(deck, style="activate", handle_errors=False)}
    assert set(tools) == {"activate_skill", "read_skill_resource"}
    activate = tools["activate_skill"]
    assert "Fill PDF forms" in activate.description  # the catalog
    schema = convert_to_openai_tool(activate)["function"]["parameters"]
    assert sorted(schema["properties"]["name"]["enum"]) == ["csv-clean", "git-log", "pdf-forms"]
    assert "PDF skill: fill a.pdf" in activate.invoke({"name": "pdf-forms", "arguments": "a.pdf"})
    read = tools["read_skill_resource"]
    assert read.invoke({"name": "pdf-forms", "path": "references/FORMS.md"}) == "# Form fields\n"
    with pytest.raises(ToolException, match="did you mean 'pdf-forms'"):
        activate.invoke({"name": "pdf-form"})
    with pytest.raises(ToolException, match="leads outside|not allowed"):
        read.invoke({"name": "pdf-forms", "path": "../csv-clean/SKILL.md"})
    with pytest.raises(ToolException, match="user-invoked only.*may not activate it"):
        activate.invoke({"name": "user-only"})


def test_activate_style_async_raises_tool_exceptions(deck: Deck) -> None:
    activate = {t.name: t for t in create_tools(deck, style="activate", handle_errors=False)}[
        "activate_skill"
    ]

    async def main() -> str:
        with pytest.raises(ToolException, match="unknown skill"):
            await activate.ainvoke({"name": "nope"})
        return str(await activate.ainvoke({"name": "csv-clean", "arguments": "t.csv"}))

    assert "CSV skill: clean t.csv" in asyncio.run(main())


def test_failures_reach_the_model_as_error_tool_messages_by_default(deck: Deck) -> None:
    tools = {t.name: t for t in create_tools(deck, style="activate")}
    call = {"name": "activate_skill", "args": {"name": "pdf-form"}, "id": "e1", "type": "tool_call"}
    for out in (tools["activate_skill"].invoke(call),
                asyncio.run(tools["activate_skill"].ainvoke(call))):
        assert isinstance(out, ToolMessage) and out.status == "error"
        assert "did you mean 'pdf-forms'" in str(out.content)
    per_skill = {t.name: t for t in create_tools(deck)}["csv-clean"]
    ok = per_skill.invoke({**call, "name": "csv-clean", "args": {"arguments": "a.csv"}})
    assert isinstance(ok, ToolMessage) and ok.status == "success"


def test_unknown_style_is_refused(deck: Deck) -> None:
    with pytest.raises(ValueError, match="style"):
        create_tools(deck, style="both")  # type: ignore[arg-type]


class ToolCallingFakeModel(GenericFakeChatModel):
    """GenericFakeChatModel that accepts bind_tools (records the schemas it
    would send) and replays scripted AIMessages, tool calls included."""

    bound: List[Dict[str, Any]] = []

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self.bound.extend(convert_to_openai_tool(t) for t in tools)
        return self


def run_agent(model: Any, tools: Sequence[BaseTool], question: str, async_: bool = False) -> List[BaseMessage]:
    """A minimal agent loop: call the model, invoke each tool with its tool
    call (as LangGraph's ToolNode does: the tool answers a ToolMessage, an
    error status for a failure), until the model answers without tool
    calls."""
    by_name = {t.name: t for t in tools}
    messages: List[BaseMessage] = [HumanMessage(question)]
    for _ in range(10):
        reply = model.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        for call in reply.tool_calls:
            tool = by_name[call["name"]]
            tool_call = {**call, "type": "tool_call"}
            if async_:
                out = asyncio.run(tool.ainvoke(tool_call))
            else:
                out = tool.invoke(tool_call)
            assert isinstance(out, ToolMessage), out
            messages.append(out)
    raise AssertionError("the agent did not finish")


@pytest.mark.parametrize("async_", [False, True])
def test_agent_loop_with_a_fake_chat_model(deck: Deck, async_: bool) -> None:
    script = iter([
        AIMessage(content="", tool_calls=[
            {"name": "activate_skill", "args": {"name": "pdf-form"}, "id": "c1"},
        ]),
        AIMessage(content="", tool_calls=[
            {"name": "activate_skill", "args": {"name": "pdf-forms", "arguments": "invoice.pdf"}, "id": "c2"},
            {"name": "read_skill_resource", "args": {"name": "pdf-forms", "path": "references/FORMS.md"}, "id": "c3"},
        ]),
        AIMessage(content="", tool_calls=[
            {"name": "activate_skill", "args": {"name": "pdf-forms", "arguments": "invoice.pdf"}, "id": "c4"},
        ]),
        AIMessage(content="Filled invoice.pdf."),
    ])
    model = ToolCallingFakeModel(messages=script)
    tools = create_tools(deck, style="activate")
    bound = model.bind_tools(tools)
    assert {t["function"]["name"] for t in model.bound} == {"activate_skill", "read_skill_resource"}

    messages = run_agent(bound, tools, "Fill the invoice form", async_=async_)
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    # The unknown skill reached the model as an error it can act on.
    assert results["c1"].status == "error"
    assert "unknown skill 'pdf-form'" in str(results["c1"].content)
    assert "did you mean 'pdf-forms'" in str(results["c1"].content)
    # Then the real skill, its file, and the notice on a second activation
    # with the same arguments (other arguments would be delivered).
    assert results["c2"].status == "success"
    assert "PDF skill: fill invoice.pdf" in str(results["c2"].content)
    assert results["c3"].content == "# Form fields\n"
    assert "already active" in str(results["c4"].content)
    assert messages[-1].content == "Filled invoice.pdf."


def test_agent_loop_with_per_skill_tools(deck: Deck) -> None:
    script = iter([
        AIMessage(content="", tool_calls=[
            {"name": "csv-clean", "args": {"arguments": "sales.csv"}, "id": "k1"},
            {"name": "git-log", "args": {"arguments": "v1..v2"}, "id": "k2"},
        ]),
        AIMessage(content="done"),
    ])
    model = ToolCallingFakeModel(messages=script)
    tools = create_tools(deck)
    messages = run_agent(model.bind_tools(tools), tools, "clean and summarise")
    results = {m.tool_call_id: str(m.content) for m in messages if isinstance(m, ToolMessage)}
    assert "CSV skill: clean sales.csv" in results["k1"]
    assert "GIT skill: v1..v2" in results["k2"]


# -- LangGraph ---------------------------------------------------------------


def langgraph_agent(model: Any, tools: Sequence[BaseTool], seen: List[List[BaseMessage]]) -> Any:
    """LangGraph 1.x's own loop: a StateGraph whose model node calls the
    bound model and whose ``ToolNode`` (default error handling) runs the
    tool calls, routed by ``tools_condition``. (``create_react_agent`` is
    deprecated in LangGraph 1.x, moved to ``langchain.agents``.) ``seen``
    records what the model was given at each turn."""
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> Dict[str, Any]:
        seen.append(list(state["messages"]))
        return {"messages": [bound.invoke(state["messages"])]}

    async def aagent(state: MessagesState) -> Dict[str, Any]:
        seen.append(list(state["messages"]))
        return {"messages": [await bound.ainvoke(state["messages"])]}

    from langchain_core.runnables import RunnableLambda

    graph = StateGraph(MessagesState)
    graph.add_node("agent", RunnableLambda(agent, afunc=aagent))
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def graph_script() -> Any:
    return iter([
        AIMessage(content="", tool_calls=[
            {"name": "pdf-forms", "args": {"arguments": "invoice.pdf"}, "id": "g1"},
            {"name": "activate_skill", "args": {"name": "pdf-form"}, "id": "g2"},
        ]),
        AIMessage(content="Filled invoice.pdf."),
    ])


@pytest.mark.parametrize("async_", [False, True])
def test_langgraph_agent_gets_the_skill_body_and_the_unknown_skill_error(deck: Deck, async_: bool) -> None:
    tools = create_tools(deck, conversation="graph-1") + create_tools(
        deck, style="activate", conversation="graph-1"
    )
    seen: List[List[BaseMessage]] = []
    app = langgraph_agent(ToolCallingFakeModel(messages=graph_script()), tools, seen)
    start = {"messages": [HumanMessage("Fill the invoice form")]}
    config = {"recursion_limit": 10}
    final = asyncio.run(app.ainvoke(start, config)) if async_ else app.invoke(start, config)

    messages = final["messages"]
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert set(results) == {"g1", "g2"}
    # The per-skill tool returned the skill's body, arguments substituted.
    assert results["g1"].status == "success"
    assert '<skill_content name="pdf-forms">' in str(results["g1"].content)
    assert "PDF skill: fill invoice.pdf" in str(results["g1"].content)
    # The unknown skill's ToolException came back as an error message.
    assert results["g2"].status == "error"
    assert "unknown skill 'pdf-form'" in str(results["g2"].content)
    assert "did you mean 'pdf-forms'" in str(results["g2"].content)
    # ... which the model was given on its next turn, and it answered.
    assert len(seen) == 2
    assert {m.tool_call_id for m in seen[1] if isinstance(m, ToolMessage)} == {"g1", "g2"}
    assert isinstance(messages[-1], AIMessage) and messages[-1].content == "Filled invoice.pdf."


def test_langgraph_raises_tool_exceptions_when_the_tools_do_not_handle_them(deck: Deck) -> None:
    """Why ``handle_errors`` defaults to True: LangGraph 1.x's ToolNode
    re-raises a ToolException the tool did not handle."""
    tools = create_tools(deck, handle_errors=False) + create_tools(
        deck, style="activate", handle_errors=False
    )
    app = langgraph_agent(ToolCallingFakeModel(messages=graph_script()), tools, [])
    with pytest.raises(ToolException, match="unknown skill 'pdf-form'"):
        app.invoke({"messages": [HumanMessage("Fill the invoice form")]}, {"recursion_limit": 10})
