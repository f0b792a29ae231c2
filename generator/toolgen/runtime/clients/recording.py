# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Recorded HTTP exchanges: what `HTTPModel(record=DIR)` writes, and what ReplayModel and `toolgen conformance` read.

One exchange is three files in DIR, numbered in the order the calls were made:
- `0001.request.json`: the request body as sent;
- `0001.response.<ext>`: the response body exactly as received (after content decoding), its extension from its
  content type: `.json`, `.sse`, `.ndjson`, `.eventstream` (Bedrock), `.txt` for anything else;
- `0001.exchange.json`: the wire, method, URL, status, content type, whether it was streamed, whether the stream
  was read to its end, and the request and response headers.
Secrets never reach the disk: credential headers and query parameters are masked whole, and any known secret
found anywhere else (a body echoing the key) is masked too, and the exchange says so. Only the attempt a call ended with is kept: retried
attempts are not recorded, so that a replay meets the answers the caller met.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .secrets import MASK, SECRET_HEADERS, Redactor
from .urls import masked_url

# Response file extensions by content type (the part before any `;`).
_EXTENSIONS = (
    ("text/event-stream", ".sse"),
    ("application/x-ndjson", ".ndjson"),
    ("application/jsonl", ".ndjson"),
    ("application/vnd.amazon.eventstream", ".eventstream"),
    ("application/json", ".json"),
)
# Headers masked whole in the recording: the credentials, and cookies, which are credentials too.
_MASKED_HEADERS = SECRET_HEADERS | {"cookie", "set-cookie", "proxy-authorization"}
EXCHANGE = re.compile(r"^(\d+)\.exchange\.json$")


def extension(content_type: str | None) -> str:
    """The file extension a response body is recorded under, from its content type."""
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    return next((ext for name, ext in _EXTENSIONS if name == kind), ".txt")


def _scrubbed(data: bytes, redactor: Redactor) -> bytes:
    # Latin-1 maps every byte to one character and back, so binary framing survives where no secret is found.
    return redactor.text(data.decode("latin-1")).encode("latin-1")


def _headers(headers: Mapping[str, str], redactor: Redactor) -> dict[str, str]:
    return {
        name.lower(): MASK if name.lower() in _MASKED_HEADERS else redactor.text(value)
        for name, value in sorted(headers.items())
    }


@dataclass(frozen=True)
class Exchange:
    """One HTTP call as it happened: what was sent, and what came back."""

    wire: str
    method: str
    url: str
    request_headers: Mapping[str, str]
    request_body: bytes
    status: int
    response_headers: Mapping[str, str]
    response_body: bytes
    stream: bool
    # False when the reader stopped (or the connection dropped) before the stream ended.
    whole: bool = True


class Recorder:
    """Writes exchanges into one folder, numbering them after any exchanges already there."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Recorder({str(self.folder)!r})"

    def write(self, exchange: Exchange, redactor: Redactor) -> Path:
        """Write one exchange, secrets masked; the path of its `NNNN.exchange.json`."""
        content_type = _content_type(exchange.response_headers)
        suffix = extension(content_type)
        with self._lock:
            number = self._claim()
            stem = f"{number:04d}"
            request = self.folder / f"{stem}.request.json"
            response = self.folder / f"{stem}.response{suffix}"
            body = _scrubbed(exchange.response_body, redactor)
            request.write_bytes(_scrubbed(exchange.request_body, redactor))
            response.write_bytes(body)
            meta = {
                "wire": exchange.wire,
                "method": exchange.method,
                "url": masked_url(exchange.url, redactor),
                "status": exchange.status,
                "content_type": content_type,
                "stream": exchange.stream,
                "whole": exchange.whole,
                # True when a secret was masked in the body: its bytes are then not quite as received.
                "masked": body != exchange.response_body,
                "request": request.name,
                "response": response.name,
                "request_headers": _headers(exchange.request_headers, redactor),
                "response_headers": _headers(exchange.response_headers, redactor),
            }
            path = self.folder / f"{stem}.exchange.json"
            path.write_text(
                json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        return path

    def _claim(self) -> int:
        """The next free number; the exchange file is created exclusively, so two recorders never share one."""
        taken = [int(m.group(1)) for m in map(EXCHANGE.match, _names(self.folder)) if m]
        number = max(taken, default=0) + 1
        while True:
            try:
                with open(self.folder / f"{number:04d}.exchange.json", "x"):
                    return number
            except FileExistsError:
                number += 1


def _names(folder: Path) -> list[str]:
    return [path.name for path in folder.iterdir()]


def _content_type(headers: Mapping[str, str]) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == "content-type"), None)


@dataclass(frozen=True)
class Recorded:
    """One recorded exchange read back: its metadata and the response body's bytes."""

    meta: Mapping[str, Any]
    body: bytes

    @property
    def wire(self) -> str | None:
        wire = self.meta.get("wire")
        return wire if isinstance(wire, str) else None

    @property
    def status(self) -> int:
        status = self.meta.get("status")
        return status if isinstance(status, int) else 200

    @property
    def framed(self) -> bool:
        """Whether the body is a stream to frame (not one JSON document)."""
        name = str(self.meta.get("response", ""))
        return name.endswith((".sse", ".ndjson", ".eventstream"))


def read_exchanges(folder: str | os.PathLike[str]) -> list[Recorded]:
    """Every exchange recorded in `folder`, in the order they were made; ValueError naming a broken one."""
    base = Path(folder)
    if not base.is_dir():
        raise ValueError(f"{base}: no such folder of recordings")
    found = sorted(
        (int(m.group(1)), m.group(0)) for m in map(EXCHANGE.match, _names(base)) if m
    )
    out: list[Recorded] = []
    for _, name in found:
        try:
            meta = json.loads((base / name).read_text(encoding="utf-8"))
            response = str(meta["response"])
            if Path(response).name != response:
                raise ValueError(f"the response file {response!r} is not in the folder")
            body = (base / response).read_bytes()
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(
                f"{base / name}: not a readable recording: {error}"
            ) from None
        out.append(Recorded(meta, body))
    return out
