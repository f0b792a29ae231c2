"""Recorded provider payloads as canonical JSON and back: decode, encode, convert, and conformance over a folder.

The canonical JSON is stable, for other tools to read: an object with `wire`, `kind` (request, response or
stream) and one of `request` ({messages, tools, model, extras}), `response` ({message, finish, usage, model,
id, extras}) or `error` ({wire, message, type, code, status, raw}); a stream adds `complete`, `status` and `stream_errors`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import toolgen.runtime as adapters
from toolgen.runtime import (
    WIRES,
    Finish,
    JSONTextError,
    MessageEnd,
    ProviderError,
    Request,
    Response,
    StreamError,
    encode_error_noted,
    encode_response_noted,
    parse_json,
    stream_events,
    with_order,
)

# Stream framings by file extension, as recorded bodies are stored (see the corpus manifest).
STREAM_FRAMINGS = MappingProxyType(
    {".sse": "sse", ".jsonl": "jsonl", ".ndjson": "jsonl", ".eventstream": "eventstream"}
)
PAYLOAD_SUFFIXES = (".json", *STREAM_FRAMINGS)


class PayloadError(ValueError):
    """A payload that cannot be read as the wire format and kind asked for; `pointer` or line:col say where."""

    def __init__(self, message: str, pointer: str = "", *, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.pointer = pointer
        self.line = line
        self.col = col


def pointer_of(error: ValueError) -> str:
    """The JSON pointer an adapter's error message starts with (`/messages/0: expected ...`), or ""."""
    message = str(error)
    return message.split(": ", 1)[0] if message.startswith("/") else ""


@dataclass(frozen=True)
class Payload:
    """A recorded body: JSON data for a request or response, raw bytes for a stream."""

    kind: str
    data: Any = None
    raw: bytes = b""
    framing: str | None = None


def read_payload(raw: bytes, suffix: str = "", kind: str | None = None) -> Payload:
    """What a file holds, from its extension and content: a stream's framing, or a JSON body."""
    if not raw.strip():
        raise PayloadError("empty input: nothing to decode (expected a JSON body or a recorded stream)")
    framing = STREAM_FRAMINGS.get(suffix.lower())
    if kind == "stream" or (framing is not None and kind is None):
        return Payload("stream", raw=raw, framing=framing)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        if kind is None and suffix.lower() != ".json":
            return Payload("stream", raw=raw)  # an AWS event stream is binary
        raise PayloadError(f"not UTF-8 text (byte {error.start}): expected a JSON body") from None
    maybe_stream = kind is None and suffix.lower() != ".json"
    try:
        # Strict and bounded, as arguments are: NaN, repeated keys, runaway nesting and endless integers are
        # refused with their place instead of read as something the provider never sent.
        data = parse_json(text, max_chars=None)
    except JSONTextError as error:
        if error.line is not None:  # not JSON syntax
            syntax = _syntax_error(text)
            # JSON lines read as one document fail with "Extra data" after the first line; SSE does not start
            # with a bracket. A body that opens a bracket and breaks inside is a broken JSON body, not a stream.
            if maybe_stream and not _broken_document(text, syntax):
                return Payload("stream", raw=raw)  # not one JSON document: SSE or JSON lines, sniffed when read
            from toolgen.core.positions import json_syntax_problem  # loads yaml: only on this error

            raise PayloadError(
                f"not a JSON body: {json_syntax_problem(syntax)} (expected a JSON object)",
                line=syntax.lineno,
                col=syntax.colno,
            ) from None
        if maybe_stream and len(text.strip().splitlines()) > 1:
            return Payload("stream", raw=raw)  # JSON lines: each line is read, and refused, on its own
        problem = error.problems[0]
        raise PayloadError(f"not a JSON body: {problem}", problem.pointer) from None
    if isinstance(data, list) and kind is None and not _gemini_error_list(data):
        return Payload("stream", raw=raw, framing="json-array")  # Gemini's alt=json: the stream as one array
    return Payload(kind or "", data=data)


