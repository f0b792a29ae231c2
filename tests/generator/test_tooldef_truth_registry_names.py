"""A tool named like a member of the runtime's Registry (the generated Tools' base) gets another attribute name.

The reserved list in codegen/targets/package.py is held to the class here: every public method, class attribute
and attribute a method sets. A package built with tools named after members builds, keeps each member working
(the sync agent loop calls `dispatcher`), and offers those tools under numbered attributes.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable

import pytest
from support.projects import Project

from toolgen.codegen.targets.package import _REGISTRY_MEMBERS
from toolgen.core.names import snake
from toolgen.runtime.tools import registry as registry_module
from toolgen.runtime.tools.registry import Registry


def _set_on_self(cls: type) -> set[str]:
    """Every `self.<name>` a method of `cls` assigns (plainly, augmented or annotated), read from its source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                    found.add(part.attr)
    return found


def test_the_reserved_names_are_exactly_the_registrys_public_members() -> None:
    members = {name for name in dir(Registry) if not name.startswith("_")}
    members |= {name for name in vars(Registry({})) if not name.startswith("_")}
    members |= {name for name in _set_on_self(Registry) if not name.startswith("_")}
    assert members == set(_REGISTRY_MEMBERS), (
        f"missing: {sorted(members - _REGISTRY_MEMBERS)}, stale: {sorted(_REGISTRY_MEMBERS - members)}"
    )
    # What the list reads from is the class the generated Tools subclasses, and that class has no other base.
    assert registry_module.Registry.__mro__ == (Registry, object)


def test_no_tool_name_becomes_an_attribute_starting_with_an_underscore() -> None:
    # Why the list leaves out names starting with `_`: no tool's attribute can take one.
    for name in ("_specs", "__init__", "_entries", "__class__", "_", "_prepare", "__dict__"):
        assert not snake(name, fallback="tool").startswith("_"), name


MEMBER_TOOLS = ("dispatcher", "pool", "max_error_chars", "require_approval", "dispatch", "revision")

PROBE = """
import json, sys
from sdk import Tools, agent
from sdk._runtime.tools.entry import ToolEntry
from sdk._runtime.tools.pool import HandlerPool

tools = Tools(max_error_chars=500, require_approval=False)
seen = {
    "pool": type(tools.pool).__name__,
    "max_error_chars": tools.max_error_chars,
    "require_approval": tools.require_approval,
    "revision": tools.revision,
    "dispatcher": callable(tools.dispatcher) and not isinstance(tools.dispatcher, ToolEntry),
    "entries": {n: tools.__class__.__dict__[n].fget(tools).spec.name for n in sorted(vars(tools.__class__))
                if isinstance(vars(tools.__class__)[n], property)},
}

@tools.dispatcher2.handler
def route(args, ctx):
    return "routed " + args.v

for name in sys.argv[1:]:
    if name != "dispatcher":
        getattr(tools, name + "2").handler(lambda args, ctx: "ok")

call = agent.tool_call("dispatcher", {"v": "a"})
model = agent.ScriptedModel([agent.assistant_turn(None, call), "done"])
result = agent.run([{"role": "user", "content": "route a"}], model, tools)
seen["run"] = [result.text, result.stop_reason, result.metrics.tools["dispatcher"].ok]
seen["tool_message"] = [m["content"] for m in result.messages if m["role"] == "tool"]
print(json.dumps(seen))
"""


@pytest.mark.parametrize("names", [("dispatcher",), MEMBER_TOOLS], ids=["dispatcher", "members"])
def test_tools_named_like_registry_members_build_and_the_sync_loop_runs(
    make_project: Callable[..., Project], names: tuple[str, ...]
) -> None:
    # `dispatcher` alone built before, and its property hid the method the sync loop calls for every tool call.
    project = make_project()
    tools = [
        {
            "name": name,
            "description": f"the {name} tool",
            "inputSchema": {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]},
        }
        for name in names
    ]
    project.write("schemas/tools.json", json.dumps({"tools": tools}))
    built = project.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    ran = subprocess.run(
        [sys.executable, "-c", PROBE, *names],
        cwd=project.root / "generated",
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout)
    assert seen["pool"] == "HandlerPool"
    assert (seen["max_error_chars"], seen["require_approval"], seen["revision"]) == (500, False, 0)
    assert seen["dispatcher"] is True
    assert seen["entries"] == {f"{name}2": name for name in names}
    assert seen["run"] == ["done", "finished", 1]
    assert seen["tool_message"] == ["routed a"]
