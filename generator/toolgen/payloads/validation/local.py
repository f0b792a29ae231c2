"""Validate stage: payload records (JSON, JSON Lines, stdin) checked with the generated SDK, each problem at file:line:col.

Records stream: a JSON Lines file is read a batch at a time and checked on every core, so memory stays flat
however long the log is; findings come back in file order. What is wrong with a record, at which JSON pointer,
is found by validate_problems.py (recorded streams: validate_streams.py); here each is placed at its line:col.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any

import pydantic

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import SdkNotBuiltError
from toolgen.payloads.files import (
    UNREADABLE,
    expected_size,
    open_binary,
    open_text,
    payload_suffix,
    read_all,
    undecodable_at,
    unreadable_reason,
)
from toolgen.payloads.validation.fast import PlainCheck
from toolgen.payloads.validation.problems import (
    Finding,
    argument_problems,
    canonical_problems,
    decoded_canonical,
    decoded_problems,
    wire_problems,
)
from toolgen.runtime import MAX_JSON_DEPTH, JSONTextError, parse_json

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from toolgen.core.positions import JsonPlaces

__all__ = ["Record", "Source", "Tally", "check_record", "decoded_problems", "load_sdk", "stream_findings"]

BATCH = 2000
# What one worker gets at a time from a large JSON Lines file; four per worker are in flight at most.
BLOCK_BYTES = 1 << 20
# Below this many bytes one process is faster than starting workers.
PARALLEL_THRESHOLD = 4_000_000
# Findings listed for one record; the rest are counted in one more finding, so a huge bad record stays readable.
MAX_FINDINGS_PER_RECORD = 100


@dataclass(frozen=True)
class Record:
    """One payload: the JSON text and where it starts (a JSON Lines record starts its line)."""

    path: str
    line: int
    text: str


@dataclass(frozen=True)
class Source:
    """A file to validate (None for stdin) and how it is shown in findings."""

    path: Path | None
    display: str

    def size(self) -> int:
        return expected_size(self.path) if self.path is not None else 0


def load_sdk(output_dir: Path, package: str) -> ModuleType:
    """The generated package, imported from the project's output folder.

    A module of the same name imported from elsewhere is set aside for the import and put back after, so
    two projects can be validated in one process.
    """
    init = (output_dir / package / "__init__.py").resolve()
    if not init.is_file():
        raise SdkNotBuiltError(f"no generated package at {output_dir / package}; run `toolgen build` first")
    current = sys.modules.get(package)
    if current is not None and getattr(current, "__file__", None) and Path(str(current.__file__)).resolve() == init:
        return current
    owned = [name for name in sys.modules if name == package or name.startswith(package + ".")]
    set_aside = {name: sys.modules.pop(name) for name in owned}
    sys.path.insert(0, str(output_dir))
    try:
        module = importlib.import_module(package)
        if not set_aside:  # alone under its name, the package loads the rest on first use, as for its users
            return module
        # Imported while this package owns its name: the adapters, and every model's validator (built on
        # first use otherwise, which resolves names through sys.modules after the set-aside modules return).
        runtime = importlib.import_module(f"{package}._runtime")
        for name in ("decode", "check_pairing", "ProviderError"):
            getattr(runtime, name)
        models = importlib.import_module(f"{package}.models")
        # Every name, and every tool's models, imported now: on first use, they would be looked up by name.
        for spec in importlib.import_module(f"{package}.tools").TOOLS.values():
            _ = spec.args_model
        for name in getattr(module, "__all__", ()):
            getattr(module, name)
        for value in [getattr(models, name) for name in getattr(models, "__all__", list(vars(models)))]:
            if (
                isinstance(value, type)
                and issubclass(value, pydantic.BaseModel)
                and value.__module__.startswith(f"{package}.")
            ):
                value.model_rebuild(force=True)
        validators = importlib.import_module(f"{package}.validators")
        for value in vars(validators).values():
            if isinstance(value, pydantic.TypeAdapter):
                value.rebuild(force=True)
        return module
    except Exception as error:  # noqa: BLE001 - any import failure means the SDK cannot validate
        raise SdkNotBuiltError(
            f"the generated package {package} does not import ({error}); run `toolgen build`"
        ) from None
    finally:
        sys.path.remove(str(output_dir))
        if set_aside:
            for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
                del sys.modules[name]
            sys.modules.update(set_aside)


def _is_json_lines(source: Source, first_line: str) -> bool:
    """`.json` files hold one document; other files are JSON Lines; stdin is JSON Lines when its first line is JSON."""
    if source.path is not None:
        return payload_suffix(source.path) != ".json"
    try:
        json.loads(first_line)
    except json.JSONDecodeError:
        return not first_line.strip()
    except (ValueError, RecursionError):
        return True  # JSON the strict parse will refuse (too deep, an integer too long): still a record
    return True


def records(source: Source, stream: IO[str] | None = None) -> Iterator[Record]:
    """Every record of `source`, read lazily (a JSON document is one record)."""
    handle = stream if stream is not None else _open(source)
    try:
        first = handle.readline()
        if not _is_json_lines(source, first):
            yield Record(source.display, 1, first + handle.read())
            return
        number = 1
        line = first
        while line:
            if line.strip():
                yield Record(source.display, number, line.rstrip("\r\n"))
            number += 1
            line = handle.readline()
    finally:
        if stream is None and source.path is not None:
            handle.close()  # stdin stays open: it is the process's, not ours


def _open(source: Source) -> IO[str]:
    if source.path is None:
        # utf-8-sig: a byte order mark that starts the input is skipped, as in a file (payloads/files.py).
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", errors="strict")
    return open_text(source.path)


def _argument_problems(sdk: ModuleType, kind: str, data: Any) -> Iterator[tuple[str, str, str]]:
    """(pointer, rule, sentence) of every tool call problem of a record (validate_problems.argument_problems)."""
    for finding in argument_problems(sdk, kind, data):
        yield finding.pointer, finding.rule, finding.message


# Findings that do not make a record invalid: the payload is valid, but something downstream will not take it.
_WARNINGS = frozenset({"arguments-unholdable"})


def check_record(sdk: ModuleType, kind: str, record: Record) -> list[Diagnostic]:
    """Every problem of one record, placed in its file."""
    if not record.text.strip():  # a .json file with nothing in it (blank lines of JSON Lines are no records)
        message = "the file is empty: expected a JSON record"
        return [Diagnostic(record.path, record.line, 1, Severity.ERROR, "json-invalid", message)]
    try:
        data = parse_json(record.text, max_chars=None)
    except JSONTextError as error:
        if error.line is not None:
            line = record.line + error.line - 1
            reason = error.problems[0].message.removeprefix("is not valid JSON: ")
            reason = reason.rsplit(" at line ", 1)[0]
            return [
                Diagnostic(
                    record.path, line, error.column or 1, Severity.ERROR, "json-invalid", f"not valid JSON: {reason}"
                )
            ]
        # JSON text strict parsing refuses (NaN, a repeated key, too deep, an integer too long): a finding in
        # a readable record, at the value's place.
        refused = [Finding(p.pointer, "json-refused", f"{p.pointer or '(root)'}: {p.message}") for p in error.problems]
        return _placed(record, refused)
    try:
        return _placed(record, _record_problems(sdk, kind, data))
    except RecursionError:
        # The parse bounds nesting, so this is a validator's limit: one finding, and the other records go on.
        message = f"could not be checked: its values nest too deep for the validators (at most {MAX_JSON_DEPTH} levels)"
        return [Diagnostic(record.path, record.line, 1, Severity.ERROR, "check-failed", message)]


def _record_problems(sdk: ModuleType, kind: str, data: Any) -> list[Finding]:
    return wire_problems(sdk, kind, data) if "." in kind else canonical_problems(sdk, kind, data)


def _placed(record: Record, found: list[Finding], canonical: dict[Diagnostic, str] | None = None) -> list[Diagnostic]:
    """Findings placed in the record's file, in order; past MAX_FINDINGS_PER_RECORD, one counts the rest.
    `canonical` is given each placed finding's canonical place, when it has one."""
    if not found:
        return []
    from toolgen.core.positions import JsonPlaces  # and YAML, for its other half: only for a record with findings

    places: JsonPlaces | None
    try:
        places = JsonPlaces(record.text) if record.text else None
    except (ValueError, IndexError, RecursionError):
        places = None  # text the strict parse refused may not be walkable: findings go to the record's start
    diagnostics = []
    for finding in found:
        line, col = _place(record, finding, places)
        severity = Severity.WARNING if finding.rule in _WARNINGS else Severity.ERROR
        diagnostic = Diagnostic(record.path, line, col, severity, finding.rule, finding.message, finding.pointer)
        diagnostics.append(diagnostic)
        if canonical is not None and finding.canonical is not None:
            canonical[diagnostic] = finding.canonical
    diagnostics.sort()
    if len(diagnostics) <= MAX_FINDINGS_PER_RECORD:
        return diagnostics
    kept, rest = diagnostics[:MAX_FINDINGS_PER_RECORD], diagnostics[MAX_FINDINGS_PER_RECORD:]
    severity = Severity.ERROR if any(d.severity is Severity.ERROR for d in rest) else Severity.WARNING
    message = f"{len(rest):,} more finding{'s' if len(rest) != 1 else ''} in this record left out"
    kept.append(Diagnostic(record.path, record.line, 1, severity, "findings-truncated", message))
    return kept


