"""Detection by evidence: every recorded body and stream, and every request toolgen encodes, is read as its own wire.

The recorded files are ../shared/payloads (skipped with the reason when absent); the first folder of a path is the
wire it was recorded from. OpenAI-compatible vendors (Groq, xAI, DeepSeek, Qwen, Ollama's /v1, Gemini's and
Anthropic's compat endpoints) sit under openai-chat/ and are detected as openai-chat: they write that format.

The rules are in the docstrings of runtime/wires/<wire>/detect.py (chat-shaped bodies: openai_chat/detect.py). Where a body toolgen
encodes carries no mark of its wire it is genuinely ambiguous; AMBIGUOUS_REQUESTS and AMBIGUOUS_RESPONSES name
each such body and why, and the test checks that reading it as the detected wire gives the same canonical
conversation as reading it as its own (so the fallback loses nothing), and that `decode --wire W` still reads it
as W when told.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.cli_in_process import Ran, toolgen_in
from support.projects import REPO_ROOT, SHARED, shared_dir

import toolgen
from toolgen.core.errors import InvalidInputError
from toolgen.runtime import MessageEnd, detect_wire, stream_events
from toolgen.runtime.streams.aggregator import Aggregator
from toolgen.runtime.wires.canonical import ProviderError, Request, Response
from toolgen.runtime.wires.codecs import decode, detect, encode_request, encode_response
from toolgen.runtime.wires.table import ROWS, WIRES

PAYLOADS = SHARED / "payloads"


def recorded(*kinds: str) -> list[str]:
    if not PAYLOADS.is_dir():
        return []
    return sorted(str(p.relative_to(PAYLOADS)) for kind in kinds for p in PAYLOADS.glob(f"*/{kind}/*"))


def strip(value: Any) -> Any:
    """A canonical value without the wire-keyed extras, which differ between wires by design."""
    if isinstance(value, dict):
        return {key: strip(item) for key, item in value.items() if key != "extras"}
    if isinstance(value, list):
        return [strip(item) for item in value]
    return value


def reading(result: Request | Response | ProviderError) -> Any:
    """What a decoding kept: messages, tools, model and settings; the message and finish; an error's fields."""
    if isinstance(result, ProviderError):
        return {key: value for key, value in result.to_json().items() if key != "wire"}
    if isinstance(result, Request):
        return strip([result.messages, result.tools, result.model, result.extras.get("settings")])
    return strip([result.message, result.finish])


def claims(body: Any, kinds: tuple[str, ...] = ("response", "request", "error")) -> list[tuple[str, int, str, str]]:
    """(kind, rank, predicate, wire) of every body predicate that names a wire, in the order `detect` asks them."""
    found = []
    for kind in kinds:
        sniffs = sorted((s for row in ROWS if (s := getattr(row.detection, kind)) is not None), key=lambda s: -s.rank)
        for sniff in sniffs:
            module, name = sniff.where.split(":")
            predicate = getattr(importlib.import_module(f"toolgen.runtime.wires.{module}"), name)
            try:
                wire = predicate(body)
            except (AttributeError, TypeError):  # as detect does: a predicate that cannot read a body says no
                wire = None
            if wire is not None:
                found.append((kind, sniff.rank, sniff.where, wire))
    return found


