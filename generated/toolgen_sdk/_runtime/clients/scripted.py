# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Models for offline runs and tests: ScriptedModel answers from a script, ReplayModel replays recorded bodies."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import (
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any

from ..streams.aggregator import aggregate, stream_events
from ..streams.events import Event, MessageEnd
from ..wires.canonical import ProviderError, Request, Response
from .base import ModelClientBase, decode_body, error_events, response_events
from .bodies import BodyTooLarge, capped_events, status_error, whole_response
from .recording import Recorded, read_exchanges
from .retry import (
    Retried,
    RetriedError,
    final_failure,
    notes_of,
    retry_event,
    with_retries,
)

# A scripted turn: answer text, a canonical assistant message, a Response, a ProviderError to raise, or a function
# of the request giving one of those.
Turn = str | Mapping[str, Any] | Response | ProviderError | Callable[[Request], Any]


def tool_call(
    name: str, arguments: str | Mapping[str, Any] | None = None, id: str | None = None
) -> dict[str, Any]:
    """A canonical tool call; arguments given as data become JSON text, a missing id is filled in when scripted."""
    text = (
        arguments
        if isinstance(arguments, str)
        else json.dumps(dict(arguments or {}), ensure_ascii=False)
    )
    call: dict[str, Any] = {
        "type": "function",
        "function": {"name": name, "arguments": text},
    }
    if id is not None:
        call["id"] = id
    return call


def assistant_turn(
    text: str | None = None, *calls: Mapping[str, Any]
) -> dict[str, Any]:
    """A canonical assistant message: some text, some tool calls, or both."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [dict(call) for call in calls]
    return message


def _scripted_response(turn: Any, request: Request, number: int) -> Response:
    """One scripted turn as a Response; a ProviderError turn is raised, as a provider's error would be."""
    while callable(turn):
        turn = turn(request)
    if isinstance(turn, ProviderError):
        raise turn
    if isinstance(turn, Response):
        return turn
    if isinstance(turn, str):
        return Response(
            {"role": "assistant", "content": turn},
            {"reason": "stop", "raw": None},
            model="scripted",
        )
    if not isinstance(turn, Mapping):
        raise ProviderError(
            "scripted",
            f"turn {number} is not a message: {type(turn).__name__}",
            type="script",
        )
    message = {"role": "assistant", "content": None, **turn}
    calls = [
        _with_id(call, number, index)
        for index, call in enumerate(message.get("tool_calls") or ())
    ]
    if calls:
        message["tool_calls"] = calls
    else:
        message.pop("tool_calls", None)
    finish = {"reason": "tool_calls" if calls else "stop", "raw": None}
    return Response(message, finish, model="scripted", id=f"scripted-{number}")


def _with_id(call: Mapping[str, Any], number: int, index: int) -> dict[str, Any]:
    entry = dict(call)
    if not entry.get("id"):
        entry["id"] = f"call_{number}_{index}"
    entry.setdefault("type", "function")
    return entry


class ScriptedModel(ModelClientBase):
    """A model that answers from a script, turn by turn, for offline runs and tests; it records every request.

    `delay` seconds pass before each answer, for tests of cancellation and time limits.
    """

    def __init__(self, turns: Iterable[Turn], *, delay: float = 0.0) -> None:
        self._turns = list(turns)
        self.delay = delay
        self.requests: list[Request] = []

    @property
    def remaining(self) -> int:
        return len(self._turns) - len(self.requests)

    def _answer(self, request: Request) -> Response:
        number = len(self.requests)
        self.requests.append(request)
        if number >= len(self._turns):
            raise ProviderError(
                "scripted",
                f"the script has no turn {number + 1}",
                type="script_exhausted",
            )
        return _scripted_response(self._turns[number], request, number + 1)

    def complete(self, request: Request) -> Response:
        if self.delay:
            time.sleep(self.delay)
        return self._answer(request)

    async def acomplete(self, request: Request) -> Response:
        if self.delay:
            await asyncio.sleep(self.delay)
        return self._answer(request)

    async def astream(self, request: Request) -> AsyncIterator[Event]:
        try:
            response = await self.acomplete(request)
        except ProviderError as error:
            for event in error_events(error):
                yield event
            return
        for event in response_events(response):
            yield event


