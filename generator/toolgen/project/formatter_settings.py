"""Keep a project's formatters and linters (ruff, black, isort) off the generated package, in its own config files.

The user's files are edited as text and only by adding: a `[tool.*]` section appended when absent, one key
line put under a section's header when the section lacks it. Nothing of theirs is rewritten, reordered or
dropped (a TOML library would lose their comments). An edit whose result does not parse, or a setting
already there that leaves the package out, is not written: it becomes a note saying what to add.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PYPROJECT = "pyproject.toml"
# ruff reads the first of these it finds in a folder, before pyproject.toml.
RUFF_FILES = (".ruff.toml", "ruff.toml")
# isort reads these before pyproject.toml; they are INI files, left to the user.
ISORT_FILES = (".isort.cfg",)


@dataclass(frozen=True)
class Setting:
    """One tool's exclusion: the table it lives in and its key lines, and how to tell it is already there."""

    tool: str
    lines: tuple[str, ...]
    keys: tuple[str, ...]  # keys that, when present, already say what to exclude (the user's choice stands)


@dataclass(frozen=True)
class SettingsOutcome:
    written: tuple[Path, ...]  # files created or added to
    notes: tuple[str, ...]  # settings the user should add by hand, each a sentence


def settings_for(output: str) -> tuple[Setting, ...]:
    """ruff, black and isort told to leave `output/` alone, also for files passed to them by name (pre-commit)."""
    folder = output.strip("/")
    regex = "^/" + re.escape(folder) + "/"
    return (
        Setting(
            "ruff",
            (f'extend-exclude = ["{folder}"]', "force-exclude = true"),
            ("extend-exclude", "exclude"),
        ),
        Setting(
            "black",
            (f"extend-exclude = '{regex}'", f"force-exclude = '{regex}'"),
            ("extend-exclude", "exclude", "force-exclude"),
        ),
        Setting(
            "isort",
            (f'extend_skip_glob = ["{folder}", "{folder}/*"]', "filter_files = true"),
            ("skip_glob", "extend_skip_glob", "skip", "extend_skip"),
        ),
    )


def line_ending(path: Path) -> str:
    """The line ending most of the file at `path` uses ("\r\n" or "\n"): toolgen's additions use it too, and the
    lines it leaves keep theirs (text is read with universal newlines, so a CRLF file must be written as one)."""
    try:
        data = path.read_bytes()
    except OSError:
        return "\n"
    crlf = data.count(b"\r\n")
    return "\r\n" if crlf and crlf >= data.count(b"\n") - crlf else "\n"


def _header(table: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*\[[ \t]*{re.escape(table)}[ \t]*\][ \t]*(#.*)?$", re.MULTILINE)


def _section_body(text: str, match: re.Match[str]) -> str:
    """The lines of a table after its header, up to the next table header."""
    rest = text[match.end() :]
    following = re.search(r"^[ \t]*\[", rest, re.MULTILINE)
    return rest[: following.start()] if following else rest


def _has_key(body: str, keys: tuple[str, ...]) -> bool:
    return any(re.search(rf"^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=", body, re.MULTILINE) for key in keys)


def _parses(text: str, check: Callable[[dict[str, Any]], bool]) -> bool:
    """The edited file still parses and holds the setting; without tomllib (Python 3.10) the text is trusted."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        return True
    try:
        return check(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, KeyError, TypeError):
        return False


def _toml_error(text: str) -> str | None:
    """Why `text` is not TOML (with its line and column), or None; None too without tomllib (Python 3.10)."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        return None
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return f"is not valid TOML ({error}): it is left as it is, so add these settings once it is fixed"
    return None


def _joined(text: str, addition: str) -> str:
    if not text:
        return addition
    return text + ("" if text.endswith("\n") else "\n") + "\n" + addition


def _add_table(text: str, table: str, setting: Setting, where: str, folder: str) -> tuple[str, str | None]:
    """`text` with the setting added under `table` (a `[tool.x]` of pyproject.toml, or "" for a ruff.toml's
    top level), or unchanged with a note."""
    wanted = "\n".join(setting.lines)
    comment = f"# toolgen: {setting.tool} leaves the generated package in {folder}/ as toolgen wrote it."
    if table:
        found = _header(table).search(text)
        if found is None:
            edited = _joined(text, f"[{table}]\n{comment}\n{wanted}\n")
        elif _has_key(body := _section_body(text, found), setting.keys):
            return text, None if folder in body else _already(setting, where, f"[{table}]", folder)
        else:
            edited = text[: found.end()] + f"\n{comment}\n{wanted}" + text[found.end() :]
    else:
        first = re.search(r"^[ \t]*\[", text, re.MULTILINE)
        top = text[: first.start()] if first else text
        if _has_key(top, setting.keys):
            return text, None if folder in top else _already(setting, where, "its top level", folder)
        edited = f"{comment}\n{wanted}\n\n{text}"
    path = table.split(".") if table else []

    def holds(data: dict[str, Any]) -> bool:
        for part in path:
            data = data[part]
        return all(line.split("=")[0].strip() in data for line in setting.lines)

    if not _parses(edited, holds):
        return text, f"{where}: add to {f'[{table}]' if table else 'its top level'}: " + "; ".join(setting.lines)
    return edited, None


def _already(setting: Setting, where: str, place: str, folder: str) -> str:
    keys = " or ".join(f"`{key}`" for key in setting.keys[:2])
    return (
        f"{where} already sets {keys} in {place}: make sure it leaves {folder}/ out, or {setting.tool} "
        f"will reformat the generated package and `toolgen check` will fail ({'; '.join(setting.lines)})"
    )


def exclude_generated(root: Path, output: str) -> SettingsOutcome:
    """Add the exclusions of `output/` for ruff, black and isort to the project's config files."""
    folder = output.strip("/")
    pyproject = root / PYPROJECT
    original = pyproject.read_text(encoding="utf-8") if pyproject.is_file() else ""
    text = original
    edits: dict[Path, str] = {}
    notes: list[str] = [] if (broken := _toml_error(original)) is None else [f"{PYPROJECT} {broken}"]
    for setting in settings_for(folder):
        own = next((root / name for name in RUFF_FILES if (root / name).is_file()), None)
        if setting.tool == "ruff" and own is not None:
            current = edits.get(own, own.read_text(encoding="utf-8"))
            edited, note = _add_table(current, "", setting, own.name, folder)
            edits[own] = edited
        else:
            text, note = _add_table(text, f"tool.{setting.tool}", setting, PYPROJECT, folder)
        if note:
            notes.append(note)
        if setting.tool == "isort":
            notes += [
                f"{name} is isort's configuration here, before {PYPROJECT}: add to it: {'; '.join(setting.lines)}"
                for name in ISORT_FILES
                if (root / name).is_file()
            ]
    if text != original:
        edits[pyproject] = text
    written = []
    for path, edited in edits.items():
        if not path.is_file() or path.read_text(encoding="utf-8") != edited:
            path.write_text(edited, encoding="utf-8", newline=line_ending(path))
            written.append(path)
    return SettingsOutcome(tuple(written), tuple(notes))
