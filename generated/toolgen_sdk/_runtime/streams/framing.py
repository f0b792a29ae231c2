# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Incremental byte framing of streamed response bodies: SSE, JSON lines, JSON arrays or documents, AWS eventstream.

Every decoder is fed bytes exactly as they arrive, split anywhere (inside a UTF-8 character, a CRLF or a binary
header), and returns the frames completed so far; `close()` returns what the end of the body completes. Payloads
stay bytes: the JSON parser reads UTF-8 directly, and a line is only cut at CR or LF, which never occur inside a
multi-byte character.
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from types import MappingProxyType

from .documents import JSONArrayDecoder, JSONDocumentDecoder
from .events import parse_json
from .eventstream import EventStreamDecoder
from .frames import Decoder, Frame, FramingError, _tuple_new

# The framing surface: the frames, their error and the decoder protocol (kept in .frames) come with it.
__all__ = [
    "FRAMINGS",
    "AutoDecoder",
    "Decoder",
    "EventStreamDecoder",
    "Frame",
    "FramingError",
    "JSONArrayDecoder",
    "JSONDocumentDecoder",
    "JSONLinesDecoder",
    "SSEDecoder",
    "aiter_eventstream",
    "aiter_frames",
    "aiter_json_array",
    "aiter_json_lines",
    "aiter_sse",
    "iter_eventstream",
    "iter_frames",
    "iter_json_array",
    "iter_json_lines",
    "iter_sse",
    "make_decoder",
    "sniff_framing",
]

# "json": whole JSON documents, however many lines each spans (a body sent whole, pretty-printed or not).
FRAMINGS = ("sse", "jsonl", "json-array", "json", "eventstream")
_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\r\n"


