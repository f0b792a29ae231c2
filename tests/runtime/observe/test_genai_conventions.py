"""Telemetry against the GenAI semantic conventions as published: every attribute a run's spans carry is one the
conventions define for that span (tests/fixtures/genai_conventions.json, with its sources), of the type they give;
chat spans carry the settings, server, usage and provider attributes a request and a response allow; captured
content validates against the conventions' JSON schemas of input messages, output messages and system instructions.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.local_http import Answer, LocalServer, queue
from support.projects import REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "fixtures"
CONVENTIONS = json.loads((FIXTURES / "genai_conventions.json").read_text(encoding="utf-8"))
CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
USER = [
    {"role": "system", "content": "You answer about the weather, briefly."},
    {"role": "user", "content": "What's the weather in Paris?"},
]
# Attribute namespaces the conventions own; toolgen.* are the runtime's own.
OWNED = ("gen_ai.", "server.", "error.", "openai.")
TYPES = {
    "string": lambda value: isinstance(value, str),
    "int": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "double": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "boolean": lambda value: isinstance(value, bool),
    "string[]": lambda value: isinstance(value, tuple) and all(isinstance(v, str) for v in value),
    "any": lambda value: isinstance(value, str),  # recorded as JSON text, as spans may
}


def schema(attribute: str) -> jsonschema.Draft202012Validator:
    path = FIXTURES / CONVENTIONS["schemas"][attribute]["fixture"]
    return jsonschema.Draft202012Validator(json.loads(path.read_text(encoding="utf-8")))


SCHEMAS = {
    attribute: schema(attribute)
    for attribute in ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")
}


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    name = source_package.__name__
    return SimpleNamespace(
        package=source_package,
        runtime=importlib.import_module(f"{name}._runtime"),
        telemetry=importlib.import_module(f"{name}._runtime.observe.telemetry"),
        content=importlib.import_module(f"{name}._runtime.observe.genai_content"),
        attributes=importlib.import_module(f"{name}._runtime.observe.genai_attributes"),
    )


class Otel:
    """Providers of its own, read in memory."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.options = {"tracer_provider": self.tracer_provider, "meter_provider": self.meter_provider}

    def spans(self, prefix: str = "") -> list[ReadableSpan]:
        return [span for span in self.exporter.get_finished_spans() if span.name.startswith(prefix)]

    def metric_names(self) -> set[str]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return {m.name for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics}


def chat_body(message: dict[str, Any], finish: str, **usage: Any) -> bytes:
    """A chat completion as OpenAI sends it, with the fields only OpenAI's conventions record."""
    body = {
        "id": f"chatcmpl-{finish}",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_44709d6fcb",
        "service_tier": "default",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70, **usage},
    }
    return json.dumps(body).encode()


def weather_tools(sdk: SimpleNamespace) -> Any:
    tools = sdk.package.Tools()
    tools.get_current_weather.handler(
        lambda args, ctx: sdk.package.GetCurrentWeatherResult(location=args.location, temperature=18, unit="celsius")
    )
    tools.add(
        "delete_city", {"type": "object"}, lambda args, ctx: "gone", description="Delete a city", requires_approval=True
    )
    return tools


def http_run(sdk: SimpleNamespace, otel: Otel, **settings: Any) -> Any:
    """A run over HTTP against a server on 127.0.0.1: a call answered, a call denied, then an answer."""
    calls = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_current_weather", "arguments": '{"location":"Paris"}'},
            },
            {"id": "call_2", "type": "function", "function": {"name": "delete_city", "arguments": "{}"}},
        ],
    }
    details = {"prompt_tokens_details": {"cached_tokens": 32}, "completion_tokens_details": {"reasoning_tokens": 8}}
    server = LocalServer(
        queue(
            Answer(chat_body(calls, "tool_calls", **details)),
            Answer(chat_body({"role": "assistant", "content": "Sunny, 18 °C."}, "stop")),
        )
    )
    model = sdk.runtime.HTTPModel(server.base + "/v1", "gpt-4o-mini", wire="openai-chat", api_key="sk-test")
    try:
        result = sdk.runtime.run(
            USER,
            model,
            weather_tools(sdk),
            approve=lambda request: False,
            agent_name="weather",
            **otel.options,
            **settings,
        )
    finally:
        model.close()
        server.close()
    return SimpleNamespace(result=result, base=server.base)


