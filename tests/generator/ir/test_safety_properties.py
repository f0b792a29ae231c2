"""Property-based tests: names and descriptions in schemas reach the SDK as data, never as code."""

from __future__ import annotations

import ast
import importlib
import io
import json
import keyword
import sys
import tokenize
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.projects import Project

import toolgen
from toolgen.output.build_stages import render_all
from toolgen.project.config import load_config

INJECTION = '"""; import os; os.system("x") #'
# Modules that run commands or load code: schema text must never bring them into the generated package.
FORBIDDEN_IMPORTS = frozenset(
    {"os", "posix", "nt", "subprocess", "shutil", "sys", "socket", "ctypes", "pty", "runpy", "importlib", "pickle"}
)
DANGEROUS_CALLS = frozenset({"system", "popen", "exec", "eval", "compile", "__import__", "run"})

KEYWORDS = tuple(sorted({*keyword.kwlist, *keyword.softkwlist}))
# fmt: off
SHADOWS = (
    "model_config", "model_fields", "model_dump", "model_validate", "model_post_init",
    "model_extra", "schema", "dict", "copy", "json", "construct", "validate", "fields", "parse_obj",
    "root", "self", "str", "int", "float", "bool", "list", "Any", "Field", "Annotated", "Literal",
    "ConfigDict", "SchemaModel", "CanonicalModel", "RootModel", "ToolSpec", "TOOLS", "os", "system",
    "__init__", "__class__", "__fields__", "_private", "_", "__",
)
COLLIDING = ("a-b", "a_b", "A B", "a.b", "a b", "A_B", "aB", "a--b", "a__b", "A-B")
ODD = (
    "1x", "123", "0", "-", ".", " ", "é", "café", "cafe\u0301", "naïve", "Ünïcödé", "Straße",
    "数据", "Σ", "🙂", "x🙂", "'", '"', "\\", '"""', "'''", "a\nb", "$ref", "~1", "a/b", "{x}",
    "%s", INJECTION,
)
DESCRIPTION_PIECES = (
    '"', "'", '"""', "'''", '\\"""', "\\", "\\n", "\\\\", "\n", "\r", "\r\n", "\t", "\x7f",
    "\x01", "\x1b", " ", "é", "🙂", "{x}", "%s", "${x}", "#", INJECTION,
)
# fmt: on
ATOMS = KEYWORDS + SHADOWS + COLLIDING + ODD
NAME_CHARS = "aZ_09 .-é\u0301Åß数Σ🙂'\"\\"
SEPARATORS = ("", "-", ".", " ", "_")

# Python folds identifiers with NFKC (`ﬁle` is `file`), so such names get a test of their own below.
names = st.one_of(
    st.sampled_from(ATOMS),
    st.tuples(st.sampled_from(ATOMS), st.sampled_from(SEPARATORS), st.sampled_from(ATOMS)).map("".join),
    st.text(alphabet=NAME_CHARS, min_size=1, max_size=10),
    st.text(alphabet=st.characters(categories=("Lu", "Ll", "Lo", "Mn", "Nd")), min_size=1, max_size=6),
).filter(lambda name: unicodedata.normalize("NFKC", name) == name)

# Line breaks for str.splitlines() but not for Python's tokenizer; they have tests of their own below.
SPLITLINES_ONLY = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
descriptions = st.one_of(
    st.just(INJECTION),
    st.lists(
        st.one_of(
            st.sampled_from(DESCRIPTION_PIECES),
            st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=31), max_size=3),
            st.text(
                alphabet=st.characters(exclude_characters="\x00", exclude_categories=("Cs",)),
                max_size=6,
            ),
        ),
        max_size=8,
    )
    .map("".join)
    .map(lambda text: text.translate({ord(c): " " for c in SPLITLINES_ONLY})),
)

# Property kinds with a schema and a value that schema accepts.
KINDS: dict[str, tuple[dict[str, Any], Any]] = {
    "string": ({"type": "string"}, "v"),
    "integer": ({"type": "integer"}, 7),
    "number": ({"type": "number"}, 1.5),
    "boolean": ({"type": "boolean"}, True),
    "array": ({"type": "array", "items": {"type": "string"}}, ["a", "b"]),
    "object": (
        {"type": "object", "properties": {"inner": {"type": "string"}}, "required": ["inner"]},
        {"inner": "v"},
    ),
}

SETTINGS = settings(
    max_examples=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _without_providers(project: Project) -> Project:
    """The project, its build checking no provider's rules: the names here are hostile on purpose (no provider takes
    `.`), and what is tested is that the generator makes them safe, not that a provider would refuse them."""
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "lint:\n  providers: []\n", encoding="utf-8")
    return project


