"""`check` without rendering: when all that the manifest records still holds, the package is up to date.

The manifest (manifest.py) records every input file read (the schemas the globs matched and every file they
`$ref`), the config's text and what it resolved to, the makers (toolgen's source hash and the versions of the
libraries that shape the output) and the build's warnings. When each of them is what it is now, no input glob
matches a file the build did not read, the package holds exactly the files the manifest lists with the text it
records, and the manifest is the one those files render, a full render would produce those same bytes:
`check` answers with the recorded warnings. Anything else, even a doubt, returns None, and `check` renders.

That answer is kept (kept_check.py) with the stamps of every file it read: the next `check` of an unchanged
project answers from it without reading the package, the inputs or the manifest again.

What it cannot check is what the manifest alone says: its own list of warnings (hand-edited, it is repeated
as written; `check --full` finds the manifest differs) and libraries other than the ones it names.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from toolgen.core.diagnostics import Diagnostic
from toolgen.core.digests import digest
from toolgen.output.beside import on_disk as beside_on_disk
from toolgen.output.beside import recorded_beside
from toolgen.output.building import work_dir
from toolgen.output.drift import CheckResult
from toolgen.output.kept_check import keep_answer, kept_warnings
from toolgen.output.write import leftovers, package_entries
from toolgen.project.config import CACHE_DIR, INSTALLABLE, PYPROJECT, Config, display_path
from toolgen.project.config_cache import cached_config
from toolgen.project.input_digests import inputs_as_recorded
from toolgen.project.manifest import (
    MANIFEST_NAME,
    config_record,
    recorded_makers,
    render_manifest_of,
    running_makers,
    text_digest,
)
from toolgen.project.recorded import recorded_config

# A warning that depends on folders, not on the files the manifest hashes (input-unmatched: whether a
# pattern's folder exists), may come and go without any recorded hash changing: such a build is rendered.
_UNRECORDED = frozenset({"input-unmatched"})


def instant_check(root: Path, config_path: Path | None) -> CheckResult | None:
    """The answer a full `check` would give when the package is up to date; None when it may not be."""
    started = time.time_ns()  # before any file is read: what was written since cannot be kept as read
    config = cached_config(root, config_path)
    kept = kept_warnings(config) if config is not None else None
    if config is not None and kept is not None:
        return CheckResult(config.package_dir, (), "", kept)
    found = recorded_config(root, config_path)
    if found is None:
        return None
    config, manifest = found
    makers = running_makers()
    if recorded_makers(manifest) != makers:
        return None
    inputs = inputs_as_recorded(config, manifest.get("inputs"))
    warnings = _recorded_warnings(manifest.get("warnings"))
    if inputs is None or warnings is None or _moved_since_last_build(config):
        return None
    if leftovers(config.package_dir, work_dir(config, config.package_dir)):
        return None  # an interrupted build: a full check reports it
    digests = _digests_on_disk(config)
    # The files beside the package as they are now: the manifest renders the same only when each is as recorded.
    wanted = {PYPROJECT} if config.package_layout == INSTALLABLE else set()
    candidates = set(recorded_beside(config.package_dir)) | wanted
    beside = {name: text_digest(text) for name, text in beside_on_disk(config, candidates).items()}
    expected = render_manifest_of(
        {name: hashed for name, hashed in digests.items() if name != MANIFEST_NAME},
        inputs,
        config=config_record(config),
        warnings=warnings,
        makers=makers,
        beside=beside,
    )
    if digests.get(MANIFEST_NAME) != text_digest(expected):
        return None
    keep_answer(config, inputs, candidates, warnings, started)
    return CheckResult(config.package_dir, (), "", warnings)


def _digests_on_disk(config: Config) -> dict[str, str]:
    """The text digest of each file of the package outside the user zone, as drift.on_disk reads them: a file
    that is not UTF-8, or not a file, by the text standing for it there."""
    found: dict[str, str] = {}
    package = config.package_dir
    for name in package_entries(package, config.user_zone):
        try:
            with open(os.path.join(package, name), "rb") as file:
                data = file.read()
            text = data.decode("utf-8")  # raises for a file that is not UTF-8, as reading it as text does
            # Without a CR, the text's digest is its bytes' (read as text, CRLF and CR would become LF).
            found[name] = text_digest(text.replace("\r\n", "\n").replace("\r", "\n")) if "\r" in text else digest(data)
        except UnicodeDecodeError:
            found[name] = text_digest("<binary file>\n")
        except OSError:  # a dangling or folder symlink
            found[name] = text_digest("<unreadable>\n")
    return found


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
