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

_SEPARATORS = re.compile(r"[-_.]+")


def _normalized(name: str) -> str:
    return _SEPARATORS.sub("_", name).lower()


def installed_version(name: str) -> str | None:
    """The version of distribution `name` as `importlib.metadata.version` gives it; None when not installed."""
    wanted = _normalized(name)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file, a missing folder
            continue
        found = [
            folder
            for folder in names
            if folder.endswith((".dist-info", ".egg-info")) and _normalized(folder.split("-", 1)[0]) == wanted
        ]
        if not found:
            continue
        stem = found[0].removesuffix(".dist-info")
        if len(found) == 1 and stem != found[0] and stem.count("-") == 1:
            return stem.split("-", 1)[1]
        return _from_metadata(name)
    return _from_metadata(name)


def _from_metadata(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
