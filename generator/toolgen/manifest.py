"""The manifest written last into the generated package: hashes of its files and of what it was built from."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from toolgen.diagnostics import Diagnostic, Severity

MANIFEST_NAME = "toolgen-manifest.json"
RUNTIME_DIR = "_runtime"
_SHAPING_DISTRIBUTIONS = ("datamodel-code-generator", "ruff", "jinja2")
# What made the package, recorded in its manifest: `check` warns when the running versions differ.
MAKERS = ("toolgen", "datamodel-code-generator", "pydantic", "ruff")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@functools.cache
def generator_fingerprint() -> str:
    """Changes whenever toolgen's code, templates, built-in schemas or pinned generators change."""
    from toolgen.resources import schemas_dir, templates_dir

    package = Path(__file__).resolve().parent
    hasher = hashlib.sha256()
    roots = [package, templates_dir(), schemas_dir()]
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            hasher.update(path.relative_to(root).as_posix().encode())
            hasher.update(path.read_bytes())
    for name in sorted({*_SHAPING_DISTRIBUTIONS, *MAKERS}):
        try:
            hasher.update(f"{name}=={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            hasher.update(name.encode())
    return hasher.hexdigest()


def text_digest(text: str) -> str:
    """Hash of text with line endings normalized, so a CRLF checkout hashes like an LF one."""
    return digest(text.replace("\r\n", "\n").encode())


def build_key(config_text: str, inputs: Mapping[str, str]) -> str:
    """Everything a build depends on: the generator itself, the config and every input file's hash."""
    hasher = hashlib.sha256(generator_fingerprint().encode())
    hasher.update(text_digest(config_text).encode())
    for display, hashed in sorted(inputs.items()):
        hasher.update(f"{display}\0{hashed}\n".encode())
    return hasher.hexdigest()


def running_versions() -> dict[str, str]:
    """The installed versions of what shapes a package (MAKERS); `unknown` for one that is not installed."""
    found: dict[str, str] = {}
    for name in MAKERS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "unknown"
    return found


def runtime_digest(files: Mapping[str, str]) -> str:
    """One hash over the runtime copied into the package (`_runtime/`): every file's name and text."""
    hasher = hashlib.sha256()
    for name in sorted(n for n in files if n.startswith(RUNTIME_DIR + "/")):
        hasher.update(f"{name}\0{text_digest(files[name])}\n".encode())
    return hasher.hexdigest()


def render_manifest(
    files: Mapping[str, str],
    inputs: Mapping[str, str],
    versions: Mapping[str, str] | None = None,
    beside: Mapping[str, str] | None = None,
) -> str:
    """Deterministic JSON: hashes and versions, no times or machine paths, so a rebuild never differs by itself.

    `versions` defaults to the running ones; `check` passes the recorded ones to compare everything else.
    `beside` are the files written in the output folder next to the package (recorded only when there are any).
    """
    body: dict[str, Any] = {
        "generator": "toolgen",
        "format": 2,
        "inputs": dict(sorted(inputs.items())),
        "files": {name: text_digest(text) for name, text in sorted(files.items())},
        "runtime": runtime_digest(files),
        "versions": dict(sorted((versions if versions is not None else running_versions()).items())),
    }
    if beside:
        body["beside"] = {name: text_digest(text) for name, text in sorted(beside.items())}
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


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