def _syntax_error(text: str) -> json.JSONDecodeError:
    """Where and why `text` is not JSON syntax, for a text the strict parse found not to be."""
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return error
    except (ValueError, RecursionError):  # pragma: no cover - the strict parse saw a syntax error first
        pass
    return json.JSONDecodeError("not JSON", text, 0)


def _broken_document(text: str, error: json.JSONDecodeError) -> bool:
    """True when the text starts a JSON document that breaks before its end (truncated or malformed)."""
    return text.lstrip()[:1] in ("{", "[") and not error.msg.startswith("Extra data")


def _gemini_error_list(data: list[Any]) -> bool:
    return len(data) == 1 and isinstance(data[0], dict) and "error" in data[0]


def _request_json(request: Request) -> dict[str, Any]:
    return {"messages": request.messages, "tools": request.tools, "model": request.model, "extras": request.extras}


def _response_json(response: Response) -> dict[str, Any]:
    return {
        "message": response.message,
        "finish": response.finish,
        "usage": response.usage,
        "model": response.model,
        "id": response.id,
        "extras": response.extras,
    }


def canonical_json(result: Request | Response | ProviderError, wire: str, kind: str) -> dict[str, Any]:
    """The stable canonical JSON of a decoded payload."""
    out: dict[str, Any] = {"wire": wire, "kind": kind}
    if isinstance(result, ProviderError):
        out["error"] = result.to_json()
        if result.raw is not None:
            # The body as sent: the fields the canonical error has no place for (OpenAI's `param`, Groq's
            # `failed_generation`) come back when encoding to the same wire.
            out["error"]["raw"] = result.raw
    elif isinstance(result, Request):
        out["request"] = _request_json(result)
    else:
        out["response"] = _response_json(result)
    return out


def decode_payload(payload: Payload, wire: str | None = None, option: str = "--wire") -> dict[str, Any]:
    """A payload's canonical JSON; the wire and kind come from the content unless given.

    A wire given (by `option` on the command line) that the body is not written in is refused with the wire the
    body looks like: when its shape does not fit, when reading it keeps nothing, and when the wire detection
    names reads more of it (an Anthropic request read as OpenAI Chat would lose its calls)."""
    if payload.kind == "stream":
        return _decode_stream(payload, wire, option)
    try:
        found_wire, found_kind = adapters.detect(payload.data) if wire is None or not payload.kind else ("", "")
    except ValueError as error:
        raise PayloadError(str(error), pointer_of(error)) from None
    given = wire
    wire = wire or found_wire
    kind = payload.kind or found_kind
    try:
        result = adapters.decode(payload.data, wire, kind)
    except ValueError as error:
        other = look_alike(payload.data, wire, option) if given else None
        raise PayloadError(f"{error}; {other}" if other else str(error), pointer_of(error)) from None
    if kept_nothing(result):
        raise PayloadError(unrecognized(payload.data, wire, kind, option))
    if given:
        other = misread(payload.data, wire, kind, option)
        if other:
            raise PayloadError(other)
    if isinstance(result, (Request, Response)):
        # The body's own key order, so that encoding to this wire gives the recorded body back.
        with_order(result, payload.data, adapters.wire(wire).name)
    return canonical_json(result, wire, kind)


def look_alike(
    body: Any, wire: str, option: str = "--wire", subject: str = "this body", suffix: str = ""
) -> str | None:
    """One sentence naming the wire a body looks like when detection names another than `wire`, else None;
    suffix follows the wire in the option's value (validate's `--as anthropic.request`)."""
    other = _other_wire(body, wire)
    if other is None:
        return None
    found_wire, found_kind = other
    return f"{subject} looks like the {found_wire} wire's {found_kind}; {_give(option, found_wire, suffix)}"


def _give(option: str, wire: str, suffix: str) -> str:
    """What to type instead; validate's --as has no detection to fall back on, the other verbs' --wire has."""
    if option == "--as":
        return f"give {option} {wire}{suffix}"
    return f"give {option} {wire}{suffix}, or leave {option} out to detect it"


