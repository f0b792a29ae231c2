"""Everything the command line prints, for every verb: text, JSON and GitHub annotations, stage progress, the
summary lines on stderr, and the exit code each result means."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolgen.api import Diagnostic, ExitCode, InterruptedAfterCommit, InvalidInputError, Severity, ToolgenError
from toolgen.cli.output_file import write_output

if TYPE_CHECKING:
    from toolgen.api import (
        BuildResult,
        CheckResult,
        ConformanceRow,
        DriftReport,
        Export,
        Imported,
        InitResult,
        Summary,
        Tally,
    )


class Progress:
    """Stage names on stderr: overwritten in place on a terminal, one plain line each elsewhere, none when quiet.

    Logs and CI output get whole lines without carriage returns; counters that change many times a second
    (`count`) show on a terminal only, where they overwrite themselves.
    """

    def __init__(self, *, quiet: bool = False) -> None:
        self._quiet = quiet
        self._tty = sys.stderr.isatty()

    def __call__(self, stage: str) -> None:
        if self._quiet:
            return
        if self._tty:
            click.echo(f"\r\033[2Ktoolgen: {stage}...", err=True, nl=False)
        else:
            click.echo(f"toolgen: {stage}...", err=True)

    def count(self, text: str) -> None:
        if self._tty and not self._quiet:
            click.echo(f"\r\033[2Ktoolgen: {text}...", err=True, nl=False)

    def end(self) -> None:
        if self._tty and not self._quiet:
            click.echo("\r\033[2K", err=True, nl=False)


def end_progress() -> None:
    """Clear a progress line left on a terminal, before a finding or an error is printed."""
    if sys.stderr.isatty():
        click.echo("\r\033[2K", err=True, nl=False)


def failed(findings: Iterable[Diagnostic], fail_on: str) -> bool:
    """Whether findings make the verb exit 1 under --fail-on."""
    return any(fail_on == "warning" or finding.severity is Severity.ERROR for finding in findings)


def counted(diagnostics: Sequence[Diagnostic]) -> str:
    """`2 errors, 1 warning`: errors and warnings counted apart, so a warning never reads as an error."""
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    warnings = len(diagnostics) - errors
    parts = [f"{errors} error{'s' if errors != 1 else ''}"]
    parts += [f"{warnings} warning{'s' if warnings != 1 else ''}"] if warnings else []
    return ", ".join(parts)


def _annotation(level: str, file: str, title: str, message: str, place: str = "") -> str:
    """A GitHub Actions workflow command: one annotation on `file` (at `place`: `,line=L,col=C`)."""
    return f"::{level} file={file}{place},title={title}::{message}"


def in_order(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Findings in the order a user fixes them, top to bottom: by file, line, column, then rule; those at one place
    under one rule keep the order they were found in. Stages find them stage by stage, not file by file."""
    return sorted(diagnostics, key=lambda d: (d.path, d.line, d.col, d.rule))


def print_diagnostics(diagnostics: Sequence[Diagnostic], output_format: str) -> None:
    diagnostics = in_order(diagnostics)
    if output_format == "json":
        click.echo(json.dumps([d.to_json() for d in diagnostics], indent=2))
        return
    if not diagnostics:
        return
    # One write for all of them: an up-to-date `check` repeats a large project's 1,000s of warnings, and a
    # click.echo per line cost it a sixth of `import pydantic` at 1,598 warnings.
    if output_format == "github":
        lines = [
            _annotation(
                "error" if d.severity.value == "error" else "warning",
                d.path,
                d.rule,
                d.message,
                f",line={d.line},col={d.col}",
            )
            if not d.path.startswith("--")
            # about an option (`--against`), no file: an annotation naming a file that is not there is lost
            else f"::{'error' if d.severity.value == 'error' else 'warning'} title={d.rule}::{d.path}: {d.message}"
            for d in diagnostics
        ]
    else:
        # click drops the colour when stdout is not a terminal
        styled = {
            value: click.style(value, fg="red" if value == "error" else "yellow", bold=True)
            for value in {d.severity.value for d in diagnostics}
        }
        lines = [f"{d.path}:{d.line}:{d.col}: {styled[d.severity.value]} {d.rule} {d.message}" for d in diagnostics]
    click.echo("\n".join(lines))


