"""Two servers on one PostgreSQL database share runs: either answers for any run, and no run executes twice."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.serve_helpers import LIST_FILES, Server, awaiting, over, postgres_cluster

pytestmark = pytest.mark.postgres

# run_command's handler, bound by --tools: it only records that it ran.
COUNTING_TOOLS = """
from pathlib import Path
from toolgen_sdk import Tools

def tools():
    bound = Tools()

    @bound.run_command.handler
    def run_command(args, ctx):
        with (Path(__file__).parent / "calls.log").open("a") as log:
            log.write(f"{ctx.conversation_id} {ctx.tool_call_id} {args.program}\\n")
        return {"exit_code": 0, "stdout": "notes.txt\\n", "stderr": "", "truncated": False}

    return bound
"""


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster for this module's servers."""
    with postgres_cluster() as url:
        yield url


def test_two_servers_on_one_database_share_runs_without_running_one_twice(tmp_path: Path, postgres_url: str) -> None:
    (tmp_path / "counting_tools.py").write_text(COUNTING_TOOLS, encoding="utf-8")
    common = ("--database", postgres_url, "--tools", "counting_tools:tools")
    first = Server(tmp_path, *common, "--executor-id", "first")
    second = Server(tmp_path, *common, "--executor-id", "second")
    with contextlib.ExitStack() as stack:
        stack.callback(first.stop)
        stack.callback(second.stop)
        first.start()
        second.start()
        started_on_first = first.start_run(LIST_FILES)
        started_on_second = second.start_run(LIST_FILES + " please")
        # Each server sees the other's run, waiting for the same decision.
        [pending_first] = second.wait_for(started_on_first, awaiting)["pending"]
        [pending_second] = first.wait_for(started_on_second, awaiting)["pending"]

        # The first server dies; the second starting again must not take over its run (it is not dead for
        # good: its server resumes it), and a decision sent through the second waits for it durably.
        first.kill()
        second.kill()
        second.start()
        url = f"/runs/{started_on_first}/approvals/{pending_first['id']}"
        assert second.client.post(url, json={"decision": "approve"}).status_code == 200
        assert second.client.post(url, json={"decision": "approve"}).status_code == 409
        decided = f"/runs/{started_on_second}/approvals/{pending_second['id']}"
        assert second.client.post(decided, json={"decision": "approve"}).status_code == 200
        assert second.wait_for(started_on_second, over)["status"] == "finished"
        assert second.state(started_on_first)["status"] == "awaiting_approval"
        first.start()
        assert second.wait_for(started_on_first, over)["status"] == "finished"

        calls = Counter((tmp_path / "calls.log").read_text(encoding="utf-8").splitlines())
        assert sorted(calls.values()) == [1, 1], calls
        for run_id in (started_on_first, started_on_second):
            events = first.events(run_id)
            assert [event_id for event_id, _, _ in events] == list(range(1, len(events) + 1))
            kinds = Counter(kind for _, kind, _ in events)
            assert kinds["tool_call_started"] == kinds["tool_call_finished"] == kinds["run_finished"] == 1
            assert events == second.events(run_id)