def _place(record: Record, finding: Finding, places: JsonPlaces | None) -> tuple[int, int]:
    """Line and column of the value a finding names (inside the JSON text of a string it goes on into, or its
    nearest ancestor) within the file."""
    if finding.at is not None:
        return finding.at
    if places is None:
        return record.line, 1
    found = None
    if finding.string is not None and finding.pointer.startswith(finding.string):
        found = places.inside(_parts(finding.string), _parts(finding.pointer[len(finding.string) :]))
    found = found or places.near(_parts(finding.pointer))
    if found is None:
        return record.line, 1
    line, col = found
    return record.line + line - 1, col


def _parts(pointer: str) -> tuple[str, ...]:
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]) if pointer else ()


@dataclass(frozen=True)
class _Job:
    """A block of whole lines of a JSON Lines file for a worker: raw bytes, so handing it over costs little."""

    output_dir: Path
    package: str
    kind: str
    display: str
    first_line: int
    data: bytes


def _check_block(job: _Job) -> tuple[int, list[list[Diagnostic]]]:
    """Records read and the findings of each invalid one (in a worker: the SDK import is cached after the first)."""
    sdk = load_sdk(job.output_dir, job.package)
    found: list[list[Diagnostic]] = []
    count = 0
    for offset, line in enumerate(job.data.decode("utf-8").split("\n")):
        text = line.rstrip("\r")
        if text.strip():
            count += 1
            problems = check_record(sdk, job.kind, Record(job.display, job.first_line + offset, text))
            if problems:
                found.append(problems)
    return count, found


