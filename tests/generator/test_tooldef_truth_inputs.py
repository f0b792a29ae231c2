"""What a tool file holds reaches the build or is reported where it is written.

A key of a provider's tool format that toolgen's tool definition has no field for (Anthropic's `cache_control`,
MCP's `icons` and `execution`, a key beside OpenAI's `function` or around Bedrock's `toolSpec`) is left out with a
warning at its place; `NaN` and the infinities in a JSON file are refused at their line and column.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from support.projects import Project

from toolgen.core.errors import InvalidInputError
from toolgen.ir.lower import lower
from toolgen.project.config import load_config

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}
PROVIDER_KEY = "toolgen's tool definition has no field for it, so no definition the build exports carries it"


def _after(text: str, key: str, before: str = "") -> str:
    """line:col of the value of JSON key `key` (written once in `text`, after `before`)."""
    marker = f'{before}"{key}": '
    assert text.count(marker) == 1, marker
    before = text[: text.index(marker) + len(marker)]
    return f"{before.count(chr(10)) + 1}:{len(before) - before.rfind(chr(10))}"


def _warnings(project: Project, name: str, text: str) -> list[str]:
    project.write(f"schemas/{name}", text)
    return [d.format() for d in lower(load_config(project.root)).warnings]


def test_anthropic_keys_without_a_field_are_reported_where_written(make_project: Callable[..., Project]) -> None:
    # Anthropic's Messages API: a tool is {name, description, input_schema}, optionally `type: "custom"`,
    # `cache_control: {type: ephemeral}` and `defer_loading` (tool search).
    tools = [
        {"name": "cached", "input_schema": SCHEMA, "type": "custom", "cache_control": {"type": "ephemeral"}},
        {"name": "deferred", "input_schema": SCHEMA, "defer_loading": True},
    ]
    text = "[\n" + ",\n".join(json.dumps(tool) for tool in tools) + "\n]\n"
    assert _warnings(make_project(), "a.json", text) == [
        f"schemas/a.json:{_after(text, 'cache_control')}: warning unknown-key tool key 'cache_control' (Anthropic's prompt-caching mark) "
        f"is ignored: {PROVIDER_KEY}",
        f"schemas/a.json:{_after(text, 'defer_loading')}: warning unknown-key tool key 'defer_loading' (the tool-search flag of Anthropic "
        f"and OpenAI) is ignored: {PROVIDER_KEY}",
    ]


def test_mcp_icons_and_execution_are_reported_where_written(make_project: Callable[..., Project]) -> None:
    # MCP 2025-11-25 Tool: `icons` (a list of {src, mimeType, sizes}) and `execution: {taskSupport}`.
    text = """\
tools:
  - name: listed
    inputSchema: {type: object}
    icons:
      - src: https://example.com/icon.png
    execution: {taskSupport: optional}
"""
    assert _warnings(make_project(), "m.yaml", text) == [
        f"schemas/m.yaml:5:7: warning unknown-key tool key 'icons' (MCP's icons) is ignored: {PROVIDER_KEY}",
        "schemas/m.yaml:6:16: warning unknown-key tool key 'execution' (MCP's execution settings) is ignored: "
        + PROVIDER_KEY,
    ]


def test_keys_beside_openai_function_and_around_bedrock_tool_spec_are_reported(
    make_project: Callable[..., Project],
) -> None:
    openai = {"type": "function", "function": {"name": "oa", "parameters": SCHEMA, "extra": 1}, "other": 2}
    bedrock = {
        "toolSpec": {"name": "br", "description": "d", "inputSchema": {"json": SCHEMA, "format": "x"}, "misc": 3},
        "cachePoint": {"type": "default"},
    }
    gemini = {"functionDeclarations": [{"name": "ge", "parameters": SCHEMA}], "googleSearch": {}}
    text = "[\n" + ",\n".join(json.dumps(tool) for tool in (openai, bedrock, gemini)) + "\n]\n"
    assert _warnings(make_project(), "p.json", text) == [
        f"schemas/p.json:{_after(text, 'extra')}: warning unknown-key unknown tool key 'extra' is ignored",
        f"schemas/p.json:{_after(text, 'other')}: warning unknown-key unknown tool key 'other' beside `function` is ignored",
        f"schemas/p.json:{_after(text, 'cachePoint')}: warning unknown-key unknown tool key 'cachePoint' beside `toolSpec` is ignored",
        f"schemas/p.json:{_after(text, 'misc')}: warning unknown-key unknown tool key 'misc' in `toolSpec` is ignored",
        f"schemas/p.json:{_after(text, 'format')}: warning unknown-key unknown tool key 'format' in `toolSpec.inputSchema` is ignored",
        f"schemas/p.json:{_after(text, 'googleSearch')}: warning unknown-key key 'googleSearch' beside `functionDeclarations` is ignored",
    ]


def test_a_type_other_than_a_functions_is_reported_and_a_shapes_own_is_not(
    make_project: Callable[..., Project],
) -> None:
    text = json.dumps(
        [
            {"type": "function", "name": "responses", "parameters": SCHEMA},
            {"type": "custom", "name": "anthropic", "input_schema": SCHEMA},
            {"name": "computer", "type": "computer_20250124", "input_schema": SCHEMA},
        ]
    )
    place = _after(text, "type", '"computer", ')
    assert _warnings(make_project(), "t.json", text) == [
        f"schemas/t.json:{place}: warning unknown-key tool key 'type' is 'computer_20250124', not a function "
        "tool's type; it is ignored"
    ]


@pytest.mark.parametrize(
    ("text", "place", "name"),
    [
        ('{"name": "x", "inputSchema": {"type": "object", "properties": {"n": {"minimum": NaN}}}}', "1:81", "NaN"),
        ('{"name": "x",\n "inputSchema": {"type": "object",\n  "default": {"a": [1, Infinity]}}}', "3:24", "Infinity"),
        ('[{"name": "x", "inputSchema": {"type": "object"}},\n -Infinity]', "2:2", "-Infinity"),
    ],
)
def test_nan_and_infinity_in_json_are_refused_at_their_place(
    make_project: Callable[..., Project], text: str, place: str, name: str
) -> None:
    project = make_project()
    project.write("schemas/n.json", text)
    with pytest.raises(InvalidInputError) as caught:
        lower(load_config(project.root))
    assert [d.format() for d in caught.value.diagnostics] == [
        f"schemas/n.json:{place}: error syntax invalid JSON: {name} is not a JSON number"
    ]


def test_the_build_refuses_nan_at_its_place_with_exit_3(make_project: Callable[..., Project]) -> None:
    project = make_project()
    text = '{"name": "x", "description": "d",\n "inputSchema": {"default": NaN}}'
    project.write("schemas/n.json", text)
    result = project.cli("build")
    assert result.returncode == 3, result.stderr
    assert (
        result.stdout
        == f"schemas/n.json:{_after(text, 'default')}: error syntax invalid JSON: NaN is not a JSON number\n"
    )
    assert not (project.root / "generated").exists()
