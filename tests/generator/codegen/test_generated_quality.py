"""The committed SDK and a fresh multi-tool build pass ruff, mypy --strict and the SDK's own conventions."""

from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from ruff.__main__ import find_ruff_bin
from support.cli_in_process import toolgen_in
from support.projects import REPO_ROOT, Project

import toolgen

COMMITTED = REPO_ROOT / "generated" / "toolgen_sdk"
FRESH_PACKAGE = "fresh_sdk"

ORDERS = """\
$defs:
  Address:
    type: object
    description: A postal address.
    properties:
      street: {type: string}
      city: {type: string}
      country: {type: string, minLength: 2, maxLength: 2}
    required: [street, city]
    additionalProperties: false
  LineItem:
    type: object
    properties:
      sku: {type: string, pattern: "^[A-Z0-9]+$"}
      quantity: {type: integer, minimum: 1}
    required: [sku, quantity]
tools:
  - name: create_order
    description: 'Create an order; "quotes", \\backslashes\\ and ''single quotes'' stay text.'
    inputSchema:
      type: object
      properties:
        items: {type: array, items: {$ref: "orders.yaml#/$defs/LineItem"}, minItems: 1}
        ship_to: {$ref: "orders.yaml#/$defs/Address"}
        class: {type: string, enum: [standard, express], description: Shipping class.}
        notes: {type: [string, "null"]}
      required: [items, ship_to]
      additionalProperties: false
    outputSchema:
      type: object
      properties:
        order_id: {type: string}
        total: {type: number, minimum: 0}
      required: [order_id, total]
  - name: cancel-order
    returnDirect: true
    requiresApproval: true
    inputSchema:
      type: object
      properties:
        order_id: {type: string}
        reason: {type: string, default: customer request}
      required: [order_id]
    outputSchema: {type: boolean}
"""
SHIPPING = """\
tools:
  - name: estimate_shipping
    description: Estimate shipping to an address.
    inputSchema:
      type: object
      properties:
        destination: {$ref: "orders.yaml#/$defs/Address"}
        origin: {$ref: "orders.yaml#/$defs/Address"}
        speed:
          oneOf:
            - {type: string, enum: [slow, fast]}
            - {type: integer, minimum: 1}
      required: [destination]
    outputSchema:
      type: object
      properties:
        days: {type: integer}
        price: {type: number}
"""
SEARCH = """\
{"tools": [
  {"name": "search.docs", "description": "Search the docs.\\nSecond line with a \\"quote\\".",
   "inputSchema": {"type": "object", "required": ["query"], "properties": {
     "query": {"type": "string", "minLength": 1},
     "filters": {"type": "object", "properties": {"from": {"type": "string"},
                                                  "tags": {"type": "array", "items": {"type": "string"}}},
                 "default": {"tags": ["docs"]}},
     "sort": {"type": "array", "items": {"type": "string"}, "default": []},
     "langs": {"$ref": "#/$defs/Langs", "default": ["en"]},
     "mode": {"$ref": "#/$defs/Mode", "default": "fast"},
     "scope": {"anyOf": [{"type": "object", "properties": {"depth": {"type": "integer"}}}, {"type": "string"}],
               "default": {"depth": 1}},
     "limit": {"type": "integer", "maximum": 50, "default": 10}},
   "$defs": {"Langs": {"type": "array", "items": {"type": "string"}}, "Mode": {"type": "string", "minLength": 1}}},
   "outputSchema": {"type": "array", "items": {"type": "object", "required": ["title"],
                    "properties": {"title": {"type": "string"}, "score": {"type": "number"}}}}},
  {"type": "function", "function": {"name": "get_time", "description": "Current time in a zone.", "strict": true,
   "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"],
                  "additionalProperties": false}}}
]}
"""
FRESH_TOOLS = ("cancel-order", "create_order", "estimate_shipping", "get_time", "search.docs")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = Project(tmp_path_factory.mktemp("fresh"), FRESH_PACKAGE)
    project.write("schemas/tools/orders.yaml", ORDERS)
    project.write("schemas/tools/shipping.yaml", SHIPPING)
    project.write("schemas/tools/search.json", SEARCH)
    # `search.docs` is a dotted name, which the chat wires' providers refuse and MCP takes: the build lints MCP's.
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "lint:\n  providers: [mcp]\n", encoding="utf-8")
    result = toolgen.build(project.root, force=True)
    assert result.written
    return project.package_dir


@pytest.fixture(params=["committed", "fresh"])
def package_dir(request: pytest.FixtureRequest) -> Path:
    if request.param == "committed":
        assert (COMMITTED / "__init__.py").is_file(), f"no committed SDK at {COMMITTED}"
        return COMMITTED
    path: Path = request.getfixturevalue("fresh")
    return path


def _modules(package_dir: Path) -> dict[str, ast.Module]:
    modules = {
        p.relative_to(package_dir).as_posix(): ast.parse(p.read_text(encoding="utf-8"), str(p))
        for p in sorted(package_dir.rglob("*.py"))
    }
    assert {"__init__.py", "models.py", "tools.py", "validators.py"} <= modules.keys()
    return modules