def anthropic_run(sdk: SimpleNamespace, otel: Otel) -> Any:
    """A run on Anthropic's wire, whose system prompt goes apart from the conversation, with cache counts."""
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Paris, then.", "signature": "sig"},
            {"type": "text", "text": "Sunny."},
        ],
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": 10,
            "output_tokens": 6,
            "cache_read_input_tokens": 40,
            "cache_creation_input_tokens": 5,
        },
    }
    model = sdk.runtime.ReplayModel([body], wire="anthropic")
    return sdk.runtime.run(USER, model, weather_tools(sdk), **otel.options)


SETTINGS = {
    "temperature": 0.2,
    "top_p": 0.9,
    "max_tokens": 300,
    "stop": ["END"],
    "seed": 7,
    "frequency_penalty": 0.5,
    "presence_penalty": 0.25,
    "reasoning_effort": "low",
    "service_tier": "flex",
}


def all_runs(sdk: SimpleNamespace) -> Otel:
    otel = Otel()
    http_run(sdk, otel, settings=SETTINGS)
    anthropic_run(sdk, otel)
    scripted = sdk.runtime.ScriptedModel(["hello"])
    sdk.runtime.run(USER, scripted, weather_tools(sdk), settings={"top_k": 40, "seed": 3}, stream=True, **otel.options)
    return otel


def defined_for(span: ReadableSpan) -> set[str]:
    operation = dict(span.attributes or {})["gen_ai.operation.name"]
    names = set(CONVENTIONS["spans"][operation]["attributes"])
    if operation == "chat" and dict(span.attributes or {})["gen_ai.provider.name"] == "openai":
        names |= set(CONVENTIONS["spans"]["chat (provider openai)"]["attributes"])
    return names


@pytest.mark.parametrize("capture", [False, True])
def test_every_attribute_a_run_records_is_defined_for_its_span(
    sdk: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, capture: bool
) -> None:
    monkeypatch.setenv(CAPTURE, str(capture).lower())
    otel = all_runs(sdk)
    spans = otel.spans()
    assert {dict(span.attributes or {})["gen_ai.operation.name"] for span in spans} == {
        "invoke_agent",
        "chat",
        "execute_tool",
    }
    seen: set[str] = set()
    for span in spans:
        defined = defined_for(span)
        for key, value in (span.attributes or {}).items():
            if not key.startswith(OWNED):
                assert key.startswith("toolgen."), (span.name, key)
                continue
            seen.add(key)
            assert key in CONVENTIONS["attributes"], f"{span.name}: {key} is not in the conventions"
            assert key in defined, f"{span.name}: the conventions do not define {key} for this span"
            assert TYPES[CONVENTIONS["attributes"][key]](value), (span.name, key, value)
        attributes = dict(span.attributes or {})
        values = CONVENTIONS["values"]
        assert attributes["gen_ai.operation.name"] in values["gen_ai.operation.name"]
        provider = attributes.get("gen_ai.provider.name")
        assert provider is None or provider in {*values["gen_ai.provider.name"], "_OTHER"}
        assert attributes.get("gen_ai.output.type", "json") in values["gen_ai.output.type"]
        assert attributes.get("openai.api.type", "responses") in values["openai.api.type"]
    # The runs above exercise what the brief asks of chat spans; a name dropped by a change shows here.
    assert {
        "server.address",
        "server.port",
        "gen_ai.request.seed",
        "gen_ai.request.top_k",
        "gen_ai.request.frequency_penalty",
        "gen_ai.request.presence_penalty",
        "gen_ai.request.reasoning.level",
        "gen_ai.request.stream",
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_write.input_tokens",
        "gen_ai.usage.reasoning.output_tokens",
        "gen_ai.response.finish_reasons",
        "gen_ai.tool.description",
        "openai.response.system_fingerprint",
        "openai.response.service_tier",
        "openai.request.service_tier",
        "openai.api.type",
        "error.type",
    } <= seen
    assert capture == bool(seen & {"gen_ai.input.messages", "gen_ai.system_instructions"})
    metrics = otel.metric_names()
    assert all(name in CONVENTIONS["metrics"] or name.startswith("toolgen.") for name in metrics), metrics


