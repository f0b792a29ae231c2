"""Each tool's definition in tools.py as constants, its spec made when the tool is first read: the package imports
without parsing any definition, and every spec is the one the definition as lowered describes.

Built once: tools using every field a definition can carry (strict, folded meta, a JSON Schema check with the
schema as written and its draft, an output check), so that each constant's reading is exercised.
"""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest
from support.projects import Project, run_sdk

import toolgen
from toolgen.ir.lower import lower
from toolgen.ir.model import thaw
from toolgen.project.config import load_config
from toolgen.runtime import FORMATS

TOOLS = """\
tools:
  - name: ship_order
    title: Ship an order
    description: Ship an order <now> & "quickly".
    inputSchema:
      type: object
      properties:
        order: {type: string}
        rush: {type: boolean, default: false}
      required: [order]
      additionalProperties: false
    outputSchema:
      type: object
      properties: {eta: {type: string}, stops: {type: array, items: {type: string}, uniqueItems: true}}
      required: [eta]
    strict: true
    timeout: 2.5
    requiresApproval: true
    returnDirect: true
    meta: {scope: warehouse, tier: 2}
    annotations: {destructiveHint: true}
    describeMeta: [scope]
  - name: quote_shipping
    description: Quote a shipment (draft-07, with a dependency the models cannot enforce).
    inputSchema:
      $schema: "http://json-schema.org/draft-07/schema#"
      type: object
      properties: {weight: {type: number, minimum: 0}, unit: {type: string}, café: {type: string}}
      dependencies: {unit: [weight]}
  - name: lookup
    description: Look a code up; the schema as written has an $id and an anchor.
    inputSchema:
      $id: "urn:example:lookup"
      type: object
      properties: {code: {$ref: "#code"}}
      $defs:
        code: {$anchor: code, type: string, not: {const: ""}}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = Project(tmp_path_factory.mktemp("deferred"), "deferred_sdk")
    project.write("schemas/tools.yaml", TOOLS)
    toolgen.build(project.root)
    return project


def _table(built: Project) -> ast.Dict:
    tree = ast.parse((built.package_dir / "tools.py").read_text(encoding="utf-8"))
    (value,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "TOOLS"
    ]
    assert isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "DeferredTools"
    module, table = value.args
    assert isinstance(module, ast.Constant) and module.value == f"{built.package}.models"
    assert isinstance(table, ast.Dict)
    return table


def test_tools_py_holds_every_definition_as_constants(built: Project) -> None:
    table = _table(built)
    assert [key.value for key in table.keys if isinstance(key, ast.Constant)] == [
        "lookup",
        "quote_shipping",
        "ship_order",
    ]
    for definition in table.values:
        assert isinstance(definition, ast.Dict)
        # Data, never code: every field is a literal, the schemas among them JSON text.
        assert all(isinstance(node, ast.Constant) for node in [*definition.keys, *definition.values])
        fields = {k.value: v.value for k, v in zip(definition.keys, definition.values, strict=True)}  # type: ignore[union-attr]
        assert isinstance(json.loads(fields["input_schema"]), dict)


def _expected(built: Project) -> dict[str, dict[str, Any]]:
    """Each tool's spec as the definition as lowered describes it (what tools.py used to spell out as literals)."""
    lowered = lower(load_config(built.root))
    expected = {}
    for tool in lowered.project.tools:
        folded = thaw(tool.describe_meta) if tool.describe_meta else False
        expected[tool.name] = {
            "name": tool.name,
            "title": tool.title,
            "description": tool.description,
            "input_schema": thaw(tool.input_schema),
            "output_schema": thaw(tool.output_schema),
            "return_direct": tool.return_direct,
            "timeout": tool.timeout,
            "requires_approval": tool.requires_approval,
            "strict": tool.strict,
            "null_as_absent": tool.null_as_absent,
            "meta": thaw(tool.meta),
            "annotations": thaw(tool.annotations),
            "describe_meta": folded,
            "check_input": tool.check_input,
            "check_output": tool.check_output,
            "check_schema": thaw(tool.check_schema),
            "check_resources": thaw(tool.check_resources) or {},
            "dialects": thaw(tool.dialects) or {},
            "models": [tool.args_model, tool.result_model],
        }
    return expected


def test_each_spec_is_the_definition_as_lowered(built: Project) -> None:
    seen = run_sdk(
        built.root,
        """
        import json
        import deferred_sdk
        FIELDS = ("name", "title", "description", "input_schema", "output_schema", "return_direct", "timeout",
                  "requires_approval", "strict", "null_as_absent", "meta", "annotations", "describe_meta",
                  "check_input", "check_output", "check_schema", "check_resources", "dialects")
        found = {}
        for name, spec in deferred_sdk.TOOLS.items():
            fields = {field: getattr(spec, field) for field in FIELDS}
            fields["describe_meta_type"] = type(spec.describe_meta).__name__
            fields["models"] = [spec.args_model.__name__, spec.result_model and spec.result_model.__name__]
            found[name] = fields
        print(json.dumps(found))
        """,
    )
    expected = _expected(built)
    assert list(seen) == list(expected)
    for name, fields in seen.items():
        kind = fields.pop("describe_meta_type")
        assert kind == ("bool" if isinstance(expected[name]["describe_meta"], bool) else "tuple"), name
        assert fields == expected[name], name
    # Every optional field a definition carries was read from its constants here at least once.
    assert seen["ship_order"]["describe_meta"] == ["scope"] and seen["ship_order"]["null_as_absent"]
    assert seen["ship_order"]["check_output"] and seen["ship_order"]["timeout"] == 2.5
    assert seen["quote_shipping"]["dialects"] and seen["quote_shipping"]["check_input"]
    assert seen["lookup"]["check_schema"] is not None


