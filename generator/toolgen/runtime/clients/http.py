# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""HTTPModel: a model behind an HTTP API, through the wire adapters; routes and auth per wire, retries.

HTTPModel needs httpx, imported when the first HTTPModel is made: the package imports without it.
Authentication is a key (per the wire's route), a bearer token or token provider, or a per-attempt signature
(auth.py, sigv4.py); `record=` writes each call's exchange into a folder (recording.py).
`timeout` is a wall-clock deadline for the whole call (connect, retries, every byte of the response, streams
included): httpx's own timeouts count per read, and a server dripping a byte at a time never trips them.
Bodies are read with a bound (bodies.py): an answer, whole or streamed, up to `max_response_bytes` once decoded,
an error body up to 1 MiB. The key is masked in all the client gives out, answers and their events included
(secrets.py, stream_mask.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..extras import optional_module
from ..streams.aggregator import astream_events, stream_events
from ..streams.events import Event
from ..wires.canonical import ProviderError, Request, Response
from ..wires.table import ROWS, Route
from ..wires.table import wire as wire_row
from .auth import Auth, BearerToken, key_headers
from .base import ModelClientBase, encoded_body, error_events
from .bodies import (
    ANSWER_CAP,
    ERROR_CAP,
    BodyTooLarge,
    BodyUnreadable,
    acapped_events,
    accept_encoding,
    aread_body,
    capped_events,
    read_body,
    status_error,
    too_large,
    whole_response,
)
from .deadline import TIMEOUTS, DeadlinePassed, awithin, before, within
from .recording import Exchange, Recorder

# RetryPolicy and retry_after are read from here too (the runtime's surface, tests): kept importable.
from .retry import RETRY_STATUSES, RetryPolicy, retry_after, retryable  # noqa: F401
from .secrets import Redactor
from .sent_notes import sent_notes
from .sigv4 import SigV4, aws_region, signable_url
from .stream_mask import amasked, masked
from .urls import join_url

# Each wire's route, base URL and auth header are in the table of wires (wires/table.py).


# ---- the client ----


def _httpx() -> Any:
    """httpx, imported by name so that the generated package imports, and type-checks, without it installed."""
    httpx = optional_module("httpx", "http", "HTTPModel")
    # httpx imports its transport, httpcore (a dependency of every httpx toolgen takes), at the first request:
    # missing, it is named here, where the model is made, not as the run's error.
    optional_module("httpcore", "http", "HTTPModel")
    return httpx


class HTTPModel(ModelClientBase):
    """A model behind an HTTP API: OpenAI Chat and compatible servers, Mistral, Responses, Anthropic, Gemini,
    Ollama, Cohere and Bedrock Converse, each through its wire adapter; streaming, timeouts, retries, typed
    provider errors.

    `api_key` goes where the wire's route says; `token` (a string or a zero-argument callable, such as an Entra
    ID token provider) is sent as a bearer token instead; `auth` takes any other Auth. Bedrock without a key is
    signed with SigV4 for `region`. A base URL may carry a query (Azure's `?api-version=`): it stays at the
    end of every request URL. `record=DIR` writes every call's exchange there, secrets masked. An answer
    whose body decodes to more than `max_response_bytes` is a ProviderError of type `response_too_large`.

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
        max_response_bytes: int = ANSWER_CAP,
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
        self.max_response_bytes = max_response_bytes
        # Never signed (a proxy may rewrite it): sent as the client's default, only what bodies.py can bound.
        self._client_headers = {"accept-encoding": accept_encoding()}
        self._client: Any = None

    def __repr__(self) -> str:
        return f"HTTPModel({self.base_url!r}, {self.model!r}, wire={self.wire!r})"

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # -- requests --

    def request_notes(self, request: Request) -> tuple[str, ...]:
        """What the body sent for `request` loses on this wire (an image in a tool result on openai-chat moved into
        a user message, audio on Anthropic named in a text, a file's name Gemini has no field for), for the run's
        `note` events: a scan that builds nothing for a conversation without media (sent_notes.py)."""
        return sent_notes(request, self.wire)

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
        """What went wrong below HTTP: a timeout, a connection that failed or dropped, a request httpx refused, or
        a body past its cap or that could not be decoded."""
        if isinstance(error, BodyTooLarge):
            return too_large(self.wire, error)
        if isinstance(error, (self._httpx.TimeoutException, *TIMEOUTS)):
            kind = "timeout"
        elif isinstance(error, _AuthFailed):
            kind = "auth_error"
        elif isinstance(error, BodyUnreadable):
            kind = "invalid_response"
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

    def _body(self, response: Any, deadline: float, cap: int) -> Iterator[bytes]:
        """The decoded body under the deadline and `cap`, decoded and counted in the thread that reads it: so the
        reader stops at the cap, whatever the consumer has taken so far."""
        if response.is_stream_consumed:
            # A body some transport read already (a mock's): decoded there, still capped here.
            chunks = read_body(response.iter_bytes(), None, cap)
        else:
            encoding = response.headers.get("content-encoding")
            chunks = read_body(response.iter_raw(), encoding, cap)
        return within(chunks, deadline, self.timeout)

    def _abody(self, response: Any, deadline: float, cap: int) -> AsyncIterator[bytes]:
        if response.is_stream_consumed:
            chunks = aread_body(response.aiter_bytes(), None, cap)
        else:
            encoding = response.headers.get("content-encoding")
            chunks = aread_body(response.aiter_raw(), encoding, cap)
        return awithin(chunks, deadline, self.timeout)

    def _error_cap(self) -> int:
        return min(ERROR_CAP, self.max_response_bytes)

    def _wait(
        self,
        attempt: int,
        failure: ProviderError,
        headers: Mapping[str, str] | None,
        deadline: float,
    ) -> float | None:
        """Seconds before the next attempt, or None when this failure is final (or no time is left for one)."""
        transient = failure.type in ("timeout", "connection_error") or (
            failure.status is not None and retryable(failure.status)
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
                body = bytearray()
                for chunk in self._body(response, deadline, self._error_cap()):
                    body += chunk
                failure = self._status_failure(response, bytes(body))
            except (BodyTooLarge, BodyUnreadable) as error:
                body, failure = bytearray(), self._unread(response, error)
            finally:
                response.close()
            return _Attempt(
                None, self._redactor.error(failure), response.headers, response, body
            )
        except Exception as error:  # noqa: BLE001 - every failure below HTTP becomes a ProviderError
            return _Attempt(None, self._failure(error))

    def _status_failure(self, response: Any, body: bytes) -> ProviderError:
        return status_error(
            self.wire, response.status_code, body, response.reason_phrase
        )

    def _unread(self, response: Any, error: Exception) -> ProviderError:
        """An error response whose body was past its cap, or could not be decoded."""
        status = response.status_code
        if isinstance(error, BodyTooLarge):
            return too_large(self.wire, error, status)
        reason = response.reason_phrase
        return ProviderError(
            self.wire,
            f"HTTP {status} {reason}: {error}",
            type="http_error",
            status=status,
        )

    def _send(self, request: Request, stream: bool, deadline: float) -> Any:
        """An open httpx response with a success status, or the ProviderError after retries.

        The attempts run in a thread waited for until the deadline: sync httpx has no deadline of its own.
        """
        url, content, headers = self._prepare(request, stream)
        if self._client is None:
            self._client = self._httpx.Client(
                timeout=self._timeout, headers=self._client_headers
            )
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
                self._record(outcome.answered, bytes(outcome.body), stream, True)
                raise outcome.failure
            time.sleep(wait)
            attempt += 1

    def _answer(self, response: Any, content: bytearray) -> Response:
        """A whole answer's body as a Response, recorded, with the secrets it echoed masked."""
        self._record(response, bytes(content), False, True)
        try:
            answer = whole_response(self.wire, content)
        except ProviderError as error:
            raise self._redactor.error(error) from None
        return self._redactor.response(answer)

    def complete(self, request: Request) -> Response:
        deadline = self._deadline()
        response = self._send(request, stream=False, deadline=deadline)
        # A bytearray: json.loads reads it as it is, so the body is never held twice.
        content = bytearray()
        try:
            for chunk in self._body(response, deadline, self.max_response_bytes):
                content += chunk
        except Exception as error:  # noqa: BLE001 - a body cut off is a ProviderError like any other
            raise self._failure(error) from None
        finally:
            response.close()
        return self._answer(response, content)

    def stream(self, request: Request) -> Iterator[Event]:
        deadline = self._deadline()
        try:
            response = self._send(request, stream=True, deadline=deadline)
        except ProviderError as error:
            yield from error_events(error)
            return
        received = None if self.recorder is None else bytearray()
        whole = False
        try:
            # A connection dropped mid-stream, or the deadline passing, ends the events with a StreamError.
            chunks = self._body(response, deadline, self.max_response_bytes)
            if received is not None:
                chunks = _kept(chunks, received)
            # A server that ignored `stream` answers whole, as JSON: the content type helps tell (streams/whole.py).
            kind = response.headers.get("content-type")
            events = capped_events(
                stream_events(chunks, self.wire, content_type=kind), self.wire
            )
            yield from masked(events, self._redactor) if self._redactor else events
            whole = True
        finally:
            response.close()
            self._record(response, bytes(received or b""), True, whole)

    # -- async: one client per call, since an httpx.AsyncClient belongs to the event loop that made it --

    def _aclient(self) -> Any:
        return self._httpx.AsyncClient(
            timeout=self._timeout, headers=self._client_headers
        )

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
                body = bytearray()
                async for chunk in self._abody(response, deadline, self._error_cap()):
                    body += chunk
                failure = self._status_failure(response, bytes(body))
            except (BodyTooLarge, BodyUnreadable) as error:
                body, failure = bytearray(), self._unread(response, error)
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
                self._record(outcome.answered, bytes(outcome.body), stream, True)
                raise outcome.failure
            await asyncio.sleep(wait)
            attempt += 1

    async def acomplete(self, request: Request) -> Response:
        deadline = self._deadline()
        async with self._aclient() as client:
            response = await self._asend(client, request, False, deadline)
            content = bytearray()
            try:
                async for chunk in self._abody(
                    response, deadline, self.max_response_bytes
                ):
                    content += chunk
            except Exception as error:  # noqa: BLE001 - a body cut off is a ProviderError like any other
                raise self._failure(error) from None
            finally:
                await response.aclose()
        return self._answer(response, content)

    async def astream(self, request: Request) -> AsyncIterator[Event]:
        deadline = self._deadline()
        async with self._aclient() as client:
            try:
                response = await self._asend(client, request, True, deadline)
            except ProviderError as error:
                for event in error_events(error):
                    yield event
                return
            received = None if self.recorder is None else bytearray()
            whole = False
            try:
                chunks = self._abody(response, deadline, self.max_response_bytes)
                if received is not None:
                    chunks = _akept(chunks, received)
                kind = response.headers.get("content-type")
                events = acapped_events(
                    astream_events(chunks, self.wire, content_type=kind), self.wire
                )
                if self._redactor:
                    events = amasked(events, self._redactor)
                async for event in events:
                    yield event
                whole = True
            finally:
                await response.aclose()
                self._record(response, bytes(received or b""), True, whole)


@dataclass(frozen=True)
class _Attempt:
    """One try: the response, or the failure and the headers that may say when to try again."""

    response: Any
    failure: ProviderError | None = None
    headers: Mapping[str, str] | None = None
    # The error response and its body, for the recording when this failure is the last.
    answered: Any = None
    body: bytes | bytearray = b""


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