def _other_wire(body: Any, wire: str) -> tuple[str, str] | None:
    """(wire, kind) detection gives a body, when that is a wire other than `wire`; None when it is `wire` or none."""
    try:
        found_wire, found_kind = adapters.detect(body)
    except ValueError:
        return None
    return None if _same_wire(found_wire, wire) else (found_wire, found_kind)


def _same_wire(one: str, other: str) -> bool:
    try:
        return bool(adapters.canonical_name(one) == adapters.canonical_name(other))
    except ValueError:
        return one == other


def misread(body: Any, wire: str, kind: str, option: str = "--wire", suffix: str = "") -> str | None:
    """One sentence when `wire` reads a body that detection gives to another wire, which reads more of it (an
    Anthropic request read as OpenAI Chat loses its calls); None when the wires read it alike or it is `wire`'s.

    Costs one detection unless the wires differ; toolgen's own runtime reads the body (whatever package decoded it)."""
    other = _other_wire(body, wire)
    if other is None:
        return None
    found_wire, found_kind = other
    try:
        ours = adapters.decode(body, wire, kind)
        theirs = adapters.decode(body, found_wire, kind)
    except ValueError:
        return None  # a shape error is the caller's to report; the one given stands when the other cannot read it
    if _kept(canonical_json(ours, wire, kind)) == _kept(canonical_json(theirs, found_wire, kind)):
        return None  # the wires read this body alike (a body of the shape several write): the one given stands
    return (
        f"this body looks like the {found_wire} wire's {found_kind}, and read as {wire} it loses what "
        f"{found_wire} reads in it; {_give(option, found_wire, suffix)}"
    )


def _kept(decoded: dict[str, Any]) -> Any:
    """What a reading of a body kept, without the wire-keyed extras (which differ between wires by design)."""
    kept = comparable(decoded)
    if "error" in kept:
        return {key: value for key, value in kept["error"].items() if key != "wire"}
    if "request" in decoded:
        # The generation settings are wire-neutral in canonical terms: a wire that leaves them in extras loses them.
        kept["settings"] = decoded["request"]["extras"].get("settings")
    return _without_extras({key: value for key, value in kept.items() if key != "usage"})


def _without_extras(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_extras(item) for key, item in value.items() if key != "extras"}
    if isinstance(value, list):
        return [_without_extras(item) for item in value]
    return value


def kept_nothing(result: Any) -> bool:
    """True when decoding kept nothing of the body: no message, tool, call, finish or usage (a body of another
    wire). By class name, since `toolgen validate` decodes with the generated package's copy of the runtime."""
    kind = type(result).__name__
    if kind == "Request":
        return not result.messages and not result.tools
    if kind != "Response":
        return False  # a provider's error body says something
    message = result.message
    return (
        message.get("content") in (None, "", [])
        and not message.get("tool_calls")
        and not result.finish
        and not result.usage
    )


def unrecognized(body: Any, wire: str, kind: str, option: str = "--wire", suffix: str = "") -> str:
    """Why a body decoded to nothing: the wire it looks like instead, when detection can tell."""
    other = look_alike(body, wire, option, subject="it", suffix=suffix)
    if other is None:
        return f"nothing in this body is {_a(wire)} {kind}: no message, tool, finish or usage was found"
    return f"nothing in this body is {_a(wire)} {kind}: {other}"


def _a(wire: str) -> str:
    """The wire's name with its article, as the sentences here say it ("an anthropic", "a gemini")."""
    return f"an {wire}" if wire[:1] in "aeiou" else f"a {wire}"


