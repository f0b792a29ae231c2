# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The front door to the wire codecs: tell a body's wire and kind from its content, decode, encode, convert.

`detect(body)` names the wire format and whether the body is a request or a response, from the content alone,
with the predicates the table of wires names; `decode` turns a body into a Request, a Response or a
ProviderError (error bodies are data, never raised); `encode_request`, `encode_response` and `encode_error`
write canonical values in a wire's spelling; `convert` does both. Malformed bodies raise ValueError whose text
starts with a JSON pointer.

Some bodies cannot be told apart, and then decoding them as the guess is still right: OpenAI Chat and its
compatible vendors (Groq, xAI, DeepSeek, ...) share one format; a Mistral, Ollama or Cohere chat body without
their own traits (untyped calls, `prefix`; `options`, object arguments; `tool_plan`, documents) is an OpenAI Chat
body; an `{"error": {...}}` body is the same shape from OpenAI Chat and the Responses API; `{"model", "input":
"<text>"}` is a Responses request unless the model is a Gemini model (then the Interactions API).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from .canonical import ProviderError, Request, Response
from .key_order import in_order, recorded_order
from .table import ROWS, Sniff, Wire, shares_module
from .table import wire as wire_row

REQUEST = "request"
RESPONSE = "response"


@dataclass(frozen=True)
class Codec:
    """The four conversions of one wire, plus its error body."""

    decode_request: Callable[[Any], Request]
    encode_request: Callable[[Request], dict[str, Any]]
    decode_response: Callable[[Any], Response | ProviderError]
    encode_response: Callable[[Response], dict[str, Any]]
    encode_error: Callable[[ProviderError], Any]


_CONVERSIONS = (
    "decode_request",
    "encode_request",
    "decode_response",
    "encode_response",
    "encode_error",
)


def codec(wire: str) -> Codec:
    """The conversions for `wire` (a name or alias in the table of wires); its module is imported on first use."""
    return Codec(*(conversion(wire, name) for name in _CONVERSIONS))


def conversion(wire: str, name: str) -> Callable[..., Any]:
    """One conversion of `wire` (`"encode_request"`, ...): what encoding or decoding one body looks up, without
    the other four `codec()` would bind too."""
    row = wire_row(wire)
    function: Callable[..., Any] = getattr(
        wire_module(row, row.codec, __package__), name
    )
    if shares_module(row, "codec"):
        # A module serving several wires (dialects of one format) is told which one.
        function = partial(function, wire=row.name)
    return _within_depth(function)


