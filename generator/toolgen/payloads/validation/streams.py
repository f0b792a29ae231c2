"""Recorded streams in `toolgen validate`: one stream file is one record, its aggregated message checked like a body.

A file given as `<wire>.response` is a recorded stream when its framing says so (`.sse`,
`.eventstream`, Gemini's `alt=json` array in a `.json` file), or, for a `.jsonl` or `.ndjson` file, when its
first line is a stream chunk rather than a finished response (a log of whole responses has a finish on every line; a stream's
first chunk has none yet). The stream is aggregated, faults of the stream itself (a cut call, a payload that
does not parse) are findings at the event where they showed, and the final message is checked with the SDK as a
whole response is, a call's problems placed at the event that started the call (stream_places.py).

Streams are read with toolgen's own runtime, the code every SDK carries byte for byte (`toolgen check` says when
an SDK's copy is stale): the SDK's stream states load on first use, and in a process that has validated with
another package of the same name, they would load from that package. So a package built without the streaming
aggregator (no `streams` in toolgen.yaml `features:`) validates recorded streams all the same: only its models
are used, to check the message a stream aggregates to.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from toolgen.payloads.files import UNREADABLE, open_binary, payload_suffix, read_all
from toolgen.payloads.stream_places import Chunk, call_member, chunks, find_call
from toolgen.payloads.validation.problems import Finding, without_place
from toolgen.payloads.wire_places import resolve, tokens
from toolgen.runtime import (
    MessageEnd,
    ProviderError,
    Response,
    StreamError,
    ToolCallEnd,
    ToolCallStart,
    decode,
    detect_wire,
    stream_events,
)

# Framing by extension; JSON Lines files are sniffed (see stream_framing), `.json` only when it holds an array.
_FRAMED = {".sse": "sse", ".eventstream": "eventstream"}
# How far into a `.jsonl` file the first record is looked for.
_FIRST_LINE_LIMIT = 1 << 20


class _NotAStream(Exception):
    """The file holds records, not a stream."""


def stream_framing(kind: str, path: Path | None) -> str | None:
    """The framing of `path` when it is a recorded stream validated as `kind`, else None (records as usual)."""
    if path is None or not kind.endswith(".response"):
        return None
    suffix = payload_suffix(path)
    if suffix in _FRAMED:
        return _FRAMED[suffix]
    try:
        if suffix == ".json":
            return _array_framing(path)
        if suffix in (".jsonl", ".ndjson"):
            return _lines_framing(kind.rsplit(".", 1)[0], path)
    except (_NotAStream, ValueError, RecursionError):
        return None  # the record reader reports what is wrong with the file
    except UNREADABLE:
        return None  # the record reader reports what is wrong with the file
    return None


def _array_framing(path: Path) -> str | None:
    with open_binary(path) as handle:
        start = handle.read(64).lstrip()
    if not start.startswith(b"["):
        return None
    data = json.loads(read_all(path))
    if isinstance(data, list) and data and all(isinstance(item, dict) and "candidates" in item for item in data):
        return "json-array"
    return None


def _lines_framing(wire: str, path: Path) -> str | None:
    with open_binary(path) as handle:
        first = b""
        while not first.strip():
            line = handle.readline(_FIRST_LINE_LIMIT)
            if not line:
                raise _NotAStream
            first = line
    payload = json.loads(first)
    if detect_wire(payload) is None:
        return None
    try:
        decoded = decode(payload, wire, "response")
    except ValueError:
        return "jsonl"  # a chunk that is no whole response: the first payload of a stream
    if isinstance(decoded, ProviderError) or (isinstance(decoded, Response) and decoded.finish is not None):
        return None
    return "jsonl"


# A decoded response's canonical message and its findings at canonical pointers (`/0/...`), as validate makes them.
DecodedCanonical = Callable[[Any], tuple[list[Any], list[Finding]]]


def stream_problems(
    wire: str, data: bytes, framing: str, decoded_canonical: DecodedCanonical
) -> tuple[list[Finding], Any]:
    """Every problem of one recorded stream, and what it aggregated to (a Response or ProviderError).

    The stream's own faults are placed at the event the aggregator was reading when it found them (the end of
    the file for what only the end shows, a call left open); its final message's problems at the event that
    started the call they concern, pointed into that event's payload (see stream_places).
    """
    cut = chunks(data, framing)
    pieces = [chunk.piece for chunk in cut] if cut else [data]
    reading = [-1]

    def feed() -> Iterator[bytes]:
        for index, piece in enumerate(pieces):
            reading[0] = index
            yield piece
        reading[0] = len(pieces)

    started: dict[int, tuple[int, str | None, str | None]] = {}
    ended: dict[int, str | None] = {}
    found: list[Finding] = []
    result: Any = None
    for event in stream_events(feed(), wire, framing=framing):
        if isinstance(event, ToolCallStart):
            started.setdefault(event.index, (reading[0], event.id, event.name))
        elif isinstance(event, ToolCallEnd):
            ended[event.index] = event.id
        elif isinstance(event, StreamError) and not event.provider:
            message = f"not a valid {wire} stream: {event.message}"
            found.append(Finding("", "stream-invalid", message, at=_event_place(cut, reading[0])))
        elif isinstance(event, MessageEnd):
            result = event.response
    if result is not None:
        messages, canonical = decoded_canonical(result)
        if canonical:
            places = _CallPlaces(wire, cut, started, ended, messages[0] if messages else {})
            found.extend(places.placed(finding) for finding in canonical)
    return found, result


def _event_place(cut: list[Chunk] | None, index: int) -> tuple[int, int] | None:
    """Where the event read at `index` starts; past the last, where the last event with a payload starts."""
    if not cut:
        return None
    if 0 <= index < len(cut):
        return cut[index].lines[0]
    with_payload = [chunk for chunk in cut if chunk.text is not None or chunk.whole is not None]
    return (with_payload or cut)[-1].lines[0]


class _CallPlaces:
    """Canonical problems of a stream's final message placed at the events that started their calls."""

    def __init__(
        self,
        wire: str,
        cut: list[Chunk] | None,
        started: dict[int, tuple[int, str | None, str | None]],
        ended: dict[int, str | None],
        message: Any,
    ) -> None:
        self.wire, self.cut, self.started, self.ended, self.message = wire, cut, started, ended, message
        self._holders: dict[int, tuple[int, str] | None] = {}
        self._taken: dict[int, set[str]] = {}

    def placed(self, finding: Finding) -> Finding:
        parts = tokens(finding.pointer)
        own = finding.pointer[2:]  # the message's own pointer (a response is message 0)
        sentence = without_place(finding.message, own)
        if len(parts) >= 3 and parts[1] == "tool_calls" and parts[2].isdigit() and self.cut:
            found = self._holder(int(parts[2]))
            if found is not None:
                index, holder = found
                chunk = self.cut[index]
                value = resolve(chunk.value(), holder)
                member, string = call_member(value, parts[3:], self.wire)
                pointer = holder + member
                at = chunk.place(pointer, None if string is None else holder + string)
                shown = chunk.prefix + pointer
                return Finding(shown, finding.rule, f"{shown}: {sentence}", at=at, canonical=own)
        first = _event_place(self.cut, 0)
        return Finding("", finding.rule, f"canonical {own or '/'}: {sentence}", at=first, canonical=own)

    def _holder(self, number: int) -> tuple[int, str] | None:
        """(event index, pointer in its payload) of the object that started canonical call `number`."""
        calls = self.message.get("tool_calls") if isinstance(self.message, dict) else None
        call = calls[number] if isinstance(calls, list) and number < len(calls) else None
        call_id = call.get("id") if isinstance(call, dict) else None
        start = next(
            (
                k
                for k, (_, wire_id, _) in self.started.items()
                if self.ended.get(k, wire_id) == call_id or wire_id == call_id
            ),
            None,
        )
        if start is None and number < len(self.started):
            start = sorted(self.started)[number]  # ids that do not match: the calls in the order they began
        if start is None:
            return None
        # Every call that began before is found first: calls told apart by name only are then found in turn.
        for earlier in sorted(self.started):
            if earlier > start:
                break
            if earlier not in self._holders:
                self._holders[earlier] = self._find(*self.started[earlier])
        return self._holders[start]

    def _find(self, index: int, call_id: str | None, name: str | None) -> tuple[int, str] | None:
        assert self.cut is not None
        last = min(index, len(self.cut) - 1)
        # The event the call began in first, then the ones before it (an event the aggregator held back), then after;
        # by its id, else by its name (an id the stream state made up for a wire that sends none is nowhere).
        for key in dict.fromkeys((call_id, None)):
            for at in [*range(last, -1, -1), *range(last + 1, len(self.cut))]:
                taken = self._taken.setdefault(at, set())
                pointer = find_call(self.cut[at].value(), key, name, taken)
                if pointer is not None:
                    taken.add(pointer)
                    return at, pointer
        return None
