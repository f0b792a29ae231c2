# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What the service keeps beside DBOS's own tables: each run's state, its events in order, approvals, tool attempts.

The tables live in the database DBOS checkpoints to (SQLite or Postgres), so every server sharing that database
sees the same runs. Every write is keyed, so a workflow that replays after a restart writes the same rows again
without duplicating any: events by (run, seq), approvals by (run, call).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..loop.events import (
    EVENTS_VERSION,
    ErrorEvent,
    EventFormError,
    RunEvent,
    event_from_json,
)
from .wakeup import Wakeups, notify_payload

_TABLES = (
    (
        "CREATE TABLE IF NOT EXISTS toolgen_runs (id TEXT PRIMARY KEY, "
        "conversation_id TEXT NOT NULL, status TEXT NOT NULL, state TEXT NOT NULL, "
        "created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL)"
    ),
    (
        "CREATE TABLE IF NOT EXISTS toolgen_run_events (run_id TEXT NOT NULL, "
        "seq INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, "
        "time DOUBLE PRECISION, trace_id TEXT, span_id TEXT, version INTEGER, "
        "PRIMARY KEY (run_id, seq))"
    ),
    (
        "CREATE TABLE IF NOT EXISTS toolgen_approvals (run_id TEXT NOT NULL, "
        "call_id TEXT NOT NULL, name TEXT NOT NULL, arguments TEXT NOT NULL, "
        "decision TEXT, round INTEGER, PRIMARY KEY (run_id, call_id))"
    ),
    (
        "CREATE TABLE IF NOT EXISTS toolgen_tool_attempts (run_id TEXT NOT NULL, "
        "call_id TEXT NOT NULL, attempts INTEGER NOT NULL, "
        "PRIMARY KEY (run_id, call_id))"
    ),
    (
        "CREATE TABLE IF NOT EXISTS toolgen_cancels (run_id TEXT PRIMARY KEY, "
        "requested DOUBLE PRECISION NOT NULL)"
    ),
)


@dataclass(frozen=True)
class StoredEvent:
    """One run event as stored: its sequence number (the SSE `id:`), type, JSON data, and when it happened
    and in which trace (as on the RunEvent it came from), so the page and a trace can be joined."""

    seq: int
    type: str
    data: Mapping[str, Any]
    time: float | None = None
    trace_id: str | None = None
    span_id: str | None = None
    # The event form's version (EVENTS_VERSION when written; None: a row from before events had one).
    version: int | None = None

    def event(self, conversation_id: str) -> RunEvent:
        """The run event this row keeps, read by the one JSON form events have (rows from before events had a
        version read as version 1). A row no event form fits (written by a later release, or by hand) comes back
        as an `error` event at its place that says so, rather than ending the stream or vanishing."""
        form: dict[str, Any] = {
            "type": self.type,
            "conversation_id": conversation_id,
            "seq": self.seq,
            "time": self.time,
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "data": self.data,
        }
        if self.version is not None:
            form["version"] = self.version
        try:
            return event_from_json(form)
        except EventFormError as error:
            return ErrorEvent(
                conversation_id=conversation_id,
                seq=self.seq,
                time=self.time,
                message=f"the stored event {self.seq} ({self.type}) could not be read: {error}",
                error_type="unreadable_event",
            )


