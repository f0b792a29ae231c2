"""Command lines in the docs as the real programs would take them: `toolgen` parsed by its click CLI, the rest known."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path

import click

from support.docs_site import Block, included
from support.projects import REPO_ROOT
from toolgen.cli.main import main as toolgen_cli

COMMAND_LINES = {"bash", "sh", "shell", "console"}

# Programs a command line may start with besides `toolgen` and `python -m ...` (checked below), with why.
KNOWN_PROGRAMS = {
    "pip": "installs",
    "pip3": "installs",
    "git": "clones and commits",
    "cd": "moves into a folder",
    "mkdocs": "builds or serves this site",
    "export": "sets a variable",
    "curl": "calls the served HTTP API",
    "pre-commit": "runs the hooks",
    "source": "activates a venv",
    ".": "activates a venv",
    "mkdir": "makes a folder",
    "cat": "shows a file",
    "ls": "lists files",
    "echo": "prints",
    "jq": "reads JSON output",
    "head": "reads output",
    "npx": "starts an MCP server from npm",
    "uvx": "starts an MCP server from PyPI",
    "mypy": "type-checks an application",
    "diff": "compares output",
    "test": "checks an exit status",
}
PYTHON_MODULES = {"venv", "pytest", "build", "pip", "toolgen", "mkdocs"}


def command_lines(block: Block) -> list[tuple[int, str]]:
    """The block's commands (continuations joined; a console block's output lines left out), with line numbers."""
    commands: list[tuple[int, str]] = []
    pending = ""
    start = 0
    prompted = block.language == "console" or any(line.startswith("$ ") for line in block.lines)
    for number, raw in enumerate(block.lines, start=block.line):
        line = raw.rstrip()
        if not pending:
            if prompted:
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            if not line.strip() or line.lstrip().startswith("#") or included(line) is not None:
                continue  # an included snippet runs as a file of its own
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        commands.append((start, pending + line))
        pending = ""
    return commands


def simple_commands(line: str) -> list[list[str]]:
    """A shell line cut into its simple commands at `&&`, `||`, `;` and `|`, each as words, comments dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands: list[list[str]] = [[]]
    for word in lexer:
        if word and set(word) <= set(";&|"):
            commands.append([])
        else:
            commands[-1].append(word)
    return [words for words in commands if words]


def without_assignments(words: list[str]) -> list[str]:
    index = 0
    while index < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[index]):
        index += 1
    return words[index:]


def toolgen_problem(arguments: list[str]) -> str | None:
    """Why the real `toolgen` would refuse these arguments, or None when it takes them."""
    try:
        with toolgen_cli.make_context("toolgen", list(arguments), resilient_parsing=False) as context:
            remaining = [*context._protected_args, *context.args]  # click keeps the verb and its words here
            if not remaining:
                return None
            name, command, rest = toolgen_cli.resolve_command(context, remaining)
            assert command is not None and name is not None
            with command.make_context(name, rest, parent=context):
                return None
    except click.exceptions.Exit:
        return None  # --help or --version: taken
    except click.BadParameter as error:
        # The page's files need not exist where the test runs; every other refusal is the page's error.
        if isinstance(error.param.type if error.param else None, click.Path) and "does not exist" in str(error):
            return None
        return error.format_message()
    except click.ClickException as error:
        return error.format_message()


def package_problem(arguments: list[str], helps: dict[str, str]) -> str | None:
    """Why `python -m toolgen_sdk ARGUMENTS` names an option its (sub)command does not have, or None."""
    subcommand = arguments[0] if arguments and arguments[0] in ("serve", "mcp") else ""
    words = arguments[1:] if subcommand else arguments
    if "--" in words:
        words = words[: words.index("--")]
    unknown = [
        word.split("=", 1)[0]
        for word in words
        if word.startswith("-")
        and not re.search(rf"(^|[\s,\[]){re.escape(word.split('=', 1)[0])}\b", helps[subcommand])
    ]
    return f"no such option of `python -m toolgen_sdk {subcommand}`: {unknown}" if unknown else None


def line_problem(words: list[str], helps: dict[str, str]) -> str | None:
    words = without_assignments(words)
    if not words:
        return None
    program = Path(words[0]).name
    if program == "toolgen":
        return toolgen_problem(words[1:])
    if program in ("python", "python3") or program == Path(sys.executable).name:
        if words[1:2] == ["-c"]:
            return "a `python -c` line is code: put it in a snippet file"
        if words[1:2] != ["-m"] or len(words) < 3:
            return "a python line runs a module (`python -m ...`) here; scripts belong in snippet files"
        module = words[2]
        if module == "toolgen_sdk":
            return package_problem(words[3:], helps)
        if module == "toolgen":
            return toolgen_problem(words[3:])
        return None if module in PYTHON_MODULES else f"unknown module {module!r} (known: {sorted(PYTHON_MODULES)})"
    if program in KNOWN_PROGRAMS:
        return None
    return f"unknown program {program!r}: add it to KNOWN_PROGRAMS in tests/support/docs_commands.py with why, if it is right"


def command_problems(found: Iterable[Block], helps: dict[str, str]) -> list[str]:
    """Every command line of these blocks that a program would refuse, with its place and why."""
    problems = []
    for block in found:
        if block.language not in COMMAND_LINES:
            continue
        for number, line in command_lines(block):
            for words in simple_commands(line):
                problem = line_problem(words, helps)
                if problem is not None:
                    problems.append(f"{block.page.relative_to(REPO_ROOT)}:{number}: {line.strip()!r}: {problem}")
    return problems
