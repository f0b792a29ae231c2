"""The `toolgen` command: parse arguments, call the library, print results, map them to exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

# The library's lazy surface: toolgen.api and what it pulls in load when a command runs, not for --help, and each
# command loads only its own stages.
import toolgen
from toolgen.cli.import_verb import import_action, import_options
from toolgen.cli.options import (
    Progress,
    build_summary,
    common_options,
    fail_on_option,
    failed,
    group_directory,
    hint_choices,
)
from toolgen.cli.output_file import write_output
from toolgen.cli.printers import counted as _counted
from toolgen.cli.printers import print_diagnostics as _print_diagnostics
from toolgen.cli.printers import report_check
from toolgen.core.diagnostics import Diagnostic
from toolgen.core.errors import ExitCode, InterruptedAfterCommit, InvalidInputError, ToolgenError
from toolgen.core.kinds import KINDS, PAYLOAD_KINDS, WIRE_KINDS
from toolgen.runtime import MCP, NAMES

if TYPE_CHECKING:
    from toolgen.runtime import GeminiSchema

F = TypeVar("F", bound=Callable[..., Any])


def _stream_diagnostics(diagnostics: Iterable[Diagnostic], output_format: str) -> None:
    """Findings printed as they come, so a long run shows them early and holds none in memory."""
    if output_format != "json":
        for diagnostic in diagnostics:
            if sys.stderr.isatty():
                _end_progress()
            _print_diagnostics([diagnostic], output_format)
        return
    click.echo("[", nl=False)
    for index, diagnostic in enumerate(diagnostics):
        click.echo(("," if index else "") + "\n  " + json.dumps(diagnostic.to_json()), nl=False)
    click.echo("\n]")


def _end_progress() -> None:
    if sys.stderr.isatty():
        click.echo("\r\033[2K", err=True, nl=False)


def _run(action: Callable[[], ExitCode], output_format: str = "text") -> None:
    try:
        try:
            code = action()
        finally:
            _end_progress()
    except InvalidInputError as error:
        _print_diagnostics(error.diagnostics, output_format)
        # A subclass says what went wrong in its own words; the plain error is a count of its findings.
        summary = f"{_counted(error.diagnostics)} in the input" if type(error) is InvalidInputError else str(error)
        click.echo(f"toolgen: {summary}; nothing was written", err=True)
        code = error.exit_code
    except ToolgenError as error:
        click.echo(f"toolgen: {error}", err=True)
        code = error.exit_code
    except InterruptedAfterCommit:
        click.echo("toolgen: interrupted once the new package was committed; it is written in full", err=True)
        code = ExitCode.INTERRUPTED
    except KeyboardInterrupt:
        click.echo("toolgen: interrupted; nothing was written", err=True)
        code = ExitCode.INTERRUPTED
    except Exception as error:  # noqa: BLE001 - the last line of defence maps any bug to exit 4
        click.echo(
            f"toolgen: internal error (a bug in toolgen, please report it): {type(error).__name__}: {error}", err=True
        )
        code = ExitCode.INTERNAL
    sys.exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolgen")
@group_directory
def main() -> None:
    """Schema-first code generator for LLM tool calling."""


@main.command()
@common_options(config=False, output_format=False, project_help="Project root to create.")
@click.option("--package", default="toolgen_sdk", show_default=True, help="Import name of the generated package.")
def init(project: Path, package: str) -> None:
    """Create toolgen.yaml and schemas/ with an example tool."""

    def action() -> ExitCode:
        result = toolgen.init_project(project, package=package)
        for verb, paths in (("created", result.created), ("updated", result.updated)):
            for path in paths:
                shown = path.relative_to(project.resolve()) if path.is_relative_to(project.resolve()) else path
                click.echo(f"{verb} {shown}")
        for note in result.notes:
            click.echo(f"toolgen: {note}", err=True)
        click.echo("next: toolgen build", err=True)
        return ExitCode.OK

    _run(action)


@main.command()
@common_options(quiet=True)
@click.option("--force", is_flag=True, help="Rebuild even when nothing changed.")
def build(project: Path, config_path: Path | None, output_format: str, quiet: bool, force: bool) -> None:
    """Generate the SDK from the schemas (atomically: all files or none)."""

    def action() -> ExitCode:
        progress = Progress(quiet=quiet)
        result = toolgen.build(project, config_path=config_path, force=force, progress=progress)
        progress.end()
        _print_diagnostics(result.warnings, output_format)
        where = (
            result.package_dir.relative_to(project.resolve())
            if result.package_dir.is_relative_to(project.resolve())
            else result.package_dir
        )
        click.echo(f"toolgen: {build_summary(result, f'{where}/')}", err=True)
        return ExitCode.OK

    _run(action, output_format)


def _gemini_schema_option(function: Callable[..., None]) -> Callable[..., None]:
    return click.option(
        "--gemini-schema",
        type=click.Choice(["json", "openapi"]),
        default=None,
        help="Gemini's schema field: parametersJsonSchema (json, JSON Schema as written) or parameters (openapi, "
        "Gemini's OpenAPI subset). Default: toolgen.yaml's export.gemini_schema, else json.",
    )(function)


@main.command("lint")
@common_options()
@fail_on_option
@_gemini_schema_option
@click.option(
    "--provider",
    "providers",
    multiple=True,
    type=click.Choice([*NAMES, MCP]),
    help="Apply this provider's rules (repeatable; default: toolgen.yaml's lint.providers, else all).",
)
def lint_command(
    project: Path,
    config_path: Path | None,
    output_format: str,
    fail_on: str,
    providers: tuple[str, ...],
    gemini_schema: GeminiSchema | None,
) -> None:
    """Check the tool definitions against each provider's limits; exit 1 on errors (--fail-on warning: on any)."""

    def action() -> ExitCode:
        findings = toolgen.lint(project, config_path=config_path, providers=providers or None, gemini=gemini_schema)
        _print_diagnostics(findings, output_format)
        errors = sum(1 for f in findings if f.severity.value == "error")
        click.echo(f"toolgen: {len(findings)} finding(s), {errors} error(s)", err=True)
        return ExitCode.FINDINGS if failed(findings, fail_on) else ExitCode.OK

    _run(action, output_format)


