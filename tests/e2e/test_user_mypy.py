"""A user's application that imports the generated package passes `mypy --strict`, whatever of toolgen's
dependencies are installed: pydantic alone (what the package needs), toolgen's own dependencies without an extra
(jsonschema there, without type information), and toolgen with every extra (dbos, starlette, uvicorn, mcp...).

Each case is a fresh venv that holds only those distributions and mypy: rather than downloaded again, they are
linked from this environment (a .pth file naming a folder of links to each distribution's own files, found from
its installed record), so the case runs offline and takes seconds. The cases share that folder's path, made
anew for each, and one mypy cache: mypy rechecks every module whose file changed or whose imports now resolve
otherwise, so the standard library and pydantic are analysed once, not once a case."""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from support.projects import REPO_ROOT, Project

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")

PROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
RUNTIME = REPO_ROOT / "generator" / "toolgen" / "runtime"
# The extras a user may install; `test` is toolgen's own.
EXTRAS = sorted(set(PROJECT["optional-dependencies"]) - {"test"})

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
    outputSchema:
      type: object
      properties:
        location: {type: string}
        temperature: {type: number}
        unit: {type: string, enum: [celsius, fahrenheit]}
      required: [location, temperature, unit]
"""
# A tool that jsonschema checks (uniqueItems), so the package's own code path to jsonschema is in play too.
TAGS = """\
tools:
  - name: tag_items
    description: Tag items.
    inputSchema:
      type: object
      properties:
        tags: {type: array, items: {type: string}, uniqueItems: true}
      required: [tags]
"""

APP = '''\
"""A user's application."""

from shop_sdk import (
    GetCurrentWeatherArgs,
    GetCurrentWeatherResult,
    ToolContext,
    Tools,
    validate_tool_arguments,
)
from shop_sdk.agent import Approval, RunOptions

tools = Tools()


@tools.get_current_weather.handler
def weather(args: GetCurrentWeatherArgs, ctx: ToolContext) -> GetCurrentWeatherResult:
    return GetCurrentWeatherResult(location=args.location, temperature=18.0, unit="celsius")


def check(text: str) -> str:
    args = validate_tool_arguments("get_current_weather", text)
    assert isinstance(args, GetCurrentWeatherArgs)
    return args.location


