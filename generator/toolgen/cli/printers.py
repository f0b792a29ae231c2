"""How the command line prints findings (text, JSON, GitHub annotations), counts them, and reports a `check`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from toolgen.cli.options import failed
from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import ExitCode

if TYPE_CHECKING:
    from toolgen.output.drift import CheckResult


def print_diagnostics(diagnostics: Sequence[Diagnostic], output_format: str) -> None:
    if output_format == "json":
        click.echo(json.dumps([d.to_json() for d in diagnostics], indent=2))
        return
    if not diagnostics:
        return
    # One write for all of them: an up-to-date `check` repeats a large project's 1,000s of warnings, and a
    # click.echo per line cost it a sixth of `import pydantic` at 1,598 warnings.
    if output_format == "github":
        lines = [
            f"::{'error' if d.severity.value == 'error' else 'warning'} file={d.path},line={d.line},col={d.col},"
            f"title={d.rule}::{d.message}"
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


def counted(diagnostics: Sequence[Diagnostic]) -> str:
    """`2 errors, 1 warning`: errors and warnings counted apart, so a warning never reads as an error."""
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    warnings = len(diagnostics) - errors
    parts = [f"{errors} error{'s' if errors != 1 else ''}"]
    parts += [f"{warnings} warning{'s' if warnings != 1 else ''}"] if warnings else []
    return ", ".join(parts)


def report_check(result: CheckResult, output_format: str, fail_on: str) -> ExitCode:
    """Print what `check` found (the diff, or annotations, or JSON) and the summary line; the exit code."""
    if not result.built:
        # Before the first build there is nothing to compare: a diff of every file would only bury this line.
        shown = result.changed[0]
        if output_format == "json":
            findings = [d.to_json() for d in result.warnings]
            click.echo(json.dumps({"changed": [shown], "diff": "", "findings": findings, "built": False}, indent=2))
        elif output_format == "github":
            click.echo(f"::error file={shown},title=toolgen-drift::{shown} has not been built; run `toolgen build`")
        click.echo(f"toolgen: {shown} has not been built yet; run `toolgen build` first", err=True)
        return ExitCode.FINDINGS
    if output_format != "json":
        print_diagnostics(result.warnings, output_format)
    if result.ok:
        if output_format == "json":
            click.echo(
                json.dumps({"changed": [], "diff": "", "findings": [d.to_json() for d in result.warnings]}, indent=2)
            )
        click.echo("toolgen: generated code is up to date", err=True)
        if failed(result.warnings, fail_on):
            click.echo(f"toolgen: {counted(result.warnings)}, and --fail-on warning", err=True)
            return ExitCode.FINDINGS
        return ExitCode.OK
    if output_format == "json":
        findings = [d.to_json() for d in result.warnings]
        click.echo(json.dumps({"changed": list(result.changed), "diff": result.diff, "findings": findings}, indent=2))
    elif output_format == "github":
        for name in result.changed:
            click.echo(
                f"::error file={name},title=toolgen-drift::generated file differs from its schemas; run `toolgen build`"
            )
    else:
        click.echo(result.diff, nl=False)
    errors = sum(d.severity is Severity.ERROR for d in result.warnings)
    parts = [f"{len(result.changed)} generated file(s) differ"] if result.changed else []
    parts += [f"{errors} finding(s) to fix first"] if errors else []
    click.echo(f"toolgen: {'; '.join(parts) or 'out of date'}; run `toolgen build`", err=True)
    return ExitCode.FINDINGS
