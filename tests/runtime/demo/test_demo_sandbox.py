"""The demo's run_command sandbox bounded: memory and CPU per call, options refused in every spelling, and the
programs the run_command schema offers being exactly those the sandbox runs."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import yaml
from support.projects import REPO_ROOT


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    """The package built from the repo's own project, its runtime and its demo modules."""
    name = source_package.__name__
    return SimpleNamespace(
        package=source_package,
        runtime=importlib.import_module(f"{name}._runtime"),
        sandbox=importlib.import_module(f"{name}._runtime.demo.sandbox"),
        handlers=importlib.import_module(f"{name}._runtime.demo.handlers"),
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "notes.txt").write_text("hello\nworld\n", encoding="utf-8")
    (root / "a.txt").write_text("a" * 40 + "\n", encoding="utf-8")
    return root


def _asking(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


# Regular expressions whose compiled form grows past any memory: unbounded, GNU grep reaches gigabytes on a
# 40-byte file. One ends in an abort, the other in "memory exhausted".
BOMBS = ["((a{1,100}){1,100}){1,100}", "a{1,32767}{1,32767}"]


@pytest.mark.parametrize("pattern", BOMBS)
def test_a_grep_bomb_is_stopped_by_the_memory_limit(sdk: SimpleNamespace, workspace: Path, pattern: str) -> None:
    before = sorted(p.name for p in workspace.iterdir())
    with pytest.raises(sdk.sandbox.CommandOutOfMemory, match="grep needed more than the sandbox's 256 MB"):
        sdk.sandbox.Sandbox(workspace).run("grep", ["-E", pattern, "a.txt"])
    # An abort at the limit leaves no core file in the workspace.
    assert sorted(p.name for p in workspace.iterdir()) == before
    smaller = sdk.sandbox.Sandbox(workspace, memory=64 * 2**20)
    with pytest.raises(sdk.sandbox.CommandOutOfMemory, match="64 MB"):
        smaller.run("grep", ["-E", pattern, "a.txt"])
    # The limit is per call: the next command runs as usual.
    assert smaller.run("grep", ["-c", "a", "a.txt"])["stdout"] == "1\n"


def test_the_model_hears_why_its_command_was_stopped(sdk: SimpleNamespace, workspace: Path) -> None:
    tools = sdk.package.Tools()
    sdk.handlers.bind_demo_handlers(tools, workspace)
    bomb = sdk.runtime.tool_call("run_command", {"program": "grep", "args": ["-E", BOMBS[0], "a.txt"]}, id="b")
    model = sdk.runtime.ScriptedModel([sdk.runtime.assistant_turn(None, bomb), "done"])
    result = sdk.runtime.run(_asking("search"), model, tools, approve=lambda request: True)
    [call] = result.calls
    assert call.status == "error" and "256 MB of memory" in call.content


# Each refused option in the spellings GNU getopt_long and the programs themselves read.
REFUSED = [
    # tail -f follows forever: short, clustered, after an operand, long, long with a value, abbreviated, old forms.
    ("tail", ["-f", "notes.txt"], "option -f"),
    ("tail", ["-n1f", "notes.txt"], None),  # -n's value is "1f": tail refuses the number, nothing follows
    ("tail", ["notes.txt", "-f"], "option -f"),
    ("tail", ["-n", "1", "-f", "notes.txt"], "option -f"),
    ("tail", ["--follow", "notes.txt"], "long option --follow"),
    ("tail", ["--follow=name", "notes.txt"], "long option --follow"),
    ("tail", ["--fo", "notes.txt"], "never abbreviated"),
    ("tail", ["--f", "notes.txt"], "never abbreviated"),
    ("tail", ["-F", "notes.txt"], "option -F"),
    ("tail", ["+1f", "notes.txt"], "old form '\\+1f'"),
    ("tail", ["+1f"], "old form"),
    ("tail", ["+1f", "--", "notes.txt"], "old form"),
    ("tail", ["-1f", "notes.txt"], "option -1"),
    ("tail", ["-cf", "notes.txt"], "old form '-cf'"),
    ("tail", ["+5", "notes.txt"], "old form"),
    ("tail", ["--lines", "1", "--pid=1", "notes.txt"], "long option --pid"),
    # grep -f reads patterns from a file, anywhere.
    ("grep", ["-f", "/etc/passwd", "notes.txt"], "option -f"),
    ("grep", ["-cf", "/etc/passwd", "notes.txt"], "option -f"),
    ("grep", ["-if/etc/passwd", "notes.txt"], "option -f"),
    ("grep", ["x", "notes.txt", "-f", "/etc/passwd"], "option -f"),
    ("grep", ["--file=/etc/passwd", "notes.txt"], "long option --file"),
    ("grep", ["--file", "/etc/passwd", "notes.txt"], "long option --file"),
    ("grep", ["--fil=/etc/passwd", "notes.txt"], "never abbreviated"),
    ("grep", ["--reg=x", "/etc/passwd"], "never abbreviated"),  # --regexp abbreviated is refused too
    ("grep", ["-R", "x"], "option -R"),
    ("grep", ["--exclude-from=/etc/passwd", "x"], "long option --exclude-from"),
    ("grep", ["-e", "x", "--", "/etc/passwd"], "outside the workspace"),
    ("grep", ["--regexp=x", "/etc/passwd"], "outside the workspace"),
    ("grep", ["--regexp", "x", "/etc/passwd"], "outside the workspace"),
    ("grep", ["-nex", "/etc/passwd"], "outside the workspace"),
    ("grep", ["--", "-f", "/etc/passwd"], "outside the workspace"),
    ("grep", ["--count=1", "x", "notes.txt"], "takes no value"),
    # Long options other programs would read a file with, or write a date with.
    ("wc", ["--files0-from=/etc/passwd"], "long option --files0-from"),
    ("wc", ["--files0", "/etc/passwd"], "never abbreviated"),
    ("cat", ["-v", "notes.txt"], "option -v"),
    ("cat", ["--show-all=yes", "notes.txt"], "takes no value"),
    ("cat", ["--", "-n", "/etc/passwd"], "outside the workspace"),
    ("ls", ["-L"], "option -L"),
    ("ls", ["--dereference"], "long option --dereference"),
    ("ls", ["-aI", "x"], "option -I"),
    ("head", ["-5", "notes.txt"], "option -5"),
    ("head", ["--lin=1", "notes.txt"], "never abbreviated"),
    ("date", ["-s", "2030-01-01"], "option -s"),
    ("date", ["-us", "2030-01-01"], "option -s"),
    ("date", ["--set=2030-01-01"], "long option --set"),
    ("date", ["--se=2030-01-01"], "never abbreviated"),
    ("date", ["-f", "/etc/passwd"], "option -f"),
    ("date", ["--", "010100002030"], "takes no argument"),
    ("pwd", ["-P"], "option -P"),
]


@pytest.mark.parametrize(("program", "args", "reason"), REFUSED)
def test_a_refused_option_is_refused_in_every_spelling(
    sdk: SimpleNamespace, workspace: Path, program: str, args: list[str], reason: str | None
) -> None:
    sandbox = sdk.sandbox.Sandbox(workspace, timeout=30)
    if reason is None:
        # A spelling getopt reads as an allowed option: it runs, and ends at once.
        assert sandbox.run(program, args)["exit_code"] != 0
        return
    with pytest.raises(sdk.sandbox.SandboxRefusal, match=reason):
        sandbox.run(program, args)


@pytest.mark.parametrize(
    ("program", "spellings"),
    [
        ("tail", [["-n", "1"], ["-n1"], ["--lines=1"], ["--lines", "1"], ["notes.txt", "-n", "1"]]),
        ("head", [["-c", "3"], ["-c3"], ["--bytes=3"], ["--bytes", "3"]]),
        ("grep", [["-n", "-e", "wor"], ["-ne", "wor"], ["--line-number", "--regexp=wor"], ["-n", "--", "wor"]]),
        ("wc", [["-l"], ["--lines"]]),
        ("cat", [["-n"], ["--number"]]),
    ],
)
def test_allowed_options_run_in_every_spelling(
    sdk: SimpleNamespace, workspace: Path, program: str, spellings: list[list[str]]
) -> None:
    sandbox = sdk.sandbox.Sandbox(workspace)
    outputs = []
    for spelling in spellings:
        args = spelling if "notes.txt" in spelling else [*spelling, "notes.txt"]
        result = sandbox.run(program, args)
        assert result["exit_code"] == 0, (spelling, result)
        outputs.append(result["stdout"])
    assert len(set(outputs)) == 1 and outputs[0], outputs


# One ordinary call of each program, and a line of what it prints.
ORDINARY = {
    "cat": (["notes.txt"], "hello\nworld\n"),
    "date": (["-u", "+%Z"], "UTC\n"),
    "echo": (["hi"], "hi\n"),
    "grep": (["wor", "notes.txt"], "world\n"),
    "head": (["-n", "1", "notes.txt"], "hello\n"),
    "ls": ([], "notes.txt"),
    "pwd": ([], "work\n"),
    "tail": (["-n", "1", "notes.txt"], "world\n"),
    "wc": (["-l", "notes.txt"], "2 notes.txt\n"),
}


def test_every_program_the_schema_offers_runs(sdk: SimpleNamespace, workspace: Path) -> None:
    written = yaml.safe_load((REPO_ROOT / "schemas" / "tools" / "run_command.yaml").read_text(encoding="utf-8"))
    offered = written["tools"][0]["inputSchema"]["properties"]["program"]["enum"]
    assert sorted(offered) == sorted(sdk.sandbox.PROGRAM_OPTIONS) == sorted(ORDINARY)
    tools = sdk.package.Tools()
    sdk.handlers.bind_demo_handlers(tools, workspace)
    assert tools.run_command.spec.input_schema["properties"]["program"]["enum"] == offered
    calls = [
        sdk.runtime.tool_call("run_command", {"program": program, "args": ORDINARY[program][0]}, id=program)
        for program in offered
    ]
    model = sdk.runtime.ScriptedModel([sdk.runtime.assistant_turn(None, *calls), "done"])
    result = sdk.runtime.run(_asking("run them all"), model, tools, approve=lambda request: True)
    for call in result.calls:
        assert call.status == "ok", (call.call_id, call.content)
        output: dict[str, Any] = json.loads(call.content)
        assert output["exit_code"] == 0 and ORDINARY[call.call_id][1] in output["stdout"], (call.call_id, output)
    # What the schema does not offer is refused before the sandbox is asked.
    refused = sdk.runtime.tool_call("run_command", {"program": "python", "args": ["-c", "1"]}, id="py")
    model = sdk.runtime.ScriptedModel([sdk.runtime.assistant_turn(None, refused), "done"])
    [call] = sdk.runtime.run(_asking("run python"), model, tools, approve=lambda request: True).calls
    assert call.status == "error" and "python" in call.content
