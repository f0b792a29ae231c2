"""Where things are in a recorded stream file: its events cut out with their line:col, and a tool call found in one.

`toolgen validate` feeds a stream to the aggregator one event at a time (events as cut here), so each canonical
event it gets back (a call's start, a fault) is known to come from the event just fed. The call is then looked
up in that event's JSON payload: the object holding its id, or, on wires that give calls no id, its name; its
pointer in the payload, and the line:col of that object in the file, place the call's problems. A pointer of a
stream problem is into the payload of the event named by the line (for Gemini's JSON array, into the file).
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass, field
from typing import Any

from toolgen.core.positions import JsonPlaces
from toolgen.payloads.wire_places import escape, tokens

_LINE_END = re.compile(rb"\r\n|\r|\n")
# The blank line that ends an SSE event: a line break right after another.
_EVENT_END = re.compile(rb"(?:\r\n|\r|\n)(?:\r\n|\r|\n)")
_PRELUDE = struct.Struct(">III")
# An AWS eventstream message's prelude (12 bytes) and message CRC (4 bytes) around headers and payload.
_FRAME_OVERHEAD = 16
# The key a wire keeps a call's arguments under when the event that starts the call has none yet.
_DEFAULT_ARGUMENTS = {"anthropic": "input", "bedrock-converse": "input", "gemini": "args"}
_ARGUMENT_KEYS = ("arguments", "input", "args", "partial_json")


@dataclass
class Chunk:
    """One event of a stream file: the bytes fed for it, and (read when asked) its JSON payload's text and place.

    `lines` holds, for each line of the payload text, the file's line and the column its text starts at.
    `prefix` is the payload's own pointer in the file (Gemini's JSON array: `/<item>`), with `whole` the file's
    places then. An SSE event or a JSON line is read only when a problem is placed in it: most never are.
    """

    piece: bytes
    start: int = 0
    framing: str = ""
    data: bytes = b""
    prefix: str = ""
    whole: JsonPlaces | None = None
    _read: tuple[str | None, list[tuple[int, int]]] | None = field(default=None, repr=False)
    _value: Any = field(default=None, repr=False)
    _places: JsonPlaces | None = field(default=None, repr=False)

    @property
    def text(self) -> str | None:
        return self._payload()[0]

    @property
    def lines(self) -> list[tuple[int, int]]:
        return self._payload()[1]

    def _payload(self) -> tuple[str | None, list[tuple[int, int]]]:
        if self._read is None:
            first = len(_LINE_END.findall(self.data, 0, self.start)) + 1
            if self.framing == "sse":
                self._read = _sse_payload(self.piece, first)
            else:
                text = _LINE_END.sub(b"", self.piece).decode("utf-8", "replace")
                self._read = (text if text.strip() else None, [(first, 1)])
        return self._read

    def value(self) -> Any:
        if self._value is None and self.text is not None:
            try:
                self._value = json.loads(self.text)
            except (ValueError, RecursionError):
                self._value = False  # not JSON: no call is found in it
        return self._value

    def place(self, pointer: str, string: str | None = None) -> tuple[int, int]:
        """Line:col in the file of the value at `pointer` in the payload (inside the JSON text of the string at
        `string` when it holds some), or of its nearest ancestor."""
        if self.whole is not None:
            found = None
            if string is not None:
                found = self.whole.inside(tuple(tokens(self.prefix + string)), tuple(tokens(pointer[len(string) :])))
            return found or self.whole.near(tuple(tokens(self.prefix + pointer))) or self.lines[0]
        if self.text is None:
            return self.lines[0]
        if self._places is None:
            try:
                self._places = JsonPlaces(self.text)
            except (ValueError, IndexError, RecursionError):
                return self.lines[0]
        found = None
        if string is not None:
            found = self._places.inside(tuple(tokens(string)), tuple(tokens(pointer[len(string) :])))
        line, col = found or self._places.near(tuple(tokens(pointer))) or (1, 1)
        if line > len(self.lines):
            return self.lines[0]
        file_line, start = self.lines[line - 1]
        return file_line, start + col - 1


def chunks(data: bytes, framing: str) -> list[Chunk] | None:
    """The file's events in order, their pieces covering it whole; None when it cannot be cut (it is then fed
    whole, and its problems placed at its start)."""
    try:
        if framing == "sse":
            return _cut(data, _EVENT_END, "sse")
        if framing == "jsonl":
            return _cut(data, _LINE_END, "jsonl")
        if framing == "json-array":
            return _array(data)
        if framing == "eventstream":
            return _eventstream(data)
    except (ValueError, IndexError, RecursionError, struct.error):
        return None
    return None


def _cut(data: bytes, end: re.Pattern[bytes], framing: str) -> list[Chunk]:
    """Pieces that each end where `end` matches (an SSE event's blank line, a JSON line's break)."""
    found = []
    start = 0
    for match in end.finditer(data):
        found.append(Chunk(data[start : match.end()], start, framing, data))
        start = match.end()
    if start < len(data):
        found.append(Chunk(data[start:], start, framing, data))
    return found


def _sse_payload(piece: bytes, first: int) -> tuple[str | None, list[tuple[int, int]]]:
    """An SSE event's data (its `data:` lines joined), and where each of those lines starts in the file."""
    texts: list[str] = []
    lines: list[tuple[int, int]] = []
    start = 0
    number = first
    for match in [*_LINE_END.finditer(piece), None]:
        line = piece[start : match.start() if match else len(piece)]
        if line.startswith(b"data:"):
            skip = 6 if line.startswith(b"data: ") else 5
            texts.append(line[skip:].decode("utf-8", "replace"))
            lines.append((number, skip + 1))
        if match is None:
            break
        start, number = match.end(), number + 1
    return ("\n".join(texts), lines) if texts else (None, [(first, 1)])


