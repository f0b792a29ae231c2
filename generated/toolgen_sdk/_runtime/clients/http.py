# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""HTTPModel: a model behind an HTTP API, through the wire adapters; routes and auth per wire, retries.

HTTPModel needs httpx, imported when the first HTTPModel is made: the package imports without it.
Authentication is a key (per the wire's route), a bearer token or token provider, or a per-attempt signature
(auth.py, sigv4.py); `record=` writes each call's exchange into a folder (recording.py).
`timeout` is a wall-clock deadline for the whole call (connect, retries, every byte of the response, streams
included): httpx's own timeouts count per read, and a server dripping a byte at a time never trips them.
"""

from __future__ import annotations

import asyncio
import email.utils
import importlib
import json
import os
import random
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..streams.aggregator import astream_events, stream_events
from ..streams.events import Event
from ..wires.base import ProviderError, Request, Response
from ..wires.placement import placement_notes
from ..wires.table import ROWS, Route
from ..wires.table import wire as wire_row
from .auth import Auth, BearerToken, key_headers
from .base import ModelClientBase, decode_body, encoded_body, error_events
from .deadline import TIMEOUTS, DeadlinePassed, awithin, before, within
from .recording import Exchange, Recorder
from .secrets import Redactor
from .sigv4 import SigV4, aws_region, signable_url
from .urls import join_url

# Each wire's route, base URL and auth header are in the table of wires (wires/table.py).


# ---- retries ----

# 408 request timeout, 409 lock conflict, 429 rate limit, 5xx server trouble (Anthropic's 529 overloaded too).
RETRY_STATUSES = frozenset({408, 409, 429})


def _retryable(status: int) -> bool:
    return status in RETRY_STATUSES or status >= 500


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked to wait: `retry-after-ms`, or `retry-after` as seconds or an HTTP date."""
    lowered = {key.lower(): value for key, value in headers.items()}
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = lowered.get(key)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        parsed = email.utils.parsedate_tz(value) if key == "retry-after" else None
        if parsed is not None:
            # An HTTP date is always GMT; a date without a zone is read as GMT too, never as local time.
            when = email.utils.mktime_tz((*parsed[:9], parsed[9] or 0))
            return max(0.0, when - (time.time() if now is None else now))
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """Retries on 408/409/429/5xx, timeouts and dropped connections, with exponential backoff and jitter.

    A server's Retry-After is honoured; one asking for more than `max_wait` seconds ends the retries.
    """

    max_retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_wait: float = 60.0

    def delay(
        self, attempt: int, headers: Mapping[str, str] | None = None
    ) -> float | None:
        """Seconds to wait before retry number `attempt + 1`, or None when there is to be no retry."""
        if attempt >= self.max_retries:
            return None
        asked = retry_after(headers) if headers else None
        if asked is not None:
            return asked if asked <= self.max_wait else None
        # Jitter spreads clients that failed together so that they do not all come back at once.
        return min(self.max_backoff, self.backoff * 2.0**attempt) * (
            0.5 + random.random() / 2
        )


# ---- the client ----


def _httpx() -> Any:
    """httpx, imported by name so that the generated package imports, and type-checks, without it installed."""
    try:
        return importlib.import_module("httpx")
    except ImportError as error:
        raise ImportError("HTTPModel needs httpx: pip install httpx") from error


class HTTPModel(ModelClientBase):
    """A model behind an HTTP API: OpenAI Chat and compatible servers, Mistral, Responses, Anthropic, Gemini,
    Ollama, Cohere and Bedrock Converse, each through its wire adapter; streaming, timeouts, retries, typed
    provider errors.

    `api_key` goes where the wire's route says; `token` (a string or a zero-argument callable, such as an Entra
    ID token provider) is sent as a bearer token instead; `auth` takes any other Auth. Bedrock without a key is
    signed with SigV4 for `region`. A base URL may carry a query (Azure's `?api-version=`): it stays at the
    end of every request URL. `record=DIR` writes every call's exchange there, secrets masked.

    Call close() when done with it, to release the connection pool.
    """

    def __init__(
        self,
        base_url: str | None,
        model: str,
        *,
        wire: str = "openai-chat",
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        token: str | Callable[[], str] | None = None,
        auth: Auth | None = None,
        region: str | None = None,
        record: str | os.PathLike[str] | None = None,
        route: Route | None = None,
    ) -> None:
        row = wire_row(wire)
        # A route adjusted for one server (a preset's) in place of the wire's own.
        route = route or row.route
        if route is None:
            spoken = ", ".join(r.name for r in ROWS if r.route is not None)
            raise ValueError(f"HTTPModel speaks {spoken}; not {wire!r}")
        self._httpx = _httpx()
        if auth is None and token is not None:
            auth = BearerToken(token)
        if auth is None and route.auth == "sigv4" and not api_key:
            auth = SigV4(region)
        self.auth = auth
        base = base_url or route.base_url
        if "{region}" in base:
            region = auth.region if isinstance(auth, SigV4) else aws_region(region)
            base = base.replace("{region}", region)
        self.base_url = base.rstrip("/")
        self.model = model
        self.wire = row.name
        self.retry = retry or RetryPolicy()
        self._route = route
        self._headers = {
            **key_headers(route.auth, api_key),
            **route.headers,
            **(headers or {}),
        }
        # Error messages, raw bodies and stream events never show these, whatever the server echoes.
        self._redactor = Redactor.of(
            api_key.strip() if api_key else None, self._headers
        )
        self.recorder = Recorder(record) if record is not None else None
        self.timeout = timeout
        self._connect_timeout = connect_timeout
        self._timeout = self._httpx.Timeout(timeout, connect=connect_timeout)
        self._client: Any = None

    def __repr__(self) -> str:
        return f"HTTPModel({self.base_url!r}, {self.model!r}, wire={self.wire!r})"

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # -- requests --

    def request_notes(self, request: Request) -> tuple[str, ...]:
        """What the encoder moves or drops from `request` as this wire cannot hold it where it stands (an image in
        a tool result on openai-chat goes into a user message), for the run's `note` events: the same `place` the
        encoder calls, a scan that builds nothing when nothing moves (losses.py's notes are too dear per call)."""
        return placement_notes(request.messages, self.wire)

    def _prepare(
        self, request: Request, stream: bool
    ) -> tuple[str, bytes, dict[str, str]]:
        route = self._route
        model_request = (
            request if request.model is not None else replace(request, model=self.model)
        )
        body = encoded_body(model_request, self.wire)
        body.update(route.stream_fields if stream else route.whole_fields)
        for name in route.omit:
            body.pop(name, None)
        for ours, theirs in route.rename:
            if ours in body:
                body[theirs] = body.pop(ours)
        model = urllib.parse.quote(
            model_request.model or self.model, safe=route.model_safe
        )
        path = (
            route.stream_path if stream and route.stream_path else route.path
        ).replace("{model}", model)
        headers = {
            "content-type": "application/json",
            "accept": route.stream_accept if stream else "application/json",
        }
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        try:
            content = text.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (a model may write "\ud800" in an id or argument) has no UTF-8 form: its JSON
            # escape carries it, so the id comes back as the model wrote it.
            content = json.dumps(body, separators=(",", ":")).encode("ascii")
        url = join_url(self.base_url, path)
        # SigV4 signs the query as the server reads it back: sent already in that spelling, both agree.
        url = signable_url(url) if isinstance(self.auth, SigV4) else url
        return url, content, {**headers, **self._headers}

    def _authorized(self, built: Any, content: bytes, headers: dict[str, str]) -> None:
        """Adds the auth headers of one attempt to the request httpx built: a token asked for now, or a signature
        of these very bytes, over the path, query and Host exactly as httpx puts them on the wire."""
        if self.auth is None:
            return
        host = built.headers["host"]
        sent = f"{built.url.scheme}://{host}{built.url.raw_path.decode('ascii')}"
        named = {k: v for k, v in headers.items() if k.lower() != "host"}
        try:
            auth = self.auth.headers("POST", sent, {**named, "host": host}, content)
        except Exception as error:  # noqa: BLE001 - a credential that cannot be had is a ProviderError
            raise _AuthFailed(f"{type(error).__name__}: {error}") from None
        finally:
            self._redactor = self._redactor.plus(self.auth.secrets())
        built.headers.update(auth)

    def _record(self, response: Any, body: bytes, stream: bool, whole: bool) -> None:
        """The exchange a call ended with, into the recording folder (when recording)."""
        if self.recorder is None or response is None:
            return
        sent = response.request
        self.recorder.write(
            Exchange(
                self.wire,
                sent.method,
                str(sent.url),
                dict(sent.headers),
                bytes(sent.content),
                response.status_code,
                dict(response.headers),
                body,
                stream,
                whole,
            ),
            self._redactor,
        )

    def _failure(self, error: Exception) -> ProviderError:
        """What went wrong below HTTP: a timeout, a connection that failed or dropped, or a request httpx refused."""
        if isinstance(error, (self._httpx.TimeoutException, *TIMEOUTS)):
            kind = "timeout"
        elif isinstance(error, _AuthFailed):
            kind = "auth_error"
        elif isinstance(error, self._httpx.TransportError):
            kind = "connection_error"
        else:
            kind = "client_error"
        return self._redactor.error(
            ProviderError(
                self.wire,
                f"{kind.replace('_', ' ')}: {type(error).__name__}: {error}",
                type=kind,
            )
        )

    def _deadline(self) -> float:
        return time.monotonic() + self.timeout

    def _limits(self, deadline: float) -> Any:
        """httpx's per-read timeouts, never longer than what is left of the call's deadline."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeadlinePassed(f"the call took more than {self.timeout} s")
        return self._httpx.Timeout(
            min(self.timeout, left), connect=min(self._connect_timeout, left)
        )

    def _within(self, chunks: Iterable[bytes], deadline: float) -> Iterator[bytes]:
        return within(chunks, deadline, self.timeout)

    def _awithin(self, chunks: Any, deadline: float) -> AsyncIterator[bytes]:
        return awithin(chunks, deadline, self.timeout)

    def _wait(
        self,
        attempt: int,
        failure: ProviderError,
        headers: Mapping[str, str] | None,
        deadline: float,
    ) -> float | None:
        """Seconds before the next attempt, or None when this failure is final (or no time is left for one)."""
        transient = failure.type in ("timeout", "connection_error") or (
            failure.status is not None and _retryable(failure.status)
        )
        wait = self.retry.delay(attempt, headers) if transient else None
        if wait is not None and time.monotonic() + wait >= deadline:
            return None
        return wait

    def _attempt(
        self,
        url: str,
        content: bytes,
        headers: dict[str, str],
        deadline: float,
    ) -> _Attempt:
        client = self._client
        try:
            built = client.build_request(
                "POST",
                url,
                content=content,
                headers=headers,
                timeout=self._limits(deadline),
            )
            self._authorized(built, content, headers)
            # Always streamed, so that even a whole body is read under the deadline.
            response = client.send(built, stream=True)
            if response.status_code < 400:
                return _Attempt(response)
            try:
                body = b"".join(self._within(response.iter_bytes(), deadline))
                failure = _status_error(
                    self.wire, response.status_code, body, response.reason_phrase
                )
            finally:
                response.close()
            return _Attempt(
                None, self._redactor.error(failure), response.headers, response, body
            )
        except Exception as error:  # noqa: BLE001 - every failure below HTTP becomes a ProviderError
            return _Attempt(None, self._failure(error))

    def _send(self, request: Request, stream: bool, deadline: float) -> Any:
        """An open httpx response with a success status, or the ProviderError after retries.

        The attempts run in a thread waited for until the deadline: sync httpx has no deadline of its own.
        """
        url, content, headers = self._prepare(request, stream)
        if self._client is None:
            self._client = self._httpx.Client(timeout=self._timeout)
        try:
            return before(
                deadline,
                self.timeout,
                lambda: self._retrying(url, content, headers, deadline, stream),
                lambda response: response.close(),
            )
        except DeadlinePassed as error:
            raise self._failure(error) from None

    def _retrying(
        self,
        url: str,
        content: bytes,
        headers: dict[str, str],
        deadline: float,
        stream: bool,
    ) -> Any:
        attempt = 0
        while True:
            outcome = self._attempt(url, content, headers, deadline)
            if outcome.failure is None:
                return outcome.response
            wait = self._wait(attempt, outcome.failure, outcome.headers, deadline)
            if wait is None:
                self._record(outcome.answered, outcome.body, stream, True)
                raise outcome.failure
            time.sleep(wait)
            attempt += 1

    def complete(self, request: Request) -> Response:
        deadline = self._deadline()
        response = self._send(request, stream=False, deadline=deadline)
        try:
            content = b"".join(self._within(response.iter_bytes(), deadline))
        except Exception as error:  # noqa: BLE001 - a body cut off is a ProviderError like any other
            raise self._failure(error) from None
        finally:
            response.close()
        self._record(response, content, False, True)
        try:
            return _whole_response(self.wire, content)
        except ProviderError as error:
            raise self._redactor.error(error) from None

    def stream(self, request: Request) -> Iterator[Event]:
        deadline = self._deadline()
        try:
            response = self._send(request, stream=True, deadline=deadline)
        except ProviderError as error:
            yield from error_events(error)
            return
        received = bytearray()
        whole = False
        try:
            # A connection dropped mid-stream, or the deadline passing, ends the events with a StreamError.
            chunks = _kept(self._within(response.iter_bytes(), deadline), received)
            # A server that ignored `stream` answers whole, as JSON: the content type helps tell (streams/whole.py).
            kind = response.headers.get("content-type")
            for event in stream_events(chunks, self.wire, content_type=kind):
                yield self._redactor.event(event)
            whole = True
        finally:
            response.close()
            self._record(response, bytes(received), True, whole)

    # -- async: one client per call, since an httpx.AsyncClient belongs to the event loop that made it --

    async def _aattempt(
        self,
        client: Any,
        url: str,
        content: bytes,
        headers: dict[str, str],
        deadline: float,
    ) -> _Attempt:
        try:
            built = client.build_request(
                "POST",
                url,
                content=content,
                headers=headers,
                timeout=self._limits(deadline),
            )
            self._authorized(built, content, headers)
            left = deadline - time.monotonic()
            try:
                sending = client.send(built, stream=True)
                response = await asyncio.wait_for(sending, left)
            except TIMEOUTS:
                raise DeadlinePassed(
                    f"the call took more than {self.timeout} s"
                ) from None
            if response.status_code < 400:
                return _Attempt(response)
            try:
                body = b"".join(
                    [c async for c in self._awithin(response.aiter_bytes(), deadline)]
                )
                failure = _status_error(
                    self.wire, response.status_code, body, response.reason_phrase
                )
            finally:
                await response.aclose()
            return _Attempt(
                None, self._redactor.error(failure), response.headers, response, body
            )
        except Exception as error:  # noqa: BLE001 - every failure below HTTP becomes a ProviderError
            return _Attempt(None, self._failure(error))

    async def _asend(
        self, client: Any, request: Request, stream: bool, deadline: float
    ) -> Any:
        url, content, headers = self._prepare(request, stream)
        attempt = 0
        while True:
            outcome = await self._aattempt(client, url, content, headers, deadline)
            if outcome.failure is None:
                return outcome.response
            wait = self._wait(attempt, outcome.failure, outcome.headers, deadline)
            if wait is None:
                self._record(outcome.answered, outcome.body, stream, True)
                raise outcome.failure
            await asyncio.sleep(wait)
            attempt += 1

    async def acomplete(self, request: Request) -> Response:
        deadline = self._deadline()
        async with self._httpx.AsyncClient(timeout=self._timeout) as client:
            response = await self._asend(client, request, False, deadline)
            try:
                chunks = self._awithin(response.aiter_bytes(), deadline)
                content = b"".join([chunk async for chunk in chunks])
            except Exception as error:  # noqa: BLE001 - a body cut off is a ProviderError like any other
                raise self._failure(error) from None
            finally:
                await response.aclose()
        self._record(response, content, False, True)
        try:
            return _whole_response(self.wire, content)
        except ProviderError as error:
            raise self._redactor.error(error) from None

    async def astream(self, request: Request) -> AsyncIterator[Event]:
        deadline = self._deadline()
        async with self._httpx.AsyncClient(timeout=self._timeout) as client:
            try:
                response = await self._asend(client, request, True, deadline)
            except ProviderError as error:
                for event in error_events(error):
                    yield event
                return
            received = bytearray()
            whole = False
            try:
                chunks = _akept(
                    self._awithin(response.aiter_bytes(), deadline), received
                )
                kind = response.headers.get("content-type")
                async for event in astream_events(chunks, self.wire, content_type=kind):
                    yield self._redactor.event(event)
                whole = True
            finally:
                await response.aclose()
                self._record(response, bytes(received), True, whole)


@dataclass(frozen=True)
class _Attempt:
    """One try: the response, or the failure and the headers that may say when to try again."""

    response: Any
    failure: ProviderError | None = None
    headers: Mapping[str, str] | None = None
    # The error response and its body, for the recording when this failure is the last.
    answered: Any = None
    body: bytes = b""


class _AuthFailed(Exception):
    """The credentials for an attempt could not be had: a token provider or the signer failed."""


def _kept(chunks: Iterable[bytes], received: bytearray) -> Iterator[bytes]:
    """The chunks as they come, each also added to `received`, for the recording."""
    for chunk in chunks:
        received += chunk
        yield chunk


async def _akept(
    chunks: AsyncIterator[bytes], received: bytearray
) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        received += chunk
        yield chunk


def _whole_response(wire: str, content: bytes) -> Response:
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


def _status_error(wire: str, status: int, content: bytes, reason: str) -> ProviderError:
    """The provider's error body as a ProviderError with the HTTP status; a body that is no error object as text."""
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
            return decoded
    text = content[:500].decode("utf-8", "replace").strip()
    return ProviderError(
        wire,
        f"HTTP {status} {reason}: {text}".rstrip(": "),
        type="http_error",
        status=status,
        raw=body,
    )
