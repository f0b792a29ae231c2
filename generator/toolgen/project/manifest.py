"""The manifest written last into the generated package: hashes of its files and of what it was built from."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.digests import digest as digest
from toolgen.core.digests import text_digest as text_digest  # re-exported: the manifest is where callers look
from toolgen.core.stamps import fingerprint, keep, read_kept, settled, stamp
from toolgen.core.versions import installed_versions
from toolgen.project.feature_names import FEATURES
from toolgen.project.manifest_json import manifest_json

if TYPE_CHECKING:
    from toolgen.project.config import Config

MANIFEST_NAME = "toolgen-manifest.json"
MANIFEST_FORMAT = 3
RUNTIME_DIR = "_runtime"
BUILTIN_PREFIX = "<toolgen>/"
# What made the package, recorded in its manifest: `check` warns when the running versions differ.
MAKERS = ("toolgen", "datamodel-code-generator", "pydantic", "ruff")
# Other libraries whose behaviour reaches the output or decides whether a build succeeds: the templates, YAML,
# the checks against meta-schemas, $ref resolution and the published meta-schemas bundled.
SHAPING = ("jinja2", "jsonschema", "jsonschema-specifications", "pyyaml", "referencing")
# The manifest's record of what made the package; a package made otherwise is not drift by that alone.
MAKER_KEYS = ("shaping", "source", "versions")
# Files of toolgen's installation that are not its source.
_NOT_SOURCE = frozenset({"__pycache__"})
# Where source_digest keeps its answer with the stamps of the files it hashed: beside toolgen's bytecode.
_SOURCE_MEMO = "toolgen-source.json"


def _source_files(root: Path, skip: frozenset[Path]) -> Iterable[tuple[str, str]]:
    """Every file under `root` as (POSIX path relative to it, path), sorted; caches, dotfiles and `skip` left out."""
    start, skipped = str(root), {str(path) for path in skip}
    for top, folders, names in os.walk(start):
        folders[:] = sorted(
            f for f in folders if f not in _NOT_SOURCE and not f.startswith(".") and os.path.join(top, f) not in skipped
        )
        base = "" if top == start else os.path.relpath(top, start).replace(os.sep, "/") + "/"
        for name in sorted(n for n in names if not n.startswith(".") and not n.endswith((".pyc", ".pyo"))):
            yield base + name, os.path.join(top, name)


@functools.cache
def source_digest() -> str:
    """One hash of toolgen's code, templates and built-in schemas, the same for a wheel and a checkout.

    An editable install changes under it, so nothing computed at install time would do; hashing its 300 files costs
    a quick verb a third of `import pydantic`. The answer is kept beside toolgen's bytecode (as Python keeps a
    module's) with the stamps of the files hashed (stamps.py), and read again while every stamp is the same and
    no file came or went. Line endings are normalized, so a CRLF checkout hashes like an LF one.
    """
    from toolgen.core.resources import schemas_dir, templates_dir

    package = Path(__file__).resolve().parents[1]
    resources = {"templates": templates_dir().resolve(), "schemas": schemas_dir().resolve()}
    files = [
        (f"{prefix}/{name}", path)
        for prefix, root in (("toolgen", package), *resources.items())
        for name, path in _source_files(root, frozenset(resources.values()) - {root})
    ]
    started = time.time_ns()
    stamps = [stamp(path) for _, path in files]
    key = fingerprint([[name, found] for (name, _), found in zip(files, stamps, strict=True)])
    memo = _source_memo(package)
    kept = read_kept(memo)
    if isinstance(kept, dict) and kept.get("key") == key and isinstance(kept.get("digest"), str):
        return str(kept["digest"])
    hasher = hashlib.sha256()
    for name, path in files:
        with open(path, "rb") as file:
            data = file.read()
        hasher.update(f"{name}\0".encode())
        hasher.update(digest(data.replace(b"\r\n", b"\n")).encode())
    found = hasher.hexdigest()
    if not sys.dont_write_bytecode and settled(stamps, started):
        keep(memo, {"key": key, "digest": found})
    return found


def _source_memo(package: Path) -> Path:
    """Beside toolgen's bytecode: its __pycache__, or its mirror under PYTHONPYCACHEPREFIX."""
    prefix = sys.pycache_prefix
    folder = Path(prefix, package.relative_to(package.anchor)) if prefix else package / "__pycache__"
    return folder / _SOURCE_MEMO


def running_versions(names: Iterable[str] = MAKERS) -> dict[str, str]:
    """The installed versions of `names` (MAKERS by default); `unknown` for one that is not installed."""
    return {name: version or "unknown" for name, version in installed_versions(names).items()}


def running_makers() -> dict[str, Any]:
    """What the running toolgen would record as the package's makers (MAKER_KEYS)."""
    return {"shaping": running_versions(SHAPING), "source": source_digest(), "versions": running_versions()}


def generator_fingerprint() -> str:
    """Changes whenever toolgen's code, templates, built-in schemas or the libraries that shape its output change."""
    return digest(json.dumps(running_makers(), sort_keys=True).encode())


