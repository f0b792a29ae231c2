"""The toolgen.yaml configuration: where schemas are, where the SDK goes, what it is called."""

from __future__ import annotations

import keyword
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgen.errors import ConfigNotFoundError, InvalidInputError
from toolgen.lint import canonical_provider
from toolgen.load import Document, LoadError, load_file
from toolgen.meta import check_against_meta_schema
from toolgen.runtime import WIRES, canonical_name

CONFIG_NAME = "toolgen.yaml"
_PACKAGE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Config:
    root: Path
    package: str
    output: str
    inputs: tuple[str, ...]
    normalize: tuple[str, ...] = ()
    message_extension: str | None = None
    lint_providers: tuple[str, ...] | None = None
    remotes: tuple[tuple[str, str], ...] = ()
    export_strict: bool = False
    gemini_schema: str = "json"
    # Wire names as the runtime's table spells them, sorted; every wire when the config names none.
    wires: tuple[str, ...] = WIRES
    demo: bool = False
    display: str = CONFIG_NAME
    input_positions: tuple[tuple[int, int], ...] = ()

    @property
    def output_dir(self) -> Path:
        return self.root / self.output

    @property
    def package_dir(self) -> Path:
        return self.output_dir / self.package


def display_path(root: Path, path: Path) -> str:
    """A path as users see it: relative to the project root, even when it lies outside (`../shared/x.yaml`)."""
    return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()


# Importing the generated package must not shadow what it or its users import.
_TAKEN_PACKAGES = frozenset(sys.stdlib_module_names) | {"pydantic", "pydantic_core", "typing_extensions", "toolgen"}


def package_name_problem(package: str) -> str | None:
    """Why `package` cannot name the generated package, or None when it can."""
    if not _PACKAGE_NAME.match(package) or keyword.iskeyword(package):
        return f"{package!r} is not a valid Python package name"
    if package in _TAKEN_PACKAGES:
        return f"{package!r} would shadow the module of that name; choose another package name"
    return None


def load_config(root: Path, path: Path | None = None) -> Config:
    """Read and check toolgen.yaml; every problem becomes a diagnostic with its line:col."""
    path = path or root / CONFIG_NAME
    if not path.is_file():
        raise ConfigNotFoundError(f"no {path.name} in {root} (run `toolgen init` to create one)")
    try:
        document = load_file(path, display_path(root, path))
    except LoadError as error:
        raise InvalidInputError([error.diagnostic]) from None
    diagnostics = list(check_against_meta_schema(document, "config"))
    if diagnostics:
        raise InvalidInputError(diagnostics)
    data = document.data
    package = str(data.get("package", "toolgen_sdk"))
    problem = package_name_problem(package)
    if problem:
        raise InvalidInputError([document.diagnostic(("package",), "config-package", problem)])
    extension = (data.get("extend") or {}).get("message")
    wires = _names(document, ("wires",), data.get("wires"), "config-wire", canonical_name) or WIRES
    lint_providers = _names(
        document,
        ("lint", "providers"),
        (data.get("lint") or {}).get("providers"),
        "config-provider",
        canonical_provider,
    )
    return Config(
        root=root,
        package=package,
        output=str(data.get("output", "generated")),
        inputs=tuple(data.get("inputs", ["schemas/**/*.yaml"])),
        normalize=tuple(sorted(set(data.get("normalize", [])))),
        message_extension=str(extension) if extension else None,
        lint_providers=lint_providers or None,
        wires=wires,
        demo=bool(data.get("demo", False)),
        remotes=tuple(sorted((str(k), str(v)) for k, v in (data.get("remotes") or {}).items())),
        export_strict=bool((data.get("export") or {}).get("strict", False)),
        gemini_schema=str((data.get("export") or {}).get("gemini_schema", "json")),
        display=document.display,
        input_positions=tuple(document.locate(("inputs", str(i))) for i in range(len(data.get("inputs", [])))),
    )


def _names(
    document: Document, where: tuple[str, ...], names: Any, rule: str, canonical: Callable[[str], str]
) -> tuple[str, ...]:
    """Provider names as the runtime's table spells them (aliases resolved), each unknown one a diagnostic."""
    found: set[str] = set()
    problems = []
    for index, name in enumerate(names or ()):
        try:
            found.add(canonical(str(name)))
        except ValueError as error:
            problems.append(document.diagnostic((*where, str(index)), rule, str(error)))
    if problems:
        raise InvalidInputError(problems)
    return tuple(sorted(found))