@pytest.fixture(scope="module")
def parsed() -> Callable[[Path], dict[str, ast.Module]]:
    """_modules, each package parsed once for this module: the tests only read the trees."""
    return functools.cache(_modules)


def _ruff(*args: str) -> list[str]:
    return [str(find_ruff_bin()), "check", "--isolated", "--no-cache", *args]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, check=False)


def test_ruff_check_passes(package_dir: Path) -> None:
    result = _run(_ruff("--", package_dir.name), package_dir.parent)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_passes(package_dir: Path, tmp_path: Path, mypy_cache: str) -> None:
    result = _run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            os.devnull,
            "--cache-dir",
            mypy_cache,
            "-p",
            package_dir.name,
        ],
        package_dir.parent,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout


def test_toolgen_check_passes_on_the_committed_tree(tmp_path: Path) -> None:
    result = toolgen_in(tmp_path, "check", "-C", str(REPO_ROOT))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "up to date" in result.stderr


def _isort_key(name: str) -> tuple[int, list[int | str]]:
    """The order ruff's RUF022 gives `__all__`: SCREAMING_CASE, then CamelCase, then the rest; natural sort."""
    group = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return group, [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _assigned(statements: list[ast.stmt]) -> set[str]:
    """Names the statements assign, tuple targets (`__getattr__, __dir__ = ...`) included."""
    return {
        sub.id
        for node in statements
        if isinstance(node, ast.Assign)
        for target in node.targets
        for sub in ast.walk(target)
        if isinstance(sub, ast.Name)
    }


def _bound_names(module: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in module.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.If) and (
            "__getattr__" in names | {n.name for n in module.body if isinstance(n, ast.FunctionDef)}
            or "__getattr__" in _assigned(node.orelse)
        ):
            # A lazy surface: names imported for type checkers, served at run time by __getattr__ (defined in
            # the module, or made by the runtime's lazy_attributes in the branch type checkers do not see).
            names.update(
                alias.asname or alias.name for n in node.body if isinstance(n, ast.ImportFrom) for alias in n.names
            )
    return names


def _dunder_all(module: ast.Module) -> list[str] | None:
    for node in module.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            assert isinstance(node.value, (ast.List, ast.Tuple)), "__all__ is not a literal list"
            items = [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            assert len(items) == len(node.value.elts), "__all__ holds something other than strings"
            return items
    return None


def test_dunder_all_is_sorted_unique_and_bound(
    package_dir: Path, parsed: Callable[[Path], dict[str, ast.Module]]
) -> None:
    modules = parsed(package_dir)
    # The runtime's __all__ is derived from its one listing (surface.py), which
    # tests/runtime/test_surface_listing.py checks; every other module's is a literal.
    exported = {name: _dunder_all(module) for name, module in modules.items() if name != "_runtime/__init__.py"}
    assert exported["__init__.py"], "the package has no __all__"
    for name, items in exported.items():
        if items is None:
            continue
        assert items == sorted(items, key=_isort_key), f"{name}: __all__ is not sorted"
        assert len(items) == len(set(items)), f"{name}: __all__ repeats a name"
        assert set(items) <= _bound_names(modules[name]), f"{name}: __all__ names something the module lacks"
    models = {
        node.name
        for module in _model_modules(modules).values()
        for node in module.body
        if isinstance(node, ast.ClassDef)
    }
    tool_models = _tool_models(modules["tools.py"])
    assert {m for pair in tool_models.values() for m in pair if m} <= set(exported["__init__.py"]) & models
    ruff = _run(_ruff("--select", "RUF022", "--", "."), package_dir)
    assert ruff.returncode == 0, ruff.stdout


# Tools added at run time from a JSON Schema (Registry.add) need a JSON Schema validator; the import
# happens inside that method, so an application that never adds such a tool never needs the package.
# Imported inside the function that needs it, only by tools whose models do not enforce every keyword.
# referencing comes with jsonschema: the schema check builds its own registry, one that never fetches.
# The `serve` extra (DBOS, which brings SQLAlchemy; Starlette; uvicorn) only where the service starts.
OPTIONAL_IMPORTS = {
    ("_runtime/tools/registry.py", "jsonschema"),
    ("_runtime/models/check.py", "jsonschema"),
    ("_runtime/schema/pattern_keywords.py", "jsonschema"),
    ("_runtime/schema/pattern_keywords.py", "referencing"),
    ("_runtime/models/check.py", "referencing"),
    ("_runtime/serve/store.py", "sqlalchemy"),
    ("_runtime/serve/durable.py", "dbos"),
    ("_runtime/serve/wakeup.py", "psycopg"),
    ("_runtime/serve/executor_lock.py", "psycopg"),
    ("_runtime/app/server_limits.py", "h11"),
    ("_runtime/app/server_limits.py", "uvicorn"),
    ("_runtime/serve/http.py", "starlette"),
    ("_runtime/app/serving.py", "uvicorn"),
}


def test_imports_only_pydantic_and_the_standard_library(
    package_dir: Path, parsed: Callable[[Path], dict[str, ast.Module]]
) -> None:
    allowed = set(sys.stdlib_module_names) | {
        "pydantic",
        "pydantic_core",
        package_dir.name,
    }  # pydantic_core: pydantic's own
    for name, module in parsed(package_dir).items():
        top_level = {id(node) for node in module.body}
        optional = {root for file, root in OPTIONAL_IMPORTS if file == name}
        for node in ast.walk(module):
            nested = isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top_level
            if isinstance(node, ast.ImportFrom) and nested and (node.module or "").split(".")[0] in optional:
                continue
            if (
                isinstance(node, ast.Import)
                and nested
                and {alias.name.split(".")[0] for alias in node.names} <= optional
            ):
                continue
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    assert name.startswith("_runtime/"), f"{name}: relative import"
                    continue
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            assert roots <= allowed, f"{name}:{node.lineno} imports {sorted(roots - allowed)}"


def _tool_models(tools_module: ast.Module) -> dict[str, tuple[str, str | None]]:
    """Tool name -> (args model, result model), read from the definitions TOOLS is made of (DeferredTools)."""
    found: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(tools_module):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "DeferredTools":
            module, table = node.args
            assert isinstance(module, ast.Constant) and str(module.value).endswith(".models"), ast.unparse(node)
            assert isinstance(table, ast.Dict), ast.unparse(table)
            for key, definition in zip(table.keys, table.values, strict=True):
                name, fields = ast.literal_eval(key), ast.literal_eval(definition)  # constants only: data, not code
                args, result = fields["args_model"], fields["result_model"]
                assert isinstance(name, str) and isinstance(args, str), ast.unparse(definition)
                assert isinstance(result, str) or result is None
                found[name] = (args, result)
    return found


def _model_modules(modules: dict[str, ast.Module]) -> dict[str, ast.Module]:
    """models.py and the modules of each tool's models, which it imports on first use."""
    return {name: module for name, module in modules.items() if name == "models.py" or name.startswith("_tool_models/")}


def test_one_model_per_tool_arguments_and_result(
    package_dir: Path, parsed: Callable[[Path], dict[str, ast.Module]]
) -> None:
    modules = parsed(package_dir)
    tools = _tool_models(modules["tools.py"])
    if package_dir != COMMITTED:
        assert sorted(tools) == sorted(FRESH_TOOLS)
    assert tools, "tools.py registers no tool"
    classes = [
        node for module in _model_modules(modules).values() for node in module.body if isinstance(node, ast.ClassDef)
    ]
    names = [c.name for c in classes]
    assert len(names) == len(set(names)), "the model modules define a class twice"
    args = [a for a, _ in tools.values()]
    results = [r for _, r in tools.values() if r]
    assert len(args) == len(set(args)), "two tools share an arguments model"
    assert len(results) == len(set(results)), "two tools share a result model"
    assert not set(args) & set(results)
    assert set(args) | set(results) <= set(names)
    bodies: dict[str, str] = {}
    for cls in classes:
        if cls.name in args or cls.name in results:
            continue
        shape = ast.dump(ast.Module(body=[*cls.bases, *cls.body], type_ignores=[]))
        assert shape not in bodies, f"{cls.name} repeats {bodies.get(shape)}: one concept, two models"
        bodies[shape] = cls.name


def test_shared_definitions_become_one_model(fresh: Path) -> None:
    modules = [fresh / "models.py", *sorted((fresh / "_tool_models").glob("*.py"))]
    source = "\n".join(path.read_text(encoding="utf-8") for path in modules)
    classes = re.findall(r"^class (\w+)\(", source, flags=re.MULTILINE)
    assert [c for c in classes if "Address" in c] == ["Address"]
    assert [c for c in classes if "LineItem" in c] == ["LineItem"]
    assert re.search(r"^    ship_to: Address$", source, flags=re.MULTILINE)
    assert re.search(r"^    destination: Address$", source, flags=re.MULTILINE)


def test_every_model_builds_on_first_use_and_none_at_import(package_dir: Path) -> None:
    # Validators are built on first use (defer_build) so that importing the package stays fast; every forward
    # reference must still resolve then.
    # Every name models.py serves, each tool's (imported from its module on first use) included.
    probe = (
        "import importlib, pydantic\n"
        f"models = importlib.import_module('{package_dir.name}.models')\n"
        "named = {k: getattr(models, k) for k in models.__all__}\n"
        "found = [v for k, v in named.items() if isinstance(v, type) and issubclass(v, pydantic.BaseModel)"
        " and v.__module__.startswith(models.__package__ + '.') and '[' not in k]\n"
        "assert found and not any(v.__pydantic_complete__ for v in found), [v for v in found if v.__pydantic_complete__]\n"
        "for v in found: v.model_json_schema()\n"
        "print(sorted(v.__name__ for v in found if not v.__pydantic_complete__))\n"
    )
    result = _run([sys.executable, "-B", "-c", probe], package_dir.parent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
