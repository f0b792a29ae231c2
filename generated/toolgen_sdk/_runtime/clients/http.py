# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""HTTPModel: a model behind an HTTP API, through the wire adapters; routes and auth per wire, retries.

HTTPModel needs httpx, imported when the first HTTPModel is made: the package imports without it.
Authentication is a key (per the wire's route), a bearer token or token provider, or a per-attempt signature
(auth.py, sigv4.py); `record=` writes each call's exchange into a folder (recording.py).
`timeout` is a wall-clock deadline for the whole call (connect, retries, every byte of the response, streams
included): httpx's own timeouts count per read, and a server dripping a byte at a time never trips them.
Bodies are read with a bound (bodies.py): an answer, whole or streamed, up to `max_response_bytes` once decoded,
an error body up to 1 MiB. The key is masked in all the client gives out, answers and their events included
(secrets.py, stream_mask.py). Each retry is said as it is made (retry.py); a redirect is an error naming where it
points, never followed: a key is never sent on to another URL.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import replace
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
    whole_response,
)
from .deadline import TIMEOUTS, DeadlinePassed, awithin, before, within
from .failures import AuthFailed, answer_failure, below_http
from .recording import Exchange, Recorder, Tape

# RetryPolicy and retry_after are read from here too (the runtime's surface, tests): kept importable.
from .retry import (  # noqa: F401
    Attempt,
    Opened,
    Retried,
    RetryPolicy,
    discard,
    final_failure,
    next_wait,
    retry_after,
    retry_event,
    with_retries,
)
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
            raise AuthFailed(f"{type(error).__name__}: {error}") from None
        finally:
            self._redactor = self._redactor.plus(self.auth.secrets())
        built.headers.update(auth)

    def _record(
        self,
        response: Any,
        body: Any,
        stream: bool,
        whole: bool,
        failure: Any = None,
        retries: list[Retried] | None = None,
    ) -> None:
        """The exchange a call ended with, how it failed once the headers had come (a ProviderError, or the error
        that broke a stream off) and the retries before it, into the recording folder (when recording): a replay
        meets the same."""
        if self.recorder is not None and response is not None:
            exchange = Exchange.of(
                self.wire, response, body, stream, whole, failure, retries or ()
            )
            self.recorder.write(exchange, self._redactor)

    def _given_up(
        self,
        outcome: Attempt,
        prepared: tuple[str, bytes, dict[str, str]],
        stream: bool,
        retries: list[Retried],
        why: str | None = None,
    ) -> ProviderError:
        """The failure a call's attempts ended with, recorded with the error response, or with the request when no
        response answered (refused, timed out before the headers): a replay raises it too."""
        assert outcome.failure is not None
        error = final_failure(outcome.failure, retries, why)
        if outcome.answered is not None:
            self._record(outcome.answered, outcome.body, stream, True, error)
        elif self.recorder is not None:
            sent = Exchange.unanswered(self.wire, outcome.sent, prepared, stream, error)
            self.recorder.write(sent, self._redactor)
        return error

    def _failure(self, error: Exception) -> ProviderError:
        return below_http(self.wire, error, self._httpx, self._redactor)

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

    def _attempt(
        self,
        url: str,
        content: bytes,
        headers: dict[str, str],
        deadline: float,
    ) -> Attempt:
        client = self._client
        built: Any = None
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
            if response.status_code < 300:
                return Attempt(response)
            try:
                body = bytearray()
                for chunk in self._body(response, deadline, self._error_cap()):
                    body += chunk
                failure = answer_failure(
                    self.wire, response, bytes(body), self._redactor
                )
            except (BodyTooLarge, BodyUnreadable) as error:
                body = bytearray()
                failure = answer_failure(self.wire, response, error, self._redactor)
            finally:
                response.close()
            return Attempt(None, failure, response.headers, response, body)
        except Exception as error:  # noqa: BLE001 - every failure below HTTP becomes a ProviderError
            return Attempt(None, self._failure(error), sent=built)

    def _tries(
        self, request: Request, stream: bool, deadline: float, retries: list[Retried]
    ) -> Iterator[Retried | Opened]:
        """The attempts of one call: a note for each failed attempt made again, yielded before its wait (and added
        to `retries`), then the open httpx response with a success status. The last failure is raised, a
        RetriedError when there were retries or one was given up on.

        Each attempt runs in a thread waited for until the deadline: sync httpx has no deadline of its own.
        """
        prepared = self._prepare(request, stream)
        url, content, headers = prepared
        if self._client is None:
            self._client = self._httpx.Client(
                timeout=self._timeout, headers=self._client_headers
            )
        while True:
            try:
                outcome = before(
                    deadline,
                    self.timeout,
                    lambda: self._attempt(url, content, headers, deadline),
                    discard,
                )
            except DeadlinePassed as error:
                timed_out = Attempt(None, self._failure(error))
                raise self._given_up(timed_out, prepared, stream, retries) from None
            if outcome.failure is None:
                yield Opened(outcome.response)
                return
            wait, why = next_wait(
                self.retry, len(retries), outcome, deadline, self.timeout
            )
            if wait is None:
                raise self._given_up(outcome, prepared, stream, retries, why)
            note = Retried.of(outcome.failure, len(retries) + 1, wait)
            retries.append(note)
            yield note
            time.sleep(wait)

    def _answer(
        self, response: Any, content: bytearray, retries: list[Retried]
    ) -> Response:
        """A whole answer's body as a Response, recorded, with the secrets it echoed masked and the retries made
        before it listed."""
        self._record(response, bytes(content), False, True, None, retries)
        try:
            answer = whole_response(self.wire, content)
        except ProviderError as error:
            raise final_failure(self._redactor.error(error), retries) from None
        return with_retries(self._redactor.response(answer), retries)

    def complete(self, request: Request) -> Response:
        deadline = self._deadline()
        retries: list[Retried] = []
        response: Any = None
        for item in self._tries(request, False, deadline, retries):
            if isinstance(item, Opened):
                response = item.response
        # A bytearray: json.loads reads it as it is, so the body is never held twice.
        content = bytearray()
        try:
            for chunk in self._body(response, deadline, self.max_response_bytes):
                content += chunk
        except Exception as error:  # noqa: BLE001 - a body cut off is a ProviderError like any other
            failure = final_failure(self._failure(error), retries)
            self._record(response, content, False, False, failure)
            raise failure from None
        finally:
            response.close()
        return self._answer(response, content, retries)

    def stream(self, request: Request) -> Iterator[Event]:
        deadline = self._deadline()
        retries: list[Retried] = []
        response: Any = None
        try:
            for item in self._tries(request, True, deadline, retries):
                if isinstance(item, Opened):
                    response = item.response
                else:
                    yield retry_event(item)
        except ProviderError as error:
            yield from error_events(error)
            return
        tape = Tape()
        try:
            # A connection dropped mid-stream, or the deadline passing, ends the events with a StreamError.
            chunks = self._body(response, deadline, self.max_response_bytes)
            if self.recorder is not None:
                chunks = tape.kept(chunks)
            # A server that ignored `stream` answers whole, as JSON: the content type helps tell (streams/whole.py).
            kind = response.headers.get("content-type")
            events = capped_events(
                stream_events(chunks, self.wire, content_type=kind), self.wire
            )
            yield from masked(events, self._redactor) if self._redactor else events
        finally:
            response.close()
            # Whole when the body was read to its end: not when it broke off, nor when the reader stopped.
            self._record(response, tape.body, True, tape.ended, tape.error, retries)

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
    ) -> Attempt:
        built: Any = None
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
            if response.status_code < 300:
                return Attempt(response)
            try:
                body = bytearray()
                async for chunk in self._abody(response, deadline, self._error_cap()):
                    body += chunk
                failure = answer_failure(
                    self.wire, response, bytes(body), self._redactor
                )
            except (BodyTooLarge, BodyUnreadable) as error:
                body = bytearray()
                failure = answer_failure(self.wire, response, error, self._redactor)
            finally:
                await response.aclose()
            return Attempt(None, failure, response.headers, response, body)
        except Exception as error:  # noqa: BLE001 - every failure below HTTP becomes a ProviderError
            return Attempt(None, self._failure(error), sent=built)

    async def _atries(
        self,
        client: Any,
        request: Request,
        stream: bool,
        deadline: float,
        retries: list[Retried],
    ) -> AsyncIterator[Retried | Opened]:
        """_tries, async: a note for each failed attempt made again, before its wait; then the opened response."""
        prepared = self._prepare(request, stream)
        while True:
            outcome = await self._aattempt(client, *prepared, deadline)
            if outcome.failure is None:
                yield Opened(outcome.response)
                return
            wait, why = next_wait(
                self.retry, len(retries), outcome, deadline, self.timeout
            )
            if wait is None:
                raise self._given_up(outcome, prepared, stream, retries, why)
            note = Retried.of(outcome.failure, len(retries) + 1, wait)
            retries.append(note)
            yield note
            await asyncio.sleep(wait)

    async def acomplete(self, request: Request) -> Response:
        deadline = self._deadline()
        retries: list[Retried] = []
        async with self._aclient() as client:
            response: Any = None
            async for item in self._atries(client, request, False, deadline, retries):
                if isinstance(item, Opened):
                    response = item.response
            content = bytearray()
            try:
                async for chunk in self._abody(
                    response, deadline, self.max_response_bytes
                ):
                    content += chunk
            except Exception as error:  # noqa: BLE001 - a body cut off is a ProviderError like any other
                failure = final_failure(self._failure(error), retries)
                self._record(response, content, False, False, failure)
                raise failure from None
            finally:
                await response.aclose()
        return self._answer(response, content, retries)

    async def astream(self, request: Request) -> AsyncIterator[Event]:
        deadline = self._deadline()
        retries: list[Retried] = []
        async with self._aclient() as client:
            response: Any = None
            try:
                async for item in self._atries(
                    client, request, True, deadline, retries
                ):
                    if isinstance(item, Opened):
                        response = item.response
                    else:
                        yield retry_event(item)
            except ProviderError as error:
                for event in error_events(error):
                    yield event
                return
            tape = Tape()
            try:
                chunks = self._abody(response, deadline, self.max_response_bytes)
                if self.recorder is not None:
                    chunks = tape.akept(chunks)
                kind = response.headers.get("content-type")
                events = acapped_events(
                    astream_events(chunks, self.wire, content_type=kind), self.wire
                )
                if self._redactor:
                    events = amasked(events, self._redactor)
                async for event in events:
                    yield event
            finally:
                await response.aclose()
                self._record(response, tape.body, True, tape.ended, tape.error, retries)
