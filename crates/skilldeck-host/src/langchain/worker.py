# skilldeck's LangChain worker: runs INSIDE the sandbox (never in the host
# process), started as `python3 -I -B -c <this file> ...` with the skill
# folder mounted read-only at $SKILLDECK_SKILL_DIR.
#
# Protocol (JSON lines): one request line on stdin, one reply line on the
# original stdout. Anything the package prints goes to stderr.
#
#   {"op": "describe"}
#     -> {"ok": true, "tools": [{"name", "description", "schema", "module"}],
#         "skipped": [{"module", "error"}]}
#   {"op": "invoke", "module": "weather_tool.py", "tool": "get_weather",
#    "arguments": {...}}
#     -> {"ok": true, "result": <JSON value>}
#   any failure
#     -> {"ok": false, "kind": "environment" | "package" | "arguments" | "tool",
#         "error": "..."}
import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import sys
import traceback
import types

PROTOCOL = 1
PACKAGE = "skilldeck_langchain_package"
SKIP_FILES = ("setup.py", "conftest.py")


def main():
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def reply(obj):
        obj["protocol"] = PROTOCOL
        out.write(json.dumps(obj, default=str, ensure_ascii=False) + "\n")
        out.flush()

    try:
        request = json.loads(sys.stdin.readline())
        op = request["op"]
    except Exception as e:  # noqa: BLE001 - any malformed request
        reply({"ok": False, "kind": "environment", "error": f"bad worker request: {e}"})
        return
    try:
        from langchain_core.tools import BaseTool
    except ImportError as e:
        reply({
            "ok": False,
            "kind": "environment",
            "error": (
                f"langchain-core is not importable by the sandbox's Python "
                f"({sys.executable}, {sys.version.split()[0]}): {e}"
            ),
        })
        return
    root = os.environ.get("SKILLDECK_SKILL_DIR") or ""
    if not os.path.isdir(root):
        reply({"ok": False, "kind": "environment", "error": "SKILLDECK_SKILL_DIR is not a folder"})
        return
    sys.path.insert(0, root)
    try:
        package = load_package(root)
    except Exception:  # noqa: BLE001 - the package's own error, reported
        reply({"ok": False, "kind": "package", "error": "__init__.py: " + short_trace()})
        return
    if op == "describe":
        describe(root, package, BaseTool, reply)
    elif op == "invoke":
        invoke(request, package, BaseTool, reply)
    else:
        reply({"ok": False, "kind": "environment", "error": f"unknown op {op!r}"})


def load_package(root):
    """The skill folder as a package, so relative imports and __init__.py
    work whatever the folder is called."""
    init = os.path.join(root, "__init__.py")
    if os.path.isfile(init):
        spec = importlib.util.spec_from_file_location(
            PACKAGE, init, submodule_search_locations=[root]
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = package
        spec.loader.exec_module(package)
    else:
        package = types.ModuleType(PACKAGE)
        package.__path__ = [root]
        sys.modules[PACKAGE] = package
    return package


def module_files(root):
    names = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if (
            name.endswith(".py")
            and os.path.isfile(path)
            and not name.startswith(("_", "test_", "."))
            and name not in SKIP_FILES
            and name[:-3].isidentifier()
        ):
            names.append(name)
    return names


def import_module(package, file):
    if file == "__init__.py":
        return package
    return importlib.import_module(f"{PACKAGE}.{file[:-3]}")


def tools_of(module, base):
    """The module's tools: BaseTool instances (a @tool function is one),
    then BaseTool subclasses defined in it that construct without
    arguments and have no instance yet."""
    found = []
    classes = []
    for value in list(vars(module).values()):
        if isinstance(value, base):
            found.append(value)
        elif (
            inspect.isclass(value)
            and issubclass(value, base)
            and value is not base
            and value.__module__ == module.__name__
            and not inspect.isabstract(value)
        ):
            classes.append(value)
    problems = []
    for cls in classes:
        if any(type(t) is cls for t in found):
            continue
        try:
            found.append(cls())
        except Exception as e:  # noqa: BLE001 - needs arguments: not a tool by itself
            problems.append(f"class {cls.__name__} cannot be built without arguments: {e}")
    return found, problems


def schema_of(tool):
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        return schema
    if hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    return schema.schema()


def describe(root, package, base, reply):
    tools, skipped, seen = [], [], set()
    files = module_files(root)
    if os.path.isfile(os.path.join(root, "__init__.py")):
        files.append("__init__.py")
    for file in files:
        try:
            module = import_module(package, file)
        except Exception:  # noqa: BLE001 - reported per module
            skipped.append({"module": file, "error": short_trace()})
            continue
        found, problems = tools_of(module, base)
        skipped.extend({"module": file, "error": p} for p in problems)
        for tool in found:
            if id(tool) in seen:
                continue
            seen.add(id(tool))
            try:
                schema = schema_of(tool)
            except Exception as e:  # noqa: BLE001
                skipped.append({"module": file, "error": f"tool {tool.name!r}: no schema: {e}"})
                continue
            tools.append({
                "name": tool.name,
                "description": tool.description or "",
                "schema": schema,
                "module": file,
            })
    reply({"ok": True, "tools": tools, "skipped": skipped})


def jsonable(value):
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def invoke(request, package, base, reply):
    file, name = request.get("module", ""), request.get("tool", "")
    arguments = request.get("arguments") or {}
    try:
        module = import_module(package, file)
    except Exception:  # noqa: BLE001
        reply({"ok": False, "kind": "package", "error": f"{file}: " + short_trace()})
        return
    found, _ = tools_of(module, base)
    tool = next((t for t in found if t.name == name), None)
    if tool is None:
        reply({"ok": False, "kind": "package", "error": f"{file} defines no tool {name!r} now"})
        return
    try:
        try:
            result = tool.invoke(arguments)
        except NotImplementedError:
            result = asyncio.run(tool.ainvoke(arguments))
    except Exception as e:  # noqa: BLE001 - the tool's error, for the model
        kind = "arguments" if type(e).__name__ == "ValidationError" else "tool"
        reply({"ok": False, "kind": kind, "error": f"{type(e).__name__}: {e}"})
        return
    reply({"ok": True, "result": jsonable(result)})


def short_trace():
    lines = traceback.format_exc().strip().splitlines()
    return "\n".join(lines[-6:])


main()