def _within_depth(function: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`function`, raising ValueError where a body or value nests too deeply for Python's recursion limit: the
    conversions recurse once a level or so, and a hostile body may nest a thousand levels in a few kilobytes."""

    def converted(value: Any) -> Any:
        try:
            return function(value)
        except RecursionError:
            raise ValueError(
                "/: nests arrays and objects too deeply to convert"
            ) from None
        except ValueError as error:
            # Python's own refusal to write an integer of more digits than sys.get_int_max_str_digits(), from
            # wherever a value is turned into text: said in the shape of every other conversion error.
            if "Out of range float values" in str(error):
                raise ValueError(
                    "/: expected values JSON can hold; the value holds NaN or infinity"
                ) from None
            if "integer string conversion" not in str(error):
                raise
            raise ValueError(
                "/: expected integers Python can write as text; the value holds one with more digits than "
                f"its limit ({sys.get_int_max_str_digits()})"
            ) from None

    return converted


def carried_wires() -> tuple[Wire, ...]:
    """The rows of the wires whose codec this package carries (`wires:` in toolgen.yaml chose them)."""
    return tuple(
        row
        for row in ROWS
        if importlib.util.find_spec(f"{__package__}.{row.codec}") is not None
    )


def wire_module(row: Wire, module: str, package: str) -> Any:
    """`package.module`, one of `row`'s modules; ValueError saying what to add when the package left it out."""
    loaded = sys.modules.get(f"{package}.{module}")
    if loaded is not None and not getattr(loaded.__spec__, "_initializing", False):
        # Imported before: import_module's own lookup costs more than the conversion it serves. A module another
        # thread is still executing is in sys.modules already, half made: import_module waits for it to finish.
        return loaded
    try:
        return importlib.import_module(f".{module}", package)
    except ModuleNotFoundError as error:
        if error.name != f"{package}.{module}":
            raise
        raise ValueError(
            f"this package does not carry the {row.name} wire; add it to `wires:` in "
            "toolgen.yaml and run `toolgen build`"
        ) from None


def _ranked(kind: str) -> list[Sniff]:
    found = (getattr(row.detection, kind) for row in ROWS)
    return sorted((s for s in found if s is not None), key=lambda s: -s.rank)


def _sniffed(sniff: Sniff, body: Any) -> str | None:
    module, function = sniff.where.split(":")
    predicate = getattr(importlib.import_module(f".{module}", __package__), function)
    try:
        found: str | None = predicate(body)
    except (AttributeError, TypeError):
        return None  # a predicate that cannot read a body does not recognize it
    return found


def detect(body: Any) -> tuple[str, str]:
    """(wire, kind) of a request or response body, kind being "request" or "response", from its content alone.

    Response shapes are tried first, then requests, then error bodies; within each, the table's predicates
    by rank."""
    if not isinstance(body, (dict, list)):
        raise ValueError("/: expected a request or response body object")  # noqa: TRY004 - malformed input
    for kind, detection in (
        (RESPONSE, "response"),
        (REQUEST, "request"),
        (RESPONSE, "error"),
    ):
        for sniff in _ranked(detection):
            found = _sniffed(sniff, body)
            if found is not None:
                return found, kind
    if isinstance(body, list):
        raise ValueError("/: expected a request or response body object")  # noqa: TRY004 - malformed input
    raise ValueError(
        "/: expected a request body (`messages`, `contents` or `input`) or a response body (`choices`, "
        "`candidates`, `content`, `output`, `message` or an error object)"
    )


def decode(
    body: Any, wire: str | None = None, kind: str | None = None
) -> Request | Response | ProviderError:
    """A body in canonical terms; `wire` and `kind` are detected when not given."""
    if wire is None or kind is None:
        found_wire, found_kind = detect(body)
        wire = wire or found_wire
        kind = kind or found_kind
    if kind not in (REQUEST, RESPONSE):
        raise ValueError(f"kind must be {REQUEST!r} or {RESPONSE!r}, not {kind!r}")
    decoded: Request | Response | ProviderError = conversion(
        wire, "decode_request" if kind == REQUEST else "decode_response"
    )(body)
    return decoded


def encode_request(request: Request, wire: str) -> dict[str, Any]:
    """`request` as a request body of `wire`, in the key order recorded when it was read from that wire."""
    body: dict[str, Any] = conversion(wire, "encode_request")(request)
    return in_order(body, recorded_order(request.extras, wire_row(wire).name))  # type: ignore[no-any-return]


def encode_response(response: Response, wire: str) -> dict[str, Any]:
    """`response` as a response body of `wire`, in the key order recorded when it was read from that wire."""
    body: dict[str, Any] = conversion(wire, "encode_response")(response)
    return in_order(body, recorded_order(response.extras, wire_row(wire).name))  # type: ignore[no-any-return]


def encode_error(error: ProviderError, wire: str) -> Any:
    """A provider error as the error body `wire` sends."""
    return conversion(wire, "encode_error")(error)


def convert(
    body: Any, to_wire: str, from_wire: str | None = None, kind: str | None = None
) -> Any:
    """A body of one wire as the same request, response or error in another wire."""
    decoded = decode(body, from_wire, kind)
    if isinstance(decoded, ProviderError):
        return encode_error(decoded, to_wire)
    if isinstance(decoded, Request):
        return encode_request(decoded, to_wire)
    return encode_response(decoded, to_wire)
