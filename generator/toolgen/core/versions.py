"""Installed versions of distributions, read from the names of their `.dist-info` folders.

`importlib.metadata` finds the same folders but parses every METADATA file it opens with the `email` package;
importing it costs about as much as importing pydantic, which `check`'s fast path cannot afford. A wheel's
installer names the folder `{name}-{version}.dist-info` (the binary distribution format), so the version is in
the name; anything else (an egg, a name found twice) is left to `importlib.metadata`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable

_SEPARATORS = re.compile(r"[-_.]+")


def _normalized(name: str) -> str:
    return _SEPARATORS.sub("_", name).lower()


def installed_versions(names: Iterable[str]) -> dict[str, str | None]:
    """The version of each distribution as `importlib.metadata.version` gives it; None for one not installed."""
    wanted = {name: _normalized(name) for name in names}
    found: dict[str, list[str]] = {}
    for entry in sys.path:
        try:
            folders = os.listdir(entry or ".")
        except OSError:  # a zip file, a missing folder
            continue
        here: dict[str, list[str]] = {}
        for folder in folders:
            if folder.endswith((".dist-info", ".egg-info")):
                here.setdefault(_normalized(folder.split("-", 1)[0]), []).append(folder)
        for name, normal in wanted.items():
            if name not in found and normal in here:
                found[name] = here[normal]  # the first entry of sys.path that has it wins, as for the import system
    return {name: _from_folders(name, found.get(name, [])) for name in wanted}


def _from_folders(name: str, folders: list[str]) -> str | None:
    stem = folders[0].removesuffix(".dist-info") if len(folders) == 1 else ""
    if stem and stem != folders[0] and stem.count("-") == 1:
        return stem.split("-", 1)[1]
    return _from_metadata(name)  # an egg, a name found twice in one folder, or none found


def _from_metadata(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
