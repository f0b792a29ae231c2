# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Demo handlers for the built-in example tools: fixed fake weather and order status, an in-memory todo list per
conversation, and run_command in a sandbox. Packages built with `demo: true` carry them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pydantic

from ..tools.entry import ToolContext
from ..tools.registry import Registry
from .sandbox import Sandbox, TodoStore

DEMO_TOOLS = (
    "get_current_weather",
    "run_command",
    "show_order_status",
    "todo_read",
    "todo_write",
)


def _data(args: Any) -> dict[str, Any]:
    if isinstance(args, pydantic.BaseModel):
        dumped: dict[str, Any] = args.model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        return dumped
    return dict(args) if isinstance(args, Mapping) else {}


def _weather(args: Any, ctx: ToolContext) -> dict[str, Any]:
    data = _data(args)
    unit = data.get("unit") or "celsius"
    temperature = 18.0 if unit == "celsius" else 64.4
    return {
        "location": str(data.get("location", "")),
        "temperature": temperature,
        "unit": unit,
        "conditions": "sunny",
    }


def _order_status(args: Any, ctx: ToolContext) -> str:
    return f"Order {_data(args).get('order_id', '?')}: shipped, arriving in 2 days."


# The most conversations whose to-do lists the demo keeps: an MCP server gives every session (and every call
# without one) a conversation of its own, so the store would otherwise grow with every client that writes once.
MOST_TODO_LISTS = 1024


def _conversation(ctx: ToolContext) -> str:
    # The list belongs to the conversation the loop (or the MCP session) says this is, never to one the model names.
    return ctx.conversation_id or "default"


def _write_todos(store: TodoStore, conversation: str, todos: list[Any]) -> int:
    """Write the list, forgetting the lists written longest ago beyond MOST_TODO_LISTS."""
    with store.lock:
        store.lists.pop(conversation, None)  # written again: the newest, last in order
        while len(store.lists) >= MOST_TODO_LISTS:
            store.lists.pop(next(iter(store.lists)))
        store.lists[conversation] = [dict(todo) for todo in todos]
    return len(todos)


def bind_demo_handlers(
    registry: Registry, workspace: Path, *, sandbox: Sandbox | None = None
) -> list[str]:
    """Bind the demo handlers to the registry's unbound tools that have a demo name; the names bound."""
    store = TodoStore()
    spec = registry.entry("run_command").spec if "run_command" in registry else None
    cap = (spec.meta.get("sandbox") or {}).get("output_cap_bytes") if spec else None
    shell = sandbox or Sandbox(
        workspace, output_cap=cap if isinstance(cap, int) else 65536
    )

    def run_command(args: Any, ctx: ToolContext) -> dict[str, Any]:
        data = _data(args)
        return shell.run(
            str(data.get("program", "")), data.get("args") or [], data.get("cwd", ".")
        )

    def todo_write(args: Any, ctx: ToolContext) -> dict[str, Any]:
        todos = list(_data(args).get("todos") or [])
        return {"count": _write_todos(store, _conversation(ctx), todos)}

    def todo_read(args: Any, ctx: ToolContext) -> dict[str, Any]:
        return {"todos": store.read(_conversation(ctx))}

    handlers: dict[str, Callable[[Any, ToolContext], Any]] = {
        "get_current_weather": _weather,
        "run_command": run_command,
        "show_order_status": _order_status,
        "todo_read": todo_read,
        "todo_write": todo_write,
    }
    bound = []
    for name, handler in handlers.items():
        if name in registry and not registry.entry(name).bound:
            registry.entry(name).handler(handler)
            bound.append(name)
    return bound


# ---- the scripted demo model ----


def sample_workspace(directory: Path) -> Path:
    (directory / "notes.txt").write_text(
        "Files here are what run_command can see.\n", encoding="utf-8"
    )
    return directory
