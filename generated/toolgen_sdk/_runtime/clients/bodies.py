# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Response bodies read with a bound: content encodings undone here a step at a time, every body capped.

httpx undoes gzip and the rest itself, but one call of its decoder turns a network read into all it inflates
to: 64 KiB of a gzip bomb is 64 MiB, of zstd or brotli far more. So the client reads the raw bytes and undoes
each encoding here, never more than 64 KiB out of one step, counting what came in and what came out: past the
cap (32 MiB of an answer, 1 MiB of an error body) reading stops with BodyTooLarge, having held no more than
that. Only the encodings that can be undone so are asked for: gzip and deflate, br with brotli 1.2 or later,
zstd with `compression.zstd` (Python 3.14) or its backport.
"""

from __future__ import annotations

import importlib
import json
import zlib
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

from ..streams.events import Event, MessageEnd, StreamError
from ..wires.canonical import ProviderError, Response, aws_error_name
from .base import decode_body

ANSWER_CAP = 32 * 2**20
ERROR_CAP = 2**20

# The most one decoding step gives out.
_STEP = 64 * 1024

TOO_LARGE = "response_too_large"


def size(cap: int) -> str:
    """A cap as people say it: `32 MiB`, `1 KiB`, else in bytes."""
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if cap >= scale and cap % scale == 0:
            return f"{cap // scale} {unit}"
    return f"{cap} bytes"


class BodyTooLarge(Exception):
    """The body (as received, or once decoded) went past the cap; reading stopped there."""

    def __init__(self, cap: int, decoded: bool) -> None:
        what = "decodes to more than" if decoded else "is larger than"
        super().__init__(f"the response body {what} the {size(cap)} cap")
        self.cap = cap


class BodyUnreadable(Exception):
    """The body's content encoding is broken, or one this client cannot undo with a bound."""


# ---- one encoding each ----


