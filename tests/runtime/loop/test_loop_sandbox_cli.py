"""The demo tools' sandbox and todo lists, and `python -m <package>` running the loop offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support.projects import SOURCE_PACKAGE, Project
from test_loop_calls import USER, call
from test_loop_events_replay import parse_sse

# ---- the demo sandbox ----


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("hello\nworld\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("do not read", encoding="utf-8")
    (root / "escape").symlink_to(tmp_path / "secret.txt")
    return root


def test_the_sandbox_runs_allowlisted_programs_inside_the_workspace(sdk: SimpleNamespace, workspace: Path) -> None:
    sandbox = sdk.demo.Sandbox(workspace)
    assert sandbox.run("cat", ["notes.txt"])["stdout"] == "hello\nworld\n"
    assert sandbox.run("head", ["-n", "1", "notes.txt"])["stdout"] == "hello\n"
    assert sandbox.run("grep", ["-n", "wor", "notes.txt"])["stdout"] == "2:world\n"
    assert sandbox.run("wc", ["-l", "sub/../notes.txt"])["stdout"].split()[0] == "2"
    assert sandbox.run("ls", ["-la"], cwd="sub")["exit_code"] == 0
    assert sandbox.run("echo", ["$(whoami)", ";", "rm", "-rf", "/"])["stdout"] == "$(whoami) ; rm -rf /\n"
    missing = sandbox.run("cat", ["nope.txt"])
    assert missing["exit_code"] != 0 and "nope.txt" in missing["stderr"]


@pytest.mark.parametrize(
    ("program", "args", "cwd", "reason"),
    [
        ("python", ["-c", "print(1)"], ".", "not an allowed program"),
        ("git", ["status"], ".", "not an allowed program"),
        ("sh", ["-c", "ls"], ".", "not an allowed program"),
        ("cat", ["../secret.txt"], ".", "outside the workspace"),
        ("cat", ["sub/../../secret.txt"], ".", "outside the workspace"),
        ("cat", ["/etc/passwd"], ".", "outside the workspace"),
        ("cat", ["escape"], ".", "outside the workspace"),
        ("ls", [], "..", "outside the workspace"),
        ("ls", [], "/", "outside the workspace"),
        ("grep", ["--file=/etc/passwd", "x"], ".", "long options"),
        ("grep", ["-f", "/etc/passwd", "notes.txt"], ".", "option -f"),
        ("grep", ["root", "/etc/passwd"], ".", "outside the workspace"),
        ("grep", ["-e", "x", "/etc/passwd"], ".", "outside the workspace"),
        ("tail", ["-f", "notes.txt"], ".", "option -f"),
        ("date", ["010100002030"], ".", "takes no argument"),
        ("cat", ["--", "/etc/passwd"], ".", "outside the workspace"),
        ("cat", ["a\x00b"], ".", "NUL"),
    ],
)
def test_the_sandbox_refuses(
    sdk: SimpleNamespace, workspace: Path, program: str, args: list[str], cwd: str, reason: str
) -> None:
    with pytest.raises(sdk.demo.SandboxRefusal, match=reason):
        sdk.demo.Sandbox(workspace).run(program, args, cwd)


def test_the_sandbox_caps_output_and_stops_slow_programs(sdk: SimpleNamespace, workspace: Path) -> None:
    (workspace / "big.txt").write_text("x" * 5000, encoding="utf-8")
    capped = sdk.demo.Sandbox(workspace, output_cap=100).run("cat", ["big.txt"])
    assert capped["truncated"] is True and capped["stdout"] == "x" * 100
    os.mkfifo(workspace / "pipe")  # opening a FIFO with no writer blocks forever
    with pytest.raises(sdk.demo.CommandTimeout, match="did not finish within 0.3 seconds"):
        sdk.demo.Sandbox(workspace, timeout=0.3).run("cat", ["pipe"])


def test_run_command_through_the_loop_reports_refusals_to_the_model(sdk: SimpleNamespace, workspace: Path) -> None:
    tools = sdk.package.Tools()
    bound = sdk.demo.bind_demo_handlers(tools, workspace)
    assert sorted(bound) == list(sdk.demo.DEMO_TOOLS) and not tools.unbound()
    calls = [
        call(sdk, "run_command", {"program": "tail", "args": ["-f", "notes.txt"]}, "bad"),
        call(sdk, "run_command", {"program": "cat", "args": ["../secret.txt"]}, "escape"),
        call(sdk, "run_command", {"program": "cat", "args": ["notes.txt"]}, "good"),
    ]
    model = sdk.runtime.ScriptedModel([sdk.runtime.assistant_turn(None, *calls), "done"])
    result = sdk.runtime.run(USER, model, tools, approve=lambda request: True)
    by_id = {r.call_id: r for r in result.calls}
    assert "option -f is not allowed" in by_id["bad"].content and by_id["bad"].status == "error"
    assert "outside the workspace" in by_id["escape"].content
    assert json.loads(by_id["good"].content)["stdout"] == "hello\nworld\n"


def test_demo_todo_lists_belong_to_their_conversation(sdk: SimpleNamespace, workspace: Path) -> None:
    tools = sdk.package.Tools()
    sdk.demo.bind_demo_handlers(tools, workspace)
    todo = {"id": "1", "content": "buy milk", "status": "pending"}
    write = sdk.runtime.assistant_turn(None, call(sdk, "todo_write", {"todos": [todo]}, "t1"))
    read = sdk.runtime.assistant_turn(None, call(sdk, "todo_read", {}, "t2"))
    sdk.runtime.run(USER, sdk.runtime.ScriptedModel([write, "ok"]), tools, conversation_id="alice")
    alice = sdk.runtime.run(USER, sdk.runtime.ScriptedModel([read, "ok"]), tools, conversation_id="alice")
    bob = sdk.runtime.run(USER, sdk.runtime.ScriptedModel([read, "ok"]), tools, conversation_id="bob")
    assert json.loads(alice.calls[0].content) == {"todos": [todo]}
    assert json.loads(bob.calls[0].content) == {"todos": []}


# ---- python -m <package> ----


def cli(cwd: Path, *args: str, package: str = SOURCE_PACKAGE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", package, *args], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )


def test_python_m_package_runs_the_loop_offline_and_prints_the_answer(source_build: Path) -> None:
    result = cli(source_build, "What's the weather in Paris?")
    assert result.returncode == 0, result.stderr
    assert "get_current_weather returned: location: Paris, temperature: 18.0" in result.stdout
    order = cli(source_build, "Where is order AB-123456?")
    assert order.returncode == 0 and order.stdout == "Order AB-123456: shipped, arriving in 2 days.\n"


def test_python_m_package_prints_the_sse_event_stream(sdk: SimpleNamespace, source_build: Path) -> None:
    result = cli(source_build, "--events", "--stream", "weather in Oslo and Lima")
    assert result.returncode == 0, result.stderr
    frames = parse_sse(sdk, result.stdout)
    types = [name for name, _ in frames]
    assert types[0] == "run_started" and types[-1] == "run_finished"
    assert types.count("tool_call_finished") == 2 and "text_delta" in types
    assert len({json.loads(data)["conversation_id"] for _, data in frames}) == 1


def test_python_m_package_denies_approval_without_a_person_and_approves_with_yes(source_build: Path) -> None:
    denied = cli(source_build, "list the files in the workspace")
    assert denied.returncode == 0 and "run_command failed" in denied.stdout and "--yes" in denied.stdout
    approved = cli(source_build, "--yes", "list the files in the workspace")
    assert approved.returncode == 0 and "notes.txt" in approved.stdout


def test_python_m_package_for_a_project_without_demo_tools_reports_unbound_tools(make_project: Any) -> None:
    project: Project = make_project("crm_sdk")
    project.write(
        "schemas/crm.yaml",
        """\
        tools:
          - name: lookup_customer
            description: Find a customer.
            inputSchema:
              type: object
              properties:
                email: {type: string}
                tier: {type: string, enum: [gold, silver]}
              required: [email, tier]
        """,
    )
    assert project.cli("build").returncode == 0
    result = cli(project.root / "generated", "Who is ada@example.com?", package="crm_sdk")
    assert result.returncode == 0, result.stderr
    assert (
        "lookup_customer failed: Error: no handler is bound for the tool 'lookup_customer', so it did not run"
        in result.stdout
    )
    usage = cli(project.root / "generated", "--base-url", "http://127.0.0.1:9/v1", "hi", package="crm_sdk")
    assert usage.returncode == 2 and "--model is required" in usage.stderr