def line_blocks(path: Path, size: int) -> Iterator[tuple[int, bytes]]:
    """(number of the block's first line, bytes) for blocks of about `size` bytes that end at a line break."""
    line = 1
    rest = b""
    with open_binary(path) as handle:
        while chunk := handle.read(size):
            data = rest + chunk
            cut = data.rfind(b"\n")
            if cut < 0:
                rest = data
                continue
            block, rest = data[:cut], data[cut + 1 :]
            yield line, block
            line += block.count(b"\n") + 1
    if rest:
        yield line, rest


def _batches(items: Iterable[Record], size: int) -> Iterator[list[Record]]:
    batch: list[Record] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


@dataclass
class Tally:
    """What a run saw: records read and how many had problems."""

    records: int = 0
    invalid: int = 0
    unreadable: int = 0


def validate_sources(
    sources: Iterable[Source],
    kind: str,
    output_dir: Path,
    package: str,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    tally: Tally | None = None,
    cache_dir: Path | None = None,
) -> Iterator[Diagnostic]:
    """Findings for every record of every source, in file order; `tally` counts as it goes.

    The SDK is loaded now, so a missing one is an error before the first finding is asked for. With a
    `cache_dir` (the project's), records are first checked with the plain validators an earlier run kept
    there (validate_fast.py), and the SDK is loaded only when one of them is not enough.
    """
    plain = PlainCheck.for_package(cache_dir, output_dir, package) if cache_dir is not None else None
    loader = _SdkLoader(output_dir, package, plain)
    if plain is None or not plain.folder.is_dir():
        loader()  # nothing kept yet: the models check every record, and a broken SDK is reported first
    elif not (output_dir / package / "__init__.py").is_file():
        raise SdkNotBuiltError(f"no generated package at {output_dir / package}; run `toolgen build` first")
    return _findings(
        loader, sources, kind, output_dir, package, workers, progress, tally if tally is not None else Tally()
    )


class _SdkLoader:
    """The generated package, imported on first call; after each slow check, the plain validators learn."""

    def __init__(self, output_dir: Path, package: str, plain: PlainCheck | None) -> None:
        self.output_dir, self.package, self.plain = output_dir, package, plain
        self._sdk: ModuleType | None = None

    def __call__(self) -> ModuleType:
        if self._sdk is None:
            self._sdk = load_sdk(self.output_dir, self.package)
        return self._sdk

    def check(self, kind: str, record: Record) -> list[Diagnostic]:
        """The record's findings: none when the plain validators accept it, else the models' own."""
        if self.plain is not None and self.plain.accepts(kind, record.text):
            return []
        found = check_record(self(), kind, record)
        if self.plain is not None:
            self.plain.learn(self())
        return found


