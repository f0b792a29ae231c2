"""The pre-commit hooks as declared in .pre-commit-hooks.yaml, run on a fresh `toolgen init` project: with their
defaults they pass, and toolgen-validate is fed recordings only, never toolgen-manifest.json or other JSON."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.projects import REPO_ROOT

HOOKS: list[dict[str, Any]] = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
# Where `toolgen` is when the hooks run: this interpreter's scripts, as a hook's own environment would have it.
ENV = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
MESSAGE = {"role": "user", "content": "What's the weather in Paris?"}


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=ENV, check=False)


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    """`toolgen init` and `toolgen build` in a new git repository, every file staged."""
    root = tmp_path / "fresh"
    root.mkdir()
    for step in (("git", "init", "-q"), ("toolgen", "init"), ("toolgen", "build"), ("git", "add", "-A")):
        done = run(root, *step)
        assert done.returncode == 0, (step, done.stdout, done.stderr)
    return root


def tracked(root: Path) -> list[str]:
    listed = run(root, "git", "ls-files")
    assert listed.returncode == 0, listed.stderr
    return listed.stdout.splitlines()


def selected(hook: dict[str, Any], files: list[str]) -> list[str]:
    """The files pre-commit hands a hook: `files` and `exclude` searched in each path (re.search), and the
    default `types: [file]` (every tracked path here is a file)."""
    include, exclude = re.compile(hook.get("files", "")), re.compile(hook.get("exclude", "^$"))
    return [name for name in files if include.search(name) and not exclude.search(name)]


def run_hook(root: Path, hook: dict[str, Any], files: list[str]) -> subprocess.CompletedProcess[str] | None:
    """The hook's command as pre-commit runs it, or None when pre-commit would skip it (no file matched)."""
    chosen = selected(hook, files)
    if not chosen and not hook.get("always_run", False):
        return None
    names = chosen if hook.get("pass_filenames", True) else []
    return run(root, *shlex.split(hook["entry"]), *hook.get("args", []), *names)


def test_every_hook_passes_on_a_fresh_project(fresh: Path) -> None:
    files = tracked(fresh)
    assert "generated/toolgen_sdk/toolgen-manifest.json" in files
    ran = {}
    for hook in HOOKS:
        result = run_hook(fresh, hook, files)
        ran[hook["id"]] = result is not None
        assert result is None or result.returncode == 0, (hook["id"], result.stdout, result.stderr)
    assert ran == {"toolgen-check": True, "toolgen-lint": True, "toolgen-validate": False}


def test_validate_hook_takes_recordings_and_never_the_manifest(fresh: Path) -> None:
    hook = next(h for h in HOOKS if h["id"] == "toolgen-validate")
    recordings = fresh / "recordings"
    recordings.mkdir()
    (recordings / "good.json").write_text(json.dumps([MESSAGE]), encoding="utf-8")
    (fresh / "package.json").write_text('{"name": "web"}', encoding="utf-8")
    (fresh / "schemas" / "tools" / "extra.json").write_text('{"tools": []}', encoding="utf-8")
    assert run(fresh, "git", "add", "-A").returncode == 0
    files = tracked(fresh)
    assert selected(hook, files) == ["recordings/good.json"]
    passed = run_hook(fresh, hook, files)
    assert passed is not None and passed.returncode == 0, passed.stdout + passed.stderr
    (recordings / "bad.json").write_text(json.dumps([{"role": "tool", "content": "18 C"}]), encoding="utf-8")
    failed = run_hook(fresh, hook, [*files, "recordings/bad.json"])
    assert failed is not None and failed.returncode == 1
    assert failed.stdout.startswith("recordings/bad.json:1:2: error payload-invalid /0/tool_call_id")
    # A project that widens `files` to every JSON file still never hands the hook toolgen's manifest.
    widened = {**hook, "files": r"\.json$"}
    assert "generated/toolgen_sdk/toolgen-manifest.json" not in selected(widened, files)


@pytest.mark.skipif(shutil.which("pre-commit", path=ENV["PATH"]) is None, reason="pre-commit is not installed")
def test_pre_commit_run_all_files_passes_on_a_fresh_project(fresh: Path, tmp_path: Path) -> None:
    """A real `pre-commit run --all-files`: the declared hooks as local hooks on the installed toolgen
    (`language: system`, so nothing is downloaded), their files, exclude, args and pass_filenames as declared."""
    local = [{**hook, "language": "system"} for hook in HOOKS]
    config = {"repos": [{"repo": "local", "hooks": local}]}
    (fresh / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    assert run(fresh, "git", "add", "-A").returncode == 0
    env = {**ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    result = subprocess.run(
        [shutil.which("pre-commit", path=ENV["PATH"]) or "pre-commit", "run", "--all-files", "--color", "never"],
        cwd=fresh,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = {line.split(".")[0]: line for line in result.stdout.splitlines() if "." in line}
    assert lines["toolgen check"].endswith("Passed")
    assert lines["toolgen lint"].endswith("Passed")
    assert lines["toolgen validate"].endswith("(no files to check)Skipped")


def readme_pre_commit_config() -> str:
    return (REPO_ROOT / "docs" / "snippets" / "ci" / "pre-commit-config.yaml").read_text(encoding="utf-8")


def test_the_readmes_local_hooks_say_what_the_declared_hooks_say() -> None:
    local = yaml.safe_load(readme_pre_commit_config())["repos"][0]
    assert local["repo"] == "local"
    declared = {hook["id"]: hook for hook in HOOKS}
    for hook in local["hooks"]:
        assert hook["language"] == "system", hook
        assert hook["entry"].split()[:2] == declared[hook["id"]]["entry"].split(), hook
        assert hook.get("pass_filenames", True) == declared[hook["id"]].get("pass_filenames", True), hook


@pytest.mark.skipif(shutil.which("pre-commit", path=ENV["PATH"]) is None, reason="pre-commit is not installed")
def test_the_readmes_pre_commit_config_as_written_checks_a_fresh_project(fresh: Path, tmp_path: Path) -> None:
    """The README's `.pre-commit-config.yaml`, as written: passes on a fresh project with a recording, and
    fails naming a bad one."""
    (fresh / ".pre-commit-config.yaml").write_text(readme_pre_commit_config(), encoding="utf-8")
    (fresh / "recordings").mkdir()
    (fresh / "recordings" / "chat.json").write_text(json.dumps([MESSAGE]), encoding="utf-8")
    env = {**ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    command = [shutil.which("pre-commit", path=ENV["PATH"]) or "pre-commit", "run", "--all-files", "--color", "never"]
    assert run(fresh, "git", "add", "-A").returncode == 0
    passed = subprocess.run(command, cwd=fresh, capture_output=True, text=True, env=env, check=False)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert re.search(r"^toolgen validate\.+Passed$", passed.stdout, re.MULTILINE), passed.stdout
    (fresh / "recordings" / "chat.json").write_text(json.dumps([{"role": "tool", "content": "18 C"}]), "utf-8")
    assert run(fresh, "git", "add", "-A").returncode == 0
    failed = subprocess.run(command, cwd=fresh, capture_output=True, text=True, env=env, check=False)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "recordings/chat.json:" in failed.stdout, failed.stdout
