# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The end of a stream: the accumulated body through the wire's decoder, patched and marked where the stream failed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..wires.canonical import ProviderError, Response
from .events import Finish, MessageEnd, StreamError, StreamStatus, ToolCallEnd, Usage
from .state import Call, WireState


def finalize(state: WireState) -> Response | ProviderError:
    """The stream's final message, and its last events (ToolCallEnd, Usage, Finish, MessageEnd) in state.out."""
    result = _decode(state)
    calls = state.calls
    # A stream without calls (the usual short answer) skips the calls' bookkeeping: each comprehension costs.
    closed = state.closed_calls() if calls else []
    if isinstance(result, Response):
        if closed:
            result = _patch_arguments(result, closed)
        if state.complete and state.provider_error is None:
            _missing(state, result, closed)
        if state.errors:
            result = _mark_incomplete(result, state, state.errors)
        if state.notes:
            result = _noted(result, state)
    tool_calls = (
        result.message.get("tool_calls") if isinstance(result, Response) else None
    )
    # Where each call sits in the final message: cut calls are not there.
    positions = (
        {call.index: position for position, call in enumerate(closed)} if closed else {}
    )
    for call in calls:
        if not call.emitted:
            call.emitted = True
            position = positions.get(call.index)
            final = (
                tool_calls[position]
                if isinstance(tool_calls, list)
                and position is not None
                and position < len(tool_calls)
                else None
            )
            call_id = final.get("id") if isinstance(final, dict) else call.id
            state.out.append(
                ToolCallEnd(
                    call.index,
                    call_id,
                    call.name,
                    None if call.cut else call.arguments,
                    call.parsed,
                    call.error,
                )
            )
    if isinstance(result, Response):
        if result.usage:
            state.out.append(Usage(result.usage))
        finish = result.finish or {"reason": "error", "raw": None}
        state.out.append(Finish(finish.get("reason", "error"), finish.get("raw")))
    else:
        state.out.append(Finish("error", result.code))
    complete = state.complete and not state.errors
    state.out.append(MessageEnd(result, complete, _status(state), state.duplicates))
    return result


def _status(state: WireState) -> StreamStatus:
    """complete, incomplete, cut, failed or corrupt: see MessageEnd."""
    if state.provider_error is not None:
        return "failed"
    if not state.complete or (state.calls and any(call.cut for call in state.calls)):
        return "cut"
    if not state.errors:
        return "complete"
    return "incomplete" if state.doubted() else "corrupt"


def _missing(state: WireState, result: Response, closed: list[Call]) -> None:
    """What any wire's ended stream shows missing or wrong: two calls under one id, a call without a name (the event
    that began it never came), or an answer that stopped for tool calls and holds none (the events that carried them never came)."""
    if state.errors and state.doubted():
        return  # the stream state already said what it dropped or guessed
    if len(closed) > 1:
        ids = [call.id for call in closed if call.id is not None]
        if len(set(ids)) < len(ids):
            # A wire that cannot weigh a call again under its id as it comes (OpenAI chat) still never passes two.
            state.doubt(
                "two tool calls under one id: a call sent twice, or one of them is not the model's"
            )
            return
    for call in closed:
        if call.name is None:
            state.doubt(
                f"tool call {call.index} has no name: the event that began it never came"
            )
            return
    if (
        not state.calls
        and (result.finish or {}).get("reason") == "tool_calls"
        and not result.message.get("tool_calls")
    ):
        state.doubt(
            "the answer stopped for tool calls, yet holds none: the events that carried them never came"
        )


def _noted(result: Response, state: WireState) -> Response:
    """The stream state's notes (usage the wire documents, never sent) under extras["stream"]["notes"]: they change
    no status. What the decoder notes about the body (a finish value its table does not know) stays in
    extras["notes"], as for the same body fetched whole."""
    extras = dict(result.extras)
    stream = extras.get("stream")
    stream = (
        dict(stream)
        if isinstance(stream, dict)
        else {"complete": state.complete and not state.errors, "status": _status(state)}
    )
    stream["notes"] = list(state.notes)
    extras["stream"] = stream
    return replace(result, extras=extras)


def _decode(state: WireState) -> Response | ProviderError:
    if state.provider_error is not None and not state.has_content():
        return state.provider_error
    try:
        plain = state.plain()
        if plain is not None:
            return plain
        body = state.body()
        result = state.decode(body)
        if isinstance(result, ProviderError) and state.has_content():
            # The body says the response failed, yet content was streamed first: decode that content.
            state.provider_error = state.provider_error or result
            salvaged = state.salvage(body)
            result = (
                state.decode(salvaged) if salvaged is not None else state.fallback()
            )
    except Exception as error:  # noqa: BLE001 - a decoder choking on a partial body must not lose it
        state.fault(
            f"could not decode the {state.wire} message built from the stream ({type(error).__name__}: {error})"
        )
        return state.fallback()
    if isinstance(result, ProviderError):
        state.provider_error = state.provider_error or result
        return state.fallback() if state.has_content() else result
    return result


def _patch_arguments(result: Response, closed: list[Call]) -> Response:
    """Put back the raw text of arguments that did not parse: the decoder only saw a placeholder for them."""
    broken = [
        (position, call)
        for position, call in enumerate(closed)
        if call.error is not None
    ]
    tool_calls = result.message.get("tool_calls")
    if not broken or not isinstance(tool_calls, list):
        return result
    patched = list(tool_calls)
    for position, call in broken:
        if position < len(patched) and isinstance(patched[position], dict):
            entry = dict(patched[position])
            entry["function"] = {
                **entry.get("function", {}),
                "arguments": call.arguments,
            }
            patched[position] = entry
    return replace(result, message={**result.message, "tool_calls": patched})


def _mark_incomplete(
    result: Response, state: WireState, errors: list[StreamError]
) -> Response:
    if not errors:
        return result
    finish = result.finish
    cut = [call for call in state.calls if call.cut]
    if state.provider_error is not None:
        error = state.provider_error
        finish = {"reason": "error", "raw": error.code or error.type}
    elif finish is None or cut or state.doubted():
        # A call left open means the model was not done, and an incomplete stream may miss calls or hold wrong
        # ones: whatever finish the body says, this answer is broken; the finish the server sent stays as raw.
        finish = {
            "reason": "error",
            "raw": None if finish is None else finish.get("raw"),
        }
    notes = [
        {"message": e.message, "code": e.code, "type": e.type, "provider": e.provider}
        for e in errors
    ]
    stream: dict[str, Any] = {
        "complete": False,
        "status": _status(state),
        "errors": notes,
    }
    # Cut calls of the answers beside the first (OpenAI's choices, Gemini's candidates) come after its own.
    more = state.more_cut_calls()
    if cut or more:
        stream["cut_calls"] = [
            {
                "index": call.index,
                "id": call.id,
                "name": call.name,
                "arguments_received": call.arguments,
            }
            for call in cut
        ] + more
    extras = {**result.extras, "stream": stream}
    return replace(result, finish=finish, extras=extras)
