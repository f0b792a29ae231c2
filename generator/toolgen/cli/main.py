"""The `toolgen` command: parse arguments, call the library, print results, map them to exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

# The library's one door: toolgen.api loads no pipeline when imported (so --help stays fast), and each verb
# loads only its own stages when it runs.
from toolgen import api
from toolgen.api import KINDS, MCP, NAMES, PAYLOAD_KINDS, WIRE_KINDS, ExitCode
from toolgen.cli import printers
from toolgen.cli.import_verb import import_action, import_options
from toolgen.cli.options import common_options, fail_on_option, group_directory, hint_choices
from toolgen.cli.printers import Progress

if TYPE_CHECKING:
    from toolgen.api import GeminiSchema


def _run(action: Callable[[], ExitCode], output_format: str = "text", *, writes: bool = True) -> None:
    """Run a verb's action and exit with its code; `writes` is False for a verb that never writes a file (check,
    lint, validate, breaking --against, conformance), whose failure then does not say that nothing was written."""
    try:
        try:
            code = action()
        finally:
            printers.end_progress()
    except (Exception, KeyboardInterrupt) as error:  # noqa: BLE001 - the last line of defence maps any bug to exit 4
        code = printers.print_failure(error, output_format, writes=writes)
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
        return printers.print_init(api.init_project(project, package=package), project)

    _run(action)


@main.command()
@common_options(quiet=True)
@click.option("--force", is_flag=True, help="Rebuild even when nothing changed.")
def build(project: Path, config_path: Path | None, output_format: str, quiet: bool, force: bool) -> None:
    """Generate the SDK from the schemas (atomically: all files or none)."""

    def action() -> ExitCode:
        progress = Progress(quiet=quiet)
        result = api.build(project, config_path=config_path, force=force, progress=progress)
        progress.end()
        return printers.print_build(result, project, output_format)

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
        findings = api.lint(project, config_path=config_path, providers=providers or None, gemini=gemini_schema)
        return printers.print_lint(findings, output_format, fail_on)

    _run(action, output_format, writes=False)


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
    if gemini_schema is not None and provider not in api._gemini_formats():
        raise click.UsageError(
            f"--gemini-schema chooses Gemini's schema field: it applies to --format "
            f"{' or '.join(api._gemini_formats())}, and {provider} has no such field"
        )

    def action() -> ExitCode:
        result, _ = api.export(project, provider=provider, config_path=config_path, strict=strict, gemini=gemini_schema)
        return printers.print_export(result, provider, output)

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
        result = api.check(project, config_path=config_path, full=full, progress=progress)
        progress.end()
        return printers.print_check(result, output_format, fail_on)

    _run(action, output_format, writes=False)


def _dask_address(context: click.Context, parameter: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        api.parse_dask_address(value)
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
        tally = api.Tally()
        report = api.Summary() if summary else None
        progress = Progress(quiet=quiet)

        def advance(records: int) -> None:
            progress.count(f"validated {tally.records:,} records")

        findings = api.validate(
            paths, kind=kind, root=project, config_path=config_path, workers=workers, progress=advance, tally=tally,
            summary=report, dask=dask_address,
        )  # fmt: skip
        return printers.print_validation(findings, output_format, tally, report, kind, paths, progress)

    _run(action, output_format, writes=False)


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
            return printers.print_snapshot(api.breaking_snapshot(project, config_path=config_path), export_path)
        findings = api.breaking(str(against), root=project, config_path=config_path)
        return printers.print_breaking(findings, output_format, show_all, str(against))

    _run(action, output_format, writes=export_path is not None)


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
        return printers.print_decoded(api.decode(file, wire=wire, kind=kind, root=project), output)

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
        encoded = api.encode_noted(file, wire=wire, root=project)
        return printers.print_converted(encoded.body, encoded.notes, output, wire, strict)

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
        converted = api.convert_noted(file, to_wire=to_wire, from_wire=from_wire, kind=kind, root=project)
        return printers.print_converted(converted.body, converted.notes, output, to_wire, strict)

    _run(action, output_format)


@main.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path, file_okay=False))
@_PAYLOAD_OPTIONS
def conformance(folders: tuple[Path, ...], project: Path, output_format: str) -> None:
    """Decode every recorded payload under FOLDERS and check its round trip; exit 1 when any file fails.

    Text is a table of every file; json one object per file; github an annotation per failed file.
    """

    def action() -> ExitCode:
        return printers.print_conformance(api.conformance(folders, root=project), output_format)

    _run(action, output_format, writes=False)


# Last, once every verb is declared: a refused choice names the nearest allowed value.
hint_choices(main)