def stream_diagnostics(diagnostics: Iterable[Diagnostic], output_format: str) -> None:
    """Findings printed as they come, so a long run shows them early and holds none in memory."""
    if output_format != "json":
        for diagnostic in diagnostics:
            end_progress()
            print_diagnostics([diagnostic], output_format)
        return
    click.echo("[", nl=False)
    for index, diagnostic in enumerate(diagnostics):
        click.echo(("," if index else "") + "\n  " + json.dumps(diagnostic.to_json()), nl=False)
    click.echo("\n]")


def print_failure(error: BaseException, output_format: str, *, writes: bool = True) -> ExitCode:
    """What a verb that failed says on stderr, and its exit code; an error toolgen does not expect is a bug.
    A verb that never writes (`writes` False) does not say that nothing was written."""
    if isinstance(error, InvalidInputError):
        print_diagnostics(error.diagnostics, output_format)
        # A subclass says what went wrong in its own words; the plain error is a count of its findings.
        summary = f"{counted(error.diagnostics)} in the input" if type(error) is InvalidInputError else str(error)
        click.echo(f"toolgen: {summary}{'; nothing was written' if writes else ''}", err=True)
        return error.exit_code
    if isinstance(error, ToolgenError):
        click.echo(f"toolgen: {error}", err=True)
        return error.exit_code
    if isinstance(error, InterruptedAfterCommit):
        click.echo("toolgen: interrupted once the new package was committed; it is written in full", err=True)
        return ExitCode.INTERRUPTED
    if isinstance(error, KeyboardInterrupt):
        click.echo(f"toolgen: interrupted{'; nothing was written' if writes else ''}", err=True)
        return ExitCode.INTERRUPTED
    click.echo(
        f"toolgen: internal error (a bug in toolgen, please report it): {type(error).__name__}: {error}", err=True
    )
    return ExitCode.INTERNAL


def _shown(path: Path, root: Path) -> Path:
    return path.relative_to(root) if path.is_relative_to(root) else path


def print_init(result: InitResult, project: Path) -> ExitCode:
    for verb, paths in (("created", result.created), ("updated", result.updated)):
        for path in paths:
            click.echo(f"{verb} {_shown(path, project.resolve())}")
    for note in result.notes:
        click.echo(f"toolgen: {note}", err=True)
    click.echo("next: toolgen build", err=True)
    return ExitCode.OK


def _files(count: int) -> str:
    return f"{count} file{'s' if count != 1 else ''}"


def build_summary(result: BuildResult, where: str) -> str:
    """`wrote sdk/: 3 files changed, 34 unchanged` (and what was removed), or `sdk/ is up to date (37 files)`."""
    if not result.changed and not result.deleted:
        return f"{where} is up to date ({_files(len(result.files))})"
    parts = [f"{_files(len(result.changed))} changed", f"{len(result.files) - len(result.changed)} unchanged"]
    parts += [f"{len(result.deleted)} removed"] if result.deleted else []
    return f"wrote {where}: {', '.join(parts)}"


def print_build(result: BuildResult, project: Path, output_format: str) -> ExitCode:
    print_diagnostics(result.warnings, output_format)
    where = f"{_shown(result.package_dir, project.resolve())}/"
    for name in result.edited:
        done = "deleted the file" if name in result.deleted else "replaced the edit"
        click.echo(
            f"toolgen: note: {where}{name} was edited by hand since the last build; the build {done} (code of "
            f"your own goes in {where}ext/ or a path under `keep:`, which builds never touch)",  # USER_DIR
            err=True,
        )
    click.echo(f"toolgen: {build_summary(result, where)}", err=True)
    return ExitCode.OK


def print_lint(findings: Sequence[Diagnostic], output_format: str, fail_on: str) -> ExitCode:
    print_diagnostics(findings, output_format)
    errors = sum(1 for f in findings if f.severity.value == "error")
    click.echo(f"toolgen: {len(findings)} finding(s), {errors} error(s)", err=True)
    return ExitCode.FINDINGS if failed(findings, fail_on) else ExitCode.OK