@dataclass(frozen=True)
class RecordedStream:
    """A recorded stream as it is replayed: its bytes, its content type, and the error its read ended with."""

    body: bytes
    content_type: str | None = None
    # The name and message of the exception that broke the read off (a dropped connection, the deadline): raised
    # again after the bytes, so the replayed stream ends with the StreamError the live one did.
    interrupted: tuple[str, str] | None = None
    # The attempts retried before this one: their events come first, as they did live (never waited for).
    retries: tuple[Retried, ...] = ()

    def chunks(self) -> Iterator[bytes]:
        """The bytes, then the recorded error raised as the live read raised it."""
        if self.body:
            yield self.body
        if self.interrupted is not None:
            raise _raised(*self.interrupted)

    def events(self, wire: str | None) -> Iterator[Event]:
        events = stream_events(self.chunks(), wire, content_type=self.content_type)
        # As the live client does: a body past its cap ends with that ProviderError.
        capped = capped_events(events, wire or "replay")
        if not self.retries:
            return capped
        return itertools.chain(map(retry_event, self.retries), capped)


def _raised(name: str, message: str) -> Exception:
    """An exception named and worded as the recorded one: its name and message are what its StreamError says."""
    if name == BodyTooLarge.__name__:
        # The real class, which capped_events turns into a response_too_large error, as it did live.
        return BodyTooLarge.__new__(BodyTooLarge, message)
    kind: type[Exception] = type(name, (Exception,), {"__module__": __name__})
    return kind(message)


# A recorded response: a stream body (bytes or text, framed as the provider sent it, or a RecordedStream), a
# whole JSON body or the Response it was read as, or the ProviderError an error response was.
Recording = (
    bytes
    | str
    | RecordedStream
    | Response
    | Mapping[str, Any]
    | Sequence[Any]
    | ProviderError
)


class ReplayModel(ModelClientBase):
    """A model that replays recorded provider bodies in order, decoded by the wire adapters; it records requests."""

    def __init__(
        self, recordings: Iterable[Recording], wire: str | None = None
    ) -> None:
        self._recordings = list(recordings)
        self.wire = wire
        self.requests: list[Request] = []

    @classmethod
    def from_recordings(cls, folder: str | os.PathLike[str]) -> ReplayModel:
        """Replays, in order, the exchanges `HTTPModel(record=folder)` or `--record folder` wrote there: each
        answer, and each failure (an error status, a body cut short, a stream broken off), as the caller met it."""
        exchanges = read_exchanges(folder)
        wire = next((e.wire for e in exchanges if e.wire), None)
        return cls([_replayed(e, wire) for e in exchanges], wire)

    def _next(self, request: Request) -> Recording:
        number = len(self.requests)
        self.requests.append(request)
        if number >= len(self._recordings):
            raise ProviderError(
                "replay",
                f"no recording left for request {number + 1}",
                type="script_exhausted",
            )
        return self._recordings[number]

    def complete(self, request: Request) -> Response:
        recording = self._next(request)
        if isinstance(recording, ProviderError):
            raise recording
        result: Response | ProviderError | None
        if isinstance(recording, Response):
            result = recording
        elif isinstance(recording, RecordedStream):
            result = None
            for event in recording.events(self.wire):
                if isinstance(event, MessageEnd):
                    result = event.response
            assert result is not None
            if isinstance(result, Response):
                result = with_retries(result, list(recording.retries))
        elif isinstance(recording, (bytes, str)):
            result = aggregate(recording, self.wire)
        else:
            result = decode_body(recording, self.wire or "replay")
        if isinstance(result, ProviderError):
            raise result
        return result

    def stream(self, request: Request) -> Iterator[Event]:
        try:
            recording = self._next(request)
        except ProviderError as error:
            return iter(error_events(error))
        if isinstance(recording, ProviderError):
            return iter(_failed_events(recording))
        if isinstance(recording, RecordedStream):
            return recording.events(self.wire)
        if isinstance(recording, (bytes, str)):
            return stream_events(recording, self.wire)
        result = (
            recording
            if isinstance(recording, Response)
            else decode_body(recording, self.wire or "replay")
        )
        return (
            iter(error_events(result))
            if isinstance(result, ProviderError)
            else response_events(result)
        )

    async def astream(self, request: Request) -> AsyncIterator[Event]:
        for event in self.stream(request):
            yield event