@main.command("export")
@common_options(output_format=None)
@click.option("--format", "provider", type=click.Choice([*NAMES, MCP]), required=True, help="Provider request format.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE instead of stdout."
)
@click.option(
    "--strict/--no-strict",
    default=None,
    help="openai formats: rewrite every tool for strict mode (default: toolgen.yaml's export.strict; "
    "tools declaring strict: true always are).",
)
@_gemini_schema_option
def export_command(
    project: Path,
    config_path: Path | None,
    provider: str,
    output: Path | None,
    strict: bool | None,
    gemini_schema: GeminiSchema | None,
) -> None:
    """Print the tool definitions in a provider's request format (the request's `tools` field)."""

    def action() -> ExitCode:
        result, warnings = toolgen.export(
            project, provider=provider, config_path=config_path, strict=strict, gemini=gemini_schema
        )
        for note in result.notes:
            click.echo(f"toolgen: note: {note}", err=True)
        text = json.dumps(result.tools, indent=2, ensure_ascii=False) + "\n"
        if output is None:
            click.echo(text, nl=False)
        else:
            write_output(output, text)
        click.echo(f"toolgen: {len(result.tools)} {provider} tool entries", err=True)
        return ExitCode.OK

    _run(action)


@main.command("import", context_settings={"ignore_unknown_options": True})
@import_options
def import_command(
    project: Path, source: str, command: tuple[str, ...], source_format: str | None, url: str | None, **options: Any
) -> None:
    """Write tools as schema files: from an MCP server (`mcp -- COMMAND...` or `mcp --url URL`), or from
    an exported or recorded tools list (`FILE --from openai|anthropic|gemini|bedrock|mcp`)."""
    _run(import_action(project, source, command, source_format, url, options))


