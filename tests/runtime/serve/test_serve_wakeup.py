"""Readers of a run's events are woken when its events are stored: in the process, and on Postgres across stores."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.serve_helpers import LIST_FILES, Server, awaiting, postgres_cluster

from toolgen.runtime.serve.store import RunStore, StoredEvent
from toolgen.runtime.serve.wakeup import CHANNEL, FALLBACK_POLL_SECONDS, LISTENING_POLL_SECONDS, Wakeups

# Long enough never to be what ends a wait that a write should end: a wait that times out fails its test.
WOKEN_WITHIN = 60.0


def _events(*seqs: int) -> list[StoredEvent]:
    return [StoredEvent(seq, "text_delta", {"text": f"part {seq}"}, time.time()) for seq in seqs]


def _until(done: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.02)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


@pytest.fixture
def store(sqlite_url: str) -> Iterator[RunStore]:
    opened = RunStore(sqlite_url)
    try:
        yield opened
    finally:
        opened.close()


# -- in one process --


def test_an_async_reader_blocked_on_a_run_is_woken_by_a_write_from_another_thread(store: RunStore) -> None:
    waiting = threading.Event()

    def writer() -> None:
        waiting.wait(WOKEN_WITHIN)
        store.add_events("run", _events(1, 2))

    async def reader() -> tuple[bool, list[int]]:
        with store.wakeups.watch("run") as watch:
            assert await asyncio.to_thread(store.events_after, "run", 0) == []
            waiting.set()
            woken = await watch.wait(WOKEN_WITHIN)
            return woken, [e.seq for e in await asyncio.to_thread(store.events_after, "run", 0)]

    thread = threading.Thread(target=writer)
    thread.start()
    assert asyncio.run(reader()) == (True, [1, 2])
    thread.join()
    assert store.wakeups.waiting() == 0


def test_a_reader_thread_is_woken_by_a_write_from_another_thread(store: RunStore) -> None:
    with store.wakeups.watch("run") as watch:
        thread = threading.Thread(target=store.add_events, args=("run", _events(1)))
        thread.start()
        assert watch.wait_blocking(WOKEN_WITHIN) is True
        thread.join()
        assert [e.seq for e in store.events_after("run", 0)] == [1]


def test_a_write_between_a_read_and_the_wait_is_kept_for_the_wait_and_taken_once(store: RunStore) -> None:
    async def reader() -> list[bool]:
        with store.wakeups.watch("run") as watch:
            # The write lands after the reader's read and before its wait: the wait must not miss it.
            await asyncio.to_thread(store.add_events, "run", _events(1))
            return [await watch.wait(WOKEN_WITHIN), await watch.wait(0.05)]

    assert asyncio.run(reader()) == [True, False]
    with store.wakeups.watch("run") as watch:
        store.add_events("run", _events(2))
        assert [watch.wait_blocking(WOKEN_WITHIN), watch.wait_blocking(0.05)] == [True, False]


def test_a_wait_times_out_when_only_other_runs_are_written(store: RunStore) -> None:
    async def reader() -> bool:
        with store.wakeups.watch("quiet") as watch:
            await asyncio.to_thread(store.add_events, "busy", _events(1, 2, 3))
            return await watch.wait(0.1)

    assert asyncio.run(reader()) is False
    with store.wakeups.watch("quiet") as watch:
        store.add_events("busy", _events(4))
        assert watch.wait_blocking(0.1) is False
    # An empty write stores nothing and wakes nobody.
    with store.wakeups.watch("busy") as watch:
        store.add_events("busy", [])
        assert watch.wait_blocking(0.05) is False


def test_watches_are_removed_however_their_readers_leave() -> None:
    wakeups = Wakeups()
    with wakeups.watch("a"), wakeups.watch("a"), wakeups.watch("b"):
        assert (wakeups.waiting("a"), wakeups.waiting("b"), wakeups.waiting()) == (2, 1, 3)
        assert wakeups.watched() == {"a", "b"}
    assert (wakeups.waiting(), wakeups.watched()) == (0, frozenset())

    with pytest.raises(ZeroDivisionError), wakeups.watch("a"):
        _ = 1 / 0
    assert wakeups.waiting() == 0

    async def cancelled() -> None:
        async def read() -> None:
            with wakeups.watch("c") as watch:
                await watch.wait(None)

        task = asyncio.create_task(read())
        while wakeups.waiting("c") == 0:
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    assert (wakeups.waiting(), wakeups.watched()) == (0, frozenset())

    # Notifying runs nobody watches keeps nothing.
    for number in range(1000):
        wakeups.notify(f"run-{number}")
    assert wakeups.watched() == frozenset()
    wakeups.close()


def test_a_watch_whose_loop_has_ended_is_notified_without_an_error() -> None:
    wakeups = Wakeups()

    async def abandon() -> None:
        wakeups.watch("run").__enter__()  # never left: its reader's loop ends under it

    asyncio.run(abandon())
    wakeups.notify("run")
    wakeups.notify_all()
    wakeups.close()
    wakeups.close()


def test_a_watch_is_waited_on_the_way_it_was_opened() -> None:
    wakeups = Wakeups()
    with wakeups.watch("run") as watch, pytest.raises(RuntimeError, match="wait_blocking"):
        asyncio.run(watch.wait(0))

    async def blocking() -> None:
        with wakeups.watch("run") as watch:
            watch.wait_blocking(0)

    with pytest.raises(RuntimeError, match="await wait"):
        asyncio.run(blocking())
    with pytest.raises(ValueError, match="identifier"):
        Wakeups(channel="events; DROP TABLE x")


def test_on_sqlite_another_store_is_not_woken_and_its_readers_look_at_the_fallback_pace(
    store: RunStore, sqlite_url: str
) -> None:
    other = RunStore(sqlite_url)
    try:
        assert (other.wakeups.listening, other.wakeups.poll_seconds) == (False, FALLBACK_POLL_SECONDS)
        with other.wakeups.watch("run") as watch:
            store.add_events("run", _events(1))
            # No channel between two SQLite stores (two processes, in a deployment): only a look finds it.
            assert watch.wait_blocking(0.2) is False
            assert [e.seq for e in other.events_after("run", 0)] == [1]
    finally:
        other.close()


# -- on PostgreSQL --


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free port."""
    with postgres_cluster() as url:
        yield url


