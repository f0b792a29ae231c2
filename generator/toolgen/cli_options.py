"""The options every `toolgen` verb shares (-C, --config, --format, --quiet), declared once, and stage progress."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from toolgen.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from toolgen.api import BuildResult

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("text", "json", "github")


def _refused(option: str, reason: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    """A callback that turns an option a verb has no use for into a usage error that says why (exit 2)."""

    def refuse(context: click.Context, parameter: click.Parameter, value: Any) -> None:
        if value is not None:
            raise click.UsageError(f"{option} does not apply to `toolgen {context.info_name}`: {reason}", context)

    return refuse


def common_options(
    *,
    config: bool = True,
    output_format: bool | None = True,
    quiet: bool = False,
    project_help: str = "Project root.",
) -> Callable[[F], F]:
    """-C and, where the verb uses them, --config, --format and --quiet, with the same spelling and help everywhere.

    An option a verb does not use is still recognised, so giving it fails with a sentence naming the verb and
    why instead of click's bare "no such option". `output_format=None` leaves --format to the verb (export's
    --format names a provider, as it always has).
    """

    def decorate(function: F) -> F:
        if quiet:
            function = click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")(function)
        if output_format:
            function = click.option(
                "--format",
                "output_format",
                type=click.Choice(FORMATS),
                default="text",
                show_default=True,
                help="How findings are printed: lines, a JSON list, or GitHub annotations.",
            )(function)
        elif output_format is False:
            function = click.option(
                "--format",
                hidden=True,
                expose_value=False,
                callback=_refused("--format", "it prints no findings"),
            )(function)
        if config:
            function = click.option(
                "--config",
                "config_path",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Path of toolgen.yaml (default: PROJECT/toolgen.yaml).",
            )(function)
        else:
            function = click.option(
                "--config",
                hidden=True,
                expose_value=False,
                callback=_refused("--config", "it reads no toolgen.yaml"),
            )(function)
        return click.option(
            "-C",
            "--project",
            "project",
            type=click.Path(file_okay=False, path_type=Path),
            default=Path("."),
            show_default=True,
            help=project_help,
        )(function)

    return decorate


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


FAIL_ON = ("error", "warning")


def fail_on_option(function: F) -> F:
    """--fail-on for verbs whose findings are errors and warnings: warnings pass unless asked otherwise."""
    return click.option(
        "--fail-on",
        type=click.Choice(FAIL_ON),
        default="error",
        show_default=True,
        help="Exit 1 on errors only, or on warnings too.",
    )(function)


def failed(findings: Iterable[Diagnostic], fail_on: str) -> bool:
    """Whether findings make the verb exit 1 under --fail-on."""
    return any(fail_on == "warning" or finding.severity is Severity.ERROR for finding in findings)


def _files(count: int) -> str:
    return f"{count} file{'s' if count != 1 else ''}"


def build_summary(result: BuildResult, where: str) -> str:
    """`wrote sdk/: 3 files changed, 34 unchanged` (and what was removed), or `sdk/ is up to date (37 files)`."""
    if not result.changed and not result.deleted:
        return f"{where} is up to date ({_files(len(result.files))})"
    parts = [f"{_files(len(result.changed))} changed", f"{len(result.files) - len(result.changed)} unchanged"]
    parts += [f"{len(result.deleted)} removed"] if result.deleted else []
    return f"wrote {where}: {', '.join(parts)}"