@main.command()
@common_options(quiet=True)
@fail_on_option
@click.option(
    "--full",
    is_flag=True,
    help="Render and compare even when the manifest says every input, the config, toolgen and each file match.",
)
def check(project: Path, config_path: Path | None, output_format: str, quiet: bool, fail_on: str, full: bool) -> None:
    """Exit 1 with a diff when the generated SDK differs from what the schemas produce (or on warnings, if asked).

    When the manifest's hashes of the inputs, the config, toolgen and every generated file all match, the answer
    comes without rendering; any difference, or --full, renders everything in memory and compares.
    """

    def action() -> ExitCode:
        progress = Progress(quiet=quiet)
        result = toolgen.check(project, config_path=config_path, full=full, progress=progress)
        progress.end()
        return report_check(result, output_format, fail_on)

    _run(action, output_format)


def _dask_address(context: click.Context, parameter: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from toolgen.payloads.validation.cluster import parse_address

    try:
        parse_address(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    return value


@main.command()
@common_options(quiet=True)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--as",
    "kind",
    type=click.Choice([*KINDS, *WIRE_KINDS]),
    required=True,
    help="What each record is: a canonical type, or a provider body as <wire>.request / <wire>.response.",
)
@click.option(
    "--workers", type=click.IntRange(min=1), help="Processes for large JSON Lines files (default: all cores)."
)
@click.option(
    "--dask",
    "dask_address",
    metavar="ADDRESS",
    callback=_dask_address,
    help="Check on a Dask cluster: a scheduler address (tcp://host:8786), or local[:N] for N local workers. "
    "PATHS may then be fsspec URLs the workers can read (s3://bucket/logs/*.jsonl). Needs toolgen[dask].",
)
@click.option(
    "--summary",
    is_flag=True,
    help="Print, instead of every finding, per tool: calls, invalid calls by rule, results missing.",
)
def validate(
    project: Path,
    config_path: Path | None,
    output_format: str,
    quiet: bool,
    paths: tuple[str, ...],
    kind: str,
    workers: int | None,
    dask_address: str | None,
    summary: bool,
) -> None:
    """Check payload files (JSON, JSON Lines, `-` for stdin) with the generated SDK; exit 1 on invalid records.

    Every tool call's arguments are checked against its tool's input schema too; `--as messages` also pairs
    every tool result with a call and every call with a result. As <wire>.response, a recorded stream (.sse,
    .eventstream, a .jsonl or .ndjson of stream chunks, Gemini's JSON array) is one record: the message it
    aggregates to. Exit 3 when a file cannot be read or a record is not JSON.
    """
    if dask_address is not None and workers is not None:
        raise click.UsageError("--workers is for local runs; with --dask the cluster's workers do the work")
    if dask_address is not None and "-" in paths:
        raise click.UsageError("stdin cannot be sent to a cluster: give files, or validate stdin without --dask")
    if summary and output_format == "github":
        raise click.UsageError("--summary prints a table (--format text) or JSON (--format json)")

    def action() -> ExitCode:
        tally = toolgen.Tally()
        if summary:
            from toolgen.payloads.validation.summary import Summary

            report: Summary | None = Summary()
        else:
            report = None
        progress = Progress(quiet=quiet)

        def advance(records: int) -> None:
            progress.count(f"validated {tally.records:,} records")

        if dask_address is not None:
            from toolgen.payloads.validation.cluster import validate_on_dask

            findings = validate_on_dask(
                paths, kind=kind, address=dask_address, root=project, config_path=config_path, progress=advance,
                tally=tally, summary=report,
            )  # fmt: skip
        elif report is not None:
            from toolgen.payloads.validation.report import validate_with_summary

            findings = validate_with_summary(
                paths, kind=kind, summary=report, root=project, config_path=config_path, workers=workers,
                progress=advance, tally=tally,
            )  # fmt: skip
        else:
            findings = toolgen.validate(
                paths, kind=kind, root=project, config_path=config_path, workers=workers, progress=advance, tally=tally
            )
        if report is None:
            _stream_diagnostics(findings, output_format)
        else:
            for _ in findings:
                pass  # counted into the report
            as_json = report.to_json(kind, tally) if output_format == "json" else None
            click.echo(json.dumps(as_json, indent=2) if as_json is not None else report.table(kind, tally))
        progress.end()
        click.echo(
            f"toolgen: {tally.records:,} record(s), {tally.invalid:,} invalid, {tally.unreadable:,} unreadable",
            err=True,
        )
        if tally.unreadable:
            return ExitCode.INVALID_INPUT
        if not tally.records:
            # An empty file or stdin checks nothing: a pass would hide a wrong path or a failed export.
            shown = ", ".join("<stdin>" if str(path) == "-" else str(path) for path in paths)
            click.echo(f"toolgen: nothing to validate: no record in {shown}", err=True)
            return ExitCode.INVALID_INPUT
        return ExitCode.FINDINGS if tally.invalid else ExitCode.OK

    _run(action, output_format)


@main.command("breaking")
@common_options()
@click.option(
    "--against",
    metavar="REF",
    help="Compare with REF: a snapshot file from --export, another checkout's project directory, or a git revision "
    "(main, HEAD~1, origin/main) of the project's repository.",
)
@click.option(
    "--export",
    "export_path",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="Instead, write the current tools as a snapshot FILE (- for stdout) that --against FILE reads.",
)
@click.option("--all", "show_all", is_flag=True, help="Print safe changes too, as warnings (json always has them).")
def breaking_command(
    project: Path,
    config_path: Path | None,
    output_format: str,
    against: str | None,
    export_path: Path | None,
    show_all: bool,
) -> None:
    """Classify every tool schema change since REF as breaking or safe; exit 1 on a breaking change.

    Breaking means a call or a result that worked before fails now, on the wire or in the generated Python API.
    """
    if (against is None) == (export_path is None):
        raise click.UsageError("give either --against REF or --export FILE")

    def action() -> ExitCode:
        if export_path is not None:
            text = toolgen.breaking_snapshot(project, config_path=config_path)
            if str(export_path) == "-":
                click.echo(text, nl=False)
            else:
                write_output(export_path, text)
            click.echo(f"toolgen: wrote a breaking-change snapshot to {export_path}", err=True)
            return ExitCode.OK
        findings = toolgen.breaking(str(against), root=project, config_path=config_path)
        errors = [f for f in findings if f.severity.value == "error"]
        _print_diagnostics(findings if show_all or output_format == "json" else errors, output_format)
        safe = len(findings) - len(errors)
        click.echo(f"toolgen: {len(errors)} breaking change(s), {safe} safe change(s) against {against}", err=True)
        return ExitCode.FINDINGS if errors else ExitCode.OK

    _run(action, output_format)


def _write_json(value: Any, output: Path | None) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        write_output(output, text)


# Wire names as the runtime's table of wires spells them, old spellings (aliases) included.
_WIRE_CHOICE = click.Choice(list(NAMES))
_PAYLOAD = click.argument("file", type=click.Path(path_type=Path, allow_dash=True, dir_okay=False))
_OUTPUT = click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE instead of stdout."
)
_STRICT_LOSS = click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 when the target wire cannot carry a field of the request, response or error body.",
)


