"""Export notes: every field of a tool a format does not carry is named, per tool and per field, for every format;
`describe_meta` folds meta into the description every provider (and so the model in run()) reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.local_http import Answer, LocalServer
from support.projects import Project

import toolgen
from toolgen.runtime.mcp.convert import definitions_from_mcp
from toolgen.runtime.wires.export import FORMATS, export_tools

FULL: dict[str, Any] = {
    "name": "get_weather",
    "title": "TITLE-MARK",
    "description": "Get the weather.",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    "outputSchema": {"type": "object", "description": "OUTPUT-MARK"},
    "returnDirect": True,
    "requiresApproval": True,
    "timeout": 7.5,
    "strict": True,
    "meta": {"owner": "META-MARK"},
    "annotations": {"readOnlyHint": True, "title": "ANNOTATION-MARK"},
}
# Where each field shows in an entry that carries it (the rest of the entry is name, description and schema).
MARKS = {
    "title": '"TITLE-MARK"',
    "outputSchema": '"OUTPUT-MARK"',
    "meta": '"META-MARK"',
    "annotations": '"ANNOTATION-MARK"',
    "returnDirect": '"returnDirect": true',
    "requiresApproval": '"requiresApproval": true',
    "timeout": '"timeout": 7.5',
    "strict": '"strict": true',
}
LOOP = ("returnDirect", "requiresApproval", "timeout")


@pytest.mark.parametrize("provider", FORMATS)
def test_every_field_a_format_does_not_carry_is_a_note_per_tool(provider: str) -> None:
    other = {**FULL, "name": "get_time", "meta": {"owner": "META-MARK"}}
    result = export_tools([FULL, other], provider)
    for tool, entry in zip(("get_weather", "get_time"), _entries(result.tools), strict=True):
        text = json.dumps(entry)
        for field, mark in MARKS.items():
            said = [note for note in result.notes if note.startswith(f"{tool}: {field} ")]
            if provider == "mcp":
                # MCP carries every field; toolgen's own travel in _meta, which only toolgen's client reads: said so.
                assert mark in text, (field, text)
                assert bool(said) == (field in (*LOOP, "strict")), (field, said)
                assert all(f"travels in _meta.{field} (MCP has no field for it" in note for note in said)
            elif mark in text:
                assert not said, (provider, field, said)
            elif field in LOOP:
                assert said == [f"{tool}: {field} is enforced by the agent loop, not sent to {result.provider}"]
            elif field == "strict":
                assert said == [
                    f"{tool}: strict is not sent to {result.provider} (toolgen sends strict mode to the openai "
                    "formats only)"
                ]
            elif field == "meta":
                assert f"{tool}: meta key owner is not sent to {result.provider} (it has no field for meta; " in (
                    "\n".join(result.notes)
                )
            else:
                assert said == [f"{tool}: {field} is not sent to {result.provider} (it has no field for it)"]


def _entries(tools: list[Any]) -> list[Any]:
    """One entry per tool: Gemini holds every declaration in one entry."""
    if tools and "functionDeclarations" in tools[0]:
        return list(tools[0]["functionDeclarations"])
    return tools


def test_anthropic_notes_read_as_sentences() -> None:
    result = export_tools([FULL], "anthropic")
    assert result.notes == (
        "get_weather: title is not sent to anthropic (it has no field for it)",
        "get_weather: outputSchema is not sent to anthropic (it has no field for it)",
        "get_weather: annotations is not sent to anthropic (it has no field for it)",
        "get_weather: strict is not sent to anthropic (toolgen sends strict mode to the openai formats only)",
        "get_weather: returnDirect is enforced by the agent loop, not sent to anthropic",
        "get_weather: requiresApproval is enforced by the agent loop, not sent to anthropic",
        "get_weather: timeout is enforced by the agent loop, not sent to anthropic",
        "get_weather: meta key owner is not sent to anthropic (it has no field for meta; describeMeta can fold "
        "meta into the description)",
    )
    # A tool of name, description and schema only loses nothing: no note.
    assert export_tools([{k: FULL[k] for k in ("name", "description", "inputSchema")}], "anthropic").notes == ()


def test_gemini_carries_the_output_schema_only_beside_parameters_json_schema() -> None:
    tool = {k: FULL[k] for k in ("name", "description", "inputSchema", "outputSchema")}
    assert export_tools([tool], "gemini").notes == ()
    (note,) = export_tools([tool], "gemini", gemini="openapi").notes
    assert note.startswith("get_weather: outputSchema is not sent to gemini with its OpenAPI `parameters` subset")


def test_cli_export_prints_the_notes_on_stderr(project: Project) -> None:
    project.write(
        "schemas/weather.yaml",
        """\
        tools:
          - name: get_current_weather
            title: Weather
            description: Get the current weather.
            requiresApproval: true
            inputSchema: {type: object, properties: {location: {type: string}}}
        """,
    )
    result = project.cli("export", "--format", "bedrock")
    assert result.returncode == 0, result.stderr
    assert "toolgen: note: get_current_weather: title is not sent to bedrock-converse (it has no field for it)\n" in (
        result.stderr
    )
    assert "get_current_weather: requiresApproval is enforced by the agent loop, not sent to bedrock-converse" in (
        result.stderr
    )
    assert json.loads(result.stdout)[0]["toolSpec"]["description"] == "Get the current weather."


# ---- describe_meta ----

DESCRIBED = {
    "name": "get_weather",
    "description": "Get the weather.",
    "inputSchema": {"type": "object"},
    "meta": {"owner": "weather-team", "cost": 0.5, "tags": ["a", "b"], "note": "two\nlines"},
}


def test_describe_meta_folds_chosen_keys_in_their_order_into_every_providers_description() -> None:
    listed = {**DESCRIBED, "describeMeta": ["tags", "owner", "missing"]}
    every = {**DESCRIBED, "name": "all", "describeMeta": True}
    for provider in FORMATS:
        if provider == "mcp":
            continue
        result = export_tools([listed, every], provider)
        first, second = (json.dumps(entry) for entry in _entries(result.tools))
        assert json.dumps('Get the weather.\n\ntags: ["a", "b"]\nowner: weather-team')[1:-1] in first, provider
        folded = 'Get the weather.\n\nowner: weather-team\ncost: 0.5\ntags: ["a", "b"]\nnote: "two\\nlines"'
        assert json.dumps(folded)[1:-1] in second, provider
        assert f"get_weather: meta keys tags, owner are folded into the description sent to {result.provider} " in (
            "\n".join(result.notes) + " "
        )
        assert (
            f"get_weather: meta keys cost, note are not sent to {result.provider} (it has no field for meta; "
            "describeMeta can fold meta into the description)" in result.notes
        )
        assert not [note for note in result.notes if note.startswith("all: meta") and "not sent" in note]
    # The same definition gives the same text, whatever the dict's history.
    again = {**listed, "meta": dict(reversed(list(DESCRIBED["meta"].items())))}
    assert export_tools([again], "anthropic").tools[0]["description"] == 'Get the weather.\n\ntags: ["a", "b"]\n' + (
        "owner: weather-team"
    )


def test_mcp_keeps_meta_as_meta_and_toolgens_client_folds_it_again() -> None:
    tool = {**DESCRIBED, "describeMeta": ["owner"]}
    result = export_tools([tool], "mcp")
    (entry,) = result.tools
    assert entry["description"] == "Get the weather."
    assert entry["_meta"] == {**DESCRIBED["meta"], "describeMeta": ["owner"]}
    assert result.notes == (
        "get_weather: meta is not folded into the description for mcp: it travels as _meta, and describeMeta in "
        "_meta.describeMeta for toolgen's own MCP client",
    )
    (back,) = definitions_from_mcp(result.tools)
    assert back == tool
    assert (
        export_tools([back], "openai").tools[0]["function"]["description"] == "Get the weather.\n\nowner: weather-team"
    )


WEATHER_WITH_META = """\
tools:
  - name: get_current_weather
    description: Get the current weather.
    meta: {owner: weather-team, cost: 2}
    inputSchema: {type: object, properties: {location: {type: string}}, required: [location]}
  - name: get_forecast
    description: Get the forecast.
    meta: {owner: forecast-team, cost: 3}
    describeMeta: [cost]
    inputSchema: {type: object, properties: {location: {type: string}}}
  - name: quiet
    description: Says nothing of itself.
    meta: {owner: nobody}
    describe_meta: false
    inputSchema: {type: object}
