"""Where the built-in schemas and templates are: inside the installed wheel, or at the top of a source checkout."""

from __future__ import annotations

from pathlib import Path


def _resource_dir(name: str) -> Path:
    # The package's own folder, as importlib.resources.files("toolgen") gives it for an installed wheel; without
    # importing importlib.resources (and tempfile), which the verbs that hash toolgen's source would pay for.
    packaged = Path(__file__).resolve().parents[1] / name
    if packaged.is_dir():
        return packaged
    # An editable install runs from generator/toolgen; the directories sit at the repository top.
    checkout = Path(__file__).resolve().parents[3] / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"toolgen's built-in {name}/ directory is missing from this installation")


def schemas_dir() -> Path:
    return _resource_dir("schemas")


def templates_dir() -> Path:
    return _resource_dir("templates")