def _failed_events(error: ProviderError) -> list[Event]:
    """A stream that brought only an error, after the retries made before it, as the live client yields them."""
    retries = error.retries if isinstance(error, RetriedError) else ()
    return [*map(retry_event, retries), *error_events(error)]


def _replayed(exchange: Recorded, wire: str | None) -> Recording:
    """A recorded exchange as ReplayModel replays it: what the live client made of the same bytes, or the failure
    the recording says the call ended with (a RetriedError when it says attempts were retried or given up on),
    so that a replay meets what the caller met."""
    meta = exchange.meta
    wire = exchange.wire or wire or "replay"
    # A recording made before `retries` and `gave_up` were written has neither: it replays as it always did.
    retries = notes_of(meta.get("retries"))
    gave_up = meta.get("gave_up") if isinstance(meta.get("gave_up"), str) else None
    failure = meta.get("failure")
    if isinstance(failure, Mapping):
        return final_failure(_failure(failure, exchange, wire), retries, gave_up)
    streamed = meta.get("stream")
    if not isinstance(streamed, bool):
        # A recording written without the field: its file's extension tells.
        streamed = exchange.framed
    if exchange.status >= 400:
        return final_failure(_status_error(exchange, wire), retries, gave_up)
    if streamed:
        content_type = meta.get("content_type")
        return RecordedStream(
            exchange.body,
            content_type if isinstance(content_type, str) else None,
            _interruption(meta.get("interrupted")),
            tuple(retries),
        )
    try:
        return with_retries(whole_response(wire, exchange.body), retries)
    except ProviderError as error:
        return final_failure(error, retries)


def _failure(
    failure: Mapping[str, Any], exchange: Recorded, wire: str
) -> ProviderError:
    """The ProviderError the recording says the call ended with; an error status's body is its raw, as live."""
    raw = None
    if exchange.status >= 400:
        try:
            raw = json.loads(exchange.body)
        except (ValueError, RecursionError):
            raw = None
    fields = {k: v if isinstance(v, str) else None for k, v in failure.items()}
    status = failure.get("status")
    return ProviderError(
        fields.get("wire") or wire,
        fields.get("message") or "",
        type=fields.get("type"),
        code=fields.get("code"),
        status=status if isinstance(status, int) else None,
        raw=raw,
    )


def _interruption(value: Any) -> tuple[str, str] | None:
    if not isinstance(value, Mapping):
        return None
    name, message = value.get("error"), value.get("message")
    return (
        (name, message) if isinstance(name, str) and isinstance(message, str) else None
    )


def _status_error(exchange: Recorded, wire: str) -> ProviderError:
    """An error status with no failure recorded with it, read from its body and reason phrase as the client reads
    one; a recording made before reason phrases were recorded gives `HTTP 401: ...`, as it always did."""
    status, reason = exchange.status, exchange.meta.get("reason")
    error = status_error(
        wire, status, exchange.body, reason if isinstance(reason, str) else ""
    )
    if reason is None and error.type == "http_error":
        error.message = error.message.replace(f"HTTP {status} :", f"HTTP {status}:", 1)
        error.args = (error.message,)
    return error
