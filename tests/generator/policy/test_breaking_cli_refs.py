"""`toolgen breaking` on the command line against a git revision, a directory or an exported snapshot, and bad refs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.projects import REPO_ROOT
from test_breaking_rules import CONFIG, T_PLAIN, U, arg, args, make

from toolgen.cli.main import main
from toolgen.policy.breaking.rules import RULES


def cli(*arguments: str) -> Any:
    return CliRunner().invoke(main, ["breaking", *arguments])


def git(repo: Path, *arguments: str) -> None:
    identity = ["-c", "user.name=toolgen", "-c", "user.email=toolgen@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, "-C", str(repo), *arguments], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with the project in a subfolder and two commits: the second removes an enum value."""
    root = tmp_path / "repo"
    project = make(root / "services" / "tools", arg({"type": "string", "enum": ["a", "b"]}))
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v1")
    make(root / "scratch", T_PLAIN)  # unrelated files elsewhere in the tree
    (project / "schemas" / "tools.json").write_text(json.dumps({"tools": [arg({"enum": ["a"]})]}), encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v2")
    return project


def test_git_revision(repo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolgen", "breaking", "--against", "HEAD~1"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "schemas/tools.json:1:81: error argument-enum-value-removed t: argument 'x' no longer accepts \"b\""
    ]
    assert "1 breaking change(s), 0 safe change(s) against HEAD~1" in done.stderr
    assert cli("-C", str(repo), "--against", "HEAD").exit_code == 0


def test_git_revision_against_the_working_tree(repo: Path) -> None:
    (repo / "schemas" / "tools.json").write_text(json.dumps({"tools": [arg({"enum": ["a", "c"]})]}), encoding="utf-8")
    quiet = cli("-C", str(repo), "--against", "HEAD")
    assert (quiet.exit_code, quiet.stdout) == (0, "")  # safe changes print only with --all
    loud = cli("-C", str(repo), "--against", "HEAD", "--all", "--format", "github")
    assert loud.exit_code == 0
    assert loud.stdout.startswith("::warning file=schemas/tools.json,line=1,col=")
    assert "title=argument-enum-value-added::t: argument 'x' now also accepts \"c\"" in loud.stdout


def test_git_revision_without_the_project_or_with_a_broken_one(repo: Path) -> None:
    root = repo.parent.parent
    git(root, "commit", "-q", "--allow-empty", "-m", "v3")
    first = subprocess.run(
        ["git", "-C", str(root), "rev-list", "--max-parents=0", "HEAD"], capture_output=True, text=True
    )
    (root / "elsewhere" / "schemas").mkdir(parents=True)
    (root / "elsewhere" / "toolgen.yaml").write_text(CONFIG, encoding="utf-8")
    # A project with no tools is refused before any comparison: this one has the same tools as the repo's.
    (root / "elsewhere" / "schemas" / "tools.json").write_text(
        (repo / "schemas" / "tools.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v4")
    missing = cli("-C", str(root / "elsewhere"), "--against", first.stdout.strip())
    # The pull request that adds toolgen: its base has no project, so every tool is added (a note says so).
    assert missing.exit_code == 0, missing.stdout
    assert "against-no-project" in missing.stdout
    good = (repo / "schemas" / "tools.json").read_text(encoding="utf-8")
    (repo / "schemas" / "tools.json").write_text("{oops", encoding="utf-8")
    git(root, "commit", "-q", "-am", "v5")
    (repo / "schemas" / "tools.json").write_text(good, encoding="utf-8")  # only the revision is broken
    broken = cli("-C", str(repo), "--against", "HEAD")
    assert broken.exit_code == 3
    assert broken.stdout.startswith("HEAD:schemas/tools.json:1:2: error syntax")


def test_directory_ref(tmp_path: Path) -> None:
    old = make(tmp_path / "old", args({"a": {"type": "string"}, "b": {"type": "string"}}))
    new = make(tmp_path / "new", T_PLAIN)
    done = cli("-C", str(new), "--against", str(old), "--format", "json")
    assert done.exit_code == 1
    (finding,) = json.loads(done.stdout)
    assert (finding["rule"], finding["severity"], finding["pointer"]) == (
        "argument-removed",
        "error",
        "/tools/0/inputSchema/properties",
    )
    assert cli("-C", str(new), "--against", str(new)).exit_code == 0


def test_exported_snapshot_ref(tmp_path: Path) -> None:
    project = make(tmp_path / "p", [args({"a": {"type": "string"}}, ("a",)), U])
    snapshot = tmp_path / "baseline.json"
    assert cli("-C", str(project), "--export", str(snapshot)).exit_code == 0
    printed = cli("-C", str(project), "--export", "-")
    assert printed.stdout == snapshot.read_text(encoding="utf-8")  # stable: the same text twice
    data = json.loads(printed.stdout)
    assert [t["name"] for t in data["tools"]] == ["t", "u"]
    assert data["tools"][0]["inputSchema"]["required"] == ["a"]
    assert cli("-C", str(project), "--against", str(snapshot)).exit_code == 0
    (project / "schemas" / "tools.json").write_text(json.dumps({"tools": [T_PLAIN]}), encoding="utf-8")
    done = cli("-C", str(project), "--against", str(snapshot), "--all")
    assert done.exit_code == 1
    lines = done.stdout.splitlines()
    # where the removed tool was when the snapshot was taken, labeled with the snapshot
    assert (
        lines[0]
        == f"{snapshot}:schemas/tools.json:18:12: error tool-removed tool 'u' was removed (it was defined here, in {snapshot})"
    )
    assert any("warning argument-made-optional t: argument 'a' is now optional" in line for line in lines)


def test_bad_refs_exit_3(tmp_path: Path) -> None:
    project = make(tmp_path / "p", T_PLAIN)
    done = cli("-C", str(project), "--against", "no-such-branch")
    assert done.exit_code == 3
    assert done.stdout.startswith(
        "--against:1:1: error against-ref 'no-such-branch' is not a file, a directory or a git"
    )
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "toolgen-breaking-snapshot", "version": 1, "tools": [{"name": 5}]}', encoding="utf-8")
    done = cli("-C", str(project), "--against", str(bad))
    assert done.exit_code == 3
    assert "snapshot-invalid tool entry 0: 'name' is missing or invalid" in done.stdout
    bad.write_text("[1, 2", encoding="utf-8")
    assert cli("-C", str(project), "--against", str(bad)).exit_code == 3
    assert cli("-C", str(project), "--against", str(tmp_path)).exit_code == 3  # a directory without toolgen.yaml


def test_usage_needs_one_of_against_or_export(tmp_path: Path) -> None:
    project = make(tmp_path / "p", T_PLAIN)
    assert cli("-C", str(project)).exit_code == 2
    assert cli("-C", str(project), "--against", "HEAD", "--export", "-").exit_code == 2


def test_the_cli_page_lists_every_rule_with_its_severity() -> None:
    # The severity a rule has in RULES is what test_breaking_rules checks findings against; this holds it to the
    # documented one, so a rule cannot turn from breaking to safe (or back) without docs/cli.md saying so.
    page = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = page.split("<!-- breaking-rules -->", 1)[1].split("<!-- /breaking-rules -->", 1)[0]
    listed = dict(re.findall(r"^\| `([a-z-]+)` \| (error|warning) \|", table, re.MULTILINE))
    assert listed == {rule: RULES[rule].severity.value for rule in RULES}
