"""`check` without rendering: when all that the manifest records still holds, the package is up to date.

The manifest (manifest.py) records every input file read (the schemas the globs matched and every file they
`$ref`), the config's text and what it resolved to, the makers (toolgen's source hash and the versions of the
libraries that shape the output) and the build's warnings. When each of them is what it is now, no input glob
matches a file the build did not read, the package holds exactly the files the manifest lists with the text it
records, and the manifest is the one those files render, a full render would produce those same bytes:
`check` answers with the recorded warnings. Anything else, even a doubt, returns None, and `check` renders.

What it cannot check is what the manifest alone says: its own list of warnings (hand-edited, it is repeated
as written; `check --full` finds the manifest differs) and libraries other than the ones it names.
"""

from __future__ import annotations

import json
from pathlib import Path

from toolgen.beside import on_disk as beside_on_disk
from toolgen.beside import recorded_beside
from toolgen.building import work_dir
from toolgen.config import CACHE_DIR, INSTALLABLE, PYPROJECT, Config, display_path
from toolgen.diagnostics import Diagnostic
from toolgen.drift import CheckResult, on_disk
from toolgen.manifest import (
    MANIFEST_NAME,
    config_record,
    recorded_makers,
    render_manifest,
    running_makers,
)
from toolgen.recorded import recorded_config, recorded_inputs
from toolgen.write import leftovers

# A warning that depends on folders, not on the files the manifest hashes (input-unmatched: whether a
# pattern's folder exists), may come and go without any recorded hash changing: such a build is rendered.
_UNRECORDED = frozenset({"input-unmatched"})


def instant_check(root: Path, config_path: Path | None) -> CheckResult | None:
    """The answer a full `check` would give when the package is up to date; None when it may not be."""
    found = recorded_config(root, config_path)
    if found is None:
        return None
    config, manifest = found
    makers = running_makers()
    if recorded_makers(manifest) != makers:
        return None
    inputs = recorded_inputs(config, manifest.get("inputs"))
    warnings = _recorded_warnings(manifest.get("warnings"))
    if inputs is None or warnings is None or _moved_since_last_build(config):
        return None
    if leftovers(config.package_dir, work_dir(config, config.package_dir)):
        return None  # an interrupted build: a full check reports it
    actual = on_disk(config.package_dir, config.user_zone)
    files = {name: text for name, text in actual.items() if name != MANIFEST_NAME}
    # The files beside the package as they are now: the manifest renders the same only when each is as recorded.
    wanted = {PYPROJECT} if config.package_layout == INSTALLABLE else set()
    beside = beside_on_disk(config, set(recorded_beside(config.package_dir)) | wanted)
    expected = render_manifest(
        files, inputs, config=config_record(config), warnings=warnings, makers=makers, beside=beside
    )
    if actual.get(MANIFEST_NAME) != expected:
        return None
    return CheckResult(config.package_dir, (), "", warnings)


def _recorded_warnings(recorded: object) -> tuple[Diagnostic, ...] | None:
    """The build's warnings as the manifest records them, when a full check is sure to give the same."""
    try:
        warnings = tuple(Diagnostic.from_json(item) for item in recorded) if isinstance(recorded, list) else None
    except (KeyError, TypeError, ValueError):
        return None
    return None if warnings is None or any(w.rule in _UNRECORDED for w in warnings) else warnings


def _moved_since_last_build(config: Config) -> bool:
    """The build cache names another package folder for this config: a full check looks for a stale package."""
    try:
        entries = json.loads((config.root / CACHE_DIR / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    entry = entries.get(config.display) if isinstance(entries, dict) else None
    recorded = entry.get("package_dir") if isinstance(entry, dict) else None
    return recorded is not None and recorded != display_path(config.root, config.package_dir)
