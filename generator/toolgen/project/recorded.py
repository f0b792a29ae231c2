"""What the package's manifest records about the project, read without the drift and write machinery.

`validate`, `lint` and `export` ask it whether the config and the inputs are as the last build saw them: then
the meta-schema checks that build ran need not run again (nor jsonschema be imported for them). It imports
only the config and the manifest, so those verbs start without what `check` and `build` need.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolgen.core.errors import ToolgenError
from toolgen.project.config import Config, load_config
from toolgen.project.config_cache import cached_config, plain_config, remember_config
from toolgen.project.input_digests import inputs_as_recorded
from toolgen.project.manifest import MANIFEST_FORMAT, config_record, read_manifest, source_digest


def recorded_config(root: Path, config_path: Path | None) -> tuple[Config, dict[str, Any]] | None:
    """The config, read without its shape check, and its package's manifest, when that manifest records this
    config as it is now (text and resolved settings) and was made by this very toolgen (its source hash).

    The shape check against the meta-schema (and loading jsonschema for it) can be left out then: the same text
    passed it at build time, under the same toolgen.
    """
    cached = cached_config(root, config_path)
    # Without the cache (a fresh checkout), a text in the plain subset of YAML is read without a YAML parser. It
    # is believed only as the cache is: where the manifest records the very settings it resolved to (a text it
    # does not record, the YAML parser would not make it record either: the checked load then reads it).
    config = cached or plain_config(root, config_path)
    if config is None:
        try:
            config = load_config(root, config_path, check_shape=False)
        except (ToolgenError, AttributeError, TypeError, ValueError):
            # Unchecked, a malformed config can fail in any of these ways; the checked load reports it properly.
            return None
    manifest = read_manifest(config.package_dir)
    if manifest is None or manifest.get("format") != MANIFEST_FORMAT:
        return None
    if manifest.get("config") != config_record(config) or manifest.get("source") != source_digest():
        return None
    if cached is None:
        remember_config(config, config_path)  # the manifest vouches for it: the next verb need not read YAML
    return config, manifest


def recorded_project(root: Path, config_path: Path | None) -> Config | None:
    """The config, read without its shape check, when its package's manifest records it and every input as they
    are now, under this toolgen: the meta-schema checks the build ran on them would find nothing again."""
    found = recorded_config(root, config_path)
    if found is None or recorded_inputs(found[0], found[1].get("inputs")) is None:
        return None
    return found[0]


def recorded_inputs(config: Config, recorded: object) -> dict[str, str] | None:
    """The manifest's inputs when each still has its recorded digest and the globs match no other file."""
    return inputs_as_recorded(config, recorded)
