"""Repeated, reordered, dropped and reused events: a recorded stream replayed damaged never runs other calls as
`complete`.

Every recorded stream in ../shared/payloads is replayed, one framing unit a read (so the known-shapes shortcuts
take what they would from a server), with one kind of damage: a call's index reused by a second call under a new
id (`reuse`), one event sent twice (`duplicate`), two adjacent events swapped (`swap`), one event dropped
(`drop`), or an event emptied of all but its kind (`empty`: the final one, such as a Responses
`response.completed` without its `output`, half the time). Then either every call arrives with exactly
the name and arguments sent (the reused one too), or `MessageEnd.status` is not `complete`, or the table in docs/payloads.md
"What tells a repeated event" names the wire as giving no evidence for that damage. That table names damage to
deltas only (the events that carry a piece of text or arguments); damage to any other event (a start, a stop, a
call's header, an end) is `<mutation>-other` here, which the table never names, so it must always be told. Up to
three damages the wire can tell are also drawn together. The damaged streams also go through the generic path
(every read through `Aggregator.feed`, which never asks a shortcut): same events.
"""

from __future__ import annotations

import functools
import json
import re
import struct
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.projects import REPO_ROOT, SHARED
from support.stream_oracle import frames_of

from toolgen.runtime.streams.aggregator import Aggregator, stream_events
from toolgen.runtime.streams.events import Event, MessageEnd, TextDelta, ToolCallStart
from toolgen.runtime.wires.canonical import Response

from test_stream_properties import comparable

PAYLOADS = SHARED / "payloads"
FILES = sorted(PAYLOADS.glob("*/stream/*")) if PAYLOADS.is_dir() else []
NAMES = [str(path.relative_to(PAYLOADS)) for path in FILES]
pytestmark = pytest.mark.skipif(not FILES, reason="../shared/payloads is absent: no recorded streams to replay")

MUTATIONS = ("reuse", "duplicate", "swap", "drop", "empty")
# Wires that name their events in SSE `event:` lines; the .jsonl recordings left them out.
_NAMED = frozenset({"anthropic", "openai-responses"})
_EMPTY_KEEP = frozenset(
    {"type", "event_type", "object", "id", "sequence_number", "model", "created", "created_at", "done"}
)
_WRAPPED = frozenset({"response", "interaction", "message"})

Unit = tuple[str | None, bytes]  # (SSE event or eventstream event type, payload text)


def wire_of(name: str) -> str:
    return Path(name).parts[0]


