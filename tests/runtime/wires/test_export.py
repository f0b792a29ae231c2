"""`toolgen export` and the SDK's tool_definitions(): each provider's documented request shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pydantic
import pytest
from support.projects import REPO_ROOT, Project

import toolgen
from toolgen.runtime.wires.export import FORMATS, export_tools

TOOL: dict[str, Any] = {
    "name": "get_current_weather",
    "title": "Current weather",
    "description": "Get the current weather.",
    "inputSchema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}},
    "returnDirect": True,
    "meta": {"scope": "conversation"},
    "annotations": {"readOnlyHint": True},
}


def test_openai_chat_mistral_and_ollama_share_the_function_shape() -> None:
    for provider in ("openai", "mistral", "ollama"):
        (entry,) = export_tools([TOOL], provider).tools
        assert entry == {
            "type": "function",
            "function": {"name": TOOL["name"], "description": TOOL["description"], "parameters": TOOL["inputSchema"]},
        }


def test_openai_responses_says_strict_explicitly() -> None:
    (entry,) = export_tools([TOOL], "openai-responses").tools
    assert entry == {
        "type": "function",
        "name": TOOL["name"],
        "description": TOOL["description"],
        "parameters": TOOL["inputSchema"],
        "strict": False,
    }
    (strict,) = export_tools([{**TOOL, "strict": True}], "openai-responses").tools
    assert strict["strict"] is True


def test_anthropic_bedrock_and_gemini_shapes() -> None:
    assert export_tools([TOOL], "anthropic").tools == [
        {"name": TOOL["name"], "description": TOOL["description"], "input_schema": TOOL["inputSchema"]}
    ]
    assert export_tools([TOOL], "bedrock").tools == [
        {
            "toolSpec": {
                "name": TOOL["name"],
                "description": TOOL["description"],
                "inputSchema": {"json": TOOL["inputSchema"]},
            }
        }
    ]
    assert export_tools([TOOL], "gemini").tools == [
        {
            "functionDeclarations": [
                {
                    "name": TOOL["name"],
                    "description": TOOL["description"],
                    "parametersJsonSchema": TOOL["inputSchema"],
                    "responseJsonSchema": TOOL["outputSchema"],
                }
            ]
        }
    ]
    assert export_tools([], "gemini").tools == []


def test_mcp_carries_title_annotations_output_and_return_direct_in_meta() -> None:
    (entry,) = export_tools([TOOL], "mcp").tools
    assert entry == {
        "name": TOOL["name"],
        "title": TOOL["title"],
        "description": TOOL["description"],
        "inputSchema": TOOL["inputSchema"],
        "outputSchema": TOOL["outputSchema"],
        "annotations": {"readOnlyHint": True},
        "_meta": {"scope": "conversation", "returnDirect": True},
    }


def test_mcp_carries_toolgens_policies_strict_and_a_non_object_output_in_meta() -> None:
    tool = {
        "name": "lookup",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "string"},
        "requiresApproval": True,
        "timeout": 2.5,
        "strict": False,
        "meta": {"owner": "shop"},
    }
    result = export_tools([tool], "mcp")
    (entry,) = result.tools
    assert "outputSchema" not in entry
    assert entry["_meta"] == {
        "owner": "shop",
        "outputSchema": {"type": "string"},
        "requiresApproval": True,
        "timeout": 2.5,
        "strict": False,
    }
    assert result.notes[0] == "lookup: MCP output schemas must describe an object; it travels in _meta.outputSchema"
    # MCP has no field for toolgen's policies: each travels in _meta, and a note says so (test_export_notes.py).
    assert [note.split(" travels")[0] for note in result.notes[1:]] == [
        "lookup: requiresApproval",
        "lookup: timeout",
        "lookup: strict",
    ]


def test_changes_made_to_fit_a_provider_are_reported() -> None:
    odd = [
        {"name": "anything", "inputSchema": True},
        {"name": "loose", "inputSchema": {"properties": {"a": {}}}},
        {"name": "text_result", "inputSchema": {"type": "object"}, "outputSchema": {"type": "string"}},
    ]
    result = export_tools(odd, "mcp")
    assert [entry["inputSchema"].get("type") for entry in result.tools] == ["object", "object", "object"]
    assert "outputSchema" not in result.tools[2]
    assert [note.split(":")[0] for note in result.notes] == ["anything", "loose", "text_result"]
    with pytest.raises(ValueError, match="cannot be sent"):
        export_tools([{"name": "never", "inputSchema": False}], "openai")
    with pytest.raises(ValueError, match="unknown provider"):
        export_tools([TOOL], "vertex")
    # Every wire of the table is an export target; Cohere takes the Chat Completions function shape.
    assert export_tools([TOOL], "cohere").tools == export_tools([TOOL], "openai").tools


def test_exports_satisfy_the_official_sdk_request_types() -> None:
    openai_chat = pytest.importorskip("openai.types.chat")
    openai_responses = pytest.importorskip("openai.types.responses")
    anthropic_types = pytest.importorskip("anthropic.types")
    checks = {
        "openai": openai_chat.ChatCompletionToolParam,
        "openai-responses": openai_responses.FunctionToolParam,
        "anthropic": anthropic_types.ToolParam,
    }
    for provider, request_type in checks.items():
        adapter = pydantic.TypeAdapter(request_type)
        for entry in export_tools([TOOL, {"name": "bare", "inputSchema": {"type": "object"}}], provider).tools:
            adapter.validate_python(entry, strict=True)


def test_cli_export_matches_the_generated_sdk(tmp_path: Path) -> None:
    for provider in FORMATS:
        result = subprocess.run(
            [sys.executable, "-m", "toolgen", "export", "--format", provider, "-C", str(REPO_ROOT)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        probe = (
            "import json, sys; sys.path.insert(0, sys.argv[1]); import toolgen_sdk; "
            "print(json.dumps(toolgen_sdk.tool_definitions(sys.argv[2])))"
        )
        sdk = subprocess.run(
            [sys.executable, "-c", probe, str(REPO_ROOT / "generated"), provider],
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(result.stdout) == json.loads(sdk.stdout), provider


def test_export_of_invalid_input_is_exit_3(project: Project) -> None:
    project.write("schemas/bad.yaml", "tools:\n  - name: x\n    inputSchema: {type: 5}\n")
    result = project.cli("export", "--format", "openai")
    assert result.returncode == 3
    assert result.stdout.startswith("schemas/bad.yaml:3:25: error schema-invalid")


def test_library_export_returns_payload_and_notes(project: Project) -> None:
    exported, warnings = toolgen.export(project.root, provider="anthropic")
    assert [entry["name"] for entry in exported.tools] == ["get_current_weather"]
    assert warnings == ()