@pytest.fixture
def two_stores(postgres_url: str) -> Iterator[tuple[RunStore, RunStore]]:
    """Two stores on one database, as two server processes have: nothing in-process joins them."""
    writer, reader = RunStore(postgres_url), RunStore(postgres_url)
    try:
        yield writer, reader
    finally:
        writer.close()
        reader.close()


def _sql(url: str, statement: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(statement)
        return list(cursor.fetchall()) if cursor.description else []


def _listeners(url: str) -> int:
    [(count,)] = _sql(url, f"SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN {CHANNEL}'")
    return int(count)


def _listening(store: RunStore, listens: int = 1) -> None:
    _until(lambda: store.wakeups.listening and store.wakeups.listens == listens, "the listener's LISTEN")


@pytest.mark.postgres
def test_on_postgres_a_write_through_one_store_wakes_a_reader_of_another(
    two_stores: tuple[RunStore, RunStore], postgres_url: str
) -> None:
    writer, reader = two_stores
    run_id = "run-across"
    started = threading.Event()

    async def read() -> tuple[bool, list[int], float]:
        with reader.wakeups.watch(run_id) as watch:
            await asyncio.to_thread(_listening, reader)
            # The listener wakes every watch when it connects; that wake is taken here, before the write.
            await watch.wait(0)
            assert await asyncio.to_thread(reader.events_after, run_id, 0) == []
            started.set()
            woken = await watch.wait(WOKEN_WITHIN)
            found = await asyncio.to_thread(reader.events_after, run_id, 0)
            return woken, [e.seq for e in found], reader.wakeups.poll_seconds

    def write() -> None:
        started.wait(WOKEN_WITHIN)
        writer.add_events(run_id, _events(1, 2, 3))

    thread = threading.Thread(target=write)
    thread.start()
    assert asyncio.run(read()) == (True, [1, 2, 3], LISTENING_POLL_SECONDS)
    thread.join()
    # Only a store with readers holds a listening connection.
    assert (writer.wakeups.listens, reader.wakeups.listens) == (0, 1)
    assert _listeners(postgres_url) == 1


@pytest.mark.postgres
def test_the_listener_reconnects_when_its_connection_drops_and_stops_on_close(
    two_stores: tuple[RunStore, RunStore], postgres_url: str
) -> None:
    writer, reader = two_stores
    with reader.wakeups.watch("run") as watch:
        _listening(reader)
        [(terminated,)] = _sql(
            postgres_url,
            f"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = 'LISTEN {CHANNEL}'",
        )
        assert terminated == 1
        _listening(reader, listens=2)
        assert reader.wakeups.last_error is not None
        while watch.wait_blocking(0):
            pass  # the wakes of the drop and of the reconnection
        writer.add_events("run", _events(1))
        assert watch.wait_blocking(WOKEN_WITHIN) is True
    reader.wakeups.close()
    assert not reader.wakeups.listening
    # close() has joined the thread, which closed its connection on its way out; the server notices soon.
    _until(lambda: _listeners(postgres_url) == 0, "the listener's connection closing")


@pytest.mark.postgres
def test_notifications_the_store_did_not_send_break_nothing(
    two_stores: tuple[RunStore, RunStore], postgres_url: str
) -> None:
    writer, reader = two_stores
    with reader.wakeups.watch("run") as watch, reader.wakeups.watch("other") as other:
        _listening(reader)
        while watch.wait_blocking(0) or other.wait_blocking(0):
            pass
        for payload in ("", "garbage", ":", "x" * 7000, "\u00e9t\u00e9:1", "other:not-a-number"):
            _sql(postgres_url, f"NOTIFY {CHANNEL}, '{payload}'")
        assert other.wait_blocking(WOKEN_WITHIN) is True  # a payload names its run, whatever follows it
        assert watch.wait_blocking(0.2) is False
        writer.add_events("run", _events(1))
        assert watch.wait_blocking(WOKEN_WITHIN) is True
        assert reader.wakeups.listens == 1


# -- through the service --


class SourceServer(Server):
    """The serve verb of the package built from this checkout's runtime (the committed generated/ may lag it)."""

    def __init__(self, build: Path, cwd: Path, *args: str) -> None:
        super().__init__(cwd, *args, env={"PYTHONPATH": f"{build}{os.pathsep}{cwd}"})

    def start(self) -> SourceServer:
        command = [sys.executable, "-m", "source_sdk", "serve", "--port", str(self.port), *self.args]
        log = (self.cwd / f"server-{self.port}.log").open("ab")
        self.process = subprocess.Popen(command, cwd=self.cwd, env=self.env, stdout=log, stderr=log)
        _until(lambda: self._answers(), f"the server answering: {self.log()}")
        return self

    def _answers(self) -> bool:
        assert self.process is not None and self.process.poll() is None, self.log()
        with contextlib.suppress(Exception):
            return bool(self.client.get("/").status_code == 200)
        return False


def _live_events(reader: Server, writer: Server, run_id: str) -> list[tuple[int, str]]:
    """Read the run's stream from `reader` while it runs: approve its call through `writer` once the stream
    has said it waits, and read on to its end."""
    seen: list[tuple[int, str]] = []
    with reader.client.stream("GET", f"/runs/{run_id}/events") as answer:
        assert answer.status_code == 200
        fields: dict[str, str] = {}
        for line in answer.iter_lines():
            if line:
                key, _, value = line.partition(": ")
                fields[key] = value
                continue
            if "data" not in fields:
                fields = {}
                continue
            seen.append((int(fields["id"]), fields["event"]))
            if fields["event"] == "approval_requested":
                call_id = json.loads(fields["data"])["data"]["id"]
                decided = writer.client.post(f"/runs/{run_id}/approvals/{call_id}", json={"decision": "approve"})
                assert decided.status_code == 200, decided.text
            fields = {}
    return seen


def _check(seen: list[tuple[int, str]]) -> None:
    kinds = [kind for _, kind in seen]
    assert [seq for seq, _ in seen] == list(range(1, len(seen) + 1)), seen
    assert kinds.index("approval_requested") < kinds.index("approval_decided") < kinds.index("tool_call_finished")
    assert kinds[-1] == "run_finished"


def test_a_live_reader_of_the_service_gets_the_run_to_its_end(tmp_path: Path, source_build: Path) -> None:
    server = SourceServer(source_build, tmp_path, "--database", f"sqlite:///{tmp_path / 'runs.sqlite'}").start()
    try:
        run_id = server.start_run(LIST_FILES)
        _check(_live_events(server, server, run_id))
    finally:
        server.stop(graceful=False)  # what is checked is the stream, not how the server stops


@pytest.mark.postgres
def test_a_reader_of_one_server_follows_a_run_another_server_executes(
    tmp_path: Path, source_build: Path, postgres_url: str
) -> None:
    common = ("--database", postgres_url)
    first = SourceServer(source_build, tmp_path, *common, "--executor-id", "first")
    second = SourceServer(source_build, tmp_path, *common, "--executor-id", "second")
    try:
        first.start()
        second.start()
        run_id = first.start_run(LIST_FILES)
        second.wait_for(run_id, awaiting)
        # The run executes on the first server; the second only reads the database, woken by its NOTIFYs.
        _check(_live_events(second, first, run_id))
    finally:
        first.stop()
        second.stop()
