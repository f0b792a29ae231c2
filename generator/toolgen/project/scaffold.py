"""`toolgen init`: a new project's toolgen.yaml and example tool, and its formatters told to leave generated/ alone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import InvalidInputError, ProjectExistsError
from toolgen.core.resources import schemas_dir
from toolgen.project.config import CONFIG_NAME, package_name_problem
from toolgen.project.formatter_settings import exclude_generated
from toolgen.project.own_pin import Pin, own_pin

INIT_OUTPUT = "generated"
INIT_CONFIG = """\
# toolgen configuration: `toolgen build` turns the schemas below into a typed Python package.
version: v1
package: {package}
output: {output}
inputs:
  - schemas/tools/*.yaml
# The offline demo behind `python -m {package} "prompt"`: demo handlers and a sandbox. Drop it for production.
demo: true
"""
EXAMPLE_TOOL = Path("schemas") / "tools" / "get_current_weather.yaml"
# What a project made with toolgen has that git should not: the service's state (`python -m <package> serve`),
# toolgen's cache, and what Python and an installable layout's `pip install -e` leave behind.
GITIGNORE = ".gitignore"
# toolgen pinned as init found it installed: the README's CI job installs it with `pip install -r` and no URL to fill.
REQUIREMENTS = "requirements-toolgen.txt"
IGNORED = (".toolgen-state/", ".toolgen-cache/", "*.egg-info/", "__pycache__/")


@dataclass(frozen=True)
class InitResult:
    """What `init_project` wrote: the files it created, the existing ones it added formatter settings to, and
    the settings it left for the user to add (a sentence each)."""

    created: tuple[Path, ...]
    updated: tuple[Path, ...]
    notes: tuple[str, ...]


def init_project(root: Path, package: str) -> InitResult:
    """Create toolgen.yaml and an example tool in `root` and exclude the output folder from ruff, black and
    isort (pyproject.toml, or ruff's own file); refuses to overwrite an existing project."""
    problem = package_name_problem(package)
    if problem:
        raise InvalidInputError([Diagnostic("--package", 1, 1, Severity.ERROR, "config-package", problem)])
    config_file = root / CONFIG_NAME
    example = root / EXAMPLE_TOOL
    existing = [p for p in (config_file, example) if p.exists()]
    if existing:
        raise ProjectExistsError(f"{existing[0]} already exists; nothing was written")
    before = {path for path in root.iterdir() if path.is_file()} if root.is_dir() else set()
    example.parent.mkdir(parents=True, exist_ok=True)
    example.write_text((schemas_dir() / "tools" / example.name).read_text(encoding="utf-8"), encoding="utf-8")
    config_file.write_text(INIT_CONFIG.format(package=package, output=INIT_OUTPUT), encoding="utf-8")
    settings = exclude_generated(root, INIT_OUTPUT)
    written = [*settings.written, *([root / GITIGNORE] if ignore_state(root / GITIGNORE) else [])]
    pin = None if (root / REQUIREMENTS).exists() else _pin_toolgen(root / REQUIREMENTS)
    if pin is not None:
        written.append(root / REQUIREMENTS)
    created = [config_file, example, *(path for path in written if path not in before)]
    updated = tuple(path for path in written if path in before)
    notes = (*settings.notes, *([pin.note] if pin is not None and pin.note else []))
    return InitResult(tuple(created), updated, notes)


def _pin_toolgen(path: Path) -> Pin:
    """Write `path`, a requirements file pinning this toolgen, and return the pin."""
    pin = own_pin(path.parent)
    path.write_text(
        "# toolgen, pinned as `toolgen init` found it installed; CI installs it with `pip install -r "
        f"{path.name}`.\n# To upgrade, change the pin, then `toolgen build` and commit the result.\n"
        f"{pin.requirement}\n",
        encoding="utf-8",
    )
    return pin


def _rule(line: str) -> str:
    """A .gitignore line as the rule it is: `/.toolgen-state` and `.toolgen-state/` ignore the same folder here."""
    return line.strip().strip("/")


def ignore_state(path: Path) -> bool:
    """Add to the .gitignore at `path` (or create it) each of IGNORED it lacks, at its end, keeping every line it
    has; whether anything was written."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    present = {_rule(line) for line in text.splitlines()}
    missing = [line for line in IGNORED if _rule(line) not in present]
    if not missing:
        return False
    lead = "" if not text or text.endswith("\n") else "\n"
    comment = "# toolgen: the service's state, toolgen's cache, build leftovers\n"
    with path.open("a", encoding="utf-8") as out:
        out.write(lead + comment + "".join(f"{line}\n" for line in missing))
    return True