"""
ANTHROPIC_TEXT = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "m",
    "content": [{"type": "text", "text": "Sunny."}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 3, "output_tokens": 2},
}


def test_describe_meta_reaches_tools_exports_and_the_request_run_sends(make_project: Any) -> None:
    fresh: Project = make_project("described")
    (fresh.root / "toolgen.yaml").write_text(
        (fresh.root / "toolgen.yaml").read_text(encoding="utf-8") + "describe_meta: [owner]\n", encoding="utf-8"
    )
    fresh.write("schemas/weather.yaml", WEATHER_WITH_META)
    built = fresh.cli("build")
    assert built.returncode == 0, built.stderr
    expected = {
        "get_current_weather": "Get the current weather.\n\nowner: weather-team",
        "get_forecast": "Get the forecast.\n\ncost: 3",
        "quiet": "Says nothing of itself.",
    }
    exported, _ = toolgen.export(fresh.root, provider="anthropic")
    assert {entry["name"]: entry["description"] for entry in exported.tools} == expected
    assert "get_current_weather: meta key owner is folded into the description sent to anthropic (describeMeta)" in (
        exported.notes
    )
    cli = fresh.cli("export", "--format", "gemini")
    assert {d["name"]: d["description"] for d in json.loads(cli.stdout)[0]["functionDeclarations"]} == expected
    server = LocalServer(lambda received: Answer(json.dumps(ANTHROPIC_TEXT).encode()))
    try:
        sent = _run_sdk(fresh.root, server.base)
    finally:
        server.close()
    assert sent["spec"] == {"get_current_weather": ["owner"], "get_forecast": ["cost"], "quiet": False}
    assert sent["answer"] == "Sunny."
    (body,) = [json.loads(received.body) for received in server.seen]
    assert {tool["name"]: tool["description"] for tool in body["tools"]} == expected
    assert sent["mcp"]["get_current_weather"] == "Get the current weather."


RUN = """
import json, sys
sys.path.insert(0, sys.argv[1])
import described
from described import _runtime as rt
tools = described.Tools()
for name in ("get_current_weather", "get_forecast", "quiet"):
    tools.entry(name).handler(lambda args, ctx: {"ok": True})