class SSEDecoder:
    """text/event-stream per the WHATWG rules: CR, LF or CRLF line ends, `data:` lines joined with LF, comments.

    `id:` and `retry:` are read and ignored. One deviation, so that a cut stream loses nothing: at close, an
    event whose blank line never came is still delivered.
    """

    __slots__ = (
        "_data",
        "_event",
        "_names",
        "_pending",
        "_skip_lf",
        "_started",
        "event",
        "idle",
    )

    def __init__(self) -> None:
        # Nothing buffered: no partial line, no event half read. Kept up to date by feed().
        self.idle = True
        # The event name of the payload simple() returned last (None: the event had no `event:` line).
        self.event: str | None = None
        self._pending: list[bytes] = []
        self._skip_lf = False
        self._started = False
        self._event: str | None = None
        self._data: list[bytes] = []
        # Event names as read, decoded once: a stream repeats a handful of them thousands of times.
        self._names: dict[bytes, str] = {}

    def simple(self, chunk: bytes) -> bytes | None:
        """The payload when a chunk is exactly one event: an optional `event: name` line, one `data: ...` line and
        the blank line, all ended by LF or all by CRLF (the usual network read). Its name is then in `event`.

        None otherwise, and then nothing was consumed: feed the chunk. This skips building frames on the hot path.
        """
        if not self.idle:
            return None
        # partition() and removeprefix() take one argument: they cost far less a call than find(), count() or
        # `in` (which tries the bytes as an int first), and each line-end check is one C scan.
        crlf = chunk[-2:] == b"\r\n"
        rest = chunk.removeprefix(b"data: ")
        if rest is not chunk:
            # One line, its line end and a blank line, checked inline (no call): CRLF streams take this
            # path for every event.
            if crlf:
                data, _, tail = rest.partition(b"\r")
                if tail != b"\n\r\n" or data.partition(b"\n")[1]:
                    return None
            else:
                data, _, tail = rest.partition(b"\n")
                if tail != b"\n" or data.partition(b"\r")[1]:
                    return None
            self._started = True
            self.event = None
            return data
        rest = chunk.removeprefix(b"event: ")
        if rest is chunk:
            return None
        if crlf:
            name, _, rest = rest.partition(b"\r")
            if rest[:1] != b"\n" or name.partition(b"\n")[1]:
                return None
            rest = rest[1:]
        else:
            name, _, rest = rest.partition(b"\n")
            if name.partition(b"\r")[1]:
                return None
        line = rest.removeprefix(b"data: ")
        if line is rest:
            return None
        # The same check, and the name table read, inline: this runs once per event of `event:`-line streams.
        if crlf:
            data, _, tail = line.partition(b"\r")
            if tail != b"\n\r\n" or data.partition(b"\n")[1]:
                return None
        else:
            data, _, tail = line.partition(b"\n")
            if tail != b"\n" or data.partition(b"\r")[1]:
                return None
        self._started = True
        known = self._names.get(name)
        self.event = known if known is not None else self._name(name)
        return data

    def completed(self, piece: bytes) -> bytes | None:
        """The whole text of the event `piece` ends (it ends with a blank line), when all this decoder holds is
        the start of that event: it then holds nothing, and the text read from idle gives what feed(piece) would.
        None otherwise, and nothing changed."""
        pending = self._pending
        if not pending or self._skip_lf or self._data or self._event is not None:
            return None
        pending.append(piece)
        whole = b"".join(pending)
        pending.clear()
        self.idle = True
        return whole

    @property
    def started(self) -> bool:
        """Some of the body has been read (a BOM is only looked for before that)."""
        return self._started

    def _name(self, raw: bytes) -> str:
        name = self._names.get(raw)
        if name is None:
            name = raw.decode("utf-8", "replace")
            if (
                len(self._names) < 64
            ):  # a stream of ever new names must not grow the table
                self._names[raw] = name
        return name

    def feed(self, chunk: bytes) -> list[Frame]:
        data = self.simple(chunk)
        if data is not None:
            return [_tuple_new(Frame, (self.event, data, "event"))]
        if self._started and not (
            self._skip_lf or self._data or self._event is not None
        ):
            if chunk.find(b"\r") < 0:
                return self._feed_lf(chunk)
            if chunk[-1:] != b"\r" and chunk.count(b"\r") == chunk.count(
                b"\n"
            ) == chunk.count(b"\r\n"):
                # CRLF throughout (Gemini's): the same lines with LF ends.
                return self._feed_lf(chunk.replace(b"\r\n", b"\n"))
        if self._skip_lf:
            # The previous chunk ended in CR; an LF right after it belongs to the same line end.
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if not chunk:
            return []
        pending = self._pending
        if pending:
            pending.append(chunk)
            if b"\n" not in chunk and b"\r" not in chunk:
                return []
            chunk = b"".join(pending)
            pending.clear()
        lines = chunk.splitlines(True)
        end = lines[-1][-1:]
        if end == b"\r":
            self._skip_lf = True
        elif end != b"\n":
            pending.append(lines.pop())
        out: list[Frame] = []
        for line in lines:
            self._line(line.rstrip(b"\r\n"), out)
        self.idle = not (
            pending or self._data or self._skip_lf or self._event is not None
        )
        return out

    def _feed_lf(self, chunk: bytes) -> list[Frame]:
        """LF-only text between events (the common case): cut at blank lines, and most events are one data line."""
        pending = self._pending
        if pending:
            pending.append(chunk)
            if b"\n" not in chunk:
                return []
            chunk = b"".join(pending)
            pending.clear()
        blocks = chunk.split(b"\n\n")
        rest = blocks.pop()
        if rest:
            pending.append(rest)
        out: list[Frame] = []
        for block in blocks:
            if block.startswith(b"data: "):
                if not block.partition(b"\n")[1]:
                    out.append(_tuple_new(Frame, (None, block[6:], "event")))
                    continue
            elif block.startswith(b"event: "):
                line_end = block.find(b"\n")
                if (
                    line_end > 0
                    and block.startswith(b"data: ", line_end + 1)
                    and block.find(b"\n", line_end + 1) < 0
                ):
                    name = self._name(block[7:line_end])
                    out.append(
                        _tuple_new(Frame, (name, block[line_end + 7 :], "event"))
                    )
                    continue
            for line in block.split(b"\n"):
                self._line(line, out)
            self._dispatch(out)
        self.idle = not pending
        return out

    def close(self) -> list[Frame]:
        out: list[Frame] = []
        # What is left may hold whole lines (from the LF-only path) and a last line without its line end.
        for line in b"".join(self._pending).splitlines():
            self._line(line, out)
        self._pending.clear()
        self._line(b"", out)
        self.idle = True
        return out

    def _line(self, line: bytes, out: list[Frame]) -> None:
        if not self._started:
            self._started = True
            if line.startswith(_BOM):
                line = line[3:]
        if not line:
            self._dispatch(out)
        elif line.startswith(b"data:"):
            self._data.append(line[6:] if line[5:6] == b" " else line[5:])
        elif line[:1] != b":":
            name, _, value = line.partition(b":")
            if value[:1] == b" ":
                value = value[1:]
            if name == b"event":
                self._event = value.decode("utf-8", "replace")
            elif name == b"data":
                self._data.append(value)

    def _dispatch(self, out: list[Frame]) -> None:
        data = self._data
        if data:
            out.append(
                Frame(self._event, data[0] if len(data) == 1 else b"\n".join(data))
            )
            self._data = []
        self._event = None


