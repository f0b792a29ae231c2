"""The build cache: per config file, the package its last build wrote, that build's key and warnings."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

from toolgen.core.diagnostics import Diagnostic
from toolgen.project.config import CACHE_DIR, Config, display_path
from toolgen.project.input_digests import current_digests
from toolgen.project.manifest import MANIFEST_NAME, build_key, read_manifest, text_digest

# What ruff made of each generated file, by its text (format.FormatCache), in the project's scratch folder.
FORMAT_CACHE = "formatted.json"
# The models modules of the last build, by a hash of what made them (model_cache.ModelsCache).
MODELS_CACHE = "models.json"
_BUILD_CACHE = "build.json"


def format_cache_path(config: Config) -> Path:
    return config.root / CACHE_DIR / FORMAT_CACHE


def models_cache_path(config: Config) -> Path:
    return config.root / CACHE_DIR / MODELS_CACHE


def cache_entries(config: Config) -> dict[str, dict[str, Any]]:
    """The build cache: per config file of the project, the package it last wrote, its build key and warnings."""
    try:
        data = json.loads((config.root / CACHE_DIR / _BUILD_CACHE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def cached_warnings(config: Config) -> tuple[Diagnostic, ...]:
    """The warnings of the build that produced what is on disk: an up-to-date build repeats them."""
    try:
        recorded = cache_entries(config).get(config.display, {})
        return tuple(Diagnostic.from_json(item) for item in recorded.get("warnings", []))
    except (ValueError, KeyError, TypeError):
        return ()


def old_package(config: Config) -> Path | None:
    """The package this config's last build wrote, when `package:` or `output:` has moved it since.

    None when that is where the package now goes, one holds the other, or another config's build owns it.
    """
    entries = cache_entries(config)
    recorded = entries.get(config.display, {}).get("package_dir")
    if not isinstance(recorded, str):
        return None
    old, new = (config.root / recorded).resolve(), config.package_dir.resolve()
    others = {
        (config.root / str(entry["package_dir"])).resolve()
        for name, entry in entries.items()
        if name != config.display and isinstance(entry.get("package_dir"), str)
    }
    if old == new or old in new.parents or new in old.parents or old in others:
        return None
    return old


INPUTS_CHANGED = "inputs"
OTHER_CHANGE = "other"


def last_build_difference(config: Config, config_text: str) -> str | None:
    """None when neither inputs, config, generator nor the generated files changed since the cached build;
    INPUTS_CHANGED when an input file's bytes did (or a new one matches), OTHER_CHANGE for anything else."""
    manifest = read_manifest(config.package_dir)
    cached = cache_entries(config).get(config.display)
    if manifest is None or cached is None or cached.get("package_dir") != _shown(config, config.package_dir):
        return OTHER_CHANGE
    recorded: dict[str, str] = manifest.get("inputs", {})
    if current_digests(config.root, recorded) != recorded:
        return INPUTS_CHANGED
    matched = {
        display_path(config.root, Path(p))
        for pattern in config.inputs
        for p in glob.glob(str(config.root / pattern), recursive=True)
        if Path(p).is_file()
    }
    if not matched <= recorded.keys():
        return INPUTS_CHANGED
    from toolgen.output.drift import on_disk

    found = on_disk(config.package_dir, config.user_zone)
    if set(found) != {*manifest.get("files", {}), MANIFEST_NAME}:
        return OTHER_CHANGE
    for name, hashed in manifest.get("files", {}).items():
        if text_digest(found[name]) != hashed:
            return OTHER_CHANGE
    key = build_key(config_text, recorded) + text_digest(found[MANIFEST_NAME])
    from toolgen.output.beside import beside_unchanged

    return None if cached.get("key") == key and beside_unchanged(config) else OTHER_CHANGE


def remember_build(
    config: Config, config_text: str, inputs: dict[str, str], manifest: str, warnings: tuple[Diagnostic, ...]
) -> None:
    """Record what this build wrote, so the next one with nothing changed answers from the cache."""
    entries = cache_entries(config)
    entries[config.display] = {
        "package_dir": _shown(config, config.package_dir),
        "key": build_key(config_text, inputs) + text_digest(manifest),
        "warnings": [w.to_json() for w in warnings],
    }
    (_cache_dir(config) / _BUILD_CACHE).write_text(json.dumps(entries, sort_keys=True) + "\n", encoding="utf-8")
    current_digests(config.root, inputs, remember=True)  # what each input's text parses to, for the next verb


def _shown(config: Config, path: Path) -> str:
    return display_path(config.root, path)


def _cache_dir(config: Config) -> Path:
    """toolgen's own scratch space in the project, which git ignores by itself."""
    cache_dir = config.root / CACHE_DIR
    cache_dir.mkdir(exist_ok=True)
    (cache_dir / ".gitignore").write_text("*\n", encoding="utf-8")
    return cache_dir
