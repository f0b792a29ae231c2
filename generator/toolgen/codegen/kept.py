"""One kept entry in one file of toolgen's scratch folder: a key, and texts made under it that a build reads back.

The file is a line of JSON (the format, the key and a hash of the rest), then the texts as JSON. An entry is
returned only for its own key and only whole: a file cut short or edited since (its hash no longer matches), of
another format, or not what toolgen writes, is none, and whoever asked makes the texts again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeGuard

# Bumped whenever what an entry holds changes.
_FORMAT = 1


def _texts(value: object) -> TypeGuard[dict[str, str]]:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


class KeptEntry:
    """The entry of one file; `save` writes what `keep` was last given (a build calls it once it has committed)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._kept: bytes | None = None

    def lookup(self, key: str) -> list[dict[str, str]] | None:
        """The maps of texts the file holds under `key`, or None."""
        try:
            with open(self.path, "rb") as handle:
                head = json.loads(handle.readline())
                if not isinstance(head, dict) or head.get("format") != _FORMAT or head.get("key") != key:
                    return None
                body = handle.read()
        except (OSError, ValueError):
            return None
        if hashlib.sha256(body).hexdigest() != head.get("check"):
            return None
        try:
            parts = json.loads(body)
        except ValueError:
            return None
        if not isinstance(parts, list) or not all(_texts(part) for part in parts):
            return None
        return parts

    def keep(self, key: str, parts: Sequence[Mapping[str, str]]) -> None:
        body = json.dumps([dict(part) for part in parts], sort_keys=True, ensure_ascii=False).encode()
        head = {"check": hashlib.sha256(body).hexdigest(), "format": _FORMAT, "key": key}
        self._kept = json.dumps(head, sort_keys=True).encode() + b"\n" + body

    def save(self) -> None:
        """Replace the file with what `keep` was given, if anything; one that cannot be written is only slower."""
        if self._kept is None:
            return
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.partial")
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_bytes(self._kept)
            os.replace(partial, self.path)
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        self._kept = None


def hashed(named: object, *texts: str) -> str:
    """A key: a hash of `named` (JSON data) and of `texts`, each kept apart from the next."""
    hasher = hashlib.sha256(json.dumps(named, sort_keys=True).encode())
    for text in texts:
        hasher.update(b"\0")
        hasher.update(text.encode())
    return hasher.hexdigest()
