"""An up-to-date `check`'s answer kept in the project's cache, with the stamps of every file the answer depends on.

The manifest's answer (instant_check.py) still reads every file of the package and every input, and renders the
manifest again: for a package of 1,000 tools that costs more than `import pydantic`. When it finds the package
up to date, the warnings it answered with are kept in `.toolgen-cache/check.json` under a key of everything the
answer depends on: toolgen's source hash and the versions of the libraries that shape the output, what each
input pattern matches, and the stamps (stamps.py) of the config, every input, every file of the package (the
manifest among them), the files beside it, the build cache and an interrupted build's plan. The next `check` of
the same config whose key is the same answers with those warnings, reading none of the files; any difference,
or a file written too recently to trust its stamp, and the manifest answers as before (and keeps its answer).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.stamps import fingerprint, keep, read_kept, settled, stamp
from toolgen.output.building import work_dir
from toolgen.output.write import leftovers, package_entries
from toolgen.project.config import CACHE_DIR, INSTALLABLE, PYPROJECT, Config
from toolgen.project.input_digests import input_file
from toolgen.project.manifest import BUILTIN_PREFIX, running_makers

_NAME = "check.json"
# Changes whenever what the key covers, or how an entry is written, changes.
_FORMAT = 1
_SEVERITIES = MappingProxyType({severity.value: severity for severity in Severity})


def kept_warnings(config: Config) -> tuple[Diagnostic, ...] | None:
    """The warnings the last up-to-date `check` of this config answered with, when nothing they depend on has
    changed since; None otherwise."""
    held = read_kept(config.root / CACHE_DIR / _NAME)
    entry = held.get(config.display) if isinstance(held, dict) else None
    if not isinstance(entry, dict):
        return None
    inputs, beside, warnings = _texts(entry.get("inputs")), _texts(entry.get("beside")), entry.get("warnings")
    if inputs is None or beside is None or not isinstance(warnings, list):
        return None
    key, _ = _key(config, inputs, beside)
    if entry.get("key") != key:
        return None
    return _diagnostics(warnings)


def keep_answer(
    config: Config, inputs: Iterable[str], beside: Iterable[str], warnings: Sequence[Diagnostic], started_ns: int
) -> None:
    """Keep the warnings of an up-to-date `check` that began at `started_ns`, unless a file it read was written so
    recently that a later write might not change its stamp."""
    recorded, candidates = sorted(inputs), sorted(beside)
    key, stamps = _key(config, recorded, candidates)
    if not settled(stamps, started_ns):
        return
    file = config.root / CACHE_DIR / _NAME
    held = read_kept(file)
    entries = {k: v for k, v in held.items() if isinstance(v, dict)} if isinstance(held, dict) else {}
    entries[config.display] = {
        "key": key,
        "inputs": recorded,
        "beside": candidates,
        "warnings": [[w.path, w.line, w.col, w.severity.value, w.rule, w.message, w.pointer] for w in warnings],
    }
    keep(file, entries)


def _key(config: Config, inputs: Sequence[str], beside: Sequence[str]) -> tuple[str, list[Any]]:
    """The key of an answer for `config` (its recorded `inputs` and the `beside` file names the manifest may list),
    and the stamps it covers."""
    root, package, output = str(config.root), str(config.package_dir), str(config.output_dir)
    matches = [sorted(glob.glob(os.path.join(root, pattern), recursive=True)) for pattern in config.inputs]
    # Each file once, in a fixed order: an input is most often a match too.
    named = dict.fromkeys([os.path.join(root, config.display), *(_input(root, display) for display in inputs)])
    named.update(dict.fromkeys(match for found in matches for match in found))
    named.update(
        dict.fromkeys(os.path.join(package, name) for name in package_entries(config.package_dir, config.user_zone))
    )
    named.update(dict.fromkeys(os.path.join(output, name) for name in beside))
    named[os.path.join(root, CACHE_DIR, "build.json")] = None
    if config.package_layout == INSTALLABLE:
        named[os.path.join(output, PYPROJECT)] = None
    files = list(named)
    stamps = [stamp(path) for path in files]
    parts = {
        "format": _FORMAT,
        "config": config.display,
        "makers": running_makers(),
        "matches": matches,
        "files": list(zip(files, stamps, strict=True)),
        "leftovers": leftovers(config.package_dir, work_dir(config, config.package_dir)),
    }
    return fingerprint(parts), stamps


def _input(root: str, display: str) -> str:
    return str(input_file(Path(root), display)) if display.startswith(BUILTIN_PREFIX) else os.path.join(root, display)


def _texts(value: object) -> list[str] | None:
    return value if isinstance(value, list) and all(isinstance(item, str) for item in value) else None


def _diagnostics(warnings: list[Any]) -> tuple[Diagnostic, ...] | None:
    """The kept warnings (each a row of its fields, as written above), or None for one written otherwise."""
    try:
        found = tuple(
            Diagnostic(path, line, col, _SEVERITIES[severity], rule, message, pointer)
            for path, line, col, severity, rule, message, pointer in warnings
        )
    except (KeyError, TypeError, ValueError):
        return None
    texts = all(type(d.path) is type(d.rule) is type(d.message) is type(d.pointer) is str for d in found)
    return found if texts and all(type(d.line) is type(d.col) is int for d in found) else None
