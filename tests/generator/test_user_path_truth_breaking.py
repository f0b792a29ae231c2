"""`toolgen breaking --against origin/main` on the pull request that adds toolgen to a repository: the base has no
project, so every tool is added (exit 0, with a note); an annotation about the `--against` option names no file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.cli_in_process import toolgen_in

from toolgen import api

TOOL = "name: ping\ndescription: Ping.\ninputSchema: {type: object}\n"
CONFIG = "version: v1\npackage: sdk\noutput: generated\ninputs:\n  - schemas/*.yaml\n"


def _git(repo: Path, *arguments: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, "-C", str(repo), *arguments], check=True, capture_output=True)


def _first_pull_request(tmp_path: Path) -> Path:
    """A repository whose `origin/main` has no toolgen project, on the branch that adds one."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README").write_text("hi\n", encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    _git(repo, "checkout", "-q", "-b", "add-toolgen")
    (repo / "toolgen.yaml").write_text(CONFIG, encoding="utf-8")
    (repo / "schemas").mkdir()
    (repo / "schemas" / "ping.yaml").write_text(TOOL, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "add toolgen")
    return repo


NOTE = "'origin/main' has no toolgen.yaml: the base had no project, so every tool counts as added (tool-added)"


def test_a_base_without_the_project_has_every_tool_added(tmp_path: Path) -> None:
    repo = _first_pull_request(tmp_path)
    github = toolgen_in(repo, "breaking", "--against", "origin/main", "--format", "github")
    assert github.returncode == 0, github.stdout + github.stderr
    assert github.stdout == f"::warning file=toolgen.yaml,line=1,col=1,title=against-no-project::{NOTE}\n"
    assert github.stderr == "toolgen: 0 breaking change(s), 1 safe change(s) against origin/main\n"
    shown = toolgen_in(repo, "breaking", "--against", "origin/main", "--all")
    # Printed in file order, as every verb prints its findings.
    assert shown.stdout.splitlines() == [
        "schemas/ping.yaml:1:1: warning tool-added new tool 'ping'",
        f"toolgen.yaml:1:1: warning against-no-project {NOTE}",
    ]
    as_json = json.loads(toolgen_in(repo, "breaking", "--against", "origin/main", "--format", "json").stdout)
    assert [finding["rule"] for finding in as_json] == ["tool-added", "against-no-project"]
    found = api.breaking("origin/main", root=repo)
    assert [(d.rule, d.severity.value) for d in found] == [("against-no-project", "warning"), ("tool-added", "warning")]


def test_a_directory_without_the_project_is_still_a_wrong_path(tmp_path: Path) -> None:
    repo = _first_pull_request(tmp_path)
    done = toolgen_in(repo, "breaking", "--against", str(tmp_path))
    assert done.returncode == 3
    assert f"'{tmp_path}' has no toolgen.yaml for this project" in done.stdout


def test_an_annotation_about_the_against_option_names_no_file(tmp_path: Path) -> None:
    repo = _first_pull_request(tmp_path)
    done = toolgen_in(repo, "breaking", "--against", "origin/mian", "--format", "github")
    assert done.returncode == 3
    assert done.stdout == (
        "::error title=against-ref::--against: 'origin/mian' is not a file, a directory or a git revision of the "
        f"repository at {repo}\n"
    )
