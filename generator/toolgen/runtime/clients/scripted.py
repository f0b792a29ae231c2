# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Models for offline runs and tests: ScriptedModel answers from a script, ReplayModel replays recorded bodies."""

from __future__ import annotations

import asyncio
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
from typing import Any

from ..streams.aggregator import aggregate, stream_events
from ..streams.events import Event
from ..wires.canonical import ProviderError, Request, Response
from .base import ModelClientBase, decode_body, error_events, response_events
from .recording import Recorded, read_exchanges

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


# A recorded response: a stream body (bytes or text, framed as the provider sent it), a whole JSON body, or the
# ProviderError an error response was.
Recording = bytes | str | Mapping[str, Any] | Sequence[Any] | ProviderError


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
        """Replays, in order, the exchanges `HTTPModel(record=folder)` or `--record folder` wrote there."""
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
        if isinstance(recording, (bytes, str)):
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
            return iter(error_events(recording))
        if isinstance(recording, (bytes, str)):
            return stream_events(recording, self.wire)
        result = decode_body(recording, self.wire or "replay")
        return (
            iter(error_events(result))
            if isinstance(result, ProviderError)
            else response_events(result)
        )

    async def astream(self, request: Request) -> AsyncIterator[Event]:
        for event in self.stream(request):
            yield event


def _replayed(exchange: Recorded, wire: str | None) -> Recording:
    """A recorded exchange as ReplayModel replays it: stream bytes, a JSON body, or the error it was."""
    if exchange.framed and exchange.status < 400:
        return exchange.body
    try:
        body = json.loads(exchange.body)
    except ValueError:
        body = None
    if exchange.status < 400:
        # A body that is no JSON document is framed as a stream (Gemini's alt=json arrays are JSON).
        return exchange.body if body is None else body
    error = decode_body(body, wire or "replay") if body is not None else None
    if not isinstance(error, ProviderError) or error.type == "invalid_response":
        text = exchange.body[:500].decode("utf-8", "replace").strip()
        error = ProviderError(
            wire or "replay",
            f"HTTP {exchange.status}: {text}".rstrip(": "),
            type="http_error",
            raw=body,
        )
    error.status = error.status or exchange.status
    return error
