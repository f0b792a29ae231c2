"""Ctrl-C as the command line loads or starts is one line and exit 130; an output file is whole or named unwritable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli_in_process import toolgen_in
from support.projects import Project, default_sigint

# --- Ctrl-C --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("click", ["build"]),  # while the command line's own imports load
        ("toolgen.cli.main", ["build"]),
        ("toolgen.output.drift", ["build"]),  # inside the command (toolgen.api loading), once click runs it
        ("toolgen.ir.lower", ["build", "--force"]),  # a stage the command imports as it runs
        ("jinja2", ["build", "--force"]),
        ("toolgen.payloads.codec", ["decode", "-"]),
    ],
)
def test_ctrl_c_while_the_command_line_loads_or_starts_is_one_line_and_exit_130(
    project: Project, module: str, argv: list[str]
) -> None:
    # A real SIGINT, sent by the process to itself the moment it first imports `module`: the early moments of
    # a run, hit deterministically rather than by racing a timer.
    script = (
        "import builtins, os, signal, sys\n"
        "real = builtins.__import__\n"
        "def interrupting(name, *args, **kwargs):\n"
        f"    if name == {module!r} and name not in sys.modules:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupting\n"
        f"sys.argv = ['toolgen', *{argv!r}]\n"
        "from toolgen.__main__ import run\n"
        "run()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=project.root,
        input="",
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=default_sigint,
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == 130, result.stderr
    assert result.stderr.splitlines()[-1] == "toolgen: interrupted; nothing was written"
    assert len(result.stderr.splitlines()) == 1, result.stderr


@pytest.mark.parametrize("verb", [("export", "--format", "openai"), ("breaking", "--export")])
def test_an_output_file_in_a_folder_that_does_not_exist_is_named_not_an_internal_error(
    project: Project, verb: tuple[str, ...]
) -> None:
    result = toolgen_in(project.root, *verb, *(["-o"] if verb[0] == "export" else []), "no/such/folder/out.json")
    assert result.returncode == 4, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "toolgen: cannot write no/such/folder/out.json: No such file or directory; its folder does not exist: "
        "create it first"
    )
    assert "internal error" not in result.stderr
    assert not (project.root / "no").exists()


def test_an_output_file_is_whole_and_keeps_its_mode(project: Project, tmp_path: Path) -> None:
    target = project.root / "tools.json"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    result = toolgen_in(project.root, "export", "--format", "openai", "-o", "tools.json")
    assert result.returncode == 0, result.stderr
    assert json.loads(target.read_text(encoding="utf-8"))[0]["type"] == "function"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in project.root.iterdir() if p.name.startswith(".tools.json")) == []