@functools.cache
def units(name: str) -> tuple[Unit, ...]:
    frames = frames_of((PAYLOADS / name).read_bytes())
    return tuple((frame.event, frame.data) for frame in frames if frame.kind == "event" and frame.data.strip())


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _parsed(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


# ---- framing the units again, one read each ----


def _header(name: str, value: str) -> bytes:
    raw = value.encode()
    return bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw


def _eventstream(event: str, payload: bytes) -> bytes:
    headers = {":event-type": event, ":content-type": "application/json", ":message-type": "event"}
    head = b"".join(_header(key, value) for key, value in headers.items())
    prelude = struct.pack(">II", 12 + len(head) + len(payload) + 4, len(head))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + head + payload
    return message + struct.pack(">I", zlib.crc32(message))


def reads_of(name: str, stream: list[Unit]) -> list[bytes]:
    wire = wire_of(name)
    if name.endswith(".eventstream"):
        return [_eventstream(event or "", data) for event, data in stream]
    if wire == "ollama":
        return [data + b"\n" for _, data in stream]
    out = []
    for event, data in stream:
        if event is None and wire in _NAMED:
            payload = _parsed(data)
            event = payload.get("type") if isinstance(payload, dict) else None
        head = b"" if event is None else b"event: " + event.encode() + b"\n"
        out.append(head + b"data: " + data + b"\n\n")
    return out


def run(name: str, stream: list[Unit]) -> list[Event]:
    """The events of the stream read by read; the generic path (no shortcut) must give the very same."""
    reads = reads_of(name, stream)
    fast = list(stream_events(reads, wire_of(name)))
    aggregator = Aggregator(wire_of(name))
    generic = [event for read in reads for event in aggregator.feed(read)] + aggregator.close()
    assert comparable(fast) == comparable(generic), name
    return fast


# ---- what the calls are ----


def _canonical(arguments: Any) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except (TypeError, ValueError):
        return f"not JSON: {arguments!r}"


def calls_of(end: MessageEnd) -> Counter[tuple[str, str]]:
    if not isinstance(end.response, Response):
        return Counter()
    return Counter(
        (str(call["function"]["name"]), _canonical(call["function"]["arguments"]))
        for call in end.response.message.get("tool_calls") or ()
    )


def ids_of(end: MessageEnd) -> set[str]:
    if not isinstance(end.response, Response):
        return set()
    return {str(call.get("id")) for call in end.response.message.get("tool_calls") or () if call.get("id")}


def end_of(events: list[Event]) -> MessageEnd:
    end = events[-1]
    assert isinstance(end, MessageEnd)
    assert end.complete == (end.status == "complete")
    return end


@functools.cache
def reference(name: str) -> tuple[Counter[tuple[str, str]], frozenset[str]]:
    """The recorded stream's calls, and the ids the wire gave them (not the ones a decoder makes up)."""
    events = run(name, list(units(name)))
    given_ids = {event.id for event in events if isinstance(event, ToolCallStart) and event.id}
    end = end_of(events)
    return calls_of(end), frozenset(ids_of(end) & given_ids)


# ---- the table in docs/payloads.md ----


@functools.cache
def no_evidence() -> dict[str, frozenset[str]]:
    """docs/payloads.md rows: each wire (an `openai-chat` row says with or without `obfuscation`) -> the damage it cannot
    tell, as the mutation names in the row's last column."""
    text = (REPO_ROOT / "docs" / "payloads.md").read_text(encoding="utf-8")
    section = text.split("### What tells a repeated event", 1)[1].split("\n#", 1)[0]
    table: dict[str, frozenset[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        damage = frozenset(re.findall(r"`(\w+)`", cells[2])) & set(MUTATIONS)
        for wire in re.findall(r"`([\w-]+)`", cells[0]):
            key = wire
            if wire == "openai-chat":
                key += " without obfuscation" if "without" in cells[0] else " with obfuscation"
            if wire != "obfuscation":
                table[key] = damage
    return table


def row_of(name: str) -> str:
    wire = wire_of(name)
    if wire != "openai-chat":
        return wire
    marked = any(
        isinstance(payload, dict) and "obfuscation" in payload for payload in map(_parsed, (d for _, d in units(name)))
    )
    return "openai-chat " + ("with" if marked else "without") + " obfuscation"


def judge(name: str, done: list[str], events: list[Event], expected: Counter[tuple[str, str]], ids: set[str]) -> None:
    end = end_of(events)
    if calls_of(end) == expected and ids <= ids_of(end):
        return
    if end.status != "complete":
        return
    stated = no_evidence().get(row_of(name))
    assert stated is not None, f"the table in docs/payloads.md has no row for {row_of(name)}"
    missing = [mutation for mutation in done if mutation not in stated]
    assert not missing, (
        f"{name}: after {done} the stream is complete with calls {dict(calls_of(end))} (ids {ids_of(end)}),"
        f" sent {dict(expected)} (ids {ids}); docs/payloads.md says the wire tells {missing}"
    )


# ---- the damage ----


def _index_of(wire: str, event: str | None, payload: dict[str, Any]) -> tuple[str | None, Any]:
    """The event's kind and the call slot it names, for the indexed wires."""
    if wire == "bedrock-converse":
        if event is None and len(payload) == 1:
            ((event, payload),) = payload.items()
        inner = payload if isinstance(payload, dict) else {}
        return event, inner.get("contentBlockIndex")
    if wire == "openai-responses":
        return payload.get("type") or event, payload.get("output_index")
    kind = payload.get("type") or payload.get("event_type") or event
    return kind, payload.get("index")


def _starts(wire: str, stream: list[Unit]) -> list[int]:
    """Positions of the events that begin a call with an id, on the wires whose calls have an index."""
    found = []
    for at, (event, data) in enumerate(stream):
        payload = _parsed(data)
        if not isinstance(payload, dict):
            continue
        kind, _ = _index_of(wire, event, payload)
        inner = next(iter(payload.values())) if wire == "bedrock-converse" and event is None else payload
        if (
            (kind == "content_block_start" and (payload.get("content_block") or {}).get("type") == "tool_use")
            or (kind == "contentBlockStart" and isinstance(inner, dict) and "toolUse" in (inner.get("start") or {}))
            or (kind == "tool-call-start")
            or (kind == "step.start" and (payload.get("step") or {}).get("type") == "function_call")
            or (kind == "response.output_item.added" and (payload.get("item") or {}).get("type") == "function_call")
        ):
            found.append(at)
        elif wire in ("openai-chat", "mistral"):
            for choice in payload.get("choices") or ():
                for entry in (choice.get("delta") or {}).get("tool_calls") or ():
                    if entry.get("id") and "index" in entry:
                        found.append(at)
    return found


def _renamed(value: Any, old: set[str], new: str) -> Any:
    """The value with every string in `old` (the call's ids) replaced by `new`."""
    if isinstance(value, str):
        return new if value in old else value
    if isinstance(value, dict):
        return {key: _renamed(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_renamed(item, old, new) for item in value]
    return value


def _call_ids(wire: str, payload: dict[str, Any]) -> set[str]:
    inner = next(iter(payload.values())) if wire == "bedrock-converse" and len(payload) == 1 else payload
    found = set()
    for path in (
        ("content_block", "id"),
        ("start", "toolUse", "toolUseId"),
        ("delta", "message", "tool_calls", "id"),
        ("step", "id"),
        ("item", "id"),
        ("item", "call_id"),
    ):
        value: Any = inner
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str) and value:
            found.add(value)
    return found


def reuse(
    name: str, stream: list[Unit], pick: int, renumber: bool = True
) -> tuple[list[Unit], tuple[set[str], str]] | None:
    """A second call at the index of call `pick`, under a new id, right after the first one ends; with the ids
    of the call copied and the new id. On Responses the final output holds the copy too, and every event is
    numbered again in order (`renumber`), as a server would; without it, the copy repeats its original's
    numbers."""
    wire = wire_of(name)
    starts = _starts(wire, stream)
    if not starts:
        return None
    at = starts[pick % len(starts)]
    event, data = stream[at]
    payload = _parsed(data)
    new = f"reused-{pick}-{at}-{len(stream)}"
    if wire in ("openai-chat", "mistral"):
        return _reuse_chat(stream, at, payload, new)
    kind, index = _index_of(wire, event, payload)
    old = _call_ids(wire, payload)
    item_id = (payload.get("item") or {}).get("id")
    mine = [at]
    for later in range(at + 1, len(stream)):
        other = _parsed(stream[later][1])
        if not isinstance(other, dict):
            continue
        other_kind, other_index = _index_of(wire, stream[later][0], other)
        if other_index == index or (item_id is not None and other.get("item_id") == item_id):
            if other_kind == kind:
                break  # the index reused by the stream itself
            mine.append(later)
            if other_kind in _CALL_ENDS:
                break
    copies = [(stream[k][0], _dumps(_renamed(_parsed(stream[k][1]), old, new))) for k in mine]
    out = [*stream[: mine[-1] + 1], *copies, *stream[mine[-1] + 1 :]]
    if wire == "openai-responses":
        out = _responses_consistent(out, old, new, renumber)
    return out, (old, new)


_CALL_ENDS = frozenset(
    {"content_block_stop", "contentBlockStop", "tool-call-end", "step.stop", "response.output_item.done"}
)


def _reuse_chat(
    stream: list[Unit], at: int, payload: dict[str, Any], new: str
) -> tuple[list[Unit], tuple[set[str], str]]:
    entry = next(
        entry
        for choice in payload.get("choices") or ()
        for entry in (choice.get("delta") or {}).get("tool_calls") or ()
        if entry.get("id")
    )
    slot, old = entry["index"], entry["id"]
    mine: list[tuple[int, dict[str, Any], bool]] = []
    for k in range(at, len(stream)):
        chunk = _parsed(stream[k][1])
        if not isinstance(chunk, dict):
            continue
        for choice in chunk.get("choices") or ():
            for item in (choice.get("delta") or {}).get("tool_calls") or ():
                if item.get("index") == slot and (k == at or not item.get("id") or item.get("id") == old):
                    mine.append((k, item, bool(choice.get("finish_reason"))))
                elif item.get("index") == slot and k > at:
                    break  # the slot reused by the stream itself
    head = {key: value for key, value in payload.items() if key not in ("choices", "usage", "obfuscation")}
    copies: list[Unit] = []
    for _, item, _ in mine:
        renamed = {**item, "id": new} if item.get("id") else item
        copies.append((None, _dumps({**head, "choices": [{"index": 0, "delta": {"tool_calls": [renamed]}}]})))
    open_ones = [k for k, _, finished in mine if not finished]
    where = open_ones[-1] + 1 if open_ones else mine[0][0]
    return [*stream[:where], *copies, *stream[where:]], ({old}, new)


def _responses_consistent(stream: list[Unit], old: set[str], new: str, renumber: bool) -> list[Unit]:
    """What a server reusing an output_index would send: the new item in the final output, numbers in order."""
    out: list[Unit] = []
    for number, (event, data) in enumerate(stream):
        payload = _parsed(data)
        if isinstance(payload, dict):
            if "sequence_number" in payload and renumber:
                payload["sequence_number"] = number
            output = (
                (payload.get("response") or {}).get("output") if payload.get("type") == "response.completed" else None
            )
            if isinstance(output, list):
                extra = [_renamed(item, old, new) for item in output if _call_ids("", {"item": item}) & old]
                payload["response"]["output"] = [*output, *extra]
            data = _dumps(payload)
        out.append((event, data))
    return out


def emptied(stream: list[Unit], at: int | None = None) -> list[Unit]:
    """The payload at `at` (by default the last one) with nothing left but what says which event it is (a
    Responses final response keeps its scalars, not its output)."""
    places = [at % len(stream)] if at is not None and stream else range(len(stream) - 1, -1, -1)
    for place in places:
        payload = _parsed(stream[place][1])
        if not isinstance(payload, dict):
            continue
        if len(payload) == 1 and isinstance(next(iter(payload.values())), dict):
            kept: dict[str, Any] = {next(iter(payload)): {}}  # Bedrock's SDK-decoded {"<event>": {...}}
        else:
            kept = {key: value for key, value in payload.items() if key in _EMPTY_KEEP}
            for key in _WRAPPED & payload.keys():
                if isinstance(payload[key], dict):
                    kept[key] = {k: v for k, v in payload[key].items() if not isinstance(v, (dict, list))}
        return [*stream[:place], (stream[place][0], _dumps(kept)), *stream[place + 1 :]]
    return stream


Reused = tuple[set[str], str]  # the ids of the call copied, and the copy's new id

# What carries a piece of text or arguments on each wire: the events whose repeat, loss or swap a wire may give no
# evidence of. The table in docs/payloads.md names damage to these only; damage to any other event must be told.
_DELTA_KINDS = frozenset(
    {
        "content_block_delta",
        "contentBlockDelta",
        "content-delta",
        "tool-call-delta",
        "tool-plan-delta",
        "step.delta",
    }
)


def is_delta(wire: str, event: str | None, data: bytes) -> bool:
    payload = _parsed(data)
    if not isinstance(payload, dict):
        return False
    if wire == "ollama":
        return not payload.get("done")
    if wire == "gemini":
        candidates = payload.get("candidates") or []
        return bool(candidates) and all(
            candidate.get("finishReason") is None
            and not any(
                isinstance(part.get("functionCall"), dict)
                and part["functionCall"].get("willContinue")
                and part["functionCall"].get("name")
                for part in (candidate.get("content") or {}).get("parts") or ()
            )
            for candidate in candidates
        )
    if wire in ("openai-chat", "mistral"):
        choices = payload.get("choices") or []
        return bool(choices) and all(
            not choice.get("finish_reason")
            and not any(
                entry.get("id") or (entry.get("function") or {}).get("name")
                for entry in (choice.get("delta") or {}).get("tool_calls") or ()
            )
            for choice in choices
        )
    kind, _ = _index_of(wire, event, payload)
    return kind in _DELTA_KINDS or str(kind).endswith(".delta")


def mutate(name: str, stream: list[Unit], mutation: str, at: int) -> tuple[list[Unit], str, Reused | None] | None:
    """The stream with one damage at position `at` (a call number for `reuse`), and what the damage was: the
    mutation's name where it fell on deltas only, else `<mutation>-other`. None where it does not apply."""
    wire = wire_of(name)
    if mutation == "reuse":
        made = reuse(name, stream, at)
        return None if made is None else (made[0], mutation, made[1])
    if mutation == "empty":
        # The final event half the time (a Responses final response without its output), else any event.
        return emptied(stream, None if at % 2 == 0 else at // 2), mutation, None
    if not stream:
        return None
    at %= len(stream)
    if mutation in ("duplicate", "drop"):
        label = mutation if is_delta(wire, *stream[at]) else mutation + "-other"
        if mutation == "duplicate":
            return [*stream[: at + 1], stream[at], *stream[at + 1 :]], label, None
        return [*stream[:at], *stream[at + 1 :]], label, None
    if len(stream) < 2:
        return None
    at = min(at, len(stream) - 2)
    both = is_delta(wire, *stream[at]) and is_delta(wire, *stream[at + 1])
    return [*stream[:at], stream[at + 1], stream[at], *stream[at + 2 :]], mutation if both else "swap-other", None


@functools.cache
def reference_calls(name: str) -> dict[str, tuple[str, str]]:
    """The recorded stream's calls by id."""
    end = end_of(run(name, list(units(name))))
    if not isinstance(end.response, Response):
        return {}
    return {
        str(call.get("id")): (str(call["function"]["name"]), _canonical(call["function"]["arguments"]))
        for call in end.response.message.get("tool_calls") or ()
    }


def expected_after(name: str, reused: list[Reused]) -> tuple[Counter[tuple[str, str]], set[str]]:
    """The calls the damaged stream's server sent: the recorded ones, and one more for each call reused."""
    calls, ids = reference(name)
    expected, known = Counter(calls), set(ids)
    by_id = dict(reference_calls(name))
    for old, new in reused:
        call = next((by_id[one] for one in old if one in by_id), None)
        assert call is not None, (name, old)
        by_id[new] = call
        expected[call] += 1
        known.add(new)
    return expected, known


# ---- the tests ----


SINGLE = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.mark.parametrize("mutation", MUTATIONS)
@pytest.mark.parametrize("name", NAMES)
@SINGLE
@given(at=st.integers(0, 400))
def test_one_damage_never_passes_other_calls_as_complete(name: str, mutation: str, at: int) -> None:
    made = mutate(name, list(units(name)), mutation, at)
    if made is None:
        return
    stream, label, reused = made
    expected, ids = expected_after(name, [reused] if reused else [])
    judge(name, [label], run(name, stream), expected, ids)


SEVERAL = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@SEVERAL
@given(
    name=st.sampled_from(NAMES or ["none"]),
    damage=st.lists(st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 400)), min_size=1, max_size=3),
)
def test_several_damages_never_pass_other_calls_as_complete(name: str, damage: list[tuple[str, int]]) -> None:
    stream = list(units(name))
    done: list[str] = []
    reused: list[Reused] = []
    for mutation, at in damage:
        made = mutate(name, stream, mutation, at)
        if made is None:
            continue
        if made[1] in no_evidence().get(row_of(name), frozenset()):
            continue  # damage the wire gives no evidence of, taken as it came: it would hide the rest
        stream, label, copy = made
        done.append(label)
        if copy is not None:
            reused.append(copy)
    expected, ids = expected_after(name, reused)
    judge(name, done, run(name, stream), expected, ids)


def test_every_recorded_stream_with_calls_ends_complete_undamaged() -> None:
    """The damage tests mean something: the recorded streams themselves end complete with their calls."""
    with_calls = 0
    for name in NAMES:
        end = end_of(run(name, list(units(name))))
        calls, _ = reference(name)
        if calls:
            with_calls += 1
            assert end.status == "complete", (name, end.status)
    assert with_calls >= 15


def test_a_reused_index_under_a_new_id_is_a_second_call_on_every_indexed_wire() -> None:
    reused = 0
    for name in NAMES:
        made = reuse(name, list(units(name)), 0)
        if made is None:
            continue
        stream, (_, new) = made
        end = end_of(run(name, stream))
        calls, _ = reference(name)
        assert sum(calls_of(end).values()) == sum(calls.values()) + 1, name
        assert new in ids_of(end) and end.status == "complete", (name, end.status)
        reused += 1
    assert reused >= 12


def test_a_reused_output_index_with_an_emptied_final_response_keeps_both_calls() -> None:
    """The Responses case of the issue: the final event without `output` must not cost the first call."""
    name = "openai-responses/stream/azure-gpt51-function-call.jsonl"
    if name not in NAMES:
        pytest.skip(f"{name} is not in ../shared/payloads")
    made = reuse(name, list(units(name)), 0)
    assert made is not None
    stream, (_, new) = made
    end = end_of(run(name, emptied(stream)))
    calls, ids = reference(name)
    assert sum(calls_of(end).values()) == 2 and set(calls_of(end)) == set(calls)
    assert ids | {new} <= ids_of(end) and end.status == "complete"


def _interactions_delta(event_id: str | None, text: str) -> dict[str, Any]:
    event: dict[str, Any] = {"index": 0, "delta": {"type": "text", "text": text}, "event_type": "step.delta"}
    if event_id is not None:
        event["event_id"] = event_id
    return event


def test_an_interactions_event_id_seen_again_is_a_repeat_and_a_new_one_is_not() -> None:
    start = {"index": 0, "step": {"type": "model_output"}, "event_type": "step.start"}
    end = [
        {"index": 0, "event_type": "step.stop"},
        {"interaction": {"id": "i", "status": "completed"}, "event_type": "interaction.completed"},
    ]
    created = {"interaction": {"id": "i", "status": "in_progress"}, "event_type": "interaction.created"}
    for ids, text, dropped in [(("e1", "e1"), "ha", 1), (("e1", "e2"), "haha", 0)]:
        events = list(
            stream_events([created, start, *(_interactions_delta(i, "ha") for i in ids), *end], "google-interactions")
        )
        last = end_of(events)
        shown = "".join(event.text for event in events if isinstance(event, TextDelta))
        assert (shown, last.duplicates_ignored, last.status) == (text, dropped, "complete")


# ---- the loop: an incomplete stream runs none of its calls, and is asked again ----

LOOP_FIXTURES = REPO_ROOT / "tests" / "fixtures" / "loop"
USER = [{"role": "user", "content": "What's the weather in Paris and Oslo?"}]


def _late_call() -> str:
    """The parallel-calls answer with Oslo's call (header and arguments in one chunk) after the finish_reason:
    taken as a repeat, Paris alone would have run and the stream said complete."""
    chunks = [c for c in (LOOP_FIXTURES / "openai-chat-weather-parallel.sse").read_text().split("\n\n") if c]
    oslo = json.loads(chunks[5].removeprefix("data: "))
    oslo["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = '{"location": "Oslo"}'
    finish = next(i for i, c in enumerate(chunks) if '"finish_reason":"tool_calls"' in c)
    late = [*chunks[:5], chunks[finish], "data: " + json.dumps(oslo), *chunks[finish + 1 :]]
    return "".join(chunk + "\n\n" for chunk in late)


@pytest.fixture(scope="module")
def loop_sdk(source_package: Any) -> Any:
    import importlib

    return source_package, importlib.import_module(f"{source_package.__name__}._runtime")


def _tools(package: Any, ran: list[str]) -> Any:
    tools = package.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        ran.append(args.location)
        return package.GetCurrentWeatherResult(location=args.location, temperature=18, unit="celsius")

    return tools


def test_an_incomplete_stream_runs_none_of_its_calls_and_is_asked_again(loop_sdk: Any) -> None:
    package, rt = loop_sdk
    damaged = _late_call()
    end = end_of(list(stream_events(damaged, "openai-chat")))
    assert end.status == "incomplete" and end.duplicates_ignored == 1
    calls = (LOOP_FIXTURES / "openai-chat-weather-parallel.sse").read_text()
    answer = (LOOP_FIXTURES / "openai-chat-answer.sse").read_text()
    ran: list[str] = []
    events = rt.run_events(USER, rt.ReplayModel([damaged, calls, answer], wire="openai-chat"), _tools(package, ran))
    seen = [event for event in events]
    result = events.result
    # The calls of one batch run at once: in either order.
    assert sorted(ran) == ["Oslo", "Paris, FR"] and result.stop_reason == "finished"
    retried = [dict(e.data) for e in seen if e.type == "error" and dict(e.data).get("retry")]
    assert [(e["type"], e["retry"]) for e in retried] == [("incomplete", 2)]
    # Without retries, the run stops on it: no call runs on what the stream may have lost or reordered.
    ran.clear()
    result = rt.run(
        USER, rt.ReplayModel([damaged], wire="openai-chat"), _tools(package, ran), stream=True, stream_retry=None
    )
    assert ran == [] and result.stop_reason == "error" and "dropped as a repeat" in result.error.message


@pytest.mark.parametrize("name", [name for name in NAMES if wire_of(name) == "openai-responses"])
def test_a_responses_call_copied_under_the_same_sequence_numbers_is_not_passed_as_complete(name: str) -> None:
    """A second call at a reused output_index whose events repeat the first call's sequence numbers: the numbers
    say repeat, the item ids say otherwise, so the second call is either there or the stream is incomplete."""
    made = reuse(name, list(units(name)), 0, renumber=False)
    if made is None:
        pytest.skip("no call in this stream")
    stream, reused = made
    expected, ids = expected_after(name, [reused])
    for damaged in (stream, emptied(stream)):
        end = end_of(run(name, damaged))
        exact = calls_of(end) == expected and ids <= ids_of(end)
        assert exact or end.status == "incomplete", (end.status, calls_of(end))


# ---- hand-written streams of the documented formats: a call lost, doubled or changed is never `complete` ----


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _hand(wire: str, payloads: list[dict[str, Any]]) -> MessageEnd:
    """One payload a read (SSE for the SSE wires, JSON lines for the others), through the shortcuts and through
    the generic path: the same events."""
    if wire in ("anthropic", "openai-chat", "gemini"):
        reads = [
            (b"event: " + p["type"].encode() + b"\n" if wire == "anthropic" and "type" in p else b"")
            + b"data: "
            + _json(p)
            + b"\n\n"
            for p in payloads
        ]
    else:
        reads = [_json(p) + b"\n" for p in payloads]
    fast = list(stream_events(reads, wire))
    aggregator = Aggregator(wire)
    generic = [event for read in reads for event in aggregator.feed(read)] + aggregator.close()
    assert comparable(fast) == comparable(generic), wire
    return end_of(fast)


def _args(end: MessageEnd) -> list[tuple[str, Any]]:
    assert isinstance(end.response, Response)
    return [
        (call["id"], json.loads(call["function"]["arguments"])) for call in end.response.message.get("tool_calls") or ()
    ]


_A_START = {
    "type": "message_start",
    "message": {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "c",
        "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    },
}
_A_END = [
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}},
    {"type": "message_stop"},
]


def _anthropic(index: int, id: str, arguments: str | None, given: Any = None) -> list[dict[str, Any]]:
    block = {"type": "tool_use", "id": id, "name": "f", "input": {} if given is None else given}
    delta = {"type": "input_json_delta", "partial_json": arguments}
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *([{"type": "content_block_delta", "index": index, "delta": delta}] if arguments is not None else []),
        {"type": "content_block_stop", "index": index},
    ]


def _bedrock(index: int, id: str, arguments: str | None, given: Any = None) -> list[dict[str, Any]]:
    tool: dict[str, Any] = {"toolUseId": id, "name": "f", **({} if given is None else {"input": given})}
    return [
        {"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": tool}}},
        *(
            [{"contentBlockDelta": {"contentBlockIndex": index, "delta": {"toolUse": {"input": arguments}}}}]
            if arguments is not None
            else []
        ),
        {"contentBlockStop": {"contentBlockIndex": index}},
    ]


