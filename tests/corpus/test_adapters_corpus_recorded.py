"""Every recorded request and response in ../shared/payloads through the adapters: decoded, encoded back, detected.

The expectation tables were written by reading each file, not by running the decoders: the tool calls (id, name,
parsed arguments), the tool results and which call they answer, the finish reason and the usage each body states.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.projects import SHARED, shared_dir
from test_adapters_handwritten import ANY, Expect, calls_and_results, check_expectation, load, round_trip

from toolgen.runtime.wires.canonical import ProviderError, Request, Response
from toolgen.runtime.wires.codecs import decode, detect
from toolgen.runtime.wires.pairing import check_pairing

CORPUS: dict[str, Expect] = {
    # ---- requests ----
    "openai-chat/request/groq-retry-after-tool-use-failed.json": Expect(
        calls=[("pyd_ai_445dbde6c4764cafb5782bb928ef6c2c", "get_something_by_name", {"foo": "bar"})],
        results=[("pyd_ai_445dbde6c4764cafb5782bb928ef6c2c", "2 validation errors")],
        tools=["get_something_by_name"],
    ),
    "openai-chat/request/openai-gpt35-legacy-functions.json": Expect(tools=["get_weather"]),
    "openai-chat/request/openai-gpt4o-parallel-tool-results.json": Expect(
        calls=[
            ("call_3rqTYrA6H21AYUaRGP4F66oq", "get_country", {}),
            ("call_Xw9XMKBJU48kAAd78WgIswDx", "get_product_name", {}),
        ],
        results=[("call_3rqTYrA6H21AYUaRGP4F66oq", "Mexico"), ("call_Xw9XMKBJU48kAAd78WgIswDx", "Pydantic AI")],
        tools=[
            "get_weather",
            "get_country",
            "celsius_to_fahrenheit",
            "get_weather_forecast",
            "get_image_resource",
            "get_image_resource_link",
            "get_audio_resource",
            "get_audio_resource_link",
            "get_product_name",
            "get_product_name_link",
            "get_image",
            "get_dict",
            "get_error",
            "get_none",
            "get_multiple_items",
            "get_log_level",
            "echo_deps",
            "use_sampling",
            "final_result",
        ],
    ),
    "mistral/request/mistral-large-tool-result.json": Expect(
        calls=[("KikbB849t", "get_weather", {"city": "Paris"})],
        results=[("KikbB849t", "Sunny, 22C in Paris")],
        tools=["get_weather"],
    ),
    "ollama/request/ollama-cloud-gptoss-tool-result.json": Expect(
        calls=[(ANY, "getWeather", {"location": "San Francisco, CA"})],
        results=[(0, '{"temperature": 72, "condition": "sunny"}')],
        tools=["getWeather"],
    ),
    "ollama/request/ollama-cloud-gptoss-tools.json": Expect(tools=["getWeather"]),
    "anthropic/request/claude-haiku45-parallel-tool-results.json": Expect(
        calls=[
            ("toolu_0167cfEnoQaPviGdVXA95zcu", "retrieve_entity_info", {"name": "Alice"}),
            ("toolu_01EEe2V5HD1Ac4rKiUR4HD2T", "retrieve_entity_info", {"name": "Bob"}),
            ("toolu_01XFyAjstT3966qvRynZyVPo", "retrieve_entity_info", {"name": "Charlie"}),
            ("toolu_013mnQZbgtK2oe3Mo3XKJsx3", "retrieve_entity_info", {"name": "Daisy"}),
        ],
        results=[
            ("toolu_0167cfEnoQaPviGdVXA95zcu", "alice is bob's wife"),
            ("toolu_01EEe2V5HD1Ac4rKiUR4HD2T", "bob is alice's husband"),
            ("toolu_01XFyAjstT3966qvRynZyVPo", "charlie is alice's son"),
            ("toolu_013mnQZbgtK2oe3Mo3XKJsx3", "daisy is bob's daughter"),
        ],
        tools=["retrieve_entity_info"],
    ),
    "anthropic/request/claude-sonnet4-thinking-tool-result.json": Expect(
        calls=[("toolu_01YGzqpRE16Vricda3Aqcejo", "get_user_country", {})],
        results=[("toolu_01YGzqpRE16Vricda3Aqcejo", "Mexico")],
        tools=["get_user_country"],
    ),
    "gemini/request/gemini20flash-enum-as-int-function-response.json": Expect(
        calls=[(ANY, "calculate", {"expression": "15 * 7"})],
        results=[(0, "105")],
        tools=["calculate"],
    ),
    "gemini/request/gemini25flash-function-response.json": Expect(
        calls=[("pyd_ai_631cce761e7a447c931ccc129fe40f08", "get_weather", {"city": "Paris"})],
        results=[("pyd_ai_631cce761e7a447c931ccc129fe40f08", "Sunny, 22C in Paris")],
        tools=["get_weather"],
    ),
    "bedrock-converse/request/claude-sonnet45-tool-result.json": Expect(
        calls=[("tooluse_XjTErzm6TpyMMpDviNVY3g", "get_weather", {"city": "Paris"})],
        results=[("tooluse_XjTErzm6TpyMMpDviNVY3g", "Sunny, 22C in Paris")],
        tools=["get_weather"],
    ),
    "bedrock-converse/request/nova-micro-converse-stream-tool-result.json": Expect(
        calls=[("tooluse_lAG_zP8QRHmSYOwZzzaCqA", "get_temperature", {"city": "Paris"})],
        results=[("tooluse_lAG_zP8QRHmSYOwZzzaCqA", "30°C")],
        tools=["get_capital", "get_temperature"],
    ),
    "openai-responses/request/openai-function-call-output.json": Expect(
        calls=[("call_E4xGYcmG4CvUzTabsGjXo6ba", "get_weather", {"city": "Paris"})],
        results=[("call_E4xGYcmG4CvUzTabsGjXo6ba", "Sunny, 22C in Paris")],
        tools=["get_weather"],
    ),
    # ---- responses ----
    "openai-chat/response/deepseek-reasoner-tool-call.json": Expect(
        calls=[("call_00_9V0vrf86Pc9aelHCJMZqnJBo", "weather", {"location": "San Francisco"})],
        finish=("tool_calls", "tool_calls"),
        usage={
            "input_tokens": 339,
            "output_tokens": 92,
            "total_tokens": 431,
            "cache_read_tokens": 320,
            "reasoning_tokens": 48,
        },
    ),
    "openai-chat/response/gemini-compat-tool-call-empty-id.json": Expect(
        calls=[(ANY, "get_current_time", {})],
        finish=("tool_calls", "tool_calls"),
        usage={"input_tokens": 35, "output_tokens": 12, "total_tokens": 109},
    ),
    "openai-chat/response/groq-error-tool-use-failed.json": Expect(
        error=("tool_use_failed", "Tool call validation failed: tool call validation failed")
    ),
    "openai-chat/response/groq-llama33-tool-call.json": Expect(
        calls=[("ax9fskhev", "weather", {})],
        finish=("tool_calls", "tool_calls"),
        usage={"input_tokens": 218, "output_tokens": 15, "total_tokens": 233},
    ),
    "openai-chat/response/ollama-cloud-compat-tool-call-with-reasoning.json": Expect(
        calls=[("call_o2vnpxrw", "final_result", {"city": "Paris", "country": "France"})],
        finish=("tool_calls", "tool_calls"),
        usage={"input_tokens": 206, "output_tokens": 194, "total_tokens": 400},
    ),
    "openai-chat/response/openai-error-unsupported-parameter.json": Expect(
        error=("unsupported_parameter", "Unsupported parameter: 'max_tokens'")
    ),
    "openai-chat/response/openai-gpt35-legacy-function-call.json": Expect(
        calls=[(ANY, "get_weather", {"location": "Boston"})],
        finish=("tool_calls", "function_call"),
        usage={
            "input_tokens": 62,
            "output_tokens": 14,
            "total_tokens": 76,
            "cache_read_tokens": 0,
            "reasoning_tokens": 0,
        },
    ),
    "openai-chat/response/xai-grok3mini-tool-call-empty-content.json": Expect(
        calls=[("call_46427107", "weather", {"location": "San Francisco"})],
        finish=("tool_calls", "tool_calls"),
        usage={
            "input_tokens": 307,
            "output_tokens": 26,
            "total_tokens": 588,
            "cache_read_tokens": 244,
            "reasoning_tokens": 255,
        },
    ),
    "mistral/response/mistral-large-tool-call.json": Expect(
        calls=[("KikbB849t", "get_weather", {"city": "Paris"})],
        finish=("tool_calls", "tool_calls"),
        usage={"input_tokens": 77, "output_tokens": 12, "total_tokens": 89, "cache_read_tokens": 76},
    ),
    "mistral/response/mistral-small-tool-call.json": Expect(
        calls=[("gSIMJiOkT", "weather", {"location": "San Francisco"})],
        finish=("tool_calls", "tool_calls"),
        usage={"input_tokens": 124, "output_tokens": 22, "total_tokens": 146},
    ),
    "anthropic/response/claude-haiku45-parallel-tool-use.json": Expect(
        calls=[
            ("toolu_0167cfEnoQaPviGdVXA95zcu", "retrieve_entity_info", {"name": "Alice"}),
            ("toolu_01EEe2V5HD1Ac4rKiUR4HD2T", "retrieve_entity_info", {"name": "Bob"}),
            ("toolu_01XFyAjstT3966qvRynZyVPo", "retrieve_entity_info", {"name": "Charlie"}),
            ("toolu_013mnQZbgtK2oe3Mo3XKJsx3", "retrieve_entity_info", {"name": "Daisy"}),
        ],
        finish=("tool_calls", "tool_use"),
        usage={"input_tokens": 423, "output_tokens": 202, "cache_read_tokens": 0, "cache_write_tokens": 0},
    ),
    "anthropic/response/claude-sonnet4-server-tool-error.json": Expect(
        finish=("stop", "end_turn"),
        usage={"input_tokens": 1902, "output_tokens": 214, "cache_read_tokens": 0, "cache_write_tokens": 0},
    ),
    "anthropic/response/claude-sonnet4-thinking-then-tool-use.json": Expect(
        calls=[("toolu_01YGzqpRE16Vricda3Aqcejo", "get_user_country", {})],
        finish=("tool_calls", "tool_use"),
        usage={"input_tokens": 398, "output_tokens": 155, "cache_read_tokens": 0, "cache_write_tokens": 0},
    ),
    "anthropic/response/claude3opus-tool-use-no-args.json": Expect(
        calls=[("toolu_01LRmxn9vGM1d2DZSDBowdZ1", "updateIssueList", {})],
        finish=("tool_calls", "tool_use"),
        usage={"input_tokens": 602, "output_tokens": 93, "cache_read_tokens": 0, "cache_write_tokens": 0},
    ),
    # Gemini: finishReason STOP (or 1) even when the model called a function; thoughts count as output.
    "gemini/response/gemini20flash-enum-as-int-function-call.json": Expect(
        calls=[(ANY, "calculate", {"expression": "15 * 7"})],
        finish=("tool_calls", "1"),
        usage={"input_tokens": 21, "output_tokens": 7, "total_tokens": 28},
    ),
    "gemini/response/gemini25flash-function-call.json": Expect(
        calls=[(ANY, "get_weather", {"city": "Paris"})],
        finish=("tool_calls", "STOP"),
        usage={"input_tokens": 49, "output_tokens": 15 + 48, "total_tokens": 112, "reasoning_tokens": 48},
    ),
    "gemini/response/gemini3pro-function-call-thought-signature.json": Expect(
        calls=[(ANY, "weather", {"location": "San Francisco"})],
        finish=("tool_calls", "STOP"),
        usage={"input_tokens": 29, "output_tokens": 15 + 893, "total_tokens": 937, "reasoning_tokens": 893},
    ),
    "google-interactions/response/gemini25flash-function-call-step.json": Expect(
        calls=[("zggxzq8r", "getWeather", {"location": "San Francisco"})],
        finish=("tool_calls", "requires_action"),
        usage={
            "input_tokens": 53,
            "output_tokens": 15 + 41,
            "total_tokens": 109,
            "cache_read_tokens": 0,
            "reasoning_tokens": 41,
        },
    ),
    "bedrock-converse/response/claude-reasoning-content.json": Expect(
        finish=("stop", "end_turn"),
        usage={
            "input_tokens": 51,
            "output_tokens": 78,
            "total_tokens": 129,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        },
    ),
    "bedrock-converse/response/claude-sonnet45-tool-use.json": Expect(
        calls=[("tooluse_XjTErzm6TpyMMpDviNVY3g", "get_weather", {"city": "Paris"})],
        finish=("tool_calls", "tool_use"),
        usage={
            "input_tokens": 572,
            "output_tokens": 53,
            "total_tokens": 625,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        },
    ),
    "bedrock-converse/response/error-model-not-found.json": Expect(
        error=(None, "The provided model identifier is invalid.")
    ),
    "ollama/response/ollama-cloud-gptoss-tool-call.json": Expect(
        calls=[("call_onade4wz", "getWeather", {"location": "San Francisco, CA"})],
        finish=("tool_calls", "stop"),
        usage={"input_tokens": 145, "output_tokens": 58},
    ),
    "ollama/response/ollama-local-error-model-does-not-support-tools.json": Expect(
        error=(None, "registry.ollama.ai/library/gemma3:1b does not support tools")
    ),
    "cohere/response/cohere-parallel-tool-calls.json": Expect(
        calls=[
            ("weather_dqgshstja6p9", "weather", {"location": "San Francisco"}),
            ("cityAttractions_dcxfx4myvx68", "cityAttractions", {"city": "San Francisco"}),
        ],
        finish=("tool_calls", "TOOL_CALL"),
        usage={"input_tokens": 1549, "output_tokens": 103, "cache_read_tokens": 992},
    ),
    "cohere/response/cohere-tool-call-null-args.json": Expect(
        calls=[("currentTime_tf4dywn8wgnk", "currentTime", None)],
        finish=("tool_calls", "TOOL_CALL"),
        usage={"input_tokens": 1445, "output_tokens": 43, "cache_read_tokens": 992},
    ),
    "openai-responses/response/azure-gpt51-function-call.json": Expect(
        calls=[("call_YunNGbIwdVJ2i0y0Mybva4Pw", "weather", {"location": "San Francisco"})],
        finish=("tool_calls", "completed"),
        usage={
            "input_tokens": 45,
            "output_tokens": 24,
            "total_tokens": 69,
            "cache_read_tokens": 0,
            "reasoning_tokens": 0,
        },
    ),
    # A custom tool's free-text input is carried as a JSON string value, so it still parses.
    "openai-responses/response/openai-custom-tool-call.json": Expect(
        calls=[("call_custom_sql_001", "write_sql", "SELECT * FROM users WHERE age > 25")],
        finish=("tool_calls", "completed"),
        usage={
            "input_tokens": 50,
            "output_tokens": 20,
            "total_tokens": 70,
            "cache_read_tokens": 0,
            "reasoning_tokens": 0,
        },
    ),
    "openai-responses/response/openai-function-call.json": Expect(
        calls=[("call_E4xGYcmG4CvUzTabsGjXo6ba", "get_weather", {"city": "Paris"})],
        finish=("tool_calls", "completed"),
        usage={
            "input_tokens": 50,
            "output_tokens": 81,
            "total_tokens": 131,
            "cache_read_tokens": 0,
            "reasoning_tokens": 0,
        },
    ),
    "openai-responses/response/openai-programmatic-tool-calling.json": Expect(
        calls=[("call_rj6LW6NEyodD5YVKeoexoLNz", "getInventory", {"sku": "sku_123"})],
        finish=("tool_calls", "completed"),
        usage={
            "input_tokens": 631,
            "output_tokens": 139,
            "total_tokens": 770,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "reasoning_tokens": 55,
        },
    ),
}


# Bodies whose wire cannot be told from content alone. None of the recorded files is misread, but these kinds are:
# - an OpenAI-compatible vendor (Groq, xAI, DeepSeek, Qwen, Ollama's /v1, Gemini's and Anthropic's compat
#   endpoints) writes the openai-chat format itself, so "openai-chat" is the right answer for all of them;
# - a Mistral body with none of Mistral's own traits (call entries without `type`, `prefix`, thinking chunks,
#   `num_cached_tokens`) is an openai-chat body; decoding it as openai-chat must give the same calls;
# - an `{"error": {...}}` body is the same shape from OpenAI Chat, the Responses API, Groq and Mistral's
#   compat errors; it is read as openai-chat and decodes to the same ProviderError fields.
AMBIGUOUS_AS_OPENAI_CHAT = ("mistral",)


def corpus_files() -> list[str]:
    base = SHARED / "payloads"
    if not base.is_dir():
        return []
    return sorted(str(p.relative_to(base)) for kind in ("request", "response") for p in base.glob(f"*/{kind}/*"))


# ---- the recorded corpus ----


def test_the_table_covers_every_request_and_response_in_the_corpus() -> None:
    shared_dir("payloads")
    assert sorted(CORPUS) == corpus_files()


@pytest.mark.parametrize("relative", sorted(CORPUS))
def test_corpus_body_decodes_to_what_the_file_says(relative: str) -> None:
    check_expectation(relative, CORPUS[relative])


@pytest.mark.parametrize("relative", sorted(CORPUS))
def test_corpus_body_survives_decode_and_encode_to_the_same_wire(relative: str) -> None:
    # No exceptions: every key, value and order-carrying list of every recorded body comes back (compared as
    # JSON values; key order is not compared, as the MANIFEST says the pydantic-ai captures sorted their keys).
    wire, kind, body = load(relative)
    assert round_trip(wire, kind, body) == body


@pytest.mark.parametrize("relative", sorted(CORPUS))
def test_detect_names_the_wire_and_kind_of_corpus_body(relative: str) -> None:
    wire, kind, body = load(relative)
    assert detect(body) == (wire, kind)


@pytest.mark.parametrize("relative", [r for r in sorted(CORPUS) if r.startswith(AMBIGUOUS_AS_OPENAI_CHAT)])
def test_mistral_bodies_decoded_as_openai_chat_give_the_same_calls(relative: str) -> None:
    wire, kind, body = load(relative)
    as_mistral, as_openai = decode(body, wire, kind), decode(body, "openai-chat", kind)
    assert isinstance(as_mistral, Request | Response) and isinstance(as_openai, Request | Response)
    assert strip(calls_and_results(as_mistral)) == strip(calls_and_results(as_openai))
    check_expectation(relative, CORPUS[relative])


def strip(value: Any) -> Any:
    """A canonical value without its provider extras."""
    if isinstance(value, dict):
        return {key: strip(item) for key, item in value.items() if key != "extras"}
    if isinstance(value, list | tuple):
        return [strip(item) for item in value]
    return value


@pytest.mark.parametrize("relative", sorted(CORPUS))
def test_generated_ids_are_stable(relative: str) -> None:
    wire, kind, body = load(relative)
    first, second = decode(body, wire, kind), decode(json.loads(json.dumps(body)), wire, kind)
    assert not isinstance(first, ProviderError) or isinstance(second, ProviderError)
    if not isinstance(first, ProviderError):
        assert isinstance(second, Request | Response)
        assert calls_and_results(first) == calls_and_results(second)


@pytest.mark.parametrize("relative", [r for r in sorted(CORPUS) if "/request/" in r])
def test_corpus_conversations_pair_every_result_with_a_call(relative: str) -> None:
    wire, kind, body = load(relative)
    decoded = decode(body, wire, kind)
    assert isinstance(decoded, Request)
    assert check_pairing(decoded.messages, allow_pending=True) == []
