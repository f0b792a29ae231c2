"""The config as the last full read resolved it, kept in the project's cache so that a verb need not load YAML.

Reading toolgen.yaml means importing a YAML parser, which costs a quick verb (`validate` of one record, an
up-to-date `check`) about as much as the rest of its start. The resolved settings are kept beside the build
cache under the digest of the config's text and toolgen's source hash; a text or a toolgen that differs in any
byte reads the file again. Callers compare what they get with the manifest's record of the config (its resolved
digest covers every setting), so a cache that was edited by hand is never believed.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from toolgen.core.digests import text_digest
from toolgen.project.config import CACHE_DIR, CONFIG_NAME, Config, display_path

_NAME = "config.json"
_FORMAT = 1


def cached_config(root: Path, path: Path | None) -> Config | None:
    """The config the last full read of this very text made, or None."""
    from toolgen.project.manifest import source_digest

    file = path or root / CONFIG_NAME
    try:
        text = file.read_bytes().decode("utf-8-sig")
        stored = json.loads((root / CACHE_DIR / _NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != _key(root, file, text, source_digest()):
        return None
    settings = stored.get("settings")
    if not isinstance(settings, dict):
        return None
    try:
        return Config(root=root, **{name: _tupled(value) for name, value in settings.items()})
    except TypeError:
        return None


def remember_config(config: Config, path: Path | None) -> None:
    """Keep `config` for the next reader of the same text; a cache that cannot be written is left alone."""
    from toolgen.project.manifest import source_digest

    file = path or config.root / CONFIG_NAME
    try:
        text = file.read_bytes().decode("utf-8-sig")
        settings = {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name != "root"}
        content = json.dumps({"key": _key(config.root, file, text, source_digest()), "settings": settings})
        folder = config.root / CACHE_DIR
        folder.mkdir(exist_ok=True)
        staged = folder / f".{_NAME}.{os.getpid()}"
        staged.write_text(content, encoding="utf-8")
        os.replace(staged, folder / _NAME)
    except (OSError, ValueError, TypeError):
        pass


def _key(root: Path, file: Path, text: str, source: str) -> str:
    return f"{_FORMAT}:{display_path(root, file)}:{text_digest(text)}:{source}"


def _tupled(value: Any) -> Any:
    """JSON's lists as the tuples Config holds."""
    return tuple(_tupled(item) for item in value) if isinstance(value, list) else value
