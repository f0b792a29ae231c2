"""Conformance of recorded payloads: each file decoded, encoded back to its wire and decoded again, compared.

A recorded exchange's response body that does not decode while its `NNNN.exchange.json` says the call failed (an
error status, a body cut short or past its cap, a stream broken off, a `failure`) is what the caller met, not a
fault of the adapter: its row is `skipped` with that reason, and does not fail the command. Any other body that
does not decode or round-trip fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import toolgen.runtime as adapters
from toolgen.payloads.codec import (
    PAYLOAD_SUFFIXES,
    STREAM_FRAMINGS,
    PayloadError,
    canonical_json,
    comparable,
    decode_payload,
    encode,
    read_payload,
)
from toolgen.runtime import WIRES

# A recorded exchange (the runtime's clients/recording.py): `NNNN.exchange.json` describes `NNNN.request.json` and
# `NNNN.response.<ext>`; it is read for their wire and is no payload itself.
_RECORDED = re.compile(r"^(\d+)\.(request|response|exchange)\.")


@dataclass(frozen=True)
class ConformanceRow:
    """One file's result: its wire and kind, what was found, and whether every check passed."""

    file: str
    wire: str
    kind: str
    ok: bool
    detail: str
    calls: tuple[str, ...] = field(default_factory=tuple)
    # Why the file was not checked: its exchange says the call failed (`ok` then, as no fault of the adapter).
    skipped: str | None = None

    @property
    def result(self) -> str:
        """`ok`, `fail`, or `skipped` (a recorded failure's body, not checked)."""
        return "skipped" if self.skipped is not None else "ok" if self.ok else "fail"

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "wire": self.wire,
            "kind": self.kind,
            "result": self.result,
            "detail": self.detail,
            "tool_calls": list(self.calls),
        }


def payload_files(folder: Path) -> Iterator[Path]:
    """Every payload file under `folder`, sorted (Markdown and other notes, and recorded exchanges' metadata, are
    skipped)."""
    yield from sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and p.suffix.lower() in PAYLOAD_SUFFIXES and not p.name.endswith(".exchange.json")
    )


def _exchange(path: Path) -> tuple[str, dict[str, Any]] | None:
    """Which file of its recorded exchange `path` is (`request` or `response`), and the exchange's metadata; None
    for any other file, or when the metadata cannot be read or names another file."""
    match = _RECORDED.match(path.name)
    if match is None or match.group(2) == "exchange":
        return None
    try:
        meta = json.loads((path.parent / f"{match.group(1)}.exchange.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get(match.group(2)) != path.name:
        return None
    return match.group(2), meta


def recorded_as(path: Path) -> tuple[str | None, str | None]:
    """The wire and kind of a recorded exchange's request or response file, from its `NNNN.exchange.json`.

    (None, None) for any other file, or when the metadata cannot be read: the content then says what it is."""
    found = _exchange(path)
    if found is None:
        return None, None
    role, meta = found
    wire = meta.get("wire") if meta.get("wire") in WIRES else None
    if role == "request":
        return wire, "request"
    return wire, "stream" if meta.get("stream") and path.suffix.lower() in STREAM_FRAMINGS else None


def recorded_failure(path: Path) -> str | None:
    """How the call a recorded response file belongs to failed, as its exchange says: its `failure`, an error
    status, the error that broke a stream off, a body not read to its end; None when it says none, or for a file
    of no exchange."""
    found = _exchange(path)
    if found is None or found[0] != "response":
        return None
    meta = found[1]
    failure, status, broke = meta.get("failure"), meta.get("status"), meta.get("interrupted")
    if isinstance(failure, dict):
        said, code = f"{failure.get('type') or 'error'}: {failure.get('message')}", failure.get("status")
        return said if code is None or f"HTTP {code}" in said else f"{said} (HTTP {code})"
    if isinstance(status, int) and status >= 400:
        return f"HTTP {status} {meta.get('reason') or ''}".rstrip()
    if isinstance(broke, dict):
        return f"the read broke off: {broke.get('error')}: {broke.get('message')}"
    if meta.get("whole") is False:
        return "the body was not read to its end"
    return None


def check_file(path: Path, display: str) -> ConformanceRow:
    """Decode one file and check its round trip: decode, encode to the same wire, decode again, same canonical.

    A failing body of a call its exchange says failed is `skipped`, with why: the caller met that failure."""
    row = _checked(path, display)
    if row.ok:
        return row
    failed = recorded_failure(path)
    if failed is None:
        return row
    wire, kind = recorded_as(path)
    detail = f"skipped, a recorded failure: {failed}; the body {row.detail}"
    return ConformanceRow(display, wire or "?", kind or "response", True, detail, row.calls, failed)


def _checked(path: Path, display: str) -> ConformanceRow:
    wire, kind = recorded_as(path)
    try:
        payload = read_payload(path.read_bytes(), path.suffix, kind)
        decoded = decode_payload(payload, wire)
    except (OSError, PayloadError) as error:
        return ConformanceRow(display, "?", "?", False, f"does not decode: {error}")
    wire, kind = decoded["wire"], decoded["kind"]
    calls = _call_names(decoded)
    try:
        again = _round_trip(decoded, wire)
    except PayloadError as error:
        return ConformanceRow(display, wire, kind, False, f"does not encode back: {error}", calls)
    expected = comparable(decoded)
    if kind == "stream" and not decoded["complete"]:
        # A stream cut short has no finish of the provider's to send back: its message is what must survive.
        again, expected = {"message": again.get("message")}, {"message": expected.get("message")}
    if again != expected:
        differs = sorted(key for key in expected if again.get(key) != expected[key])
        return ConformanceRow(display, wire, kind, False, f"decode(encode(x)) differs in {', '.join(differs)}", calls)
    detail = _summary(decoded)
    if kind == "stream" and not decoded["complete"] and "error" not in decoded:
        detail += "; incomplete stream kept as a partial message"
    return ConformanceRow(display, wire, kind, True, detail, calls)


def _round_trip(decoded: dict[str, Any], wire: str) -> dict[str, Any]:
    body = encode(decoded, wire)
    kind = "request" if "request" in decoded else "response"
    if "error" in decoded:
        return comparable(decoded)  # an error body's canonical form is its message and codes, checked on decode
    result = adapters.decode(body, wire, kind)
    return comparable(canonical_json(result, wire, decoded["kind"]))


def _messages(decoded: dict[str, Any]) -> list[dict[str, Any]]:
    if "request" in decoded:
        return list(decoded["request"]["messages"])
    if "response" in decoded:
        return [decoded["response"]["message"]]
    return []


def _call_names(decoded: dict[str, Any]) -> tuple[str, ...]:
    return tuple(
        str(call.get("function", {}).get("name"))
        for message in _messages(decoded)
        for call in message.get("tool_calls") or []
    )


def _summary(decoded: dict[str, Any]) -> str:
    if "error" in decoded:
        return f"provider error: {decoded['error']['message'][:60]}"
    messages = _messages(decoded)
    calls = sum(len(m.get("tool_calls") or []) for m in messages)
    results = sum(1 for m in messages if m.get("role") == "tool")
    finish = decoded.get("response", {}).get("finish") or {}
    parts = [f"{len(messages)} message(s)", f"{calls} tool call(s)"]
    if results:
        parts.append(f"{results} tool result(s)")
    if finish:
        parts.append(f"finish {finish.get('reason')} ({finish.get('raw')})")
    return ", ".join(parts)
