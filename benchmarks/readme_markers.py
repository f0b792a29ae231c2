"""Writing a benchmark's results between its two markers in benchmarks/README.md, leaving the rest as it is."""

from __future__ import annotations

from pathlib import Path


def replace_between(readme: Path, start: str, end: str, section: str) -> None:
    """Put `section` between the `start` and `end` markers of `readme`; stop with a message when they are absent."""
    text = readme.read_text(encoding="utf-8")
    if start not in text or end not in text:
        raise SystemExit(f"{readme} has no {start} ... {end} markers")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{section}{end}{tail}", encoding="utf-8")
