"""`toolgen init`: a new project's toolgen.yaml and example tool, and its formatters told to leave generated/ alone."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import InvalidInputError, ProjectExistsError
from toolgen.core.resources import schemas_dir
from toolgen.project.config import CONFIG_NAME, package_name_problem
from toolgen.project.formatter_settings import exclude_generated, line_ending
from toolgen.project.own_pin import Pin, own_pin

INIT_OUTPUT = "generated"
INIT_CONFIG = """\
# toolgen configuration: `toolgen build` turns the schemas below into a typed Python package.
version: v1
package: {package}
output: {output}
inputs:  # every extension a tool file may have: a file of another is read by no input
  - schemas/tools/*.yaml
  - schemas/tools/*.yml
  - schemas/tools/*.json
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
    kept = root / REQUIREMENTS
    pin = None if kept.exists() else _pin_toolgen(kept)
    if pin is not None:
        written.append(kept)
    created = [config_file, example, *(path for path in written if path not in before)]
    updated = tuple(path for path in written if path in before)
    notes = (*settings.notes, *([pin.note] if pin is not None and pin.note else []))
    if pin is None and (other := kept_pin_note(kept)) is not None:
        notes = (*notes, other)
    return InitResult(tuple(created), updated, notes)


def _pin_toolgen(path: Path) -> Pin:
    """Write `path`, a requirements file pinning this toolgen, and return the pin."""
    pin = own_pin(path.parent)
    commit = pin.requirement.rpartition("@")[2] if pin.requested else None
    asked = (
        f"# Installed by `{pin.requested}`, pinned at its commit then: `{pin.requested}` may move on, this does not.\n"
        f"# pre-commit hooks from toolgen's repository take the same commit: `rev: {commit}`.\n"
        if pin.requested
        else ""
    )
    path.write_text(
        "# toolgen, pinned as `toolgen init` found it installed; CI installs it with `pip install -r "
        f"{path.name}`.\n# To upgrade, change the pin, then `toolgen build` and commit the result.\n"
        f"{asked}{pin.requirement}\n",
        encoding="utf-8",
    )
    return pin


def kept_pin_note(path: Path) -> str | None:
    """One line when the requirements file init keeps pins another toolgen than the one running (or none)."""
    from importlib import metadata

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return f"kept {path.name} as it is, unread: check that it pins this toolgen"
    lines = [line.split("#")[0].strip() for line in text.splitlines()]
    named = [line for line in lines if re.match(r"(?i)toolgen\b(?![-_.\w])", line) or "toolgen-" in line.lower()]
    pin = own_pin(path.parent)
    try:
        version = metadata.version("toolgen")
    except metadata.PackageNotFoundError:
        version = None
    if not named:
        return f"kept {path.name}, which pins no toolgen: CI's `pip install -r {path.name}` installs none; add `{pin.requirement}`"
    same = {pin.requirement, *([f"toolgen=={version}"] if version else [])}
    if any(re.sub(r"\s+", " ", line) in same for line in named):
        return None
    running = f"toolgen {version}" if version else "this toolgen"
    return (
        f"kept {path.name}, which pins `{named[0]}`, not the {running} that ran init (`{pin.requirement}`): "
        "CI builds with the pinned one, so `toolgen check` there may differ; change the pin or install that one"
    )


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
    with path.open("a", encoding="utf-8", newline=line_ending(path)) as out:
        out.write(lead + comment + "".join(f"{line}\n" for line in missing))
    return True
