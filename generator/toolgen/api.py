"""The library: one function per verb, returning results and raising ToolgenError, never printing or exiting.

Each verb imports the stages it runs when called, so `import toolgen.api` (and `toolgen --help`, whose command
line calls only this module) loads no pipeline: `decode` or `lint` never loads the renderer (jinja2,
datamodel-code-generator, ruff), and `check` answers from the manifest without loading the front end. The names
the command line needs (exit codes, errors, findings, kinds and wire names) are re-exported from their cheap homes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolgen.core.diagnostics import Diagnostic as Diagnostic
from toolgen.core.diagnostics import Severity as Severity
from toolgen.core.errors import EnvironmentProblem as EnvironmentProblem
from toolgen.core.errors import ExitCode as ExitCode
from toolgen.core.errors import InterruptedAfterCommit as InterruptedAfterCommit
from toolgen.core.errors import InvalidInputError as InvalidInputError
from toolgen.core.errors import ToolgenError as ToolgenError
from toolgen.core.kinds import KINDS as KINDS
from toolgen.core.kinds import PAYLOAD_KINDS as PAYLOAD_KINDS
from toolgen.core.kinds import WIRE_KINDS as WIRE_KINDS
from toolgen.runtime import MCP as MCP
from toolgen.runtime import NAMES as NAMES

if TYPE_CHECKING:
    from toolgen.importing.definitions import Imported as Imported
    from toolgen.output.build_stages import BuildResult as BuildResult
    from toolgen.output.drift import CheckResult as CheckResult
    from toolgen.payloads.codec import Converted as Converted
    from toolgen.payloads.codec import Payload, PayloadError
    from toolgen.payloads.conformance import ConformanceRow as ConformanceRow
    from toolgen.payloads.validation.cluster import ClusterAddress as ClusterAddress
    from toolgen.payloads.validation.local import Source as Source
    from toolgen.payloads.validation.local import Tally as Tally
    from toolgen.payloads.validation.summary import Summary as Summary
    from toolgen.project.config import Config
    from toolgen.project.mcp_pins import DriftReport as DriftReport
    from toolgen.project.scaffold import InitResult as InitResult
    from toolgen.runtime import Export as Export
    from toolgen.runtime import GeminiSchema as GeminiSchema

Progress = Callable[[str], None]
# The classes a caller makes to pass in, imported when first read: their modules load pydantic.
_LAZY_TYPES = MappingProxyType(
    {"Tally": "toolgen.payloads.validation.local", "Summary": "toolgen.payloads.validation.summary"}
)


def __getattr__(name: str) -> type[Tally] | type[Summary]:
    import importlib

    home = _LAZY_TYPES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: type[Tally] | type[Summary] = getattr(importlib.import_module(home), name)
    return value


class ArgumentError(ToolgenError, ValueError):
    """An argument a function refuses (a provider or a kind that does not exist, an option that does not apply):
    the command line's usage error, exit 2. A ValueError too, as such refusals were before they carried a code."""

    exit_code = ExitCode.USAGE


def _gemini_formats() -> tuple[str, ...]:
    """The export formats that are Gemini's function declarations: the ones `gemini=` (`--gemini-schema`) applies to.
    The command line asks too, to refuse the option before anything loads."""
    from toolgen.runtime import wire

    return tuple(name for name in NAMES if wire(name).export == "gemini")


def _known(what: str, value: object, choices: Sequence[str]) -> None:
    """Raise ArgumentError, naming the choices (and the one `value` misspells), when `value` is none of them."""
    if value in choices:
        return
    meant = did_you_mean(value, choices) if isinstance(value, str) else None
    hint = f" (did you mean {meant!r}?)" if meant else ""
    raise ArgumentError(f"unknown {what} {value!r}{hint}; one of {', '.join(choices)}")