def test_every_provider_export_is_the_one_toolgen_export_makes(built: Project) -> None:
    seen = run_sdk(
        built.root,
        """
        import json, sys
        import deferred_sdk
        out = {}
        for provider in sys.argv[1:]:
            exported = deferred_sdk.export_definitions(provider)
            out[provider] = {"tools": exported.tools, "notes": [str(n) for n in exported.notes]}
        print(json.dumps(out))
        """,
        *FORMATS,
    )
    for provider in FORMATS:
        exported, _ = toolgen.export(built.root, provider=provider)
        assert seen[provider]["tools"] == json.loads(json.dumps(exported.tools)), provider
        assert seen[provider]["notes"] == [str(n) for n in exported.notes], provider


def test_importing_makes_no_spec_and_first_read_makes_only_that_one(built: Project) -> None:
    seen = run_sdk(
        built.root,
        """
        import json
        import deferred_sdk
        from deferred_sdk.tools import TOOLS
        def made():
            return sorted(TOOLS._specs)
        at_import = made()
        names, size, known = list(TOOLS), len(TOOLS), ("lookup" in TOOLS, "nope" in TOOLS, TOOLS.get("nope"))
        tools = deferred_sdk.Tools()
        unbound = tools.unbound()
        after_listing = made()
        spec = TOOLS["lookup"]
        after_one = made()
        entry = tools.lookup
        same = TOOLS["lookup"] is spec and entry.spec is spec and tools.entry("lookup") is entry
        unknown = tools.dispatch({"id": "c1", "function": {"name": "nope", "arguments": "{}"}}).content
        try:
            TOOLS["nope"]
            missing = None
        except KeyError as error:
            missing = str(error)
        try:
            TOOLS["lookup"] = spec
            assigned = "allowed"
        except TypeError:
            assigned = "refused"
        print(json.dumps({
            "at_import": at_import, "names": names, "size": size, "known": known, "unbound": unbound,
            "after_listing": after_listing, "after_one": after_one, "same": same, "unknown": unknown,
            "still_one": made(), "missing": missing, "assigned": assigned,
        }))
        """,
    )
    assert seen["at_import"] == [] and seen["after_listing"] == []
    assert seen["names"] == ["lookup", "quote_shipping", "ship_order"] and seen["size"] == 3
    assert seen["known"] == [True, False, None]
    assert seen["unbound"] == ["lookup", "quote_shipping", "ship_order"]
    assert seen["after_one"] == ["lookup"] and seen["same"]
    assert "the tools are: lookup, quote_shipping, ship_order" in seen["unknown"]
    assert seen["still_one"] == ["lookup"], "an unknown tool's dispatch reads no definition"
    assert seen["missing"] == "'nope'" and seen["assigned"] == "refused"


def test_threads_reading_a_tool_first_at_once_get_one_spec(built: Project) -> None:
    seen = run_sdk(
        built.root,
        """
        import json, threading
        from deferred_sdk import Tools
        from deferred_sdk.tools import TOOLS
        tools = Tools()
        barrier = threading.Barrier(8)
        specs, entries = [], []
        def read():
            barrier.wait()
            specs.append(TOOLS["ship_order"])
            entries.append(tools.entry("quote_shipping"))
        threads = [threading.Thread(target=read) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(json.dumps([len({id(s) for s in specs}), len({id(e) for e in entries}), TOOLS["ship_order"] is specs[0]]))
        """,
    )
    assert seen == [1, 1, True]


def test_a_bound_handler_stays_bound_and_run_time_tools_come_and_go(built: Project) -> None:
    seen = run_sdk(
        built.root,
        """
        import json
        from deferred_sdk import Tools
        tools = Tools()
        tools.lookup.handler(lambda args, ctx: {"found": type(args).__name__})
        first = tools.dispatch({"id": "c1", "function": {"name": "lookup", "arguments": '{"code": "x"}'}})
        tools.add("echo", {"type": "object"}, lambda args, ctx: args)
        listed = list(tools)
        tools.remove("lookup")
        gone = tools.dispatch({"id": "c2", "function": {"name": "lookup", "arguments": "{}"}})
        print(json.dumps({
            "first": first.content, "listed": listed, "after": list(tools), "unbound": tools.unbound(),
            "gone": gone.error.kind, "definitions": [d["name"] for d in tools.definitions()],
        }))
        """,
    )
    assert seen["first"] == '{"found": "LookupArgs"}'
    assert seen["listed"] == ["echo", "lookup", "quote_shipping", "ship_order"]
    assert seen["after"] == ["echo", "quote_shipping", "ship_order"]
    assert seen["unbound"] == ["quote_shipping", "ship_order"] and seen["gone"] == "unknown_tool"
    assert seen["definitions"] == ["echo", "quote_shipping", "ship_order"]