def print_export(result: Export, provider: str, output: Path | None) -> ExitCode:
    for note in result.notes:
        click.echo(f"toolgen: note: {note}", err=True)
    text = json.dumps(result.tools, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        write_output(output, text)
    click.echo(f"toolgen: {len(result.tools)} {provider} tool entries", err=True)
    return ExitCode.OK


def print_imported(written: Imported, project: Path) -> ExitCode:
    for note in written.notes:
        click.echo(f"toolgen: note: {note}", err=True)
    for path in written.files:
        click.echo(path.relative_to(project).as_posix() if path.is_relative_to(project) else str(path))
    click.echo(f"toolgen: imported {len(written.tools)} tools from {written.source}", err=True)
    return ExitCode.OK


def print_lock_check(report: DriftReport) -> ExitCode:
    """`import mcp --check`: each drift a finding on stdout (sorted), the count on stderr; 1 when any."""
    for finding in report.findings:
        click.echo(finding.format())
    if report.findings:
        drifts = f"{len(report.findings)} drift(s) in {len(report.drifted)} tool(s) of {report.server}"
        click.echo(f"toolgen: {drifts} from {report.lock}; import again (--force) to review and pin them", err=True)
        return ExitCode.FINDINGS
    click.echo(f"toolgen: the {report.tools} tools of {report.server} match {report.lock}", err=True)
    return ExitCode.OK


def print_check(result: CheckResult, output_format: str, fail_on: str) -> ExitCode:
    """Print what `check` found (the diff, or annotations, or JSON) and the summary line; the exit code."""
    findings = [d.to_json() for d in in_order(result.warnings)] if output_format == "json" else []
    if not result.built:
        # Before the first build there is nothing to compare: a diff of every file would only bury this line.
        shown = result.changed[0]
        if output_format == "json":
            click.echo(json.dumps({"changed": [shown], "diff": "", "findings": findings, "built": False}, indent=2))
        elif output_format == "github":
            click.echo(_annotation("error", shown, "toolgen-drift", f"{shown} has not been built; run `toolgen build`"))
        click.echo(f"toolgen: {shown} has not been built yet; run `toolgen build` first", err=True)
        return ExitCode.FINDINGS
    if output_format != "json":
        print_diagnostics(result.warnings, output_format)
    if result.ok:
        if output_format == "json":
            click.echo(json.dumps({"changed": [], "diff": "", "findings": findings}, indent=2))
        click.echo("toolgen: generated code is up to date", err=True)
        if failed(result.warnings, fail_on):
            click.echo(f"toolgen: {counted(result.warnings)}, and --fail-on warning", err=True)
            return ExitCode.FINDINGS
        return ExitCode.OK
    if output_format == "json":
        click.echo(json.dumps({"changed": list(result.changed), "diff": result.diff, "findings": findings}, indent=2))
    elif output_format == "github":
        message = "generated file differs from its schemas; run `toolgen build`"
        for name in result.changed:
            click.echo(_annotation("error", name, "toolgen-drift", message))
    else:
        click.echo(result.diff, nl=False)
    errors = sum(d.severity is Severity.ERROR for d in result.warnings)
    parts = [f"{len(result.changed)} generated file(s) differ"] if result.changed else []
    parts += [f"{errors} finding(s) to fix first"] if errors else []
    click.echo(f"toolgen: {'; '.join(parts) or 'out of date'}; run `toolgen build`", err=True)
    return ExitCode.FINDINGS


def print_validation(
    findings: Iterable[Diagnostic],
    output_format: str,
    tally: Tally,
    summary: Summary | None,
    kind: str,
    paths: Sequence[str],
    progress: Progress,
) -> ExitCode:
    """Every finding as it comes (or, with --summary, the table or JSON once all are counted), then the tally."""
    if summary is None:
        stream_diagnostics(findings, output_format)
    else:
        for _ in findings:
            pass  # counted into the summary
        as_json = summary.to_json(kind, tally) if output_format == "json" else None
        click.echo(json.dumps(as_json, indent=2) if as_json is not None else summary.table(kind, tally))
    progress.end()
    click.echo(
        f"toolgen: {tally.records:,} record(s), {tally.invalid:,} invalid, {tally.unreadable:,} unreadable", err=True
    )
    if tally.unreadable:
        return ExitCode.INVALID_INPUT
    if not tally.records:
        # An empty file or stdin checks nothing: a pass would hide a wrong path or a failed export.
        shown = ", ".join("<stdin>" if str(path) == "-" else str(path) for path in paths)
        click.echo(f"toolgen: nothing to validate: no record in {shown}", err=True)
        return ExitCode.INVALID_INPUT
    return ExitCode.FINDINGS if tally.invalid else ExitCode.OK


def print_snapshot(text: str, export_path: Path) -> ExitCode:
    if str(export_path) == "-":
        click.echo(text, nl=False)
    else:
        write_output(export_path, text)
    click.echo(f"toolgen: wrote a breaking-change snapshot to {export_path}", err=True)
    return ExitCode.OK


# Said about REF itself, not a change of a tool: printed without --all, counted as no change.
_BREAKING_NOTES = frozenset({"against-no-project"})


def print_breaking(findings: Sequence[Diagnostic], output_format: str, show_all: bool, against: str) -> ExitCode:
    errors = [f for f in findings if f.severity.value == "error"]
    shown = [f for f in findings if show_all or f.severity.value == "error" or f.rule in _BREAKING_NOTES]
    print_diagnostics(findings if output_format == "json" else shown, output_format)
    safe = sum(f.severity.value != "error" and f.rule not in _BREAKING_NOTES for f in findings)
    click.echo(f"toolgen: {len(errors)} breaking change(s), {safe} safe change(s) against {against}", err=True)
    return ExitCode.FINDINGS if errors else ExitCode.OK


def print_json(value: Any, output: Path | None) -> None:
    """A payload verb's JSON on stdout, or whole into the -o file."""
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        write_output(output, text)


def print_decoded(decoded: dict[str, Any], output: Path | None) -> ExitCode:
    print_json(decoded, output)
    click.echo(f"toolgen: {decoded['wire']} {decoded['kind']}", err=True)
    return ExitCode.OK


def print_converted(body: Any, notes: tuple[str, ...], output: Path | None, wire: str, strict: bool) -> ExitCode:
    """The body, then what the target wire could not carry (stderr); with `strict`, any loss is a finding."""
    print_json(body, output)
    for note in notes:
        click.echo(f"toolgen: note: {note}", err=True)
    if notes:
        click.echo(f"toolgen: {len(notes)} field(s) not carried as they were to {wire}", err=True)
    return ExitCode.FINDINGS if strict and notes else ExitCode.OK


def print_conformance(rows: Sequence[ConformanceRow], output_format: str) -> ExitCode:
    """Text is a table of every file; json one object per file; github an annotation per failed file."""
    if output_format == "json":
        click.echo(json.dumps([row.to_json() for row in rows], indent=2, ensure_ascii=False))
    elif output_format == "github":
        for row in rows:
            if not row.ok:
                click.echo(_annotation("error", row.file, "conformance", f"{row.wire} {row.kind}: {row.detail}"))
    else:
        click.echo("| format | kind | file | result | tool calls | detail |")
        click.echo("| --- | --- | --- | --- | --- | --- |")
        for row in rows:
            result = row.result if row.ok else click.style("FAIL", fg="red", bold=True)
            names = ", ".join(row.calls) or "-"
            click.echo(f"| {row.wire} | {row.kind} | {row.file} | {result} | {names} | {row.detail} |")
    failed_rows = sum(not row.ok for row in rows)
    skipped_rows = sum(row.skipped is not None for row in rows)
    skipped = f", {skipped_rows} skipped (recorded failures)" if skipped_rows else ""
    click.echo(f"toolgen: {len(rows)} payload(s), {failed_rows} failed{skipped}", err=True)
    return ExitCode.FINDINGS if failed_rows or not rows else ExitCode.OK
