"""The service's trust boundary on servers of their own: runs and info, client tool calls, the first token, no auth."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from support.projects import SOURCE_PACKAGE
from support.serve_helpers import LIST_FILES, TOKEN_ENV, SourceServer, awaiting
from test_serve_auth_rights import CALL, _bare, _error

from toolgen.runtime.serve import auth


def test_runs_are_listed_newest_first_and_info_says_what_is_served(
    serve: Callable[..., SourceServer], tmp_path: Path
) -> None:
    server = serve("--database", f"sqlite:///{tmp_path / 'runs.sqlite'}")
    long = "what's the weather in Paris? " + "and then? " * 40
    first = server.start_run(LIST_FILES)
    second = server.start_run(long)
    server.wait_for(first, awaiting)
    listed = server.client.get("/runs").json()
    assert [run["id"] for run in listed["runs"]] == [second, first] and listed["next"] is None
    newest = listed["runs"][0]
    assert newest["prompt"] == long[:200] and newest["conversation_id"] == second
    assert isinstance(newest["created"], float) and newest["created"] >= listed["runs"][1]["created"]
    assert listed["runs"][1]["status"] == "awaiting_approval" and listed["runs"][1]["prompt"] == LIST_FILES
    page = server.client.get("/runs", params={"limit": "1"}).json()
    assert [run["id"] for run in page["runs"]] == [second] and page["next"] == second
    after = server.client.get("/runs", params={"limit": "1", "before": page["next"]}).json()
    assert [run["id"] for run in after["runs"]] == [first] and after["next"] is None
    for query, field in [({"limit": "0"}, "limit"), ({"limit": "101"}, "limit"), ({"limit": "x"}, "limit")]:
        assert _error(server.client.get("/runs", params=query)) == (422, field), query
    assert _error(server.client.get("/runs", params={"before": "no-such-run"})) == (422, "before")

    info = server.client.get("/info").json()
    assert info["package"] == SOURCE_PACKAGE
    assert info["model"] == {"wire": None, "name": "offline demo", "offline": True}
    tools = {tool["name"]: tool["description"] for tool in info["tools"]}
    assert "run_command" in tools and tools["run_command"]
    assert info["rights"] == list(auth.RIGHTS)


def test_a_conversation_ending_in_unanswered_tool_calls_is_refused_unless_the_operator_allows_it(
    serve: Callable[..., SourceServer], tmp_path: Path
) -> None:
    user = {"role": "user", "content": "hi"}
    turn = {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": "mine"}]}
    two = {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": "a"}, {**CALL, "id": "b"}]}
    answered = {"role": "tool", "tool_call_id": "a", "content": "done"}
    strict = serve("--database", f"sqlite:///{tmp_path / 'strict.sqlite'}", wait=False)
    allowing = serve("--database", f"sqlite:///{tmp_path / 'allowing.sqlite'}", "--allow-client-tool-calls", wait=False)
    strict.ready()
    allowing.ready()
    for messages, at in [([user, turn], 1), ([user, two, answered], 1), ([user, turn, user, two, answered], 3)]:
        answer = strict.client.post("/runs", json={"messages": messages})
        assert _error(answer) == (422, f"/messages/{at}/tool_calls"), answer.text
        assert "--allow-client-tool-calls" in answer.json()["error"]["message"]
    assert strict.client.get("/runs").json()["runs"] == []
    # Every call answered: the model is asked next, as with any conversation.
    answered_all = [user, two, answered, {**answered, "tool_call_id": "b"}]
    assert strict.client.post("/runs", json={"messages": answered_all}).status_code == 201

    started = allowing.client.post("/runs", json={"messages": [user, turn]})
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    # The client's own call is what the run does first: here it waits for its approval.
    [pending] = allowing.wait_for(run_id, awaiting)["pending"]
    assert pending["id"] == "mine"


def test_without_a_token_one_is_made_at_the_first_start_kept_0600_and_printed_once(
    serve: Callable[..., SourceServer], tmp_path: Path
) -> None:
    server = serve(env={TOKEN_ENV: ""})
    kept = tmp_path / ".toolgen-state" / SOURCE_PACKAGE / "token"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    token = kept.read_text(encoding="utf-8").strip()
    shown = re.findall(r"http://127\.0\.0\.1:(\d+)/#token=(\S+)", server.log())
    assert shown == [(str(server.port), token)], server.log()
    with _bare(server) as bare, _bare(server, Authorization=f"Bearer {token}") as client:
        assert bare.get("/runs").status_code == 401
        assert client.get("/runs").status_code == 200
        server.kill()
        server.start()
        assert client.get("/runs").status_code == 200
    assert server.log().count(token) == 1 and f"the token kept in {Path('.toolgen-state')}" in server.log()


def test_no_auth_is_for_loopback_only_and_keeps_the_boundary(
    serve: Callable[..., SourceServer], source_build: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(source_build)}
    (tmp_path / "bad-tokens").write_text("short-token read\n", encoding="utf-8")
    cases = [
        (["--host", "0.0.0.0", "--no-auth"], "allowed only on a loopback address"),
        (["--host", "192.0.2.1", "--no-auth"], "allowed only on a loopback address"),
        (["--no-auth", "--tokens", "t"], "--no-auth and --tokens exclude each other"),
        (["--allowed-origin", "http://x.example/path"], "is not http(s)://HOST[:PORT]"),
        (["--allowed-host", "x.example/path"], "is not a host name"),
    ]
    # All at once: each process is mostly the interpreter starting, and none depends on another.
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", SOURCE_PACKAGE, "serve", "--port", "1", *args],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in [*(args for args, _ in cases), ["--tokens", str(tmp_path / "bad-tokens")]]
    ]
    answers = [(process.communicate(timeout=120)[1], process.returncode) for process in processes]
    for (args, said), (stderr, code) in zip(cases, answers, strict=False):
        assert code == 2 and said in stderr, (args, stderr)
    stderr, code = answers[-1]
    assert code == 2 and "bad-tokens:1: a token needs at least 16 characters" in stderr

    server = serve("--no-auth")
    with _bare(server) as bare:
        assert bare.get("/runs").status_code == 200
        assert bare.post("/runs", json={"messages": [{"role": "user", "content": "hi"}]}).status_code == 201
        assert bare.get("/runs", headers={"Host": f"rebound.example:{server.port}"}).status_code == 421
        assert bare.get("/runs", headers={"Origin": "http://evil.example"}).status_code == 403
