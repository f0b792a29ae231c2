# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The service's tables, the statements a run's writes and its readers run on the driver's own connections, and
how those connections are made."""

from __future__ import annotations

from typing import Any

TABLES = (
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
        "decision TEXT, round INTEGER, deadline DOUBLE PRECISION, PRIMARY KEY (run_id, call_id))"
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
EVENT_COLUMNS = "seq, type, data, time, trace_id, span_id, version"
# Written with `?`; Postgres' driver takes `%s` (no statement here holds a `?` or `%` of its own).
SQL = {
    "insert_event": "INSERT INTO toolgen_run_events (run_id, seq, type, data, time, trace_id, span_id, "
    "version, sse) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, seq) DO NOTHING",
    "update_run": "UPDATE toolgen_runs SET status = ?, state = ?, updated = ? WHERE id = ?",
    "attempts": "SELECT attempts FROM toolgen_tool_attempts WHERE run_id = ? AND call_id = ?",
    "attempt": "INSERT INTO toolgen_tool_attempts (run_id, call_id, attempts) VALUES (?, ?, 1) "
    "ON CONFLICT (run_id, call_id) DO UPDATE SET attempts = toolgen_tool_attempts.attempts + 1",
    "attempt_returning": "INSERT INTO toolgen_tool_attempts (run_id, call_id, attempts) VALUES (?, ?, 1) "
    "ON CONFLICT (run_id, call_id) DO UPDATE SET attempts = toolgen_tool_attempts.attempts + 1 "
    "RETURNING attempts",
    "pending": "INSERT INTO toolgen_approvals (run_id, call_id, name, arguments, round, deadline) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, call_id) DO UPDATE SET name = excluded.name, "
    "arguments = excluded.arguments, round = excluded.round, deadline = excluded.deadline, decision = NULL "
    "WHERE COALESCE(toolgen_approvals.round, 1) < excluded.round",
    "notify": "SELECT pg_notify(?, ?)",
    "create_run": "INSERT INTO toolgen_runs (id, conversation_id, status, state, created, updated, holder, "
    "executor) VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
    "create_capped_run": "INSERT INTO toolgen_runs (id, conversation_id, status, state, created, updated, "
    "holder, executor) SELECT ?, ?, 'running', ?, ?, ?, ?, ? WHERE (SELECT COUNT(*) FROM toolgen_runs "
    "WHERE holder = ? AND status IN ('running', 'awaiting_approval')) < ?",
    "holder_lock": "SELECT pg_advisory_xact_lock(hashtext(?))",
    "run": "SELECT id, conversation_id, status, state FROM toolgen_runs WHERE id = ?",
    "head": "SELECT conversation_id, status FROM toolgen_runs WHERE id = ?",
    "last_seq": "SELECT MAX(seq) FROM toolgen_run_events WHERE run_id = ?",
    "events_after": f"SELECT {EVENT_COLUMNS} FROM toolgen_run_events WHERE run_id = ? AND seq > ? "
    "ORDER BY seq LIMIT ?",
    "sse_after": "SELECT sse FROM toolgen_run_events WHERE run_id = ? AND seq > ? "
    "ORDER BY seq LIMIT ?",
    "cancel_requested": "SELECT 1 FROM toolgen_cancels WHERE run_id = ?",
    "ask": "SELECT COALESCE(round, 1), deadline, decision, EXISTS (SELECT 1 FROM toolgen_cancels WHERE "
    "run_id = ?) FROM toolgen_approvals WHERE run_id = ? AND call_id = ?",
    # A run asked to stop denies its pending calls: a decision after the ask is not taken.
    "claim": "UPDATE toolgen_approvals SET decision = ? WHERE run_id = ? AND call_id = ? AND decision IS NULL "
    "AND COALESCE(round, 1) = ? AND NOT EXISTS (SELECT 1 FROM toolgen_cancels WHERE run_id = ?)",
    "ask_decision": "SELECT decision FROM toolgen_approvals WHERE run_id = ? AND call_id = ? "
    "AND COALESCE(round, 1) = ?",
    "close_ask": "UPDATE toolgen_approvals SET decision = ? WHERE run_id = ? AND call_id = ? "
    "AND decision IS NULL AND COALESCE(round, 1) = ?",
}

# What an ask's decision column holds once the run denied the call at its deadline: no person's decision.
CLOSED = '{"closed":"deadline"}'


def closed(decision: str) -> bool:
    """Whether an ask's decision is the run's own denial at its deadline (CLOSED), not a person's."""
    return decision == CLOSED


def sqlite_settings(connection: Any, record: Any) -> None:
    """WAL: readers never wait for the writer, and a commit costs one sync instead of several. NORMAL sync on
    these connections: a process killed at any moment loses nothing; a machine that loses power may lose the
    last events, which the run's replay writes again (DBOS's own connections keep their full sync)."""
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")


def sqlite_version() -> tuple[int, ...]:
    import sqlite3

    return sqlite3.sqlite_version_info


def driver_url(url: str) -> str:
    """The URL SQLAlchemy needs: psycopg 3 for Postgres (what DBOS installs), not the psycopg2 default."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url
