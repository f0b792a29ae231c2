"""The packages the staged check passed, by their bytes and the files they imported: the same bytes are not checked again.

A check (toolgen.output.sdk_check) that passes leaves a record: a digest of the package's files (its name, each file's
name and bytes, and what checked it: the check's own script, the interpreter) and, for each file the interpreter
loaded from outside the package (the standard library, pydantic and whatever else it imported) and each folder
of its module search path, the stamp it had: modification and change times, inode and size (a change time
cannot be set back, and a file replaced is a new inode). A later build whose package has the same digest stats
those files and folders again: when every one is as recorded (nothing was installed, upgraded or removed there),
the package would import as it did, and the check is not run again. A file of the environment changed runs the
whole check.

The record also holds the parts of the package that passed: one key per tool, a digest of the tool's definition,
its own model modules (those holding its models and imported by no other module), every other file of the
package but `tools.py` (which holds every definition), `tools.py`'s code around the definitions, and toolgen's
own source. A package that differs from the last one only in some tools'
definitions or own modules, in the environment that one passed in, is checked for those tools: a tool's own modules
import nothing but files its key holds, and its validators read nothing else, so the rest passed as they are. The
own modules imported beside the skipped tools must do nothing but make models (imports from pydantic, typing and
the package, classes, `Field(...)`); one that does more may reach other tools, and every tool is checked.

The record is a cache in the project's scratch folder, like the compiled modules: a lost or unreadable one only
makes the next build check again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolgen.core.stamps import stamp

RECORD = "checked.json"
# The packages remembered: a project's last few builds (a branch switched back and forth, a forced rebuild).
KEEP = 4
_VERSION = 4

# One file or folder of a check's environment: its path and stamp (core/stamps.py's, the fields the check's
# script writes in the same order).
Stat = tuple[str, int, int, int, int]


def package_digest(package: str, files: Mapping[str, str], checker: str) -> str:
    """What a check's verdict depends on of the package: its name and files, and `checker` (what checks it)."""
    digest = hashlib.blake2b(digest_size=20)
    header = json.dumps([_VERSION, checker, sys.executable, sys.version, package])
    digest.update(header.encode("utf-8"))
    for name in sorted(files):
        data = files[name].encode("utf-8", "surrogatepass")
        digest.update(f"\0{name}\0{len(data)}\0".encode("utf-8", "surrogatepass"))
        digest.update(data)
    return digest.hexdigest()


def unchanged(environment: Iterable[Sequence[Any]]) -> bool:
    """True when every recorded file and folder still has its recorded stamp."""
    for path, *recorded in environment:
        found = stamp(path)
        if found is None or list(found) != recorded:
            return False
    return True


class CheckedPackages:
    """The record of packages that passed the check, in one JSON file (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # The file as read once (a build asks it three times, and with a key per tool it holds thousands), then as
        # add() wrote it: only a build, under the build lock, writes it. The environment is stat'ed on each ask.
        self._held: list[dict[str, Any]] | None = None

    def _entries(self) -> list[dict[str, Any]]:
        if self._held is None:
            self._held = self._read()
        return self._held

    def _read(self) -> list[dict[str, Any]]:
        try:
            held = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(held, dict) or held.get("version") != _VERSION or not isinstance(held.get("packages"), list):
            return []
        return [entry for entry in held["packages"] if _well_formed(entry)]

    def passed(self, digest: str) -> int | None:
        """How many tools the package of `digest` had when it passed, if it did in the environment there is now."""
        for entry in self._entries():
            if entry["digest"] == digest:
                return int(entry["tools"]) if unchanged(entry["environment"]) else None
        return None

    def reusable(self) -> tuple[list[str], list[Stat]] | None:
        """The parts of the last package that passed and the environment it passed in, while that environment is
        as it was: a tool whose part key is among them passed as it is (see the module docstring)."""
        entries = self._entries()
        if not entries or not unchanged(entries[0]["environment"]):
            return None
        last = entries[0]
        environment: list[Stat] = [(str(p), int(a), int(b), int(c), int(d)) for p, a, b, c, d in last["environment"]]
        return list(last.get("parts", [])), environment

    def current(self) -> bool:
        """Whether the last package that passed did so in the environment there is now: then a build may well
        make one that passed before (a forced rebuild, a change undone)."""
        entries = self._entries()
        return bool(entries) and unchanged(entries[0]["environment"])

    def add(self, digest: str, tools: int, environment: Iterable[Stat], parts: Iterable[str] = ()) -> None:
        """Remember that the package of `digest`, with `tools` tools and the tool `parts` (keys), passed in
        `environment`; a record that cannot be written is only a check more next time."""
        entry = {
            "digest": digest,
            "tools": tools,
            "environment": sorted({tuple(stat) for stat in environment}),
            "parts": sorted(set(parts)),
        }
        entries = [entry, *(old for old in self._entries() if old["digest"] != digest)][:KEEP]
        self._held = entries
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.partial")
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps({"version": _VERSION, "packages": entries}), encoding="utf-8")
            os.replace(partial, self.path)
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def _well_formed(entry: object) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("digest"), str):
        return False
    environment, parts = entry.get("environment"), entry.get("parts", [])
    return (
        isinstance(entry.get("tools"), int)
        and isinstance(parts, list)
        and all(isinstance(part, str) for part in parts)
        and isinstance(environment, list)
        and all(
            isinstance(stat, list)
            and len(stat) == 5
            and isinstance(stat[0], str)
            and all(isinstance(number, int) for number in stat[1:])
            for stat in environment
        )
    )
