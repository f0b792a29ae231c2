"""The payload verbs of the library (decode, encode, convert, conformance): recorded provider bodies, no project."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import InvalidInputError
from toolgen.payloads.codec import (
    Converted,
    Payload,
    PayloadError,
    decode_payload,
    read_payload,
)
from toolgen.payloads.codec import convert_noted as convert_payload
from toolgen.payloads.codec import encode_noted as encode_canonical
from toolgen.payloads.conformance import ConformanceRow, check_file, payload_files
from toolgen.project.config import display_path

__all__ = ["conformance", "convert", "convert_noted", "decode", "encode", "encode_noted"]


def _payload(path: str | Path, kind: str | None, root: str | Path) -> tuple[Payload, str]:
    """A recorded payload file (`-` for stdin) and how findings name it: relative to `root`."""
    stdin = str(path) == "-"
    display = "<stdin>" if stdin else display_path(Path(root), Path(path))
    try:
        raw = sys.stdin.buffer.read() if stdin else Path(path).read_bytes()
    except OSError as error:
        message = f"cannot read: {error.strerror}"
        raise InvalidInputError([Diagnostic(display, 1, 1, Severity.ERROR, "payload-unreadable", message)]) from None
    try:
        return read_payload(raw, "" if stdin else Path(path).suffix, kind), display
    except PayloadError as error:
        raise _invalid_payload(display, error) from None


def _invalid_payload(display: str, error: PayloadError) -> InvalidInputError:
    diagnostic = Diagnostic(
        display, error.line, error.col, Severity.ERROR, "payload-invalid", str(error), error.pointer
    )
    return InvalidInputError([diagnostic])


def decode(
    path: str | Path, *, wire: str | None = None, kind: str | None = None, root: str | Path = "."
) -> dict[str, Any]:
    """A recorded request, response or stream file as canonical JSON (see payloads.py); wire and kind detected."""
    payload, display = _payload(path, kind, root)
    try:
        return decode_payload(payload, wire)
    except PayloadError as error:
        raise _invalid_payload(display, error) from None


def encode(path: str | Path, *, wire: str, root: str | Path = ".") -> Any:
    """Canonical JSON (decode's output, or a list of messages) as a `wire` body."""
    return encode_noted(path, wire=wire, root=root).body


def encode_noted(path: str | Path, *, wire: str, root: str | Path = ".") -> Converted:
    """`encode`, with a note for every field of a request `wire` cannot carry."""
    payload, display = _payload(path, "request", root)
    try:
        return encode_canonical(payload.data, wire)
    except PayloadError as error:
        raise _invalid_payload(display, error) from None


def convert(
    path: str | Path, *, to_wire: str, from_wire: str | None = None, kind: str | None = None, root: str | Path = "."
) -> Any:
    """A recorded payload in another wire format; a stream becomes that wire's whole response."""
    return convert_noted(path, to_wire=to_wire, from_wire=from_wire, kind=kind, root=root).body


def convert_noted(
    path: str | Path, *, to_wire: str, from_wire: str | None = None, kind: str | None = None, root: str | Path = "."
) -> Converted:
    """`convert`, with a note for every field of a request the target wire cannot carry (named, never dropped
    silently)."""
    payload, display = _payload(path, kind, root)
    try:
        return convert_payload(payload, to_wire, from_wire)
    except PayloadError as error:
        raise _invalid_payload(display, error) from None


def conformance(folders: Iterable[str | Path], *, root: str | Path = ".") -> list[ConformanceRow]:
    """Every payload file under the folders decoded and round-tripped, one row each, in path order."""
    rows: list[ConformanceRow] = []
    for folder in folders:
        base = Path(folder)
        if not base.is_dir():
            raise InvalidInputError(
                [Diagnostic(str(folder), 1, 1, Severity.ERROR, "payload-unreadable", "not a folder")]
            )
        rows.extend(check_file(path, display_path(Path(root), path)) for path in payload_files(base))
    return rows