def _paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str | Path]:
    """Paths as a list: one str or Path is one path (iterating a str would give its letters, each taken for a path)."""
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(path) if isinstance(path, os.PathLike) else path for path in paths]


def _quiet(stage: str) -> None:
    """The default progress callback: libraries say nothing."""


def _config(root: str | Path, config_path: str | Path | None) -> Config:
    from toolgen.project.config import load_config

    return load_config(Path(root).resolve(), Path(config_path).resolve() if config_path else None)


def _checked_before(root: str | Path, config_path: str | Path | None) -> tuple[Config, bool]:
    """The config, and whether the package's manifest records it and every input as they are now: then the
    meta-schema checks (and jsonschema, to run them) are left out, since the build that made it ran them."""
    from toolgen.project.config import load_config
    from toolgen.project.recorded import recorded_project

    root_path, given = Path(root).resolve(), Path(config_path).resolve() if config_path else None
    known = recorded_project(root_path, given)
    return (known, True) if known is not None else (load_config(root_path, given), False)


def build(
    root: str | Path = ".",
    *,
    config_path: str | Path | None = None,
    force: bool = False,
    progress: Progress = _quiet,
) -> BuildResult:
    """Generate the SDK into <output>/<package>/; nothing is written unless every stage succeeds.

    `progress` is called with the name of each stage as it starts (the CLI shows it on a terminal).
    """
    from toolgen.output.build_stages import build_project
    from toolgen.policy.build_lint import build_lint

    config = _config(root, config_path)
    return build_project(config, config_path, force=force, progress=progress, lint=build_lint)


def check(
    root: str | Path = ".", *, config_path: str | Path | None = None, full: bool = False, progress: Progress = _quiet
) -> CheckResult:
    """Whether the package is what the schemas produce; hand edits in generated files count as drift.

    The manifest answers first, without rendering, when every input, the config, toolgen and the libraries that
    shape its output and every generated file are what it records (instant_check.py). Otherwise, or with
    `full`, everything is rendered in memory and compared with the files on disk (drift.compare); without `full`,
    ruff formats only the files the last build's format cache does not hold.
    """
    from toolgen.output.instant_check import instant_check

    if not full:
        answer = instant_check(Path(root).resolve(), Path(config_path).resolve() if config_path else None)
        if answer is not None:
            return answer
    from toolgen.output.build_stages import check_project
    from toolgen.policy.build_lint import build_lint

    return check_project(_config(root, config_path), full=full, progress=progress, lint=build_lint)


def init_project(root: str | Path = ".", *, package: str = "toolgen_sdk") -> InitResult:
    """Create toolgen.yaml and an example tool in `root`, and keep ruff, black and isort off the generated
    package (in pyproject.toml, adding only what is missing); refuses to overwrite an existing project."""
    from toolgen.project.scaffold import init_project as scaffold_project

    return scaffold_project(Path(root).resolve(), package)


def export(
    root: str | Path = ".",
    *,
    provider: str,
    config_path: str | Path | None = None,
    strict: bool | None = None,
    gemini: GeminiSchema | None = None,
) -> tuple[Export, tuple[Diagnostic, ...]]:
    """The project's tools in `provider`'s request format (see FORMATS), and the build's warnings.

    `strict` rewrites every tool for OpenAI strict mode; `gemini="openapi"` uses Gemini's `parameters` subset;
    both default to toolgen.yaml's `export` section. `gemini` given for a format that is not Gemini's
    (`gemini` or `google`) raises ArgumentError: it would change nothing.
    """
    from toolgen.ir.lower import lower
    from toolgen.policy.build_lint import definition
    from toolgen.runtime import export_tools

    if gemini is not None and (provider in NAMES or provider == MCP) and provider not in _gemini_formats():
        raise ArgumentError(
            f"gemini={gemini!r} chooses Gemini's schema field: it applies to {' or '.join(_gemini_formats())}, "
            f"and {provider} has no such field"
        )
    config, checked = _checked_before(root, config_path)
    lowered = lower(config, check_shapes=not checked)
    definitions = [definition(tool) for tool in lowered.project.tools]
    strict = config.export_strict if strict is None else strict
    gemini = gemini or ("openapi" if config.gemini_schema == "openapi" else "json")
    try:
        return export_tools(definitions, provider, strict=strict, gemini=gemini), lowered.warnings
    except ValueError as error:
        raise InvalidInputError([Diagnostic(config.display, 1, 1, Severity.ERROR, "export", str(error))]) from None