# The payload verbs read no toolgen.yaml; -C is the root their findings' paths are shown relative to.
_PAYLOAD_OPTIONS = common_options(
    config=False, project_help="Project root: files in findings are named relative to it."
)


@main.command()
@_PAYLOAD
@_PAYLOAD_OPTIONS
@click.option("--wire", type=_WIRE_CHOICE, help="The wire format (default: detected from the content).")
@click.option("--kind", type=click.Choice(PAYLOAD_KINDS), help="request, response or stream (default: detected).")
@_OUTPUT
def decode(
    file: Path, project: Path, output_format: str, wire: str | None, kind: str | None, output: Path | None
) -> None:
    """Print a recorded request, response or stream (`-` for stdin) as canonical JSON."""

    def action() -> ExitCode:
        decoded = toolgen.decode(file, wire=wire, kind=kind, root=project)
        _write_json(decoded, output)
        click.echo(f"toolgen: {decoded['wire']} {decoded['kind']}", err=True)
        return ExitCode.OK

    _run(action, output_format)


@main.command()
@_PAYLOAD
@_PAYLOAD_OPTIONS
@click.option("--wire", type=_WIRE_CHOICE, required=True, help="The wire format to write.")
@_OUTPUT
@_STRICT_LOSS
def encode(file: Path, project: Path, output_format: str, wire: str, output: Path | None, strict: bool) -> None:
    """Turn canonical JSON (decode's output, or a list of messages) into a `wire` body.

    Every field of a request, response or error body the wire cannot carry is named on stderr; with --strict any
    such loss exits 1.
    """

    def action() -> ExitCode:
        encoded = toolgen.encode_noted(file, wire=wire, root=project)
        _write_json(encoded.body, output)
        return _loss_notes(encoded.notes, wire, strict)

    _run(action, output_format)


