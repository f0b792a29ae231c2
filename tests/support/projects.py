"""Shared fixtures: throwaway toolgen projects, the CLI, the repo's own project built from source, and the shared
corpora when present."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from support.cli_in_process import toolgen_in
from toolgen import api

REPO_ROOT = Path(__file__).resolve().parents[2]
TESTS = REPO_ROOT / "tests"
SHARED = REPO_ROOT.parent / "shared"

CONFIG = """\
version: v1
package: {package}
output: generated
inputs:
  - schemas/**/*.yaml
  - schemas/**/*.json
"""


class Project:
    """A toolgen project in a temporary directory."""

    def __init__(self, root: Path, package: str = "sdk") -> None:
        self.root = root
        self.package = package
        (root / "toolgen.yaml").write_text(CONFIG.format(package=package), encoding="utf-8")

    @classmethod
    def copy_of(cls, template: Path, root: Path, package: str = "sdk") -> Project:
        """A copy of the project at `template` (built once for a module) at `root`, its files copied as they are:
        building once and copying costs a test a few milliseconds instead of a build."""
        shutil.copytree(template, root, symlinks=True)
        project = cls.__new__(cls)
        project.root, project.package = root, package
        return project

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    @property
    def package_dir(self) -> Path:
        return self.root / "generated" / self.package

    def snapshot(self) -> dict[str, bytes]:
        """Every file under generated/, for byte-for-byte comparisons."""
        base = self.root / "generated"
        if not base.exists():
            return {}
        return {
            p.relative_to(base).as_posix(): p.read_bytes()
            for p in sorted(base.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts
        }

    def cli(
        self, *args: str, env: dict[str, str] | None = None, process: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """`toolgen *args` run in this project: in this process through click's runner, or as a real `python -m
        toolgen` process when `process` is set or an environment is given (signals, start-up, the installed
        command are what those tests are about)."""
        if process or env is not None:
            return subprocess.run(
                [sys.executable, "-m", "toolgen", *args],
                cwd=self.root,
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
        ran = toolgen_in(self.root, *args)
        return subprocess.CompletedProcess(["toolgen", *args], ran.returncode, ran.stdout, ran.stderr)


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Project]:
    counter = iter(range(1000))

    def make(package: str = "sdk") -> Project:
        root = tmp_path / f"project{next(counter)}"
        root.mkdir()
        return Project(root, package)

    return make


@pytest.fixture(scope="module")
def built_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One good project built once per test module; `project` hands each test its own copy."""
    root = tmp_path_factory.mktemp("built")
    project = Project(root)
    project.write("schemas/weather.yaml", WEATHER)
    result = project.cli("build")
    assert result.returncode == 0, result.stderr
    return root


@pytest.fixture
def project(built_root: Path, tmp_path: Path) -> Project:
    root = tmp_path / "project"
    shutil.copytree(built_root, root)
    return Project(root)


# The package name the repo's own project is built under here. Other tests import the committed
# generated/toolgen_sdk in-process, maybe in the same worker, and one interpreter holds one package of a name.
SOURCE_PACKAGE = "source_sdk"


@pytest.fixture(scope="session")
def source_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repo's own project (toolgen.yaml, schemas/) built by this checkout's generator into a temporary
    folder, once per session: the output folder, holding SOURCE_PACKAGE (for sys.path, or `python -m`'s cwd)."""
    root = tmp_path_factory.mktemp("source")
    shutil.copytree(REPO_ROOT / "schemas", root / "schemas")
    config = (REPO_ROOT / "toolgen.yaml").read_text(encoding="utf-8")
    renamed, count = re.subn(r"(?m)^package:.*$", f"package: {SOURCE_PACKAGE}", config)
    assert count == 1, "toolgen.yaml has no `package:` line to rename"
    (root / "toolgen.yaml").write_text(renamed, encoding="utf-8")
    built = api.build(root)
    assert built.package_dir.name == SOURCE_PACKAGE
    return built.package_dir.parent


@pytest.fixture(scope="session")
def source_package(source_build: Path) -> ModuleType:
    """SOURCE_PACKAGE imported in this process; its sub-modules import later through the package's own path."""
    sys.path.insert(0, str(source_build))
    try:
        package = importlib.import_module(SOURCE_PACKAGE)
    finally:
        sys.path.remove(str(source_build))
    assert Path(str(package.__file__)).is_relative_to(source_build), package.__file__
    return package


WEATHER = """\
tools:
  - name: get_current_weather
    description: Get the current weather in a given location.
    inputSchema:
      type: object
      properties:
        location: {type: string}
        unit: {type: string, enum: [celsius, fahrenheit]}
      required: [location]
"""


def default_sigint() -> None:
    """Run in the child before exec: SIGINT back to its default, so Python installs its KeyboardInterrupt handler
    as it does under a terminal, even when these tests were started with SIGINT ignored (nohup, `&` in a script)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def shared_dir(name: str) -> Path:
    path = SHARED / name
    if not path.is_dir():
        pytest.skip(f"../shared/{name} not present (looked for {path}); corpus tests need the shared folder")
    return path


def run_sdk(root: Path, code: str, *args: str) -> Any:
    """Run `code` (with `args` as sys.argv[1:]) with root's generated/ on sys.path in a fresh interpreter;
    return its JSON output."""
    prelude = f"import sys\nsys.path.insert(0, {str(root / 'generated')!r})\n"
    result = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One mypy cache for a worker's runs, so typeshed and pydantic are analysed once rather than on every run.
    mypy rechecks every module whose file changed against what the cache holds, so sharing it hides nothing."""
    return str(tmp_path_factory.mktemp("mypy-cache"))
