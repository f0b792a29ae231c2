"""`toolgen decode / encode / convert / conformance`: recorded payloads to canonical JSON, between wires, at scale."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pydantic
import pytest
from support.cli_in_process import Ran, toolgen_in
from support.projects import REPO_ROOT, shared_dir

from toolgen import decode

FIXTURES = REPO_ROOT / "tests" / "fixtures"
# The recorded files that are a provider's error instead of a response (read from each file).
ERROR_BODIES = {
    "groq-error-tool-use-failed.json",
    "openai-error-unsupported-parameter.json",
    "error-model-not-found.json",
    "ollama-local-error-model-does-not-support-tools.json",
    "openai-error-insufficient-quota.jsonl",
}


def toolgen(*args: str, stdin: str | None = None, cwd: Path = REPO_ROOT) -> Ran:
    return toolgen_in(cwd, *args, stdin=stdin)


def test_conformance_over_the_recorded_corpus_and_the_fixtures() -> None:
    payloads = shared_dir("payloads")
    result = toolgen(
        "conformance", str(payloads), str(FIXTURES / "payloads"), str(FIXTURES / "streams"), "--format", "json"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads(result.stdout)
    corpus = [r for r in rows if "shared" in r["file"]]
    assert len(corpus) == 72 and all(r["result"] == "ok" for r in rows)
    table = toolgen("conformance", str(payloads))
    assert table.stdout.splitlines()[0] == "| format | kind | file | result | tool calls | detail |"
    assert "72 payload(s), 0 failed" in table.stderr


def test_decode_detects_wire_and_kind_of_every_recorded_file() -> None:
    payloads = shared_dir("payloads")
    for path in sorted(p for p in payloads.rglob("*") if p.is_file() and p.suffix != ".md"):
        wire, kind = path.relative_to(payloads).parts[:2]
        decoded = decode(path)  # in-process: the CLI is the same call, tested above and below
        json.dumps(decoded)  # the canonical JSON is JSON
        assert decoded["kind"] == kind, path
        assert decoded["wire"] == wire, path
        assert ("error" in decoded) == (path.name in ERROR_BODIES), path


def _conversation() -> list[dict[str, Any]]:
    call = {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    other = {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": '{"zone":"CET"}'}}
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather and time in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [call, other]},
        {"role": "tool", "tool_call_id": "call_a", "content": "21 C"},
        {"role": "tool", "tool_call_id": "call_b", "content": "14:00"},
        {"role": "assistant", "content": "21 C and 14:00."},
    ]


def test_convert_parallel_calls_to_anthropic_and_gemini_and_back(tmp_path: Path) -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {**m, "content": m["content"]} if m["role"] != "assistant" or m["content"] else m for m in _conversation()
        ],
        "tools": [
            {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
            for n in ("get_weather", "get_time")
        ],
    }
    source = tmp_path / "openai.json"
    source.write_text(json.dumps(body))
    original = json.loads(toolgen("decode", str(source)).stdout)["request"]["messages"]
    for wire in ("anthropic", "gemini"):
        there = tmp_path / f"{wire}.json"
        assert toolgen("convert", str(source), "--to", wire, "-o", str(there)).returncode == 0
        back = json.loads(toolgen("convert", str(there), "--to", "openai-chat").stdout)
        assert back["messages"] == body["messages"], wire
        decoded = json.loads(toolgen("decode", str(there)).stdout)
        assert decoded["wire"] == wire
        calls = [c for m in decoded["request"]["messages"] for c in m.get("tool_calls") or []]
        assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
            ("get_weather", {"city": "Paris"}),
            ("get_time", {"zone": "CET"}),
        ]
        assert [m["role"] for m in decoded["request"]["messages"]] == [m["role"] for m in original]
    anthropic_types = pytest.importorskip("anthropic.types")
    converted = json.loads((tmp_path / "anthropic.json").read_text())
    pydantic.TypeAdapter(anthropic_types.MessageCreateParams).validate_python({**converted, "max_tokens": 100})


def test_encode_takes_decode_output_or_a_bare_list_of_messages(tmp_path: Path) -> None:
    path = shared_dir("payloads") / "anthropic" / "request" / "claude-sonnet4-thinking-tool-result.json"
    canonical = tmp_path / "canonical.json"
    canonical.write_text(toolgen("decode", str(path)).stdout)
    again = json.loads(toolgen("encode", str(canonical), "--wire", "anthropic").stdout)
    assert again == json.loads(path.read_text())  # thinking signatures and all
    bare = toolgen("encode", "-", "--wire", "openai-chat", stdin=json.dumps(_conversation()))
    assert bare.returncode == 0 and json.loads(bare.stdout)["messages"][2]["tool_calls"][1]["id"] == "call_b"


def test_decode_reads_streams_from_stdin_and_keeps_partial_messages() -> None:
    cut = (FIXTURES / "streams" / "openai-chat-cut-mid-call.sse").read_text()
    result = toolgen("decode", "-", "--kind", "stream", stdin=cut)
    assert result.returncode == 0, result.stderr
    decoded = json.loads(result.stdout)
    assert decoded["kind"] == "stream" and decoded["complete"] is False and decoded["stream_errors"]


def test_bad_payloads_are_exit_3_with_a_diagnostic(tmp_path: Path) -> None:
    missing = toolgen("decode", str(tmp_path / "none.json"))
    assert missing.returncode == 3 and "payload-unreadable" in missing.stdout
    broken = tmp_path / "broken.json"
    broken.write_text('{"messages": [')
    result = toolgen("decode", str(broken))
    assert result.returncode == 3 and "payload-invalid not a JSON body" in result.stdout
    odd = tmp_path / "odd.json"
    odd.write_text('{"model": "x", "messages": [{"role": "user", "content": 5}]}')
    bad = toolgen("decode", str(odd), "--wire", "openai-chat")
    assert bad.returncode == 3 and "/messages/0/content" in bad.stdout
    folder = toolgen("conformance", str(tmp_path / "nowhere"))
    assert folder.returncode == 3 and "not a folder" in folder.stdout


def test_bad_json_on_stdin_is_exit_3_not_an_internal_error() -> None:
    for command in (["decode", "-", "--kind", "request"], ["encode", "-", "--wire", "anthropic"]):
        result = toolgen(*command, stdin='{"messages": [')
        assert result.returncode == 3, result.stderr
        # the place is where the JSON breaks: just past the open bracket
        assert result.stdout.startswith("<stdin>:1:15: error payload-invalid not a JSON body")