class JSONLinesDecoder:
    """One JSON document a line (JSONL, Ollama's NDJSON); blank lines are skipped, CRLF is accepted."""

    __slots__ = ("_pending",)

    # Lines carry no event name; the aggregator reads it beside simple()'s payload, as for SSE.
    event = None

    def __init__(self) -> None:
        self._pending: list[bytes] = []

    @property
    def idle(self) -> bool:
        """Nothing buffered: no partial line."""
        return not self._pending

    def simple(self, chunk: bytes) -> bytes | None:
        """The line when a chunk is exactly one line and its LF (the usual read); None otherwise, and then nothing
        was consumed: feed the chunk. The line may be blank: a caller skips it as feed() would."""
        if self._pending or not chunk.endswith(b"\n") or chunk.count(b"\n") != 1:
            return None
        return chunk[:-1]

    def feed(self, chunk: bytes) -> list[Frame]:
        pending = self._pending
        if b"\n" not in chunk:
            if chunk:
                pending.append(chunk)
            return []
        if pending:
            pending.append(chunk)
            chunk = b"".join(pending)
            pending.clear()
        lines = chunk.split(b"\n")
        last = lines.pop()
        if last:
            pending.append(last)
        return [
            _tuple_new(Frame, (None, line, "event"))
            for line in lines
            if line.strip(_WHITESPACE)
        ]

    def close(self) -> list[Frame]:
        rest = b"".join(self._pending).strip(_WHITESPACE)
        self._pending.clear()
        return [Frame(None, rest)] if rest else []


def sniff_framing(prefix: bytes) -> str | None:
    """The framing a body starts with, or None while only whitespace (or nothing) has arrived."""
    head = prefix[3:] if prefix.startswith(_BOM) else prefix
    head = head.lstrip(_WHITESPACE)
    if not head or (prefix.startswith(_BOM[: len(prefix)]) and len(prefix) < 3):
        return None
    first = head[:1]
    if first == b"{":
        return "jsonl"
    if first == b"[":
        return "json-array"
    if first == b"\x00":
        return "eventstream"
    return "sse"


_FACTORIES: Mapping[str, Callable[[], Decoder]] = MappingProxyType(
    {
        "sse": SSEDecoder,
        "jsonl": JSONLinesDecoder,
        "json-array": JSONArrayDecoder,
        "json": JSONDocumentDecoder,
        "eventstream": EventStreamDecoder,
    }
)


def make_decoder(framing: str) -> Decoder:
    """A fresh decoder for one of FRAMINGS."""
    try:
        return _FACTORIES[framing]()
    except KeyError:
        raise ValueError(
            f"unknown framing {framing!r}; expected one of {', '.join(FRAMINGS)}"
        ) from None


