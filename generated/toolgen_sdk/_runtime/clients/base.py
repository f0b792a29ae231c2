# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What the agent loop calls a model through: the ModelClient protocol, a base class, and canonical events.

A client takes a canonical Request and gives a canonical Response (`complete`, `acomplete`) or canonical stream
events ending with MessageEnd (`stream`, `astream`). What a provider sends instead of an answer comes out as a
ProviderError: raised by `complete`, carried by the last event of `stream`. Nothing else escapes from inside a
client: connection failures, timeouts and bodies it cannot read are ProviderErrors too.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

from ..streams.events import (
    Event,
    Finish,
    MessageEnd,
    MessageStart,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from ..wires.canonical import ProviderError, Request, Response, parts_of
from ..wires.codecs import decode, encode_request


class ModelClient(Protocol):
    """What the agent loop calls: a whole response, or its stream of canonical events; sync and async."""

    def complete(self, request: Request) -> Response: ...

    def stream(self, request: Request) -> Iterator[Event]: ...

    async def acomplete(self, request: Request) -> Response: ...

    def astream(self, request: Request) -> AsyncIterator[Event]: ...


class ModelClientBase:
    """Implement `complete` and get the rest: a stream made from the whole response, async forms in a thread."""

    def request_notes(self, request: Request) -> tuple[str, ...]:
        """What sending `request` moves or drops because the wire cannot hold it where it stands; none here."""
        return ()

    def complete(self, request: Request) -> Response:
        raise NotImplementedError

    def stream(self, request: Request) -> Iterator[Event]:
        try:
            response = self.complete(request)
        except ProviderError as error:
            return iter(error_events(error))
        return response_events(response)

    async def acomplete(self, request: Request) -> Response:
        return await asyncio.to_thread(self.complete, request)

    async def astream(self, request: Request) -> AsyncIterator[Event]:
        for event in await asyncio.to_thread(lambda: list(self.stream(request))):
            yield event


def encoded_body(request: Request, wire: str) -> dict[str, Any]:
    """`request` as a body of `wire`; one the wire cannot carry is a ProviderError (invalid_request)."""
    try:
        return encode_request(request, wire)
    except (ValueError, TypeError) as error:
        raise ProviderError(
            wire, f"could not encode the request: {error}", type="invalid_request"
        ) from None


def request_notes(client: Any, request: Request) -> tuple[str, ...]:
    """The client's notes for `request` (its `request_notes`, when it has one); none from a client without it.

    The run reports each as a `note` event: this is how a loop learns of them without knowing the client.
    """
    notes = getattr(client, "request_notes", None)
    if not callable(notes):
        return ()
    try:
        found = notes(request)
    except Exception:  # noqa: BLE001 - a note that cannot be made must not stop the call; the encoder says more
        return ()
    if not isinstance(found, (tuple, list)):
        return ()
    return tuple(str(note) for note in found)


# ---- canonical events of a whole response ----

_WORDS = re.compile(r"\S+\s*|\s+")


def response_events(response: Response) -> Iterator[Event]:
    """The stream events a provider would have sent for this response: text a word at a time, each call whole."""
    message = response.message
    yield MessageStart(response.id, response.model)
    for part in parts_of(message.get("content")):
        text = part.get("text")
        if part.get("type") == "reasoning" and isinstance(text, str) and text:
            yield ReasoningDelta(text)
        elif part.get("type") == "text" and isinstance(text, str):
            yield from (TextDelta(piece) for piece in _WORDS.findall(text))
    calls = message.get("tool_calls") or []
    for index, call in enumerate(calls):
        function = call.get("function") or {}
        name, arguments = function.get("name"), function.get("arguments") or ""
        yield ToolCallStart(index, call.get("id"), name)
        if arguments:
            yield ToolCallDelta(index, arguments)
        parsed, error = _parsed(arguments)
        yield ToolCallEnd(index, call.get("id"), name, arguments, parsed, error)
    if response.usage:
        yield Usage(response.usage)
    finish = response.finish or {
        "reason": "tool_calls" if calls else "stop",
        "raw": None,
    }
    yield Finish(str(finish.get("reason")), finish.get("raw"))
    yield MessageEnd(response, True)


def error_events(error: ProviderError) -> list[Event]:
    """The end of a stream that brought only an error."""
    failure = StreamError(
        error.message, error.code, error.type, error.status, error.raw, provider=True
    )
    return [failure, Finish("error", error.code), MessageEnd(error, False, "failed")]


def _parsed(arguments: str) -> tuple[Any, str | None]:
    try:
        return (json.loads(arguments) if arguments.strip() else {}), None
    except ValueError as error:
        return None, f"the arguments are not valid JSON: {error}"
    except RecursionError:
        return None, "the arguments nest arrays and objects too deeply to read"


def decode_body(body: Any, wire: str) -> Response | ProviderError:
    """A whole response body as a Response, or the ProviderError it is (or that reading it failed with)."""
    try:
        result = decode(body, None if wire in ("replay", "http") else wire, "response")
    except Exception as error:  # noqa: BLE001 - a body the decoder chokes on is the provider's fault, as data
        return ProviderError(
            wire,
            f"the response body could not be read: {error}",
            type="invalid_response",
            raw=body,
        )
    if isinstance(result, Request):
        return ProviderError(
            wire,
            "the server sent a request body, not a response",
            type="invalid_response",
        )
    return result
