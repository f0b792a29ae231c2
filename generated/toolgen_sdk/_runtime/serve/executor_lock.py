# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""One live server per executor id and database: the lock a server holds before DBOS resumes that executor's runs.

DBOS resumes, at launch, every unfinished workflow of its executor id. A second server started by mistake with the
same id on the same database (a second `serve` whose port was taken, a deploy that overlaps the old one) would
take the live server's runs over: calls made twice at once, finished calls told to the model as interrupted. The
lock makes the second one stop first: on Postgres a session-level advisory lock held on a connection of its own
for the server's life (it goes when the process does, however it dies); on SQLite an exclusive `flock` on a file
beside the database (SQLite is one machine's, so a file lock is all it needs).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any


class ExecutorBusy(RuntimeError):
    """Another live server holds the executor id on this database."""


def _sqlite_path(url: str) -> str | None:
    """The database file of a sqlite:/// URL, or None for an in-memory one."""
    path = url.split(":///", 1)[1] if ":///" in url else ""
    path = path.split("?", 1)[0]
    return None if not path or path == ":memory:" else path


class ExecutorLock:
    """Held from acquire() until release() (or the process's end)."""

    def __init__(self, database_url: str, executor_id: str) -> None:
        self.database_url = database_url
        self.executor_id = executor_id
        self._held: Any = None

    def acquire(self) -> None:
        """Take the lock, or ExecutorBusy naming the executor id."""
        if self.database_url.startswith("sqlite"):
            self._held = self._file_lock()
        else:
            self._held = self._advisory_lock()

    def release(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.close()

    def _busy(self) -> ExecutorBusy:
        return ExecutorBusy(
            f"another server with executor id {self.executor_id!r} is running on this database; "
            "give this one its own --executor-id, or stop the other first"
        )

    def _file_lock(self) -> Any:
        import fcntl

        path = _sqlite_path(self.database_url)
        if path is None:
            return None
        digest = hashlib.sha256(self.executor_id.encode("utf-8")).hexdigest()[:16]
        handle = open(f"{path}.executor-{digest}.lock", "a+b")  # noqa: SIM115 - held for the server's life
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise self._busy() from None
        os.set_inheritable(handle.fileno(), False)
        return handle

    def _advisory_lock(self) -> Any:
        # Imported here: psycopg 3 comes with DBOS (the `durable` extra), and only Postgres needs it.
        import psycopg  # type: ignore[import-not-found,unused-ignore]

        key = int.from_bytes(
            hashlib.sha256(f"toolgen-executor:{self.executor_id}".encode()).digest()[
                :8
            ],
            "big",
            signed=True,
        )
        url = self.database_url.replace("postgresql+psycopg://", "postgresql://", 1)
        connection = psycopg.connect(url, autocommit=True)
        try:
            row = connection.execute(
                "SELECT pg_try_advisory_lock(%s)", (key,)
            ).fetchone()
        except Exception:
            connection.close()
            raise
        if not row or not row[0]:
            connection.close()
            raise self._busy()
        return connection