OPTIONS = RunOptions(max_steps=4, approve=lambda request: Approval.deny("read-only"))
'''


@pytest.fixture(scope="module")
def users_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project built by this checkout's generator, with the application beside its output folder."""
    project = Project(tmp_path_factory.mktemp("user-mypy"), "shop_sdk")
    project.write("schemas/weather.yaml", WEATHER)
    project.write("schemas/tags.yaml", TAGS)
    built = project.cli("build")
    assert built.returncode == 0, built.stderr
    (project.root / "app.py").write_text(APP, encoding="utf-8")
    return project.root


def closure(requirements: Iterable[str]) -> tuple[list[metadata.Distribution], list[str]]:
    """The installed distributions `requirements` need, followed through their own requirements and extras,
    and the names of those this environment does not have."""
    found: dict[str, metadata.Distribution] = {}
    missing: list[str] = []
    asked: set[tuple[str, frozenset[str]]] = set()
    todo = [Requirement(text) for text in requirements]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        extras = frozenset(requirement.extras)
        if (name, extras) in asked:
            continue
        asked.add((name, extras))
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        found[name] = distribution
        for text in distribution.requires or []:
            needed = Requirement(text)
            if needed.marker is None or any(needed.marker.evaluate({"extra": extra}) for extra in {"", *extras}):
                todo.append(needed)
    return list(found.values()), sorted(set(missing))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the cases link their distributions (one path for all, so the files mypy caches keep their paths)
    and keep their mypy cache."""
    return tmp_path_factory.mktemp("user-mypy-shared")


def venv_with(tmp_path: Path, distributions: list[metadata.Distribution], linked: Path) -> Path:
    """A new venv whose site-packages sees exactly these distributions' files (and the standard library), linked
    in `linked`, emptied first."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if linked.exists():
        shutil.rmtree(linked)
    linked.mkdir()
    for distribution in distributions:
        base = Path(str(distribution.locate_file("")))
        files = distribution.files
        assert files is not None, f"{distribution.metadata['Name']} has no record of its files"
        # Its top-level entries in site-packages: packages, modules, compiled extensions, its .dist-info.
        for top in {Path(str(file)).parts[0] for file in files if not str(file).startswith("..")}:
            if not (linked / top).exists() and (base / top).exists():
                (linked / top).symlink_to(base / top)
    (Path(purelib) / "borrowed.pth").write_text(f"{linked}\n", encoding="utf-8")
    return python


def runtime_imports() -> set[str]:
    """The distributions' top-level modules the runtime names in an import statement (not importlib's)."""
    names: set[str] = set()
    for path in RUNTIME.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {name for name in names if name not in sys.stdlib_module_names and name != "__future__"}


def mypy_strict(python: Path, project: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "MYPY"))}
    env["MYPYPATH"] = str(project / "generated")
    return subprocess.run(
        [str(python), "-m", "mypy", "--strict", "--cache-dir", str(cache), "app.py"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def mypys_requirement() -> str:
    return f"mypy=={metadata.version('mypy')}"


CASES = {
    # What the generated package needs, and nothing of toolgen's.
    "pydantic-only": lambda: [next(r for r in PROJECT["dependencies"] if Requirement(r).name == "pydantic")],
    # toolgen installed without an extra: jsonschema is there, its type information (types-jsonschema) is not.
    "no-extras": lambda: list(PROJECT["dependencies"]),
    "all-extras": lambda: [
        *PROJECT["dependencies"],
        *(r for extra in EXTRAS for r in PROJECT["optional-dependencies"][extra]),
    ],
}


@pytest.mark.parametrize("case", list(CASES))
def test_mypy_strict_passes_on_an_app_importing_the_package(
    users_project: Path, shared: Path, tmp_path: Path, case: str
) -> None:
    distributions, missing = closure([*CASES[case](), mypys_requirement()])
    names = {canonicalize_name(d.metadata["Name"]) for d in distributions}
    assert "types-jsonschema" not in names, "a user's extras bring no stubs"
    if case == "all-extras":
        # This environment may lack an extra's package that the runtime reaches only through importlib (Vertex's
        # google-auth); every package the runtime names in an import statement must be here, or the case proves less.
        linked = {Path(str(file)).parts[0].split(".")[0] for d in distributions for file in d.files or []}
        absent = {name for name in runtime_imports() if name not in linked}
        assert not absent, f"the all-extras case lacks what the runtime imports: {absent} (missing: {missing})"
    else:
        assert not missing, f"this environment lacks {missing}"
    python = venv_with(tmp_path, distributions, shared / "site")
    checked = mypy_strict(python, users_project, shared / "mypy-cache")
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    assert checked.stdout.startswith("Success: no issues found"), checked.stdout
    # The venv saw what the case says: an extra's package is importable only when the case installs it.
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util as u; print(u.find_spec('dbos') is not None, u.find_spec('jsonschema') is not None)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.split() == [str(case == "all-extras"), str(case != "pydantic-only")]


def test_the_runtimes_optional_imports_are_marked_for_a_checker_without_them() -> None:
    """Each import of a package beyond pydantic carries the ignore that keeps a user's mypy quiet when the package
    is absent (import-not-found) or untyped (import-untyped), and unused where it is there and typed."""
    allowed = {"pydantic", "pydantic_core", "typing_extensions"}
    unmarked = []
    for path in sorted(RUNTIME.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            outside = [m for m in modules if m.split(".")[0] not in sys.stdlib_module_names | allowed | {"__future__"}]
            line = lines[node.lineno - 1]
            if outside and not ("import-not-found" in line and "unused-ignore" in line):
                unmarked.append(f"{path.relative_to(RUNTIME)}:{node.lineno}: {line.strip()}")
    assert not unmarked, "\n".join(unmarked)