def lint(
    root: str | Path = ".",
    *,
    config_path: str | Path | None = None,
    providers: tuple[str, ...] | None = None,
    gemini: GeminiSchema | None = None,
) -> tuple[Diagnostic, ...]:
    """Provider-compatibility findings for every tool; `providers` overrides toolgen.yaml's `lint.providers`.

    `gemini` (default: toolgen.yaml's `export.gemini_schema`) says which Gemini schema field the tools go out in;
    "openapi" adds the rules of Gemini's `parameters` subset.
    """
    from toolgen.ir.lower import lower
    from toolgen.policy.build_lint import lint_lowered
    from toolgen.policy.lint import PROVIDERS

    if isinstance(providers, str):  # one provider, not the letters of its name
        providers = (providers,)
    for provider in providers or ():
        _known("provider", provider, (*NAMES, MCP))
    config, checked = _checked_before(root, config_path)
    lowered = lower(config, check_shapes=not checked)
    chosen = providers or config.lint_providers or PROVIDERS
    return lint_lowered(config, lowered, chosen, gemini_subset=(gemini or config.gemini_schema) == "openapi")


def payload_sources(
    paths: str | Path | Iterable[str | Path], *, root: str | Path = ".", kind: str | None = None
) -> list[Source]:
    """Files to validate: `-` is stdin, a folder means every .json/.jsonl/.ndjson file under it (sorted), and its
    recorded streams (.sse, .eventstream) too when `kind` is a provider response (`<wire>.response`); each may
    also be gzip-compressed (`.jsonl.gz`). One str or Path is one path."""
    from toolgen.payloads.validation.sources import payload_sources as found_sources

    return found_sources(_paths(paths), root=root, kind=kind)


def validate(
    paths: str | Path | Iterable[str | Path],
    *,
    kind: str,
    root: str | Path = ".",
    config_path: str | Path | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    tally: Tally | None = None,
    summary: Summary | None = None,
    dask: str | ClusterAddress | None = None,
) -> Iterator[Diagnostic]:
    """Findings for payload records checked with the project's generated SDK, in file order.

    `paths` is one path (a str or Path) or several; `kind` is one of KINDS or WIRE_KINDS (else ArgumentError);
    every tool call's arguments are also checked against its tool. Pass a
    Tally to learn how many records were read, invalid, or unreadable, and a Summary (`toolgen.api.Summary()`)
    to have every tool call counted into it (`validate --summary`). `dask`, a scheduler address or `local[:N]`,
    checks the records on a Dask cluster instead (`validate --dask`, needs toolgen[dask]); `paths` may then be
    fsspec URLs its workers can read, and `workers` is not used.
    """
    _known("payload kind", kind, (*KINDS, *WIRE_KINDS))
    paths = _paths(paths)
    if dask is not None:
        from toolgen.payloads.validation.cluster import validate_on_dask

        return validate_on_dask(
            paths, kind=kind, address=dask, root=root, config_path=config_path, progress=progress, tally=tally,
            summary=summary,
        )  # fmt: skip
    if summary is not None:
        from toolgen.payloads.validation.report import validate_with_summary

        return validate_with_summary(
            paths, kind=kind, summary=summary, root=root, config_path=config_path, workers=workers,
            progress=progress, tally=tally,
        )  # fmt: skip
    from toolgen.payloads.validation.local import validate_sources
    from toolgen.project.config import CACHE_DIR, load_config
    from toolgen.project.recorded import recorded_config

    # A config the package's manifest records needs no shape check again (nor jsonschema, to run it).
    root_path, given = Path(root).resolve(), Path(config_path).resolve() if config_path else None
    known = recorded_config(root_path, given)
    config = known[0] if known is not None else load_config(root_path, given)
    sources = payload_sources(paths, root=config.root, kind=kind)
    return validate_sources(
        sources, kind, config.output_dir, config.package, workers=workers, progress=progress, tally=tally,
        cache_dir=config.root / CACHE_DIR,
    )  # fmt: skip


