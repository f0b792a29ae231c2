"""Every hand-written fixture in tests/fixtures/payloads through the adapters: decoded, encoded back, detected.

The expectation tables were written by reading each file, not by running the decoders: the tool calls (id, name,
parsed arguments), the tool results and which call they answer, the finish reason and the usage each body states.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from support.projects import TESTS, shared_dir

from toolgen.runtime.wires.canonical import ProviderError, Request, Response
from toolgen.runtime.wires.codecs import codec, decode, detect

FIXTURES = TESTS / "fixtures" / "payloads"
ANY = "<generated>"  # the wire sends no id; the decoder makes up a stable one


@dataclass(frozen=True)
class Expect:
    """What a person reading the file finds in it."""

    calls: list[tuple[str, str, Any]] = field(default_factory=list)  # (id or ANY, name, parsed arguments)
    results: list[tuple[str | int, str]] = field(default_factory=list)  # (call id, or index into calls; content)
    finish: tuple[str, str] | None = None  # (normalized reason, raw value)
    usage: dict[str, int] = field(default_factory=dict)
    error: tuple[str | None, str] | None = None  # (code, start of the message) of an error body
    tools: list[str] = field(default_factory=list)


# Hand-written from the providers' documented formats (tests/fixtures/payloads); the same rules as the recorded
# corpus's table (test_adapters_corpus_recorded).
HANDWRITTEN: dict[str, Expect] = {
    "openai-chat/request/multimodal-developer-refusal.json": Expect(
        calls=[("call_oslo", "get_weather", {"city": "Oslo"}), ("call_bergen", "get_weather", {"city": "Bergen"})],
        results=[("call_oslo", "-3C, snow"), ("call_bergen", "4C, rain")],
        tools=["get_weather"],
    ),
    "openai-chat/response/custom-tool-call.json": Expect(
        calls=[("call_sql_1", "run_sql", "SELECT count(*) FROM users"), ("call_fn_2", "lookup", {"key": "users"})],
        finish=("tool_calls", "tool_calls"),
        usage={
            "input_tokens": 120,
            "output_tokens": 40,
            "total_tokens": 160,
            "cache_read_tokens": 64,
            "reasoning_tokens": 16,
        },
    ),
    "openai-chat-camel/request/azure-js-tool-round.json": Expect(
        calls=[("call_lis", "get_weather", {"city": "Lisbon"})], results=[("call_lis", "22C")], tools=["get_weather"]
    ),
    "openai-chat-camel/response/azure-js-tool-calls.json": Expect(
        calls=[("call_a", "get_weather", {"city": "Lisbon"}), ("call_b", "get_time", {})],
        finish=("tool_calls", "tool_calls"),
        usage={"input_tokens": 80, "output_tokens": 30, "total_tokens": 110},
    ),
    "mistral/response/magistral-thinking-and-call.json": Expect(
        calls=[("Ab3dE6gH9", "get_weather", {"city": "Lyon"})],
        finish=("tool_calls", "tool_calls"),
        usage={"input_tokens": 40, "output_tokens": 25, "total_tokens": 65},
    ),
    "anthropic/request/redacted-thinking-images-errors.json": Expect(
        calls=[
            (
                "toolu_01A",
                "fetch_numbers",
                {"quarter": "Q3", "detail": {"region": "EU", "segments": ["retail", "b2b"]}},
            ),
            ("toolu_01B", "fetch_numbers", {}),
        ],
        results=[("toolu_01A", "EU retail"), ("toolu_01B", "quarter is required")],
        tools=["fetch_numbers"],
    ),
    "anthropic/response/error-overloaded.json": Expect(error=("overloaded_error", "Overloaded")),
    "anthropic/response/max-tokens-text.json": Expect(
        finish=("length", "max_tokens"),
        usage={
            "input_tokens": 12 + 100 + 2000,
            "output_tokens": 5,
            "cache_read_tokens": 2000,
            "cache_write_tokens": 100,
        },
    ),
    "gemini/request/same-name-calls-no-ids.json": Expect(
        calls=[(ANY, "get_weather", {"city": "Rome"}), (ANY, "get_weather", {"city": "Milan"}), (ANY, "get_time", {})],
        # The results come back in another order than the calls; same-name ones pair in order.
        results=[(0, "Rome: 25C"), (2, '{"time":"12:00","zone":"CET"}'), (1, "Milan: station offline")],
        tools=["get_weather", "get_time"],
    ),
    "gemini/response/thoughts-and-parallel-calls.json": Expect(
        calls=[(ANY, "get_weather", {"city": "Rome"}), (ANY, "get_time", {})],
        finish=("tool_calls", "STOP"),
        usage={
            "input_tokens": 50,
            "output_tokens": 50,
            "total_tokens": 100,
            "cache_read_tokens": 10,
            "reasoning_tokens": 30,
        },
    ),
    "gemini/response/error-invalid-argument.json": Expect(error=("INVALID_ARGUMENT", "Invalid JSON payload received.")),
    # No candidatesTokenCount: nothing was generated, so output counts 0.
    "gemini/response/prompt-blocked.json": Expect(
        finish=("content_filter", "SAFETY"), usage={"input_tokens": 9, "output_tokens": 0, "total_tokens": 9}
    ),
    "google-interactions/request/function-result-round.json": Expect(
        calls=[("zggxzq8r", "getWeather", {"location": "San Francisco"})],
        results=[("zggxzq8r", "16C, sunny")],
        tools=["getWeather"],
    ),
    "google-interactions/response/completed-text.json": Expect(
        finish=("stop", "completed"),
        usage={
            "input_tokens": 97,
            "output_tokens": 19,
            "total_tokens": 116,
            "cache_read_tokens": 0,
            "reasoning_tokens": 7,
        },
    ),
    "openai-responses/request/instructions-custom-tool-round.json": Expect(
        calls=[
            ("call_sql", "run_sql", "SELECT COUNT(*) FROM users WHERE age > 25"),
            ("call_note", "note", {"text": "counted"}),
        ],
        results=[("call_sql", "42"), ("call_note", "saved")],
        tools=["note"],
    ),
    "openai-responses/response/summary-message-and-call.json": Expect(
        calls=[("call_a", "get_weather", {"city": "Oslo"})],
        finish=("tool_calls", "completed"),
        usage={
            "input_tokens": 90,
            "output_tokens": 60,
            "total_tokens": 150,
            "cache_read_tokens": 10,
            "reasoning_tokens": 32,
        },
    ),
    "openai-responses/response/incomplete-max-output-tokens.json": Expect(
        finish=("length", "incomplete"),
        usage={
            "input_tokens": 20,
            "output_tokens": 16,
            "total_tokens": 36,
            "cache_read_tokens": 0,
            "reasoning_tokens": 16,
        },
    ),
    "openai-responses/response/failed-rate-limit.json": Expect(error=("rate_limit_exceeded", "Rate limit reached")),
    "bedrock-converse/request/redacted-reasoning-json-result.json": Expect(
        calls=[("tooluse_parcel", "track", {"parcel": 42}), ("tooluse_eta", "eta", {})],
        results=[("tooluse_parcel", '{"status":"in transit","hub":"Leipzig"}'), ("tooluse_eta", "service unavailable")],
        tools=["track", "eta"],
    ),
    "bedrock-converse/response/guardrail-intervened.json": Expect(
        finish=("content_filter", "guardrail_intervened"),
        usage={"input_tokens": 30, "output_tokens": 8, "total_tokens": 38},
    ),
    "bedrock-converse/response/error-throttling.json": Expect(error=("ThrottlingException", "Too many requests")),
    "ollama/request/images-thinking-tool-name.json": Expect(
        calls=[(ANY, "get_weather", {"city": "Paris"}), (ANY, "get_time", {})],
        # Results name their tool (tool_name) and come back in another order; they pair by name.
        results=[(1, "14:05"), (0, "18C")],
        tools=["get_weather", "get_time"],
    ),
    "ollama/response/length-text.json": Expect(
        finish=("length", "length"), usage={"input_tokens": 8, "output_tokens": 4}
    ),
    "cohere/request/tool-plan-and-documents.json": Expect(
        calls=[
            ("weather_abc123", "weather", {"city": "Toronto"}),
            ("attractions_def456", "attractions", {"city": "Toronto"}),
        ],
        results=[("weather_abc123", ""), ("attractions_def456", "CN Tower")],
        tools=["weather", "attractions"],
    ),
    "cohere/response/error-invalid-request.json": Expect(error=(None, "invalid request: message must be")),
    "cohere/response/complete-text.json": Expect(
        finish=("stop", "COMPLETE"), usage={"input_tokens": 700, "output_tokens": 6}
    ),
}


def load(relative: str, handwritten: bool = False) -> tuple[str, str, Any]:
    base = FIXTURES if handwritten else shared_dir("payloads")
    wire, kind, _ = relative.split("/")
    return wire, kind, json.loads((base / relative).read_text(encoding="utf-8"))


def calls_and_results(decoded: Request | Response) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    messages = decoded.messages if isinstance(decoded, Request) else [decoded.message]
    calls = [call for message in messages for call in message.get("tool_calls") or ()]
    results = [message for message in messages if message["role"] == "tool"]
    return calls, results


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def check_expectation(relative: str, expect: Expect, handwritten: bool = False) -> None:
    wire, kind, body = load(relative, handwritten)
    decoded = decode(body, wire, kind)
    if expect.error is not None:
        assert isinstance(decoded, ProviderError), decoded
        code, message = expect.error
        assert decoded.code == code
        assert decoded.message.startswith(message)
        return
    assert not isinstance(decoded, ProviderError), decoded
    calls, results = calls_and_results(decoded)
    assert [(call["function"]["name"]) for call in calls] == [name for _, name, _ in expect.calls]
    assert [json.loads(call["function"]["arguments"]) for call in calls] == [args for _, _, args in expect.calls]
    generated = {
        call_id
        for message in (decoded.messages if isinstance(decoded, Request) else [decoded.message])
        for call_id in message.get("extras", {}).get(wire, {}).get("generated_ids", ())
    }
    for call, (call_id, _, _) in zip(calls, expect.calls, strict=True):
        if call_id == ANY:
            assert call["id"].startswith("call_") and call["id"] in generated
        else:
            assert call["id"] == call_id
    assert len(results) == len(expect.results)
    for result, (answers, content) in zip(results, expect.results, strict=True):
        want = calls[answers]["id"] if isinstance(answers, int) else answers
        assert result["tool_call_id"] == want
        assert text_of(result["content"]).startswith(content)
    if isinstance(decoded, Request):
        assert [tool["name"] for tool in decoded.tools] == expect.tools
    else:
        assert decoded.finish == (
            None if expect.finish is None else {"reason": expect.finish[0], "raw": expect.finish[1]}
        )
        assert (decoded.usage or {}) == expect.usage


def round_trip(wire: str, kind: str, body: Any) -> Any:
    conversions = codec(wire)
    decoded = conversions.decode_request(body) if kind == "request" else conversions.decode_response(body)
    if isinstance(decoded, ProviderError):
        # An error body comes back through ProviderError.raw: the error fields are not all canonical.
        return conversions.encode_error(decoded)
    if isinstance(decoded, Request):
        return conversions.encode_request(decoded)
    return conversions.encode_response(decoded)


# ---- the hand-written fixtures ----


@pytest.mark.parametrize("relative", sorted(HANDWRITTEN))
def test_fixture_decodes_to_what_the_file_says(relative: str) -> None:
    check_expectation(relative, HANDWRITTEN[relative], handwritten=True)


@pytest.mark.parametrize("relative", sorted(HANDWRITTEN))
def test_fixture_survives_decode_and_encode_and_is_detected(relative: str) -> None:
    wire, kind, body = load(relative, handwritten=True)
    assert round_trip(wire, kind, body) == body
    assert detect(body) == (wire, kind)


def test_the_fixture_table_covers_every_fixture() -> None:
    found = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("*/*/*.json"))
    assert found == sorted(HANDWRITTEN)
