"""The options every `toolgen` verb shares (-C, --config, --format, --quiet, --fail-on), declared once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from toolgen.api import did_you_mean

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("text", "json", "github")
# Where `toolgen -C DIR <verb>` keeps DIR for the verb's options (click shares `meta` with nested contexts).
_DIRECTORY = "toolgen.directory"


def group_directory(function: F) -> F:
    """-C DIR before the verb: the project root, as -C after it says; both given, the verb's is inside DIR."""

    def remember(context: click.Context, parameter: click.Parameter, value: Path | None) -> None:
        if value is not None:
            context.meta[_DIRECTORY] = value

    return click.option(
        "-C",
        "--project",
        type=click.Path(file_okay=False, path_type=Path),
        expose_value=False,
        callback=remember,
        help="Project root for the verb that follows (as the verb's own -C).",
    )(function)


def _project(context: click.Context, parameter: click.Parameter, value: Path) -> Path:
    """The verb's -C, inside the -C given before the verb, if any (an absolute path stands as it is)."""
    base = context.meta.get(_DIRECTORY)
    return value if base is None else Path(base) / value


class HintedChoice(click.Choice):  # type: ignore[type-arg,unused-ignore]  # generic from click 8.2 on
    """A choice whose refusal names the nearest allowed value: `'jsn' is not one of ... (did you mean 'json'?)`."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as error:
            # The API imports what finds it only now: only a refused value needs it.
            meant = did_you_mean(str(value), [str(choice) for choice in self.choices])
            if meant is None:
                raise
            hinted = f"{error.message.rstrip('.')} (did you mean {meant!r}?)"
            raise click.BadParameter(hinted, ctx, param) from None


def hint_choices(command: click.Command) -> None:
    """Give every choice option and argument of `command` and its verbs HintedChoice's did-you-mean."""
    for parameter in command.params:
        if type(parameter.type) is click.Choice:
            choice = parameter.type
            parameter.type = HintedChoice(choice.choices, case_sensitive=choice.case_sensitive)
    if isinstance(command, click.Group):
        for verb in command.commands.values():
            hint_choices(verb)


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
            callback=_project,
            help=project_help,
        )(function)

    return decorate


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
