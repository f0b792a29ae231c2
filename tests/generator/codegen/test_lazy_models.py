"""Each tool's models in a module of their own, imported on first use: the package imports without them.

Built once: three tools, two of which share a definition (`Address`), so the shared module is exercised
too. Every check runs in a fresh interpreter, since what is imported is the point.
"""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest
from support.projects import Project, run_sdk

import toolgen
from toolgen.codegen.targets.model_modules import FOLDER

TOOLS = """\
tools:
  - name: ship_order
    description: Ship an order.
    inputSchema:
      type: object
      properties:
        order: {type: string}
        to: {$ref: "tools.yaml#/$defs/Address"}
      required: [order, to]
      additionalProperties: false
    outputSchema: {type: object, properties: {eta: {type: string}}, required: [eta]}
  - name: quote_shipping
    description: Quote a shipment.
    inputSchema:
      type: object
      properties: {to: {$ref: "tools.yaml#/$defs/Address"}, weight: {type: number, minimum: 0}}
      required: [to]
  - name: class
    description: A tool whose name is a Python keyword.
    inputSchema: {type: object, properties: {level: {type: integer}}}
$defs:
  Address:
    title: Address
    type: object
    properties: {city: {type: string}, zip: {type: string}}
    required: [city]
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = Project(tmp_path_factory.mktemp("lazy"), "lazy_sdk")
    project.write("schemas/tools.yaml", TOOLS)
    toolgen.build(project.root)
    return project


def _tool_modules(package_dir: Path) -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(encoding="utf-8")) for p in sorted((package_dir / FOLDER).glob("*.py"))}


def test_each_tool_has_a_module_and_shared_definitions_one_of_their_own(built: Project) -> None:
    modules = _tool_modules(built.package_dir)
    assert sorted(modules) == ["__init__", "class_", "quote_shipping", "shared", "ship_order"]

    def classes(name: str) -> list[str]:
        return [n.name for n in modules[name].body if isinstance(n, ast.ClassDef)]

    assert classes("ship_order") == ["ShipOrderArgs", "ShipOrderResult"]
    assert classes("quote_shipping") == ["QuoteShippingArgs"]
    assert classes("shared") == ["Address"]
    assert classes("class_") == ["ClassArgs"]
    core = ast.parse((built.package_dir / "models.py").read_text(encoding="utf-8"))
    assert "Address" not in {n.name for n in core.body if isinstance(n, ast.ClassDef)}
    assert "Message" in {
        n.target.id for n in core.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }


def test_a_tool_module_imports_only_the_models_module_and_modules_of_shared_definitions(built: Project) -> None:
    package = built.package
    for name, module in _tool_modules(built.package_dir).items():
        imported = {n.module for n in module.body if isinstance(n, ast.ImportFrom) and n.module}
        ours = {m for m in imported if m.startswith(package)}
        assert ours <= {f"{package}.models", f"{package}._runtime", f"{package}.{FOLDER}.shared"}, name
        if name == "shared":
            assert f"{package}.{FOLDER}.shared" not in ours


def test_importing_the_package_creates_no_tool_model_and_first_use_loads_only_that_tool(built: Project) -> None:
    seen = run_sdk(
        built.root,
        """
        import json, sys
        import lazy_sdk
        def loaded():
            return sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("lazy_sdk._tool_models."))
        at_import = loaded()
        spec = lazy_sdk.TOOLS["ship_order"]
        after_spec = loaded()
        args = spec.args_model
        after_args = loaded()
        from lazy_sdk import ShipOrderArgs, ShipOrderResult
        value = lazy_sdk.validate_tool_arguments("ship_order", {"order": "A1", "to": {"city": "Oslo"}})
        print(json.dumps({
            "at_import": at_import, "after_spec": after_spec, "after_args": after_args,
            "same": args is ShipOrderArgs and spec.result_model is ShipOrderResult,
            "module": ShipOrderArgs.__module__, "value": type(value).__name__, "city": value.to.city,
            "complete": ShipOrderArgs.__pydantic_complete__,
            "listed": "QuoteShippingArgs" in dir(lazy_sdk) and "Address" in dir(lazy_sdk.models),
            "final": loaded(),
        }))
        """,
    )
    assert seen["at_import"] == [] and seen["after_spec"] == []
    assert seen["after_args"] == ["shared", "ship_order"]
    assert seen["same"] and seen["module"] == "lazy_sdk._tool_models.ship_order"
    assert (seen["value"], seen["city"]) == ("ShipOrderArgs", "Oslo")
    assert seen["complete"] and seen["listed"]
    assert seen["final"] == ["shared", "ship_order"], "no other tool's models were imported"


def test_an_unknown_name_is_an_attribute_error_naming_the_module(built: Project) -> None:
    seen = run_sdk(
        built.root,
        """
        import json
        import lazy_sdk, lazy_sdk.models
        found = []
        for module in (lazy_sdk, lazy_sdk.models):
            try:
                module.NoSuchArgs
            except AttributeError as error:
                found.append(str(error))
        print(json.dumps(found))
        """,
    )
    assert seen == [
        "module 'lazy_sdk' has no attribute 'NoSuchArgs'",
        "module 'lazy_sdk.models' has no attribute 'NoSuchArgs'",
    ]


def test_a_deferred_spec_pickles_before_and_after_its_models_load(built: Project) -> None:
    seen = run_sdk(
        built.root,
        """
        import json, pickle
        import lazy_sdk
        spec = lazy_sdk.TOOLS["quote_shipping"]
        before = pickle.loads(pickle.dumps(spec))
        same = before.args_model is spec.args_model
        after = pickle.loads(pickle.dumps(spec))
        print(json.dumps([same, after == spec, after.result_model is None, before.name]))
        """,
    )
    assert seen == [True, True, True, "quote_shipping"]


def test_a_spec_made_at_run_time_reads_its_models_as_given() -> None:
    from toolgen.runtime import DeferredModels, SchemaModel, ToolSpec

    class Args(SchemaModel):
        n: int

    spec = ToolSpec(
        name="t", title=None, description=None, args_model=Args, result_model=None, input_schema={}, output_schema=None
    )
    assert spec.args_model is Args and spec.result_model is None
    deferred = ToolSpec.deferred(
        DeferredModels("toolgen.runtime", "SchemaModel"), name="t", title=None, description=None,
        input_schema={}, output_schema=None,
    )  # fmt: skip
    assert deferred.args_model is SchemaModel and deferred.result_model is None
    assert pickle.loads(pickle.dumps(deferred)) == deferred
    with pytest.raises(AttributeError, match="no attribute 'unknown'"):
        _ = deferred.unknown  # type: ignore[attr-defined]
