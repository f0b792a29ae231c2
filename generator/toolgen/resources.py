"""Where the built-in schemas and templates are: inside the installed wheel, or at the top of a source checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def _resource_dir(name: str) -> Path:
    packaged = Path(str(resources.files("toolgen"))) / name
    if packaged.is_dir():
        return packaged
    # An editable install runs from generator/toolgen; the directories sit at the repository top.
    checkout = Path(__file__).resolve().parents[2] / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"toolgen's built-in {name}/ directory is missing from this installation")


def schemas_dir() -> Path:
    return _resource_dir("schemas")


def templates_dir() -> Path:
    return _resource_dir("templates")
