"""The digest the manifest records of each input file: of what it says (its parsed data), not of how it is written.

A comment, a blank line, indentation or quoting changes a schema's bytes and nothing toolgen makes of it: such an
edit leaves the manifest as it was and `check` up to date. Key order is kept, since it orders the generated
models' fields and the exported schemas. An input holding a warning the manifest records is recorded by its text
instead, since the manifest repeats that warning's line:col: an edit that moves it is a change. A digest without
the `data:` prefix is of the text, as every manifest before this one recorded them (and the MCP lock's still is).

Parsing costs more than hashing, so what a text parses to is kept in the project's cache by the text's digest
(and toolgen's source hash): `build` writes it, every verb reads it, none believes it past what a text hashes to.
Whether the input patterns now match a file the build did not read is told here too (inputs_as_recorded).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgen.core.digests import digest, text_digest
from toolgen.project.config import CACHE_DIR, Config, display_path, is_own_file, resolved
from toolgen.project.manifest import BUILTIN_PREFIX, source_digest

if TYPE_CHECKING:
    from toolgen.core.diagnostics import Diagnostic
    from toolgen.source.load import Document

DATA = "data:"
_MEMO = "inputs.json"


def data_digest(data: Any) -> str:
    """The digest of parsed YAML or JSON: the same for every way of writing the same data in the same order."""
    return DATA + digest(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


def recorded_digests(documents: Iterable[Document], warnings: Iterable[Diagnostic]) -> dict[str, str]:
    """What the manifest records of each input read: its data's digest, or its text's when a warning is placed in
    it (the manifest repeats the warning's line:col, which only the text fixes)."""
    placed = {warning.path for warning in warnings}
    return {
        document.display: text_digest(document.text) if document.display in placed else data_digest(document.data)
        for document in documents
    }


def input_file(root: Path, display: str) -> Path:
    """The file an input's display name (relative to the project root, or `<toolgen>/...`) stands for."""
    if display.startswith(BUILTIN_PREFIX):
        from toolgen.core.resources import schemas_dir

        return schemas_dir() / display[len(BUILTIN_PREFIX) :]
    return root / display


def _parsed(text: str, display: str) -> str | None:
    # Imported here: a project whose texts the cache knows is checked without a YAML parser.
    from toolgen.source.load import LoadError, parse_text

    try:
        return data_digest(parse_text(text, Path(display), display).data)
    except (LoadError, RecursionError):
        return None


def current_digests(root: Path, recorded: Mapping[str, str], *, remember: bool = False) -> dict[str, str | None]:
    """Each of the `recorded` inputs' digest now, of the kind recorded (data or text); None for a file that cannot
    be read or parsed. `remember` (build) keeps what each text parses to in the cache, for the next verb."""
    known = _memo(root)
    used: dict[str, str] = {}
    found: dict[str, str | None] = {}
    for display, hashed in recorded.items():
        try:
            text = input_file(root, display).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            found[display] = None
            continue
        key = text_digest(text)
        if not str(hashed).startswith(DATA):  # a text digest, or a hand-edited manifest's anything
            found[display] = key
            continue
        data = known.get(key) or _parsed(text, display)
        if data is not None:
            used[key] = data
        found[display] = data
    if remember:
        _keep(root, used)
    return found


def inputs_as_recorded(config: Config, recorded: object) -> dict[str, str] | None:
    """The manifest's inputs when each still has its recorded digest and the globs match no other file."""
    if not isinstance(recorded, dict) or not all(isinstance(v, str) for v in recorded.values()):
        return None
    inputs = {str(name): hashed for name, hashed in recorded.items()}
    if current_digests(config.root, inputs) != inputs or matches_another_file(config, inputs):
        return None
    return inputs


def matches_another_file(config: Config, recorded: Collection[str]) -> bool:
    """Whether an input pattern matches a file the build would read that is not one of the `recorded` inputs.

    A match is named as the build names it, by its resolved path: resolving one path asks the file system about
    each of its folders, so a folder is resolved once for all its files, and a match is resolved alone only when
    it is a link, lies in a folder reached through one, or is not among the inputs by its own path.
    """
    root = resolved(config.root)
    base = str(root) + os.sep
    plain: dict[str, bool] = {}  # folder -> no link on the way to it from the root
    for pattern in config.inputs:
        for match in glob.glob(str(config.root / pattern), recursive=True):
            if _display_as_is(match, base, plain) in recorded:
                continue
            path = Path(match).resolve()
            if display_path(config.root, path) in recorded or not path.is_file():
                continue
            if not is_own_file(config, path):
                return True  # a new file the build would read
    return False


def _display_as_is(match: str, base: str, plain: dict[str, bool]) -> str | None:
    """`match`'s display path when it is what resolving it gives (no link on the way, no `.` or `..`)."""
    if not match.startswith(base) or os.path.normpath(match) != match:
        return None
    folder = os.path.dirname(match)
    if folder not in plain:
        plain[folder] = os.path.realpath(folder) == folder
    if not plain[folder] or os.path.islink(match):
        return None
    return match[len(base) :].replace(os.sep, "/")


def as_recorded(root: Path, inputs: Mapping[str, str], recorded: object) -> dict[str, str]:
    """This build's `inputs`, each the manifest `recorded` by its text (as manifests before `data:` did) kept as
    recorded while the file's text is still the one hashed: a package whose manifest differs only in how it
    hashed a file that has not changed is up to date."""
    if not isinstance(recorded, Mapping):
        return dict(inputs)
    older = {
        display: str(recorded[display])
        for display, hashed in inputs.items()
        if hashed.startswith(DATA) and isinstance(recorded.get(display), str) and not recorded[display].startswith(DATA)
    }
    now = current_digests(root, older)
    return {
        display: older[display] if now.get(display, "") == older.get(display) else hashed
        for display, hashed in inputs.items()
    }


def _memo(root: Path) -> dict[str, str]:
    try:
        held = json.loads((root / CACHE_DIR / _MEMO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(held, dict) or held.get("source") != source_digest() or not isinstance(held.get("data"), dict):
        return {}
    return {str(key): value for key, value in held["data"].items() if isinstance(value, str)}


def _keep(root: Path, digests: Mapping[str, str]) -> None:
    """Write the cache of what texts parse to (only the current inputs', so it never grows); a cache that
    cannot be written is only slower."""
    folder = root / CACHE_DIR
    staged = folder / f".{_MEMO}.{os.getpid()}"
    try:
        folder.mkdir(exist_ok=True)
        staged.write_text(
            json.dumps({"source": source_digest(), "data": dict(sorted(digests.items()))}), encoding="utf-8"
        )
        os.replace(staged, folder / _MEMO)
    except OSError:
        with contextlib.suppress(OSError):
            staged.unlink(missing_ok=True)