class _Zlib:
    """gzip, or deflate (zlib-wrapped or raw, read as httpx reads it); what follows the end of the data is left."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._first = True
        self._inflate = zlib.decompressobj(
            zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS
        )

    def decode(self, data: bytes) -> Iterator[bytes]:
        while not self._inflate.eof:
            try:
                out = self._inflate.decompress(data, _STEP)
            except zlib.error as error:
                if self._first and not self._gzip:
                    # Some servers send raw deflate under `deflate`: read it so, as browsers and httpx do.
                    self._first = False
                    self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise BodyUnreadable(
                    f"the gzip or deflate body is broken: {error}"
                ) from None
            self._first = False
            if out:
                yield out
            data = self._inflate.unconsumed_tail
            # A full step may leave more inside with no input left: asked again with none until it is out.
            if not data and len(out) < _STEP:
                return

    def end(self) -> Iterator[bytes]:
        out = self._inflate.flush()
        if out:
            yield out


class _Brotli:
    def __init__(self, module: Any) -> None:
        self._decompressor = module.Decompressor()
        self._error = module.error

    def decode(self, data: bytes) -> Iterator[bytes]:
        process = self._decompressor.process
        try:
            out = process(data, output_buffer_limit=_STEP)
            while True:
                if out:
                    yield out
                if self._decompressor.can_accept_more_data():
                    return
                out = process(b"", output_buffer_limit=_STEP)
        except self._error as error:
            raise BodyUnreadable(f"the br body is broken: {error}") from None

    def end(self) -> Iterator[bytes]:
        return iter(())


class _Zstd:
    def __init__(self, module: Any) -> None:
        self._module = module
        self._decompressor = module.ZstdDecompressor()

    def decode(self, data: bytes) -> Iterator[bytes]:
        try:
            while True:
                out = self._decompressor.decompress(data, _STEP)
                data = b""
                if out:
                    yield out
                if self._decompressor.eof:
                    # Frames one after another: each needs a decompressor of its own.
                    data = self._decompressor.unused_data
                    self._decompressor = self._module.ZstdDecompressor()
                    if not data:
                        return
                elif self._decompressor.needs_input:
                    return
        except self._module.ZstdError as error:
            raise BodyUnreadable(f"the zstd body is broken: {error}") from None

    def end(self) -> Iterator[bytes]:
        return iter(())


def _brotli() -> Any:
    """brotli (or brotlicffi) when it can give its output a bit at a time (brotli 1.2), else None."""
    for name in ("brotli", "brotlicffi"):
        try:
            module = importlib.import_module(name)
            module.Decompressor().process(b"", output_buffer_limit=1)
        except (ImportError, AttributeError, TypeError):
            continue
        except Exception:  # noqa: BLE001, S112 - any other failure of the probe: this module will not do
            continue
        return module
    return None


def _zstd() -> Any:
    for name in ("compression.zstd", "backports.zstd"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def accept_encoding() -> str:
    """The Accept-Encoding a client sends: only what it can undo with a bound."""
    return ", ".join(
        name
        for name, usable in (
            ("gzip", True),
            ("deflate", True),
            ("br", _brotli() is not None),
            ("zstd", _zstd() is not None),
        )
        if usable
    )


def _layers(header: str | None) -> list[Any]:
    """A decoder per encoding of a Content-Encoding value, in the order they are to be undone (the last first)."""
    layers: list[Any] = []
    for name in (header or "").lower().split(","):
        name = name.strip()
        if name in ("gzip", "x-gzip", "deflate"):
            layers.append(_Zlib(name != "deflate"))
        elif name == "br":
            module = _brotli()
            if module is None:
                raise BodyUnreadable(
                    "the body is br-encoded, which this client cannot undo with a bound "
                    "(it needs brotli 1.2 or later)"
                )
            layers.append(_Brotli(module))
        elif name == "zstd":
            module = _zstd()
            if module is None:
                raise BodyUnreadable(
                    "the body is zstd-encoded, which this client cannot undo with a bound "
                    "(it needs Python 3.14 or backports.zstd)"
                )
            layers.append(_Zstd(module))
        # identity, and names no one knows, pass the bytes as they are, as httpx does.
    return layers[::-1]


def _through(layers: list[Any], data: bytes, first: int = 0) -> Iterator[bytes]:
    if first == len(layers):
        if data:
            yield data
        return
    for piece in layers[first].decode(data):
        yield from _through(layers, piece, first + 1)


def _ending(layers: list[Any]) -> Iterator[bytes]:
    for index, layer in enumerate(layers):
        for piece in layer.end():
            yield from _through(layers, piece, index + 1)


class _Counter:
    """Counts the bytes in and out of one body against its cap."""

    def __init__(self, header: str | None, cap: int) -> None:
        self.layers = _layers(header)
        self.cap = cap
        self.received = 0
        self.given = 0

    def feed(self, raw: bytes) -> Iterator[bytes]:
        self.received += len(raw)
        if self.received > self.cap:
            raise BodyTooLarge(self.cap, False)
        yield from self._counted(_through(self.layers, raw))

    def end(self) -> Iterator[bytes]:
        yield from self._counted(_ending(self.layers))

    def _counted(self, pieces: Iterator[bytes]) -> Iterator[bytes]:
        for piece in pieces:
            self.given += len(piece)
            if self.given > self.cap:
                raise BodyTooLarge(self.cap, bool(self.layers))
            yield piece


def read_body(
    raw: Iterable[bytes], content_encoding: str | None, cap: int
) -> Iterator[bytes]:
    """The decoded body, a step at a time, from its raw chunks (httpx's `iter_raw()`); BodyTooLarge past `cap`."""
    counter = _Counter(content_encoding, cap)
    for chunk in raw:
        yield from counter.feed(chunk)
    yield from counter.end()


async def aread_body(
    raw: AsyncIterator[bytes], content_encoding: str | None, cap: int
) -> AsyncIterator[bytes]:
    """The async twin of read_body (from httpx's `aiter_raw()`)."""
    counter = _Counter(content_encoding, cap)
    async for chunk in raw:
        for piece in counter.feed(chunk):
            yield piece
    for piece in counter.end():
        yield piece


# ---- what a body says ----


def too_large(
    wire: str, error: BodyTooLarge, status: int | None = None
) -> ProviderError:
    what = "error body" if status is not None and status >= 400 else "response"
    message = f"{error}; the {what} was not read further"
    if status is not None and status >= 400:
        message = f"HTTP {status}: {message}"
    return ProviderError(wire, message, type=TOO_LARGE, status=status)


def capped_events(events: Iterable[Event], wire: str) -> Iterator[Event]:
    """A stream's events, where a body cut off at its cap ends with that ProviderError, not a partial message."""
    cut: BodyTooLarge | None = None
    for event in events:
        if type(event) is StreamError and isinstance(event.raw, BodyTooLarge):
            cut = event.raw
            yield StreamError(str(cut), type=TOO_LARGE)
        elif cut is not None and type(event) is MessageEnd:
            yield MessageEnd(too_large(wire, cut), False, "failed")
        else:
            yield event


async def acapped_events(
    events: AsyncIterator[Event], wire: str
) -> AsyncIterator[Event]:
    """The async twin of capped_events."""
    cut: BodyTooLarge | None = None
    async for event in events:
        if type(event) is StreamError and isinstance(event.raw, BodyTooLarge):
            cut = event.raw
            yield StreamError(str(cut), type=TOO_LARGE)
        elif cut is not None and type(event) is MessageEnd:
            yield MessageEnd(too_large(wire, cut), False, "failed")
        else:
            yield event


def whole_response(wire: str, content: bytes | bytearray) -> Response:
    """A whole (not streamed) answer's body as a Response; a ProviderError when it is not one."""
    try:
        body = json.loads(content)
    except ValueError:
        text = content[:300].decode("utf-8", "replace")
        raise ProviderError(
            wire, f"the response is not JSON: {text!r}", type="invalid_response"
        ) from None
    except RecursionError:
        # json.loads recurses once a level: a hostile server can nest past the limit.
        raise ProviderError(
            wire,
            "the response nests arrays and objects too deeply to read",
            type="invalid_response",
        ) from None
    result = decode_body(body, wire)
    if isinstance(result, ProviderError):
        raise result
    return result


def status_error(
    wire: str,
    status: int,
    content: bytes,
    reason: str,
    headers: Mapping[str, str] | None = None,
) -> ProviderError:
    """The provider's error body as a ProviderError with the HTTP status; a body that is no error object as text.
    AWS names the error in the `x-amzn-ErrorType` header (Bedrock's body holds only `message`): the type and code
    the body does not give are that name."""
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):
        body = None
    # The wire's own error shape first, then any other (a proxy or gateway in front of the model).
    for reader in (wire, "http"):
        decoded = decode_body(body, reader) if body is not None else None
        if isinstance(decoded, ProviderError) and decoded.type != "invalid_response":
            decoded.status = decoded.status or status
            decoded.raw = body
            return _named(decoded, headers)
    text = content[:500].decode("utf-8", "replace").strip()
    error = ProviderError(
        wire,
        f"HTTP {status} {reason}: {text}".rstrip(": "),
        type="http_error",
        status=status,
        raw=body,
    )
    return _named(error, headers)


