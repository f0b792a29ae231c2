"""Blocks of a payload file checked where they are read (a worker process or a cluster worker), and their results
put back in file order: lines renumbered, the tally and the summary kept.

A block is whole lines of a JSON Lines file, or a whole JSON document; its findings are numbered from the block's
first line, so the block can be checked without knowing how many lines came before it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.payloads.files import unreadable_reason
from toolgen.payloads.validation.local import Record, Tally, check_record, stream_findings
from toolgen.payloads.validation.summary import Summary


@dataclass(frozen=True)
class BlockResult:
    """What one block held: its line breaks, its records, the findings of each invalid one, and their summary.

    `unreadable` is why the block could not be read (then nothing else is set): the file stops there.
    """

    newlines: int = 0
    records: int = 0
    found: tuple[tuple[Diagnostic, ...], ...] = ()
    summary: Summary | None = None
    unreadable: str | None = None


def check_lines(sdk: ModuleType, kind: str, display: str, data: bytes, summarize: bool) -> BlockResult:
    """Every record of a block of JSON Lines, numbered from 1 (blank lines count, as in the file)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return BlockResult(unreadable=unreadable_reason(error))
    summary = Summary() if summarize else None
    found: list[tuple[Diagnostic, ...]] = []
    records = 0
    for offset, line in enumerate(text.split("\n")):
        record_text = line.rstrip("\r")
        if not record_text.strip():
            continue
        records += 1
        problems = check_record(sdk, kind, Record(display, 1 + offset, record_text))
        if problems:
            found.append(tuple(problems))
        if summary is not None:
            summary.add_record(sdk, kind, record_text, problems)
    return BlockResult(data.count(b"\n"), records, tuple(found), summary)


def check_document(sdk: ModuleType, kind: str, display: str, data: bytes, summarize: bool) -> BlockResult:
    """A `.json` file: one record, the whole text."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return BlockResult(unreadable=unreadable_reason(error))
    problems = check_record(sdk, kind, Record(display, 1, text))
    summary = Summary() if summarize else None
    if summary is not None:
        summary.add_record(sdk, kind, text, problems)
    return BlockResult(0, 1, (tuple(problems),) if problems else (), summary)


def check_stream(sdk: ModuleType, kind: str, display: str, data: bytes, framing: str, summarize: bool) -> BlockResult:
    """A recorded stream file: one record, its calls those of the message it aggregated to."""
    problems, result, canonical = stream_findings(sdk, kind, display, data, framing)
    summary = Summary() if summarize else None
    message = getattr(result, "message", None)
    if summary is not None and message is not None:
        summary.add_record(sdk, "message", json.dumps(message), problems, canonical)
    return BlockResult(0, 1, (tuple(problems),) if problems else (), summary)


class Collector:
    """Block results of one run taken in file order: findings renumbered, `tally` and `summary` kept up to date."""

    def __init__(
        self, tally: Tally, summary: Summary | None = None, progress: Callable[[int], None] | None = None
    ) -> None:
        self.tally = tally
        self.summary = summary
        self.progress = progress
        self._first_line = 1

    def start_file(self) -> None:
        self._first_line = 1

    def take(self, display: str, result: BlockResult) -> Iterator[Diagnostic]:
        """The findings of the file's next block, placed in the file."""
        if result.unreadable is not None:
            yield self.unreadable(display, result.unreadable)
            return
        shift = self._first_line - 1
        self._first_line += result.newlines
        self.tally.records += result.records
        for found in result.found:
            if any(d.rule == "json-invalid" for d in found):
                self.tally.unreadable += 1
            elif any(d.severity is Severity.ERROR for d in found):
                self.tally.invalid += 1
            for diagnostic in found:
                placed = dataclasses.replace(diagnostic, line=diagnostic.line + shift) if shift else diagnostic
                if self.summary is not None:
                    self.summary.add_finding(placed)
                yield placed
        if self.summary is not None and result.summary is not None:
            self.summary.merge(result.summary)
        if self.progress is not None:
            self.progress(result.records)

    def unreadable(self, display: str, reason: str) -> Diagnostic:
        """The one finding of a file that cannot be read (any more): as local validation words it."""
        self.tally.unreadable += 1
        finding = Diagnostic(display, 1, 1, Severity.ERROR, "file-unreadable", f"cannot read: {reason}")
        if self.summary is not None:
            self.summary.add_finding(finding)
        return finding
