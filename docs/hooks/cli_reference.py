"""MkDocs hook: writes the `toolgen` commands' option tables into docs/cli.md from the click commands themselves."""

from __future__ import annotations

from typing import Any

import click

MARKER = "<!-- cli-reference -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the marker line of the CLI page with one section per command."""
    if MARKER not in markdown:
        return markdown
    # Imported here so that pages without the marker build without toolgen's CLI importable.
    from toolgen.cli.main import main as toolgen_cli

    return markdown.replace(MARKER, cli_reference(toolgen_cli))


def cli_reference(group: click.Group) -> str:
    """Markdown for every command of the group: usage, help and a table of its arguments and options."""
    context = click.Context(group, info_name="toolgen")
    sections = [_command_section(group, "toolgen")]
    for name in sorted(group.list_commands(context)):
        command = group.get_command(context, name)
        if command is not None and not command.hidden:
            sections.append(_command_section(command, f"toolgen {name}"))
    return "\n\n".join(sections)


def _command_section(command: click.Command, path: str) -> str:
    context = click.Context(command, info_name=path)
    usage = " ".join(command.collect_usage_pieces(context))
    # Third-level headings: the page's own "Option reference" section holds them.
    lines = [f"### `{path}`", "", "```text", f"Usage: {path} {usage}".rstrip(), "```", ""]
    if command.help:
        lines += [_first_paragraphs(command.help), ""]
    rows = [_row(parameter, context) for parameter in command.get_params(context)]
    rows = [row for row in rows if row is not None]
    if rows:
        lines += ["| argument or option | value | default | what it does |", "| --- | --- | --- | --- |"]
        lines += rows
    return "\n".join(lines)


def _first_paragraphs(text: str) -> str:
    # click's help keeps `\b` blocks and hard wraps; the page reflows paragraphs itself.
    paragraphs = [" ".join(part.replace("\b", "").split()) for part in text.strip().split("\n\n")]
    return "\n\n".join(part for part in paragraphs if part)


def _row(parameter: click.Parameter, context: click.Context) -> str | None:
    if isinstance(parameter, click.Option):
        if parameter.hidden:
            return None
        names = ", ".join(f"`{name}`" for name in [*parameter.opts, *parameter.secondary_opts])
        value = "" if parameter.is_flag else _escape(parameter.make_metavar(context))
        default = _default(parameter)
        what = _escape(" ".join((parameter.help or "").split()))
    else:
        names = f"`{(parameter.human_readable_name or '').upper()}`"
        value = _escape(parameter.make_metavar(context))
        default = ""
        what = "required" if parameter.required else "optional"
        if getattr(parameter, "nargs", 1) == -1:
            what += ", any number"
    return f"| {names} | {value} | {default} | {what} |"


def _default(option: click.Option) -> str:
    default = option.default
    # click marks "no default" with a sentinel object of its own, which is not part of its public API.
    if option.is_flag or default is None or default == () or callable(default) or type(default).__name__ == "Sentinel":
        return ""
    return f"`{default}`"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")
