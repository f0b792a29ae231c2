"""The requirement line that installs this toolgen again, read from how it was installed (PEP 610's direct_url.json).

`toolgen init` writes it to the project's requirements-toolgen.txt, which CI installs: the toolgen that made the
project, pinned, with no URL for the user to fill in. Where that source only exists on this machine (a wheel or a
folder outside the project), the line still installs here, and a note says what CI needs instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

DISTRIBUTION = "toolgen"
# No record of where this toolgen came from (run from a source tree, or a record pip could not have written).
_UNKNOWN = (
    "requirements-toolgen.txt cannot say where this toolgen came from, and no package index has toolgen: put "
    "where you install it from there (`toolgen @ git+URL@<commit sha>`, or the path of a wheel kept in the project)"
)


@dataclass(frozen=True)
class Pin:
    """A requirement line for this toolgen, and a sentence when it names something only this machine has.
    `requested` is the git revision it was installed by (a branch, a tag) when the pin is the commit that was."""

    requirement: str
    note: str | None = None
    requested: str | None = None


def own_pin(project: Path) -> Pin:
    """How to install this toolgen again from `project` (the folder CI's `pip install -r` runs in)."""
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        # Run from a source tree that is not installed: nothing says where it came from.
        return Pin(DISTRIBUTION, _UNKNOWN)
    return pin_from(distribution.read_text("direct_url.json"), distribution.version, project)


def pin_from(direct_url: str | None, version: str, project: Path) -> Pin:
    """The pin for a toolgen at `version` whose direct_url.json reads `direct_url` (None: from a package index)."""
    if not direct_url:
        return Pin(f"{DISTRIBUTION}=={version}")
    try:
        record = json.loads(direct_url)
        url = str(record["url"])
    except (ValueError, KeyError, TypeError):
        return Pin(f"{DISTRIBUTION}=={version}", _UNKNOWN)
    vcs = record.get("vcs_info")
    if isinstance(vcs, dict):
        # The commit, not the revision asked for: a branch (`main`) moves on, and CI must build with this toolgen.
        commit, requested = vcs.get("commit_id"), vcs.get("requested_revision")
        revision = commit or requested
        pinned = f"{vcs.get('vcs', 'git')}+{url}" + (f"@{revision}" if revision else "")
        asked = str(requested) if commit and requested and requested != commit else None
        if not url.startswith("file:"):
            return Pin(f"{DISTRIBUTION} @ {pinned}", requested=asked)
        where = unquote(urlsplit(url).path)
        return Pin(f"{DISTRIBUTION} @ {pinned}", _local(where, "a repository", version), asked)
    if not url.startswith("file:"):
        return Pin(f"{DISTRIBUTION} @ {url}")
    path = Path(url2pathname(unquote(urlsplit(url).path)))
    kind = "a folder" if isinstance(record.get("dir_info"), dict) else "a file"
    inside = _within(path, project)
    if inside is not None:
        # A wheel or checkout kept in the project installs the same way in CI, by its path from the project.
        return Pin(f"./{inside.as_posix()}")
    return Pin(f"{DISTRIBUTION} @ {url}", _local(str(path), kind, version))


def _within(path: Path, project: Path) -> Path | None:
    """`path` relative to `project` when it lies inside it."""
    path, project = path.resolve(), project.resolve()
    return path.relative_to(project) if path.is_relative_to(project) else None


def _local(where: str, kind: str, version: str) -> str:
    return (
        f"requirements-toolgen.txt installs toolgen from {kind} on this machine ({where}); a CI machine has no "
        f"such path: put toolgen's release there instead (`toolgen @ git+URL@<commit sha>` with the URL you got "
        f"toolgen from and the release's commit, or a wheel you keep in the project, as "
        f"`./path/to/toolgen-{version}-py3-none-any.whl`)"
    )
