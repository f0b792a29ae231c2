"""The README's GitHub Actions job, run as written: toolgen installed from its repository into a fresh venv (a git
URL, here a `git+file://` clone of this checkout), then every step on a user's project, and all of them pass.

toolgen's dependencies come from the test's own environment (a .pth file in the venv), so they are not downloaded
again; toolgen itself is built from the clone by the README's own pip command."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO_ROOT

MESSAGES = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {"role": "assistant", "content": "It is sunny."},
]


def readme_job() -> dict[str, Any]:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## In CI and pre-commit") :]
    block = re.search(r"```yaml\n(name: toolgen\n.*?)```", section, re.DOTALL)
    assert block, "the README's CI section has no GitHub Actions job"
    job: dict[str, Any] = yaml.safe_load(block.group(1))["jobs"]["toolgen"]
    return job


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout.strip()


def test_the_job_installs_toolgen_from_its_repository() -> None:
    job = readme_job()
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert runs[0] == 'pip install "$TOOLGEN"'
    assert job["env"]["TOOLGEN"].startswith("git+https://")
    assert not any(re.fullmatch(r"pip install toolgen\b.*", run) for run in runs), "no index has toolgen yet"


def test_the_job_as_written_passes_on_a_fresh_project(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("needs git and this checkout as a git repository, to install toolgen from a git URL")
    # The repository, as a remote would serve it: its committed tree at HEAD.
    clone = tmp_path / "toolgen-repo"
    git(tmp_path, "clone", "--quiet", "--no-local", str(REPO_ROOT), str(clone))
    commit = git(clone, "rev-parse", "HEAD")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    # toolgen's dependencies are taken from this environment (a .pth file) instead of downloaded again; toolgen
    # itself is built from the clone and installed into the venv, which comes first on its path.
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    # Everything but toolgen itself: where this environment has toolgen installed (not editable), pip would
    # find it there and install nothing.
    borrowed = tmp_path / "borrowed"
    borrowed.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith(("toolgen", "__editable__")):
            (borrowed / entry.name).symlink_to(entry)
    (borrowed / "bin").symlink_to(sysconfig.get_paths()["scripts"])  # where ruff's wrapper looks for its binary
    (purelib / "toolgen_test_parent.pth").write_text(f"{borrowed}\n", encoding="utf-8")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")]),
        "VIRTUAL_ENV": str(venv),
        "TOOLGEN": f"git+file://{clone}@{commit}",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("PYTHONPATH", None)
    # The user's repository: a fresh project, built and committed, a recording, and the base branch to compare.
    project = tmp_path / "app"
    project.mkdir()
    git(project, "init", "--quiet")
    job = readme_job()
    steps = [step["run"] for step in job["steps"] if "run" in step]
    install, *checks = steps
    installed = subprocess.run(["bash", "-c", install], cwd=project, env=env, capture_output=True, text=True)
    if installed.returncode != 0 and "No matching distribution found" in installed.stderr:
        pytest.skip(f"pip reaches no package index for toolgen's dependencies: {installed.stderr[-300:]}")
    assert installed.returncode == 0, installed.stderr[-3000:]
    toolgen = str(venv / "bin" / "toolgen")
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import toolgen; print(toolgen.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where).is_relative_to(venv), f"toolgen was not installed into the venv: {where}"
    for command in ("init", "build"):
        done = subprocess.run([toolgen, command], cwd=project, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    (project / "recordings").mkdir()
    (project / "recordings" / "conversation.json").write_text(json.dumps(MESSAGES), encoding="utf-8")
    git(project, "add", "-A")
    git(project, "-c", "user.name=CI", "-c", "user.email=ci@example.com", "commit", "--quiet", "-m", "tools")
    git(project, "update-ref", "refs/remotes/origin/main", "HEAD")
    for command in checks:
        written = command.replace("${{ github.base_ref }}", "main")
        done = subprocess.run(["bash", "-c", written], cwd=project, env=env, capture_output=True, text=True)
        assert done.returncode == 0, (written, done.stdout[-2000:], done.stderr[-2000:])