def chunk_claims(payload: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(rank, predicate, wire) of every stream-chunk predicate that names a wire for a first payload, rank order."""
    sniffs = sorted((s for row in ROWS if (s := row.detection.chunk) is not None), key=lambda s: -s.rank)
    found = []
    for sniff in sniffs:
        module, name = sniff.where.split(":")
        wire = getattr(importlib.import_module(f"toolgen.runtime.wires.{module}"), name)(payload, None)
        if wire is not None:
            found.append((sniff.rank, sniff.where, wire))
    return found


def load(relative: str) -> tuple[str, str, Any]:
    wire, kind, _ = relative.split("/")
    return wire, kind, json.loads((shared_dir("payloads") / relative).read_text(encoding="utf-8"))


# ---- recorded bodies ----


def test_the_recorded_corpus_is_here() -> None:
    base = shared_dir("payloads")
    assert recorded("request", "response") and recorded("stream"), base


@pytest.mark.parametrize("relative", recorded("request", "response"))
def test_a_recorded_body_ranks_its_own_wire_first(relative: str) -> None:
    wire, kind, body = load(relative)
    ranked = claims(body)
    assert ranked, f"{relative}: no predicate recognizes it"
    first_kind, rank, where, first = ranked[0]
    assert first == wire, f"{relative}: {where} (rank {rank}) names {first} before {ranked[1:]}"
    # Error bodies are recorded under response/: detect names them a response of their wire.
    assert detect(body) == (wire, kind)
    assert first_kind in (kind, "error")


# ---- recorded streams ----


@pytest.mark.parametrize("relative", recorded("stream"))
def test_a_recorded_stream_is_read_as_its_own_wire_without_being_told(relative: str) -> None:
    wire = relative.split("/")[0]
    raw = (shared_dir("payloads") / relative).read_bytes()
    aggregator = Aggregator()
    aggregator.feed(raw)
    aggregator.close()
    assert aggregator.wire == wire, relative
    # Detected or told, the stream ends in the same message.
    told = [e for e in stream_events(raw, wire) if isinstance(e, MessageEnd)]
    found = [e for e in stream_events(raw) if isinstance(e, MessageEnd)]
    assert [(e.response.message, e.complete) for e in found] == [(e.response.message, e.complete) for e in told]


@pytest.mark.parametrize("relative", [r for r in recorded("stream") if r.endswith(".jsonl")])
def test_decoded_chunks_of_a_recorded_stream_name_its_wire(relative: str) -> None:
    # JSON lines hold one payload each: the chunks an SDK hands over, already decoded.
    wire = relative.split("/")[0]
    lines = (shared_dir("payloads") / relative).read_text(encoding="utf-8").splitlines()
    chunks = [json.loads(line) for line in lines if line.strip()]
    ranked = chunk_claims(chunks[0])
    assert ranked and ranked[0][2] == wire, f"{relative}: {ranked}"
    assert detect_wire(chunks[0]) == wire
    end = [e for e in stream_events(chunks) if isinstance(e, MessageEnd)][-1]
    assert (
        end.response.message
        == [e for e in stream_events(chunks, wire) if isinstance(e, MessageEnd)][-1].response.message
    )


def test_each_mistral_stream_is_told_by_its_own_evidence() -> None:
    base = shared_dir("payloads") / "mistral" / "stream"
    first = {path.name: json.loads(path.read_text(encoding="utf-8").splitlines()[0]) for path in sorted(base.glob("*"))}
    # Magistral: content as typed chunks, `thinking` holding a list; the GLM one: a delta with its own `index`;
    # mistral-small: a bare role delta, told only by Mistral's 32-hex-digit id and model name.
    assert first["magistral-thinking-content-chunks.jsonl"]["choices"][0]["delta"]["content"][0]["type"] == "thinking"
    assert "index" in first["mistral-hosted-glm-incremental-tool-call.jsonl"]["choices"][0]["delta"]
    assert first["mistral-small-tool-call.jsonl"]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    for name, payload in first.items():
        assert detect_wire(payload) == "mistral", name
        renamed = {**payload, "id": "chatcmpl-1", "model": "gpt-4o"}
        expected = "openai-chat" if name == "mistral-small-tool-call.jsonl" else "mistral"
        assert detect_wire(renamed) == expected, name


# Recorded files whose shape alone says nothing of their wire: only the weakest evidence, the naming (an id, a model),
# tells them. Each is listed with why; the test below finds them by taking the names away.
NAMED_ONLY = {
    "mistral/stream/mistral-small-tool-call.jsonl": (
        "its first chunk is a bare role delta, byte for byte OpenAI's; Mistral's 32-hex-digit id and its "
        "mistral-small-latest model tell it (the call header without `type` comes only in the second chunk)"
    ),
}


def first_payload(relative: str) -> Any:
    """The body of a request or response file, or the first payload of a stream file (None for binary framing)."""
    path = shared_dir("payloads") / relative
    if path.suffix == ".eventstream":
        return None
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        data = json.loads(text)
        return data[0] if isinstance(data, list) else data
    if path.suffix == ".sse":
        line = next(line for line in text.splitlines() if line.startswith("data:") and "{" in line)
        return json.loads(line[len("data:") :])
    return json.loads(text.splitlines()[0])


@pytest.mark.parametrize("relative", recorded("request", "response", "stream"))
def test_the_files_told_only_by_their_names_are_the_ones_listed(relative: str) -> None:
    payload = first_payload(relative)
    if not isinstance(payload, dict):
        return  # a binary event stream or an error array: named by their framing or shape, never by naming
    nameless = {key: value for key, value in payload.items() if key not in ("id", "model")}
    if "/stream/" in relative:
        told = detect_wire(payload) != detect_wire(nameless)
    else:
        told = detect(payload) != detect(nameless)
    assert told == (relative in NAMED_ONLY), f"{relative}: {'told' if told else 'not told'} by its names alone"


CHUNK_RULES = [
    # (why, payload, wire)
    (
        "an OpenAI id outweighs a Mistral model name (vLLM, LM Studio)",
        {"id": "chatcmpl-9", "model": "mistral-small-latest", "choices": []},
        "openai-chat",
    ),
    (
        "another vendor's field outweighs the naming",
        {"id": "0" * 32, "system_fingerprint": "fp", "choices": []},
        "openai-chat",
    ),
    ("an Ollama tag is not Mistral's API", {"id": "x", "model": "mistral-nemo:latest", "choices": []}, "openai-chat"),
    (
        "a router's model path is not Mistral's API",
        {"id": "x", "model": "mistralai/mistral-small", "choices": []},
        "openai-chat",
    ),
    (
        "Mistral's 32-hex-digit id",
        {"id": "5319bd0299614c679a0068a4f2c8ffd0", "model": "zai-glm", "choices": []},
        "mistral",
    ),
    ("Mistral's model name", {"id": "abc123", "model": "mistral-small-latest", "choices": []}, "mistral"),
    (
        "Mistral's `p` padding",
        {"id": "chatcmpl-1", "choices": [{"delta": {"content": "OK"}}], "p": "abcdef"},
        "mistral",
    ),
    (
        "Bedrock pads too, with no `choices`",
        {"contentBlockDelta": {"delta": {"text": "a"}}, "p": "abc"},
        "bedrock-converse",
    ),
    (
        "a call header without `type`",
        {"choices": [{"delta": {"tool_calls": [{"id": "gSIMJiOkT", "function": {"name": "f", "arguments": "{}"}}]}}]},
        "mistral",
    ),
    (
        "an OpenAI continuation delta has no `type` and no id",
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{"}}]}}]},
        "openai-chat",
    ),
    (
        "a whole Mistral response where a stream was asked for",
        {
            "id": "1ecfb2eb89144df48968ae279308e0ee",
            "object": "chat.completion",
            "choices": [{"message": {"role": "assistant", "content": "hi"}}],
        },
        "mistral",
    ),
]


@pytest.mark.parametrize(("why", "payload", "wire"), CHUNK_RULES, ids=[rule[0] for rule in CHUNK_RULES])
def test_the_chunk_rules_as_the_module_states_them(why: str, payload: dict[str, Any], wire: str) -> None:
    assert detect_wire(payload) == wire, why


# ---- bodies toolgen encodes ----

WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city.",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
TIME = {"name": "get_time", "description": "Local time.", "inputSchema": {"type": "object", "properties": {}}}
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
CALL_2 = {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
IMAGE = {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="}
CONVERSATIONS = {
    "plain": Request([{"role": "user", "content": "hi"}], model="m"),
    "system+tools": Request(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}], [WEATHER], "m"
    ),
    "tool-result": Request(
        [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
        ],
        [WEATHER],
        "m",
    ),
    "parallel-results": Request(
        [
            {"role": "user", "content": "Weather and time in Paris?"},
            {"role": "assistant", "content": "Looking.", "tool_calls": [CALL, CALL_2]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
            {"role": "tool", "tool_call_id": "call_2", "content": "21:40"},
            {"role": "assistant", "content": "18C at 21:40."},
            {"role": "user", "content": "Thanks."},
        ],
        [WEATHER, TIME],
        "m",
    ),
    "image": Request([{"role": "user", "content": [{"type": "text", "text": "What is this?"}, IMAGE]}], model="m"),
    "reasoning": Request(
        [
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": [{"type": "reasoning", "text": "Add."}, {"type": "text", "text": "4"}]},
            {"role": "user", "content": "And 3+3?"},
        ],
        model="m",
    ),
    "settings": Request(
        [{"role": "user", "content": "hi"}],
        [WEATHER],
        "m",
        {"settings": {"max_tokens": 100, "temperature": 0.5, "tool_choice": "required", "seed": 3, "stop": ["x"]}},
    ),
}
_SAME_AS_OPENAI = "byte for byte what openai-chat sends for it"
AMBIGUOUS_REQUESTS = {
    ("anthropic", "plain"): "only `max_tokens` beside the messages, which OpenAI, Mistral and Cohere take too",
    ("anthropic", "reasoning"): "unsigned reasoning is not sent to Anthropic: text blocks and `max_tokens` remain",
    ("cohere", "plain"): _SAME_AS_OPENAI,
    ("cohere", "system+tools"): f"{_SAME_AS_OPENAI} (Cohere's tools are OpenAI's function tools)",
    (
        "cohere",
        "tool-result",
    ): "a call with `type` and a `tool_call_id` result, as OpenAI's (which may omit content too)",
    ("cohere", "parallel-results"): "calls with `type` and `tool_call_id` results, as OpenAI's",
    ("cohere", "image"): f"{_SAME_AS_OPENAI} (`image_url` parts)",
    ("mistral", "plain"): _SAME_AS_OPENAI,
    ("mistral", "system+tools"): f"{_SAME_AS_OPENAI} (toolgen writes Mistral's tools with `type`)",
    ("mistral", "image"): f"{_SAME_AS_OPENAI} (`image_url` parts)",
    ("ollama", "plain"): _SAME_AS_OPENAI,
    ("ollama", "system+tools"): f"{_SAME_AS_OPENAI} (Ollama's tools are OpenAI's function tools)",
    ("openai-chat-camel", "plain"): "no key that camelCase spells differently",
    ("openai-chat-camel", "system+tools"): "no key that camelCase spells differently",
    ("openai-chat-camel", "reasoning"): "reasoning is not sent on chat wires: no key that camelCase spells differently",
}
ENCODED = [(wire, name) for wire in WIRES for name in CONVERSATIONS]


@pytest.mark.parametrize(("wire", "name"), ENCODED, ids=[f"{w}-{n}" for w, n in ENCODED])
def test_a_request_toolgen_encodes_is_detected_as_its_wire_or_is_named_ambiguous(wire: str, name: str) -> None:
    body = encode_request(CONVERSATIONS[name], wire)
    found = detect(body)
    reason = AMBIGUOUS_REQUESTS.get((wire, name))
    if reason is None:
        assert found == (wire, "request"), f"{wire} {name}: {json.dumps(body)}"
        return
    assert found != (wire, "request"), f"{wire} {name} is no longer ambiguous: take it out of AMBIGUOUS_REQUESTS"
    assert found == ("openai-chat", "request"), reason
    # The fallback loses nothing: read as openai-chat, the body says what its own wire reads in it.
    assert reading(decode(body, "openai-chat", "request")) == reading(decode(body, wire, "request")), reason


def test_a_mistral_model_name_tells_the_otherwise_ambiguous_mistral_requests() -> None:
    for (wire, name), _ in AMBIGUOUS_REQUESTS.items():
        if wire == "mistral":
            request = CONVERSATIONS[name]
            named = Request(request.messages, request.tools, "mistral-large-latest", request.extras)
            assert detect(encode_request(named, "mistral")) == ("mistral", "request"), name
            # The same name served by Ollama (a tag) or a router (a path) is not Mistral's API.
            for model in ("mistral-large:latest", "mistralai/mistral-large"):
                other = Request(request.messages, request.tools, model, request.extras)
                assert detect(encode_request(other, "openai-chat")) == ("openai-chat", "request"), model


RESPONSES = {
    "text": Response({"role": "assistant", "content": "hello"}, {"reason": "stop", "raw": None}, model="m", id="r1"),
    "calls": Response(
        {"role": "assistant", "content": None, "tool_calls": [CALL, CALL_2]},
        {"reason": "tool_calls", "raw": None},
        model="m",
        id="r1",
    ),
    "reasoning": Response(
        {"role": "assistant", "content": [{"type": "reasoning", "text": "Add."}, {"type": "text", "text": "4"}]},
        {"reason": "stop", "raw": None},
        model="m",
    ),
}
AMBIGUOUS_RESPONSES = {
    ("mistral", "text"): "a text reply under a made-up id and model has none of Mistral's marks",
}
ENCODED_RESPONSES = [(wire, name) for wire in WIRES for name in RESPONSES]


@pytest.mark.parametrize(("wire", "name"), ENCODED_RESPONSES, ids=[f"{w}-{n}" for w, n in ENCODED_RESPONSES])
def test_a_response_toolgen_encodes_is_detected_as_its_wire_or_is_named_ambiguous(wire: str, name: str) -> None:
    body = encode_response(RESPONSES[name], wire)
    found = detect(body)
    reason = AMBIGUOUS_RESPONSES.get((wire, name))
    if reason is None:
        assert found == (wire, "response"), f"{wire} {name}: {json.dumps(body)}"
        return
    assert found == ("openai-chat", "response"), reason
    assert reading(decode(body, "openai-chat", "response")) == reading(decode(body, wire, "response")), reason


def test_an_ambiguous_body_is_read_as_the_wire_given(tmp_path: Path) -> None:
    for (wire, name), reason in AMBIGUOUS_REQUESTS.items():
        path = tmp_path / f"{wire}-{name}.json"
        path.write_text(json.dumps(encode_request(CONVERSATIONS[name], wire)), encoding="utf-8")
        assert toolgen.decode(path, wire=wire, root=tmp_path)["wire"] == wire, reason


# ---- a wire given that the body is not written in ----


@pytest.mark.parametrize("relative", recorded("request", "response"))
def test_decode_with_another_wire_names_the_one_the_body_looks_like(relative: str) -> None:
    wire, kind, body = load(relative)
    path = shared_dir("payloads") / relative
    own = reading(decode(body, wire, kind))
    for other in WIRES:
        if other == wire:
            continue
        try:
            decoded = toolgen.decode(path, wire=other, root=PAYLOADS)
        except InvalidInputError as error:
            [diagnostic] = error.diagnostics
            message = diagnostic.message
            assert message.count("looks like") == 1 and f"looks like the {wire} wire's {kind}" in message, message
            assert f"give --wire {wire}, or leave --wire out to detect it" in message, message
            continue
        # Read without complaint only where the other wire reads the body alike (dialects of one shape).
        again = decode(body, other, decoded["kind"])
        assert reading(again) == own, f"{relative} read as {other} lost what {wire} reads in it"


def toolgen_cli(*args: str) -> Ran:
    """`toolgen ARGS` in this process (click's runner): its exit code and output, as a process would give them."""
    return toolgen_in(REPO_ROOT, *args)


def test_the_command_line_says_it_in_one_sentence_and_exits_3() -> None:
    base = shared_dir("payloads")
    response = str(base / "anthropic/response/claude-haiku45-parallel-tool-use.json")
    shape = toolgen_cli("decode", response, "--wire", "openai-chat")
    assert shape.returncode == 3, shape.stdout + shape.stderr
    # The shape error, then the wire it looks like.
    assert "/choices: expected `choices`" in shape.stdout
    assert "this body looks like the anthropic wire's response; give --wire anthropic" in shape.stdout
    request = str(base / "anthropic/request/claude-haiku45-parallel-tool-results.json")
    lossy = toolgen_cli("decode", request, "--wire", "openai")
    assert lossy.returncode == 3, lossy.stdout + lossy.stderr
    assert "looks like the anthropic wire's request, and read as openai" in lossy.stdout
    converted = toolgen_cli("convert", request, "--from", "openai-chat", "--to", "gemini")
    assert converted.returncode == 3 and "give --from anthropic, or leave --from out" in converted.stdout
    stream = str(base / "anthropic/stream/claude-haiku45-tool-use-json.jsonl")
    streamed = toolgen_cli("decode", stream, "--wire", "openai-chat")
    assert streamed.returncode == 3, streamed.stdout + streamed.stderr
    assert "this stream looks like the anthropic wire's; give --wire anthropic" in streamed.stdout
    mistral = str(base / "mistral/stream/mistral-small-tool-call.jsonl")
    detected = toolgen_cli("decode", mistral)
    assert detected.returncode == 0 and json.loads(detected.stdout)["wire"] == "mistral"
    # A dialect that reads the stream alike is the user's choice to make.
    assert toolgen_cli("decode", mistral, "--wire", "openai-chat").returncode == 0


# ---- odd payloads ----

KEYS = [
    "choices",
    "delta",
    "message",
    "tool_calls",
    "function",
    "id",
    "type",
    "content",
    "thinking",
    "usage",
    "p",
    "model",
    "index",
    "prefix",
    "tools",
    "messages",
    "error",
    "object",
    "arguments",
    "images",
    "role",
]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=5)
    | st.sampled_from(["function", "thinking", "0" * 32]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6))
def test_no_predicate_raises_on_a_payload_of_odd_types(payload: dict[str, Any]) -> None:
    # The aggregator asks the chunk predicates unguarded: whatever a server sends must not make them raise.
    chunk_claims(payload)
    detect_wire(payload)
    try:
        detect(payload)
    except ValueError as error:
        assert str(error).startswith("/: expected")