def _new_project(make_project: Callable[..., Project]) -> Project:
    return _without_providers(make_project(package=f"sdk_{uuid.uuid4().hex[:12]}"))


def _write_tools(project: Project, tools: list[dict[str, Any]]) -> None:
    project.write("schemas/tools.json", json.dumps({"tools": tools}, ensure_ascii=False, indent=1))


def _build(project: Project, tools: list[dict[str, Any]]) -> dict[str, ast.Module]:
    """Build `tools` from a JSON file; every generated module, compiled and parsed."""
    _write_tools(project, tools)
    result = toolgen.build(project.root, force=True)
    assert result.written
    return _trees(project)


def _rendered(project: Project, tools: list[dict[str, Any]]) -> dict[str, ast.Module]:
    """`tools` through every stage of the build up to its files (what `check` renders), those files written to
    the package's folder as the build writes them: every generated module, compiled and parsed. The build's own
    import-and-validate check and its transactional write have tests of their own (test_build_safety.py), and this
    module imports and validates each package itself; leaving them out halves the cost of an example."""
    _write_tools(project, tools)
    rendered = render_all(load_config(project.root))
    for name, text in rendered.package.items():
        path = project.package_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return _trees(project)


def _trees(project: Project) -> dict[str, ast.Module]:
    trees = {}
    for path in sorted([*project.package_dir.glob("*.py"), *project.package_dir.glob("_tool_models/*.py")]):
        source = path.read_text(encoding="utf-8")
        compile(source, str(path), "exec", dont_inherit=True)
        trees[path.relative_to(project.package_dir).as_posix()] = ast.parse(source, filename=str(path))
    assert {"__init__.py", "models.py", "tools.py", "validators.py"} <= trees.keys()
    return trees


def _assert_no_code_from_schema(trees: dict[str, ast.Module], package: str) -> None:
    """Schema-dependent modules (the package's top level) hold no dangerous code; `_runtime/` is toolgen's."""
    allowed = (set(sys.stdlib_module_names) | {"pydantic", package}) - FORBIDDEN_IMPORTS
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
                assert roots <= allowed, f"{name}: import {roots - allowed}"
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0 and node.module is not None
                assert node.module.split(".")[0] in allowed, f"{name}: from {node.module} import"
            elif isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                assert called not in DANGEROUS_CALLS, f"{name}: call to {ast.unparse(func)}"
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                assert node.id != "os", f"{name}: `os` used at line {node.lineno}"


def _models(trees: dict[str, ast.Module]) -> ast.Module:
    """models.py and each tool's model module (imported on first use) as one module: every model of the package."""
    modules = [tree for name, tree in trees.items() if name == "models.py" or name.startswith("_tool_models/")]
    return ast.Module(body=[node for tree in modules for node in tree.body], type_ignores=[])


def _assert_unique_definitions(models: ast.Module) -> None:
    classes = [node for node in models.body if isinstance(node, ast.ClassDef)]
    class_names = [node.name for node in classes]
    assert len(class_names) == len(set(class_names)), "a class is defined twice in models.py"
    for node in classes:
        fields = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        assert len(fields) == len(set(fields)), f"{node.name} defines a field twice: {fields}"


@contextmanager
def _imported(project: Project) -> Iterator[ModuleType]:
    generated = str(project.root / "generated")
    sys.path.insert(0, generated)
    importlib.invalidate_caches()
    try:
        yield importlib.import_module(project.package)
    finally:
        sys.path.remove(generated)
        for module in [m for m in sys.modules if m == project.package or m.startswith(project.package + ".")]:
            del sys.modules[module]


def _field_keys(model: Any) -> set[str]:
    return {info.alias if info.alias is not None else attr for attr, info in model.model_fields.items()}


@st.composite
def tool_sets(draw: st.DrawFn) -> list[tuple[dict[str, Any], list[str]]]:
    """Tools with adversarial names, each with the kind of every property."""
    tools = []
    for tool_name in draw(st.lists(names, min_size=1, max_size=3, unique=True)):
        properties = draw(st.lists(st.one_of(names, st.just("")), max_size=5, unique=True))
        kinds = [draw(st.sampled_from(sorted(KINDS))) for _ in properties]
        required = draw(st.lists(st.sampled_from(properties), unique=True)) if properties else []
        tools.append(
            (
                {
                    "name": tool_name,
                    "description": f"Tool {tool_name}",
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            p: {**KINDS[k][0], "description": f"property {p}"}
                            for p, k in zip(properties, kinds, strict=True)
                        },
                        "required": required,
                    },
                },
                kinds,
            )
        )
    return tools