def _decode_stream(payload: Payload, wire: str | None, option: str = "--wire") -> dict[str, Any]:
    end: MessageEnd | None = None
    errors: list[StreamError] = []
    events = 0
    found_wire = wire
    content = False
    for event in stream_events(payload.raw, wire, framing=payload.framing):
        events += 1
        if isinstance(event, StreamError):
            errors.append(event)
        elif isinstance(event, MessageEnd):
            end = event
        elif not isinstance(event, Finish):
            content = True
    if end is None:  # pragma: no cover - stream_events always ends with MessageEnd
        raise PayloadError("the stream produced no final message")
    if not content and not any(error.provider for error in errors):
        # Only the aggregator's own complaints: not a body, and not a stream of any wire either.
        what = f"{_a(wire)} stream" if wire else "a JSON body or a recorded stream of any known wire"
        reason = errors[0].message if errors else "no event"
        other = _stream_look_alike(payload, wire, option) if wire else None
        raise PayloadError(f"not {what}: {reason}" + (f"; {other}" if other else ""))
    if wire and not end.complete:
        other = _stream_look_alike(payload, wire, option)
        if other:
            reason = errors[0].message if errors else "it did not end as a complete message"
            raise PayloadError(f"not {_a(wire)} stream: {reason}; {other}")
    response = end.response
    found_wire = found_wire or _wire_of(response) or "unknown"
    out = canonical_json(response, found_wire, "stream")
    out["complete"] = end.complete
    # Why it is not complete (cut, incomplete, failed, corrupt): the event's own word, see MessageEnd.
    out["status"] = end.status
    out["events"] = events
    out["stream_errors"] = [{"message": e.message, "code": e.code, "type": e.type} for e in errors]
    return out


def _stream_look_alike(payload: Payload, wire: str, option: str) -> str | None:
    """For a stream the given wire could not read whole: the wire its own payloads name, when that is another."""
    found = None
    for event in stream_events(payload.raw, None, framing=payload.framing):
        if isinstance(event, MessageEnd):
            # A stream that failed under its own wire (a provider error event) still names that wire.
            found = _wire_of(event.response) if event.complete or event.status == "failed" else None
    if found is None or _same_wire(found, wire):
        return None
    return f"this stream looks like the {found} wire's; give {option} {found}, or leave {option} out to detect it"


def _wire_of(result: Response | ProviderError) -> str | None:
    if isinstance(result, ProviderError):
        return result.wire
    stream = result.extras.get("stream")
    if isinstance(stream, dict) and isinstance(stream.get("wire"), str):
        return str(stream["wire"])
    return next((w for w in WIRES if w in result.extras), None)


