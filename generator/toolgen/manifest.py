"""The manifest written last into the generated package: hashes of its files and of what it was built from."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

MANIFEST_NAME = "toolgen-manifest.json"
_SHAPING_DISTRIBUTIONS = ("datamodel-code-generator", "ruff", "jinja2")


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
    for name in _SHAPING_DISTRIBUTIONS:
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


def render_manifest(files: Mapping[str, str], inputs: Mapping[str, str]) -> str:
    """Deterministic JSON: no times, versions or machine paths, so it never causes drift by itself."""
    body: dict[str, Any] = {
        "generator": "toolgen",
        "format": 1,
        "inputs": dict(sorted(inputs.items())),
        "files": {name: text_digest(text) for name, text in sorted(files.items())},
    }
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


def read_manifest(package_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((package_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
