"""Format stage: one pinned formatter (ruff), run with fixed settings so no local config changes the bytes."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from toolgen.disk import remove_tree
from toolgen.errors import ExternalToolError

# ruff's default, so `ruff check` with no configuration agrees with what was generated
LINE_LENGTH = 88
TARGET = "py310"
# Files copied as written: toolgen's runtime keeps its own formatting.
VERBATIM = "_runtime/"


def _ruff() -> str:
    from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

    return str(find_ruff_bin())


def _run(arguments: list[str], cwd: Path) -> None:
    completed = subprocess.run(arguments, cwd=cwd, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise ExternalToolError(
            f"ruff failed ({' '.join(arguments[1:3])}): {completed.stderr.strip() or completed.stdout.strip()}"
        )


def format_python(files: Mapping[str, str], package: str) -> dict[str, str]:
    """Sort imports and format every .py file made from the schemas; the copied runtime and other files pass
    through unchanged, so the runtime's lines match toolgen's source."""
    python = {name: text for name, text in files.items() if name.endswith(".py") and not name.startswith(VERBATIM)}
    if not python:
        return dict(files)
    ruff = _ruff()
    settings = [
        "--isolated",
        "--line-length",
        str(LINE_LENGTH),
        "--target-version",
        TARGET,
        "--config",
        f"lint.isort.known-first-party = [{package!r}]",
    ]
    root = Path(tempfile.mkdtemp(prefix="toolgen-format-"))
    try:
        for name, text in python.items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        names = sorted(python)
        _run(
            [ruff, "check", "--select", "I,F401,RUF022", "--fix", "--quiet", "--exit-zero", *settings, "--", *names],
            root,
        )
        _run([ruff, "format", "--quiet", *settings, "--", *names], root)
        formatted = {name: (root / name).read_text(encoding="utf-8") for name in names}
    finally:
        remove_tree(root)  # removing each of the files ruff wrote waited 3 ms on the disk here: a few at once
    return {**files, **formatted}
