"""The arguments and options of `toolgen import`, and the combinations of them it refuses."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from toolgen import api
from toolgen.api import ExitCode
from toolgen.cli.options import common_options
from toolgen.cli.printers import print_imported, print_lock_check

F = TypeVar("F", bound=Callable[..., Any])


def import_options(function: F) -> F:
    """SOURCE, the server's command after `--`, and the options of `toolgen import`."""
    decorators = [
        common_options(
            config=False, output_format=False, project_help="Project root: the output folder is relative to it."
        ),
        click.argument("source"),
        click.argument("command", nargs=-1, type=click.UNPROCESSED),
        click.option(
            "--from",
            "source_format",
            type=click.Choice(["openai", "anthropic", "gemini", "bedrock", "mcp"]),
            help="SOURCE's format; a list of another format is refused (exit 3), naming the one it looks like.",
        ),
        click.option("--url", help="With `mcp`: the server's streamable HTTP URL instead of a command."),
        click.option(
            "-o",
            "--output",
            type=click.Path(file_okay=False, path_type=Path),
            default=Path("schemas/tools"),
            show_default=True,
            help="Folder to write one schema file per tool into.",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=60.0,
            show_default=True,
            help="Seconds to wait for an MCP server to start and list its tools.",
        ),
        click.option("--force", is_flag=True, help="Replace schema files that exist already."),
        click.option(
            "--check",
            is_flag=True,
            help="With `mcp`: write nothing; compare the server's tools with the lock in the output folder "
            "(mcp-lock.json) and exit 1 naming each tool and field that drifted, 0 when none did.",
        ),
    ]
    for decorate in reversed(decorators):
        function = decorate(function)
    return function


def import_action(
    project: Path,
    source: str,
    command: tuple[str, ...],
    source_format: str | None,
    url: str | None,
    options: dict[str, Any],
) -> Callable[[], ExitCode]:
    """What `toolgen import` does, for the command line to run; a usage error (exit 2) first for a
    combination that names no source, or two."""
    if source_format is None and source != "mcp":
        raise click.UsageError("name the file's format with --from, or import from a server with `mcp`")
    if source_format is None and bool(command) == bool(url):
        raise click.UsageError("give the server's command after `--`, or its --url, one of the two")
    if source_format is not None and (command or url):
        raise click.UsageError("a file is read by itself: no command and no --url with --from")
    check = bool(options.pop("check", False))
    if check and source_format is not None:
        raise click.UsageError("--check compares a live MCP server with its lock: use it with `mcp`, not --from")

    def action() -> ExitCode:
        if check:
            server = url or list(command)
            return print_lock_check(
                api.check_mcp_lock(project, server, output=options["output"], timeout=options["timeout"])
            )
        target = source if source_format else (url or list(command))
        return print_imported(api.import_tools(project, target, source_format=source_format, **options), project)

    return action