def _findings(
    loader: _SdkLoader,
    sources: Iterable[Source],
    kind: str,
    output_dir: Path,
    package: str,
    workers: int | None,
    progress: Callable[[int], None] | None,
    tally: Tally,
) -> Iterator[Diagnostic]:
    count = workers or os.cpu_count() or 1
    pool: ProcessPoolExecutor | None = None
    try:
        for source in sources:
            try:
                lines = source.path is not None and payload_suffix(source.path) != ".json"
                big = lines and source.size() > PARALLEL_THRESHOLD and count > 1
                if big and pool is None:
                    from concurrent.futures import ProcessPoolExecutor

                    pool = ProcessPoolExecutor(count)
                framing = _stream_framing(kind, source.path)
                if framing is not None:
                    results = _stream(loader(), kind, source, framing)
                elif big and pool is not None:
                    results = _parallel(pool, count, _Job(output_dir, package, kind, source.display, 1, b""), source)
                else:
                    results = _serial(loader, kind, source)
                for batch_size, invalid in results:
                    tally.records += batch_size
                    for found in invalid:
                        if any(d.rule == "json-invalid" for d in found):
                            tally.unreadable += 1
                        elif any(d.severity is Severity.ERROR for d in found):
                            tally.invalid += 1
                        yield from found
                    if progress is not None:
                        progress(batch_size)
            except UNREADABLE as error:
                tally.unreadable += 1
                line, col, reason = 1, 1, unreadable_reason(error)
                if isinstance(error, UnicodeDecodeError) and source.path is not None:
                    # The decoder counts from the chunk it read: the place is found again in the file's bytes.
                    line, col, reason = undecodable_at(source.path) or (line, col, reason)
                message = f"cannot read: {reason}"
                yield Diagnostic(source.display, line, col, Severity.ERROR, "file-unreadable", message)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _stream_framing(kind: str, path: Path | None) -> str | None:
    if not kind.endswith(".response"):
        return None  # only a provider's response can be a recorded stream: the stream machinery stays unloaded
    from toolgen.payloads.validation.streams import stream_framing

    return stream_framing(kind, path)


def stream_findings(
    sdk: ModuleType, kind: str, display: str, data: bytes, framing: str
) -> tuple[list[Diagnostic], Any, dict[Diagnostic, str]]:
    """The findings of a recorded stream file, one record (see validate_streams), what it aggregated to, and the
    canonical place (`/tool_calls/0/...`) of each finding about its final message."""
    from toolgen.payloads.validation.streams import stream_problems

    wire = kind.rsplit(".", 1)[0]

    def problems(decoded: Any) -> tuple[list[Any], list[Finding]]:
        return decoded_canonical(sdk, decoded, "response")

    found, result = stream_problems(wire, data, framing, problems)
    canonical: dict[Diagnostic, str] = {}
    return _placed(Record(display, 1, ""), found, canonical), result, canonical


def _stream(sdk: ModuleType, kind: str, source: Source, framing: str) -> Iterator[tuple[int, list[list[Diagnostic]]]]:
    assert source.path is not None
    found, _, _ = stream_findings(sdk, kind, source.display, read_all(source.path), framing)
    yield 1, [found] if found else []


def _serial(loader: _SdkLoader, kind: str, source: Source) -> Iterator[tuple[int, list[list[Diagnostic]]]]:
    for batch in _batches(records(source), BATCH):
        yield len(batch), [found for record in batch if (found := loader.check(kind, record))]


def _parallel(
    pool: ProcessPoolExecutor, workers: int, template: _Job, source: Source
) -> Iterator[tuple[int, list[list[Diagnostic]]]]:
    """Blocks of lines checked on every worker, a bounded number in flight, results in file order."""
    assert source.path is not None
    in_flight: deque[Future[tuple[int, list[list[Diagnostic]]]]] = deque()
    for first_line, data in line_blocks(source.path, BLOCK_BYTES):
        job = _Job(template.output_dir, template.package, template.kind, source.display, first_line, data)
        in_flight.append(pool.submit(_check_block, job))
        if len(in_flight) >= 4 * workers:
            yield in_flight.popleft().result()
    while in_flight:
        yield in_flight.popleft().result()
