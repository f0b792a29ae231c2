"""The README's GitHub Actions job, run as written. Its install step installs the requirements-toolgen.txt that
`toolgen init` wrote, pinning the toolgen that ran it: installed from a git tag (here a `git+file://` clone of
this checkout, tagged as a release is), init pins that tag, and the job's step installs toolgen from it again.
Its other steps, run as one script on a fresh project (toolgen from this environment), pass with and without
recordings, and fail on a bad one.

In the install test toolgen's dependencies come from the test's own environment (a .pth file in the venv), so
they are not downloaded again; toolgen itself is built from the clone by the README's own pip command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.projects import REPO_ROOT

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")

VERSION: str = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
INSTALL = "pip install -r requirements-toolgen.txt"
MESSAGES = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {"role": "assistant", "content": "It is sunny."},
]


def readme_job() -> dict[str, Any]:
    text = (REPO_ROOT / "docs" / "snippets" / "ci" / "github-actions.yaml").read_text(encoding="utf-8")
    job: dict[str, Any] = yaml.safe_load(text)["jobs"]["toolgen"]
    return job


def run_steps() -> tuple[str, list[str]]:
    """The job's install step and the steps after it, as written."""
    install, *checks = [str(step["run"]) for step in readme_job()["steps"] if "run" in step]
    return install, checks


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout.strip()


def needs_git() -> None:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("needs git and this checkout as a git repository")


def test_the_job_installs_the_projects_pin_and_names_no_placeholder_variable() -> None:
    job = readme_job()
    install, checks = run_steps()
    assert install == INSTALL
    assert "env" not in job, "every step runs as written, with no variable to fill in"
    for step in checks:
        assert "$" not in step.replace("${{ github.base_ref }}", ""), step


# Installs toolgen from a git tag into a fresh venv, which needs the package index for its build backend: with
# the other installs (the release wheel), in the heavier suite .ci/run runs after the README's test command.
@pytest.mark.slow
def test_init_pins_the_git_tag_toolgen_came_from_and_the_job_installs_it(tmp_path: Path) -> None:
    needs_git()
    # The repository, as a remote would serve it: its committed tree at HEAD, tagged as the release.
    clone = tmp_path / "toolgen-repo"
    git(tmp_path, "clone", "--quiet", "--no-local", str(REPO_ROOT), str(clone))
    git(clone, "tag", "--force", f"v{VERSION}")  # the release is what is committed here
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
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("PYTHONPATH", None)
    # The user installs a release by its tag (a named requirement's URL has a host) and starts a project: init
    # pins the commit the tag named, which cannot move.
    tagged = f"toolgen @ git+file://localhost{clone}@v{VERSION}"
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    installed = subprocess.run([*pip, "install", tagged], cwd=tmp_path, env=env, capture_output=True, text=True)
    if installed.returncode != 0 and "No matching distribution found" in installed.stderr:
        pytest.skip(f"pip reaches no package index for toolgen's build backend: {installed.stderr[-300:]}")
    assert installed.returncode == 0, installed.stderr[-3000:]
    project = tmp_path / "app"
    project.mkdir()
    started = subprocess.run(
        [str(venv / "bin" / "toolgen"), "init"], cwd=project, env=env, capture_output=True, text=True
    )
    assert started.returncode == 0, started.stderr
    pinned = (project / "requirements-toolgen.txt").read_text(encoding="utf-8").splitlines()
    commit = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert pinned[-1] == f"toolgen @ git+file://localhost{clone}@{commit}", pinned
    assert "a repository on this machine" in started.stderr, "a pin CI cannot reach goes unsaid"
    # The job's step, as written, in the project: toolgen comes back from that commit.
    subprocess.run([*pip, "uninstall", "--yes", "toolgen"], env=env, capture_output=True, check=True)
    install, _ = run_steps()
    again = subprocess.run(["bash", "-c", install], cwd=project, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-3000:]
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import toolgen; print(toolgen.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where).is_relative_to(venv), f"toolgen was not installed into the venv: {where}"
    shown = subprocess.run([str(venv / "bin" / "toolgen"), "--version"], env=env, capture_output=True, text=True)
    assert shown.stdout.strip() == f"toolgen, version {VERSION}", shown.stderr


@pytest.fixture(scope="module")
def fresh_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's repository: `toolgen init`, `toolgen build`, committed, with its base branch as origin/main."""
    needs_git()
    project = tmp_path_factory.mktemp("ci-job") / "app"
    project.mkdir()
    git(project, "init", "--quiet")
    for command in ("init", "build"):
        done = subprocess.run(
            [sys.executable, "-m", "toolgen", command], cwd=project, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
    commit(project)
    git(project, "update-ref", "refs/remotes/origin/main", "HEAD")
    return project


def commit(project: Path) -> None:
    git(project, "add", "-A")
    git(project, "-c", "user.name=CI", "-c", "user.email=ci@example.com", "commit", "--quiet", "-m", "tools")


@pytest.mark.parametrize(
    ("recordings", "status"),
    [
        (None, 0),  # a project's first pull request: no recordings yet
        (MESSAGES, 0),
        ([{"role": "tool", "content": "18 C"}], 1),  # a tool message without its call id: validate fails the job
    ],
    ids=["no-recordings", "recordings", "bad-recording"],
)
def test_the_jobs_steps_as_one_script_on_a_fresh_project(
    fresh_repository: Path, tmp_path: Path, recordings: list[dict[str, str]] | None, status: int
) -> None:
    project = tmp_path / "app"
    shutil.copytree(fresh_repository, project, symlinks=True)
    if recordings is not None:
        (project / "recordings").mkdir()
        (project / "recordings" / "conversation.json").write_text(json.dumps(recordings), encoding="utf-8")
        commit(project)
    _, checks = run_steps()
    # GitHub runs each step with `bash -e`; one script under `set -e` stops where the job would.
    script = "set -eo pipefail\n" + "\n".join(step.replace("${{ github.base_ref }}", "main") for step in checks)
    # toolgen is this environment's (the install step is the test above's).
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    done = subprocess.run(["bash", "-c", script], cwd=project, env=env, capture_output=True, text=True)
    assert done.returncode == status, (script, done.stdout[-2000:], done.stderr[-2000:])
    validated = "record(s)" in done.stderr
    assert validated == (recordings is not None), done.stderr
