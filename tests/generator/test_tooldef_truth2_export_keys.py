"""Each tool's exported schema keeps the `$defs` keys its author wrote, whatever the other tools' schemas hold.

Bundling names every definition once for all tools (the models need unique class names), and the exported schemas
used to carry those names: a second tool's `$defs/Filter` went out as `Filter2`, and adding a tool renamed another
tool's definitions in silence. A tool's payload stands alone, so only its own definitions compete for its keys;
where two of them want one key, the later gets a number and a `defs-renamed` warning says which and why.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema
from support.projects import Project

from toolgen.ir.lower import lower
from toolgen.ir.model import thaw
from toolgen.project.config import load_config


def _tool(name: str, filter_schema: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"{name} things",
        "inputSchema": {
            "type": "object",
            "properties": {"filter": {"$ref": "#/$defs/Filter"}, **more.pop("properties", {})},
            "$defs": {"Filter": filter_schema, **more.pop("defs", {})},
        },
    }


ALPHA = _tool("alpha", {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
BETA = _tool("beta", {"type": "integer", "minimum": 1})
# Another Filter, and keys the canonical models and the other tools' classes hold (Message, AlphaArgs).
GAMMA = _tool(
    "gamma",
    {"type": "array", "items": {"type": "string"}},
    properties={"m": {"$ref": "#/$defs/Message"}, "a": {"$ref": "#/$defs/AlphaArgs"}},
    defs={"Message": {"type": "string"}, "AlphaArgs": {"type": "boolean"}},
)


def _exported(project: Project) -> dict[str, str]:
    """Each tool's entry of `toolgen export --format anthropic`, as the JSON text it is sent as."""
    result = project.cli("export", "--format", "anthropic")
    assert result.returncode == 0, result.stdout + result.stderr
    return {entry["name"]: json.dumps(entry) for entry in json.loads(result.stdout)}


def test_two_tools_keep_their_own_filter_and_a_third_tool_changes_neither(
    make_project: Callable[..., Project],
) -> None:
    project = make_project()
    project.write("schemas/alpha.json", json.dumps(ALPHA))
    project.write("schemas/beta.json", json.dumps(BETA))
    before = _exported(project)
    for name, tool in (("alpha", ALPHA), ("beta", BETA)):
        schema = json.loads(before[name])["input_schema"]
        assert schema == tool["inputSchema"], name
    project.write("schemas/gamma.json", json.dumps(GAMMA))
    after = _exported(project)
    assert after["alpha"] == before["alpha"] and after["beta"] == before["beta"]
    assert json.loads(after["gamma"])["input_schema"] == GAMMA["inputSchema"]
    lowered = lower(load_config(project.root))
    assert [w.rule for w in lowered.warnings] == []
    # The models still need one class per definition: the bundle's names are unchanged there.
    models = json.loads(lowered.project.models_schema)["$defs"]
    assert {"Filter", "Filter2", "Filter3", "Message2", "AlphaArgs2"} <= models.keys()


def test_a_key_two_definitions_of_one_schema_want_is_numbered_with_a_warning(
    make_project: Callable[..., Project],
) -> None:
    project = make_project()
    project.write("schemas/shared.json", json.dumps({"$defs": {"Filter": {"type": "string", "maxLength": 3}}}))
    tool = _tool(
        "delta",
        {"type": "integer"},
        properties={"other": {"$ref": "shared.json#/$defs/Filter"}, "n": {"$ref": "#/$defs/Filter2"}},
        defs={"Filter2": {"type": "boolean"}},
    )
    project.write("schemas/delta.json", json.dumps(tool))
    lowered = lower(load_config(project.root))
    (built,) = lowered.project.tools
    exported = thaw(built.input_schema)
    # The tool's own keys are kept; the shared file's Filter skips Filter2, which the tool wrote itself.
    assert exported["properties"] == {
        "filter": {"$ref": "#/$defs/Filter"},
        "other": {"$ref": "#/$defs/Filter3"},
        "n": {"$ref": "#/$defs/Filter2"},
    }
    assert exported["$defs"] == {
        "Filter": {"type": "integer"},
        "Filter2": {"type": "boolean"},
        "Filter3": {"type": "string", "maxLength": 3},
    }
    assert [w.format() for w in lowered.warnings] == [
        "schemas/shared.json:1:12: warning defs-renamed tool 'delta': the $defs key 'Filter' is exported as "
        "'Filter3' in its input schema: schemas/delta.json#/inputSchema/$defs/Filter has that key in the same "
        "exported schema; rename one of them"
    ]
    validator = jsonschema.Draft202012Validator(exported)
    assert validator.is_valid({"filter": 1, "other": "abc", "n": True})
    assert not validator.is_valid({"other": "abcd"})


def test_a_numbered_key_is_warned_even_where_it_is_the_bundles_own_name(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/shared.json", json.dumps({"$defs": {"Filter": {"type": "string"}}}))
    tool = _tool("echo", {"type": "integer"}, properties={"other": {"$ref": "shared.json#/$defs/Filter"}})
    project.write("schemas/echo.json", json.dumps(tool))
    lowered = lower(load_config(project.root))
    assert thaw(lowered.project.tools[0].input_schema)["$defs"] == {
        "Filter": {"type": "integer"},
        "Filter2": {"type": "string"},
    }
    assert [w.format() for w in lowered.warnings] == [
        "schemas/shared.json:1:12: warning defs-renamed tool 'echo': the $defs key 'Filter' is exported as "
        "'Filter2' in its input schema: schemas/echo.json#/inputSchema/$defs/Filter has that key in the same "
        "exported schema; rename one of them"
    ]


def test_output_schemas_and_keys_a_ref_must_escape_are_kept(make_project: Callable[..., Project]) -> None:
    odd = "a/b ~%c"
    tool = {
        "name": "odd",
        "description": "d",
        "inputSchema": {
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/a~1b%20~0%25c"}, "y": {"$ref": "#/$defs/snake_case"}},
            "$defs": {odd: {"type": "integer"}, "snake_case": {"type": "string"}},
        },
        "outputSchema": {
            "type": "object",
            "properties": {"r": {"$ref": "#/$defs/Result"}},
            "$defs": {"Result": {"type": "string"}},
        },
    }
    project = make_project()
    project.write("schemas/odd.json", json.dumps(tool))
    # Another tool, whose Result takes the plain class name first.
    project.write("schemas/aaa.json", json.dumps(_tool("aaa", {"$ref": "#/$defs/Result"}, defs={"Result": {}})))
    (_, built) = lower(load_config(project.root)).project.tools
    exported = thaw(built.input_schema)
    assert exported["$defs"] == {odd: {"type": "integer"}, "snake_case": {"type": "string"}}
    assert exported["properties"]["x"] == {"$ref": "#/$defs/a~1b%20~0%25c"}
    validator = jsonschema.Draft202012Validator(exported)
    assert [validator.is_valid({"x": value}) for value in (1, "1")] == [True, False]
    assert thaw(built.output_schema)["$defs"] == {"Result": {"type": "string"}}
    # Gemini's OpenAPI subset inlines each reference: the escaped one is found.
    result = project.cli("export", "--format", "gemini", "--gemini-schema", "openapi")
    assert result.returncode == 0, result.stdout + result.stderr
    (declaration,) = [d for d in json.loads(result.stdout)[0]["functionDeclarations"] if d["name"] == "odd"]
    assert declaration["parameters"]["properties"]["x"] == {"type": "INTEGER"}
