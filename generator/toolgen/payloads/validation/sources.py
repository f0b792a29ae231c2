"""The files a validation run reads: stdin, files, and folders walked for payload and stream recordings."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import InvalidInputError
from toolgen.core.paths import display_path, resolved
from toolgen.payloads.files import payload_suffix
from toolgen.payloads.validation.local import Source


def payload_sources(paths: Iterable[str | Path], *, root: str | Path = ".", kind: str | None = None) -> list[Source]:
    """Files to validate: `-` is stdin, a folder means every .json/.jsonl/.ndjson file under it (sorted), and its
    recorded streams (.sse, .eventstream) too when `kind` is a provider response (`<wire>.response`); each may
    also be gzip-compressed (`.jsonl.gz`)."""
    suffixes: tuple[str, ...] = (".json", ".jsonl", ".ndjson")
    if kind is not None and kind.endswith(".response"):
        suffixes = (*suffixes, ".sse", ".eventstream")
    root_path = Path(root).resolve()
    sources: list[Source] = []
    for given in paths:
        if str(given) == "-":
            sources.append(Source(None, "<stdin>"))
            continue
        path = resolved(Path(given))
        # A link that leads nowhere (dangling, or a loop) is kept: reading it says it is unreadable, not skipped.
        found = (
            sorted(p for p in path.rglob("*") if payload_suffix(p) in suffixes and (p.is_file() or _broken_link(p)))
            if path.is_dir()
            else [path]
        )
        if path.is_dir() and not found:
            problem = f"no {', '.join(suffixes[:-1])} or {suffixes[-1]} file in this folder: nothing to validate"
            shown = display_path(root_path, path)
            raise InvalidInputError([Diagnostic(shown, 1, 1, Severity.ERROR, "payload-unreadable", problem)])
        sources.extend(Source(p, display_path(root_path, p)) for p in found)
    return sources


def _broken_link(path: Path) -> bool:
    return path.is_symlink() and not path.exists()