@SETTINGS
@given(tools=tool_sets())
def test_adversarial_names_become_identifiers_and_keys_survive(
    make_project: Callable[..., Project], tools: list[tuple[dict[str, Any], list[str]]]
) -> None:
    project = _new_project(make_project)
    trees = _rendered(project, [tool for tool, _ in tools])
    _assert_no_code_from_schema(trees, project.package)
    _assert_unique_definitions(_models(trees))
    with _imported(project) as sdk:
        assert set(sdk.TOOLS) == {tool["name"] for tool, _ in tools}
        assert len({spec.args_model for spec in sdk.TOOLS.values()}) == len(tools)
        for tool, kinds in tools:
            spec = sdk.TOOLS[tool["name"]]
            assert spec.name == tool["name"]
            schema = tool["inputSchema"]
            properties = list(schema["properties"])
            assert set(spec.args_model.model_json_schema()["properties"]) == set(properties)
            valid = {p: KINDS[k][1] for p, k in zip(properties, kinds, strict=True)}
            parsed = spec.args_model.model_validate(valid)
            assert not parsed.model_extra, f"keys that matched no field: {parsed.model_extra}"
            assert parsed.model_dump(by_alias=True) == valid
            assert sdk.validate_tool_arguments(tool["name"], json.dumps(valid)) == parsed
            assert spec.input_schema["properties"] == schema["properties"]
            assert _field_keys(spec.args_model) == set(properties)


@st.composite
def described_tools(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[str]]:
    texts = draw(st.lists(descriptions, min_size=10, max_size=10))
    choices = draw(st.lists(descriptions, min_size=2, max_size=2, unique=True))
    return _described_shape(texts, choices), [*texts, *choices]


def _described_shape(texts: list[str], choices: list[str]) -> list[dict[str, Any]]:
    """Two tools of a fixed shape; only the texts (descriptions, a title, enum values) vary."""
    d = texts
    return [
        {
            "name": "alpha",
            "title": d[0],
            "description": d[1],
            "inputSchema": {
                "type": "object",
                "description": d[2],
                "properties": {
                    "first": {"type": "string", "description": d[3]},
                    "second": {"type": "integer", "description": d[4]},
                },
                "required": ["first"],
            },
            "outputSchema": {
                "type": "object",
                "properties": {"out": {"type": "string", "description": d[5]}},
            },
        },
        {
            "name": "beta",
            "description": d[6],
            "inputSchema": {
                "type": "object",
                "properties": {
                    "choice": {"type": "string", "enum": choices, "description": d[7]},
                    "nested": {
                        "type": "object",
                        "description": d[8],
                        "properties": {"leaf": {"type": "string", "description": d[9]}},
                    },
                },
            },
        },
    ]


class _Skeleton(ast.NodeTransformer):
    """A module with its text taken out: docstrings dropped, every string constant blanked."""

    def __init__(self, package: str) -> None:
        self.package = package

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None
        return self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        return ast.Constant("") if isinstance(node.value, str) else node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.ImportFrom:
        if node.module and node.module.split(".")[0] == self.package:
            node.module = "PACKAGE" + node.module[len(self.package) :]
        return node


def _skeletons(trees: dict[str, ast.Module], package: str) -> dict[str, str]:
    outline = [
        f"{node.name}: {' '.join(ast.unparse(s.target) for s in node.body if isinstance(s, ast.AnnAssign))}"
        for node in _models(trees).body
        if isinstance(node, ast.ClassDef)
    ]
    dumps = {name: ast.dump(_Skeleton(package).visit(tree)) for name, tree in trees.items()}
    return {"models.py outline": "\n".join(outline), **dumps}


def _assert_same_code(trees: dict[str, ast.Module], package: str, expected: dict[str, str]) -> None:
    """The modules differ from `expected` in string constants only; classes and fields first."""
    found = _skeletons(trees, package)
    key = "models.py outline"
    assert found[key].splitlines() == expected[key].splitlines()
    for name in sorted(expected.keys() | found.keys()):
        assert found.get(name) == expected.get(name), f"{name} differs beyond its strings"


