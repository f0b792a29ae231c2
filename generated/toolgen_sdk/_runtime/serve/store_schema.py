# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The service's tables, and the statements a run's writes and its readers run on the driver's own connections."""

from __future__ import annotations

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
    "pending": "INSERT INTO toolgen_approvals (run_id, call_id, name, arguments, round) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, call_id) DO UPDATE SET name = excluded.name, "
    "arguments = excluded.arguments, round = excluded.round, decision = NULL "
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
}