def parse_dask_address(address: str) -> ClusterAddress:
    """Where `validate(dask=address)` runs: `local`, `local:N` or a scheduler address (`tcp://host:8786`);
    ValueError names what was expected."""
    from toolgen.payloads.validation.cluster import parse_address

    return parse_address(address)


def breaking(against: str, *, root: str | Path = ".", config_path: str | Path | None = None) -> tuple[Diagnostic, ...]:
    """Every change of the tools since `against`: breaking ones as errors, safe ones as warnings (breaking_rules.RULES).

    `against` is a file written by `breaking_snapshot`, the project directory of another checkout, or a git
    revision of the repository the project is in (its tree is unpacked into a temporary directory). Findings are
    placed in the current files; a removed tool where it was, as `AGAINST:path`. A revision without the project
    (the change that adds toolgen) has every tool added, and a warning `against-no-project` says so. Raises
    InvalidInputError when `against` is none of these (rule against-ref) or its tools do not load.
    """
    from toolgen.ir.lower import lower
    from toolgen.policy.breaking.against import no_project_note, tools_against
    from toolgen.policy.breaking.snapshots import snapshot
    from toolgen.policy.breaking.tools import breaking_changes

    config = _config(root, config_path)
    lowered = lower(config)
    old = tools_against(against, config)
    found = breaking_changes(old or (), snapshot(lowered), [raw for raw, _ in lowered.sources], against)
    return found if old is not None else (no_project_note(against, config), *found)


def breaking_snapshot(root: str | Path = ".", *, config_path: str | Path | None = None) -> str:
    """The project's tools as the stable JSON that `breaking(against=FILE)` reads: a baseline CI can keep."""
    from toolgen.ir.lower import lower
    from toolgen.policy.breaking.snapshots import dump_snapshot, snapshot

    return dump_snapshot(snapshot(lower(_config(root, config_path))))


def import_tools(
    root: str | Path,
    source: str | Sequence[str],
    *,
    source_format: str | None = None,
    output: str | Path = Path("schemas/tools"),
    timeout: float = 60.0,
    force: bool = False,
) -> Imported:
    """`toolgen import`: the tools of a file (`source_format` given: openai, anthropic, gemini, bedrock or mcp;
    `source` relative to `root`) or of a live MCP server (`source` a URL or a command), written as schema files
    into `root / output`; from a server, with the lock that pins them (mcp-lock.json)."""
    from toolgen.importing.definitions import import_tools as imported

    return imported(Path(root), source, source_format, output=Path(output), timeout=timeout, force=force)


def check_mcp_lock(
    root: str | Path,
    server: str | Sequence[str],
    *,
    output: str | Path = Path("schemas/tools"),
    timeout: float = 60.0,
) -> DriftReport:
    """`toolgen import mcp --check`: the live server's tools (a URL or a command) against the lock in
    `root / output`, each drift a finding."""
    from toolgen.project.mcp_pins import check_server

    return check_server(Path(root), server, Path(output), timeout=timeout)


def decode(
    path: str | Path, *, wire: str | None = None, kind: str | None = None, root: str | Path = "."
) -> dict[str, Any]:
    """A recorded request, response or stream file as canonical JSON (see payloads.py); wire and kind detected."""
    from toolgen.payloads.codec import PayloadError, decode_payload

    payload, display = _payload(path, kind, root)
    try:
        return decode_payload(payload, wire)
    except PayloadError as error:
        raise _invalid_payload(display, error) from None


