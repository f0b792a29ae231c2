# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Recorded HTTP exchanges: what `HTTPModel(record=DIR)` writes, and what ReplayModel and `toolgen conformance` read.

One exchange is three files in DIR, numbered in the order the calls were made:
- `0001.request.json`: the request body as sent;
- `0001.response.<ext>`: the response body exactly as received (after content decoding; as far as it came when
  it was cut; nothing of a whole body past its cap), its extension from its content type: `.json`, `.sse`,
  `.ndjson`, `.eventstream` (Bedrock), `.txt` for anything else;
- `0001.exchange.json`: the wire, method, URL, status and its reason phrase, content type, whether it was
  streamed, whether the body was read to its end (`whole`), the content encodings undone (`decoded_from`: the
  body file holds the decoded body, while the headers still say how it was sent), how the call failed
  (`failure`: the ProviderError the caller met, for an error status, a body cut short, past its cap or past the
  deadline, or no answer at all; `interrupted`: the error that broke a stream's read off), the attempts retried
  before this one (`retries`, each one's failure and wait) and why no other was made (`gave_up`), and the
  request and response headers.
A call no response answered (a refused connection, a timeout before the headers) is an exchange too: its
request, `status` and `response` null, and its `failure`. Secrets never reach the disk: credential headers
(the known ones, any request header named as one: `X-Gateway-Key`, `X-Auth-Token`, cookies) and query
parameters are masked whole, and any known secret found anywhere else (a body or a header echoing the key, or a
key the URL carried) is masked too; `masked` says when the body was changed so. One exchange per call, the
attempt it ended with: a replay meets the answers, failures and retries the caller met.
"""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.parse
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..wires.canonical import ProviderError
from .bodies import TOO_LARGE
from .retry import Retried, RetriedError
from .secret_forms import PIECE
from .secrets import MASK, SECRET_HEADERS, Redactor, credential_header
from .urls import SECRET_PARAMETERS, masked_url

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
# The content encodings the client undoes as it reads (bodies.py); identity and unknown names pass as they are.
_DECODED = frozenset({"gzip", "x-gzip", "deflate", "br", "zstd"})
# A credential query parameter inside a header value (a redirect's Location, a Link): its value, to mask.
_QUERY_SECRET = re.compile(
    "(?i)((?:^|[?&;])(?:"
    + "|".join(map(re.escape, sorted(SECRET_PARAMETERS, key=len, reverse=True)))
    + ")=)[^&#;,\\s\"'<>]+"
)


def extension(content_type: str | None) -> str:
    """The file extension a response body is recorded under, from its content type."""
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    return next((ext for name, ext in _EXTENSIONS if name == kind), ".txt")


def _scrubbed(data: bytes, redactor: Redactor) -> bytes:
    # Latin-1 maps every byte to one character and back, so binary framing survives where no secret is found.
    return redactor.text(data.decode("latin-1")).encode("latin-1")


def _headers(
    headers: Mapping[str, str], redactor: Redactor, sent: bool = False
) -> dict[str, str]:
    """Headers as recorded; `sent`: the request's, where a header named as a credential, or whose value holds a
    secret the client was given, is masked whole (a response's `x-ratelimit-remaining-tokens` is no secret)."""
    out = {}
    for name, value in sorted(headers.items()):
        masked = redactor.text(value)
        whole = name.lower() in _MASKED_HEADERS or (
            sent and (masked != value or credential_header(name))
        )
        out[name.lower()] = MASK if whole else _QUERY_SECRET.sub(rf"\1{MASK}", masked)
    return out


def _url_secrets(url: str) -> list[str]:
    """The credentials a URL carries (its key query parameters, its user and password), to mask wherever they are
    echoed; values too short to find safely in a body are masked in the URL and headers alone."""
    parts = urllib.parse.urlsplit(url)
    found = [
        value
        for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if name.lower() in SECRET_PARAMETERS
    ]
    found += [urllib.parse.unquote(v) for v in (parts.username, parts.password) if v]
    return [value for value in found if len(value.strip()) >= PIECE]


def _url(url: str, redactor: Redactor) -> str:
    """The URL as recorded: credential query parameters and any user and password masked."""
    parts = urllib.parse.urlsplit(url)
    if "@" in parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        url = urllib.parse.urlunsplit((parts.scheme, f"{MASK}@{host}", *parts[2:]))
    return masked_url(url, redactor)


def _decoded_from(headers: Mapping[str, str]) -> list[str]:
    """The content encodings undone before the body was recorded, in the order the header lists them."""
    value = next((v for k, v in headers.items() if k.lower() == "content-encoding"), "")
    return [n for n in (p.strip().lower() for p in value.split(",")) if n in _DECODED]


def _masked(fields: Mapping[str, Any], redactor: Redactor) -> dict[str, Any]:
    return {k: redactor.text(v) if isinstance(v, str) else v for k, v in fields.items()}


def _failure(error: BaseException | None, redactor: Redactor) -> dict[str, Any]:
    """`failure`, the ProviderError the caller met, and `interrupted`, the error a stream's read broke off with."""
    if isinstance(error, ProviderError):
        return {"failure": _masked(error.to_json(), redactor), "interrupted": None}
    if error is None:
        return {"failure": None, "interrupted": None}
    broke = {"error": type(error).__name__, "message": redactor.text(str(error))}
    return {"failure": None, "interrupted": broke}


def _retries(exchange: Exchange, redactor: Redactor) -> dict[str, Any]:
    """`retries`, the attempts made before the recorded one, and `gave_up`, why no other was made: a RetriedError
    the call ended with says both; an answer after retries lists them."""
    failure = exchange.failure
    notes, gave_up = exchange.retries, None
    if isinstance(failure, RetriedError):
        notes, gave_up = failure.retries, failure.gave_up
    return {
        "retries": [_masked(note.to_json(), redactor) for note in notes],
        "gave_up": None if gave_up is None else redactor.text(gave_up),
    }


@dataclass(frozen=True)
class Exchange:
    """One HTTP call as it happened: what was sent, and what came back."""

    wire: str
    method: str
    url: str
    request_headers: Mapping[str, str]
    request_body: bytes
    # None when no response came (a refused connection, a timeout before the headers): `failure` says why.
    status: int | None
    response_headers: Mapping[str, str]
    response_body: bytes
    stream: bool
    # False when the reader stopped (or the connection dropped) before the stream ended, or a whole body was cut.
    whole: bool = True
    # The status line's reason phrase ("Unauthorized"), which an error's message quotes.
    reason: str = ""
    # How the call failed once the headers had come. A ProviderError is what the caller met (an error status, a
    # body cut short, past its cap or past the deadline): ReplayModel raises it. Any other exception broke a
    # stream's read off (a dropped connection, the deadline): ReplayModel raises one of its name and message after
    # the recorded bytes, so that the replayed stream ends as the live one did.
    failure: BaseException | None = None
    # The attempts retried before this one, when the call ended with an answer (a RetriedError lists its own).
    retries: tuple[Retried, ...] = ()

    @classmethod
    def of(
        cls,
        wire: str,
        response: Any,
        body: bytes | bytearray,
        stream: bool,
        whole: bool,
        failure: BaseException | None = None,
        retries: Iterable[Retried] = (),
    ) -> Exchange:
        """The exchange an httpx response ended: its request as sent, status line, headers, and the body read."""
        sent = response.request
        return cls(
            wire,
            sent.method,
            str(sent.url),
            dict(sent.headers),
            bytes(sent.content),
            response.status_code,
            dict(response.headers),
            bytes(body),
            stream,
            whole,
            response.reason_phrase,
            failure,
            tuple(retries),
        )

    @classmethod
    def unanswered(
        cls,
        wire: str,
        sent: Any,
        prepared: tuple[str, bytes, Mapping[str, str]],
        stream: bool,
        failure: ProviderError,
    ) -> Exchange:
        """A call no response answered: the httpx request `sent` (None when none was built: the `prepared` URL,
        body and headers then), and the failure the caller met."""
        url, content, headers = prepared
        if sent is not None:
            url, headers = str(sent.url), dict(sent.headers)
        return cls(
            wire,
            "POST",
            url,
            dict(headers),
            content,
            None,
            {},
            b"",
            stream,
            False,
            "",
            failure,
        )


class Tape:
    """A response body as it is read, kept for the recording, with how the read ended: `ended` once the body was
    read to its end, `error` the exception that broke it off; neither when the reader stopped early."""

    def __init__(self) -> None:
        self.body = bytearray()
        self.ended = False
        self.error: Exception | None = None

    def kept(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """The chunks as they come, each also kept."""
        body = self.body
        try:
            for chunk in chunks:
                body += chunk
                yield chunk
        except Exception as error:
            self.error = error
            raise
        self.ended = True

    async def akept(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """The async twin of kept."""
        body = self.body
        try:
            async for chunk in chunks:
                body += chunk
                yield chunk
        except Exception as error:
            self.error = error
            raise
        self.ended = True


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
        # A key sent in the URL's query is a secret like the configured ones, wherever the server echoes it.
        redactor = redactor.plus(_url_secrets(exchange.url))
        content_type = _content_type(exchange.response_headers)
        suffix = extension(content_type)
        with self._lock:
            number = self._claim()
            stem = f"{number:04d}"
            request = self.folder / f"{stem}.request.json"
            # No response came: no response file, rather than an empty body that never was.
            answered = exchange.status is not None
            response = self.folder / f"{stem}.response{suffix}"
            received, whole = exchange.response_body, exchange.whole
            failure = exchange.failure
            if isinstance(failure, ProviderError) and failure.type == TOO_LARGE:
                # A body past its cap was not read to its end. What was read of a whole one (up to 32 MiB of a gzip
                # bomb) replays nothing, the failure does: not kept, and `whole` and `failure` say so.
                whole = False
                received = received if exchange.stream else b""
            body = _scrubbed(received, redactor)
            request.write_bytes(_scrubbed(exchange.request_body, redactor))
            if answered:
                response.write_bytes(body)
            meta = {
                "wire": exchange.wire,
                "method": exchange.method,
                "url": _url(exchange.url, redactor),
                "status": exchange.status,
                "reason": exchange.reason,
                "content_type": content_type,
                "stream": exchange.stream,
                "whole": whole,
                # True when a secret was masked in the body: its bytes are then not quite as received.
                "masked": body != received,
                # The body file holds the body with these undone; content-length still counts the bytes as sent.
                "decoded_from": _decoded_from(exchange.response_headers),
                **_failure(exchange.failure, redactor),
                **_retries(exchange, redactor),
                "request": request.name,
                "response": response.name if answered else None,
                "request_headers": _headers(exchange.request_headers, redactor, True),
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
        """The status; 200 when none is recorded (a call no response answered has a `failure`, replayed first)."""
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
            body = b""
            # null: a call no response answered; its failure is what it replays.
            if meta["response"] is not None or meta.get("failure") is None:
                response = str(meta["response"])
                if Path(response).name != response:
                    raise ValueError(
                        f"the response file {response!r} is not in the folder"
                    )
                body = (base / response).read_bytes()
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(
                f"{base / name}: not a readable recording: {error}"
            ) from None
        out.append(Recorded(meta, body))
    return out