def build_key(config_text: str, inputs: Mapping[str, str]) -> str:
    """Everything a build depends on: the generator itself, the config and every input file's hash."""
    hasher = hashlib.sha256(generator_fingerprint().encode())
    hasher.update(text_digest(config_text).encode())
    for display, hashed in sorted(inputs.items()):
        hasher.update(f"{display}\0{hashed}\n".encode())
    return hasher.hexdigest()


def config_record(config: Config) -> dict[str, str]:
    """The config as the manifest records it: its file, its text's digest and the digest of what it resolved to.

    The resolved form is every setting after defaults and aliases (positions included, since findings quote
    them), without the machine's project root.
    """
    settings = {
        f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name not in ("root", "text_digest")
    }
    if config.features == FEATURES:
        del settings["features"]  # newer than the format: the default (every feature) resolves as before it
    resolved = digest(json.dumps(settings, sort_keys=True, default=list).encode())
    return {"file": config.display, "resolved": resolved, "text": config.text_digest}


def runtime_digest(files: Mapping[str, str]) -> str:
    """One hash over the runtime copied into the package (`_runtime/`): every file's name and text."""
    return _runtime_digest({n: text_digest(t) for n, t in files.items() if n.startswith(RUNTIME_DIR + "/")})


def _runtime_digest(digests: Mapping[str, str]) -> str:
    hasher = hashlib.sha256()
    for name in sorted(n for n in digests if n.startswith(RUNTIME_DIR + "/")):
        hasher.update(f"{name}\0{digests[name]}\n".encode())
    return hasher.hexdigest()


def render_manifest(
    files: Mapping[str, str],
    inputs: Mapping[str, str],
    *,
    config: Mapping[str, str] | None = None,
    warnings: Iterable[Diagnostic] = (),
    makers: Mapping[str, Any] | None = None,
    beside: Mapping[str, str] | None = None,
) -> str:
    """Deterministic JSON: hashes and versions, no times or machine paths, so a rebuild never differs by itself.

    It records everything the package was made from: every input file read, the config (`config_record`), the
    makers (toolgen's source hash and the versions of what shapes the output; default: the running ones, `check`
    passes the recorded ones to compare everything else) and the build's warnings, so that `check` can answer
    without rendering when all of them match (instant_check.py). `beside` are the files written in the output
    folder next to the package (recorded only when there are any).
    """
    digests = {name: text_digest(text) for name, text in files.items()}
    besides = {name: text_digest(text) for name, text in (beside or {}).items()}
    return render_manifest_of(digests, inputs, config=config, warnings=warnings, makers=makers, beside=besides)


def render_manifest_of(
    files: Mapping[str, str],
    inputs: Mapping[str, str],
    *,
    config: Mapping[str, str] | None = None,
    warnings: Iterable[Diagnostic] = (),
    makers: Mapping[str, Any] | None = None,
    beside: Mapping[str, str] | None = None,
) -> str:
    """render_manifest of the files' and the beside files' digests (text_digest) rather than their texts."""
    body: dict[str, Any] = {
        "generator": "toolgen",
        "format": MANIFEST_FORMAT,
        "config": dict(sorted((config or {}).items())),
        "inputs": dict(sorted(inputs.items())),
        "files": dict(sorted(files.items())),
        "runtime": _runtime_digest(files),
        **(makers if makers is not None else running_makers()),
        "warnings": [w.to_json() for w in warnings],
    }
    if beside:
        body["beside"] = dict(sorted(beside.items()))
    return manifest_json(body)


def recorded_makers(manifest: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The makers a manifest records (MAKER_KEYS), or None when it lacks one or records one not as text."""
    recorded = manifest or {}
    source = recorded.get("source")
    shaping = recorded_versions({"versions": recorded.get("shaping")})
    versions = recorded_versions(recorded)
    if not isinstance(source, str) or shaping is None or versions is None:
        return None
    return {"shaping": shaping, "source": source, "versions": versions}


def recorded_versions(manifest: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The versions a manifest says made its package, or None when it records none (or not as text)."""
    versions = (manifest or {}).get("versions")
    if not isinstance(versions, dict) or not all(isinstance(v, str) for v in versions.values()):
        return None
    return {str(name): value for name, value in versions.items()}


def version_changes(recorded: Mapping[str, str]) -> list[str]:
    """`pydantic 2.10.0 (running 2.11.1)` for every maker whose recorded version is not the running one."""
    running = running_versions()
    return [
        f"{name} {recorded.get(name, 'unknown')} (running {running[name]})"
        for name in MAKERS
        if recorded.get(name, "unknown") != running[name]
    ]


def read_manifest(package_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((package_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def version_findings(package_shown: str, changes: list[str], changed_files: int) -> list[Diagnostic]:
    """A warning naming the makers whose versions differ (`version_changes`); never an error by itself."""
    if not changes:
        return []
    message = f"{package_shown}/ was made by {', '.join(changes)}; " + (
        f"the version difference is a likely cause of the {changed_files} differing file(s)"
        if changed_files
        else "every file still matches; `toolgen build` records the running versions"
    )
    where = f"{package_shown}/{MANIFEST_NAME}"
    return [Diagnostic(where, 1, 1, Severity.WARNING, "generator-versions", message)]
