"""Recorded streams in `toolgen validate`: one stream file is one record, its aggregated message checked like a body.

A file given as `<wire>.response` is a recorded stream when its framing says so (`.sse`,
`.eventstream`, Gemini's `alt=json` array in a `.json` file), or, for a `.jsonl` or `.ndjson` file, when its
first line is a stream chunk rather than a finished response (a log of whole responses has a finish on every line; a stream's
first chunk has none yet). The stream is aggregated, faults of the stream itself (a cut call, a payload that
does not parse) are findings, and the final message is checked with the SDK as a whole response is.

Streams are read with toolgen's own runtime, the code every SDK carries byte for byte (`toolgen check` says when
an SDK's copy is stale): the SDK's stream states load on first use, and in a process that has validated with
another package of the same name, they would load from that package.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolgen.payload_files import UNREADABLE, open_binary, payload_suffix, read_all
from toolgen.runtime import MessageEnd, ProviderError, Response, StreamError, decode, detect_wire, stream_events

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


# (pointer, rule, sentence) findings of a decoded response, Response or ProviderError, as validate makes them.
DecodedProblems = Callable[[Any], list[tuple[str, str, str]]]


def stream_problems(
    wire: str, data: bytes, framing: str, decoded_problems: DecodedProblems
) -> tuple[list[tuple[str, str, str]], Any]:
    """Every problem of one recorded stream (its own faults, then its final message's, at canonical places), and
    what it aggregated to (a Response or ProviderError)."""
    found: list[tuple[str, str, str]] = []
    result: Any = None
    for event in stream_events(data, wire, framing=framing):
        if isinstance(event, StreamError) and not event.provider:
            found.append(("", "stream-invalid", f"not a valid {wire} stream: {event.message}"))
        elif isinstance(event, MessageEnd):
            result = event.response
    if result is not None:
        found.extend(decoded_problems(result))
    return found, result
