# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Wake-ups for the readers of a run's events: a reader waits on its run, the writer signals after its commit.

A reader (an SSE handler on the event loop, or a plain thread) opens a `Watch` on a run *before* it reads the
run's events, reads, and waits on the watch only when it found nothing new. A signal that lands between its read
and its wait is kept by the watch, so the wait returns at once and no event is left waiting for the next
look. `Wakeups.notify(run_id)` signals every watch of that run in this process, from any thread; an async
watch is woken through its loop's `call_soon_threadsafe`, so a DBOS worker thread wakes a handler on the
loop without either polling. One waiting for a run's end rather than for its events watches `ended_key(run_id)`,
which only the run's last write wakes.

Other processes: on PostgreSQL the writer also issues `NOTIFY toolgen_run_events, '<run_id>:<seq>'` in the
transaction that stores the events (Postgres delivers it on commit), and each process that has readers keeps
one listener thread with its own connection that LISTENs and signals the watches here. The thread connects
when the first watch opens, reconnects with a growing pause when its connection drops, and stops on
`close()`; whenever it (re)connects it wakes every watch, since notifications sent while it was away are lost.
SQLite has no such channel: a reader is still woken by a writer in its own process, and looks for another
process's writes every `FALLBACK_POLL_SECONDS` (0.5 s). That is also the pace while a Postgres listener is
not connected; while it is, readers look unwoken only every `LISTENING_POLL_SECONDS`, a safety net for
writers that do not notify (a package from before notifications, on the same database).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import selectors
import socket
import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..clients.deadline import TIMEOUTS

if TYPE_CHECKING:  # typing.Self is 3.11+, the runtime runs on 3.10
    from typing import Self

# The channel writers NOTIFY and listeners LISTEN on; its payload is '<run_id>:<seq>' (the last seq stored).
CHANNEL = "toolgen_run_events"
# How often a reader looks for events nobody woke it for: another process's writes on SQLite, or any while a
# Postgres listener is reconnecting.
FALLBACK_POLL_SECONDS = 0.5
# The same while a Postgres listener is connected: every writer sharing the database notifies, so this only
# catches one that does not.
LISTENING_POLL_SECONDS = 5.0
# The pause before the listener connects again after a failure, doubled after each failure up to the last.
_RETRY_SECONDS = (0.2, 5.0)
# TCP keep-alives on the listener's connection: a connection whose peer vanished without a word (a network
# partition) is noticed in about a minute, then replaced, instead of waiting on it for the kernel's hours.
_KEEPALIVES: dict[str, Any] = {
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
    "connect_timeout": 10,
}
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def notify_payload(run_id: str, seq: int) -> str:
    """The NOTIFY payload for `run_id`'s events up to `seq`."""
    return f"{run_id}:{seq}"


def ended_key(run_id: str) -> str:
    """What a reader waiting for `run_id`'s end watches (instead of the run, which every event wakes): the final
    write notifies it, in the process and, as a NOTIFY of its own, across processes."""
    return f"ended:{run_id}"


def run_of_payload(payload: str) -> str:
    """The run id a NOTIFY payload names (a payload without a seq names a run all the same)."""
    run_id, colon, _ = payload.rpartition(":")
    return run_id if colon else payload


class Watch:
    """One reader's wait on one run: a context manager, registered while open, removed when left however
    it is left (its end, an error, a cancelled task). Opened inside a running event loop it is awaited with
    `wait`; opened in a thread without one, it blocks with `wait_blocking`."""

    __slots__ = ("_event", "_flag", "_loop", "_wakeups", "run_id")

    def __init__(self, wakeups: Wakeups, run_id: str) -> None:
        self._wakeups = wakeups
        self.run_id = run_id
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self._event = asyncio.Event() if self._loop is not None else None
        self._flag = threading.Event()

    def __enter__(self) -> Self:
        self._wakeups._add(self)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._wakeups._remove(self)

    def signal(self) -> None:
        """Wake this watch's reader, from any thread; kept until its next wait when it is not waiting."""
        if self._loop is None or self._event is None:
            self._flag.set()
            return
        # A RuntimeError says its loop has closed: nobody is left to wake.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._event.set)

    async def wait(self, timeout: float | None) -> bool:
        """Wait for a signal (or take the one kept since the last wait): True when signalled, False when
        `timeout` seconds passed without one."""
        if self._event is None:
            raise RuntimeError(
                "this watch was opened outside an event loop: use wait_blocking"
            )
        if not self._event.is_set():
            try:
                await asyncio.wait_for(self._event.wait(), timeout)
            except TIMEOUTS:
                return False
        self._event.clear()
        return True

    def wait_blocking(self, timeout: float | None) -> bool:
        """`wait` for a watch opened in a thread: blocks that thread, never an event loop."""
        if self._loop is not None:
            raise RuntimeError("this watch was opened in an event loop: await wait")
        if not self._flag.wait(timeout):
            return False
        self._flag.clear()
        return True