def _object_at(data: Any, pointer: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise PayloadError(f"{pointer}: expected an object, got {type(data).__name__}", pointer)
    return data


def _list_at(body: dict[str, Any], key: str, pointer: str) -> list[Any]:
    value = body.get(key)
    if value is not None and not isinstance(value, list):
        raise PayloadError(f"{pointer}/{key}: expected a list, got {type(value).__name__}", f"{pointer}/{key}")
    return list(value or [])


def _object_or_empty(body: dict[str, Any], key: str, pointer: str) -> dict[str, Any]:
    value = body.get(key)
    return {} if value is None else _object_at(value, f"{pointer}/{key}")


def _canonical_message(message: Any, pointer: str) -> Any:
    """`message` when it is a canonical Message; else its first problem, at its pointer, since a wire's encoder
    would fill in what is missing (a message without a role went out as the user's)."""
    from toolgen.source.meta import message_shape_errors  # jsonschema and YAML, which decode and convert never need

    for path, sentence in message_shape_errors(message):
        at = "/".join((pointer, *(part.replace("~", "~0").replace("/", "~1") for part in path)))
        raise PayloadError(f"{at}: {sentence}", at)
    return message


def _canonical_messages(messages: list[Any], pointer: str) -> list[Any]:
    return [_canonical_message(message, f"{pointer}/{index}") for index, message in enumerate(messages)]


def from_canonical(data: Any) -> Request | Response | ProviderError:
    """The Request/Response behind canonical JSON (decode's output, or a bare list of messages), each message
    checked against the canonical Message schema."""
    if isinstance(data, list):
        if not data:
            raise PayloadError("an empty list of messages: nothing to encode")
        return Request(messages=_canonical_messages(data, ""))
    if not isinstance(data, dict):
        raise PayloadError("expected decode's canonical JSON (an object) or a list of messages")
    if "request" in data or "messages" in data:
        pointer = "/request" if "request" in data else ""
        body = _object_at(data.get("request", data), pointer or "/")
        return Request(
            _canonical_messages(_list_at(body, "messages", pointer), f"{pointer}/messages"),
            _list_at(body, "tools", pointer),
            body.get("model"),
            _object_or_empty(body, "extras", pointer),
        )
    if "response" in data:
        body = _object_at(data["response"], "/response")
        message = body.get("message")
        return Response(
            {"role": "assistant", "content": None}
            if message is None
            else _canonical_message(message, "/response/message"),
            body.get("finish"),
            body.get("usage"),
            body.get("model"),
            body.get("id"),
            _object_or_empty(body, "extras", "/response"),
        )
    if "error" in data:
        error = _object_at(data["error"], "/error")
        made = ProviderError(
            str(error.get("wire", "")),
            str(error.get("message", "")),
            type=error.get("type"),
            code=error.get("code"),
            status=error.get("status"),
        )
        made.raw = _raw_error(made, error.get("raw"))
        return made
    raise PayloadError("expected an object with `request`, `response`, `error` or `messages`")


def _raw_error(error: ProviderError, raw: Any) -> Any:
    """The recorded error body `raw`, kept when it still says what the canonical fields say: a message, type,
    code or status edited by hand is encoded from the fields instead."""
    if raw is None or not error.wire:
        return None
    try:
        again = adapters.decode(raw, error.wire, "response")
    except ValueError:
        return None
    if not isinstance(again, ProviderError):
        return None
    same = all(getattr(again, name) == getattr(error, name) for name in ("message", "type", "code", "status"))
    return raw if same else None


@dataclass(frozen=True)
class Converted:
    """A body in a wire's spelling, and one note per field of a request that wire could not carry."""

    body: Any
    notes: tuple[str, ...] = ()


def encode_noted(data: Any, wire: str) -> Converted:
    """A wire body from canonical JSON (a request, response or error body), with its loss notes."""
    result = from_canonical(data)
    try:
        if isinstance(result, Request):
            encoded = adapters.encode_request_noted(result, wire)
            return Converted(encoded.body, encoded.notes)
        if isinstance(result, Response):
            encoded = encode_response_noted(result, wire)
            return Converted(encoded.body, encoded.notes)
        noted = encode_error_noted(result, wire)
        return Converted(adapters.encode_error(result, wire), noted.notes)
    except ValueError as error:
        raise PayloadError(str(error), pointer_of(error)) from None
    except RecursionError:
        # The loss notes walk the body outside the codecs' own depth guard.
        raise PayloadError("/: nests arrays and objects too deeply to convert") from None


def encode(data: Any, wire: str) -> Any:
    """A wire body from canonical JSON: a request body, a response body, or an error body."""
    return encode_noted(data, wire).body


def convert_noted(payload: Payload, to_wire: str, from_wire: str | None = None) -> Converted:
    """A payload in another wire format (a stream becomes that wire's whole response body), with its notes."""
    return encode_noted(decode_payload(payload, from_wire, "--from"), to_wire)


def convert(payload: Payload, to_wire: str, from_wire: str | None = None) -> Any:
    """A payload in another wire format (a stream becomes that wire's whole response body)."""
    return convert_noted(payload, to_wire, from_wire).body


def comparable(decoded: dict[str, Any]) -> dict[str, Any]:
    """The parts a round trip must keep: messages and tool calls, finish and usage (stream bookkeeping aside)."""
    if "request" in decoded:
        return {"messages": decoded["request"]["messages"], "tools": decoded["request"]["tools"]}
    if "response" in decoded:
        body = decoded["response"]
        return {"message": body["message"], "finish": body["finish"], "usage": body["usage"]}
    return {"error": decoded["error"]}
