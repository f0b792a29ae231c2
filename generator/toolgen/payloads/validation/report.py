"""Validation on this machine that also counts a summary (`toolgen validate --summary` without `--dask`).

The same findings, in the same order, as `toolgen.validate`: small files and stdin are read record by record, a
large JSON Lines file is cut into blocks checked on every core, a bounded number in flight.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from toolgen.core.diagnostics import Diagnostic
from toolgen.core.kinds import KINDS, WIRE_KINDS
from toolgen.payloads.files import UNREADABLE, payload_suffix, read_all, unreadable_reason
from toolgen.payloads.validation.blocks import BlockResult, Collector, check_lines, check_stream
from toolgen.payloads.validation.local import (
    BLOCK_BYTES,
    PARALLEL_THRESHOLD,
    Source,
    Tally,
    check_record,
    line_blocks,
    load_sdk,
    records,
)
from toolgen.payloads.validation.streams import stream_framing
from toolgen.payloads.validation.summary import Summary
from toolgen.project.config import load_config


@dataclass(frozen=True)
class _Job:
    """A block of whole lines for a worker process, which imports the SDK once and keeps it."""

    output_dir: Path
    package: str
    kind: str
    display: str
    data: bytes


def _check_job(job: _Job) -> BlockResult:
    return check_lines(load_sdk(job.output_dir, job.package), job.kind, job.display, job.data, True)


def validate_with_summary(
    paths: Iterable[str | Path],
    *,
    kind: str,
    summary: Summary,
    root: str | Path = ".",
    config_path: str | Path | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    tally: Tally | None = None,
) -> Iterator[Diagnostic]:
    """`toolgen.validate`'s findings, while `summary` counts every tool call (see validate_summary)."""
    from toolgen.payloads.validation.sources import payload_sources

    if kind not in KINDS and kind not in WIRE_KINDS:
        raise ValueError(f"unknown payload kind {kind!r}; one of {', '.join((*KINDS, *WIRE_KINDS))}")
    config = load_config(Path(root).resolve(), Path(config_path).resolve() if config_path else None)
    sources = payload_sources(paths, root=config.root, kind=kind)
    sdk = load_sdk(config.output_dir, config.package)
    summary.expect(sdk.TOOLS)
    collector = Collector(tally if tally is not None else Tally(), summary, progress)
    return _findings(sdk, sources, kind, config.output_dir, config.package, workers or os.cpu_count() or 1, collector)


def _findings(
    sdk: ModuleType,
    sources: list[Source],
    kind: str,
    output_dir: Path,
    package: str,
    workers: int,
    collector: Collector,
) -> Iterator[Diagnostic]:
    pool: ProcessPoolExecutor | None = None
    try:
        for source in sources:
            collector.start_file()
            try:
                lines = source.path is not None and payload_suffix(source.path) != ".json"
                framing = stream_framing(kind, source.path)
                if framing is not None:
                    results: Iterator[BlockResult] = iter([_stream(sdk, kind, source, framing)])
                elif lines and workers > 1 and source.size() > PARALLEL_THRESHOLD:
                    pool = pool or ProcessPoolExecutor(workers)
                    results = _parallel(pool, workers, _Job(output_dir, package, kind, source.display, b""), source)
                else:
                    results = _serial(sdk, kind, source)
                for result in results:
                    yield from collector.take(source.display, result)
                    if result.unreadable is not None:
                        break
            except UNREADABLE as error:
                yield collector.unreadable(source.display, unreadable_reason(error))
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _stream(sdk: ModuleType, kind: str, source: Source, framing: str) -> BlockResult:
    """A recorded stream: one record, its calls those of the message it aggregated to."""
    assert source.path is not None
    return check_stream(sdk, kind, source.display, read_all(source.path), framing, True)


def _serial(sdk: ModuleType, kind: str, source: Source) -> Iterator[BlockResult]:
    """One result a record, numbered in the file already (a record's line is where it is)."""
    for record in records(source):
        summary = Summary()
        problems = check_record(sdk, kind, record)
        summary.add_record(sdk, kind, record.text, problems)
        yield BlockResult(0, 1, (tuple(problems),) if problems else (), summary)


def _parallel(pool: ProcessPoolExecutor, workers: int, template: _Job, source: Source) -> Iterator[BlockResult]:
    assert source.path is not None
    in_flight: deque[Future[BlockResult]] = deque()
    for _, data in line_blocks(source.path, BLOCK_BYTES):
        # The line break the block was cut at goes back, so the block counts the lines it ends.
        job = _Job(template.output_dir, template.package, template.kind, template.display, data + b"\n")
        in_flight.append(pool.submit(_check_job, job))
        if len(in_flight) >= 4 * workers:
            yield in_flight.popleft().result()
    while in_flight:
        yield in_flight.popleft().result()