_B_START = [{"messageStart": {"role": "assistant"}}]
_B_END = [
    {"messageStop": {"stopReason": "tool_use"}},
    {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}},
]


def _cohere(index: int, id: str, arguments: str) -> list[dict[str, Any]]:
    call = {"id": id, "type": "function", "function": {"name": "f", "arguments": ""}}
    return [
        {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": call}}},
        {
            "type": "tool-call-delta",
            "index": index,
            "delta": {"message": {"tool_calls": {"function": {"arguments": arguments}}}},
        },
        {"type": "tool-call-end", "index": index},
    ]


_C_START = [{"id": "x", "type": "message-start", "delta": {"message": {"role": "assistant"}}}]
_C_END = [
    {
        "type": "message-end",
        "delta": {"finish_reason": "TOOL_CALL", "usage": {"billed_units": {"input_tokens": 1, "output_tokens": 1}}},
    }
]


def _interactions(index: int, id: str, arguments: str) -> list[dict[str, Any]]:
    step = {"id": id, "type": "function_call", "name": "f", "arguments": {}}
    return [
        {"index": index, "step": step, "event_type": "step.start"},
        {"index": index, "delta": {"arguments": arguments, "type": "arguments_delta"}, "event_type": "step.delta"},
        {"index": index, "event_type": "step.stop"},
    ]


_I_START = [{"interaction": {"id": "i", "status": "in_progress"}, "event_type": "interaction.created"}]
_I_END = [{"interaction": {"id": "i", "status": "requires_action"}, "event_type": "interaction.completed"}]

_INDEXED = {
    "anthropic": (lambda i, id, a: _anthropic(i, id, a), [_A_START], _A_END),
    "bedrock-converse": (lambda i, id, a: _bedrock(i, id, a), _B_START, _B_END),
    "cohere": (_cohere, _C_START, _C_END),
    "google-interactions": (_interactions, _I_START, _I_END),
}


def test_an_anthropic_or_bedrock_call_s_input_in_its_start_is_its_arguments() -> None:
    a = lambda *calls: [_A_START, *(e for c in calls for e in c), *_A_END]  # noqa: E731
    end = _hand("anthropic", a(_anthropic(0, "tA", None, {"x": 1})))
    assert (end.status, _args(end)) == ("complete", [("tA", {"x": 1})])
    end = _hand("anthropic", a(_anthropic(0, "tA", '{"x":1}', {"x": 1})))
    assert (end.status, _args(end)) == ("complete", [("tA", {"x": 1})])
    # Both, disagreeing: the deltas (the documented form) are taken, and the stream is incomplete.
    end = _hand("anthropic", a(_anthropic(0, "tA", '{"x":2}', {"x": 1})))
    assert (end.status, _args(end)) == ("incomplete", [("tA", {"x": 2})])
    b = lambda *calls: [*_B_START, *(e for c in calls for e in c), *_B_END]  # noqa: E731
    end = _hand("bedrock-converse", b(_bedrock(0, "tA", None, {"x": 1})))
    assert (end.status, _args(end)) == ("complete", [("tA", {"x": 1})])
    end = _hand("bedrock-converse", b(_bedrock(0, "tA", '{"x":2}', {"x": 1})))
    assert (end.status, _args(end)) == ("incomplete", [("tA", {"x": 2})])


@pytest.mark.parametrize("wire", sorted(_INDEXED))
def test_a_call_id_again_at_a_new_index_is_a_repeat_or_makes_the_stream_incomplete(wire: str) -> None:
    call, head, tail = _INDEXED[wire]
    end = _hand(wire, [*head, *call(0, "A", '{"x":1}'), *call(1, "A", '{"x": 1}'), *tail])
    assert (end.status, _args(end), end.duplicates_ignored) == ("complete", [("A", {"x": 1})], 1)
    end = _hand(wire, [*head, *call(0, "A", '{"x":1}'), *call(1, "A", '{"x":9}'), *tail])
    assert (end.status, _args(end)) == ("incomplete", [("A", {"x": 1})])
    # A new id at the next index is a new call, as before.
    end = _hand(wire, [*head, *call(0, "A", '{"x":1}'), *call(1, "B", '{"x":1}'), *tail])
    assert (end.status, _args(end)) == ("complete", [("A", {"x": 1}), ("B", {"x": 1})])


def test_two_openai_chat_calls_under_one_id_are_never_complete() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "c",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    calls = [
        chunk(
            {
                "tool_calls": [
                    {"index": i, "id": "A", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}}
                ]
            }
        )
        for i in (0, 1)
    ]
    end = _hand("openai-chat", [chunk({"role": "assistant"}), *calls, chunk({}, "tool_calls")])
    assert end.status == "incomplete"