class Wakeups:
    """The watches of one process, per run; with `listen_to` (a libpq connection string or postgresql:// URL)
    also the listener thread that brings other processes' NOTIFYs on `CHANNEL` to them."""

    def __init__(self, listen_to: str | None = None, *, channel: str = CHANNEL) -> None:
        if not _IDENTIFIER.fullmatch(channel):
            raise ValueError(
                f"channel {channel!r} is not a plain lower-case identifier"
            )
        self.channel = channel
        self._listen_to = listen_to
        self._lock = threading.Lock()
        # Only runs being watched have an entry, dropped with their last watch: nothing grows with the runs
        # written or notified.
        self._watches: dict[str, set[Watch]] = {}
        self._closed = False
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._stop_reader: socket.socket | None = None
        self._stop_writer: socket.socket | None = None
        self._listening = False
        # How many times the listener's LISTEN took effect (1 + its reconnections), and why it last lost or
        # failed to get its connection.
        self.listens = 0
        self.last_error: str | None = None

    # -- readers --

    def watch(self, run_id: str) -> Watch:
        """A watch on `run_id`, to open (`with`) before reading the run's events."""
        return Watch(self, run_id)

    @property
    def poll_seconds(self) -> float:
        """The longest a reader should wait before it looks for new events unwoken."""
        return LISTENING_POLL_SECONDS if self._listening else FALLBACK_POLL_SECONDS

    @property
    def listening(self) -> bool:
        """Whether other processes' notifications reach this one now (a Postgres listener is connected)."""
        return self._listening

    def waiting(self, run_id: str | None = None) -> int:
        """How many watches are open, on `run_id` or on any run."""
        with self._lock:
            if run_id is not None:
                return len(self._watches.get(run_id, ()))
            return sum(len(found) for found in self._watches.values())

    def watched(self) -> frozenset[str]:
        """The runs that have a watch open."""
        with self._lock:
            return frozenset(self._watches)

    # -- writers --

    def notify(self, run_id: str) -> None:
        """Wake every watch of `run_id` in this process; any thread may call it, after its commit."""
        with self._lock:
            found = tuple(self._watches.get(run_id, ()))
        for watch in found:
            watch.signal()

    def notify_all(self) -> None:
        """Wake every watch: whatever they missed, they look again."""
        with self._lock:
            found = [watch for group in self._watches.values() for watch in group]
        for watch in found:
            watch.signal()

    def close(self) -> None:
        """Stop the listener thread (it closes its connection) and wake every reader; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        self._stopping.set()
        if self._stop_writer is not None:
            # An OSError: the thread is gone already.
            with contextlib.suppress(OSError):
                self._stop_writer.send(b"x")
        if thread is not None:
            # A connection attempt in progress ends within its connect_timeout; select() ends at once.
            thread.join(timeout=_KEEPALIVES["connect_timeout"] + 5)
            if not thread.is_alive():
                for end in (self._stop_reader, self._stop_writer):
                    if end is not None:
                        end.close()
        self.notify_all()

    # -- the watches' registry --

    def _add(self, watch: Watch) -> None:
        with self._lock:
            self._watches.setdefault(watch.run_id, set()).add(watch)
            if self._listen_to is None or self._thread is not None or self._closed:
                return
            self._stop_reader, self._stop_writer = socket.socketpair()
            self._stop_reader.setblocking(False)
            # Started under the lock, so that close() never finds a thread it cannot join yet.
            self._thread = threading.Thread(
                target=self._listen, name="toolgen-wakeups", daemon=True
            )
            self._thread.start()

    def _remove(self, watch: Watch) -> None:
        with self._lock:
            group = self._watches.get(watch.run_id)
            if group is None:
                return
            group.discard(watch)
            if not group:
                del self._watches[watch.run_id]

    # -- the listener thread --

    def _listen(self) -> None:
        pause = _RETRY_SECONDS[0]
        while not self._stopping.is_set():
            before = self.listens
            try:
                self._listen_once()
            except Exception as error:  # noqa: BLE001 - a refused or dropped connection: connect again
                self.last_error = f"{type(error).__name__}: {error}"
            finally:
                if self._listening:
                    self._listening = False
                    # Readers go back to looking every FALLBACK_POLL_SECONDS until it is back.
                    self.notify_all()
            if self.listens > before:
                # It was connected: the next attempt comes soon.
                pause = _RETRY_SECONDS[0]
            if self._stopping.wait(pause):
                return
            pause = min(pause * 2, _RETRY_SECONDS[1])

    def _listen_once(self) -> None:
        """One connection: LISTEN, then hand each notification to its run's watches until it drops (an
        error) or the notifier closes (a return)."""
        # Imported here: psycopg 3 comes with DBOS (the `durable` extra), and only Postgres needs it.
        import psycopg  # type: ignore[import-not-found,unused-ignore]

        assert self._listen_to is not None and self._stop_reader is not None
        connection = psycopg.connect(self._listen_to, autocommit=True, **_KEEPALIVES)
        try:
            connection.execute(f"LISTEN {self.channel}")
            self.listens += 1
            # Notifications sent before the LISTEN (or while the last connection was down) never come. The
            # wake comes before `listening` turns true, so that one who waits for that has had the wake.
            self.notify_all()
            self._listening = True
            pgconn = connection.pgconn
            with selectors.DefaultSelector() as selector:
                selector.register(pgconn.socket, selectors.EVENT_READ, "server")
                selector.register(self._stop_reader, selectors.EVENT_READ, "stop")
                while True:
                    ready = {key.data for key, _ in selector.select()}
                    if "stop" in ready:  # only close() writes to it
                        return
                    # Raises when the server has gone (it closed the socket, or keep-alives found it dead).
                    pgconn.consume_input()
                    while (note := pgconn.notifies()) is not None:
                        payload = note.extra.decode("utf-8", "replace")
                        self.notify(run_of_payload(payload))
                    if pgconn.status != psycopg.pq.ConnStatus.OK:
                        raise psycopg.OperationalError(
                            "the listener's connection was lost"
                        )
        finally:
            connection.close()
