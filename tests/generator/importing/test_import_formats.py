"""`toolgen import --from F`: the file's shape is checked (another format's list is exit 3, named), Bedrock reads,
and Gemini's proto3 JSON (snake_case, enum numbers) reads as the request decoder reads it, then builds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli_in_process import Ran, toolgen_in
from support.projects import REPO_ROOT, SHARED, Project

from toolgen.runtime.wires.codecs import decode
from toolgen.runtime.wires.export import export_tools

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "tools"
RECORDED_GEMINI = SHARED / "payloads" / "gemini" / "request"
TOOL: dict[str, Any] = {
    "name": "get_weather",
    "description": "Get the weather.",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
ANTHROPIC = """[
  {"name": "get_weather", "description": "Get the weather.",
   "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
  {"name": "get_time", "input_schema": {"type": "object"}}
]
"""


def toolgen(*args: str, cwd: Path) -> Ran:
    """`toolgen ARGS` in this process (click's runner): its exit code and output, as a process would give them."""
    return toolgen_in(cwd, *args)


def imported(folder: Path) -> dict[str, dict[str, Any]]:
    """Every tool the import wrote under `folder`, by name."""
    found = {}
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for tool in data.get("tools", []):
            found[tool["name"]] = tool
    return found


def test_an_anthropic_list_read_as_openai_is_refused_naming_anthropic(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(ANTHROPIC, encoding="utf-8")
    result = toolgen("import", "a.json", "--from", "openai", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert result.stdout.startswith("a.json:2:3: error import tools[0] looks like an anthropic tool (`input_schema`)")
    assert "not openai (so do 1 more of its 2 entries): import the file with --from anthropic" in result.stdout
    assert not (tmp_path / "schemas").exists()
    # Read as what it is, every tool keeps its schema: none accepts anything.
    result = toolgen("import", "a.json", "--from", "anthropic", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tools = imported(tmp_path / "schemas" / "tools")
    assert tools["get_weather"]["inputSchema"]["properties"] == {"city": {"type": "string"}}
    assert tools["get_time"]["inputSchema"] == {"type": "object"}


EXPORTS = {"openai": "openai", "openai-responses": "openai", "anthropic": "anthropic", "gemini": "gemini"}
EXPORTS |= {"bedrock": "bedrock", "mcp": "mcp"}


@pytest.mark.parametrize("exported", sorted(EXPORTS))
def test_every_export_is_refused_by_every_other_reader_and_named(tmp_path: Path, exported: str) -> None:
    (tmp_path / "tools.json").write_text(json.dumps(export_tools([TOOL], exported).tools), encoding="utf-8")
    actual = EXPORTS[exported]
    for reader in sorted(set(EXPORTS.values())):
        result = toolgen("import", "tools.json", "--from", reader, "-o", f"out-{reader}", cwd=tmp_path)
        if reader == actual:
            assert result.returncode == 0, result.stderr
            assert imported(tmp_path / f"out-{reader}")["get_weather"]["inputSchema"] == TOOL["inputSchema"]
        else:
            assert result.returncode == 3, (reader, result.stderr)
            assert "tool (`" in result.stdout and f"not {reader}" in result.stdout, result.stdout
            assert f"import the file with --from {actual}" in result.stdout, result.stdout
            assert result.stdout.startswith("tools.json:1:2: error import tools[0] looks like"), result.stdout


def test_a_request_of_another_format_is_named_too(tmp_path: Path) -> None:
    converse = {"modelId": "m", "toolConfig": {"tools": export_tools([TOOL], "bedrock").tools}}
    (tmp_path / "converse.json").write_text(json.dumps(converse), encoding="utf-8")
    result = toolgen("import", "converse.json", "--from", "openai", cwd=tmp_path)
    assert result.returncode == 3
    assert "this looks like a bedrock Converse request (`toolConfig.tools`), not openai" in result.stdout
    (tmp_path / "gemini.json").write_text(json.dumps(export_tools([TOOL], "gemini").tools[0]), encoding="utf-8")
    result = toolgen("import", "gemini.json", "--from", "anthropic", cwd=tmp_path)
    assert result.returncode == 3
    assert "a gemini tool (`functionDeclarations`), not anthropic: import it with --from gemini" in result.stdout


def test_bedrock_reads_a_tool_list_a_tool_config_and_a_whole_converse_request(tmp_path: Path) -> None:
    entries = export_tools([TOOL, {"name": "ping", "inputSchema": {"type": "object"}}], "bedrock").tools
    request = {
        "messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
        "toolConfig": {"tools": [*entries, {"cachePoint": {"type": "default"}}], "toolChoice": {"auto": {}}},
    }
    forms = {"list": entries, "config": {"tools": entries}, "request": request}
    for form, data in forms.items():
        (tmp_path / f"{form}.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
        result = toolgen("import", f"{form}.json", "--from", "bedrock", "-o", form, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        tools = imported(tmp_path / form)
        assert tools["get_weather"] == TOOL
        assert tools["ping"] == {"name": "ping", "inputSchema": {"type": "object"}}
    assert "toolConfig.tools[2]: `cachePoint` is the provider's own tool, not a function; not imported" in result.stderr
    # A toolSpec without its schema is refused where it is, not read as a tool that accepts anything.
    broken = {"toolConfig": {"tools": [{"toolSpec": {"name": "x", "inputSchema": {}}}]}}
    (tmp_path / "broken.json").write_text(json.dumps(broken), encoding="utf-8")
    result = toolgen("import", "broken.json", "--from", "bedrock", cwd=tmp_path)
    assert result.returncode == 3
    assert "broken.json:1:69: error import inputSchema.json is missing (an object)" in result.stdout


def test_provider_tools_and_unknown_fields_are_noted_not_dropped_silently(tmp_path: Path) -> None:
    tools = [
        {"type": "function", "name": "get_weather", "parameters": TOOL["inputSchema"], "defer_loading": True},
        {"type": "web_search"},
        {"type": "function", "function": {"name": "ping"}},
    ]
    (tmp_path / "responses.json").write_text(json.dumps({"model": "m", "tools": tools}), encoding="utf-8")
    result = toolgen("import", "responses.json", "--from", "openai", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("toolgen: note: ")]
    assert notes == [
        "toolgen: note: tools[0].defer_loading ('get_weather'): not a field of toolgen's tool definition; not imported",
        "toolgen: note: tools[1]: `type: web_search` is the provider's own tool, not a function; not imported",
    ]
    # "Omitting parameters defines a function with an empty parameter list" (OpenAI): not a schema of anything.
    assert imported(tmp_path / "schemas" / "tools")["ping"]["inputSchema"] == {"type": "object", "properties": {}}


GENAI_WEATHER = {
    "type": "object",
    "properties": {
        "city": {"description": "City name.", "type": "string"},
        "unit": {"enum": ["celsius", "fahrenheit", None], "type": ["string", "null"]},
        "days": {"maximum": 7.0, "minimum": 1.0, "type": "integer"},
        "tags": {"items": {"type": "string"}, "maxItems": 3, "type": "array"},
    },
    "propertyOrdering": ["city", "unit", "days", "tags"],
    "required": ["city"],
}


def _build(make_project: Any, source: Path) -> tuple[Project, dict[str, dict[str, Any]], str]:
    fresh: Project = make_project("imported")
    result = fresh.cli("import", str(source), "--from", "gemini")
    assert result.returncode == 0, result.stderr
    built = fresh.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    return fresh, imported(fresh.root / "schemas" / "tools"), result.stderr


def test_google_genai_tools_as_the_sdk_dumps_them_import_and_build(make_project: Any) -> None:
    _, tools, stderr = _build(make_project, FIXTURES / "google-genai-tools.json")
    weather = tools["get_weather"]["inputSchema"]
    assert {key: weather[key] for key in GENAI_WEATHER} == GENAI_WEATHER
    assert tools["lookup"]["inputSchema"]["required"] == ["q"]  # parameters_json_schema
    assert tools["lookup"]["outputSchema"] == {"type": "object", "properties": {"hits": {"type": "integer"}}}
    assert tools["ping"]["inputSchema"] == {"type": "object", "properties": {}}
    assert "tools[1]: `google_search` is the provider's own tool" in stderr
    assert "function_declarations[2].behavior ('ping'): not a field of toolgen's tool definition" in stderr


@pytest.mark.parametrize("name", ["google-genai-request.json", "vertex-proto-tools.json"])
def test_the_importer_reads_gemini_tools_as_the_request_decoder_does_and_builds(make_project: Any, name: str) -> None:
    source = FIXTURES / name
    _, tools, _ = _build(make_project, source)
    body = json.loads(source.read_text(encoding="utf-8"))
    decoded = decode({"contents": [{"role": "user", "parts": [{"text": "hi"}]}], **body}, "gemini", "request")
    assert [tools[tool["name"]] for tool in decoded.tools] == decoded.tools
    weather = tools["get_weather"]["inputSchema"]
    assert weather["properties"]["tags"]["maxItems"] == 3  # int64 "3" under proto3's JSON rules
    assert weather["properties"]["unit"]["type"] == ["string", "null"]
    if name.startswith("vertex"):
        # proto3's defaults of fields not set say nothing: an empty enum would refuse every value.
        assert weather["properties"]["note"] == {"type": "string"}
        assert tools["lookup"]["outputSchema"] == {"type": "object", "properties": {"hits": {"type": "integer"}}}


@pytest.mark.parametrize(
    "name", ["gemini20flash-enum-as-int-function-response.json", "gemini25flash-function-response.json"]
)
def test_recorded_gemini_requests_import_and_build(make_project: Any, name: str) -> None:
    source = RECORDED_GEMINI / name
    if not source.is_file():
        pytest.skip(f"../shared/payloads/gemini/request/{name} not present (looked for {source})")
    _, tools, _ = _build(make_project, source)
    decoded = decode(json.loads(source.read_text(encoding="utf-8")), "gemini", "request")
    assert [tools[tool["name"]] for tool in decoded.tools] == decoded.tools
    for tool in tools.values():
        schema = tool["inputSchema"]
        assert schema["type"] == "object" and schema["properties"], tool  # never a schema that accepts anything
        assert all(isinstance(p.get("type"), str) for p in schema["properties"].values()), tool