def _gemini(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "g"}


def _call(name: str, args: dict[str, Any], **marks: str) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
    if "id" in marks:
        part["functionCall"]["id"] = marks["id"]
    if "signature" in marks:
        part["thoughtSignature"] = marks["signature"]
    return part


def test_a_gemini_or_ollama_part_under_a_mark_taken_is_a_repeat_only_when_it_is_the_same() -> None:
    same = _call("f", {"x": 1}, id="a")
    end = _hand("gemini", [_gemini([same]), _gemini([same], "STOP")])
    assert (end.status, end.duplicates_ignored) == ("complete", 1)
    for again in (_call("f", {"x": 2}, id="a"), _call("g", {"x": 1}, signature="S")):
        first = _call("f", {"x": 1}, **({"id": "a"} if "id" in again["functionCall"] else {"signature": "S"}))
        end = _hand("gemini", [_gemini([first]), _gemini([again], "STOP")])
        assert (end.status, len(_args(end))) == ("incomplete", 1), again
    # A new call after the finishReason, carrying its own: not the finishing chunk again.
    end = _hand("gemini", [_gemini([_call("f", {"x": 1})], "STOP"), _gemini([_call("rm", {"p": "/"})], "STOP")])
    assert end.status == "incomplete"
    # Two whole bodies one after the other, the second with another call.
    body = [_gemini([{"text": "ok"}]), _gemini([_call("f", {"x": 1})], "STOP")]
    end = _hand("gemini", [*body, body[0], _gemini([_call("g", {"y": 2})], "STOP")])
    assert end.status == "incomplete"

    def line(stamp: str, args: dict[str, Any] | None, done: bool = False) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        if args is not None:
            message["tool_calls"] = [{"id": "a", "function": {"name": "f", "arguments": args}}]
        return {
            "model": "m",
            "created_at": stamp,
            "message": message,
            "done": done,
            **({"done_reason": "stop"} if done else {}),
        }

    end = _hand("ollama", [line("t1", {"x": 1}), line("t2", {"x": 1}), line("t3", None, True)])
    assert (end.status, end.duplicates_ignored, len(_args(end))) == ("complete", 1, 1)
    end = _hand("ollama", [line("t1", {"x": 1}), line("t2", {"x": 2}), line("t3", None, True)])
    assert (end.status, _args(end)) == ("incomplete", [("a", {"x": 1})])