@main.command()
@_PAYLOAD
@_PAYLOAD_OPTIONS
@click.option("--to", "to_wire", type=_WIRE_CHOICE, required=True, help="The wire format to write.")
@click.option("--from", "from_wire", type=_WIRE_CHOICE, help="The file's wire format (default: detected).")
@click.option("--kind", type=click.Choice(PAYLOAD_KINDS), help="request, response or stream (default: detected).")
@_OUTPUT
@_STRICT_LOSS
def convert(
    file: Path,
    project: Path,
    output_format: str,
    to_wire: str,
    from_wire: str | None,
    kind: str | None,
    output: Path | None,
    strict: bool,
) -> None:
    """Rewrite a recorded payload in another wire format (a stream becomes that wire's whole response).

    Every field of a request, response or error body the target cannot carry is named on stderr; with --strict
    any such loss exits 1.
    """

    def action() -> ExitCode:
        converted = toolgen.convert_noted(file, to_wire=to_wire, from_wire=from_wire, kind=kind, root=project)
        _write_json(converted.body, output)
        return _loss_notes(converted.notes, to_wire, strict)

    _run(action, output_format)


def _loss_notes(notes: tuple[str, ...], wire: str, strict: bool) -> ExitCode:
    """Print what the target wire could not carry (stderr); with `strict`, any loss is a finding."""
    for note in notes:
        click.echo(f"toolgen: note: {note}", err=True)
    if notes:
        click.echo(f"toolgen: {len(notes)} field(s) not carried as they were to {wire}", err=True)
    return ExitCode.FINDINGS if strict and notes else ExitCode.OK


@main.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path, file_okay=False))
@_PAYLOAD_OPTIONS
def conformance(folders: tuple[Path, ...], project: Path, output_format: str) -> None:
    """Decode every recorded payload under FOLDERS and check its round trip; exit 1 when any file fails.

    Text is a table of every file; json one object per file; github an annotation per failed file.
    """

    def action() -> ExitCode:
        rows = toolgen.conformance(folders, root=project)
        if output_format == "json":
            click.echo(json.dumps([row.to_json() for row in rows], indent=2, ensure_ascii=False))
        elif output_format == "github":
            for row in rows:
                if not row.ok:
                    click.echo(f"::error file={row.file},title=conformance::{row.wire} {row.kind}: {row.detail}")
        else:
            click.echo("| format | kind | file | result | tool calls | detail |")
            click.echo("| --- | --- | --- | --- | --- | --- |")
            for row in rows:
                result = "ok" if row.ok else click.style("FAIL", fg="red", bold=True)
                names = ", ".join(row.calls) or "-"
                click.echo(f"| {row.wire} | {row.kind} | {row.file} | {result} | {names} | {row.detail} |")
        failed_rows = sum(not row.ok for row in rows)
        click.echo(f"toolgen: {len(rows)} payload(s), {failed_rows} failed", err=True)
        return ExitCode.FINDINGS if failed_rows or not rows else ExitCode.OK

    _run(action, output_format)


# Last, once every verb is declared: a refused choice names the nearest allowed value.
hint_choices(main)
