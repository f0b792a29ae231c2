"""Files toolgen writes in the output folder beside the package (the installable layout's pyproject.toml): whose
they are, what `check` compares and what `build` writes or removes.

The package's manifest records each one it wrote (`beside`: name -> hash, names relative to the output folder),
and that record is what makes such a file toolgen's: build rewrites it while it is as recorded, and removes
it when the config no longer asks for it. A file there that the manifest does not record is the user's
(their own pyproject.toml, with `output: .`) unless it is already exactly what build writes: build stops
with `foreign-file` rather than overwrite it, and `check` reports it. An owned file edited by hand is drift,
as inside the package, and build overwrites it; once the layout no longer asks for it, build removes it only
when it is unchanged, and an edited one is left to the user.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.project.config import INSTALLABLE, PYPROJECT, Config, display_path
from toolgen.project.manifest import read_manifest, text_digest


@dataclass(frozen=True)
class BesidePlan:
    write: dict[str, str]  # name -> text, written with the package's commit
    delete: tuple[str, ...]  # recorded files the config no longer asks for, unchanged since written
    foreign: tuple[str, ...]  # files in the way that toolgen did not write


def recorded_beside(package_dir: Path) -> dict[str, str]:
    """The files beside the package its manifest says toolgen wrote, with their hashes."""
    recorded = (read_manifest(package_dir) or {}).get("beside")
    if not isinstance(recorded, dict):
        return {}
    # Only plain names in the output folder: a manifest is a file in the user's tree.
    return {
        str(name): str(hashed)
        for name, hashed in recorded.items()
        if str(name) and "/" not in str(name) and "\\" not in str(name) and str(name) not in (".", "..")
    }


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def on_disk(config: Config, names: set[str]) -> dict[str, str]:
    """The named files of the output folder that exist, as text (an unreadable one as a placeholder)."""
    found: dict[str, str] = {}
    for name in sorted(names):
        path = config.output_dir / name
        if path.exists() or path.is_symlink():
            text = _text(path)
            found[name] = "<unreadable>\n" if text is None else text
    return found


def plan_beside(config: Config, wanted: Mapping[str, str]) -> BesidePlan:
    """What a build does beside the package: which files it writes and deletes, and which stop it."""
    recorded = recorded_beside(config.package_dir)
    foreign = []
    for name, text in sorted(wanted.items()):
        path = config.output_dir / name
        if not (path.exists() or path.is_symlink()):
            continue
        current = _text(path) if path.is_file() and not path.is_symlink() else None
        # Recorded is toolgen's, edited or not (a hand edit is drift, as in the package); a folder never is.
        if current is None or (name not in recorded and current != text):
            foreign.append(name)
    delete = tuple(
        name
        for name, hashed in sorted(recorded.items())
        if name not in wanted
        and (found := _text(config.output_dir / name)) is not None
        and text_digest(found) == hashed
    )
    return BesidePlan(dict(wanted), delete, tuple(foreign))


def beside_findings(config: Config, names: tuple[str, ...]) -> list[Diagnostic]:
    """One foreign-file error per file beside the package that build would have to overwrite."""
    return [
        Diagnostic(
            display_path(config.root, config.output_dir / name),
            1,
            1,
            Severity.ERROR,
            "foreign-file",
            f"toolgen did not write this file, and `package_layout: installable` in {config.display} writes "
            f"its own {name} here; move yours, or give the package an `output` folder of its own "
            "(build deletes and overwrites nothing until then)",
        )
        for name in names
    ]


def beside_unchanged(config: Config) -> bool:
    """True when the manifest records the files the config asks for beside the package and each is there as
    recorded: a build that finds the package up to date must find these so too."""
    recorded = recorded_beside(config.package_dir)
    if set(recorded) != ({PYPROJECT} if config.package_layout == INSTALLABLE else set()):
        return False
    return all(
        (text := _text(config.output_dir / name)) is not None and text_digest(text) == hashed
        for name, hashed in recorded.items()
    )


def beside_pairs(config: Config, plan: BesidePlan) -> list[tuple[str, str | None, str | None]]:
    """(shown path, what build writes or None, what is there or None) for every file beside the package that
    `check` compares: those build writes (except foreign ones, reported instead) and those it deletes."""
    names = (set(plan.write) - set(plan.foreign)) | set(plan.delete)
    actual = on_disk(config, names)
    return [
        (display_path(config.root, config.output_dir / name), plan.write.get(name), actual.get(name))
        for name in sorted(names)
    ]


def remove_old_beside(old_package: Path, plan: BesidePlan, output_dir: Path) -> None:
    """Before an old package (one `package:` or `output:` moved away from) is removed: delete the files its
    manifest records beside it, where unchanged and not where the new build writes its own."""
    for name, hashed in recorded_beside(old_package).items():
        path = old_package.parent / name
        if path.resolve() in {(output_dir / kept).resolve() for kept in plan.write}:
            continue
        text = _text(path)
        if text is not None and text_digest(text) == hashed:
            path.unlink()