def test_chat_spans_carry_the_request_the_server_and_the_answer(sdk: SimpleNamespace) -> None:
    otel = Otel()
    done = http_run(sdk, otel, settings=SETTINGS)
    assert done.result.stop_reason == "finished"
    first, second = (dict(span.attributes or {}) for span in otel.spans("chat"))
    host, port = done.base.removeprefix("http://").split(":")
    assert first["server.address"] == host and first["server.port"] == int(port)
    assert first["gen_ai.provider.name"] == "openai" and first["openai.api.type"] == "chat_completions"
    assert first["gen_ai.request.model"] == "gpt-4o-mini"
    assert first["gen_ai.request.temperature"] == 0.2 and first["gen_ai.request.top_p"] == 0.9
    assert first["gen_ai.request.max_tokens"] == 300 and first["gen_ai.request.stop_sequences"] == ("END",)
    assert first["gen_ai.request.seed"] == 7
    assert first["gen_ai.request.frequency_penalty"] == 0.5 and first["gen_ai.request.presence_penalty"] == 0.25
    assert first["gen_ai.request.reasoning.level"] == "low" and first["openai.request.service_tier"] == "flex"
    assert first["openai.response.system_fingerprint"] == "fp_44709d6fcb"
    assert first["openai.response.service_tier"] == "default"
    assert first["gen_ai.usage.cache_read.input_tokens"] == 32 and first["gen_ai.usage.reasoning.output_tokens"] == 8
    assert first["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second["gen_ai.response.finish_reasons"] == ("stop",)
    (run,) = otel.spans("invoke_agent")
    agent = dict(run.attributes or {})
    # The run's span: the request settings its conventions list, and the finish of the model's last answer.
    assert agent["gen_ai.request.temperature"] == 0.2 and agent["gen_ai.request.seed"] == 7
    assert agent["gen_ai.request.frequency_penalty"] == 0.5
    assert "gen_ai.request.reasoning.level" not in agent and "server.address" not in agent
    assert agent["gen_ai.response.finish_reasons"] == ("stop",)
    assert agent["gen_ai.usage.cache_read.input_tokens"] == 32 and agent["gen_ai.usage.input_tokens"] == 100
    tools = {
        dict(span.attributes or {})["gen_ai.tool.call.id"]: dict(span.attributes or {})
        for span in otel.spans("execute_tool")
    }
    assert tools["call_2"]["error.type"] == "denied" and tools["call_2"]["gen_ai.tool.description"] == "Delete a city"


def test_structured_output_and_a_wire_that_states_top_k_and_cache_writes(sdk: SimpleNamespace) -> None:
    otel = Otel()
    anthropic_run(sdk, otel)
    (chat,) = (dict(span.attributes or {}) for span in otel.spans("chat"))
    assert chat["gen_ai.provider.name"] == "anthropic" and "server.address" not in chat
    assert chat["gen_ai.usage.input_tokens"] == 55  # Anthropic's input_tokens plus the cache counts
    assert chat["gen_ai.usage.cache_read.input_tokens"] == 40 and chat["gen_ai.usage.cache_write.input_tokens"] == 5
    assert not any(key.startswith("openai.") for key in chat)
    json_format = {"type": "json_schema", "name": "answer", "schema": {"type": "object"}}
    otel = Otel()
    scripted = sdk.runtime.ScriptedModel(["{}"])
    sdk.runtime.run(
        USER, scripted, weather_tools(sdk), settings={"top_k": 40, "response_format": json_format}, **otel.options
    )
    (chat,) = (dict(span.attributes or {}) for span in otel.spans("chat"))
    assert chat["gen_ai.request.top_k"] == 40 and chat["gen_ai.output.type"] == "json"
    assert dict(otel.spans("invoke_agent")[0].attributes or {})["gen_ai.output.type"] == "json"


def test_the_provider_and_server_of_a_model_client(sdk: SimpleNamespace) -> None:
    attributes, HTTPModel = sdk.attributes, sdk.runtime.HTTPModel
    cases = [
        ("https://api.groq.com/openai/v1", "openai-chat", "groq", ("api.groq.com", 443)),
        ("https://my-resource.openai.azure.com/openai/deployments/d", "openai-chat", "azure.ai.openai", None),
        ("https://us-central1-aiplatform.googleapis.com/v1/projects/p", "openai-chat", "gcp.vertex_ai", None),
        ("http://127.0.0.1:8080/v1", "openai-chat", "openai", ("127.0.0.1", 8080)),
        ("http://localhost:11434", "ollama", "ollama", ("localhost", 11434)),
    ]
    for base, wire, provider, server in cases:
        model = HTTPModel(base, "m", wire=wire, api_key="k")
        try:
            assert attributes.provider_name(model) == provider, base
            assert server is None or attributes.server_of(model) == server
        finally:
            model.close()
    assert attributes.server_of(sdk.runtime.ScriptedModel([])) is None


def rich_conversation() -> list[Any]:
    """Canonical messages with every kind of part the wires decode, and some a model may send oddly."""
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    return [
        {
            "role": "system",
            "content": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Metric units."}],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image", "url": f"data:image/png;base64,{png}"},
                {"type": "image", "url": "https://example.com/cat.jpg", "detail": "low"},
                {"type": "audio", "data": "UklGRiQAAABXQVZF", "format": "wav"},
                {"type": "file", "file_id": "file-abc", "filename": "report.pdf"},
                {"type": "file", "data": "JVBERi0=", "media_type": "application/pdf"},
                {"type": "refusal_note", "note": "a part no wire here names"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "Look first.", "signature": "s"},
                {"type": "reasoning", "redacted": True, "encrypted": "opaque"},
                {"type": "text", "text": "Checking."},
            ],
            "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "look", "arguments": '{"what":"cat"}'}},
                {"id": "call_b", "type": "function", "function": {"name": "look", "arguments": "not json"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": '{"seen": "a cat"}'},
        {
            "role": "tool",
            "tool_call_id": "call_b",
            "content": [{"type": "text", "text": "plain "}, {"type": "text", "text": "text"}],
        },
        {
            "role": "tool",
            "tool_call_id": "call_c",
            "content": [{"type": "image", "data": png, "media_type": "image/png"}],
        },
        {"role": "tool", "content": None},
        "not a message",
    ]


def test_captured_content_validates_against_the_conventions_schemas(sdk: SimpleNamespace) -> None:
    content = sdk.content
    messages = rich_conversation()
    for wire in ("openai-chat", "anthropic"):
        instructions, inputs = content.input_messages(messages, wire)
        SCHEMAS["gen_ai.input.messages"].validate(inputs)
        SCHEMAS["gen_ai.system_instructions"].validate(instructions)
    instructions, inputs = content.input_messages(messages, "anthropic")
    assert instructions == [{"type": "text", "content": "Be brief."}, {"type": "text", "content": "Metric units."}]
    assert inputs[0]["role"] == "user"
    _, inputs = content.input_messages(messages, "openai-chat")
    assert inputs[0] == {"role": "system", "parts": instructions}  # part of the conversation on this wire
    user, assistant, answered, joined, image, bare = inputs[1:7]
    assert user["parts"][1] == {
        "type": "blob",
        "modality": "image",
        "mime_type": "image/png",
        "content": user["parts"][1]["content"],
    }
    assert user["parts"][2] == {"type": "uri", "modality": "image", "uri": "https://example.com/cat.jpg"}
    assert user["parts"][3] == {
        "type": "blob",
        "modality": "audio",
        "mime_type": "audio/wav",
        "content": "UklGRiQAAABXQVZF",
    }
    assert user["parts"][4] == {"type": "file", "modality": "document", "file_id": "file-abc"}
    assert user["parts"][5]["type"] == "blob" and user["parts"][5]["modality"] == "document"
    assert user["parts"][6] == {"type": "refusal_note", "note": "a part no wire here names"}
    assert assistant["parts"][:3] == [
        {"type": "reasoning", "content": "Look first."},
        {"type": "reasoning", "content": "", "redacted": True},
        {"type": "text", "content": "Checking."},
    ]
    assert assistant["parts"][3]["arguments"] == {"what": "cat"} and assistant["parts"][4]["arguments"] == "not json"
    assert answered["parts"] == [{"type": "tool_call_response", "id": "call_a", "response": {"seen": "a cat"}}]
    assert joined["parts"][0]["response"] == "plain text"
    assert image["parts"][0]["response"][0]["type"] == "blob"
    assert bare["parts"] == [{"type": "tool_call_response", "response": None}]
    outputs = content.output_messages(messages[2], "tool_calls")
    SCHEMAS["gen_ai.output.messages"].validate(outputs)
    assert outputs[0]["role"] == "assistant" and outputs[0]["finish_reason"] == "tool_call"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
KEYS = st.sampled_from(["role", "content", "tool_calls", "tool_call_id", "name", "type", "text", "function", "id"])
# Messages that look like canonical ones, with any value in any field.
MESSAGES = st.lists(
    st.dictionaries(KEYS, JSON | st.sampled_from(["tool", "system", "image", "file"])) | JSON, max_size=5
)


@settings(max_examples=200, deadline=None)
@given(MESSAGES, st.sampled_from([None, "openai-chat", "anthropic"]))
def test_whatever_a_conversation_holds_its_capture_is_valid_and_never_raises(
    sdk: SimpleNamespace, messages: list[Any], wire: str | None
) -> None:
    instructions, inputs = sdk.content.input_messages(messages, wire)
    SCHEMAS["gen_ai.input.messages"].validate(inputs)
    SCHEMAS["gen_ai.system_instructions"].validate(instructions)
    for message in messages:
        SCHEMAS["gen_ai.output.messages"].validate(sdk.content.output_messages(message, "stop"))


def test_content_a_run_captures_validates_against_the_schemas(
    sdk: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE, "true")
    otel = all_runs(sdk)
    checked = {attribute: 0 for attribute in SCHEMAS}
    for span in otel.spans():
        for attribute, validator in SCHEMAS.items():
            text = dict(span.attributes or {}).get(attribute)
            if text is not None:
                validator.validate(json.loads(str(text)))
                checked[attribute] += 1
    assert all(checked.values()), checked
    (anthropic_chat,) = [
        s for s in otel.spans("chat") if dict(s.attributes or {})["gen_ai.provider.name"] == "anthropic"
    ]
    attributes = dict(anthropic_chat.attributes or {})
    assert json.loads(str(attributes["gen_ai.system_instructions"])) == [
        {"type": "text", "content": USER[0]["content"]}
    ]
    assert [m["role"] for m in json.loads(str(attributes["gen_ai.input.messages"]))] == ["user"]
    (output,) = json.loads(str(attributes["gen_ai.output.messages"]))
    assert output["parts"] == [{"type": "reasoning", "content": "Paris, then."}, {"type": "text", "content": "Sunny."}]


def test_the_fixture_names_its_sources(sdk: SimpleNamespace) -> None:
    for name, source in CONVENTIONS["sources"].items():
        assert source["repo"].startswith("open-telemetry/") and source["path"], name
        assert source.get("commit") or source.get("version"), name
    for entry in CONVENTIONS["spans"].values():
        assert entry["source"] in CONVENTIONS["sources"]
        assert set(entry["attributes"]) <= set(CONVENTIONS["attributes"])
    for attribute, entry in CONVENTIONS["schemas"].items():
        assert Path(FIXTURES / entry["fixture"]).is_file() and entry["url"].startswith("https://github.com/"), attribute
