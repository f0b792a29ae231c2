# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""AWS eventstream framing (Bedrock's streams): length-prefixed binary messages with headers and two CRC32s."""

from __future__ import annotations

import struct
import zlib
from types import MappingProxyType

from .frames import Frame, FramingError

# AWS caps one eventstream message at 16 MiB plus its prelude; a bigger length is a corrupt frame.
_MAX_EVENTSTREAM_MESSAGE = 16 * 1024 * 1024 + 1024
_PRELUDE = struct.Struct(">III")
_UINT32 = struct.Struct(">I")
_UINT16 = struct.Struct(">H")
# Bytes of each eventstream header value type that has a fixed size (types 0-5, 8, 9); 6 and 7 carry a length.
_FIXED_HEADER_SIZES = MappingProxyType(
    {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
)


class EventStreamDecoder:
    """application/vnd.amazon.eventstream: length-prefixed binary messages with headers and two CRC32 checks."""

    __slots__ = ("_buf", "_failed", "_kinds", "event")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._failed = False
        # The event type of the payload simple() returned last.
        self.event: str | None = None
        # Header blocks as read -> (kind, name, error message): a stream repeats a handful of them.
        self._kinds: dict[bytes, tuple[str, str | None, bytes]] = {}

    def simple(self, chunk: bytes) -> bytes | None:
        """The payload when a chunk is exactly one sound `event` message and nothing is buffered (the usual
        read); its `:event-type` is then in `event`. None otherwise, and then nothing was consumed: feed the chunk.
        """
        if self._buf or self._failed or len(chunk) < 16:
            return None
        total, header_size, crc = _PRELUDE.unpack_from(chunk)
        if (
            total != len(chunk)
            or total > _MAX_EVENTSTREAM_MESSAGE
            or header_size > total - 16
            or zlib.crc32(chunk[:8]) != crc
            or zlib.crc32(chunk[:-4]) != _UINT32.unpack_from(chunk, total - 4)[0]
        ):
            return None
        try:
            kind, name, _ = self._describe(chunk[12 : 12 + header_size])
        except FramingError:
            return None
        if kind != "event":
            return None
        self.event = name
        return chunk[12 + header_size : -4]

    def feed(self, chunk: bytes) -> list[Frame]:
        if self._failed:
            return []
        buf = self._buf
        buf += chunk
        out: list[Frame] = []
        pos = 0
        try:
            while len(buf) - pos >= 12:
                size = self._check_prelude(buf, pos)
                if len(buf) - pos < size:
                    break
                out.append(self._message(buf, pos, size))
                pos += size
        except FramingError as error:
            self._failed = True
            buf.clear()
            raise FramingError(str(error), out) from None
        if pos:
            del buf[:pos]
        return out

    def close(self) -> list[Frame]:
        if self._buf and not self._failed:
            size = len(self._buf)
            self._buf.clear()
            raise FramingError(
                f"eventstream ended inside a message ({size} bytes of it received)"
            )
        return []

    @staticmethod
    def _check_prelude(buf: bytearray, pos: int) -> int:
        total, headers, crc = _PRELUDE.unpack_from(buf, pos)
        if zlib.crc32(buf[pos : pos + 8]) != crc:
            raise FramingError("eventstream prelude CRC mismatch")
        if total < 16 or total > _MAX_EVENTSTREAM_MESSAGE or headers > total - 16:
            raise FramingError(
                f"eventstream message length {total} (headers {headers}) is impossible"
            )
        return int(total)

    def _message(self, buf: bytearray, pos: int, size: int) -> Frame:
        (crc,) = _UINT32.unpack_from(buf, pos + size - 4)
        (header_size,) = _UINT32.unpack_from(buf, pos + 4)
        # A view avoids copying the message for the CRC; `with` releases it so the buffer can shrink afterwards.
        with memoryview(buf) as view:
            if zlib.crc32(view[pos : pos + size - 4]) != crc:
                raise FramingError("eventstream message CRC mismatch")
            raw_headers = bytes(view[pos + 12 : pos + 12 + header_size])
            payload = bytes(view[pos + 12 + header_size : pos + size - 4])
        kind, name, message = self._describe(raw_headers)
        return Frame(name, payload or message, kind)

    def _describe(self, raw: bytes) -> tuple[str, str | None, bytes]:
        """A message's kind, its name (event type, exception type or error code) and, for an error, the
        `:error-message` that stands in for an empty payload."""
        known = self._kinds.get(raw)
        if known is not None:
            return known
        headers = _eventstream_headers(raw)
        kind = str(headers.get(":message-type", "event"))
        message = b""
        if kind == "exception":
            name = headers.get(":exception-type")
        elif kind == "error":
            name = headers.get(":error-code")
            message = str(headers.get(":error-message", "")).encode()
        else:
            name = headers.get(":event-type")
        known = (kind, None if name is None else str(name), message)
        if (
            len(self._kinds) < 64
        ):  # a stream of ever new headers must not grow the table
            self._kinds[raw] = known
        return known


def _eventstream_headers(raw: bytes) -> dict[str, object]:
    headers: dict[str, object] = {}
    pos = 0
    try:
        while pos < len(raw):
            name_size = raw[pos]
            name = raw[pos + 1 : pos + 1 + name_size].decode("utf-8")
            pos += 1 + name_size
            kind = raw[pos]
            pos += 1
            value, pos = _header_value(raw, pos, kind)
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError) as error:
        raise FramingError(f"eventstream headers are malformed: {error}") from None
    return headers


def _header_value(raw: bytes, pos: int, kind: int) -> tuple[object, int]:
    if kind in (6, 7):
        (size,) = _UINT16.unpack_from(raw, pos)
        data = raw[pos + 2 : pos + 2 + size]
        if len(data) != size:
            raise IndexError("header value runs past the headers")
        return (data.decode("utf-8") if kind == 7 else data), pos + 2 + size
    size = _FIXED_HEADER_SIZES.get(kind)
    if size is None:
        raise FramingError(f"eventstream header value type {kind} is unknown")
    if kind < 2:
        return kind == 0, pos
    data = raw[pos : pos + size]
    if len(data) != size:
        raise IndexError("header value runs past the headers")
    if kind == 9:
        return data, pos + size
    return int.from_bytes(data, "big", signed=True), pos + size