model = rt.HTTPModel(sys.argv[2], "m", wire="anthropic", api_key="sk-test")
result = rt.run([{"role": "user", "content": "Weather in Paris?"}], model, tools)
spec = {n: (list(s.describe_meta) if s.describe_meta else False) for n, s in described.TOOLS.items()}
mcp = {e["name"]: e["description"] for e in described.tool_definitions("mcp")}
print(json.dumps({"spec": spec, "answer": result.messages[-1]["content"], "mcp": mcp}))
"""


def _run_sdk(root: Path, base: str) -> Any:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", RUN, str(root / "generated"), base], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_describe_meta_keys_nothing_has_are_warnings_and_its_shape_is_checked(make_project: Any) -> None:
    fresh: Project = make_project("described")
    config = (fresh.root / "toolgen.yaml").read_text(encoding="utf-8")
    (fresh.root / "toolgen.yaml").write_text(config + "describe_meta: [owner, ownr]\n", encoding="utf-8")
    fresh.write(
        "schemas/t.yaml",
        """\
        tools:
          - name: t
            meta: {owner: me}
            describeMeta: [owner, cots]
            inputSchema: {type: object}
        """,
    )
    result = fresh.cli("build")
    assert result.returncode == 0, result.stderr
    assert "schemas/t.yaml:4:27: warning describe-meta-key describeMeta lists 'cots', which this tool's meta" in (
        result.stdout + result.stderr
    )
    assert "toolgen.yaml:7:16: warning describe-meta-key describe_meta lists 'ownr', which no tool's meta has" in (
        result.stdout + result.stderr
    )
    (fresh.root / "toolgen.yaml").write_text(config + "describe_meta: yes please\n", encoding="utf-8")
    refused = fresh.cli("build")
    assert refused.returncode == 3
    assert "toolgen.yaml:7:16: error" in refused.stdout