def encode(path: str | Path, *, wire: str, root: str | Path = ".") -> Any:
    """Canonical JSON (decode's output, or a list of messages) as a `wire` body."""
    return encode_noted(path, wire=wire, root=root).body


def encode_noted(path: str | Path, *, wire: str, root: str | Path = ".") -> Converted:
    """`encode`, with a note for every field of a request `wire` cannot carry."""
    from toolgen.payloads.codec import PayloadError
    from toolgen.payloads.codec import encode_noted as encode_canonical

    payload, display = _payload(path, "request", root)
    try:
        return encode_canonical(payload.data, wire)
    except PayloadError as error:
        raise _invalid_payload(display, error) from None


def convert(
    path: str | Path, *, to_wire: str, from_wire: str | None = None, kind: str | None = None, root: str | Path = "."
) -> Any:
    """A recorded payload in another wire format; a stream becomes that wire's whole response."""
    return convert_noted(path, to_wire=to_wire, from_wire=from_wire, kind=kind, root=root).body


def convert_noted(
    path: str | Path, *, to_wire: str, from_wire: str | None = None, kind: str | None = None, root: str | Path = "."
) -> Converted:
    """`convert`, with a note for every field of a request the target wire cannot carry (named, never dropped
    silently)."""
    from toolgen.payloads.codec import PayloadError
    from toolgen.payloads.codec import convert_noted as convert_payload

    payload, display = _payload(path, kind, root)
    try:
        return convert_payload(payload, to_wire, from_wire)
    except PayloadError as error:
        raise _invalid_payload(display, error) from None


def conformance(folders: str | Path | Iterable[str | Path], *, root: str | Path = ".") -> list[ConformanceRow]:
    """Every payload file under the folders (one str or Path: one folder) decoded and round-tripped, one row
    each, in path order."""
    from toolgen.payloads.conformance import check_file, payload_files
    from toolgen.project.config import display_path

    rows: list[ConformanceRow] = []
    for folder in _paths(folders):
        base = Path(folder)
        if not base.is_dir():
            raise InvalidInputError(
                [Diagnostic(str(folder), 1, 1, Severity.ERROR, "payload-unreadable", "not a folder")]
            )
        rows.extend(check_file(path, display_path(Path(root), path)) for path in payload_files(base))
    return rows


def did_you_mean(value: str, choices: Iterable[str]) -> str | None:
    """The one of `choices` that `value` misspells, or None: the command line's hint for a refused choice."""
    from toolgen.source.keyword_typos import nearest_name

    return nearest_name(value, choices, closed=True)


def _payload(path: str | Path, kind: str | None, root: str | Path) -> tuple[Payload, str]:
    """A recorded payload file (`-` for stdin) and how findings name it: relative to `root`."""
    import sys

    from toolgen.payloads.codec import PayloadError, read_payload
    from toolgen.project.config import display_path

    stdin = str(path) == "-"
    display = "<stdin>" if stdin else display_path(Path(root), Path(path))
    try:
        raw = sys.stdin.buffer.read() if stdin else Path(path).read_bytes()
    except OSError as error:
        message = f"cannot read: {error.strerror}"
        raise InvalidInputError([Diagnostic(display, 1, 1, Severity.ERROR, "payload-unreadable", message)]) from None
    try:
        return read_payload(raw, "" if stdin else Path(path).suffix, kind), display
    except PayloadError as error:
        raise _invalid_payload(display, error) from None


def _invalid_payload(display: str, error: PayloadError) -> InvalidInputError:
    diagnostic = Diagnostic(
        display, error.line, error.col, Severity.ERROR, "payload-invalid", str(error), error.pointer
    )
    return InvalidInputError([diagnostic])
