# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The front door of streaming: any provider's stream, as bytes, frames or payloads, into events and one message.

The events and their rules are in `events`; each wire's stream state is in `wires/<wire>/stream.py`.
"""

from __future__ import annotations

import importlib
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from typing import Any

from ..wires.canonical import ProviderError, Response
from ..wires.codecs import wire_module
from ..wires.table import ROWS, shares_module
from ..wires.table import wire as wire_row
from .ending import finalize
from .events import (
    Event,
    MessageEnd,
    StreamError,
    parse_json,
)
from .framing import (
    AutoDecoder,
    Decoder,
    EventStreamDecoder,
    Frame,
    FramingError,
    JSONLinesDecoder,
    SSEDecoder,
    make_decoder,
)
from .shapes import TAKEN, Shortcut, shortcut_for
from .state import WireState, _NoState
from .whole import json_media, reading, whole_state

_WIRES = f"{__package__.rpartition('.')[0]}.wires"  # what the table's module names are relative to


def detect_wire(
    payload: Any, event: str | None = None, framing: str | None = None
) -> str | None:
    """The wire a first stream payload belongs to, from its shape; None when it says nothing recognizable."""
    for row in ROWS:
        if framing is not None and row.framing == framing:
            return row.name
    if not isinstance(payload, dict):
        return None
    sniffs = (row.detection.chunk for row in ROWS)
    for sniff in sorted((s for s in sniffs if s is not None), key=lambda s: -s.rank):
        module, function = sniff.where.split(":")
        predicate = getattr(importlib.import_module(f".{module}", _WIRES), function)
        try:
            found: str | None = predicate(payload, event)
        except (AttributeError, TypeError):
            continue  # a predicate that cannot read a payload's odd values does not recognize it
        if found is not None:
            return found
    return None


def new_state(wire: str) -> WireState:
    """A fresh stream state for `wire` (a name or alias in the table of wires)."""
    row = wire_row(wire)
    if row.stream is None:
        raise ValueError(f"streaming is not supported for wire {row.name!r}")
    module, name = row.stream.split(":")
    state_class = getattr(wire_module(row, module, _WIRES), name)
    # A state class serving several wires (dialects of one format) is told which one.
    state: WireState = (
        state_class(row.name) if shares_module(row, "stream") else state_class()
    )
    return state


# bytes, bytearray, memoryview or str of the body; a Frame; a decoded payload dict; an SDK object with model_dump.
Chunk = Any


class Aggregator:
    """Feed it a stream chunk by chunk; it returns canonical events as they complete, and the final message.

    A chunk is bytes of the body as they arrived (any split), text, a `Frame`, or an already decoded payload (a
    dict, or an SDK object with `model_dump`). `wire` names the provider wire; without it the first payload
    decides. `framing` (sse, jsonl, json-array, json, eventstream) is sniffed from the first bytes when not given.
    `content_type` is the response's when known: a JSON one says the body may be one whole response (see `whole`).
    """

    def __init__(
        self,
        wire: str | None = None,
        *,
        framing: str | None = None,
        content_type: str | None = None,
    ) -> None:
        self._sniffer = AutoDecoder() if framing is None else None
        self._decoder: Decoder = (
            self._sniffer if self._sniffer is not None else make_decoder(framing or "")
        )
        self._framing = framing
        self._simple: Callable[[bytes], bytes | None] | None = None
        if framing is not None:
            self._use(self._decoder, framing)
        self._state: WireState | None = new_state(wire) if wire is not None else None
        # Until the first payload (maybe a whole response: see `whole`), every chunk goes through feed().
        self._first = True
        self._json_body = framing == "json" or json_media(content_type)
        # Faults before any payload named the wire: emitted with the next events, kept for the final message.
        self._early: list[Event] = []
        self._early_errors: list[StreamError] = []
        self._result: Response | ProviderError | None = None
        # The known-shapes shortcut of the state, made once the state and the decoder are known (see `shapes`).
        self._shortcut: Shortcut | None = None
        self._shortcut_of: tuple[WireState, Decoder] | None = None

    @property
    def wire(self) -> str | None:
        return self._state.wire if self._state is not None else None

    @property
    def errors(self) -> list[StreamError]:
        return (
            list(self._state.errors)
            if self._state is not None
            else list(self._early_errors)
        )

    @property
    def duplicates_ignored(self) -> int:
        """Repeated events dropped so far (see each stream state's docstring for what the wire lets us tell)."""
        return self._state.duplicates if self._state is not None else 0

    @property
    def complete(self) -> bool:
        """The wire's own end signal arrived and nothing went wrong."""
        return (
            self._state is not None and self._state.complete and not self._state.errors
        )

    def feed(self, chunk: Chunk) -> list[Event]:
        """Events completed by one more chunk of the stream."""
        if type(chunk) is bytes:
            self._bytes(chunk)
        elif isinstance(chunk, str):
            self._bytes(chunk.encode("utf-8"))
        elif isinstance(chunk, (bytes, bytearray, memoryview)):
            self._bytes(bytes(chunk))
        elif isinstance(chunk, Frame):
            self._frames([chunk])
        elif isinstance(chunk, Mapping):
            self._payload(None, dict(chunk), None)
        elif hasattr(chunk, "model_dump"):
            self._payload(
                None,
                chunk.model_dump(mode="json", exclude_unset=True, by_alias=True),
                None,
            )
        else:
            raise TypeError(f"cannot stream a chunk of type {type(chunk).__name__}")
        state = self._state
        if self._early or state is None:
            return self._drain()
        out = state.out
        if not out:
            return []
        state.out = []
        return out

    def stream(self, chunks: Iterable[Chunk]) -> Iterator[Event]:
        """The events of every chunk in turn, then of the end: `feed` in a loop and `close`, inlined for speed.

        An exception raised by the chunks' source (a dropped connection) ends the stream with a StreamError and
        the partial message instead of propagating.
        """
        feed = self.feed
        parse = parse_json
        state, simple, decoder, plain = self._fast()
        # The known-shapes shortcut is made after two payloads came through the one-event path: a short stream
        # (a head, a finish, [DONE]) never pays for making it or for reads it does not take.
        shortcut: Shortcut | None = None
        deferred = 2
        # Set once an SSE read made several events: reads are then cut into their events (see `_several`).
        several = False
        try:
            for chunk in chunks:
                if several and type(chunk) is bytes:
                    yield from self._several(chunk)
                    state, simple, decoder, plain = self._fast()
                    continue
                if shortcut is not None and type(chunk) is bytes:
                    # A read of a known shape: framed, parsed and fed in one match (see `shapes`).
                    made = shortcut(chunk)
                    if made is not None:
                        if made is not TAKEN:
                            yield made  # type: ignore[misc] # a shortcut's one event
                        continue
                if simple is not None and type(chunk) is bytes:
                    # One `data:` line and a blank line, LF-ended: the read of most SSE streams, checked here
                    # without a call; simple() sees every other read of one whole event.
                    data: bytes | None = None
                    if plain:
                        # removeprefix() checks and cuts in one call (a slice and a compare are two, each
                        # dearer); it hands back the very same object when the prefix is not there.
                        line, _, tail = chunk.partition(b"\n")
                        if tail == b"\n":
                            data = line.removeprefix(b"data: ")
                            if data is line or data.partition(b"\r")[1]:
                                data = None
                            else:
                                event = None
                    if data is None:
                        data = simple(chunk)
                        event = decoder.event  # type: ignore[attr-defined] # every decoder with simple() has it
                    if data is not None:
                        assert state is not None
                        if data == b"[DONE]":
                            state.done_marker()
                        else:
                            # _deliver(state, event, data), inlined: this runs once per chunk of the usual stream.
                            try:
                                payload = parse(data)
                            except ValueError:
                                _deliver(state, event, data)
                            else:
                                state.payload_text = data
                                try:
                                    state.feed(event, payload)
                                except Exception as error:  # noqa: BLE001 - one odd payload must not cost the text already streamed
                                    _unexpected(state, error, payload)
                            if deferred:
                                deferred -= 1
                                if not deferred:
                                    shortcut = self._shortcut_while(plain)
                        out = state.out
                        if out:
                            if len(out) == 1:
                                # The list stays the state's: no new one per chunk.
                                yield out.pop()
                            else:
                                state.out = []
                                yield from out
                        continue
                events = feed(chunk)
                # feed() may have named the wire or settled the framing; it also drained any early faults.
                state, simple, decoder, plain = self._fast()
                shortcut = None if deferred else self._shortcut_while(plain)
                if events:
                    if len(events) > 2 and type(chunk) is bytes:
                        # A read of several events (a network read of some KiB): from here on, each whole
                        # event of a read may take the shortcut, as a read of one event does.
                        several = self._sse_shortcut() is not None
                    yield from events
        except Exception as error:  # noqa: BLE001 - a dropped connection ends the stream with a StreamError
            self._fault(
                f"stream interrupted: {type(error).__name__}: {error}", raw=error
            )
        yield from self.close()

    def _fast(
        self,
    ) -> tuple[WireState | None, Callable[[bytes], bytes | None] | None, Decoder, bool]:
        """What stream() needs for its fast path: the state, the decoder's simple() (None while the wire or the
        framing is unknown), the decoder, and whether a `data:`-only read may be taken without asking it."""
        state, decoder = self._state, self._decoder
        simple = self._simple if state is not None and not self._first else None
        plain = (
            simple is not None
            and type(decoder) is SSEDecoder
            and decoder.idle
            and decoder.started
        )
        return state, simple, decoder, plain

    def _several(self, chunk: bytes) -> Iterator[Event]:
        """The events of an SSE read that may hold several events, in order, as feed(chunk) would give them.

        The read is cut after each blank line; a whole event met while the decoder holds no partial one is offered
        to the shortcut as if it had been read alone, and every other piece (the end of an event begun in an
        earlier read, a piece the shortcut leaves, the start of the next event) goes to feed(). The pieces put
        together are the read, and SSE gives the same events however its text is split into reads.
        """
        # partition() rather than `in`: see the data-only check in `stream`.
        decoder = self._decoder
        if type(decoder) is not SSEDecoder:
            yield from self.feed(chunk)
            return
        separator = b"\r\n\r\n" if chunk.partition(b"\r")[1] else b"\n\n"
        pieces = chunk.split(separator)
        tail = pieces.pop()
        take = self._sse_shortcut()
        for piece in pieces:
            piece += separator
            if take is not None:
                if not decoder.idle:
                    # The end of an event an earlier read began: the whole event, when that is all it holds.
                    whole = decoder.completed(piece)
                    if whole is not None:
                        piece = whole
                if decoder.idle:
                    made = take(piece)
                    if made is not None:
                        if made is not TAKEN:
                            yield made  # type: ignore[misc] # a shortcut's one event
                        continue
            yield from self.feed(piece)
            take = self._sse_shortcut()
        if tail:
            yield from self.feed(tail)

    def _sse_shortcut(self) -> Shortcut | None:
        """The state's shortcut for SSE reads, whatever the decoder holds now; None while there is none."""
        if self._state is None or type(self._decoder) is not SSEDecoder:
            return None
        return self._cached_shortcut("sse")

    def _cached_shortcut(self, framing: str) -> Shortcut | None:
        state, decoder = self._state, self._decoder
        assert state is not None
        of = self._shortcut_of
        if of is None or of[0] is not state or of[1] is not decoder:
            self._shortcut_of = (state, decoder)
            self._shortcut = shortcut_for(state, decoder, framing)
        return self._shortcut

    def _shortcut_while(self, plain: bool) -> Shortcut | None:
        """The state's known-shapes shortcut while the decoder holds no partial event; else None.

        plain is _fast()'s answer for SSE; a JSON lines decoder is asked itself."""
        state, decoder = self._state, self._decoder
        if state is None:
            return None
        kind = type(decoder)
        if kind is SSEDecoder:
            if not plain:
                return None
            framing = "sse"
        elif kind is JSONLinesDecoder and decoder.idle:  # type: ignore[attr-defined]
            framing = "jsonl"
        elif kind is EventStreamDecoder:
            framing = "eventstream"  # its simple() checks for a partial message itself
        else:
            return None
        return self._cached_shortcut(framing)

    def close(self) -> list[Event]:
        """The body ended: the last events, ending with MessageEnd. Calling it again returns nothing."""
        if self._result is not None:
            return []
        try:
            frames = self._decoder.close()
        except FramingError as error:
            frames = error.frames
            self._fault(f"stream framing failed: {error}")
        self._frames(frames)
        state = (
            self._state
            if self._state is not None
            else self._adopt(_NoState(self.wire or "unknown"))
        )
        try:
            state.finish()
        except Exception as error:  # noqa: BLE001 - a half-built block must not cost the message built so far
            state.fault(
                f"could not close the {state.wire} stream ({type(error).__name__}: {error})"
            )
        for call in state.calls:
            # Whatever the wire's finish left open (it may have failed halfway) is cut, never passed on as closed.
            state.cut_call(call)
        if not state.complete and state.provider_error is None:
            what = "any payload" if isinstance(state, _NoState) else state.end_signal
            state.fault(f"stream ended before {what}", type="cut")
        self._result = finalize(state)
        return self._drain()

    def result(self) -> Response | ProviderError:
        """The final message (closing the stream first if needed); a ProviderError when that is all there was."""
        if self._result is None:
            self.close()
        assert self._result is not None
        return self._result

    def _bytes(self, data: bytes) -> None:
        try:
            frames = self._decoder.feed(data)
        except FramingError as error:
            self._frames(error.frames)
            self._fault(f"stream framing failed: {error}")
            return
        if self._sniffer is not None and self._sniffer.decoder is not None:
            # Framing settled: talk to its decoder directly from now on.
            self._use(self._sniffer.decoder, self._sniffer.framing)
            self._sniffer = None
        if frames:
            self._frames(frames)

    def _use(self, decoder: Decoder, framing: str | None) -> None:
        self._decoder = decoder
        self._framing = framing
        self._simple = getattr(decoder, "simple", None)

    def _frames(self, frames: list[Frame]) -> None:
        """The hot loop: one JSON parse and one state call per payload; faults never escape."""
        state = None if self._first else self._state
        parse = parse_json
        for frame in frames:
            event, data, kind = frame
            if state is None or kind != "event" or data == b"[DONE]":
                self._frame(frame)
                state = None if self._first else self._state
                continue
            # _deliver(state, event, data), inlined: a payload that does not parse (or is blank) goes to it.
            try:
                payload = parse(data)
            except ValueError:
                _deliver(state, event, data)
                continue
            state.payload_text = data
            try:
                state.feed(event, payload)
            except Exception as error:  # noqa: BLE001 - one odd payload must not cost the text already streamed
                _unexpected(state, error, payload)

    def _frame(self, frame: Frame) -> None:
        event, data, kind = frame
        if kind != "event":
            self._ensure_state(None, event).exception(event, data, kind)
            return
        if data == b"[DONE]":
            if self._state is not None:
                self._state.done_marker()
            return
        if not data.strip():
            return
        try:
            payload = parse_json(data)
        except ValueError as error:
            self._fault(
                f"stream payload is not JSON ({error}): {data[:200]!r}", raw=data
            )
            return
        self._payload(event, payload, data)

    def _payload(self, event: str | None, payload: Any, text: bytes | None) -> None:
        state = self._state
        if state is None or self._first:
            state = self._ensure_state(payload, event)
        state.payload_text = text
        try:
            state.feed(event, payload)
        except Exception as error:  # noqa: BLE001 - one odd payload must not cost the text already streamed
            _unexpected(state, error, payload)

    def _ensure_state(self, payload: Any, event: str | None) -> WireState:
        state = self._state
        if state is not None and not self._first:
            return state
        self._first = False
        framing = self._framing or (self._sniffer.framing if self._sniffer else None)
        if state is None:
            wire = detect_wire(payload, event, framing)
            state = new_state(wire) if wire is not None else whole_state(payload)
        if state is not None:
            json_body = self._json_body and framing in (None, "jsonl", "json")
            return self._adopt(reading(state, payload, event, json_body))
        state = self._adopt(_NoState("unknown"))
        state.fault(
            f"cannot tell which provider wire this stream is: {str(payload)[:200]}"
        )
        return state

    def _adopt(self, state: WireState) -> WireState:
        state.errors[:0] = self._early_errors
        self._state = state
        return state

    def _fault(self, message: str, raw: Any = None) -> None:
        if self._state is not None:
            self._state.fault(message, raw)
        else:
            error = StreamError(message, raw=raw)
            self._early.append(error)
            self._early_errors.append(error)

    def _drain(self) -> list[Event]:
        state = self._state
        out, self._early = self._early, []
        if state is not None and state.out:
            out += state.out
            state.out = []
        return out


def _deliver(state: WireState, event: str | None, data: bytes) -> None:
    """One framed payload to the wire's state; a payload that is not JSON, or that the state chokes on, is a fault."""
    if not data.strip():
        return  # an empty `data:` event (a keep-alive) carries nothing
    try:
        payload = parse_json(data)
    except ValueError as error:
        state.fault(f"stream payload is not JSON ({error}): {data[:200]!r}", raw=data)
        return
    state.payload_text = data
    try:
        state.feed(event, payload)
    except Exception as error:  # noqa: BLE001 - one odd payload must not cost the text already streamed
        _unexpected(state, error, payload)


def _unexpected(state: WireState, error: Exception, payload: Any) -> None:
    state.fault(
        f"unexpected {state.wire} stream payload ({type(error).__name__}: {error})",
        raw=payload,
    )


def stream_events(
    source: Iterable[Chunk] | bytes | str,
    wire: str | None = None,
    *,
    framing: str | None = None,
    content_type: str | None = None,
) -> Iterator[Event]:
    """Canonical events of a stream, ending with MessageEnd, which carries the final message.

    source is the body as bytes or text, or an iterable of chunks (httpx's `iter_bytes()`, SSE lines, decoded
    payload dicts, SDK chunk objects). An exception raised by the source itself (a dropped connection) ends the
    stream with a StreamError and the partial message instead of propagating. A whole response body sent instead
    gives the events a stream of it would; content_type, the response's, helps tell one (see `whole`).
    """
    chunks: Iterable[Chunk] = (
        [source] if isinstance(source, (bytes, bytearray, memoryview, str)) else source
    )
    return Aggregator(wire, framing=framing, content_type=content_type).stream(chunks)


async def astream_events(
    source: AsyncIterable[Chunk] | Iterable[Chunk] | bytes | str,
    wire: str | None = None,
    *,
    framing: str | None = None,
    content_type: str | None = None,
) -> AsyncIterator[Event]:
    """The async twin of stream_events: source may be an async iterable (httpx's `aiter_bytes()`)."""
    if not isinstance(source, AsyncIterable):
        for event in stream_events(
            source, wire, framing=framing, content_type=content_type
        ):
            yield event
        return
    aggregator = Aggregator(wire, framing=framing, content_type=content_type)
    try:
        async for chunk in source:
            for event in aggregator.feed(chunk):
                yield event
    except Exception as error:  # noqa: BLE001 - a dropped connection ends the stream with a StreamError
        aggregator._fault(
            f"stream interrupted: {type(error).__name__}: {error}", raw=error
        )
        for event in aggregator._drain():
            yield event
    for event in aggregator.close():
        yield event


def aggregate(
    source: Iterable[Chunk] | bytes | str,
    wire: str | None = None,
    *,
    framing: str | None = None,
) -> Response | ProviderError:
    """The final canonical message of a stream (a ProviderError when the provider sent only an error)."""
    result: Response | ProviderError | None = None
    for event in stream_events(source, wire, framing=framing):
        if isinstance(event, MessageEnd):
            result = event.response
    assert result is not None
    return result


async def aaggregate(
    source: AsyncIterable[Chunk] | Iterable[Chunk] | bytes | str,
    wire: str | None = None,
    *,
    framing: str | None = None,
) -> Response | ProviderError:
    """The async twin of aggregate."""
    result: Response | ProviderError | None = None
    async for event in astream_events(source, wire, framing=framing):
        if isinstance(event, MessageEnd):
            result = event.response
    assert result is not None
    return result
