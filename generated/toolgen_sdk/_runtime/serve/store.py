# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What the service keeps beside DBOS's own tables: each run's state, its events in order, approvals, tool attempts.

The tables live in the database DBOS checkpoints to (SQLite or Postgres), so every server sharing that database
sees the same runs. Every write is keyed, so a workflow that replays after a restart writes the same rows again
without duplicating any: events by (run, seq), approvals by (run, call).

A run's writes while it runs go in one transaction a step (`write`: its new events, its row, a tool call's
start), on the database driver's own connection from SQLAlchemy's pool: SQLAlchemy's statement layer cost more
than the writes themselves. Each event is stored with its text/event-stream form (`sse`), made once as it is
written, so that a reader, live or after a restart, is sent the same bytes without decoding and encoding it
again; a row from before that column is encoded when it is read.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..loop.events import EVENTS_VERSION, sse_encode
from .store_rows import (
    Ask,
    EventRow,
    StoredEvent,
    StoredRun,
    dumps,
    listed_run,
    state_dumps,
    stored_event,
    strict_sse,
)
from .store_schema import (
    CLOSED,
    EVENT_COLUMNS,
    SQL,
    TABLES,
    closed,
    driver_url,
    sqlite_settings,
    sqlite_version,
)
from .wakeup import Wakeups, ended_key, notify_payload

__all__ = ["CLOSED", "Ask", "EventRow", "RunStore", "StoredEvent", "StoredRun", "dumps"]