@pytest.mark.parametrize("wire", sorted(_INDEXED))
def test_a_payload_the_wire_cannot_place_is_never_silence(wire: str) -> None:
    call, head, tail = _INDEXED[wire]
    end = _hand(wire, [*head, *call(0, "A", '{"x":1}'), {}, *tail])
    assert end.status == "incomplete"


def test_another_wire_s_stream_read_as_anthropic_is_not_complete() -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
    end = _hand("anthropic", [_A_START, chunk, *_A_END])
    assert end.status == "incomplete"


def test_a_lost_chunk_of_a_signed_gemini_call_is_what_the_readme_says_cannot_be_told() -> None:
    """Nothing in a Gemini stream says a call should have come (finishReason is STOP either way): a lost chunk
    holding a signed call leaves a complete answer without it, and the table in docs/payloads.md says so."""
    text = _gemini([{"text": "Let me look."}])
    signed = _gemini([_call("f", {"x": 1}, signature="S")])
    end = _hand("gemini", [text, _gemini([], "STOP")])
    assert (end.status, _args(end)) == ("complete", [])
    assert "drop" in no_evidence()["gemini"]
    row = (REPO_ROOT / "docs" / "payloads.md").read_text(encoding="utf-8").split("| `gemini` |", 1)[1].split("\n", 1)[0]
    assert "signed or not" in row.split("|")[1]
    end = _hand("gemini", [text, signed, _gemini([], "STOP")])
    assert (end.status, len(_args(end))) == ("complete", 1)
