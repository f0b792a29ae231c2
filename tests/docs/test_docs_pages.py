"""The site's pages: every page in the nav, code only by inclusion, every command line one the real programs take."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import click
import pytest
from support.docs_site import (
    DOCS,
    PROJECT_TOOLS,
    SNIPPETS,
    Block,
    blocks,
    include_target,
    included,
    nav_pages,
    pages,
    snippet_files,
)
from support.projects import REPO_ROOT

from toolgen.cli.main import main as toolgen_cli

# Code a reader would copy lives in files the tests run or check; a page may hold only output and command lines.
INCLUDED_ONLY = {"python", "py", "yaml", "yml", "json", "toml", "ini", "cfg"}
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
PAGES = pages()


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT))


def test_the_site_has_pages() -> None:
    assert len(PAGES) >= 15, [_rel(page) for page in PAGES]


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    listed = nav_pages()
    on_disk = sorted(str(page.relative_to(DOCS)) for page in PAGES)
    assert sorted(set(listed)) == on_disk
    assert len(listed) == len(set(listed)), "a page is listed twice in mkdocs.yml's nav"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(DOCS)))
def test_code_is_included_from_files_that_exist(page: Path) -> None:
    problems = []
    for block in blocks(page):
        for line in block.lines:
            if not line.strip():
                continue
            target = included(line)
            if target is None and block.language not in INCLUDED_ONLY:
                continue
            if target is None:
                problems.append(f"{block.where}: ```{block.language} blocks include a snippet file, got {line!r}")
            elif include_target(target) is None:
                problems.append(f"{block.where}: {target} is neither under docs/snippets nor the repository's root")
    assert not problems, "\n".join(problems)


def test_every_snippet_file_is_shown_or_used() -> None:
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    shown = {
        target
        for page in PAGES
        for block in blocks(page)
        for line in block.lines
        if (target := included(line)) is not None
    }
    runnable = "\n".join(path.read_text(encoding="utf-8") for path in snippet_files(".py", ".sh"))
    orphans = [
        _rel(path)
        for path in snippet_files(".py", ".sh", ".yaml", ".yml", ".json", ".toml", ".out", ".txt")
        if str(path.relative_to(SNIPPETS)) not in shown and path.name not in runnable and path.name not in text
    ]
    assert not orphans, f"snippet files no page includes and no snippet reads: {orphans}"


def test_the_project_tools_are_yaml_tool_files() -> None:
    for tool in PROJECT_TOOLS.glob("*") if PROJECT_TOOLS.is_dir() else []:
        assert tool.suffix == ".yaml", f"{_rel(tool)}: the docs project takes tools as .yaml files"


def _command_lines(block: Block) -> list[tuple[int, str]]:
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


def _simple_commands(line: str) -> list[list[str]]:
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


def _without_assignments(words: list[str]) -> list[str]:
    index = 0
    while index < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[index]):
        index += 1
    return words[index:]


def _toolgen_problem(arguments: list[str]) -> str | None:
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


def _package_problem(arguments: list[str], helps: dict[str, str]) -> str | None:
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


def _line_problem(words: list[str], helps: dict[str, str]) -> str | None:
    words = _without_assignments(words)
    if not words:
        return None
    program = Path(words[0]).name
    if program == "toolgen":
        return _toolgen_problem(words[1:])
    if program in ("python", "python3") or program == Path(sys.executable).name:
        if words[1:2] == ["-c"]:
            return "a `python -c` line is code: put it in a snippet file"
        if words[1:2] != ["-m"] or len(words) < 3:
            return "a python line runs a module (`python -m ...`) here; scripts belong in snippet files"
        module = words[2]
        if module == "toolgen_sdk":
            return _package_problem(words[3:], helps)
        if module == "toolgen":
            return _toolgen_problem(words[3:])
        return None if module in PYTHON_MODULES else f"unknown module {module!r} (known: {sorted(PYTHON_MODULES)})"
    if program in KNOWN_PROGRAMS:
        return None
    return f"unknown program {program!r}: add it to KNOWN_PROGRAMS in {Path(__file__).name} with why, if it is right"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(DOCS)))
def test_command_lines_are_ones_the_programs_take(page: Path, package_help: dict[str, str]) -> None:
    problems = []
    for block in blocks(page):
        if block.language not in COMMAND_LINES:
            continue
        for number, line in _command_lines(block):
            for words in _simple_commands(line):
                problem = _line_problem(words, package_help)
                if problem is not None:
                    problems.append(f"{_rel(page)}:{number}: {line.strip()!r}: {problem}")
    assert not problems, "\n".join(problems)


def test_the_command_line_checks_refuse_what_the_programs_refuse(package_help: dict[str, str]) -> None:
    assert _line_problem(["toolgen", "build", "--force"], package_help) is None
    assert _line_problem(["toolgen", "validate", "logs/missing", "--as", "message"], package_help) is None
    assert _line_problem(["toolgen", "--help"], package_help) is None
    assert "No such command" in (_line_problem(["toolgen", "biuld"], package_help) or "")
    assert "No such option" in (_line_problem(["toolgen", "build", "--forse"], package_help) or "")
    assert "jsn" in (_line_problem(["toolgen", "check", "--format", "jsn"], package_help) or "")
    assert _line_problem(["python", "-m", "toolgen_sdk", "serve", "--port", "0"], package_help) is None
    assert "--colour" in (_line_problem(["python", "-m", "toolgen_sdk", "--colour", "hi"], package_help) or "")
    assert "unknown program" in (_line_problem(["rm", "-rf", "/"], package_help) or "")
    assert _simple_commands("toolgen init && toolgen build | cat  # ok") == [
        ["toolgen", "init"],
        ["toolgen", "build"],
        ["cat"],
    ]


def test_fences_are_read_inside_lists_and_admonitions(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text('- a step:\n\n    ```python\n    --8<-- "x/y.py"\n    ```\n\n```text\nout\n```\n', encoding="utf-8")
    found = list(blocks(page))
    assert [(block.language, block.lines) for block in found] == [
        ("python", ('--8<-- "x/y.py"',)),
        ("text", ("out",)),
    ]
    assert included('--8<-- "agent-loop/approve.py:setup"') == "agent-loop/approve.py"


def test_the_cli_page_gets_every_command_from_click() -> None:
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        import cli_reference
    finally:
        sys.path.remove(str(DOCS / "hooks"))
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert cli_reference.MARKER in page, "docs/cli.md has no marker for the generated option tables"
    rendered = cli_reference.on_page_markdown(page, None, None, None)
    context = click.Context(toolgen_cli)
    for name in toolgen_cli.list_commands(context):
        assert f"### `toolgen {name}`" in rendered
        command = toolgen_cli.get_command(context, name)
        assert command is not None
        for parameter in command.params:
            if isinstance(parameter, click.Option) and not parameter.hidden:
                assert f"`{parameter.opts[-1]}`" in rendered, (name, parameter.opts)
