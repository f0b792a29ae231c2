"""Every snippet the site shows runs (Python and shell) or is checked (data), against a package built for the docs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.docs_site import PROJECT_TOOLS, SNIPPETS, run_in, snippet_files
from support.projects import REPO_ROOT

from toolgen.api import decode
from toolgen.project.config import load_config

PYTHON = snippet_files(".py")
SHELL = snippet_files(".sh")
DATA = snippet_files(".yaml", ".yml", ".json", ".toml")
# A snippet is a short example: one that takes longer is stuck (a server left running, a wait with no end).
SNIPPET_SECONDS = 120
DECODED_SUFFIXES = (".request.json", ".response.json", ".chunks.json", ".message.json")


def _name(path: Path) -> str:
    return str(path.relative_to(SNIPPETS))


def _ran(ran: subprocess.CompletedProcess[str], snippet: Path) -> str:
    return f"{_name(snippet)} exited {ran.returncode}\n--- stdout\n{ran.stdout}\n--- stderr\n{ran.stderr}"


def _expected_output(snippet: Path, stdout: str) -> None:
    expected = snippet.with_suffix(".out")
    if expected.is_file():
        assert stdout == expected.read_text(encoding="utf-8"), f"{_name(snippet)}: its output is not {_name(expected)}"


@pytest.mark.parametrize("snippet", PYTHON, ids=_name)
def test_python_snippet_runs(snippet: Path, docs_project: Path) -> None:
    ran = run_in(docs_project, sys.executable, str(snippet), seconds=SNIPPET_SECONDS)
    assert ran.returncode == 0, _ran(ran, snippet)
    _expected_output(snippet, ran.stdout)


@pytest.mark.parametrize("snippet", SHELL, ids=_name)
def test_shell_snippet_runs(snippet: Path, tmp_path: Path) -> None:
    ran = run_in(tmp_path, "bash", "-euo", "pipefail", str(snippet), seconds=SNIPPET_SECONDS)
    assert ran.returncode == 0, _ran(ran, snippet)
    _expected_output(snippet, ran.stdout)


def _data_rule(path: Path) -> str | None:
    """How a data snippet is checked: 'config', 'decode', 'read' (a runnable snippet of its page reads it), or None."""
    if path.name.startswith("toolgen") and path.suffix in (".yaml", ".yml"):
        return "config"
    if path.name.endswith(DECODED_SUFFIXES):
        return "decode"
    page = path.relative_to(SNIPPETS).parts[0]
    readers = [*(SNIPPETS / page).rglob("*.py"), *(SNIPPETS / page).rglob("*.sh")]
    if any(path.name in reader.read_text(encoding="utf-8") for reader in readers):
        return "read"
    return None


@pytest.mark.parametrize("data", DATA, ids=_name)
def test_data_snippet_is_checked(data: Path, tmp_path: Path) -> None:
    rule = _data_rule(data)
    assert rule is not None, (
        f"{_name(data)}: no check covers it: name it toolgen*.yaml (a config), *.request.json/*.response.json/"
        "*.chunks.json/*.message.json (decoded), or read it from a .py or .sh snippet of the same page"
    )
    if rule == "config":
        (tmp_path / "schemas" / "tools").mkdir(parents=True)
        config = load_config(tmp_path, data)
        assert config.package
    elif rule == "decode":
        decoded = decode(data, root=REPO_ROOT)
        assert decoded is not None
        json.dumps(decoded, default=str)


def test_the_docs_project_builds_every_project_tool(docs_project: Path) -> None:
    manifest = json.loads((docs_project / "generated" / "toolgen_sdk" / "toolgen-manifest.json").read_text("utf-8"))
    text = json.dumps(manifest)
    assert "get_current_weather" in text
    for tool in sorted(PROJECT_TOOLS.glob("*.yaml")) if PROJECT_TOOLS.is_dir() else []:
        assert tool.name in text, f"{tool.name} is not among the built project's inputs"


def test_the_snippet_checks_find_a_failing_snippet(docs_project: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("from toolgen_sdk import no_such_function\n", encoding="utf-8")
    ran = run_in(docs_project, sys.executable, str(broken), seconds=SNIPPET_SECONDS)
    assert ran.returncode != 0
    assert "no_such_function" in ran.stderr