@dataclass(frozen=True)
class StoredRun:
    """A run's row: its status and the state the workflow last wrote (messages, metrics, stop reason)."""

    id: str
    conversation_id: str
    status: str
    state: Mapping[str, Any]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class RunStore:
    """The service's tables in one SQLAlchemy database (a `sqlite:///` or `postgresql://` URL)."""

    def __init__(self, url: str) -> None:
        # Imported here: sqlalchemy comes with the `serve` extra (DBOS needs it too), not with the package.
        import sqlalchemy  # type: ignore[import-not-found,unused-ignore]

        self._sa = sqlalchemy
        sqlite = url.startswith("sqlite")
        self._sqlite = sqlite
        self._engine = sqlalchemy.create_engine(
            _driver_url(url),
            # SQLite takes one writer at a time: wait for the lock rather than fail the write.
            connect_args={"timeout": 30} if sqlite else {},
            pool_pre_ping=not sqlite,
        )
        if sqlite:
            sqlalchemy.event.listen(self._engine, "connect", _sqlite_settings)
        self._create_tables()
        # Readers of a run's events wait on these; add_events wakes them. On Postgres, readers in other
        # processes too: add_events NOTIFYs, and a listener (libpq's URL, without SQLAlchemy's driver) hears.
        self._notifies = not sqlite
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
                    for statement in _TABLES:
                        connection.execute(self._sa.text(statement))
                break
            except self._sa.exc.IntegrityError:
                # Two servers creating the tables at once on Postgres: one wins, the other sees them next time.
                if attempt == 2:
                    raise
        # Columns later releases added, on a database of the release before.
        self._add_column("toolgen_run_events", "version")
        self._add_column("toolgen_approvals", "round")
        # Runs started before holders were kept count under none ('').
        self._add_column("toolgen_runs", "holder", "TEXT NOT NULL DEFAULT ''")
        try:
            with self._engine.begin() as connection:
                connection.execute(
                    self._sa.text(
                        "CREATE INDEX IF NOT EXISTS toolgen_runs_holder ON toolgen_runs (holder, status)"
                    )
                )
        except self._sa.exc.DatabaseError:
            # Two servers creating it at once on Postgres: the other's is the same index.
            pass

    def _add_column(self, table: str, column: str, kind: str = "INTEGER") -> None:
        """A column a database of the release before lacks (its rows read it as NULL, or as `kind`'s default)."""
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
        self.wakeups.close()
        self._engine.dispose()

    def _run(self, sql: str, **params: Any) -> Any:
        with self._engine.begin() as connection:
            return connection.execute(self._sa.text(sql), params)

    def _rows(self, sql: str, **params: Any) -> list[Any]:
        with self._engine.connect() as connection:
            return list(connection.execute(self._sa.text(sql), params))

    # -- runs --

    def create_run(
        self,
        run_id: str,
        conversation_id: str,
        state: Mapping[str, Any],
        *,
        holder: str = "",
        max_open: int | None = None,
    ) -> bool:
        """A new run's row, `state` its RunRecord's JSON form, `holder` whose it is; False (and no row) when the
        holder has `max_open` runs open already. One statement counts and inserts, so two starts at once cannot
        both slip under the cap (SQLite writes one at a time; on Postgres the holder's runs are locked first)."""
        now = time.time()
        params = {
            "id": run_id,
            "conversation": conversation_id,
            "state": _json(dict(state)),
            "now": now,
            "holder": holder,
        }
        if max_open is None:
            self._run(
                "INSERT INTO toolgen_runs (id, conversation_id, status, state, created, "
                "updated, holder) VALUES (:id, :conversation, 'running', :state, :now, :now, :holder)",
                **params,
            )
            return True
        with self._engine.begin() as connection:
            if not self._sqlite:
                # Serializes starts of one holder across servers: the count below then sees the other's row.
                connection.execute(
                    self._sa.text("SELECT pg_advisory_xact_lock(hashtext(:holder))"),
                    {"holder": holder},
                )
            inserted = connection.execute(
                self._sa.text(
                    "INSERT INTO toolgen_runs (id, conversation_id, status, state, created, updated, holder) "
                    "SELECT :id, :conversation, 'running', :state, :now, :now, :holder "
                    "WHERE (SELECT COUNT(*) FROM toolgen_runs WHERE holder = :holder "
                    "AND status IN ('running', 'awaiting_approval')) < :cap"
                ),
                {**params, "cap": max_open},
            )
            return bool(inserted.rowcount)

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
        self._run(
            "UPDATE toolgen_runs SET status = :status, state = :state, updated = :now "
            "WHERE id = :id",
            id=run_id,
            status=status,
            state=_json(dict(state)),
            now=time.time(),
        )

    def run(self, run_id: str) -> StoredRun | None:
        rows = self._rows(
            "SELECT id, conversation_id, status, state FROM toolgen_runs WHERE id = :id",
            id=run_id,
        )
        if not rows:
            return None
        row = rows[0]
        return StoredRun(row[0], row[1], row[2], json.loads(row[3]))

    def runs_with_status(self, status: str) -> list[str]:
        rows = self._rows(
            "SELECT id FROM toolgen_runs WHERE status = :status ORDER BY created",
            status=status,
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
        listed = []
        for row in rows:
            state = json.loads(row[3])
            messages = state.get("messages") if isinstance(state, dict) else None
            first = next(
                (
                    m
                    for m in messages or ()
                    if isinstance(m, dict) and m.get("role") == "user"
                ),
                {},
            )
            content = first.get("content")
            parts = content if isinstance(content, list) else [content]
            text = " ".join(
                part if isinstance(part, str) else str(part.get("text") or "")
                for part in parts
                if isinstance(part, str)
                or (isinstance(part, dict) and part.get("type") == "text")
            )
            listed.append(
                {
                    "id": row[0],
                    "conversation_id": row[1],
                    "status": row[2],
                    "stop_reason": state.get("stop_reason")
                    if isinstance(state, dict)
                    else None,
                    "created": float(row[4]),
                    "prompt": text[:200],
                }
            )
        return listed

    # -- events --

    def add_events(self, run_id: str, events: Sequence[StoredEvent]) -> None:
        """Keep the events; one already kept under its seq stays as it was (a replay writes the same)."""
        if not events:
            return
        rows = [
            {
                "run": run_id,
                "seq": e.seq,
                "type": e.type,
                "data": _json(dict(e.data)),
                "time": e.time,
                "trace": e.trace_id,
                "span": e.span_id,
                "version": EVENTS_VERSION if e.version is None else e.version,
            }
            for e in events
        ]
        with self._engine.begin() as connection:
            connection.execute(
                self._sa.text(
                    "INSERT INTO toolgen_run_events "
                    "(run_id, seq, type, data, time, trace_id, span_id, version) VALUES "
                    "(:run, :seq, :type, :data, :time, :trace, :span, :version) "
                    "ON CONFLICT (run_id, seq) DO NOTHING"
                ),
                rows,
            )
            if self._notifies:
                # In the transaction: Postgres delivers it on commit, to the readers of every process.
                connection.execute(
                    self._sa.text("SELECT pg_notify(:channel, :payload)"),
                    {
                        "channel": self.wakeups.channel,
                        "payload": notify_payload(run_id, max(e.seq for e in events)),
                    },
                )
        self.wakeups.notify(run_id)

    def last_seq(self, run_id: str) -> int:
        """The sequence number of the run's last stored event (0: none yet)."""
        rows = self._rows(
            "SELECT MAX(seq) FROM toolgen_run_events WHERE run_id = :run", run=run_id
        )
        return int(rows[0][0] or 0) if rows else 0

    def events_after(
        self, run_id: str, seq: int, limit: int = 500
    ) -> list[StoredEvent]:
        rows = self._rows(
            "SELECT seq, type, data, time, trace_id, span_id, version "
            "FROM toolgen_run_events WHERE run_id = :run "
            "AND seq > :seq ORDER BY seq LIMIT :limit",
            run=run_id,
            seq=seq,
            limit=limit,
        )
        return [_stored_event(row) for row in rows]

    def events_of_types_since(
        self, types: Sequence[str], since: float
    ) -> Iterator[StoredEvent]:
        """The events of these types in every run at `since` (epoch seconds) or later, oldest first: one query
        whose rows are read as the iterator is, so a long window is never held in memory whole (read it to the
        end, or close it, to give its connection back)."""
        if not types:
            return
        query = self._sa.text(
            "SELECT seq, type, data, time, trace_id, span_id, version "
            "FROM toolgen_run_events "
            "WHERE type IN :types AND time >= :since ORDER BY time, run_id, seq"
        ).bindparams(self._sa.bindparam("types", expanding=True))
        with self._engine.connect() as connection:
            rows = connection.execution_options(stream_results=True).execute(
                query, {"types": list(types), "since": since}
            )
            for row in rows:
                yield _stored_event(row)

    # -- approvals --

    def add_pending(
        self, run_id: str, call_id: str, name: str, arguments: str, round: int = 1
    ) -> None:
        """A call waiting for a decision. `round` counts the times the run asked about this call id: a model that
        reuses `call_0` at a later step asks anew, and the earlier decision is not this one's."""
        self._run(
            "INSERT INTO toolgen_approvals (run_id, call_id, name, arguments, round) "
            "VALUES (:run, :call, :name, :arguments, :round) "
            "ON CONFLICT (run_id, call_id) DO UPDATE SET name = excluded.name, "
            "arguments = excluded.arguments, round = excluded.round, decision = NULL "
            "WHERE COALESCE(toolgen_approvals.round, 1) < excluded.round",
            run=run_id,
            call=call_id,
            name=name,
            arguments=arguments,
            round=round,
        )

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
    ) -> int | None:
        """Record the decision on a pending call: its round, or None when the call is not pending (decided, or
        never asked)."""
        with self._engine.begin() as connection:
            text = self._sa.text
            rows = list(
                connection.execute(
                    text(
                        "SELECT COALESCE(round, 1) FROM toolgen_approvals WHERE "
                        "run_id = :run AND call_id = :call AND decision IS NULL"
                    ),
                    {"run": run_id, "call": call_id},
                )
            )
            if not rows:
                return None
            result = connection.execute(
                text(
                    "UPDATE toolgen_approvals SET decision = :decision WHERE "
                    "run_id = :run AND call_id = :call AND decision IS NULL "
                    "AND COALESCE(round, 1) = :round"
                ),
                {
                    "run": run_id,
                    "call": call_id,
                    "round": int(rows[0][0]),
                    "decision": _json(dict(decision)),
                },
            )
        return int(rows[0][0]) if result.rowcount == 1 else None

    def decisions(self, run_id: str) -> list[tuple[str, int, dict[str, Any]]]:
        """The decisions taken on the run's calls: call id, round, decision."""
        rows = self._rows(
            "SELECT call_id, COALESCE(round, 1), decision FROM toolgen_approvals "
            "WHERE run_id = :run AND decision IS NOT NULL ORDER BY call_id",
            run=run_id,
        )
        return [(str(r[0]), int(r[1]), json.loads(r[2])) for r in rows]

    # -- tool attempts --

    def begin_attempt(self, run_id: str, call_id: str) -> int:
        """Count one more start of this call's handler; how many starts came before it."""
        with self._engine.begin() as connection:
            text = self._sa.text
            rows = list(
                connection.execute(
                    text(
                        "SELECT attempts FROM toolgen_tool_attempts WHERE run_id = :run "
                        "AND call_id = :call"
                    ),
                    {"run": run_id, "call": call_id},
                )
            )
            before = int(rows[0][0]) if rows else 0
            connection.execute(
                text(
                    "INSERT INTO toolgen_tool_attempts (run_id, call_id, attempts) "
                    "VALUES (:run, :call, 1) ON CONFLICT (run_id, call_id) DO UPDATE "
                    "SET attempts = toolgen_tool_attempts.attempts + 1"
                ),
                {"run": run_id, "call": call_id},
            )
        return before

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
        rows = self._rows(
            "SELECT 1 FROM toolgen_cancels WHERE run_id = :run", run=run_id
        )
        return bool(rows)


def _stored_event(row: Any) -> StoredEvent:
    """A row of `SELECT seq, type, data, time, trace_id, span_id, version`."""
    return StoredEvent(
        int(row[0]),
        str(row[1]),
        json.loads(row[2]),
        None if row[3] is None else float(row[3]),
        row[4],
        row[5],
        None if row[6] is None else int(row[6]),
    )


def _sqlite_settings(connection: Any, record: Any) -> None:
    """WAL: readers never wait for the writer, and a commit costs one sync instead of several. NORMAL sync on
    these connections: a process killed at any moment loses nothing; a machine that loses power may lose the
    last events, which the run's replay writes again (DBOS's own connections keep their full sync)."""
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")


def _driver_url(url: str) -> str:
    """The URL SQLAlchemy needs: psycopg 3 for Postgres (what DBOS installs), not the psycopg2 default."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url
