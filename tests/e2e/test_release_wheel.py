"""The release a user pins: one version (pyproject.toml's) in `toolgen --version`, the changelog and the README's
pins, and the wheel `python -m build` makes, installed with its dependencies into a fresh venv outside the
repository, running init, build and check on a new project whose package then imports.

The wheel is the one .ci/run built (TOOLGEN_RELEASE_WHEEL) or, without it, one this test builds from the sdist,
as `python -m build` does. pip installs toolgen's dependencies as it would for a user, through the machine's
package index and pip's cache; the test skips, saying so, when no index answers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from support.projects import REPO_ROOT

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")

VERSION: str = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
NO_INDEX = ("No matching distribution found", "Could not find a version that satisfies")

ORDER_STATUS = """\
tools:
  - name: order_status
    description: Look up where an order is.
    inputSchema:
      type: object
      properties:
        order_id: {type: string, pattern: "^[A-Z]{2}-[0-9]{6}$"}
      required: [order_id]
"""


def test_toolgen_version_is_pyprojects() -> None:
    shown = subprocess.run([sys.executable, "-m", "toolgen", "--version"], capture_output=True, text=True, check=True)
    assert shown.stdout.strip().endswith(f"toolgen, version {VERSION}"), shown.stdout  # click names the program


def test_the_changelog_has_the_current_version_and_the_readme_pins_it() -> None:
    changelog = (REPO_ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(VERSION)} - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.MULTILINE), changelog
    assert "OWNER" not in changelog, "a placeholder URL in the changelog"
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    # Every release the README names, as a tag or a wheel, is this one: a version bump leaves no stale pin.
    named = set(re.findall(r"@v(\d+\.\d+\.\d+\S*?)\b", readme)) | set(re.findall(r"toolgen-(\d[^-\s]*)-py3", readme))
    named |= set(re.findall(r"rev: v(\d[\w.]*\d)", readme))
    assert named == {VERSION}, named


def test_the_readme_says_how_to_install_in_a_project_right_after_its_first_commands() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", readme, re.MULTILINE)
    assert headings[0] == "Install toolgen in your project", headings[:3]
    section = readme[readme.index("## Install toolgen in your project") :]
    section = section[: section.index("\n## ")]
    assert 'pip install "toolgen @ git+URL@<commit sha>"' in section
    assert f"pip install ./toolgen-{VERSION}-py3-none-any.whl" in section
    assert "requirements-toolgen.txt" in section
    assert "OWNER" not in readme, "a placeholder URL in the README"


def release_wheel(tmp_path: Path) -> Path:
    given = os.environ.get("TOOLGEN_RELEASE_WHEEL")
    if given:
        wheel = Path(given)
        assert wheel.is_file(), f"TOOLGEN_RELEASE_WHEEL names no file: {given}"
        assert wheel.name == f"toolgen-{VERSION}-py3-none-any.whl", wheel.name
        return wheel
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(REPO_ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0 and any(words in built.stdout + built.stderr for words in NO_INDEX):
        pytest.skip(f"pip reaches no package index for the build backend: {built.stderr[-300:]}")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    assert sorted(path.name for path in dist.iterdir()) == [
        f"toolgen-{VERSION}-py3-none-any.whl",
        f"toolgen-{VERSION}.tar.gz",
    ]
    with tarfile.open(dist / f"toolgen-{VERSION}.tar.gz") as sdist:
        names = set(sdist.getnames())
    assert {f"toolgen-{VERSION}/{name}" for name in ("CHANGELOG.md", "README.md", "pyproject.toml")} <= names
    return dist / f"toolgen-{VERSION}-py3-none-any.whl"


@pytest.mark.slow
def test_the_wheel_installed_in_a_fresh_venv_builds_and_checks_a_new_project(tmp_path: Path) -> None:
    wheel = release_wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(
        PATH=os.pathsep.join([str(venv / "bin"), env.get("PATH", "")]),
        VIRTUAL_ENV=str(venv),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    # With its dependencies, as a user installs it; pip's cache keeps a second run from downloading them again.
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if installed.returncode != 0 and any(words in installed.stderr for words in NO_INDEX):
        pytest.skip(f"pip reaches no package index for toolgen's dependencies: {installed.stderr[-300:]}")
    assert installed.returncode == 0, installed.stderr[-3000:]

    project = tmp_path / "shop"
    project.mkdir()
    assert not project.is_relative_to(REPO_ROOT)
    toolgen = str(venv / "bin" / "toolgen")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, check=False)

    version = run(toolgen, "--version")
    assert (version.returncode, version.stdout.strip()) == (0, f"toolgen, version {VERSION}"), version.stderr
    where = run(str(venv / "bin" / "python"), "-c", "import toolgen; print(toolgen.__file__)")
    assert Path(where.stdout.strip()).is_relative_to(venv), f"toolgen is not the wheel's: {where.stdout}"
    for step in ("init", "build", "check"):
        if step == "build":
            (project / "schemas" / "tools" / "order_status.yaml").write_text(ORDER_STATUS, encoding="utf-8")
        done = run(toolgen, step)
        assert done.returncode == 0, (step, done.stdout[-2000:], done.stderr[-2000:])
        if step == "init":
            # The project pins the wheel it was made with; CI's `pip install -r` of it works where the wheel is.
            pinned = (project / "requirements-toolgen.txt").read_text(encoding="utf-8").splitlines()[-1]
            assert pinned == f"toolgen @ {wheel.resolve().as_uri()}", pinned
            assert "a file on this machine" in done.stderr, done.stderr
            again = run(str(venv / "bin" / "python"), "-m", "pip", "install", "-r", "requirements-toolgen.txt")
            assert again.returncode == 0, again.stderr[-2000:]
    # The application's view: the project's output folder on the path, toolgen's venv as its environment.
    code = (
        "import toolgen_sdk\n"
        "from toolgen_sdk import validate_tool_arguments\n"
        "args = validate_tool_arguments('order_status', '{\"order_id\": \"AB-123456\"}')\n"
        "print(type(args).__name__, args.order_id, sorted(toolgen_sdk.TOOLS))\n"
    )
    imported = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        cwd=project,
        env={**env, "PYTHONPATH": str(project / "generated")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert imported.stdout.split(" ", 2) == [
        "OrderStatusArgs",
        "AB-123456",
        "['get_current_weather', 'order_status']\n",
    ]