@pytest.fixture(scope="module")
def plain_skeletons(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    project = Project(tmp_path_factory.mktemp("plain"), "sdk_plain")
    trees = _build(project, _described_shape([f"text {i}" for i in range(10)], ["one", "two"]))
    return _skeletons(trees, project.package)


@SETTINGS
@given(case=described_tools())
def test_adversarial_descriptions_stay_string_literals(
    make_project: Callable[..., Project],
    plain_skeletons: dict[str, str],
    case: tuple[list[dict[str, Any]], list[str]],
) -> None:
    tools, texts = case
    project = _new_project(make_project)
    trees = _rendered(project, tools)
    _assert_no_code_from_schema(trees, project.package)
    _assert_same_code(trees, project.package, plain_skeletons)
    d, choices = texts[:10], texts[10:]
    with _imported(project) as sdk:
        alpha, beta = sdk.TOOLS["alpha"], sdk.TOOLS["beta"]
        assert (alpha.title, alpha.description, beta.description) == (d[0], d[1], d[6])
        assert alpha.input_schema["description"] == d[2]
        assert [alpha.input_schema["properties"][p]["description"] for p in ("first", "second")] == [d[3], d[4]]
        assert alpha.output_schema["properties"]["out"]["description"] == d[5]
        choice, nested = beta.input_schema["properties"]["choice"], beta.input_schema["properties"]["nested"]
        assert (choice["description"], choice["enum"], nested["description"]) == (d[7], choices, d[8])
        assert nested["properties"]["leaf"]["description"] == d[9]
        for value in choices:
            parsed = beta.args_model.model_validate({"choice": value, "nested": {"leaf": value}})
            assert parsed.model_dump(by_alias=True, exclude_unset=True) == {"choice": value, "nested": {"leaf": value}}
        assert alpha.args_model.model_validate({"first": INJECTION}).model_dump(by_alias=True)["first"] == INJECTION


def _tokens_mentioning(source: str, text: str) -> list[tokenize.TokenInfo]:
    return [tok for tok in tokenize.generate_tokens(io.StringIO(source).readline) if text in tok.string]


def test_injection_in_descriptions_is_only_ever_a_string(make_project: Callable[..., Project]) -> None:
    project = _new_project(make_project)
    tools = [
        {
            "name": "get_weather",
            "title": INJECTION,
            "description": INJECTION,
            "inputSchema": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": INJECTION}},
            },
            "outputSchema": {
                "type": "object",
                "properties": {"ok": {"type": "boolean", "description": INJECTION}},
            },
        }
    ]
    trees = _build(project, tools)
    _assert_no_code_from_schema(trees, project.package)
    strings_with_injection = 0
    # The files rendered from the schemas; runtime modules are copied verbatim and may use `os` themselves.
    rendered = sorted(project.package_dir.glob("*.py"))
    for path in rendered:
        source = path.read_text(encoding="utf-8")
        for token in _tokens_mentioning(source, "os.system"):
            assert token.type == tokenize.STRING, f"{path.name}:{token.start[0]}: {token.line!r}"
            strings_with_injection += 1
        assert not any(
            tok.type == tokenize.NAME and tok.string == "os"
            for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        )
    assert strings_with_injection >= 4
    constants = {n.value for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.Constant)}
    assert INJECTION in constants
    with _imported(project) as sdk:
        spec = sdk.TOOLS["get_weather"]
        assert (spec.title, spec.description) == (INJECTION, INJECTION)
        assert spec.input_schema["properties"]["city"]["description"] == INJECTION
        assert spec.output_schema["properties"]["ok"]["description"] == INJECTION


def test_injection_as_tool_and_property_name_is_only_ever_a_string(make_project: Callable[..., Project]) -> None:
    project = _new_project(make_project)
    schema = {"type": "object", "properties": {INJECTION: {"type": "string"}}, "required": [INJECTION]}
    trees = _build(project, [{"name": INJECTION, "description": INJECTION, "inputSchema": schema}])
    _assert_no_code_from_schema(trees, project.package)
    for path in sorted(project.package_dir.glob("*.py")):
        for token in _tokens_mentioning(path.read_text(encoding="utf-8"), "os.system"):
            assert token.type == tokenize.STRING, f"{path.name}:{token.start[0]}: {token.line!r}"
    with _imported(project) as sdk:
        spec = sdk.TOOLS[INJECTION]
        assert spec.name == INJECTION
        parsed = spec.args_model.model_validate({INJECTION: "x"})
        assert parsed.model_dump(by_alias=True) == {INJECTION: "x"}
        assert not parsed.model_extra


