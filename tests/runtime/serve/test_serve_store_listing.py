"""The list of runs reads a page without sorting every run: the store keeps an index on when runs were created."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from support.projects import TESTS

pytest.importorskip("sqlalchemy", reason="the serve extra (sqlalchemy) is not installed")

from toolgen.runtime.serve.store import RunStore  # noqa: E402 - after the skip: it needs sqlalchemy

LISTING = "SELECT id, conversation_id, status, state, created FROM toolgen_runs ORDER BY created DESC, id DESC LIMIT 5"


def _plan(database: Path) -> str:
    with sqlite3.connect(database) as connection:
        return " | ".join(str(row[-1]) for row in connection.execute(f"EXPLAIN QUERY PLAN {LISTING}"))


@pytest.mark.parametrize("kind", ["new", "kept from before"])
def test_a_page_of_runs_is_read_from_the_created_index(tmp_path: Path, kind: str) -> None:
    database = tmp_path / "runs.sqlite"
    if kind != "new":  # a database an earlier release made gains the index at the next start
        shutil.copy(TESTS / "fixtures" / "serve" / "runs-before-versions.sqlite", database)
        assert "toolgen_runs_created" not in _plan(database)
    store = RunStore(f"sqlite:///{database}")
    try:
        plan = _plan(database)
        assert "toolgen_runs_created" in plan and "TEMP B-TREE" not in plan, plan
        created = [run["created"] for run in store.list_runs(5)]
        assert created == sorted(created, reverse=True)
    finally:
        store.close()
