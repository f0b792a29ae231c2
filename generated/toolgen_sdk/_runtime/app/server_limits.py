# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The limits `serve` runs under: read timeouts, a connection cap, open files, and refusals that stay quiet."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from dataclasses import dataclass, replace
from typing import Any, Protocol

# A request's head (request line and headers) must have arrived this long after the connection opened, or
# after the previous response on it ended; a slow or silent client is then answered 408 and closed.
HEADER_SECONDS = 10.0
# Its body, this long after its head.
BODY_SECONDS = 30.0
# An idle connection between two requests is closed after this.
KEEP_ALIVE_SECONDS = 5
# On SIGTERM, requests still being answered after this are cancelled (event streams are closed at once).
GRACEFUL_SHUTDOWN_SECONDS = 5
MAX_CONNECTIONS = 1000
# Connections the kernel queues for the server, and so the most the loop accepts in one go.
BACKLOG = 1024
# h11's bound on a request's head, its default stated.
MAX_HEAD_BYTES = 16 * 1024
# Descriptors kept for the process's own use: the database, the log, DBOS's threads, a tool's pipes.
RESERVED_FILES = 256
# One line at most per this long for each kind of refusal: a flood must not flood the log.
WARN_EVERY_SECONDS = 60.0
# How asyncio words an accept() that failed for want of descriptors, and uvicorn a malformed request.
_REPEATED = ("socket.accept() out of system resource", "Invalid HTTP request received")

_log = logging.getLogger("uvicorn.error")


@dataclass(frozen=True)
class ServerLimits:
    """What clients may hold of the service: connections at once, and time for each read of a request."""

    max_connections: int = MAX_CONNECTIONS
    backlog: int = BACKLOG
    header_seconds: float = HEADER_SECONDS
    body_seconds: float = BODY_SECONDS
    keep_alive_seconds: int = KEEP_ALIVE_SECONDS


def connection_cap(text: str) -> int:
    """--max-connections' value: a whole number from 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} connections: it must be at least 1")
    return value


def raise_open_files_limit() -> int | None:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit: the soft limit then (None: no limit)."""
    try:
        import resource
    except ImportError:  # Windows: no such limit
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    # Linux takes no infinite limit on descriptors: aim at the most a process may open there by default.
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass  # a limit this process may not raise: the cap is fitted to the one it has
    return soft