def test_property_descriptions_reach_the_args_model(make_project: Callable[..., Project]) -> None:
    project = _new_project(make_project)
    texts = {
        "plain": "The city name.",
        "injection": INJECTION,
        "quotes": "say \"hi\" 'there' \\ \n\tnext\r\nline '''",
    }
    schema = {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in texts.items()},
    }
    _build(project, [{"name": "t", "inputSchema": schema}])
    with _imported(project) as sdk:
        model = sdk.TOOLS["t"].args_model
        by_key = {info.alias or attr: info.description for attr, info in model.model_fields.items()}
        assert by_key == texts
        json_schema = model.model_json_schema()["properties"]
        assert {key: json_schema[key].get("description") for key in texts} == texts


COMPATIBILITY = (("ﬁle",), ("ℕ",), ("ｆｕｌｌ", "full"), ("ﬁle", "file"))


@pytest.fixture(scope="module")
def compatibility_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, ast.Module]]:
    """One package, a tool `t<i>` for each case of COMPATIBILITY: each tool's models are a module of their own."""
    project = _without_providers(Project(tmp_path_factory.mktemp("compatibility"), "sdk_compatibility"))
    tools = [
        {
            "name": f"t{index}",
            "inputSchema": {
                "type": "object",
                "properties": {p: {"type": "string"} for p in properties},
                "required": list(properties),
            },
        }
        for index, properties in enumerate(COMPATIBILITY)
    ]
    return project, _build(project, tools)


@pytest.mark.parametrize("index", range(len(COMPATIBILITY)), ids=lambda index: repr(list(COMPATIBILITY[index])))
def test_compatibility_characters_in_property_names(
    compatibility_build: tuple[Project, dict[str, ast.Module]], index: int
) -> None:
    project, trees = compatibility_build
    properties = COMPATIBILITY[index]
    _assert_unique_definitions(_models(trees))
    with _imported(project) as sdk:
        model = sdk.TOOLS[f"t{index}"].args_model
        assert set(model.model_json_schema()["properties"]) == set(properties)
        valid = {p: f"value of {p}" for p in properties}
        assert model.model_validate(valid).model_dump(by_alias=True) == valid


SEPARATOR_SHAPE = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}},
}


def _separator_tools(descriptions: list[str]) -> list[dict[str, Any]]:
    """A tool `t<i>` of SEPARATOR_SHAPE for each description, which is the tool's and its property `a`'s."""
    tools = []
    for index, description in enumerate(descriptions):
        schema = json.loads(json.dumps(SEPARATOR_SHAPE))
        schema["properties"]["a"]["description"] = description
        tools.append({"name": f"t{index}", "description": description, "inputSchema": schema})
    return tools


def _separated(separator: str) -> str:
    return "x" + separator * 3


@pytest.fixture(scope="module")
def separator_skeletons(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    project = Project(tmp_path_factory.mktemp("separators"), "sdk_plain")
    return _skeletons(_build(project, _separator_tools(["x"] * len(SPLITLINES_ONLY))), project.package)


@pytest.fixture(scope="module")
def separator_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, ast.Module]]:
    """One package, the tool `t<i>` described with the i-th separator of SPLITLINES_ONLY; every test reads it."""
    project = _without_providers(Project(tmp_path_factory.mktemp("separated"), "sdk_separated"))
    return project, _build(project, _separator_tools([_separated(c) for c in SPLITLINES_ONLY]))


@pytest.mark.parametrize("separator", list(SPLITLINES_ONLY), ids=lambda c: f"U+{ord(c):04X}")
def test_description_with_splitlines_only_separators_changes_no_code(
    separator_build: tuple[Project, dict[str, ast.Module]], separator_skeletons: dict[str, str], separator: str
) -> None:
    project, trees = separator_build
    description = _separated(separator)
    tool = f"t{SPLITLINES_ONLY.index(separator)}"
    _assert_same_code(trees, project.package, separator_skeletons)
    with _imported(project) as sdk:
        assert sdk.TOOLS[tool].description == description
        model = sdk.TOOLS[tool].args_model
        assert set(model.model_json_schema()["properties"]) == {"a", "b", "c"}
        assert "extras" in sdk.ToolMessage.model_json_schema()["properties"]


def test_line_separators_in_descriptions_cannot_smuggle_code(make_project: Callable[..., Project]) -> None:
    project = _new_project(make_project)
    payload = "d'''; import os; os.system('x') #"
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "description": "x" + "\x1c" * 7},
            "c": {"type": "string", "description": "sacrificial\nx = '''"},
            payload: {"type": "string"},
        },
    }
    trees = _build(project, [{"name": "Toolg", "inputSchema": schema}])
    _assert_no_code_from_schema(trees, project.package)