def _array(data: bytes) -> list[Chunk]:
    text = data.decode("utf-8-sig")
    items = json.loads(text)
    if not isinstance(items, list):
        return [Chunk(data, _read=(text, [(1, 1)]))]
    places = JsonPlaces(text)
    offsets = [places.exact((str(index),)) for index in range(len(items))]
    if not items or any(offset is None for offset in offsets):
        return [Chunk(data, _read=(text, [(1, 1)]))]
    # Pieces cut at each item's first character, as bytes of the file.
    starts = [0, *(len(text[:offset].encode("utf-8")) for offset in offsets[1:] if offset is not None)]
    bounds = [*starts[1:], len(data)]
    found = []
    for index, (begin, end) in enumerate(zip(starts, bounds, strict=True)):
        at = places.near((str(index),)) or (1, 1)
        chunk = Chunk(data[begin:end], begin, prefix=f"/{index}", whole=places, _read=(None, [at]))
        chunk._value = items[index]
        found.append(chunk)
    return found


def _eventstream(data: bytes) -> list[Chunk]:
    found = []
    offset = 0
    while offset < len(data):
        total, headers, _ = _PRELUDE.unpack_from(data, offset)
        if total < _FRAME_OVERHEAD + headers or offset + total > len(data):
            found.append(Chunk(data[offset:], offset, _read=(None, [_byte_place(data, offset)])))
            break
        payload_at = offset + 12 + headers
        payload = data[payload_at : offset + total - 4]
        text = payload.decode("utf-8", "replace") if payload[:1] == b"{" else None
        found.append(Chunk(data[offset : offset + total], offset, _read=(text, [_byte_place(data, payload_at)])))
        offset += total
    return found


def _byte_place(data: bytes, offset: int) -> tuple[int, int]:
    """Line:col of a byte of a binary file, counting its newline bytes as line ends."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


def find_call(value: Any, call_id: str | None, name: str | None, taken: set[str]) -> str | None:
    """The pointer, in one payload, of the first object not in `taken` that holds the call: by its id (any key
    whose string value it is), else, without an id, by its name."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        pointer, current = stack.pop()
        if isinstance(current, dict):
            if pointer not in taken and (
                (call_id is not None and any(v == call_id for v in current.values() if isinstance(v, str)))
                or (call_id is None and name is not None and current.get("name") == name)
            ):
                return pointer
            stack.extend((f"{pointer}/{escape(str(k))}", v) for k, v in reversed(current.items()))
        elif isinstance(current, list):
            stack.extend((f"{pointer}/{i}", v) for i, v in reversed(list(enumerate(current))))
    return None


def call_member(holder: Any, rest: list[str], wire: str) -> tuple[str, str | None]:
    """The pointer (relative to the object holding a call in an event) of a canonical call member `rest`
    (`function/arguments/...`, `function/name`, `id`), and that of the string whose JSON text it goes into."""
    if not isinstance(holder, dict) or not rest:
        return "", None
    function = holder.get("function")
    inner = isinstance(function, dict)
    if rest[:2] == ["function", "arguments"]:
        base = holder.get("function") if inner else holder
        key = next((k for k in _ARGUMENT_KEYS if isinstance(base, dict) and k in base), None)
        key = key or ("arguments" if inner else _DEFAULT_ARGUMENTS.get(wire, "arguments"))
        at = f"/function/{escape(key)}" if inner else f"/{escape(key)}"
        held = base.get(key) if isinstance(base, dict) else None
        is_string = isinstance(held, str)
        value = json.loads(held) if isinstance(held, str) and _parses(held) else held
        if not _holds(value, rest[2:]):
            # This event holds a fragment of the arguments, not the value: the place stops at what it holds (the
            # arguments member, or the call), and the sentence names the value's canonical place.
            return (at if isinstance(base, dict) and key in base else ""), None
        return at + "".join(f"/{escape(t)}" for t in rest[2:]), at if is_string else None
    if rest == ["function", "name"]:
        return ("/function/name" if inner else "/name"), None
    if rest == ["id"]:
        key = next((k for k in ("id", "call_id", "toolUseId") if k in holder), None)
        return (f"/{key}" if key else ""), None
    return "", None


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _holds(value: Any, path: list[str]) -> bool:
    """Whether `path` (pointer tokens) leads to a value inside `value`."""
    for token in path:
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return False
    return True
