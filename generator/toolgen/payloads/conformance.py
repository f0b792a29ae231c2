"""Conformance of recorded payloads: each file decoded, encoded back to its wire and decoded again, compared."""

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

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "wire": self.wire,
            "kind": self.kind,
            "result": "ok" if self.ok else "fail",
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


def recorded_as(path: Path) -> tuple[str | None, str | None]:
    """The wire and kind of a recorded exchange's request or response file, from its `NNNN.exchange.json`.

    (None, None) for any other file, or when the metadata cannot be read: the content then says what it is."""
    match = _RECORDED.match(path.name)
    if match is None or match.group(2) == "exchange":
        return None, None
    try:
        meta = json.loads((path.parent / f"{match.group(1)}.exchange.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(meta, dict) or meta.get(match.group(2)) != path.name:
        return None, None
    wire = meta.get("wire") if meta.get("wire") in WIRES else None
    if match.group(2) == "request":
        return wire, "request"
    return wire, "stream" if meta.get("stream") and path.suffix.lower() in STREAM_FRAMINGS else None


def check_file(path: Path, display: str) -> ConformanceRow:
    """Decode one file and check its round trip: decode, encode to the same wire, decode again, same canonical."""
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
