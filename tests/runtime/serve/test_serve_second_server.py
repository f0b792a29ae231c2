"""A second `serve` on a live server's database cannot take its runs: the port is bound, then the executor's lock
taken, before DBOS resumes anything; a server that fails either exits 4 and leaves the first's runs alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.serve_helpers import LIST_FILES, Server, awaiting, free_port, over, serving


def _second(server: Server, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "toolgen_sdk", "serve", *args]
    return subprocess.Popen(
        command, cwd=server.cwd, env=server.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _ended(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_a_second_server_on_the_same_database_exits_without_touching_the_first_servers_runs(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    # SIGKILL at the end: what is checked is said while the first server runs.
    with serving(tmp_path, "--database", database, graceful=False) as server:
        run_id = server.start_run(LIST_FILES)
        [pending] = server.wait_for(run_id, awaiting)["pending"]

        # Both at once: the one on the taken port fails before it would try the executor's lock.
        starting = _second(server, "--database", database, "--port", str(server.port))
        busy_starting = _second(server, "--database", database, "--port", str(free_port()))
        taken, busy = _ended(starting), _ended(busy_starting)
        assert taken.returncode == 4, taken.stderr
        assert f"could not listen on 127.0.0.1:{server.port}" in taken.stderr

        assert busy.returncode == 4, busy.stderr
        assert "another server with executor id 'local' is running on this database" in busy.stderr

        # The first server's run is as it was, and goes on when decided.
        assert server.state(run_id)["status"] == "awaiting_approval"
        answer = server.client.post(f"/runs/{run_id}/approvals/{pending['id']}", json={"decision": "approve"})
        assert answer.status_code == 200, answer.text
        state = server.wait_for(run_id, over)
        assert state["status"] == "finished"
        tools = [m for m in state["messages"] if m["role"] == "tool"]
        assert len(tools) == 1 and not tools[0].get("is_error"), tools
        events = server.events(run_id)
        assert [kind for _, kind, _ in events].count("tool_call_finished") == 1