def _named(error: ProviderError, headers: Mapping[str, str] | None) -> ProviderError:
    """`error` with the name `x-amzn-ErrorType` gives as its code, and as its type unless the body gave one."""
    sent = next(
        (v for k, v in (headers or {}).items() if k.lower() == "x-amzn-errortype"),
        None,
    )
    name = aws_error_name(sent) if isinstance(sent, str) else ""
    if name:
        error.code = error.code or name
        if error.type is None or error.type == "http_error":
            error.type = name
    return error


def redirect_error(
    wire: str, status: int, reason: str, location: str | None
) -> ProviderError:
    """A 3xx answer: never followed, since the request, its key with it, would go where the server says. The error
    names where it points (`location` as the caller masked it)."""
    where = f"redirected to {location}" if location else "a redirect without a Location"
    return ProviderError(
        wire,
        f"HTTP {status} {reason}: {where}, not followed (set the base URL to where it points)",
        type="redirect",
        status=status,
    )


def kept(chunks: Iterable[bytes], received: bytearray) -> Iterator[bytes]:
    """The chunks as they come, each also added to `received`, for the recording."""
    for chunk in chunks:
        received += chunk
        yield chunk


async def akept(
    chunks: AsyncIterator[bytes], received: bytearray
) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        received += chunk
        yield chunk