class AutoDecoder:
    """Picks the framing from the first bytes that are not whitespace, then hands everything to that decoder.

    A body starting with `{` is JSON lines when its first line is one whole JSON document, and JSON documents
    framed by their structure (framing "json") when it is not: a whole body, pretty-printed over many lines.
    """

    __slots__ = ("_decoder", "_head", "_line", "framing")

    def __init__(self) -> None:
        self._head = b""
        # The start of a body beginning with `{`, while its first line has not ended.
        self._line: list[bytes] | None = None
        self._decoder: Decoder | None = None
        self.framing: str | None = None

    def feed(self, chunk: bytes) -> list[Frame]:
        if self._decoder is not None:
            return self._decoder.feed(chunk)
        line = self._line
        if line is not None:
            line.append(chunk)
            # Only the new bytes are searched: a long first line arriving in many reads is not scanned again.
            if b"\n" not in chunk:
                return []
            body = self._take_line()
            return self._start(_object_framing(body)).feed(body)
        self._head += chunk
        framing = sniff_framing(self._head)
        if framing is None:
            return []
        head = self._take_head()
        if framing == "jsonl":
            # A BOM is no part of any JSON document.
            head = head.removeprefix(_BOM)
            if b"\n" not in head.lstrip(_WHITESPACE):
                self._line = [head]
                return []
            framing = _object_framing(head)
        return self._start(framing).feed(head)

    @property
    def decoder(self) -> Decoder | None:
        """The decoder of the sniffed framing, once the first bytes have decided it."""
        return self._decoder

    def close(self) -> list[Frame]:
        out: list[Frame] = []
        if self._decoder is None:
            if self._line is not None:
                # The body ended on its first line: one document, or a line that is none (the parser says so).
                body = self._take_line()
                out = self._start(_object_framing(body)).feed(body)
            elif not self._head.strip(_WHITESPACE):
                return []
            else:
                self._start("sse").feed(self._take_head())
        assert self._decoder is not None
        return out + self._decoder.close()

    def _start(self, framing: str) -> Decoder:
        self.framing = framing
        self._decoder = make_decoder(framing)
        return self._decoder

    def _take_head(self) -> bytes:
        head, self._head = self._head, b""
        return head

    def _take_line(self) -> bytes:
        parts, self._line = self._line or [], None
        return b"".join(parts)


def _object_framing(head: bytes) -> str:
    """jsonl when the first line of a body starting with `{` is one whole JSON document; else json.

    A pretty-printed document's first line opens the object and goes on, where a JSON line closes it: the line is
    parsed once a body, and only when it ends with `}`.
    """
    line = head.lstrip(_WHITESPACE).partition(b"\n")[0].rstrip(_WHITESPACE)
    if line.endswith(b"}"):
        try:
            parse_json(line)
        except ValueError:
            return "json"
        return "jsonl"
    return "json"


def iter_frames(
    chunks: Iterable[bytes], decoder: Decoder | None = None
) -> Iterator[Frame]:
    """Frames of a body given as an iterable of byte chunks (httpx's `iter_bytes()`, a file, a list)."""
    decoder = decoder if decoder is not None else AutoDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield from decoder.close()


async def aiter_frames(
    chunks: AsyncIterable[bytes], decoder: Decoder | None = None
) -> AsyncIterator[Frame]:
    """Frames of a body given as an async iterable of byte chunks (httpx's `aiter_bytes()`)."""
    decoder = decoder if decoder is not None else AutoDecoder()
    async for chunk in chunks:
        for frame in decoder.feed(chunk):
            yield frame
    for frame in decoder.close():
        yield frame


def iter_sse(chunks: Iterable[bytes]) -> Iterator[Frame]:
    """Server-sent events of a byte stream."""
    return iter_frames(chunks, SSEDecoder())


def aiter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[Frame]:
    """Server-sent events of an async byte stream."""
    return aiter_frames(chunks, SSEDecoder())


def iter_json_lines(chunks: Iterable[bytes]) -> Iterator[Frame]:
    """JSON lines (NDJSON) of a byte stream."""
    return iter_frames(chunks, JSONLinesDecoder())


def aiter_json_lines(chunks: AsyncIterable[bytes]) -> AsyncIterator[Frame]:
    """JSON lines (NDJSON) of an async byte stream."""
    return aiter_frames(chunks, JSONLinesDecoder())


def iter_json_array(chunks: Iterable[bytes]) -> Iterator[Frame]:
    """Elements of a streamed JSON array of objects."""
    return iter_frames(chunks, JSONArrayDecoder())


def aiter_json_array(chunks: AsyncIterable[bytes]) -> AsyncIterator[Frame]:
    """Elements of a streamed JSON array of objects, async."""
    return aiter_frames(chunks, JSONArrayDecoder())


def iter_eventstream(chunks: Iterable[bytes]) -> Iterator[Frame]:
    """AWS eventstream messages of a byte stream; a corrupt frame raises FramingError."""
    return iter_frames(chunks, EventStreamDecoder())


def aiter_eventstream(chunks: AsyncIterable[bytes]) -> AsyncIterator[Frame]:
    """AWS eventstream messages of an async byte stream; a corrupt frame raises FramingError."""
    return aiter_frames(chunks, EventStreamDecoder())
