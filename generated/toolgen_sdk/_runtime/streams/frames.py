# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What every framing decoder hands on: frames, the error that stops one, and the decoder protocol."""

from __future__ import annotations

from typing import NamedTuple, Protocol


class Frame(NamedTuple):
    """One framed payload: the event name where the framing has one, the payload bytes, and the message kind.

    kind is "event" for ordinary payloads; an eventstream `exception` or `error` message keeps its kind, and its
    event is the `:exception-type` (or `:error-code`) header.
    """

    event: str | None
    data: bytes
    kind: str = "event"


# Frame(...) runs a Python-level __new__; building the tuple directly is about twice as fast on the hot paths.
_tuple_new = tuple.__new__


class FramingError(ValueError):
    """The bytes cannot be framed any further (a corrupt eventstream frame); `frames` were complete before it."""

    def __init__(self, message: str, frames: list[Frame] | None = None) -> None:
        super().__init__(message)
        self.frames = frames if frames is not None else []


class Decoder(Protocol):
    """What every framing decoder offers."""

    def feed(self, chunk: bytes) -> list[Frame]: ...

    def close(self) -> list[Frame]: ...
