"""Properties of streaming: a stream split anywhere decodes the same, a stream cut anywhere keeps all it showed.

Bodies are every recorded stream in ../shared/payloads (when present) plus the hand-written ones in
tests/fixtures/streams. Cut points are drawn anywhere, and also right inside multi-byte UTF-8 characters and
between the CR and LF of a CRLF.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.projects import SHARED, TESTS

from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import (
    Event,
    MessageEnd,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    dumps_compact,
)
from toolgen.runtime.wires.canonical import ProviderError, Response
from toolgen.runtime.wires.gemini.stream import PartialArgs

FIXTURES = TESTS / "fixtures" / "streams"
PAYLOADS = SHARED / "payloads"
FEW = settings(max_examples=12, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def _bodies() -> dict[str, tuple[str | None, Path]]:
    found: dict[str, tuple[str | None, Path]] = {}
    if PAYLOADS.is_dir():
        for path in sorted(PAYLOADS.glob("*/stream/*")):
            found[str(path.relative_to(PAYLOADS))] = (path.relative_to(PAYLOADS).parts[0], path)
    for path in sorted(FIXTURES.iterdir()):
        found[f"fixtures/{path.name}"] = (None, path)
    return found


BODIES = _bodies()


@functools.cache
def body_of(name: str) -> bytes:
    return BODIES[name][1].read_bytes()


def comparable(events: Any) -> tuple[Any, ...]:
    """Events as values: a ProviderError compares by identity, so it stands in as its JSON."""
    out: list[Any] = []
    for event in events:
        if isinstance(event, MessageEnd) and isinstance(event.response, ProviderError):
            out.append(("MessageEnd", event.response.to_json(), event.complete))
        else:
            out.append(event)
    return tuple(out)


@functools.cache
def reference(name: str) -> tuple[Any, ...]:
    return comparable(stream_events(body_of(name), BODIES[name][0]))


def tricky_cuts(body: bytes) -> list[int]:
    """Cut points inside a multi-byte UTF-8 character or a CRLF, and around every line end."""
    cuts = [i for i in range(1, len(body)) if 0x80 <= body[i] < 0xC0 or (body[i - 1] == 0x0D and body[i] == 0x0A)]
    return cuts or [len(body) // 2]


@st.composite
def pieces(draw: st.DrawFn, body: bytes) -> list[bytes]:
    anywhere = st.integers(0, len(body))
    cuts = draw(st.lists(st.one_of(anywhere, st.sampled_from(tricky_cuts(body))), max_size=40))
    bounds = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def texts(events: tuple[Any, ...] | list[Event], kind: type[TextDelta] | type[ReasoningDelta]) -> str:
    return "".join(event.text for event in events if isinstance(event, kind))


def parts_text(message: dict[str, Any], kind: str) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content if kind == "text" else ""
    return "".join(part.get("text") or "" for part in content or [] if part.get("type") == kind)


@pytest.mark.parametrize("name", sorted(BODIES))
@FEW
@given(data=st.data())
def test_any_split_gives_the_same_events(name: str, data: st.DataObject) -> None:
    chunks = data.draw(pieces(body_of(name)))
    assert comparable(stream_events(chunks, BODIES[name][0])) == reference(name)


@pytest.mark.parametrize("name", [name for name in sorted(BODIES) if name.endswith(".sse")])
@pytest.mark.parametrize("line_end", [b"\r\n", b"\r"])
def test_line_endings_do_not_matter(name: str, line_end: bytes) -> None:
    body = body_of(name).replace(b"\r\n", b"\n")
    converted = body.replace(b"\n", line_end)
    chunks = [converted[i : i + 7] for i in range(0, len(converted), 7)]
    assert comparable(stream_events(chunks, BODIES[name][0])) == reference(name)


@pytest.mark.parametrize("name", sorted(BODIES))
@FEW
@given(data=st.data())
def test_a_cut_stream_keeps_everything_it_showed(name: str, data: st.DataObject) -> None:
    body = body_of(name)
    cut = data.draw(st.one_of(st.integers(0, len(body)), st.sampled_from(tricky_cuts(body))))
    events = list(stream_events(data.draw(pieces(body[:cut])), BODIES[name][0]))
    end = events[-1]
    assert isinstance(end, MessageEnd)
    shown = texts(events, TextDelta)
    assert texts(reference(name), TextDelta).startswith(shown)
    assert texts(reference(name), ReasoningDelta).startswith(texts(events, ReasoningDelta))
    if cut < len(body) and not end.complete:
        assert any(isinstance(event, StreamError) for event in events)
    if not isinstance(end.response, Response):
        assert shown == "" and not any(isinstance(event, ToolCallEnd) for event in events)
        return
    message = end.response.message
    assert parts_text(message, "text") == shown
    assert parts_text(message, "reasoning") == texts(events, ReasoningDelta)
    calls = message.get("tool_calls", [])
    ends = [event for event in events if isinstance(event, ToolCallEnd)]
    # The message holds the calls the stream closed, in order; a cut call is only in the stream notes.
    kept = [event for event in ends if event.arguments is not None]
    assert [call["function"]["arguments"] for call in calls] == [event.arguments for event in kept]
    cut = [event.index for event in ends if event.arguments is None]
    assert [note["index"] for note in end.response.extras.get("stream", {}).get("cut_calls", [])] == cut
    for event in ends:
        live = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta) and e.index == event.index)
        if event.arguments is None:
            assert event.parsed is None and event.error is not None and event.error.startswith("cut:")
            assert end.status == "cut" and not end.complete
        elif event.error is not None:
            assert event.arguments == live and event.parsed is None


def sse_body(deltas: list[str]) -> bytes:
    lines = []
    for text in deltas:
        chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]}
        lines.append("data: " + json.dumps(chunk, ensure_ascii=False) + "\n\n")
    lines.append(
        'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    )
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode("utf-8")


@settings(max_examples=60, deadline=None, database=None)
@given(deltas=st.lists(st.text(min_size=1), min_size=1, max_size=8), data=st.data())
def test_any_unicode_text_split_anywhere_arrives_whole(deltas: list[str], data: st.DataObject) -> None:
    body = sse_body(deltas)
    events = list(stream_events(data.draw(pieces(body)), "openai-chat"))
    assert texts(events, TextDelta) == "".join(deltas)
    end = events[-1]
    assert isinstance(end, MessageEnd) and end.complete
    assert isinstance(end.response, Response) and end.response.message["content"] == "".join(deltas)


# ---- Gemini partialArgs: streamed in document order, the live text is exactly the final arguments ----

leaves = st.one_of(
    st.text(max_size=12),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.none(),
)
objects = st.recursive(
    st.dictionaries(st.text(min_size=1, max_size=6), leaves, min_size=1, max_size=3),
    lambda inner: st.one_of(
        st.dictionaries(st.text(min_size=1, max_size=6), inner, min_size=1, max_size=3),
        st.lists(inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
).filter(lambda value: isinstance(value, dict))


def _key(key: str | int) -> str:
    if isinstance(key, int):
        return f"[{key}]"
    return "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']"


def partial_entries(value: Any, path: str, splits: st.DataObject) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [entry for key, inner in value.items() for entry in partial_entries(inner, path + _key(key), splits)]
    if isinstance(value, list):
        return [entry for i, inner in enumerate(value) for entry in partial_entries(inner, path + _key(i), splits)]
    if isinstance(value, str):
        cuts = sorted(splits.draw(st.lists(st.integers(0, len(value)), max_size=3)))
        bounds = [0, *cuts, len(value)]
        entries = [
            {"jsonPath": path, "stringValue": value[a:b], "willContinue": True}
            for a, b in zip(bounds, bounds[1:], strict=False)
        ]
        return [*entries, {"jsonPath": path, "stringValue": ""}]
    if value is None:
        return [{"jsonPath": path, "nullValue": "NULL_VALUE"}]
    if isinstance(value, bool):
        return [{"jsonPath": path, "boolValue": value}]
    return [{"jsonPath": path, "numberValue": value}]


@settings(max_examples=150, deadline=None, database=None)
@given(value=objects, data=st.data())
def test_partial_args_rebuild_any_object(value: dict[str, Any], data: st.DataObject) -> None:
    args = PartialArgs()
    live = "".join(args.apply(entry) for entry in partial_entries(value, "$", data)) + args.close()
    assert args.live
    assert args.build() == value
    assert live == dumps_compact(value)