def fitted(limits: ServerLimits, open_files: int | None) -> ServerLimits:
    """`limits` with the cap and backlog lowered as far as `open_files` needs: admitted connections, plus up
    to two backlogs of those accepted in one go and closed a moment later (refused, or evicted)."""
    if open_files is None:
        return limits
    spare = open_files - min(RESERVED_FILES, open_files // 4)
    backlog = max(1, min(limits.backlog, spare // 4))
    cap = max(1, min(limits.max_connections, spare - 2 * backlog))
    return replace(limits, max_connections=cap, backlog=backlog)


class _Throttle:
    """Lets one report through per `every` seconds and counts those held back in between."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.last: float | None = None
        self.held_back = 0

    def passes(self) -> int | None:
        """None to stay quiet; else how many were held back since the last one that passed."""
        now = time.monotonic()
        if self.last is not None and now - self.last < self.every:
            self.held_back += 1
            return None
        held, self.last, self.held_back = self.held_back, now, 0
        return held


def _more(held_back: int) -> str:
    return f" ({held_back:,} more like it since)" if held_back else ""


class QuietRepeats(logging.Filter):
    """At most one line a minute for each kind of record a client can cause at will, without its traceback
    and with a count of those left out: asyncio logs a traceback for each accept() that fails for want of
    descriptors (as many as `backlog` times a second), uvicorn a warning for each malformed request."""

    def __init__(self, every: float = WARN_EVERY_SECONDS) -> None:
        super().__init__()
        self.throttles = {start: _Throttle(every) for start in _REPEATED}

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        throttle = next(
            (t for start, t in self.throttles.items() if text.startswith(start)), None
        )
        if throttle is None:
            return True
        held = throttle.passes()
        if held is None:
            return False
        error = record.exc_info[1] if record.exc_info else None
        line = text.splitlines()[0] + (f": {error}" if error is not None else "")
        record.msg, record.args = "%s" + _more(held), (line,)
        record.exc_info = record.exc_text = None
        return True


def quiet_repeats() -> None:
    """Put a QuietRepeats on asyncio's and uvicorn's loggers, once however often it is called."""
    for name in ("asyncio", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(each, QuietRepeats) for each in logger.filters):
            logger.addFilter(QuietRepeats())


def _answer(status: int, reason: str, message: str) -> bytes:
    """A whole response, in the service's error shape, for a connection about to be closed."""
    body = json.dumps({"error": {"field": "", "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class _Held(Protocol):
    def drop(self, answer: bytes) -> None: ...


class _Admission:
    """The connections one server holds, those among them awaiting a request's head (longest first), and
    those just admitted whose first bytes the server has not yet had its chance to read."""

    def __init__(self, limits: ServerLimits) -> None:
        self.limits = limits
        self.held: set[_Held] = set()
        self.waiting: dict[_Held, None] = {}
        self.unread: set[_Held] = set()
        self.busy = _answer(
            503,
            "Service Unavailable",
            "every connection the server may hold is in use; try again shortly",
        )
        self.refusals = _Throttle(WARN_EVERY_SECONDS)
        self.evictions = _Throttle(WARN_EVERY_SECONDS)

    def admit(self, connection: _Held) -> bool:
        """Hold `connection` if there is room, or room made by closing the one that has awaited a request the
        longest (a slow or idle client, not one being answered). False when none may be closed: every one is
        being answered, or the longest waiting was admitted so lately that its request may be unread yet."""
        cap = self.limits.max_connections
        if len(self.held) >= cap:
            longest = next(iter(self.waiting), None)
            # The loop admits up to a backlog of sockets in one go and reads their first bytes only after:
            # closing one not yet read would let a flood of new sockets reset a client that had sent its
            # request; the newcomer is told 503 instead.
            if longest is None or longest in self.unread:
                self._warn(
                    self.refusals,
                    "all %d connections are in use or just opened: refusing new ones (503)",
                )
                return False
            self._warn(
                self.evictions,
                "at the cap of %d connections: closing those awaiting a request longest",
            )
            longest.drop(b"")
        self.held.add(connection)
        self.unread.add(connection)
        return True

    def read_once(self, connection: _Held) -> None:
        """The loop has had its chance to read what `connection` sent first: it may be closed to make room."""
        self.unread.discard(connection)

    def release(self, connection: _Held) -> None:
        self.held.discard(connection)
        self.waiting.pop(connection, None)
        self.unread.discard(connection)

    def _warn(self, throttle: _Throttle, message: str) -> None:
        held = throttle.passes()
        if held is not None:
            _log.warning(message + _more(held), self.limits.max_connections)


def _protocol_class(admission: _Admission) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, with the cap applied at accept and each read of a request bounded in time."""
    import h11  # type: ignore[import-not-found,unused-ignore]
    from uvicorn.protocols.http.h11_impl import H11Protocol  # type: ignore[import-not-found,unused-ignore]

    limits = admission.limits
    timed_out = _answer(408, "Request Timeout", "the request was not sent in time")
    bad_request = _answer(400, "Bad Request", "the request is not valid HTTP/1.1")

    class LimitedH11Protocol(H11Protocol):  # type: ignore[misc,unused-ignore]
        """A connection over the cap is answered 503 and closed before it holds anything. While a request's
        head is awaited (on a new connection, or after a response) it has HEADER_SECONDS to come whole, then
        its body BODY_SECONDS: a response being sent, an event stream, is no read and has no bound."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.refused = False
            self.phase: str | None = None  # "head" or "body" while a read is bounded
            self.read_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override,unused-ignore]
            if not admission.admit(self):
                self.refused = True
                transport.write(admission.busy)
                transport.close()
                return
            super().connection_made(transport)
            self.track()
            # The transport starts reading in the loop's next pass and its first read comes in the pass
            # after: two hops from here, whatever the client had sent has been read.
            self.loop.call_soon(self.loop.call_soon, admission.read_once, self)

        def connection_lost(self, exc: Exception | None) -> None:
            admission.release(self)
            self.bound(None)
            # uvicorn's own clean-up needs the set-up that a refusal skipped.
            if not self.refused:
                super().connection_lost(exc)

        def _should_upgrade(self) -> bool:
            return False  # the service speaks no WebSocket: an Upgrade header is ignored, not logged

        def send_400_response(self, msg: str) -> None:
            # A request HTTP/1.1 itself refuses (two Host headers, a negative Content-Length) gets the service's
            # error shape, as every other refusal: uvicorn's own answer is plain text.
            if not self.transport.is_closing():
                self.transport.write(bad_request)
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            self.track()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.track()

        def shutdown(self) -> None:
            cycle = self.cycle
            if (
                cycle is not None
                and cycle.response_started
                and not cycle.response_complete
            ):
                # A response still streaming at a stop is a run's event stream, which ends only with its run:
                # closed now, not cancelled at the graceful timeout; its reader resumes from its last event id.
                self.transport.close()
                return
            super().shutdown()

        def track(self) -> None:
            """Bound the read the connection is in, by what h11 has seen of the client's request."""
            phase = None
            if not self.transport.is_closing():
                phase = {h11.IDLE: "head", h11.SEND_BODY: "body"}.get(
                    self.conn.their_state
                )
            if phase != self.phase:
                self.bound(phase)

        def bound(self, phase: str | None) -> None:
            if self.read_timer is not None:
                self.read_timer.cancel()
                self.read_timer = None
            self.phase = phase
            admission.waiting.pop(self, None)
            if phase is None:
                return
            if phase == "head":
                admission.waiting[self] = None
            seconds = limits.header_seconds if phase == "head" else limits.body_seconds
            self.read_timer = self.loop.call_later(seconds, self.out_of_time)

        def out_of_time(self) -> None:
            self.read_timer = None
            cycle = self.cycle if self.phase == "body" else None
            answer = cycle is None or not cycle.response_started
            if cycle is not None:
                # The app's read ends as at a disconnect, and what it answers after goes nowhere.
                cycle.disconnected = True
                cycle.message_event.set()
            self.drop(timed_out if answer else b"")

        def drop(self, answer: bytes) -> None:
            admission.release(self)
            self.bound(None)
            if not self.transport.is_closing():
                if answer:
                    self.transport.write(answer)
                self.transport.close()

    return LimitedH11Protocol


def service_config(
    app: Any,
    host: str,
    port: int,
    *,
    max_connections: int = MAX_CONNECTIONS,
    log_level: str = "warning",
) -> Any:
    """The uvicorn Config serving `app` under ServerLimits. Raises this process's open-files limit to its
    hard limit, fits the cap under it (saying so when it lowers it), and quiets what a client can make the log repeat."""
    import uvicorn  # type: ignore[import-not-found,unused-ignore]

    asked = ServerLimits(max_connections=max_connections)
    limits = fitted(asked, raise_open_files_limit())
    # uvicorn's limit_concurrency is left off: it answers 503 only once a request has been read (so silent
    # sockets would still hold every descriptor) and logs a line for each; the cap is applied at accept.
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        http=_protocol_class(_Admission(limits)),
        backlog=limits.backlog,
        timeout_keep_alive=limits.keep_alive_seconds,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        ws="none",
    )
    quiet_repeats()
    if limits.max_connections < asked.max_connections:
        _log.warning(
            "serving at most %d connections, not %d: the process may open too few files for more",
            limits.max_connections,
            asked.max_connections,
        )
    return config