class RunStore:
    """The service's tables in one SQLAlchemy database (a `sqlite:///` or `postgresql://` URL)."""

    def __init__(self, url: str) -> None:
        # Imported here: sqlalchemy comes with the `serve` extra (DBOS needs it too), not with the package.
        import sqlalchemy  # type: ignore[import-not-found,unused-ignore]

        self._sa = sqlalchemy
        sqlite = url.startswith("sqlite")
        self._sqlite = sqlite
        self._engine = sqlalchemy.create_engine(
            driver_url(url),
            # SQLite takes one writer at a time: wait for the lock rather than fail the write.
            connect_args={"timeout": 30} if sqlite else {},
            pool_pre_ping=not sqlite,
        )
        if sqlite:
            sqlalchemy.event.listen(self._engine, "connect", sqlite_settings)
        self._sql = (
            SQL
            if sqlite
            else {name: sql.replace("?", "%s") for name, sql in SQL.items()}
        )
        # One statement counts a tool call's start and says how many came before, where the database has
        # RETURNING (Postgres; SQLite from 3.35).
        self._returning = not sqlite or sqlite_version() >= (3, 35)
        self._create_tables()
        # Readers of a run's events wait on these; writes wake them. On Postgres, readers in other processes
        # too: a write NOTIFYs, and a listener (libpq's URL, without SQLAlchemy's driver) hears.
        self._notifies = not sqlite
        # Writes no one waits for (a run's batched events), in the order given, on one thread of the store's.
        self._later: queue.SimpleQueue[Callable[[], object] | None] = (
            queue.SimpleQueue()
        )
        self._writer: threading.Thread | None = None
        self._writer_lock = threading.Lock()
        self._closed = False
        self.wakeups = Wakeups(
            None
            if sqlite
            else self._engine.url.set(drivername="postgresql").render_as_string(
                hide_password=False
            )
        )

    def _create_tables(self) -> None:
        for attempt in range(3):
            try:
                with self._engine.begin() as connection:
                    for statement in TABLES:
                        connection.execute(self._sa.text(statement))
                break
            except self._sa.exc.IntegrityError:
                # Two servers creating the tables at once on Postgres: one wins, the other sees them next time.
                if attempt == 2:
                    raise
        # Columns later releases added, on a database of the release before (its rows read them as NULL, or as
        # the kind's default).
        self._add_column("toolgen_run_events", "version")
        self._add_column("toolgen_run_events", "sse", "TEXT")
        self._add_column("toolgen_approvals", "round")
        # The run's deadline on each ask, so that a decision after it is refused where it is claimed. NULL: an ask
        # from before, whose run still denies it at its deadline (close_ask) unless a decision was claimed first.
        self._add_column("toolgen_approvals", "deadline", "DOUBLE PRECISION")
        # Runs started before holders were kept count under none ('').
        self._add_column("toolgen_runs", "holder", "TEXT NOT NULL DEFAULT ''")
        # The executor id of the server that took the run: its workflow starts there (at the next launch, if
        # that server stopped before starting it). NULL: a run from before, whose workflow began as it was kept.
        self._add_column("toolgen_runs", "executor", "TEXT")
        # A holder's open runs are counted at each start; the list of runs reads the newest first, a page at a
        # time, which without its index sorts every run (state and all) for each page.
        for index in (
            "toolgen_runs_holder ON toolgen_runs (holder, status)",
            "toolgen_runs_created ON toolgen_runs (created, id)",
        ):
            try:
                with self._engine.begin() as connection:
                    connection.execute(
                        self._sa.text(f"CREATE INDEX IF NOT EXISTS {index}")
                    )
            except self._sa.exc.DatabaseError:
                # Two servers creating it at once on Postgres: the other's is the same index.
                pass

    def _add_column(self, table: str, column: str, kind: str = "INTEGER") -> None:
        columns = {c["name"] for c in self._sa.inspect(self._engine).get_columns(table)}
        if column in columns:
            return
        try:
            with self._engine.begin() as connection:
                # Both names are this module's own constants, never input.
                connection.execute(
                    self._sa.text(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
                )
        except self._sa.exc.DatabaseError:
            # Another server added it first; whatever else went wrong shows at the first write.
            pass

    def close(self) -> None:
        with self._writer_lock:
            writer, self._writer, self._closed = self._writer, None, True
        if writer is not None:
            self._later.put(None)
            writer.join(timeout=30)
        self.wakeups.close()
        self._engine.dispose()

    def later(self, write: Callable[[], object]) -> None:
        """Run `write` on the store's writer thread, after the writes given before it: for what no one waits for.
        An error it raises is its own to keep (a run's sink keeps the events of a write that failed)."""
        with self._writer_lock:
            if self._closed:
                return
            if self._writer is None:
                self._writer = threading.Thread(
                    target=self._write_later, name="toolgen-store-writer", daemon=True
                )
                self._writer.start()
        self._later.put(write)

    def _write_later(self) -> None:
        while (write := self._later.get()) is not None:
            with contextlib.suppress(Exception):
                write()
            # Not held while the next is waited for: the last write of a run is its sink's, which holds the run's
            # whole conversation (a run of a 16 MB body: hundreds of MB) until another run writes.
            del write

    # -- the driver's connections --

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        """A cursor in one transaction, committed at the end (rolled back on an error); SQLite's takes the write
        lock at its start, so that a read in it is never refused for a write that came between."""
        connection = self._engine.raw_connection()
        try:
            cursor = connection.cursor()
            if self._sqlite:
                cursor.execute("BEGIN IMMEDIATE")
            yield cursor
            connection.commit()
        except BaseException:
            try:
                connection.rollback()
            except Exception:  # noqa: BLE001 - a connection that cannot roll back is not given out again
                connection.invalidate()
            raise
        finally:
            connection.close()

    def _read(self, name: str, *params: Any) -> list[Any]:
        connection = self._engine.raw_connection()
        try:
            cursor = connection.cursor()
            cursor.execute(self._sql[name], params)
            return list(cursor.fetchall())
        finally:
            connection.close()

    def _rows(self, sql: str, **params: Any) -> list[Any]:
        with self._engine.connect() as connection:
            return list(connection.execute(self._sa.text(sql), params))

    def _run(self, sql: str, **params: Any) -> Any:
        with self._engine.begin() as connection:
            return connection.execute(self._sa.text(sql), params)

    # -- runs --

    def create_run(
        self,
        run_id: str,
        conversation_id: str,
        state: Mapping[str, Any],
        *,
        holder: str = "",
        max_open: int | None = None,
        executor: str | None = None,
    ) -> bool:
        """A new run's row, `state` its RunRecord's JSON form, `holder` whose it is, `executor` the server whose
        workflow runs it; False (and no row) when the holder has `max_open` runs open already. One statement counts
        and inserts, so two starts at once cannot both slip under the cap (SQLite writes one at a time; on Postgres
        the holder's runs are locked first)."""
        now = time.time()
        row = (run_id, conversation_id, state_dumps(state), now, now, holder, executor)
        with self._transaction() as cursor:
            if max_open is None:
                cursor.execute(self._sql["create_run"], row)
                return True
            if not self._sqlite:
                # Serializes starts of one holder across servers: the count below then sees the other's row.
                cursor.execute(self._sql["holder_lock"], (holder,))
            cursor.execute(self._sql["create_capped_run"], (*row, holder, max_open))
            return bool(cursor.rowcount)

    def open_runs(
        self, holder: str, statuses: Sequence[str] = ("running", "awaiting_approval")
    ) -> int:
        """How many of `holder`'s runs have one of `statuses`."""
        found = 0
        for status in statuses:
            rows = self._rows(
                "SELECT COUNT(*) FROM toolgen_runs WHERE holder = :holder AND status = :status",
                holder=holder,
                status=status,
            )
            found += int(rows[0][0])
        return found

    def update_run(self, run_id: str, status: str, state: Mapping[str, Any]) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                self._sql["update_run"],
                (status, state_dumps(state), time.time(), run_id),
            )

    def run(self, run_id: str) -> StoredRun | None:
        rows = self._read("run", run_id)
        if not rows:
            return None
        row = rows[0]
        return StoredRun(row[0], row[1], row[2], json.loads(row[3]))

    def head(self, run_id: str) -> tuple[str, str] | None:
        """The run's conversation id and status (its state unread), or None for no such run."""
        rows = self._read("head", run_id)
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def runs_with_status(self, status: str, executor: str | None = None) -> list[str]:
        """The runs of `status`, oldest first; with `executor`, only those that executor took."""
        where = "status = :status" + (" AND executor = :executor" if executor else "")
        rows = self._rows(
            f"SELECT id FROM toolgen_runs WHERE {where} ORDER BY created",
            status=status,
            executor=executor,
        )
        return [str(row[0]) for row in rows]

    def list_runs(self, limit: int, before: str | None = None) -> list[dict[str, Any]]:
        """Up to `limit` runs, newest first, from the one after run `before` (none for an unknown id): each
        its id, conversation_id, status, stop_reason, created (epoch seconds) and `prompt`, the text of its
        first user message cut to 200 characters."""
        columns = "SELECT id, conversation_id, status, state, created FROM toolgen_runs"
        order = "ORDER BY created DESC, id DESC LIMIT :limit"
        if before is None:
            rows = self._rows(f"{columns} {order}", limit=limit)
        else:
            # Ties on `created` are broken by id, as the order is: no run is listed twice or skipped.
            rows = self._rows(
                f"{columns} WHERE created < (SELECT created FROM toolgen_runs WHERE id = :before) "
                "OR (created = (SELECT created FROM toolgen_runs WHERE id = :before) "
                f"AND id < :before) {order}",
                limit=limit,
                before=before,
            )
        return [listed_run(row[0], row[1], row[2], row[3], row[4]) for row in rows]

    # -- a run's writes --

    def write(
        self,
        run_id: str,
        rows: Sequence[EventRow],
        *,
        run: tuple[str, str] | None = None,
        asks: Sequence[Ask] = (),
        attempt: str | None = None,
        ended: bool = False,
    ) -> int:
        """One transaction of a run: `rows` (a row kept already under its seq stays as it was), its row's status
        and state JSON (`run`), calls waiting for a decision, and one more start of the tool call keyed `attempt`;
        then its readers are woken (`ended`: also those waiting for its end). The starts of that call that came
        before this one (0 without `attempt`)."""
        sql = self._sql
        before = 0
        with self._transaction() as cursor:
            if attempt is not None and self._returning:
                cursor.execute(sql["attempt_returning"], (run_id, attempt))
                before = int(cursor.fetchone()[0]) - 1
            elif attempt is not None:
                cursor.execute(sql["attempts"], (run_id, attempt))
                found = cursor.fetchone()
                before = int(found[0]) if found else 0
                cursor.execute(sql["attempt"], (run_id, attempt))
            if rows:
                cursor.executemany(
                    sql["insert_event"], [(run_id, *row) for row in rows]
                )
            for ask in asks:
                cursor.execute(sql["pending"], (run_id, *ask))
            if run is not None:
                cursor.execute(sql["update_run"], (*run, time.time(), run_id))
            if self._notifies and (rows or ended):
                # In the transaction: Postgres delivers it on commit, to the readers of every process.
                last = rows[-1].seq if rows else 0
                channel = self.wakeups.channel
                cursor.execute(sql["notify"], (channel, notify_payload(run_id, last)))
                if ended:
                    # Read as the run `ended_key(run_id)` by listeners (by those of a release before, as a run
                    # nobody watches).
                    payload = notify_payload(ended_key(run_id), last)
                    cursor.execute(sql["notify"], (channel, payload))
        if rows:
            self.wakeups.notify(run_id)
        if ended:
            self.wakeups.notify(ended_key(run_id))
        return before

    def add_events(
        self,
        run_id: str,
        events: Sequence[StoredEvent],
        *,
        conversation_id: str | None = None,
        ended: tuple[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Keep the events; one already kept under its seq stays as it was (a replay writes the same). With the
        run's `conversation_id`, their SSE text is kept too (otherwise it is made when they are read). `ended`:
        the run's last events, with its final status and state, written with them (and its end said)."""
        if not events and ended is None:
            return
        rows = []
        for e in events:
            version = EVENTS_VERSION if e.version is None else e.version
            sse = None
            if conversation_id is not None:
                sse = sse_encode(
                    StoredEvent(
                        e.seq, e.type, e.data, e.time, e.trace_id, e.span_id, version
                    ).event(conversation_id)
                )
            rows.append(
                EventRow(
                    e.seq,
                    e.type,
                    dumps(dict(e.data)),
                    e.time,
                    e.trace_id,
                    e.span_id,
                    version,
                    sse,
                )
            )
        if ended is None:
            self.write(run_id, rows)
        else:
            status, state = ended
            self.write(run_id, rows, run=(status, state_dumps(state)), ended=True)

    def last_seq(self, run_id: str) -> int:
        """The sequence number of the run's last stored event (0: none yet)."""
        rows = self._read("last_seq", run_id)
        return int(rows[0][0] or 0) if rows else 0

    def events_after(
        self, run_id: str, seq: int, limit: int = 500
    ) -> list[StoredEvent]:
        return [
            stored_event(row) for row in self._read("events_after", run_id, seq, limit)
        ]

    def sse_after(
        self, run_id: str, conversation_id: str, seq: int, limit: int = 500
    ) -> list[str]:
        """The run's events after `seq` as SSE text, in order, at most `limit` (each text's `id:` line is its
        seq). The text is the one kept when the event was stored; a row from before that is encoded now (its
        conversation's id is the run's)."""
        found = self._read("sse_after", run_id, seq, limit)
        return self._sse_texts(found, run_id, conversation_id, seq)

    def replay_start(
        self, run_id: str, seq: int, limit: int = 500
    ) -> tuple[tuple[str, str] | None, list[str]]:
        """`head` and `sse_after` in one go (one connection): the run's conversation id and status, or None for no
        such run (and no events), and its first events after `seq`."""
        connection = self._engine.raw_connection()
        try:
            cursor = connection.cursor()
            cursor.execute(self._sql["head"], (run_id,))
            found = cursor.fetchone()
            if found is None:
                return None, []
            cursor.execute(self._sql["sse_after"], (run_id, seq, limit))
            rows = cursor.fetchall()
        finally:
            connection.close()
        head = (str(found[0]), str(found[1]))
        return head, self._sse_texts(rows, run_id, head[0], seq)

    def _sse_texts(
        self, found: Sequence[Any], run_id: str, conversation_id: str, seq: int
    ) -> list[str]:
        texts = [row[0] for row in found]
        if all(text is not None and strict_sse(text) for text in texts):
            return texts
        # Rows kept by a release before the SSE text was, or whose SSE text holds a NaN (a release before events
        # were strict JSON): read whole, encoded as they are now.
        return [
            text
            if text is not None and strict_sse(text)
            else sse_encode(stored.event(conversation_id))
            for text, stored in zip(
                texts, self.events_after(run_id, seq, len(found)), strict=True
            )
        ]

    def events_of_types_since(
        self, types: Sequence[str], since: float
    ) -> Iterator[StoredEvent]:
        """The events of these types in every run at `since` (epoch seconds) or later, oldest first: one query
        whose rows are read as the iterator is, so a long window is never held in memory whole (read it to the
        end, or close it, to give its connection back)."""
        if not types:
            return
        query = self._sa.text(
            f"SELECT {EVENT_COLUMNS} FROM toolgen_run_events "
            "WHERE type IN :types AND time >= :since ORDER BY time, run_id, seq"
        ).bindparams(self._sa.bindparam("types", expanding=True))
        with self._engine.connect() as connection:
            rows = connection.execution_options(stream_results=True).execute(
                query, {"types": list(types), "since": since}
            )
            for row in rows:
                yield stored_event(row)

    # -- approvals --

    def add_pending(
        self,
        run_id: str,
        call_id: str,
        name: str,
        arguments: str,
        round: int = 1,
        *,
        deadline: float | None = None,
    ) -> None:
        """A call waiting for a decision. `round` counts the times the run asked about this call id: a model that
        reuses `call_0` at a later step asks anew, and the earlier decision is not this one's. `deadline`: the
        run's (epoch seconds), past which no decision is taken."""
        self.write(run_id, (), asks=[Ask(call_id, name, arguments, round, deadline)])

    def pending(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT call_id, name, arguments FROM toolgen_approvals WHERE run_id = :run "
            "AND decision IS NULL ORDER BY call_id",
            run=run_id,
        )
        return [{"id": r[0], "name": r[1], "arguments": r[2]} for r in rows]

    def pending_rounds(self, run_id: str) -> list[tuple[str, int]]:
        """The calls waiting for a decision, each with its round."""
        rows = self._rows(
            "SELECT call_id, COALESCE(round, 1) FROM toolgen_approvals "
            "WHERE run_id = :run AND decision IS NULL ORDER BY call_id",
            run=run_id,
        )
        return [(str(r[0]), int(r[1])) for r in rows]

    def claim_decision(
        self, run_id: str, call_id: str, decision: Mapping[str, Any]
    ) -> int | str:
        """Record the decision on a pending call: its round; else why not, recording nothing: `cancelled` (its run
        was asked to stop), `deadline` (the run's deadline has passed, or its run denied the call for it) or
        `not_pending` (decided already, or never asked). The row decides between a decision and the run's own
        denial at its deadline (close_ask): whichever is written first is the one the run takes."""
        now = time.time()
        with self._transaction() as cursor:
            found = self._claimable(cursor, run_id, call_id, now)
            if isinstance(found, str):
                return found
            cursor.execute(
                self._sql["claim"],
                (dumps(dict(decision)), run_id, call_id, found, run_id),
            )
            if cursor.rowcount == 1:
                return found
            # Another writer came between (a cancel, the run's deadline, a decision): say which.
            again = self._claimable(cursor, run_id, call_id, now)
        return again if isinstance(again, str) else "not_pending"

    def _claimable(
        self, cursor: Any, run_id: str, call_id: str, now: float
    ) -> int | str:
        """The round of the call's ask when a decision may be claimed at `now`, else why not (claim_decision)."""
        cursor.execute(self._sql["ask"], (run_id, run_id, call_id))
        found = cursor.fetchone()
        if found is None:
            return "not_pending"
        round, deadline, taken, cancelled = found
        if taken is not None:
            return "deadline" if closed(taken) else "not_pending"
        if cancelled:
            return "cancelled"
        if deadline is not None and now >= float(deadline):
            return "deadline"
        return int(round)

    def close_ask(self, run_id: str, call_id: str, round: int) -> bool:
        """The run's deadline has passed while its call waits: the ask is closed, denied by the deadline, unless a
        decision was claimed first. True when the ask is closed (now, or before: a replay asks again), False when
        a person's decision came first: the run takes it (its message is sent, or sent again at the next launch)."""
        with self._transaction() as cursor:
            cursor.execute(self._sql["ask_decision"], (run_id, call_id, round))
            found = cursor.fetchone()
            if found is not None and found[0] is not None:
                return closed(found[0])
            cursor.execute(self._sql["close_ask"], (CLOSED, run_id, call_id, round))
        return True

    def decisions(self, run_id: str) -> list[tuple[str, int, dict[str, Any]]]:
        """The decisions people took on the run's calls: call id, round, decision (not the run's own denials at
        its deadline)."""
        rows = self._rows(
            "SELECT call_id, COALESCE(round, 1), decision FROM toolgen_approvals "
            "WHERE run_id = :run AND decision IS NOT NULL ORDER BY call_id",
            run=run_id,
        )
        return [
            (str(r[0]), int(r[1]), json.loads(r[2])) for r in rows if not closed(r[2])
        ]

    # -- tool attempts --

    def begin_attempt(self, run_id: str, call_id: str) -> int:
        """Count one more start of this call's handler; how many starts came before it."""
        return self.write(run_id, (), attempt=call_id)

    # -- cancel requests --

    def request_cancel(self, run_id: str) -> None:
        """Ask the run to stop, wherever it runs: the server running it sees the row at its next look."""
        self._run(
            "INSERT INTO toolgen_cancels (run_id, requested) VALUES (:run, :now) "
            "ON CONFLICT (run_id) DO NOTHING",
            run=run_id,
            now=time.time(),
        )

    def cancel_requested(self, run_id: str) -> bool:
        return bool(self._read("cancel_requested", run_id))
